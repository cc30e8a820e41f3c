"""The HTTP edge: httpx responses in, the pipeline's events out. The only importer of httpx.

``astream`` (and its sync twin ``stream``) sends a request with the caller's httpx client and
yields the assembled stream; ``iter_events`` and its kin accept an ``httpx.Response`` opened
with ``client.stream(...)`` beside every source the pipeline takes. Either way the response
is checked before its body is decoded: a non-2xx status raises ``HTTPStatusError`` with the
provider's error type and message, and a 2xx answer whose content type is not the provider's
stream format (an HTML error page from a proxy) raises ``TransportError``. httpx's errors while
reading become ``TransportError`` (the httpx error as ``__cause__``), and the pipeline adds the
calls still open. The body is read only as the consumer asks for values: nothing is buffered
ahead. Credentials never reach a message or a repr: the values of the auth headers, and
``key=`` and its kin in URLs, are redacted.
"""

from __future__ import annotations

import contextlib
import json as jsonlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anyio
import httpx

from . import _pipeline
from ._errors import HTTPStatusError, TransportError, UsageError
from ._types import InvalidToolCall, StreamEvent, ToolCall, Turn
from .providers import DECODERS, Decoder

__all__ = (
    "AsyncEventStream",
    "EventStream",
    "acollect_turn",
    "aiter_events",
    "aiter_tool_calls",
    "astream",
    "collect_turn",
    "iter_events",
    "iter_tool_calls",
    "stream",
)

#: The content types a stream may have, by the decoder's framing. SSE follows httpx-sse,
#: which refuses a response whose Content-Type lacks ``text/event-stream``.
CONTENT_TYPES: Mapping[str, tuple[str, ...]] = {
    "sse": ("text/event-stream",),
    "ndjson": ("application/x-ndjson", "application/jsonl", "application/json"),
    "eventstream": ("application/vnd.amazon.eventstream",),
}
#: How much of an error body is read, and how much of it is shown.
ERROR_BODY_LIMIT = 64 * 1024
EXCERPT_CHARS = 300

_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"}
)
_SECRET_PARAMS = frozenset({"key", "api_key", "apikey", "api-key", "access_token", "token"})
_REDACTED = "[REDACTED]"

Tee = Callable[[bytes], object]


# -- secrets ---------------------------------------------------------------------------------


def _secrets(request: httpx.Request) -> list[str]:
    found: list[str] = []
    for name, value in request.headers.items():
        if name.lower() in _SECRET_HEADERS and value:
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.append(token)
    for name, value in request.url.params.multi_items():
        if name.lower() in _SECRET_PARAMS and value:
            found.append(value)
    if request.url.password:
        found.append(request.url.password)
    return sorted(set(found), key=len, reverse=True)  # the longest first: a token inside its header


def _redact_url(url: httpx.URL) -> str:
    """The URL with its password and secret query parameters replaced by ``[REDACTED]``."""
    parts = urlsplit(str(url))
    netloc, query = parts.netloc, parts.query
    if url.password:
        netloc = f"{parts.username or ''}:{_REDACTED}@{netloc.rpartition('@')[2]}"
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, _REDACTED if k.lower() in _SECRET_PARAMS else v) for k, v in pairs], safe="[]")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if len(secret) >= 4:  # shorter values would blank out ordinary words
            text = text.replace(secret, _REDACTED)
    return text


def _where(request: httpx.Request) -> str:
    return f"{request.method} {_redact_url(request.url)}"


# -- checking a response ---------------------------------------------------------------------


def _framing(provider: str | Decoder) -> str:
    if isinstance(provider, Decoder):
        return provider.framing
    cls = DECODERS.get(provider)
    if cls is None:
        known = ", ".join(sorted(DECODERS))
        raise UsageError(f"unknown provider {provider!r}; known providers: {known}")
    return cls.framing


def _slug(provider: str | Decoder) -> str:
    return provider.slug if isinstance(provider, Decoder) else provider


def _error_details(body: bytes) -> tuple[str | None, str | None]:
    """The provider's error type and message from a JSON error body, where it has them.

    Shapes: OpenAI ``{"error": {"type", "message"}}``; Anthropic ``{"type": "error", "error":
    {...}}``; Gemini ``{"error": {"status", "message"}}`` (in a list when not streamed as SSE);
    Ollama ``{"error": "text"}``; Mistral and Cohere ``{"type"?, "message"}`` or ``{"detail"}``.
    """
    try:
        data = jsonlib.loads(body)
    except ValueError:
        return None, None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        data = data[0]
    if not isinstance(data, dict):
        return None, None
    error = data.get("error", data)
    if isinstance(error, str):
        return None, error
    if not isinstance(error, dict):
        return None, None
    kind = error.get("type") or error.get("status") or error.get("code")
    message = error.get("message") or error.get("detail") or data.get("message")
    if message is not None and not isinstance(message, str):
        message = jsonlib.dumps(message)
    return (None if kind is None else str(kind)), message


def _excerpt(body: bytes) -> str:
    text = body[: EXCERPT_CHARS * 4].decode("utf-8", "replace")
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 3] + "..."


def _status_error(response: httpx.Response, body: bytes) -> HTTPStatusError:
    secrets = _secrets(response.request)
    kind, message = _error_details(body)
    excerpt = _scrub(_excerpt(body), secrets)
    detail = ": ".join(_scrub(part, secrets) for part in (kind, message) if part) or excerpt or "(no body)"
    reason = f" {response.reason_phrase}" if response.reason_phrase else ""
    return HTTPStatusError(
        f"HTTP {response.status_code}{reason} from {_where(response.request)}: {detail}",
        status_code=response.status_code,
        body_excerpt=excerpt,
        error_type=None if kind is None else _scrub(kind, secrets),
        error_message=None if message is None else _scrub(message, secrets),
    )


def _accepted(response: httpx.Response, framing: str) -> bool:
    """A 2xx answer in the provider's stream format: its body can be decoded."""
    if not response.is_success:
        return False
    content_type = response.headers.get("content-type", "").lower()
    return any(kind in content_type for kind in CONTENT_TYPES.get(framing, ("",)))


def _refusal(response: httpx.Response, framing: str, provider: str, body: bytes) -> TransportError:
    """The error for a response that ``_accepted`` refused, with the start of its body."""
    if not response.is_success:
        return _status_error(response, body)
    expected = CONTENT_TYPES[framing]
    content_type = response.headers.get("content-type", "")
    hint = " (Gemini streams SSE only with alt=sse in the URL)" if "json" in content_type else ""
    excerpt = _scrub(_excerpt(body), _secrets(response.request))
    return TransportError(
        f"{provider} streams {' or '.join(expected)}, but {_where(response.request)} answered "
        f"HTTP {response.status_code} with {content_type or 'no Content-Type'}{hint}: {excerpt!r}"
    )


def _read_error(exc: httpx.HTTPError, request: httpx.Request, *, during: str) -> TransportError:
    if isinstance(exc, httpx.RemoteProtocolError):
        what = "the connection closed before the response ended"
    elif isinstance(exc, httpx.TimeoutException):
        what = "timed out"
    elif isinstance(exc, httpx.DecodingError):
        what = "the body could not be decoded by its Content-Encoding"
    else:
        what = "the connection failed"
    cause = _scrub(str(exc), _secrets(request))
    return TransportError(f"{during} {_where(request)}: {what} ({type(exc).__name__}: {cause})")


async def _release(response: httpx.Response, chunks: AsyncIterator[bytes]) -> None:
    """Close the response, then let httpx's abandoned byte iterators end.

    httpx's byte iterators are async generators nested several deep, and an inner one is never
    closed when the outer one is (encode/httpx#3593): trio warns about each one collected
    unfinished. Once the response is closed, one more step ends them all with ``ReadError``.
    """
    with anyio.CancelScope(shield=True):
        await response.aclose()
        with contextlib.suppress(httpx.HTTPError, httpx.StreamError):
            async for _ in chunks:
                pass


def _check(response: httpx.Response, framing: str, provider: str) -> None:
    if _accepted(response, framing):
        return
    body = bytearray()
    try:
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) >= ERROR_BODY_LIMIT:
                break
    except httpx.HTTPError:
        pass  # the refusal matters more than the rest of its body
    finally:
        response.close()
    raise _refusal(response, framing, provider, bytes(body))


async def _acheck(response: httpx.Response, framing: str, provider: str) -> None:
    if _accepted(response, framing):
        return
    body = bytearray()
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            body += chunk
            if len(body) >= ERROR_BODY_LIMIT:
                break
    except httpx.HTTPError:
        pass  # the refusal matters more than the rest of its body
    finally:
        await _release(response, chunks)
    raise _refusal(response, framing, provider, bytes(body))


# -- reading a response ----------------------------------------------------------------------


def _body(response: httpx.Response, framing: str, provider: str, tee: Tee | None, checked: bool) -> Iterator[bytes]:
    """The body's bytes, as the consumer asks for them; the response is closed at the end."""
    if not checked:
        _check(response, framing, provider)
    try:
        for chunk in response.iter_bytes():
            if tee is not None:
                tee(chunk)
            yield chunk
    except httpx.HTTPError as exc:
        raise _read_error(exc, response.request, during="reading the response of") from exc
    finally:
        response.close()


async def _abody(
    response: httpx.Response, framing: str, provider: str, tee: Tee | None, checked: bool
) -> AsyncGenerator[bytes, None]:
    """The async twin of ``_body``."""
    if not checked:
        await _acheck(response, framing, provider)
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            if tee is not None:
                tee(chunk)
            yield chunk
    except httpx.HTTPError as exc:
        raise _read_error(exc, response.request, during="reading the response of") from exc
    finally:
        await _release(response, chunks)


def _source(source: Any, provider: str | Decoder) -> Any:
    if isinstance(source, httpx.Response):
        return _body(source, _framing(provider), _slug(provider), None, checked=False)
    return source


def _asource(source: Any, provider: str | Decoder) -> Any:
    if isinstance(source, httpx.Response):
        return _abody(source, _framing(provider), _slug(provider), None, checked=False)
    return source


def iter_events(
    source: _pipeline.Source | httpx.Response, provider: str | Decoder, **options: Any
) -> Iterator[StreamEvent]:
    """Yield text deltas, each call the moment it completes, and last the ``ResponseEnd``.

    ``source`` is an ``httpx.Response`` opened with ``client.stream(...)``, or any iterable of
    bytes chunks, text lines, SSE events, dicts or SDK event objects.
    """
    return _pipeline.iter_events(_source(source, provider), provider, **options)


def aiter_events(
    source: _pipeline.Source | httpx.Response, provider: str | Decoder, **options: Any
) -> AsyncIterator[StreamEvent]:
    """The async twin of ``iter_events``; ``source`` may be async or plain."""
    return _pipeline.aiter_events(_asource(source, provider), provider, **options)


def iter_tool_calls(
    source: _pipeline.Source | httpx.Response, provider: str | Decoder, **options: Any
) -> Iterator[ToolCall | InvalidToolCall]:
    """Yield each call, valid or not, the moment its end marker arrives."""
    return _pipeline.iter_tool_calls(_source(source, provider), provider, **options)


def aiter_tool_calls(
    source: _pipeline.Source | httpx.Response, provider: str | Decoder, **options: Any
) -> AsyncIterator[ToolCall | InvalidToolCall]:
    """The async twin of ``iter_tool_calls``."""
    return _pipeline.aiter_tool_calls(_asource(source, provider), provider, **options)


def collect_turn(source: _pipeline.Source | httpx.Response, provider: str | Decoder, **options: Any) -> Turn:
    """Read a whole response and return its ``Turn``: text, reasoning, server tools and calls."""
    return _pipeline.collect_turn(_source(source, provider), provider, **options)


async def acollect_turn(source: _pipeline.Source | httpx.Response, provider: str | Decoder, **options: Any) -> Turn:
    """The async twin of ``collect_turn``."""
    return await _pipeline.acollect_turn(_asource(source, provider), provider, **options)


# -- sending the request ---------------------------------------------------------------------


class AsyncEventStream:
    """An open streamed response, as an async iterator of ``StreamEvent``s (read it once).

    ``tool_calls()`` keeps only the calls. ``status_code`` and ``headers`` are the response's.
    """

    def __init__(self, response: httpx.Response, provider: str | Decoder, tee: Tee | None, options: Any) -> None:
        self.provider = _slug(provider)
        self.status_code = response.status_code
        self.headers = response.headers
        self._response = response
        self._url = _redact_url(response.request.url)
        body = _abody(response, _framing(provider), self.provider, tee, checked=True)
        self._events = cast(AsyncGenerator[StreamEvent, None], _pipeline.aiter_events(body, provider, **options))

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._events

    def tool_calls(self) -> AsyncIterator[ToolCall | InvalidToolCall]:
        """Only the calls, valid or not, each the moment it completes."""
        return _AsyncCalls(self._events)

    async def aclose(self) -> None:
        """Stop reading and close the response; the connection goes back to the client."""
        await self._events.aclose()
        await self._response.aclose()

    def __repr__(self) -> str:
        return f"<AsyncEventStream provider={self.provider!r} status={self.status_code} url={self._url!r}>"


class _AsyncCalls:
    # A plain iterator, not an async generator: breaking out of it leaves nothing unclosed.
    def __init__(self, events: AsyncIterator[StreamEvent]) -> None:
        self._events = events

    def __aiter__(self) -> _AsyncCalls:
        return self

    async def __anext__(self) -> ToolCall | InvalidToolCall:
        while True:
            item = await self._events.__anext__()
            if isinstance(item, ToolCall | InvalidToolCall):
                return item


class EventStream:
    """The sync twin of ``AsyncEventStream``: an iterator of ``StreamEvent``s."""

    def __init__(self, response: httpx.Response, provider: str | Decoder, tee: Tee | None, options: Any) -> None:
        self.provider = _slug(provider)
        self.status_code = response.status_code
        self.headers = response.headers
        self._response = response
        self._url = _redact_url(response.request.url)
        body = _body(response, _framing(provider), self.provider, tee, checked=True)
        self._events = cast(Generator[StreamEvent, None, None], _pipeline.iter_events(body, provider, **options))

    def __iter__(self) -> Iterator[StreamEvent]:
        return self._events

    def tool_calls(self) -> Iterator[ToolCall | InvalidToolCall]:
        """Only the calls, valid or not, each the moment it completes."""
        return (item for item in self._events if isinstance(item, ToolCall | InvalidToolCall))

    def close(self) -> None:
        """Stop reading and close the response; the connection goes back to the client."""
        self._events.close()
        self._response.close()

    def __repr__(self) -> str:
        return f"<EventStream provider={self.provider!r} status={self.status_code} url={self._url!r}>"


def _build(client: httpx.Client | httpx.AsyncClient, method: str, url: str | httpx.URL, **parts: Any) -> httpx.Request:
    try:
        return client.build_request(method, url, **parts)
    except httpx.InvalidURL as exc:
        raise UsageError(f"invalid URL: {exc}") from None


@contextmanager
def _sending(request: httpx.Request) -> Iterator[None]:
    """httpx's errors while a request is sent, as streamkit's: a bad scheme is the caller's."""
    try:
        yield
    except httpx.UnsupportedProtocol as exc:
        raise UsageError(f"cannot send {_where(request)}: {exc}") from None
    except httpx.HTTPError as exc:
        raise _read_error(exc, request, during="sending") from exc


@asynccontextmanager
async def astream(
    client: httpx.AsyncClient,
    provider: str | Decoder,
    url: str | httpx.URL,
    *,
    method: str = "POST",
    json: Any = None,
    content: bytes | str | None = None,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    tee: Tee | None = None,
    **options: Any,
) -> AsyncGenerator[AsyncEventStream, None]:
    """Send a request with ``client`` and yield its response as an ``AsyncEventStream``.

    Raises ``HTTPStatusError`` on entry for a non-2xx answer, ``TransportError`` when the
    connection fails or the answer is not a stream of the provider's format. On exit, however
    it happens (the end, ``break``, an exception, a cancellation), the response is closed and
    its connection released.

    Args:
        client: the caller's ``httpx.AsyncClient`` (its timeouts, proxies and pool apply).
        provider: a slug from ``streamkit.DECODERS``, or a decoder instance.
        url, method, json, content, headers, params: the request, as for httpx.
        tee: called with each body chunk (after any Content-Encoding is undone) before it is
            decoded; ``tee=file.write`` records a transcript ``streamkit replay`` can read.
        options: passed to ``Assembler`` (``early_close``, ``max_event_bytes``).
    """
    framing = _framing(provider)
    request = _build(client, method, url, json=json, content=content, headers=headers, params=params)
    with _sending(request):
        response = await client.send(request, stream=True)
    events: AsyncEventStream | None = None
    try:
        await _acheck(response, framing, _slug(provider))
        events = AsyncEventStream(response, provider, tee, options)
        yield events
    finally:
        with anyio.CancelScope(shield=True):
            if events is not None:
                await events.aclose()
            await response.aclose()


@contextmanager
def stream(
    client: httpx.Client,
    provider: str | Decoder,
    url: str | httpx.URL,
    *,
    method: str = "POST",
    json: Any = None,
    content: bytes | str | None = None,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    tee: Tee | None = None,
    **options: Any,
) -> Generator[EventStream, None, None]:
    """The sync twin of ``astream``, with an ``httpx.Client``."""
    framing = _framing(provider)
    request = _build(client, method, url, json=json, content=content, headers=headers, params=params)
    with _sending(request):
        response = client.send(request, stream=True)
    events: EventStream | None = None
    try:
        _check(response, framing, _slug(provider))
        events = EventStream(response, provider, tee, options)
        yield events
    finally:
        if events is not None:
            events.close()
        response.close()
