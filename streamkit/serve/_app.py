"""The proxy as a bare ASGI application: routing, the proxy key, health and metrics.

Besides each format's answers, the proxy serves the paths its clients' SDKs call around them: the
model list (``/v1/models``, and one model at ``/v1/models/{id}``), in the shape of the client's
format, from the routes' models (an upstream's own list for a route that serves every model),
and a format's count of input tokens (``/v1/messages/count_tokens``), the upstream's own on a
same-format route, an estimate on one to another format.

Bare ASGI rather than a framework: the app has five routes and one streamed response, and what
it must control (reading ``http.disconnect`` while it streams, the exact bytes of each event,
the lifespan's pool shutdown) is ASGI's own vocabulary; starlette would add a dependency and a
layer between the stream and the socket for nothing the proxy uses. uvicorn runs it.

Nothing is kept between requests but the upstream connection pools and the counters, so any
number of workers and replicas serve the same config alike.
"""

from __future__ import annotations

import hmac
import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from types import ModuleType
from typing import Any

import httpx

from .._errors import UsageError
from ..providers._encoder import dumps
from ._config import Config
from ._example import EXAMPLE_PREFIX, serve_example
from ._formats import FORMATS, KEYS, Format, Model, client_format
from ._metrics import Metrics
from ._proxy import Exchange, Upstream, headers_of

__all__ = ("App", "factory")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: The environment variable a worker reads its config from (``to_dict``, as JSON).
CONFIG_VARIABLE = "STREAMKIT_SERVE_CONFIG"

_BY_PATH = {fmt.path: fmt for fmt in FORMATS.values()}
_BY_COUNT_PATH = {fmt.count_path: fmt for fmt in FORMATS.values() if fmt.count_path is not None}
_MODELS_PATHS = {fmt.models_path for fmt in FORMATS.values() if fmt.models_path is not None}
#: What makes a route's model pattern a glob (``fnmatch``'s), not one model's name.
_GLOB = frozenset("*?[")
#: Where the proxy key goes on a ``pass_key`` route, whose ``Authorization`` and ``x-api-key`` go upstream.
_PASSED_KEY_HEADER = "x-streamkit-key"
access_log = logging.getLogger("streamkit.serve.access")


class App:
    """The ASGI application for one config.

    Args:
        config: the routes and settings.
        transport: an httpx transport for every upstream (tests); by default each route has
            its own pool of connections.
        tracer_provider, meter_provider: where telemetry goes, with ``telemetry = true``;
            OpenTelemetry's global providers by default (set by ``opentelemetry-instrument``).
    """

    def __init__(
        self,
        config: Config,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        tracer_provider: Any = None,
        meter_provider: Any = None,
    ) -> None:
        self.config = config
        self.metrics = Metrics()
        self._proxy_keys = [key.encode() for key in config.proxy_keys()]
        keys = [route.upstream_key() for route in config.routes]
        self._upstreams = [Upstream(route, key, transport) for route, key in zip(config.routes, keys, strict=True)]
        # A path no format is served on is answered in the shape of the first route's format:
        # the one this proxy's clients speak.
        self._unserved_format = FORMATS[config.routes[0].format] if config.routes else next(iter(FORMATS.values()))
        if config.telemetry:
            upstream_keys = [key for key in keys if key is not None]
            telemetry_module().enable(tracer_provider, meter_provider, secrets=upstream_keys)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path, method = scope["path"], scope["method"]
        fmt = _BY_PATH.get(path)
        counted = _BY_COUNT_PATH.get(path)
        if fmt is not None and method == "POST":
            await self._proxy(fmt, scope, receive, send, self._exchange)
        elif counted is not None and method == "POST":
            await self._proxy(counted, scope, receive, send, self._count)
        elif _listed(path) is not None and method == "GET":
            await self._proxy(self._client_format(scope), scope, receive, send, self._models)
        elif path == "/healthz" and method == "GET":
            await _answer(send, 200, b'{"status":"ok"}')
        elif path == "/metrics" and method == "GET":
            await _answer(send, 200, self.metrics.text().encode(), "text/plain; version=0.0.4; charset=utf-8")
        elif self.config.example and path.startswith(EXAMPLE_PREFIX):
            await serve_example(path, receive, send)
        else:
            body = self._unserved_format.error_body("not_found", f"no route for {method} {path}")
            await _answer(send, 404, body)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for upstream in self._upstreams:
                    await upstream.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _proxy(
        self, fmt: Format, scope: Scope, receive: Receive, send: Send, handle: Callable[[Exchange], Awaitable[None]]
    ) -> None:
        started = time.perf_counter()
        exchange = Exchange(fmt, scope, receive, send, self.metrics)
        try:
            await handle(exchange)
        finally:
            exchange.log["ms"] = round((time.perf_counter() - started) * 1000, 3)
            access_log.info(dumps(exchange.log))

    async def _exchange(self, exchange: Exchange) -> None:
        routed = await self._routed(exchange)
        if routed is not None:
            upstream, request, body = routed
            await upstream.forward(exchange, request, body)

    async def _count(self, exchange: Exchange) -> None:
        """A count of a request's input tokens: keyed and routed as the request itself would be."""
        routed = await self._routed(exchange)
        if routed is not None:
            upstream, request, body = routed
            await upstream.count(exchange, request, body)

    async def _routed(self, exchange: Exchange) -> tuple[Upstream, dict[str, Any], bytes] | None:
        """Key, body, route, upstream, in that order: a client without the key learns nothing of
        the rest; ``None`` once the request was refused."""
        fmt = exchange.format
        where = self._key_header(exchange.headers)
        if where is None:
            await exchange.refuse(401, "authentication_error", "a missing or wrong proxy key", close=True)
            return None
        body = await exchange.read_body(self.config.max_request_bytes, self.config.body_timeout)
        if body is None:
            return None
        request = await exchange.parse(body)
        if request is None:
            return None
        route = self.config.route(fmt.slug, request.get("model"))
        if route is None:
            await exchange.refuse(404, "not_found_error", self._unrouted(fmt.slug, request.get("model")))
            return None
        upstream = self._upstreams[self.config.routes.index(route)]
        if not await self._passes_key(exchange, [upstream], where):
            return None
        return upstream, request, body

    async def _passes_key(self, exchange: Exchange, upstreams: Iterable[Upstream], where: str) -> bool:
        """Whether the proxy key came where the routes can take it: a ``pass_key`` route sends
        the client's own key headers upstream, so the proxy key must not be in them (else 401)."""
        if where in ("", _PASSED_KEY_HEADER) or not any(upstream.route.pass_key for upstream in upstreams):
            return True
        message = f"this route passes the client's own key on: the proxy key goes in {_PASSED_KEY_HEADER}"
        await exchange.refuse(401, "authentication_error", message)
        return False

    def _client_format(self, scope: Scope) -> Format:
        """The format of a client on a path of no one format: among the routes' formats first."""
        ordered = [FORMATS[route.format] for route in self.config.routes] + list(FORMATS.values())
        return client_format(headers_of(scope), dict.fromkeys(ordered))

    async def _models(self, exchange: Exchange) -> None:
        """The models served to the client's format (and those its API's clients share: OpenAI's
        Chat and Responses), in its shape: each route's models named without a glob, in the
        routes' order, and the upstream's own list for a route that serves every model. A route
        that serves every model, alone, on an upstream of the client's format, answers the
        request itself: it goes on as it came (its query, its one model's path)."""
        fmt = exchange.format
        where = self._key_header(exchange.headers)
        if where is None:
            await exchange.refuse(401, "authentication_error", "a missing or wrong proxy key")
            return
        served = [up for up in self._upstreams if FORMATS[up.route.format].lists_like(fmt)]
        every = [up for up in served if not up.route.models]
        if not await self._passes_key(exchange, every, where):
            return
        named = [model for up in served for model in _named(up.route.models)]
        if len(every) == 1 and not named and not every[0].route.translates:  # the upstream's own answer
            raw = exchange.scope.get("raw_path") or exchange.scope["path"].encode()
            await every[0].relay(exchange, "GET", raw.decode("latin-1").removeprefix("/v1"))
            return
        models = await self._listing(exchange, served)
        wanted = _listed(exchange.scope["path"])
        if models is None:
            return
        if not wanted:
            await exchange.answer(fmt.model_list(list(models.values())))
        elif wanted in models:
            await exchange.answer(fmt.model_info(models[wanted]))
        else:
            await exchange.refuse(404, "not_found_error", f"no model {wanted!r} is served here")

    @staticmethod
    async def _listing(exchange: Exchange, served: list[Upstream]) -> dict[str, Model] | None:
        """The routes' models by id, in order, the first of each id kept; ``None`` once an
        upstream's failed list was answered."""
        models: dict[str, Model] = {}
        for upstream in served:
            listed = await upstream.models(exchange) if not upstream.route.models else _named(upstream.route.models)
            if listed is None:
                return None
            for model in listed:
                models.setdefault(model.id, model)
        return models

    def _unrouted(self, slug: str, model: object) -> str:
        """Why no route took the request, and which models would have been taken."""
        served = [pattern for route in self.config.routes if route.format == slug for pattern in route.models]
        if not served:
            return f"no route serves {slug} requests"
        return f"no route serves model {model!r}; the {slug} routes serve {', '.join(map(repr, served))}"

    def _key_header(self, headers: dict[str, str]) -> str | None:
        """The header that holds a proxy key, ``""`` for a proxy without keys, ``None`` for none.

        Read before the route is known, so each header a key may come in is tried: a ``pass_key``
        route then takes it only from ``x-streamkit-key`` (its other key headers go upstream).
        Every sent value is compared with every key in constant time, so the time says nothing
        of which matched.
        """
        if not self._proxy_keys:
            return ""
        sent = {_PASSED_KEY_HEADER: headers.get(_PASSED_KEY_HEADER, "")}
        sent |= {name: facts.key_in(headers.get(name, "")) for name, facts in KEYS.items()}
        found = None
        for name, value in sent.items():
            given = value.encode()
            for key in self._proxy_keys:
                if hmac.compare_digest(given, key) and found is None:
                    found = name
        return found


def _named(patterns: Iterable[str]) -> list[Model]:
    """The models a route's patterns name: those without a glob."""
    return [Model(pattern) for pattern in patterns if not _GLOB & set(pattern)]


def _listed(path: str) -> str | None:
    """On a model list's path: ``""`` for the list, the model's id for one model; else ``None``."""
    for prefix in _MODELS_PATHS:
        if path == prefix:
            return ""
        if path.startswith(prefix + "/") and len(path) > len(prefix) + 1:
            return path[len(prefix) + 1 :]
    return None


def telemetry_module() -> ModuleType:
    """``streamkit.telemetry``, or a ``UsageError`` saying which extra it needs."""
    try:
        from .. import telemetry
    except ImportError:
        raise UsageError(
            "telemetry needs OpenTelemetry's API, which is not installed: pip install 'streamkit-toolcalls[otel]'"
        ) from None
    return telemetry


async def _answer(send: Send, status: int, body: bytes, kind: str = "application/json") -> None:
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def factory() -> App:
    """The app of a uvicorn worker, from the config its parent put in ``STREAMKIT_SERVE_CONFIG``."""
    import sys

    import orjson

    from ._command import log_to
    from ._config import parse_config

    log_to(sys.stderr)
    return App(parse_config(orjson.loads(os.environ[CONFIG_VARIABLE])))
