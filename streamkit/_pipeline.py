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

from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from typing import Any, Protocol

from ._accumulator import Accumulator, PreviewingAccumulator
from ._errors import IncompleteStreamError, StreamError, UsageError
from ._events import Frame, RawCall, RawPreview, ResponseEnded, TextReceived
from ._normalize import normalize
from ._preview import NO_PREVIEW, PartialJSON
from ._sse import DEFAULT_MAX_EVENT_BYTES, SSEDecoder
from ._types import ArgumentsPreview, InvalidToolCall, ResponseEnd, StreamEvent, TextDelta, ToolCall
from .providers import DECODERS, Decoder

__all__ = (
    "Assembler",
    "ByteSource",
    "aiter_events",
    "aiter_tool_calls",
    "iter_events",
    "iter_tool_calls",
)

ByteSource = Iterable[bytes] | AsyncIterable[bytes]


class _Framer(Protocol):
    def feed(self, chunk: bytes) -> list[Frame]: ...
    def flush(self) -> list[Frame]: ...


_FRAMERS: dict[str, Callable[..., _Framer]] = {"sse": SSEDecoder}


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
        previews: also yield an ``ArgumentsPreview`` of each call's arguments while they
            stream (see ``streamkit._preview`` for what a preview shows). The call itself is
            unchanged: parsed once, strictly, at its end marker.
        preview_every: with ``previews``, the fewest new characters of a call's arguments
            between two previews (default 1: every fragment).
        preview_growth: with ``previews``, the least factor by which the arguments must grow
            between two previews (default 1.0). Above 1 the previews of a call cost time in
            proportion to its arguments; at 1.0 with a small ``preview_every``, in proportion
            to their square.
    """

    def __init__(
        self,
        provider: str | Decoder,
        *,
        early_close: bool = False,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        previews: bool = False,
        preview_every: int | None = None,
        preview_growth: float | None = None,
    ) -> None:
        self._decoder = _make_decoder(provider, early_close=early_close)
        self.provider = self._decoder.slug
        self._framer = _FRAMERS[self._decoder.framing](max_event_bytes=max_event_bytes)
        self._accumulator = _make_accumulator(self.provider, previews, preview_every, preview_growth)
        self._partials: dict[tuple[int, int], PartialJSON] = {}  # open calls being previewed
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
        # Once per frame: the loop over the frame's events is ``_events`` written inline.
        decode = self._decoder.feed
        accumulator = self._accumulator
        feed = accumulator.feed
        for frame in frames:
            for event in decode(frame):
                for item in feed(event):  # usually empty
                    if isinstance(item, RawPreview):
                        self._preview(item, out)
                    else:
                        out.append(self._finish(item))
            if accumulator.finished:
                return

    def _events(self, events: Iterable[Any], out: list[StreamEvent]) -> None:
        feed = self._accumulator.feed
        for event in events:
            for item in feed(event):  # usually empty: no generator per event
                if isinstance(item, RawPreview):
                    self._preview(item, out)
                else:
                    out.append(self._finish(item))

    def _preview(self, item: RawPreview, out: list[StreamEvent]) -> None:
        key = (item.choice, item.index)
        partial = self._partials.get(key)
        if partial is None:
            partial = self._partials[key] = PartialJSON()
        value = partial.update(item.text)
        if value is not NO_PREVIEW:
            out.append(ArgumentsPreview(item.index, item.id, item.name, value, choice=item.choice))

    def _finish(self, item: RawCall | TextReceived | ResponseEnded) -> StreamEvent:
        if type(item) is RawCall:
            if self._partials:
                self._partials.pop((item.choice, item.index), None)
            return normalize(item)
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


def _make_accumulator(provider: str, previews: bool, every: int | None, growth: float | None) -> Accumulator:
    if not previews:
        if every is not None or growth is not None:
            raise UsageError("preview_every and preview_growth need previews=True")
        return Accumulator(provider)
    every = 1 if every is None else every
    growth = 1.0 if growth is None else growth
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise UsageError(f"preview_every must be an int of at least 1, got {every!r}")
    if isinstance(growth, bool) or not isinstance(growth, int | float) or not growth >= 1.0:
        raise UsageError(f"preview_growth must be a number of at least 1.0, got {growth!r}")
    return PreviewingAccumulator(provider, every=every, growth=float(growth))


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
    if not isinstance(source, AsyncIterable):
        source = _aiter(source)
    # The async source is read here, not through a wrapping generator: one layer less for
    # every read, which counts when a loop serves many streams. It is closed on the way out.
    iterator = aiter(source)
    try:
        async for chunk in iterator:
            for item in assembler.feed(_check_chunk(chunk)):
                yield item
            if assembler.error is not None:
                raise assembler.error
            if assembler.finished:
                break
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()
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


async def _aiter(source: Iterable[bytes]) -> AsyncIterator[bytes]:
    for chunk in source:
        yield chunk
