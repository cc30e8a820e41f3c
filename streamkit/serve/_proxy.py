"""One request through the proxy: sent upstream, its response checked and streamed back.

A streamed response goes through ``Session`` (the transports' re-emission): each call is
written once, whole, at its end marker, with its own index and id; text and reasoning pass as
they arrive. A route with ``emit = "fragments"`` streams each call's arguments as they arrive
instead, and its end marker only once it was checked (``_fragments``).

A bad call (malformed, cut off, failing its tool's schema, or naming a tool the request did not
offer) is never written as a call. On a ``tell`` route (the default) the proxy answers it to the
model itself: at the response's end it sends the request again, with the turn and each call's
result (the bad call's error) appended, and the response goes on with the new answer, so the
client reads one turn whose calls are all valid (at most ``rounds`` times; then as
``withhold``). On a ``withhold`` route the first bad call ends the stream: the calls before it
were written, then the format's own error event names the call and what was wrong, and nothing
after it is sent. On a ``pass`` route the invalid call is written as the transports
write it (its raw text; a cut call without its end), just after an SSE comment line marking it.
A stream that cannot be decoded, or is cut, ends the same way with the error event.

Secrets never reach the client or the log: an upstream's error body, the events after a
provider's in-stream error, and every message streamkit writes are scrubbed of the upstream
key and the proxy keys. A client that disconnects cancels the upstream request.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

import anyio
import httpx
import orjson

from .. import _observe
from .._errors import HTTPStatusError, TransportError, UsageError
from .._redact import scrub
from .._reemit import Session, is_stream, request_toolset, resent
from .._types import InvalidToolCall, ResponseEnd
from .._validate import Toolset
from ..providers import ASKED, FACTS, MODEL_LISTS
from ..providers._encoder import Call
from ..providers._facts import Facts
from ._config import Route
from ._formats import KEYS, Format, Model
from ._fragments import ServeSession
from ._metrics import Metrics
from ._translate import Translated, TranslateSession, translate
from ._whole import whole_calls, whole_end

__all__ = ("SEND_TIMEOUT", "Exchange", "Upstream", "headers_of")

#: The scope extension the server's protocol sets on a request whose client stopped reading
#: past ``send_timeout`` (``_protocol``), before it drops the connection.
SEND_TIMEOUT = "streamkit.send_timeout"

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

#: The most of an upstream's error body passed on.
MAX_ERROR_BYTES = 64 * 1024
#: The most of an answer that is no model's (a model list, a token count) read from an upstream.
MAX_RELAYED_BYTES = 16 * 1024 * 1024
#: Response headers never passed on: the proxy frames the body itself, and the server (uvicorn)
#: writes its own ``date`` and ``server``.
_DROPPED = frozenset(
    {
        "content-length",
        "content-encoding",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "set-cookie",
        "server",
        "date",
    }
)


class Exchange:
    """The client's side of one request: its headers and body in, the answer out, and its log line."""

    def __init__(
        self,
        fmt: Format,
        scope: MutableMapping[str, Any],
        receive: Receive,
        send: Send,
        metrics: Metrics,
    ) -> None:
        self.format = fmt
        self.scope = scope
        self.headers = headers_of(scope)
        self.receive, self.send, self.metrics = receive, send, metrics
        self.secrets: list[str] = []  # what was sent upstream that an answer may echo (its key headers)
        self.gone = False  # the client went away (or stopped reading) before the answer's end
        client = scope.get("client")
        self.log: dict[str, Any] = {"format": fmt.slug, "client": client[0] if client else None, "status": None}

    async def read_body(self, limit: int, wait: float) -> bytes | None:
        """The request body, or ``None`` once refused: over ``limit`` (413), or no piece of it for ``wait`` s (408)."""
        parts: list[bytes] = []
        size = 0
        while True:
            with anyio.move_on_after(wait) as waited:
                message = await self.receive()
            if waited.cancelled_caught:
                stalled = f"no byte of the request body came for {wait:g} s (body_timeout)"
                await self.refuse(408, "request_timeout", stalled, close=True)
                return None
            if message["type"] == "http.disconnect":
                self.log["outcome"] = "disconnected"
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self.refuse(413, "request_too_large", f"the request body is over {limit} bytes", close=True)
                return None
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)

    async def parse(self, body: bytes) -> dict[str, Any] | None:
        """The request's JSON object, or ``None`` once a body that is not one was refused (400)."""
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            await self.refuse(400, "invalid_request_error", f"the request body is not JSON: {exc}")
            return None
        if not isinstance(value, dict):
            kind = type(value).__name__
            await self.refuse(400, "invalid_request_error", f"the request body must be a JSON object, got {kind}")
            return None
        return value

    async def refuse(self, status: int, kind: str, message: str, *, close: bool = False) -> None:
        """The format's error answer; ``close`` ends the connection after it (a body left unread)."""
        self.log |= {"status": status, "outcome": kind}
        body = self.format.error_body(kind, scrub(message, self.secrets))
        headers = [(b"content-type", b"application/json")]
        if close:
            headers.append((b"connection", b"close"))
        await self.start(status, headers, len(body))
        await self.send({"type": "http.response.body", "body": body})

    async def answer(self, body: bytes, *extra: tuple[bytes, bytes]) -> None:
        """A JSON answer of the proxy's own, 200."""
        self.log["outcome"] = "ok"
        await self.start(200, [(b"content-type", b"application/json"), *extra], len(body))
        await self.send({"type": "http.response.body", "body": body})

    async def start(self, status: int, headers: Headers, length: int | None = None) -> None:
        self.log.setdefault("status", status)
        self.log["status"] = status
        if length is not None:
            headers = [*headers, (b"content-length", str(length).encode())]
        await self.send({"type": "http.response.start", "status": status, "headers": headers})

    async def watch_disconnect(self, scope: anyio.CancelScope) -> None:
        """Cancel ``scope`` (the upstream read) when the client goes away."""
        while (await self.receive())["type"] != "http.disconnect":
            pass
        self.gone = True
        scope.cancel()

    def gone_outcome(self) -> str:
        """Why the client is gone: it hung up, or it read nothing for ``send_timeout`` and was dropped."""
        return "client_stalled" if SEND_TIMEOUT in self.scope.get("extensions", {}) else "disconnected"


class Upstream:
    """One route's upstream: its connection pool, and forwarding a request to it."""

    def __init__(self, route: Route, key: str | None, transport: httpx.AsyncBaseTransport | None) -> None:
        self.route = route
        self._key = key
        timeout = httpx.Timeout(route.timeout)
        pool = httpx.Limits(max_connections=route.max_connections, max_keepalive_connections=route.max_connections)
        self._client = httpx.AsyncClient(timeout=timeout, limits=pool, transport=transport, trust_env=False)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def forward(self, exchange: Exchange, request: dict[str, Any], body: bytes) -> None:
        fmt, route = exchange.format, self.route
        exchange.log["model"] = request.get("model")
        if route.translates:
            await self._translated(exchange, request)
            return
        try:
            toolset = request_toolset(request)
        except UsageError as exc:
            await exchange.refuse(400, "invalid_request_error", f"the request's tools: {exc}")
            return
        headers = self._headers(exchange)
        exchange.secrets += [value for name, value in headers.items() if name in KEYS]
        exchange.secrets += [KEYS[name].key_in(value) for name, value in headers.items() if name in KEYS]
        # the client's query (Anthropic's ?beta=true) goes on as it came
        url = httpx.URL(route.upstream + fmt.upstream_path, query=exchange.scope.get("query_string", b""))
        outgoing = self._client.build_request("POST", url, content=body, headers=headers)
        await self._send(exchange, outgoing, lambda response: self._answer(exchange, response, toolset, request))

    async def relay(self, exchange: Exchange, method: str, path: str, body: bytes = b"") -> None:
        """A request that asks no model for an answer (a model list, a token count) sent on as it
        came to ``path`` on this same-format upstream, keyed as a request for an answer is; its
        answer passed back as it came."""
        headers = self._headers(exchange)
        exchange.secrets += [value for name, value in headers.items() if name in KEYS]
        exchange.secrets += [KEYS[name].key_in(value) for name, value in headers.items() if name in KEYS]
        url = httpx.URL(self.route.upstream + path, query=exchange.scope.get("query_string") or None)
        outgoing = self._client.build_request(method, url, content=body or None, headers=headers)
        await self._send(exchange, outgoing, lambda response: self._relayed(exchange, response))

    async def _relayed(self, exchange: Exchange, response: httpx.Response) -> None:
        exchange.log["upstream_status"] = response.status_code
        headers = _passed(response)
        if not response.is_success:
            exchange.metrics.count("streamkit_serve_upstream_errors_total", format=exchange.format.slug, kind="status")
            await self._pass_error(exchange, response, headers)
            return
        content = await _bounded(response, MAX_RELAYED_BYTES)
        if content is None:
            await exchange.refuse(502, "api_error", f"the upstream's answer is over {MAX_RELAYED_BYTES} bytes")
            return
        exchange.log["outcome"] = "ok"
        await exchange.start(response.status_code, headers, len(content))
        await exchange.send({"type": "http.response.body", "body": content})

    async def models(self, exchange: Exchange) -> list[Model] | None:
        """The upstream's model list, read in its own API's shape (whichever the client's) by
        its provider's reader (``MODEL_LISTS``), an upstream the proxy serves no client of
        included; ``None`` once its failure was answered to the client."""
        route = self.route
        slug = route.upstream_format or route.format
        facts = FACTS[slug]
        path = facts.paths.models
        if path is None or slug not in MODEL_LISTS:
            return []
        headers = {**facts.request_headers, "accept-encoding": "identity"}
        if route.pass_key:
            headers |= {name: exchange.headers[name] for name in KEYS if name in exchange.headers}
        else:
            headers |= self._keyed(exchange, facts)
        exchange.secrets += [KEYS[name].key_in(value) for name, value in headers.items() if name in KEYS]
        found: list[list[Model]] = []

        async def read(response: httpx.Response) -> None:
            exchange.log["upstream_status"] = response.status_code
            content = await _bounded(response, MAX_RELAYED_BYTES if response.is_success else MAX_ERROR_BYTES)
            if not response.is_success or content is None:
                said = scrub((content or b"").decode("utf-8", "replace"), exchange.secrets)
                status = response.status_code if not response.is_success else 502
                await exchange.refuse(status, "api_error", f"the upstream's model list answered {status}: {said}")
                return
            try:
                found.append(MODEL_LISTS[slug](orjson.loads(content)))
            except orjson.JSONDecodeError:
                found.append([])

        outgoing = self._client.build_request("GET", route.upstream + path, headers=headers)
        await self._send(exchange, outgoing, read)
        return found[0] if found else None

    async def count(self, exchange: Exchange, request: dict[str, Any], body: bytes) -> None:
        """A count of the request's input tokens: the upstream's own on a same-format route;
        else an estimate from its text, a token for every ``CHARS_PER_TOKEN`` characters, marked
        ``x-streamkit-estimate: true`` (another format's count would be another request's)."""
        fmt = exchange.format
        exchange.log["model"] = request.get("model")
        path = fmt.facts.paths.count
        assert path is not None  # a format is counted on its own count path only
        if not self.route.translates:
            await self.relay(exchange, "POST", path, body)
            return
        try:
            asked = ASKED[fmt.slug](request)
        except UsageError as exc:
            await exchange.refuse(400, "invalid_request_error", f"the request cannot be counted: {exc}")
            return
        history = request.get(fmt.facts.history_key or "")
        tokens = estimate(asked.system or "", history, asked.tools)
        exchange.log["estimated"] = True
        await exchange.answer(fmt.token_count(tokens), (b"x-streamkit-estimate", b"true"))

    async def _send(
        self, exchange: Exchange, outgoing: httpx.Request, answer: Callable[[httpx.Response], Awaitable[None]]
    ) -> None:
        """``outgoing`` sent, and its response answered by ``answer``; no answer, or one that
        fails before anything of it was sent to the client, is the client's error."""
        try:
            response = await self._client.send(outgoing, stream=True)
        except httpx.HTTPError as exc:
            await self._unanswered(exchange, outgoing, exc)
            return
        try:
            await answer(response)
        except httpx.HTTPError as exc:  # reading a body not streamed: nothing of the answer was sent yet
            message = scrub(f"the upstream's answer failed: {type(exc).__name__}: {exc}", exchange.secrets)
            exchange.metrics.count("streamkit_serve_upstream_errors_total", format=exchange.format.slug, kind="read")
            _span(exchange, outgoing.url, TransportError(message))
            await exchange.refuse(502, "api_error", message)
        finally:
            await response.aclose()

    async def _translated(self, exchange: Exchange, request: dict[str, Any]) -> None:
        """A request for an upstream of another format: written as the upstream's, its answer
        written back in the client's (``_translate``)."""
        fmt, route = exchange.format, self.route
        upstream = route.upstream_format
        assert upstream is not None
        try:
            translated = translate(fmt.slug, upstream, request)
        except UsageError as exc:
            await exchange.refuse(
                400, "invalid_request_error", f"the request cannot be sent to the upstream ({upstream}): {exc}"
            )
            return
        exchange.log["upstream_format"] = upstream
        if translated.asked.dropped:
            exchange.log["dropped"] = list(translated.asked.dropped)
        facts = FACTS[upstream]
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        headers |= {name.lower(): value for name, value in facts.request_headers.items()}  # its API version
        headers |= self._keyed(exchange, facts)
        url = httpx.URL(route.upstream + translated.path)
        outgoing = self._client.build_request("POST", url, content=orjson.dumps(translated.body), headers=headers)
        await self._send(exchange, outgoing, lambda response: self._translated_answer(exchange, response, translated))

    async def _translated_answer(self, exchange: Exchange, response: httpx.Response, translated: Translated) -> None:
        fmt, route = exchange.format, self.route
        exchange.log["upstream_status"] = response.status_code
        if not response.is_success:
            exchange.metrics.count("streamkit_serve_upstream_errors_total", format=fmt.slug, kind="status")
            content = await _bounded(response, MAX_ERROR_BYTES) or b""
            said = scrub(content.decode("utf-8", "replace"), exchange.secrets)
            await exchange.refuse(
                response.status_code, "api_error", f"the upstream answered {response.status_code}: {said}"
            )
            return
        url = response.request.url
        session = TranslateSession(
            route.upstream_format,
            translated.path,
            translated.toolset,
            route.limits,
            client=fmt.slug,
            model=translated.asked.model,
            streamed=translated.asked.stream,
            bad=route.bad_calls(),
            asked=translated.body,
            opened=True,
            early_close=route.early_close,
            request=_observe.Request(exchange.secrets, url.host, url.port),
        )
        if translated.asked.stream:
            headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
            await self._stream(exchange, response, headers, session)
        else:
            await self._whole_translated(exchange, response, session)

    async def _whole_translated(self, exchange: Exchange, response: httpx.Response, session: TranslateSession) -> None:
        """A client that asked for a body: the upstream's stream read through the session, then
        the answer written whole in the client's shape (or the error that stopped it)."""
        stream = _Stream(exchange, session, exchange.metrics, functools.partial(self._again, response.request))
        stream.quiet = True
        try:
            last = await stream.pump(response)
        finally:
            session.close()
        if last or session.stopped:
            message = stream.message or "the upstream's answer could not be read whole"
            status, kind = (422, "invalid_tool_call") if session.withheld else (502, "api_error")
            await exchange.refuse(status, kind, message)
            return
        body = orjson.dumps(session.translating.body())
        await exchange.start(200, [(b"content-type", b"application/json")], len(body))
        await exchange.send({"type": "http.response.body", "body": body})

    def _keyed(self, exchange: Exchange, facts: Facts) -> dict[str, str]:
        """The route's key in the header the upstream's API takes it in, as that API writes it,
        kept among the exchange's secrets; nothing without a key (or for an API that takes none)."""
        if self._key is None or facts.auth_header is None:
            return {}
        value = facts.auth_value.format(self._key)
        exchange.secrets += [self._key, value]
        return {facts.auth_header.lower(): value}

    async def _unanswered(self, exchange: Exchange, outgoing: httpx.Request, exc: httpx.HTTPError) -> None:
        """No answer: no free connection in time (503), no connection or answer in time (504), no upstream (502)."""
        route = self.route
        if isinstance(exc, httpx.PoolTimeout):
            kind, status, code = "pool", 503, "overloaded_error"
            message = (
                f"the proxy waited {route.timeout:g} s for a free connection to the upstream: "
                f"all {route.max_connections} of the route's connections (max_connections) were in use"
            )
        elif isinstance(exc, httpx.ConnectTimeout):
            kind, status, code = "timeout", 504, "timeout_error"
            message = f"the upstream did not take a connection within {route.timeout:g} s"
        elif isinstance(exc, httpx.TimeoutException):
            kind, status, code = "timeout", 504, "timeout_error"
            message = f"the upstream did not answer within {route.timeout:g} s"
        else:
            kind, status, code = "connect", 502, "api_error"
            message = f"the upstream cannot be reached: {type(exc).__name__}: {exc}"
        exchange.metrics.count("streamkit_serve_upstream_errors_total", format=exchange.format.slug, kind=kind)
        _span(exchange, outgoing.url, TransportError(message))
        await exchange.refuse(status, code, message)

    def _headers(self, exchange: Exchange) -> dict[str, str]:
        fmt = exchange.format
        headers = {name: exchange.headers[name] for name in fmt.forwarded if name in exchange.headers}
        headers["accept-encoding"] = "identity"  # the proxy reads the bytes; compressing them is its own job
        if self.route.pass_key:
            headers |= {name: exchange.headers[name] for name in KEYS if name in exchange.headers}
        elif self._key is not None:
            headers[fmt.key_header] = fmt.key_value.format(self._key)
        return headers

    async def _answer(
        self, exchange: Exchange, response: httpx.Response, toolset: Toolset | None, request: dict[str, Any]
    ) -> None:
        fmt = exchange.format
        exchange.log["upstream_status"] = response.status_code
        headers = _passed(response)
        kind = response.headers.get("content-type", "")
        if not response.is_success:
            exchange.metrics.count("streamkit_serve_upstream_errors_total", format=fmt.slug, kind="status")
            failed = HTTPStatusError(f"the upstream answered {response.status_code}", status_code=response.status_code)
            _span(exchange, response.request.url, failed)
            await self._pass_error(exchange, response, headers)
        elif "text/event-stream" in kind:
            await self._stream(exchange, response, headers, self._session(exchange, response, toolset, request))
        else:
            await self._whole(exchange, response, headers, toolset)

    async def _whole(
        self, exchange: Exchange, response: httpx.Response, headers: Headers, toolset: Toolset | None
    ) -> None:
        """A response not streamed: its calls checked in the whole body, which passes on as it came, or is withheld."""
        fmt, limit = exchange.format, self.route.limits.max_event_bytes
        content = await _bounded(response, limit)
        if content is None:
            message = f"the upstream's response is over {limit} bytes (max_event_bytes)"
            _span(exchange, response.request.url, TransportError(message))
            await exchange.refuse(502, "api_error", message)
            return
        try:
            body = orjson.loads(content)
        except orjson.JSONDecodeError:
            body = None  # not JSON: nothing in it is a call; it passes on as it came
        calls = whole_calls(fmt.slug, body, toolset, self.route.limits)
        withhold = self.route.invalid != "pass"  # an answer not streamed is not asked again: ``tell`` withholds
        counted = _Counts(exchange, "withheld" if withhold else "passed_invalid")
        for call in calls:
            counted.count(call)
        bad = [call for call in calls if isinstance(call, InvalidToolCall)]
        end = None if bad and withhold else whole_end(fmt.slug, body, calls)  # withheld: the span is left
        _span(exchange, response.request.url, None, calls, end)
        if bad and withhold:  # 422: no client retries it, as it would a 502, sending the same turn again
            described = "; ".join(_describe(call) for call in bad)
            await exchange.refuse(422, "invalid_tool_call", f"streamkit withheld an invalid tool call: {described}")
            return
        if bad:
            headers = [*headers, (b"x-streamkit-invalid-calls", str(len(bad)).encode())]
        exchange.log["outcome"] = "passed_invalid" if bad else "ok"
        await exchange.start(response.status_code, headers, len(content))
        await exchange.send({"type": "http.response.body", "body": content})

    async def _again(self, first: httpx.Request, asked: dict[str, Any]) -> httpx.Response:
        """The request asked again (``tell``), ``asked`` its body, sent as the first was; its
        answer, a stream, or an ``HTTPError`` (the stream's end says it)."""
        headers, body = resent(first.headers.raw, asked)
        outgoing = self._client.build_request("POST", first.url, content=body, headers=headers)
        response = await self._client.send(outgoing, stream=True)
        kind = response.headers.get("content-type", "")
        if response.is_success and is_stream(kind):
            return response
        await response.aclose()
        said = f"answered {response.status_code} {kind or 'with no body type'}"
        raise httpx.HTTPError(f"asked again about a bad tool call, the upstream {said}, not a stream")

    async def _pass_error(self, exchange: Exchange, response: httpx.Response, headers: Headers) -> None:
        """The upstream's error, status and body as it sent them, scrubbed of every key."""
        content = await _bounded(response, MAX_ERROR_BYTES)
        if content is None:
            status = response.status_code
            await exchange.refuse(
                502, "api_error", f"the upstream answered {status} with a body over {MAX_ERROR_BYTES} bytes"
            )
            return
        text = scrub(content.decode("utf-8", "replace"), exchange.secrets).encode()
        exchange.log["outcome"] = "upstream_error"
        await exchange.start(response.status_code, headers, len(text))
        await exchange.send({"type": "http.response.body", "body": text})

    def _session(
        self, exchange: Exchange, response: httpx.Response, toolset: Toolset | None, request: dict[str, Any]
    ) -> ServeSession:
        """The session re-emitting a same-format route's stream."""
        fmt, route = exchange.format, self.route
        url = response.request.url  # telemetry's server.address and .port: the upstream's
        return ServeSession(
            fmt.slug,
            fmt.upstream_path,
            toolset,
            route.limits,
            fragments=route.emit == "fragments",
            bad=route.bad_calls(),
            asked=request,
            opened=True,
            early_close=route.early_close,
            request=_observe.Request(exchange.secrets, url.host, url.port),
        )

    async def _stream(
        self, exchange: Exchange, response: httpx.Response, headers: Headers, session: ServeSession
    ) -> None:
        fmt = exchange.format
        stream = _Stream(exchange, session, exchange.metrics, functools.partial(self._again, response.request))
        await exchange.start(response.status_code, headers)
        last = b""
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(exchange.watch_disconnect, group.cancel_scope)
                last = await stream.pump(response)
                group.cancel_scope.cancel()
            if exchange.gone:  # while the proxy waited on the upstream or the client
                stream.left()
        finally:
            session.close()
        outcome = exchange.log["outcome"]
        exchange.metrics.count("streamkit_serve_streams_total", format=fmt.slug, outcome=outcome)
        if not exchange.gone:
            await exchange.send({"type": "http.response.body", "body": last})


class _Counts:
    """One response's calls, counted in the metrics and in its access log line; ``bad`` is the
    outcome an invalid call is counted under: ``withheld``, ``told`` (left out, the model asked
    again) or ``passed_invalid``."""

    def __init__(self, exchange: Exchange, bad: str) -> None:
        self.exchange, self.bad = exchange, bad
        exchange.log |= {"calls": 0, "invalid": 0}

    def count(self, call: Call) -> None:
        metrics, fmt, log = self.exchange.metrics, self.exchange.format.slug, self.exchange.log
        log["calls"] += 1
        if not isinstance(call, InvalidToolCall):
            metrics.count("streamkit_serve_calls_total", format=fmt, outcome="valid")
            return
        log["invalid"] += 1
        metrics.count("streamkit_serve_calls_total", format=fmt, outcome=self.bad)
        for issue in call.errors:
            metrics.count("streamkit_serve_invalid_calls_total", format=fmt, kind=issue.kind)


class _Stream:
    """Bytes from the upstream, through the session, to the client, with the counts and timings."""

    def __init__(
        self,
        exchange: Exchange,
        session: Session,
        metrics: Metrics,
        again: Callable[[dict[str, Any]], Awaitable[httpx.Response]],
    ) -> None:
        self.exchange, self.session, self.metrics = exchange, session, metrics
        self._again = again
        self.format = exchange.format
        self._opened: dict[tuple[int, int], float] = {}
        self._counts = _Counts(exchange, "passed_invalid")
        self._marks: list[bytes] = []  # a pass route's comment lines, each before its invalid call
        self._delivered = False  # the provider's end marker was read, and all before it sent
        self.quiet = False  # read for a body not streamed: nothing is sent as it comes
        self.message: str | None = None  # what ended the stream early, when something did

    async def pump(self, response: httpx.Response) -> bytes:
        """Stream the body to the client; the bytes that end it are returned, to send last."""
        session = self.session
        try:
            await self._read(response)
            while session.again is not None and not session.stopped:
                self.exchange.log["asked_again"] = session.rounds + 1
                self.metrics.count("streamkit_serve_asked_again_total", format=self.format.slug)
                answer = await self._again(session.again)
                try:
                    session.resume(None)  # httpx undid its Content-Encoding
                    await self._read(answer)
                finally:
                    await answer.aclose()
        except httpx.HTTPError as exc:
            self.metrics.count("streamkit_serve_upstream_errors_total", format=self.format.slug, kind="read")
            failed = f"the upstream's stream failed: {type(exc).__name__}: {exc}"
            session.fail(TransportError(scrub(failed, self.exchange.secrets)))
            return self._end("upstream_error", "api_error", failed)
        return self._finish()

    async def _read(self, response: httpx.Response) -> None:
        """One upstream response through the session to the client."""
        session = self.session
        async for chunk in response.aiter_bytes():
            await self._write(session.feed(chunk))
            if session.stopped:
                return
        await self._write(session.flush())

    def left(self) -> None:
        """The client went before the pump ended: the stream is complete if it had the provider's
        end marker (only the upstream's close was awaited), else it was left."""
        if self._delivered:
            self._finish()
        else:
            self.exchange.log["outcome"] = self.exchange.gone_outcome()

    async def _write(self, out: bytes) -> None:
        self._account()
        if self._marks:
            out, self._marks = b"".join(self._marks) + out, []
        if self.session.provider_error:
            out = scrub(out.decode("utf-8", "replace"), self.exchange.secrets).encode()
            self.exchange.log["outcome"] = "provider_error"
        if out and not self.quiet:
            await self.exchange.send({"type": "http.response.body", "body": out, "more_body": True})
        self._delivered = self.session.finished and not self.session.stopped

    def _account(self) -> None:
        """Time and count the calls the session opened and completed since it was last asked."""
        session, now, fmt = self.session, time.perf_counter(), self.format.slug
        for opened in session.started:
            self._opened.setdefault((opened.choice, opened.index), now)
        session.started.clear()
        for call in session.calls:
            started = self._opened.pop((call.choice, call.index), now)
            self.metrics.observe(fmt, now - started)
            self._counted(call)
        session.calls.clear()

    def _counted(self, call: Call) -> None:
        session = self.session
        self._counts.bad = "withheld" if session.withheld else "passed_invalid" if session.keep_invalid else "told"
        self._counts.count(call)
        if isinstance(call, InvalidToolCall) and session.keep_invalid:  # a pass route: marked before its bytes
            self._marks.append(f": streamkit: invalid tool call {_describe(call)}\n\n".encode())

    def _finish(self) -> bytes:
        session, log = self.session, self.exchange.log
        if session.withheld:
            described = "; ".join(_describe(call) for call in session.withheld)
            message = f"streamkit withheld an invalid tool call: {described}"
            return self._end("withheld", "invalid_tool_call", message, session.withheld[0].errors[0].kind)
        if session.failure is not None:
            message = f"streamkit stopped the stream: {session.failure}"
            return self._end("failed", "stream_error", message, type(session.failure).__name__)
        if "outcome" not in log:
            log["outcome"] = ("passed_invalid" if session.keep_invalid else "told") if log["invalid"] else "ok"
        return b""

    def _end(self, outcome: str, kind: str, message: str, code: str = "upstream_error") -> bytes:
        """The format's error event that ends the stream."""
        self.exchange.log["outcome"] = outcome
        message = self.message = scrub(message, self.exchange.secrets)
        ending = self.session.ending(kind, message, code)
        return self.format.error_event(kind, message, code) if ending is None else ending


def _span(
    exchange: Exchange,
    url: httpx.URL,
    error: Exception | None,
    calls: Sequence[Call] = (),
    end: ResponseEnd | None = None,
) -> None:
    """Telemetry's span for an answer that was no stream (a whole body, an error status, none at
    all): ended with ``end``, failed with ``error``, or left (a withheld call); nothing when off."""
    request = _observe.Request(exchange.secrets, url.host, url.port)
    watch = _observe.within(request, lambda: _observe.watch(exchange.format.slug))
    if watch is None:
        return
    if error is not None:
        watch.fail(error, ())
        return
    for call in calls:  # no first_input: a whole answer has no first chunk to time
        watch.call(call)
    if end is None:
        watch.close()
    else:
        watch.end(end)


def headers_of(scope: MutableMapping[str, Any]) -> dict[str, str]:
    """A request's headers by their lower-case names."""
    return {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}


#: Characters of a request's text per token, for an estimate of its count: English prose's
#: usual ratio in the tokenizers of the large models.
CHARS_PER_TOKEN = 4


def estimate(system: str, history: object, tools: Sequence[Any]) -> int:
    """The tokens of a request estimated from its text: its system text, and its history and
    tools as JSON, a token for every ``CHARS_PER_TOKEN`` characters, rounded up."""
    parts = [part for part in (history, list(tools)) if part]
    chars = len(system) + sum(len(orjson.dumps(part, default=str).decode()) for part in parts)
    return -(-chars // CHARS_PER_TOKEN)


def _passed(response: httpx.Response) -> Headers:
    """The upstream's response headers the client gets."""
    return [
        (name.encode("latin-1"), value.encode("latin-1"))
        for name, value in response.headers.items()
        if name.lower() not in _DROPPED
    ]


def _describe(call: InvalidToolCall) -> str:
    issues = "; ".join(f"{issue.kind}: {issue.message}" for issue in call.errors)
    return f"at index {call.index} ({call.name or 'no name'}, id {call.id or 'none'}): {issues}"


async def _bounded(response: httpx.Response, limit: int) -> bytes | None:
    """The whole body, or ``None`` when it is over ``limit`` bytes: an upstream cannot make the proxy hold more."""
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)
