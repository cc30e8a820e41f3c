"""The composer: bytes -> frames -> provider events -> accumulator -> normalizer -> values.

``Assembler`` wires the stages for one response and is itself sans-IO (``feed``/``flush``);
``iter_events``/``aiter_events`` drive it over any iterable of bytes, and
``iter_tool_calls``/``aiter_tool_calls`` keep only the calls. Stages never call each other:
this module hands each stage's output to the next, the moment it appears, so a call is
delivered as soon as its end marker has been read.

Errors are enriched here, at the boundary: the provider slug, and the raw text of every call
still open when the stream failed.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol

from ._accumulator import Accumulator
from ._awsstream import EventStreamDecoder
from ._errors import IncompleteStreamError, StreamError, UsageError
from ._events import TURN_EVENTS, Frame, RawCall, ResponseEnded, TextReceived
from ._ndjson import NDJSONDecoder
from ._normalize import normalize
from ._sse import DEFAULT_MAX_EVENT_BYTES, SSEDecoder
from ._turn import TurnStage
from ._types import InvalidToolCall, ResponseEnd, StreamEvent, TextDelta, ToolCall, Turn
from ._validate import Toolset, as_toolset
from .providers import DECODERS, Decoder

__all__ = (
    "Assembler",
    "ByteSource",
    "aiter_events",
    "acollect_turn",
    "aiter_tool_calls",
    "collect_turn",
    "iter_events",
    "iter_tool_calls",
)

ByteSource = Iterable[bytes] | AsyncIterable[bytes]


class _Framer(Protocol):
    def feed(self, chunk: bytes) -> list[Frame]: ...
    def flush(self) -> list[Frame]: ...


_FRAMERS: dict[str, Callable[..., _Framer]] = {
    "sse": SSEDecoder,
    "ndjson": NDJSONDecoder,
    "eventstream": EventStreamDecoder,
}


class Assembler:
    """Turns one response's bytes into text, completed calls and the end, with no IO.

    ``feed`` returns the values the bytes complete; ``flush`` marks the end of input. When the
    stream fails, the values completed before the failure are returned and the error is kept
    in ``error`` and raised by the next call, so no completed call is ever lost to an error.

    Args:
        provider: a slug from ``streamkit.providers.DECODERS``, or a decoder instance.
        early_close: for providers without per-call end markers (OpenAI Chat and its kin),
            end a call as soon as the next call of its choice starts.
        max_event_bytes: the largest frame buffered before its end arrives.
        tools: the tools sent to the provider (any format ``Toolset`` reads, or a ``Toolset``):
            each completed call is then checked against its tool's schema.
    """

    def __init__(
        self,
        provider: str | Decoder,
        *,
        early_close: bool = False,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        tools: Toolset | Iterable[Any] | Mapping[str, Any] | None = None,
    ) -> None:
        self._toolset = None if tools is None else as_toolset(tools)
        self._decoder = _make_decoder(provider, early_close=early_close)
        self.provider = self._decoder.slug
        self._framer = _FRAMERS[self._decoder.framing](max_event_bytes=max_event_bytes)
        self._accumulator = Accumulator(self.provider)
        self._turn = TurnStage(self.provider)
        self.error: StreamError | None = None

    @property
    def finished(self) -> bool:
        """True once the provider's end-of-stream marker was read: later input is ignored."""
        return self._accumulator.finished

    def feed(self, data: bytes) -> list[StreamEvent]:
        return self._guard(lambda out: self._frames(self._framer.feed(data), out))

    def feed_frame(self, frame: Frame) -> list[StreamEvent]:
        """Feed a frame that was already cut from the bytes (an SSE event from httpx-sse)."""
        return self._guard(lambda out: self._frames((frame,), out))

    def feed_payload(self, payload: Any, event: str | None = None) -> list[StreamEvent]:
        """Feed one already-decoded event payload (a dict made from an SDK's event object)."""
        return self._guard(lambda out: self._events(self._decoder.feed_payload(payload, event), out))

    def flush(self) -> list[StreamEvent]:
        """End of input: raises ``IncompleteStreamError`` if the end-of-stream marker is missing."""

        def finish(out: list[StreamEvent]) -> None:
            self._frames(self._framer.flush(), out)
            self._events(self._decoder.flush(), out)
            if not self._accumulator.finished:
                raise IncompleteStreamError(
                    "the stream ended before the provider's end-of-stream marker", provider=self.provider
                )

        return self._guard(finish)

    def _guard(self, step: Callable[[list[StreamEvent]], None]) -> list[StreamEvent]:
        if self.error is not None:
            raise self.error
        out: list[StreamEvent] = []
        if self._accumulator.finished:
            return out
        try:
            step(out)
        except StreamError as exc:
            self._fail(exc)
            if not out:
                raise
        return out

    def _frames(self, frames: Iterable[Frame], out: list[StreamEvent]) -> None:
        decode = self._decoder.feed
        for frame in frames:
            self._events(decode(frame), out)
            if self._accumulator.finished:
                return

    def _events(self, events: Iterable[Any], out: list[StreamEvent]) -> None:
        feed = self._accumulator.feed
        for event in events:
            for item in feed(event):  # usually empty: no generator per event
                if type(item) in TURN_EVENTS:  # reasoning, signatures, server tools
                    out += self._turn.feed(item)  # type: ignore[arg-type]
                    continue
                if type(item) is ResponseEnded:
                    out += self._turn.close()
                out.append(self._finish(item))  # type: ignore[arg-type]

    def _finish(self, item: RawCall | TextReceived | ResponseEnded) -> StreamEvent:
        if type(item) is RawCall:
            call = normalize(item)
            return call if self._toolset is None else self._toolset.validate(call, raw=item.arguments)
        if type(item) is TextReceived:
            return TextDelta(item.text, choice=item.choice)
        return ResponseEnd(self._accumulator.stop_reason, self._accumulator.usage)

    def _fail(self, exc: StreamError) -> None:
        if exc.provider is None:
            exc.provider = self.provider
        if not exc.unfinished:
            exc.unfinished = tuple(_as_invalid(normalize(raw)) for raw in self._accumulator.drain_open())
        self.error = exc


def _as_invalid(call: ToolCall | InvalidToolCall) -> InvalidToolCall:
    assert isinstance(call, InvalidToolCall)  # drained calls are always marked truncated
    return call


def _make_decoder(provider: str | Decoder, *, early_close: bool) -> Decoder:
    if isinstance(provider, Decoder):
        return provider
    cls = DECODERS.get(provider)
    if cls is None:
        known = ", ".join(sorted(DECODERS))
        raise UsageError(f"unknown provider {provider!r}; known providers: {known}")
    if early_close and not cls.supports_early_close:
        raise UsageError(f"early_close is for providers without per-call end markers, not {provider!r}")
    return cls(early_close=early_close)


def _check_chunk(chunk: object) -> bytes:
    if isinstance(chunk, bytes | bytearray | memoryview):
        return bytes(chunk)
    raise UsageError(f"the source must yield bytes, got {type(chunk).__name__}")


def iter_events(source: Iterable[bytes], provider: str | Decoder, **options: Any) -> Iterator[StreamEvent]:
    """Yield text deltas, each call the moment it completes, and last the ``ResponseEnd``."""
    assembler = Assembler(provider, **options)
    for chunk in source:
        yield from assembler.feed(_check_chunk(chunk))
        if assembler.error is not None:
            raise assembler.error
        if assembler.finished:
            break
    yield from assembler.flush()
    if assembler.error is not None:
        raise assembler.error


async def aiter_events(source: ByteSource, provider: str | Decoder, **options: Any) -> AsyncIterator[StreamEvent]:
    """The async twin of ``iter_events``; ``source`` may be an async or a plain iterable."""
    assembler = Assembler(provider, **options)
    async for chunk in _aiter(source):
        for item in assembler.feed(_check_chunk(chunk)):
            yield item
        if assembler.error is not None:
            raise assembler.error
        if assembler.finished:
            break
    for item in assembler.flush():
        yield item
    if assembler.error is not None:
        raise assembler.error


def iter_tool_calls(
    source: Iterable[bytes], provider: str | Decoder, **options: Any
) -> Iterator[ToolCall | InvalidToolCall]:
    """Yield each call, valid or not, the moment its end marker arrives."""
    for item in iter_events(source, provider, **options):
        if isinstance(item, ToolCall | InvalidToolCall):
            yield item


async def aiter_tool_calls(
    source: ByteSource, provider: str | Decoder, **options: Any
) -> AsyncIterator[ToolCall | InvalidToolCall]:
    """The async twin of ``iter_tool_calls``."""
    async for item in aiter_events(source, provider, **options):
        if isinstance(item, ToolCall | InvalidToolCall):
            yield item


def collect_turn(source: Iterable[bytes], provider: str | Decoder, **options: Any) -> Turn:
    """Read a whole response and return its ``Turn``: text, reasoning, server tools and calls.

    A stream that fails raises, as ``iter_events`` does: a turn is only ever built whole.
    """
    slug = provider if isinstance(provider, str) else provider.slug
    return Turn.from_events(iter_events(source, provider, **options), slug)


async def acollect_turn(source: ByteSource, provider: str | Decoder, **options: Any) -> Turn:
    """The async twin of ``collect_turn``."""
    slug = provider if isinstance(provider, str) else provider.slug
    return Turn.from_events([item async for item in aiter_events(source, provider, **options)], slug)


async def _aiter(source: ByteSource) -> AsyncIterator[bytes]:
    if isinstance(source, AsyncIterable):
        iterator = aiter(source)
        try:
            async for chunk in iterator:
                yield chunk
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()
    else:
        for chunk in source:
            yield chunk
