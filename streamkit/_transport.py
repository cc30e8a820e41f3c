"""Checking an httpx or httpx2 response and reading its body, for the iterators and the client.

``iter_events`` and its kin accept an ``httpx.Response`` or ``httpx2.Response`` opened with
``client.stream(...)`` beside every source the pipeline takes. The response is checked before
its body is decoded: a non-2xx status raises ``HTTPStatusError`` with the provider's error type
and message, and a 2xx answer whose content type is not the provider's stream format (an HTML
error page from a proxy) raises ``TransportError``. The library's errors while reading become
``TransportError`` (its error as ``__cause__``), and the pipeline adds the calls still open.
The body is read only as the consumer asks for values: nothing is buffered ahead.

The two libraries have the same shape; which one an object comes from is read from its class,
through ``sys.modules``: neither is ever imported here, so ``import streamkit`` pays for no
HTTP client, and a program that uses one never loads the other.
"""

from __future__ import annotations

import contextlib
import json as jsonlib
import re
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator, Mapping, Sequence
from datetime import UTC
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, Unpack, cast

from . import _pipeline, _redact
from ._errors import HTTPStatusError, Passthrough, StreamkitError, TransportError, UsageError
from ._pipeline import StreamOptions
from ._types import InvalidToolCall, Provider, StreamEvent, ToolCall, Turn
from .providers import DECODERS, Decoder

if TYPE_CHECKING:
    import httpx
    import httpx2

    Response: TypeAlias = httpx.Response | httpx2.Response
    Request: TypeAlias = httpx.Request | httpx2.Request

__all__ = (
    "CONTENT_TYPES",
    "ERROR_BODY_LIMIT",
    "Tee",
    "acollect_turn",
    "aiter_events",
    "aiter_tool_calls",
    "collect_turn",
    "iter_events",
    "iter_tool_calls",
    "library",
    "retry_after",
)

#: The content types a stream may have, by the decoder's framing. SSE follows httpx-sse,
#: which refuses a response whose Content-Type lacks ``text/event-stream``.
CONTENT_TYPES: Mapping[str, tuple[str, ...]] = {
    "sse": ("text/event-stream",),
    "ndjson": ("application/x-ndjson", "application/jsonl", "application/json"),
    "eventstream": ("application/vnd.amazon.eventstream",),
}
#: How much of an error body is read.
ERROR_BODY_LIMIT = 64 * 1024

Tee = Callable[[bytes], object]
T = TypeVar("T")

_LIBRARIES = frozenset({"httpx", "httpx2"})


def library(obj: object) -> ModuleType | None:
    """httpx or httpx2, when ``obj``'s class (or a base of it) is one of theirs, else None.

    Read from the class's module through ``sys.modules``: a library is never imported here, and
    an object of a library that was never imported cannot be one of its instances.
    """
    for cls in type(obj).__mro__:
        name = cls.__module__.partition(".")[0]
        if name in _LIBRARIES:
            return sys.modules.get(name)
    return None


def _response_library(source: object) -> ModuleType | None:
    found = library(source)
    return found if found is not None and isinstance(source, found.Response) else None


# -- checking a response ---------------------------------------------------------------------


def framing_of(provider: str | Decoder) -> str:
    if isinstance(provider, Decoder):
        return provider.framing
    cls = DECODERS.get(provider)
    if cls is None:
        known = ", ".join(sorted(DECODERS))
        raise UsageError(f"unknown provider {provider!r}; known providers: {known}")
    return cls.framing


def slug_of(provider: str | Decoder) -> str:
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


def _status_error(response: Response, body: bytes) -> HTTPStatusError:
    secrets = _redact.secrets(response.request)
    kind, message = _error_details(body)
    excerpt = _redact.excerpt(body, secrets)
    detail = ": ".join(_redact.scrub(part, secrets) for part in (kind, message) if part) or excerpt or "(no body)"
    reason = f" {response.reason_phrase}" if response.reason_phrase else ""
    return HTTPStatusError(
        f"HTTP {response.status_code}{reason} from {_redact.where(response.request)}: {detail}",
        status_code=response.status_code,
        body_excerpt=excerpt,
        error_type=None if kind is None else _redact.scrub(kind, secrets),
        error_message=None if message is None else _redact.scrub(message, secrets),
        headers=response.headers,
        retry_after=retry_after(response.headers),
    )


_SECONDS = re.compile(r"\s*[0-9]+(\.[0-9]+)?\s*")


def _seconds(text: str | None) -> float | None:
    return float(text) if text is not None and _SECONDS.fullmatch(text) else None


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait a refusal asks for, in seconds; None when it names none we can read.

    ``retry-after-ms`` (OpenAI's, in milliseconds) first, then ``Retry-After`` as seconds or as
    an HTTP-date (the time left until then from ``now``, at least 0).
    """
    millis = _seconds(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    text = headers.get("retry-after")
    seconds = _seconds(text)
    if seconds is not None or not text:
        return seconds
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": a time in UTC from a source that does not say its zone
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _accepted(response: Response, framing: str) -> bool:
    """A 2xx answer in the provider's stream format: its body can be decoded."""
    if not response.is_success:
        return False
    content_type = response.headers.get("content-type", "").lower()
    return any(kind in content_type for kind in CONTENT_TYPES.get(framing, ("",)))


def _refusal(response: Response, framing: str, provider: str, body: bytes) -> TransportError:
    """The error for a response that ``_accepted`` refused, with the start of its body.

    Only the first ``ERROR_BODY_LIMIT`` bytes count, however many were read.
    """
    body = body[:ERROR_BODY_LIMIT]
    if not response.is_success:
        return _status_error(response, body)
    expected = CONTENT_TYPES[framing]
    content_type = response.headers.get("content-type", "")
    hint = " (Gemini streams SSE only with alt=sse in the URL)" if "json" in content_type else ""
    excerpt = _redact.excerpt(body, _redact.secrets(response.request))
    return TransportError(
        f"{provider} streams {' or '.join(expected)}, but {_redact.where(response.request)} answered "
        f"HTTP {response.status_code} with {content_type or 'no Content-Type'}{hint}: {excerpt!r}"
    )


def read_error(exc: Exception, request: Request, *, during: str) -> TransportError:
    """``exc``, an error of httpx or httpx2 while sending or reading, as streamkit's."""
    http = library(exc)
    assert http is not None  # only the library's own errors are caught
    if isinstance(exc, http.RemoteProtocolError):
        what = "the connection closed before the response ended"
    elif isinstance(exc, http.TimeoutException):
        what = "timed out"
    elif isinstance(exc, http.DecodingError):
        what = "the body could not be decoded by its Content-Encoding"
    else:
        what = "the connection failed"
    cause = _redact.scrub(str(exc), _redact.secrets(request))
    return TransportError(f"{during} {_redact.where(request)}: {what} ({type(exc).__name__}: {cause})")


async def release(response: Response, chunks: AsyncIterator[bytes]) -> None:
    """Close the response, then let the library's abandoned byte iterators end.

    httpx's (and httpx2's) byte iterators are async generators nested several deep, and an inner
    one is never closed when the outer one is (encode/httpx#3593): trio warns about each one
    collected unfinished. Once the response is closed, one more step ends them all.
    """
    import anyio  # imported where it is used: only an async response needs it

    http = _http(response)
    with anyio.CancelScope(shield=True):
        await response.aclose()
        with contextlib.suppress(http.HTTPError, http.StreamError):
            async for _ in chunks:
                pass


def _http(response: Response) -> ModuleType:
    http = library(response)
    assert http is not None  # responses are recognised by their library first
    return http


def check(response: Response, framing: str, provider: str) -> None:
    if _accepted(response, framing):
        return
    http = _http(response)
    body = bytearray()
    try:
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) >= ERROR_BODY_LIMIT:
                break
    except http.HTTPError:
        pass  # the refusal matters more than the rest of its body
    finally:
        response.close()
    raise _refusal(response, framing, provider, bytes(body))


async def acheck(response: Response, framing: str, provider: str) -> None:
    if _accepted(response, framing):
        return
    http = _http(response)
    body = bytearray()
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            body += chunk
            if len(body) >= ERROR_BODY_LIMIT:
                break
    except http.HTTPError:
        pass  # the refusal matters more than the rest of its body
    finally:
        await release(response, chunks)
    raise _refusal(response, framing, provider, bytes(body))


# -- reading a response ----------------------------------------------------------------------


def _tee(tee: Tee, chunk: bytes) -> None:
    try:
        tee(chunk)
    except Exception as exc:  # the caller's own failure (a full disk), not the stream's
        raise Passthrough(exc) from exc


def read_body(response: Response, framing: str, provider: str, tee: Tee | None, checked: bool) -> Iterator[bytes]:
    """The body's bytes, as the consumer asks for them; the response is closed at the end."""
    if not checked:
        check(response, framing, provider)
    http = _http(response)
    try:
        for chunk in response.iter_bytes():
            if tee is not None:
                _tee(tee, chunk)
            yield chunk
    except http.HTTPError as exc:
        raise read_error(exc, response.request, during="reading the response of") from exc
    finally:
        response.close()


async def aread_body(
    response: Response, framing: str, provider: str, tee: Tee | None, checked: bool
) -> AsyncGenerator[bytes, None]:
    """The async twin of ``read_body``."""
    if not checked:
        await acheck(response, framing, provider)
    http = _http(response)
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            if tee is not None:
                _tee(tee, chunk)
            yield chunk
    except http.HTTPError as exc:
        raise read_error(exc, response.request, during="reading the response of") from exc
    finally:
        await release(response, chunks)


def scrubbed(events: Iterator[T], secrets: Sequence[str]) -> Generator[T, None, None]:
    """``events``, with the errors raised while decoding them scrubbed of ``secrets``.

    A provider's in-stream error may echo the request's key (``invalid x-api-key: sk-...``).
    """
    try:
        yield from events
    except StreamkitError as exc:
        _redact.scrub_error(exc, secrets)
        raise


async def ascrubbed(events: AsyncGenerator[T, None], secrets: Sequence[str]) -> AsyncGenerator[T, None]:
    """The async twin of ``scrubbed``; closing it closes ``events``."""
    try:
        async for item in events:
            yield item
    except StreamkitError as exc:
        _redact.scrub_error(exc, secrets)
        raise
    finally:
        await events.aclose()


def _opened(source: Any, provider: str | Decoder, *, sync: bool) -> tuple[Any, list[str]]:
    """What the pipeline reads from ``source``, and the secrets its errors are scrubbed of.

    A response gives its body's bytes, checked first, and its request's secrets; any other
    source is read as it is, with none.
    """
    if _response_library(source) is None:
        return source, []
    read = read_body if sync else aread_body
    try:
        secrets = _redact.secrets(source.request)
    except RuntimeError:  # a response built by hand, without a request: no secrets either
        secrets = []
    return read(source, framing_of(provider), slug_of(provider), None, checked=False), secrets


def iter_events(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Iterator[StreamEvent]:
    """Yield text deltas, each call the moment it completes, and last the ``ResponseEnd``.

    ``source`` is an ``httpx.Response`` or ``httpx2.Response`` opened with ``client.stream(...)``,
    or any iterable of bytes chunks, text lines, SSE events, dicts or SDK event objects.
    """
    items, secrets = _opened(source, provider, sync=True)
    events = _pipeline.iter_events(items, provider, **options)
    return scrubbed(events, secrets) if secrets else events


def aiter_events(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> AsyncIterator[StreamEvent]:
    """The async twin of ``iter_events``; ``source`` may be async or plain."""
    items, secrets = _opened(source, provider, sync=False)
    events = cast(AsyncGenerator[StreamEvent, None], _pipeline.aiter_events(items, provider, **options))
    return ascrubbed(events, secrets) if secrets else events


def iter_tool_calls(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Iterator[ToolCall | InvalidToolCall]:
    """Yield each call, valid or not, the moment its end marker arrives."""
    items, secrets = _opened(source, provider, sync=True)
    calls = _pipeline.iter_tool_calls(items, provider, **options)
    return scrubbed(calls, secrets) if secrets else calls


def aiter_tool_calls(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> AsyncIterator[ToolCall | InvalidToolCall]:
    """The async twin of ``iter_tool_calls``."""
    items, secrets = _opened(source, provider, sync=False)
    calls = cast(
        AsyncGenerator[ToolCall | InvalidToolCall, None], _pipeline.aiter_tool_calls(items, provider, **options)
    )
    return ascrubbed(calls, secrets) if secrets else calls


def collect_turn(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Turn:
    """Read a whole response and return its ``Turn``: text, reasoning, server tools and calls."""
    items, secrets = _opened(source, provider, sync=True)
    try:
        return _pipeline.collect_turn(items, provider, **options)
    except StreamkitError as exc:
        _redact.scrub_error(exc, secrets)
        raise


async def acollect_turn(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Turn:
    """The async twin of ``collect_turn``."""
    items, secrets = _opened(source, provider, sync=False)
    try:
        return await _pipeline.acollect_turn(items, provider, **options)
    except StreamkitError as exc:
        _redact.scrub_error(exc, secrets)
        raise
