"""A source's own exceptions as the errors a stream fails with: one translation for every driver.

A source whose own iteration raises (an SDK's stream raising its ``APIError`` for an error event,
a connection that drops) fails the same way as bad bytes, after the calls completed before: a
failure to read (a connection, a timeout) becomes a ``TransportError``, an SDK's error for a
refused request an ``HTTPStatusError``, anything else the source raised a ``ProviderError``, with
the source's exception as ``__cause__``; the caller's own exception (a ``Passthrough``) goes out
unchanged, and a streamkit error gets what the stream knows.
"""

from __future__ import annotations

import json as jsonlib
from collections.abc import Mapping
from functools import cache
from typing import Any

from ._assembler import Assembler
from ._errors import (
    HTTPStatusError,
    Passthrough,
    ProviderError,
    StreamError,
    StreamkitError,
    TransportError,
)
from ._status import status_error
from .providers import FACTS, Decoder, error_details

__all__ = ("translated",)


def translated(exc: Exception, assembler: Assembler) -> BaseException:
    """What the source's own exception ``exc`` raises in its place, its ``__cause__`` set: the
    caller's exception out of a ``Passthrough``, a streamkit error with what the stream knows, a
    failure to read or an SDK's report as ``_source_failure`` maps it (with ``exc`` as its cause),
    and any other exception (the caller's own, raised in its generator) ``exc`` itself."""
    if isinstance(exc, Passthrough):
        return exc.error
    if isinstance(exc, StreamkitError):
        return _enrich(exc, assembler)
    if not _reports(exc):
        return exc  # the caller's own exception, unchanged
    error = _source_failure(exc, assembler)
    error.__cause__ = exc
    return error


def _enrich(exc: StreamkitError, assembler: Assembler) -> StreamkitError:
    """A streamkit error raised by the source itself (the transport's): add what the stream knows."""
    if isinstance(exc, TransportError | StreamError):
        return assembler.noted(exc)
    return exc


#: Where a failure to read comes from: the HTTP stack under every SDK.
_TRANSPORT_MODULES = frozenset({"httpx", "httpcore", "h11", "h2", "anyio", "aiohttp", "urllib3", "requests", "ssl"})
_TRANSPORT_NAMES = frozenset({"APIConnectionError", "APITimeoutError"})  # openai's and anthropic's


@cache
def _sdk_packages() -> frozenset[str]:
    """The packages of the SDKs whose exceptions report the provider's error (an error event in
    a 200 stream, or a status that is not 2xx): every provider's (its facts'), and those of the
    gateways in front of them. Any other exception a source raises that is no failure to read
    is the caller's own (a ``KeyError`` in its generator): it passes through."""
    return frozenset(
        {package for facts in FACTS.values() for package in facts.sdk_packages}
        | {"groq", "litellm"}  # the gateways'
        | {"httpx_sse", "pydantic_core"}  # an SSE reader refusing the body; an SDK refusing an event's shape
    )


def _reports(exc: Exception) -> bool:
    """Whether the source's exception is a failure to read or the provider's reported error: an
    SDK's, by its package or by the error body or status it carries."""
    return (
        _is_transport(exc)
        or _comes_from(exc, _sdk_packages())
        or any(getattr(exc, name, None) is not None for name in ("body", "status_code", "details"))
    )


def _is_transport(exc: Exception) -> bool:
    return isinstance(exc, OSError | EOFError) or _comes_from(exc, _TRANSPORT_MODULES)


def _comes_from(exc: Exception, packages: frozenset[str]) -> bool:
    return any(
        kind.__name__ in _TRANSPORT_NAMES or kind.__module__.partition(".")[0] in packages for kind in type(exc).__mro__
    )


def _source_failure(exc: Exception, assembler: Assembler) -> StreamkitError:
    """The source's own exception as a streamkit error: a failure to read, or the provider's error.

    SDKs raise their own exception both for an answer that is not 2xx (on the first read: the
    request is sent lazily) and for an error event inside a 200 stream; the HTTP status tells
    them apart.
    """
    error: StreamkitError
    status = _http_status(exc)
    if _is_transport(exc):
        error = TransportError(f"reading the stream failed: {type(exc).__name__}: {exc}")
    elif status is not None and status >= 400:
        error = _refused(exc, status, assembler.decoder_class)
    else:
        kind, message = _reported(exc, assembler.decoder_class)
        error = ProviderError(message, type=kind)
    return _enrich(error, assembler)


def _refused(exc: Exception, status: int, decoder: type[Decoder]) -> HTTPStatusError:
    """An SDK's exception for an answer of ``status``, built as the HTTP edge builds its own, from
    what the SDK keeps of the answer: its response's headers, body, reason and request."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    reason = getattr(response, "reason_phrase", None)
    return status_error(
        status,
        _body(exc, response),
        decoder,
        headers={name.lower(): value for name, value in headers.items()} if isinstance(headers, Mapping) else None,
        reason=reason if isinstance(reason, str) else "",
        request=_request(response),
        reported=_reported(exc, decoder),
    )


def _body(exc: Exception, response: Any) -> bytes:
    """The answer's body: the bytes the SDK's response read, else the error body the SDK parsed
    (openai, anthropic: ``body``; google-genai: ``details``), as JSON."""
    try:
        content = getattr(response, "content", None)
    except Exception:  # httpx's ResponseNotRead: a streamed body the SDK left unread
        content = None
    if isinstance(content, bytes):
        return content
    for parsed in (getattr(exc, "body", None), getattr(exc, "details", None)):
        if isinstance(parsed, str):
            return parsed.encode()
        if isinstance(parsed, Mapping | list):
            return jsonlib.dumps(parsed, default=str).encode()
    return b""


def _request(response: Any) -> Any:
    """The request the SDK's response answers, when it is httpx's or httpx2's: what is named in the
    message, and whose secrets are scrubbed."""
    try:
        request = getattr(response, "request", None)
    except RuntimeError:  # httpx: a response made without its request
        return None
    return request if type(request).__module__.partition(".")[0] in ("httpx", "httpx2") else None


def _http_status(exc: Exception) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        status = getattr(holder, "status_code", None)
        if type(status) is int:
            return status
    return None


def _reported(exc: Exception, decoder: type[Decoder]) -> tuple[str | None, str]:
    """The provider's error type and message, from the error body an SDK exception carries
    (openai, anthropic: ``body``; google-genai: ``details``), else from the exception itself."""
    for body in (getattr(exc, "body", None), getattr(exc, "details", None)):
        kind, message = error_details(body, decoder)
        if message is not None:
            return kind, message
    kind = getattr(exc, "type", None) or getattr(exc, "status", None)
    message = getattr(exc, "message", None)
    text = message if isinstance(message, str) and message else str(exc) or type(exc).__name__
    return (kind if isinstance(kind, str) else None), text
