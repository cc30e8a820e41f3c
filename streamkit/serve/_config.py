"""The proxy's configuration: routes to upstreams, and the server's own settings.

A config is read from a TOML file (``streamkit serve --config FILE``) or built from flags, and
checked whole before the server starts: every mistake is a ``UsageError`` naming the key and
the route. Secrets are never in it: it names the environment variables that hold them, read
by each worker when it starts (``keys``), so the config can be handed to workers as JSON.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import ipaddress
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from .._errors import UsageError
from .._limits import Limits
from .._reemit import BadCalls
from ..providers import ASKED, ENCODERS, REQUESTS, WRITERS
from ._formats import FORMATS

__all__ = ("EMIT_MODES", "INVALID_POLICIES", "Config", "Route", "load_config", "parse_config")

#: What a route does with an invalid call (``streamkit._reemit._policy``): tell the model and go
#: on, withhold it and end with an error, or pass it on marked invalid.
INVALID_POLICIES = ("tell", "withhold", "pass")
Invalid = Literal["tell", "withhold", "pass"]
#: The most times a route may ask the model again within one response.
MAX_ROUNDS = 8
#: How a route writes a call: whole at its end marker, or as canonical fragments as they arrive.
EMIT_MODES = ("whole", "fragments")
Emit = Literal["whole", "fragments"]
#: The shortest proxy key accepted: 16 random characters are beyond guessing over the network.
MIN_PROXY_KEY = 16

_ROUTE_KEYS = {"format", "upstream", "models", "key_env", "pass_key", "invalid", "timeout", "limits"}
_ROUTE_KEYS |= {"early_close", "max_connections", "emit", "rounds", "upstream_format"}
_SERVER_KEYS = {"host", "port", "workers", "proxy_key_env", "max_request_bytes", "graceful_timeout", "example"}
_SERVER_KEYS |= {"telemetry", "trusted_proxies", "max_head_bytes", "max_concurrency"}
#: The server's timeouts, in seconds (``Config``'s attributes say what each bounds).
TIMEOUTS = {"head_timeout": 10.0, "body_timeout": 60.0, "send_timeout": 60.0, "keep_alive_timeout": 20.0}
_SERVER_KEYS |= set(TIMEOUTS)


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """Where one format's requests go, and how their responses are checked.

    Attributes:
        format: ``openai_chat``, ``openai_responses`` or ``anthropic``.
        upstream: the upstream's base URL; the format's path is appended (``.../v1`` + ``/chat/completions``).
        models: glob patterns of the models this route serves; empty: every model.
        key_env: the environment variable holding the upstream's key, sent in the format's header.
        pass_key: pass the client's own key (``Authorization`` / ``x-api-key``) on to the upstream;
            the proxy key then goes in ``x-streamkit-key``.
        invalid: what a bad call becomes; it never reaches the client as a call. ``tell`` (the
            default): the proxy answers it to the model itself, sending the request again with
            the turn and the call's error, and the response goes on with the model's new
            answer, at most ``rounds`` times, then ends as ``withhold`` does (streams written
            whole, in a format whose response can go on; elsewhere as ``withhold``);
            ``withhold``: the format's error event names it and ends the stream (a body not
            streamed: 422); ``pass``: it is written, its raw text, after a comment line marking it.
        rounds: how many times ``tell`` may ask the model again in one response (0 to 8).
        timeout: seconds to connect, and at most between two reads of the upstream's body.
        limits: the ``Limits`` one response may reach.
        early_close: end an OpenAI Chat call when the next one starts, not at the finish reason
            (sooner; wrong for an upstream that interleaves the fragments of parallel calls).
        max_connections: the most connections open to the upstream at once (the pool's size).
        emit: ``whole`` (the default: each call written once, at its end marker) or
            ``fragments`` (its arguments streamed as they arrive, its end held until it is checked).
    """

    format: str
    upstream: str
    models: tuple[str, ...] = ()
    key_env: str | None = None
    pass_key: bool = False
    invalid: Invalid = "tell"
    rounds: int = 2
    timeout: float = 300.0
    limits: Limits = field(default_factory=Limits)
    early_close: bool = False
    max_connections: int = 1024
    emit: Emit = "whole"
    upstream_format: str | None = None

    @property
    def translates(self) -> bool:
        """Whether the upstream speaks another format than the route's clients."""
        return self.upstream_format is not None and self.upstream_format != self.format

    def bad_calls(self) -> BadCalls:
        """The route's policy for a bad call, in the one vocabulary (``withhold`` is ``raise``)."""
        return BadCalls("raise" if self.invalid == "withhold" else self.invalid, self.rounds)

    def upstream_key(self) -> str | None:
        """The upstream's key, read from the environment now; ``None`` for a route without one."""
        if self.key_env is None:
            return None
        value = os.environ.get(self.key_env, "")
        if not value:
            raise UsageError(f"the {self.format} route's key variable {self.key_env} is not set (or empty)")
        return value

    def serves(self, model: object) -> bool:
        if not self.models:
            return True
        return isinstance(model, str) and any(fnmatch.fnmatchcase(model, pattern) for pattern in self.models)


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The whole server.

    Attributes:
        routes: in order; a request goes to the first route of its format that serves its model.
        host, port, workers: where uvicorn listens, and how many processes.
        proxy_key_env: the environment variable holding the key clients must send; ``None``
            only for a proxy that listens on loopback alone.
        max_request_bytes: the largest request body read.
        graceful_timeout: seconds a shutdown waits for streams in flight to finish.
        example: serve the bundled example upstream on ``/example/v1`` (``streamkit serve --example``).
        telemetry: record each stream with ``streamkit.telemetry`` (the ``otel`` extra), to the
            OpenTelemetry providers the process sets up.
        head_timeout: seconds a client has to send a request's whole head, from the connection's
            start or the first byte of the next request on it; then the connection is closed.
        body_timeout: seconds the proxy waits for the next piece of a request body (408).
        send_timeout: seconds a response may wait on a client that reads nothing; then the
            connection is dropped, and the upstream request with it.
        keep_alive_timeout: seconds an idle connection is kept for the client's next request.
        max_head_bytes: the largest request head (its line and headers) read (400 past it).
        max_concurrency: the most connections and requests a worker holds at once; past it a
            request is answered 503. ``None``: no bound but the process's open files.
        trusted_proxies: the addresses (or networks) whose ``X-Forwarded-For`` and
            ``X-Forwarded-Proto`` are believed, for the access log's client; none by default.
    """

    routes: tuple[Route, ...]
    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 1
    proxy_key_env: str | None = None
    max_request_bytes: int = 16 * 1024 * 1024
    graceful_timeout: float = 30.0
    example: bool = False
    telemetry: bool = False
    head_timeout: float = TIMEOUTS["head_timeout"]
    body_timeout: float = TIMEOUTS["body_timeout"]
    send_timeout: float = TIMEOUTS["send_timeout"]
    keep_alive_timeout: float = TIMEOUTS["keep_alive_timeout"]
    max_head_bytes: int = 16 * 1024
    max_concurrency: int | None = None
    trusted_proxies: tuple[str, ...] = ()

    def route(self, fmt: str, model: object) -> Route | None:
        return next((r for r in self.routes if r.format == fmt and r.serves(model)), None)

    def proxy_keys(self) -> tuple[str, ...]:
        """The keys clients may send, read from the environment now (each worker, at its start)."""
        if self.proxy_key_env is None:
            return ()
        value = os.environ.get(self.proxy_key_env, "")
        keys = tuple(key.strip() for key in value.split(",") if key.strip())
        if not keys:
            raise UsageError(f"the proxy key variable {self.proxy_key_env} is not set (or empty)")
        for key in keys:
            _check_proxy_key(key, self.proxy_key_env)
        return keys

    def check_environment(self) -> None:
        """Every key variable read now, in the parent: a missing one is told once, before a worker starts."""
        self.proxy_keys()
        for route in self.routes:
            route.upstream_key()

    def to_dict(self) -> dict[str, Any]:
        """The config as plain values (for the workers); ``parse_config`` reads it back."""
        server = {name: getattr(self, name) for name in _SERVER_KEYS if getattr(self, name) is not None}
        server["trusted_proxies"] = list(self.trusted_proxies)
        routes = [{**_route_dict(route)} for route in self.routes]
        return {"server": server, "route": routes}


def _route_dict(route: Route) -> dict[str, Any]:
    out = {f.name: getattr(route, f.name) for f in dataclasses.fields(route) if f.name != "limits"}
    out["models"] = list(route.models)
    out["limits"] = dataclasses.asdict(route.limits)
    return {key: value for key, value in out.items() if value is not None}


def load_config(path: str) -> Config:
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as exc:
        raise UsageError(f"cannot read the config {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"the config {path} is not valid TOML: {exc}") from None
    return parse_config(data, where=path)


def parse_config(data: Mapping[str, Any], *, where: str = "config") -> Config:
    """A ``Config`` from the TOML's values: ``[server]`` and ``[[route]]`` tables."""
    _only(data, {"server", "route"}, where)
    server = data.get("server", {})
    if not isinstance(server, dict):
        raise UsageError(f"{where}: [server] must be a table")
    _only(server, _SERVER_KEYS, f"{where}: [server]")
    routes = data.get("route", [])
    if not isinstance(routes, list) or not all(isinstance(r, dict) for r in routes):
        raise UsageError(f"{where}: route must be an array of tables ([[route]])")
    parsed = tuple(_route(r, f"{where}: route {n + 1}") for n, r in enumerate(routes))
    config = Config(
        routes=parsed,
        host=_typed(server, "host", str, "127.0.0.1", where),
        port=_typed(server, "port", int, 8080, where),
        workers=_typed(server, "workers", int, 1, where),
        proxy_key_env=_typed(server, "proxy_key_env", str, None, where),
        max_request_bytes=_typed(server, "max_request_bytes", int, 16 * 1024 * 1024, where),
        graceful_timeout=float(_typed(server, "graceful_timeout", (int, float), 30.0, where)),
        example=_typed(server, "example", bool, False, where),
        telemetry=_typed(server, "telemetry", bool, False, where),
        **{name: float(_typed(server, name, (int, float), default, where)) for name, default in TIMEOUTS.items()},
        max_head_bytes=_typed(server, "max_head_bytes", int, 16 * 1024, where),
        max_concurrency=_typed(server, "max_concurrency", int, None, where),
        trusted_proxies=_proxies(server.get("trusted_proxies", []), where),
    )
    _check(config, where)
    return config


def _route(data: Mapping[str, Any], where: str) -> Route:
    _only(data, _ROUTE_KEYS, where)
    fmt = _typed(data, "format", str, None, where)
    if fmt not in FORMATS:
        raise UsageError(f"{where}: format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    upstream = _typed(data, "upstream", str, None, where)
    if upstream is None or not upstream.startswith(("http://", "https://")):
        raise UsageError(f"{where}: upstream must be an http:// or https:// URL, got {upstream!r}")
    models = data.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise UsageError(f"{where}: models must be a list of strings (glob patterns)")
    invalid = _typed(data, "invalid", str, "tell", where)
    if invalid not in INVALID_POLICIES:
        raise UsageError(f"{where}: invalid must be one of {', '.join(INVALID_POLICIES)}, got {invalid!r}")
    rounds = _typed(data, "rounds", int, 2, where)
    if not 0 <= rounds <= MAX_ROUNDS:
        raise UsageError(f"{where}: rounds must be from 0 to {MAX_ROUNDS}, got {rounds}")
    upstream_format = _typed(data, "upstream_format", str, None, where)
    if upstream_format is not None and upstream_format != fmt:
        _translatable(fmt, upstream_format, where)
    emit = _typed(data, "emit", str, "whole", where)
    if emit not in EMIT_MODES:
        raise UsageError(f"{where}: emit must be one of {', '.join(EMIT_MODES)}, got {emit!r}")
    if emit == "fragments" and upstream_format not in (None, fmt):
        raise UsageError(f'{where}: a route sent to another format writes each call whole (emit = "whole")')
    if upstream_format not in (None, fmt) and data.get("pass_key"):
        raise UsageError(f"{where}: a route sent to another format sends its own key (key_env), not the client's")
    timeout = float(_typed(data, "timeout", (int, float), 300.0, where))
    if timeout <= 0:
        raise UsageError(f"{where}: timeout must be positive, got {timeout}")
    connections = _typed(data, "max_connections", int, 1024, where)
    if connections < 1:
        raise UsageError(f"{where}: max_connections must be positive, got {connections}")
    limits = data.get("limits", {})
    if not isinstance(limits, dict):
        raise UsageError(f"{where}: limits must be a table")
    _only(limits, {f.name for f in dataclasses.fields(Limits)}, f"{where}: limits")
    return Route(
        format=fmt,
        upstream=upstream.rstrip("/"),
        models=tuple(models),
        key_env=_typed(data, "key_env", str, None, where),
        pass_key=_typed(data, "pass_key", bool, False, where),
        invalid=cast(Invalid, invalid),
        rounds=rounds,
        timeout=timeout,
        limits=Limits(**limits),
        early_close=_typed(data, "early_close", bool, False, where),
        max_connections=connections,
        emit="fragments" if emit == "fragments" else "whole",
        upstream_format=upstream_format,
    )


def _translatable(fmt: str, upstream: str, where: str) -> None:
    """A route from ``fmt``'s clients to an upstream of another format: its requests must be read,
    the upstream's written and its stream read, and the answer written in ``fmt``."""
    if fmt not in ASKED or fmt not in WRITERS:
        can = ", ".join(sorted(set(ASKED) & set(WRITERS))) or "none"
        raise UsageError(f"{where}: a {fmt} route cannot be sent to another format yet; those that can: {can}")
    if upstream not in REQUESTS or upstream not in ENCODERS:
        can = ", ".join(sorted(set(REQUESTS) & set(ENCODERS)))
        raise UsageError(f"{where}: upstream_format must be one of {can}, got {upstream!r}")


def _check(config: Config, where: str) -> None:
    if not config.routes and not config.example:
        raise UsageError(f"{where}: no route: give at least one [[route]] (or --upstream FORMAT=URL)")
    if not 0 < config.port < 65536:
        raise UsageError(f"{where}: port must be between 1 and 65535, got {config.port}")
    for name in ("workers", "max_request_bytes", "max_head_bytes", "max_concurrency", *TIMEOUTS):
        value = getattr(config, name)
        if value is not None and value <= 0:
            raise UsageError(f"{where}: {name} must be positive, got {value}")
    if config.proxy_key_env is None and config.host not in ("127.0.0.1", "localhost", "::1"):
        raise UsageError(
            f"{where}: listening on {config.host} needs a proxy key (proxy_key_env, --proxy-key-env): "
            "without one the proxy would be an open relay"
        )


def _proxies(value: Any, where: str) -> tuple[str, ...]:
    """``trusted_proxies``: addresses or networks, each checked (``*``, trusting anyone, is refused)."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise UsageError(f"{where}: trusted_proxies must be a list of addresses or networks (strings)")
    for item in value:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise UsageError(
                f"{where}: trusted_proxies: {item!r} is not an IP address or network "
                "(a forwarded header is believed only from the proxies named)"
            ) from None
    return tuple(value)


def _check_proxy_key(key: str, variable: str) -> None:
    """A ``UsageError`` for a key that can be guessed, or that no client can send as a bearer token.

    The proxy key is all that stands between the network and the upstream accounts, and a 401
    costs a guesser nothing: a short key falls to guessing. A space or a control character
    cannot be sent in ``Authorization: Bearer`` (RFC 6750's token). The key itself is never shown.
    """
    make = "make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
    if len(key) < MIN_PROXY_KEY:
        raise UsageError(
            f"the proxy key variable {variable} holds a key of {len(key)} characters; "
            f"a proxy key needs at least {MIN_PROXY_KEY} ({make})"
        )
    if not key.isascii() or not key.isprintable() or " " in key:
        raise UsageError(
            f"the proxy key variable {variable} holds a key with a space or a character that is not printable "
            f"ASCII, which no client can send as a bearer token ({make})"
        )


def _only(data: Mapping[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; the keys are: {', '.join(sorted(known))}")


def _typed(data: Mapping[str, Any], key: str, kind: Any, default: Any, where: str) -> Any:
    value = data.get(key, default)
    if value is default:
        return value
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise UsageError(f"{where}: {key} must be {names}, got {value!r}")
    return value
