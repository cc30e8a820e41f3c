"""Re-emitting a streamed response in its own provider's format, canonical: the transports' core.

Bytes of one response go in; out come the same provider's bytes in which every tool call is
written once, whole, at its end marker, with a distinct index, its id, name and arguments. The
frames are cut by streamkit's framers and fed to the pipeline (``Assembler``), which says which
calls each frame completed and whether each is valid; the provider's encoder
(``_encoders``) then writes those calls and the frame itself with its call fragments taken out.

Every other frame is written back as it came (its ``event:`` and ``data:``, not its comments or
``id:`` lines): the pipeline keeps no response id, model name, sequence number or usage field
it does not need, and re-encoding the response from the values would lose them, so only the
call events are replaced. What an SDK reads besides the calls (text and reasoning as they
arrive, signatures, opaque items, stop reason, usage) is therefore exactly what the provider sent.

Invalid calls stay invalid: a call cut off is written with its raw text and without its end,
next to the provider's own truncation signal (``max_tokens``, ``length``, ``response.incomplete``,
``MAX_TOKENS``); an invalid call keeps its raw text. When the provider reports an error in the
stream, the calls completed before it are written, then those it cut (raw, unended), then the
error frame as it came, and the rest of the stream passes through untouched: the SDK raises its
own exception. When the stream cannot
be decoded (a protocol error, a limit passed) or ends with a call still open and nothing from the
provider saying so, the calls completed before it are written and the body then fails, as a
connection cut in the middle does; the transport shell raises its library's
``RemoteProtocolError`` with the streamkit error as its cause.

Nothing here does IO or imports an HTTP library: ``Session`` is sans-IO, and ``reemit`` and
``areemit`` drive it over the chunks of a response body for the transport shells (``_shell``).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Generator, Iterable, Mapping
from typing import Any

from .._detect import HEAD_BYTES, detect_provider
from .._errors import IncompleteStreamError, ProviderError, StreamError, UsageError
from .._events import Frame
from .._limits import DEFAULT_LIMITS, Limits
from .._ndjson import NDJSONDecoder
from .._pipeline import Assembler
from .._sse import SSEDecoder
from .._types import PROVIDERS, InvalidToolCall, Provider, ToolCall
from .._validate import Toolset, as_toolset
from ._encoders import ENCODERS
from ._encoders._base import Call

__all__ = ("OnCall", "Options", "Session", "areemit", "kept_headers", "path_provider", "reemit")

#: ``on_call(call)``: a plain function, or (for the async transports) a coroutine function.
OnCall = Callable[[ToolCall | InvalidToolCall], Any]

#: Request paths that name the provider when the stream's first events do not.
_PATHS = (
    ("/chat/completions", "openai_chat"),
    ("/responses", "openai_responses"),
    ("/messages", "anthropic"),
    (":streamGenerateContent", "gemini"),
    ("/v2/chat", "cohere"),
    ("/api/chat", "ollama"),
)
_STREAM_TYPES = ("text/event-stream", "application/x-ndjson")


def path_provider(path: str) -> str | None:
    """The provider whose API has this request path, if any."""
    return next((slug for suffix, slug in _PATHS if path.endswith(suffix)), None)


def _reemittable(name: str | None) -> Provider | None:
    """``name`` as the slug of a provider the transports re-emit, else ``None``."""
    return next((slug for slug in PROVIDERS if slug == name and slug in ENCODERS), None)


def kept_headers(raw: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """A re-emitted response's headers: the same, without a ``Content-Length`` the new body would break."""
    return [(name, value) for name, value in raw if name.lower() != b"content-length"]


class Options:
    """A transport's options, checked once, when it is made."""

    def __init__(
        self,
        provider: Provider | None,
        tools: Toolset | Iterable[Any] | Mapping[str, Any] | None,
        on_call: OnCall | None,
        limits: Limits | None,
        *,
        asynchronous: bool,
    ) -> None:
        if provider is not None and provider not in ENCODERS:
            known = ", ".join(sorted(ENCODERS))
            raise UsageError(f"the transport cannot re-emit provider {provider!r}; it can: {known}")
        if limits is not None and not isinstance(limits, Limits):
            raise UsageError(f"limits must be a streamkit.Limits, got {type(limits).__name__}")
        if on_call is not None and not callable(on_call):
            raise UsageError(f"on_call must be callable, got {type(on_call).__name__}")
        if on_call is not None and not asynchronous and inspect.iscoroutinefunction(on_call):
            raise UsageError("on_call is a coroutine function: use AsyncTransport, or a plain function")
        self.provider = provider
        self.toolset = None if tools is None else as_toolset(tools)
        self.on_call = on_call
        self.limits = DEFAULT_LIMITS if limits is None else limits

    def session(self, path: str, status: int, headers: Mapping[str, str]) -> Session | None:
        """A session for a response to re-emit, or ``None`` for one to pass through untouched.

        Only a successful streamed body in the provider's own framing is re-emitted; a body
        with a ``Content-Encoding`` is passed through, since its bytes are not the stream's.
        """
        kind = headers.get("content-type", "").lower()
        if not 200 <= status < 300 or not any(name in kind for name in _STREAM_TYPES):
            return None
        if headers.get("content-encoding", "identity").lower() not in ("", "identity"):
            return None
        return Session(self.provider, path, self.toolset, self.limits)


class Session:
    """One response: bytes in (``feed``, ``flush``), the re-emitted bytes out.

    Without a provider, the first bytes are held until ``detect_provider`` names one (as
    ``streamkit replay --provider auto`` does), or ``HEAD_BYTES`` were read; then the request
    path decides; a stream neither names is passed through untouched.

    Attributes:
        calls: the calls completed since the driver last took them, for ``on_call``.
        failure: the error that ended the body, once there is one (nothing is re-emitted after).
    """

    def __init__(self, provider: Provider | None, path: str, toolset: Toolset | None, limits: Limits) -> None:
        self._path = path
        self._toolset = toolset
        self._limits = limits
        self._head = bytearray()
        self._decided = False
        self.provider: Provider | None = None
        self._passing = False  # no provider: the bytes go through untouched
        self._after_error = False  # the provider reported an error: the rest goes through as it came
        self.calls: list[Call] = []
        self.failure: StreamError | None = None
        if provider is not None:
            self._start(provider)

    def feed(self, chunk: bytes) -> bytes:
        if self.failure is not None:
            return b""
        if not self._decided:
            self._head += chunk
            slug = detect_provider(bytes(self._head))
            if slug is None and len(self._head) < HEAD_BYTES:
                return b""
            self._start(slug or path_provider(self._path))
            chunk, self._head = bytes(self._head), bytearray()
        if self._passing:
            return chunk
        try:
            frames = self._framer.feed(chunk)
        except StreamError as exc:
            self.failure = exc
            return b""
        return self._frames(frames)

    def flush(self) -> bytes:
        """The end of the body: what is left to write (``failure`` is set if the stream was cut)."""
        out = b""
        if not self._decided:
            self._start(detect_provider(bytes(self._head)) or path_provider(self._path))
            out, self._head = self.feed(bytes(self._head)), bytearray()
        if self._passing or self.failure is not None:
            return out
        try:
            frames = self._framer.flush()
        except StreamError as exc:
            self.failure = exc
            return out
        out += self._frames(frames)
        if self.failure is not None or self._after_error:
            return out
        try:
            values = self._assembler.flush()
        except IncompleteStreamError as exc:
            if exc.unfinished:  # a call was open when the body ended: it was cut, and nothing says so
                self.failure = exc
            return out
        except StreamError as exc:
            self.failure = exc
            return out
        if self._take(values):
            self.failure = IncompleteStreamError("calls completed after the last frame", provider=self.provider)
        return out

    def _start(self, name: str | None) -> None:
        self._decided = True
        provider = _reemittable(name)
        if provider is None:
            self._passing = True
            return
        self.provider = provider
        self._assembler = Assembler(provider, limits=self._limits, tools=self._toolset)
        self._encoder = ENCODERS[provider]()
        framer = SSEDecoder if self._encoder.framing == "sse" else NDJSONDecoder
        self._framer = framer(max_event_bytes=self._limits.max_event_bytes)

    def _frames(self, frames: list[Frame]) -> bytes:
        out: list[bytes] = []
        for frame in frames:
            if self._after_error:
                out.append(self._encoder.write(frame))
                continue
            error: StreamError | None
            try:
                values = self._assembler.feed_frame(frame)
            except StreamError as exc:
                values, error = [], exc
            else:
                error = self._assembler.error
            calls = self._take(values)
            if isinstance(error, ProviderError):
                calls += error.unfinished  # cut by the error: written as they were, raw, unended
            try:
                out += self._encoder.frame(frame, calls)
            except StreamError as exc:
                error = exc
            if isinstance(error, ProviderError):
                self._after_error = True
            elif error is not None:
                if error.provider is None:
                    error.provider = self.provider
                self.failure = error
                break
        return b"".join(out)

    def _take(self, values: Iterable[object]) -> list[Call]:
        calls = [value for value in values if isinstance(value, ToolCall | InvalidToolCall)]
        self.calls += calls
        return calls


def reemit(
    chunks: Iterable[bytes], session: Session, on_call: OnCall | None, error: Callable[[str], Exception]
) -> Generator[bytes, None, None]:
    """The re-emitted body: ``on_call`` sees each call before the bytes that hold it are yielded."""
    iterator = iter(chunks)
    try:
        for chunk in iterator:
            out = session.feed(chunk)
            _report(session, on_call)
            if out:
                yield out
            _check(session, error)
    finally:  # the inner body's own generator, closed however this one ends
        close = getattr(iterator, "close", None)
        if close is not None:
            close()
    out = session.flush()
    _report(session, on_call)
    if out:
        yield out
    _check(session, error)


async def areemit(
    chunks: AsyncIterable[bytes], session: Session, on_call: OnCall | None, error: Callable[[str], Exception]
) -> AsyncGenerator[bytes, None]:
    """The async twin of ``reemit``; an ``on_call`` that returns an awaitable is awaited."""
    iterator = aiter(chunks)
    try:
        async for chunk in iterator:
            out = session.feed(chunk)
            await _areport(session, on_call)
            if out:
                yield out
            _check(session, error)
    finally:  # as above: trio warns about an async generator left unfinished
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()
    out = session.flush()
    await _areport(session, on_call)
    if out:
        yield out
    _check(session, error)


def _report(session: Session, on_call: OnCall | None) -> None:
    calls, session.calls = session.calls, []
    if on_call is not None:
        for call in calls:
            on_call(call)


async def _areport(session: Session, on_call: OnCall | None) -> None:
    calls, session.calls = session.calls, []
    if on_call is not None:
        for call in calls:
            result = on_call(call)
            if inspect.isawaitable(result):
                await result


def _check(session: Session, error: Callable[[str], Exception]) -> None:
    if session.failure is not None:
        raise error(f"streamkit stopped the stream: {session.failure}") from session.failure
