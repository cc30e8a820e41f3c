"""Checking an httpx or httpx2 response and reading its body, for the iterators and the client.

The response is checked before its body is decoded: a non-2xx status raises ``HTTPStatusError``
with the provider's error type and message, and a 2xx answer whose content type is not one of
the decoder's ``content_types`` (an HTML error page from a proxy) raises ``TransportError``.
The library's errors while reading become ``TransportError`` (its error as ``__cause__``). The
body is read only as the consumer asks for it: nothing is buffered ahead.

The two libraries have the same shape; which one an object comes from is read from its class,
through ``sys.modules``: neither is ever imported here, so ``import streamkit`` pays for no
HTTP client, and a program that uses one never loads the other.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias

from . import _redact
from ._errors import Passthrough, TransportError
from ._libraries import library
from ._status import status_error
from .providers import Decoder, decoder_for

if TYPE_CHECKING:
    import httpx
    import httpx2

    Response: TypeAlias = httpx.Response | httpx2.Response
    Request: TypeAlias = httpx.Request | httpx2.Request

__all__ = (
    "ERROR_BODY_LIMIT",
    "Tee",
    "acheck",
    "aread_body",
    "check",
    "decoder_of",
    "read_body",
    "read_error",
    "refusal",
    "release",
)

#: How much of an error body is read.
ERROR_BODY_LIMIT = 64 * 1024

Tee = Callable[[bytes], object]


def decoder_of(provider: str | Decoder) -> type[Decoder]:
    """The class of ``provider``'s decoder, whose facts (content types, error shape) apply."""
    if isinstance(provider, Decoder):
        return type(provider)
    return decoder_for(provider)


def _accepted(response: Response, decoder: type[Decoder]) -> bool:
    """A 2xx answer in one of the decoder's content types: its body can be decoded."""
    if not response.is_success:
        return False
    content_type = response.headers.get("content-type", "").lower()
    return any(kind in content_type for kind in decoder.content_types)


def refusal(response: Response, decoder: type[Decoder], body: bytes) -> TransportError:
    """The error for a response that ``_accepted`` refused, with the start of its body.

    Only the first ``ERROR_BODY_LIMIT`` bytes count, however many were read.
    """
    body = body[:ERROR_BODY_LIMIT]
    if not response.is_success:
        return status_error(
            response.status_code,
            body,
            decoder,
            headers=response.headers,
            reason=response.reason_phrase,
            request=response.request,
        )
    expected = decoder.content_types
    content_type = response.headers.get("content-type", "")
    hint = " (Gemini streams SSE only with alt=sse in the URL)" if "json" in content_type else ""
    excerpt = _redact.excerpt(body, _redact.secrets(response.request))
    return TransportError(
        f"{decoder.slug} streams {' or '.join(expected)}, but {_redact.where(response.request)} answered "
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


@contextlib.contextmanager
def _refusing(response: Response, decoder: type[Decoder]) -> Iterator[bytearray]:
    """Gather the start of a refused body into the ``bytearray`` given, then raise the refusal.

    Both twins read the body their own way; what they keep, and that an error of the library
    while reading it is dropped (the refusal matters more than the rest of its body), is here.
    """
    body = bytearray()
    with contextlib.suppress(_http(response).HTTPError):
        yield body
    raise refusal(response, decoder, bytes(body))


def _full(body: bytearray, chunk: bytes) -> bool:
    """Add ``chunk``; true once a refusal has all of the body it quotes."""
    body += chunk
    return len(body) >= ERROR_BODY_LIMIT


def check(response: Response, decoder: type[Decoder]) -> None:
    """Return if the response can be decoded; else close it and raise why, with its body's start."""
    if _accepted(response, decoder):
        return
    with _refusing(response, decoder) as body:
        try:
            for chunk in response.iter_bytes():
                if _full(body, chunk):
                    break
        finally:
            response.close()


async def acheck(response: Response, decoder: type[Decoder]) -> None:
    """The async twin of ``check``."""
    if _accepted(response, decoder):
        return
    with _refusing(response, decoder) as body:
        chunks = response.aiter_bytes()
        try:
            async for chunk in chunks:
                if _full(body, chunk):
                    break
        finally:
            await release(response, chunks)


# -- reading a response ----------------------------------------------------------------------


def _teed(tee: Tee | None, chunk: bytes) -> bytes:
    """``chunk``, after ``tee`` got it."""
    if tee is not None:
        try:
            tee(chunk)
        except Exception as exc:  # the caller's own failure (a full disk), not the stream's
            raise Passthrough(exc) from exc
    return chunk


@contextlib.contextmanager
def _reading(response: Response) -> Iterator[None]:
    """The library's errors while the body is read, as streamkit's: one mapping for both twins."""
    http = _http(response)  # looked up on entry: the lookup may fail once the interpreter is closing
    try:
        yield
    except http.HTTPError as exc:
        raise read_error(exc, response.request, during="reading the response of") from exc


def read_body(response: Response, decoder: type[Decoder], tee: Tee | None, checked: bool) -> Iterator[bytes]:
    """The body's bytes, as the consumer asks for them; the response is closed at the end."""
    if not checked:
        check(response, decoder)
    try:
        with _reading(response):
            for chunk in response.iter_bytes():
                yield _teed(tee, chunk)
    finally:
        response.close()


async def aread_body(
    response: Response, decoder: type[Decoder], tee: Tee | None, checked: bool
) -> AsyncGenerator[bytes, None]:
    """The async twin of ``read_body``."""
    if not checked:
        await acheck(response, decoder)
    chunks = response.aiter_bytes()
    try:
        with _reading(response):
            async for chunk in chunks:
                yield _teed(tee, chunk)
    finally:
        await release(response, chunks)
