"""The whole exception tree of streamkit.

::

    StreamkitError
    ├── StreamError                 the stream cannot be turned into calls; iteration stops
    │   ├── FramingError            bytes -> frames (offset, excerpt)
    │   ├── ProviderProtocolError   frames -> events, or an illegal order of events
    │   ├── ProviderError           the provider reported an error inside the stream
    │   ├── IncompleteStreamError   the input ended before the provider's end-of-stream marker
    │   └── LimitExceededError      the stream went past one of the ``Limits`` (limit, value)
    ├── TransportError              raised only at the transport edge
    │   └── HTTPStatusError         a non-2xx answer
    └── UsageError                  caller misuse: unknown provider, bad option (also ValueError)

Bad *arguments* are never exceptions: they come out as ``InvalidToolCall`` values that can be
sent back to the model. Exceptions carry keyword attributes and build their message from them.
This module imports nothing from streamkit, so every stage can use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ._types import InvalidToolCall

__all__ = (
    "FramingError",
    "HTTPStatusError",
    "IncompleteStreamError",
    "LimitExceededError",
    "ProviderError",
    "ProviderProtocolError",
    "StreamError",
    "StreamkitError",
    "TransportError",
    "UsageError",
)


class StreamkitError(Exception):
    """Base of every error streamkit raises."""


class StreamError(StreamkitError):
    """The stream cannot be turned into calls; the calls completed before it were delivered.

    ``unfinished`` holds the calls that were open when the stream failed, as invalid calls
    with their raw argument text, so nothing the model sent is lost.
    """

    unfinished: tuple[InvalidToolCall, ...] = ()
    provider: str | None = None


class FramingError(StreamError):
    """The bytes are not a valid frame stream (SSE, NDJSON or AWS event-stream)."""

    def __init__(self, message: str, *, offset: int | None = None, excerpt: str | None = None) -> None:
        self.offset = offset
        self.excerpt = excerpt
        where = "" if offset is None else f" at byte {offset}"
        shown = "" if excerpt is None else f" near {excerpt!r}"
        super().__init__(f"{message}{where}{shown}")

    def __str__(self) -> str:
        text = super().__str__()
        return f"{self.provider}: {text}" if self.provider else text

    @classmethod
    def not_utf8(cls, data: bytes, error: UnicodeDecodeError, *, line_start: int, line_end: int, offset: int) -> Self:
        """Bytes of ``data`` that are not UTF-8, shown in hex (``<0xE9>``) amid the text of their line.

        The excerpt never cuts a character in two: what is shown as hex is really not UTF-8.
        """
        start = max(error.start - 20, line_start)
        end = min(error.end + 4, line_end)
        while start < error.start and 0x80 <= data[start] < 0xC0:  # inside a character
            start += 1
        while end < line_end and 0x80 <= data[end] < 0xC0:
            end += 1
        return cls("the stream is not valid UTF-8", offset=offset, excerpt=_hex_escaped(data[start:end]))


def _hex_escaped(data: bytes) -> str:
    """``data`` decoded, each byte that is not UTF-8 written ``<0xNN>`` (never U+FFFD)."""
    parts: list[str] = []
    while data:
        try:
            parts.append(data.decode("utf-8"))
            break
        except UnicodeDecodeError as exc:
            parts.append(data[: exc.start].decode("utf-8"))
            parts.extend(f"<0x{byte:02X}>" for byte in data[exc.start : exc.end])
            data = data[exc.end :]
    return "".join(parts)


class ProviderProtocolError(StreamError):
    """A frame or a sequence of events breaks the provider's protocol.

    ``state`` is the call's state in the accumulator's table (``"IDLE"``, ``"DELIVERED"``…), or
    the block's in the turn stage's, when the error is an event the table has no entry for in
    that state, else ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        index: int | None = None,
        event: str | None = None,
        state: str | None = None,
    ) -> None:
        self.provider = provider
        self.index = index
        self.event = event
        self.state = state
        self.detail = message
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [p for p in (self.provider, self.event and f"event {self.event!r}") if p]
        if self.index is not None:
            parts.append(f"call index {self.index}")
        prefix = f"{', '.join(parts)}: " if parts else ""
        return f"{prefix}{self.detail}"

    def __str__(self) -> str:
        return self._render()


#: Words in an in-stream error's type that mark it worth retrying (compared lower-case, letters
#: only): rate limits, overloads, server and internal errors (Anthropic's ``api_error``), outages.
_RETRYABLE_TYPES = (
    "ratelimit",
    "throttl",
    "resourceexhausted",
    "toomanyrequests",
    "overload",
    "server",
    "internal",
    "apierror",
    "unavailable",
)


class ProviderError(StreamError):
    """The provider reported an error inside the stream (``event: error``, an error chunk).

    ``retryable`` is true when its ``type`` names a rate limit, an overload, a server or
    internal error or an outage (``overloaded_error``, ``rate_limit_exceeded``,
    ``RESOURCE_EXHAUSTED``, ``throttlingException``, ``UNAVAILABLE``...).
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        type: str | None = None,  # noqa: A002 - the provider's own field name
        unfinished: tuple[InvalidToolCall, ...] = (),
    ) -> None:
        self.provider = provider
        self.type = type
        self.message = message
        self.unfinished = unfinished
        super().__init__(message)

    @property
    def retryable(self) -> bool:
        kind = "".join(ch for ch in (self.type or "").lower() if ch.isalnum())
        return any(word in kind for word in _RETRYABLE_TYPES)

    def __str__(self) -> str:
        kind = f" {self.type}" if self.type else ""
        who = self.provider or "provider"
        return f"{who} reported an error{kind}: {self.message}"


class IncompleteStreamError(StreamError):
    """The input ended before the provider's end-of-stream marker."""

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        unfinished: tuple[InvalidToolCall, ...] = (),
    ) -> None:
        self.provider = provider
        self.message = message
        self.unfinished = unfinished
        super().__init__(message)

    def __str__(self) -> str:
        who = f"{self.provider}: " if self.provider else ""
        open_calls = f" ({len(self.unfinished)} call(s) unfinished)" if self.unfinished else ""
        return f"{who}{self.message}{open_calls}"


class LimitExceededError(StreamError):
    """The stream went past one of the ``Limits``: it is stopped before it can grow any further.

    Attributes:
        limit: the name of the limit (``max_argument_bytes``, ``max_open_calls``, ``max_calls``,
            ``max_choices``, ``max_event_bytes``), as in ``streamkit.Limits``.
        value: the limit's value in force.
        index: the call index concerned, where there is one.
    """

    def __init__(
        self,
        message: str,
        *,
        limit: str,
        value: int,
        provider: str | None = None,
        index: int | None = None,
    ) -> None:
        self.limit = limit
        self.value = value
        self.provider = provider
        self.index = index
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        who = f"{self.provider}: " if self.provider else ""
        call = f"call index {self.index}: " if self.index is not None else ""
        return f"{who}{call}{self.message}: limit {self.limit}={self.value}"


class TransportError(StreamkitError):
    """The HTTP exchange failed; raised only by the HTTP edge, the httpx or httpx2 error as ``__cause__``.

    When the connection failed in the middle of a stream, the calls completed before were
    delivered, and ``unfinished`` holds the calls that were still open, with their raw text.
    Messages never carry credentials: header values and ``key=`` URL parameters are redacted.
    """

    unfinished: tuple[InvalidToolCall, ...] = ()
    provider: str | None = None


class HTTPStatusError(TransportError):
    """The server answered with a non-2xx status.

    ``error_type`` and ``error_message`` are the provider's own, read from its JSON error body
    when it has one; ``body_excerpt`` is the start of the body; ``headers`` are the response's
    (``x-request-id`` and the rate-limit headers are there). ``retry_after`` is the wait the
    server asked for, in seconds, from ``retry-after-ms`` or ``Retry-After`` (seconds or an
    HTTP-date), None when it asked for none; ``retryable`` is true for 408, 409, 429 and 5xx.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        body_excerpt: str = "",
        error_type: str | None = None,
        error_message: str | None = None,
        headers: Mapping[str, str] | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.status_code = status_code
        self.body_excerpt = body_excerpt
        self.error_type = error_type
        self.error_message = error_message
        self.headers: Mapping[str, str] = {} if headers is None else headers
        self.retry_after = retry_after
        super().__init__(message)

    @property
    def retryable(self) -> bool:
        return self.status_code in (408, 409, 429) or 500 <= self.status_code <= 599


class Passthrough(Exception):
    """The caller's own exception, raised inside a source (a ``tee``), on its way out unchanged.

    The pipeline turns what a source's iteration raises into a streamkit error; a callback of the
    caller's failing is not the stream failing, so its exception is carried past that and re-raised.
    """

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


class UsageError(StreamkitError, ValueError):
    """The caller misused the API: an unknown provider slug, a bad option value."""
