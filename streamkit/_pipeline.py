"""The composer: bytes -> frames -> provider events -> accumulator -> normalizer -> values.

``Assembler`` wires the stages for one response and is itself sans-IO (``feed``/``flush``);
``iter_events``/``aiter_events`` drive it over any iterable of bytes, and
``iter_tool_calls``/``aiter_tool_calls`` keep only the calls. Stages never call each other:
this module hands each stage's output to the next, the moment it appears, so a call is
delivered as soon as its end marker has been read.

Errors are enriched here, at the boundary: the provider slug, and the raw text of every call
still open when the stream failed. A source whose own iteration raises (an SDK's stream
raising its ``APIError`` for an error event, a connection that drops) fails the same way, after
the calls completed before: a failure to read (a connection, a timeout) becomes a
``TransportError``, anything else the source raised a ``ProviderError``, with the source's
exception as ``__cause__``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import replace
from typing import Any, Never, TypedDict, Unpack, cast

from . import _events, _observe
from ._accumulator import Accumulator, PreviewingAccumulator
from ._awsstream import EventStreamDecoder
from ._ending import finish_of, tokens_of
from ._errors import (
    FramingError,
    HTTPStatusError,
    IncompleteStreamError,
    Passthrough,
    ProviderError,
    StreamError,
    StreamkitError,
    TransportError,
    UsageError,
)
from ._events import TURN_EVENTS, Event, Frame, Payloads, RawCall, RawPreview, ResponseEnded, TextReceived
from ._framing import Deferred, Framer
from ._hot import HotRead, arm
from ._limits import DEFAULT_LIMITS, Limits, TurnBudget
from ._ndjson import NDJSONDecoder
from ._normalize import normalize
from ._preview import NO_PREVIEW, PartialJSON
from ._sources import Payload, SourceAdapter
from ._sse import SSEDecoder
from ._turn import TurnStage
from ._turn_types import StreamEvent, Turn
from ._types import (
    ArgumentsFragment,
    ArgumentsPreview,
    CallStarted,
    CallTimes,
    InvalidToolCall,
    Provider,
    ResponseEnd,
    TextDelta,
    ToolCall,
)
from ._validate import Toolset, as_toolset
from .providers import Decoder, decoder_for, error_details

__all__ = (
    "Assembler",
    "Source",
    "StreamOptions",
    "aiter_events",
    "acollect_turn",
    "aiter_tool_calls",
    "collect_turn",
    "iter_events",
    "iter_tool_calls",
)

_log = logging.getLogger(__name__)
# Quiet by default: an application that wants streamkit's debug records configures the logger.
# Set here, by the composer every stage that logs is driven by, so ``import streamkit`` alone
# loads no logging.
logging.getLogger(__package__).addHandler(logging.NullHandler())

#: What ``iter_events`` and its kin accept: any iterable of the items ``_sources`` recognizes
#: (bytes, text lines, SSE events, dicts, SDK event objects).
Source = Iterable[Any] | AsyncIterable[Any]


class StreamOptions(TypedDict, total=False):
    """The keyword options of ``iter_events`` and its kin, ``astream`` and ``stream``: those of
    ``Assembler``, which says what each does. A name not here is a type error, and a
    ``UsageError`` when the function is called."""

    early_close: bool
    limits: Limits
    max_event_bytes: int | None
    tools: Toolset | Iterable[Any] | Mapping[str, Any] | None
    previews: bool
    preview_every: int | None
    preview_growth: float | None
    fragments: bool
    times: bool


_OPTIONS = frozenset(StreamOptions.__annotations__)


def check_options(options: Mapping[str, Any]) -> None:
    """A ``UsageError`` naming any keyword that is not an option (a typo, at the call)."""
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        names = ", ".join(sorted(_OPTIONS))
        what = "options" if len(unknown) > 1 else "option"
        raise UsageError(f"unknown {what} {', '.join(unknown)}; the options are: {names}")


#: The largest ``preview_growth``: a call's next preview is due at its length times the factor,
#: which must stay a finite number (a larger factor previews no less often than this one, in
#: practice: once near the start, never again).
MAX_PREVIEW_GROWTH = 1e6

_FRAMERS: dict[str, Callable[..., Framer]] = {
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
        limits: the ``Limits`` that bound what one response may hold (``streamkit.Limits``).
        max_event_bytes: shorthand for ``limits.max_event_bytes``, the largest frame buffered
            before its end arrives.
        tools: the tools sent to the provider (any format ``Toolset`` reads, or a ``Toolset``):
            each completed call is then checked against its tool's schema.
        previews: also yield an ``ArgumentsPreview`` of each call's arguments while they
            stream (see ``streamkit._preview`` for what a preview shows). The call itself is
            unchanged: parsed once, strictly, at its end marker.
        preview_every: with ``previews``, the fewest new characters of a call's arguments
            between two previews (default 1: every fragment).
        preview_growth: with ``previews``, the least factor by which the arguments must grow
            between two previews (default 1.0). Above 1 the previews of a call cost time in
            proportion to its arguments; at 1.0 with a small ``preview_every``, in proportion
            to their square.
        fragments: also yield a ``CallStarted`` when each call opens and an
            ``ArgumentsFragment`` for each raw piece of its argument text, for UIs that stream
            tool inputs. The call itself is unchanged: parsed once, strictly, at its end marker.
        times: stamp each call with ``CallTimes``: when its first fragment, its end marker and
            its delivery came (three clock reads per call; none without it).
    """

    def __init__(
        self,
        provider: Provider | Decoder,
        *,
        early_close: bool = False,
        limits: Limits = DEFAULT_LIMITS,
        max_event_bytes: int | None = None,
        tools: Toolset | Iterable[Any] | Mapping[str, Any] | None = None,
        previews: bool = False,
        preview_every: int | None = None,
        preview_growth: float | None = None,
        fragments: bool = False,
        times: bool = False,
        **unknown: Never,
    ) -> None:
        check_options(unknown)  # a typo is a type error, and a UsageError at run time
        if not isinstance(limits, Limits):
            raise UsageError(f"limits must be a streamkit.Limits, got {type(limits).__name__}")
        if max_event_bytes is not None:
            limits = replace(limits, max_event_bytes=max_event_bytes)
        self._toolset = None if tools is None else as_toolset(tools)
        self._decoder = _make_decoder(provider, early_close=early_close)
        self._decoder.limits = limits
        self.provider = self._decoder.slug
        self._watch = _observe.watch(self.provider)  # None unless telemetry is on
        self.decoder_class = type(self._decoder)
        self.framing = self._decoder.framing
        self._framer = _FRAMERS[self._decoder.framing](max_event_bytes=limits.max_event_bytes)
        self._read: Callable[[bytes], Sequence[Frame | Payloads]] = self._framer.feed_batch
        self._deferred: Deferred = Deferred(self._noted)
        budget = TurnBudget(limits.max_turn_bytes)  # shared by the stages that hold turn state
        self._accumulator = _make_accumulator(
            self.provider,
            limits,
            budget,
            previews,
            preview_every,
            preview_growth,
            fragments=bool(fragments),
            timed=bool(times) or self._watch is not None,
        )
        self._max_depth = limits.max_depth
        self._partials: dict[tuple[int, int], PartialJSON] = {}  # open calls being previewed
        self._turn = TurnStage(self.provider, budget)
        self._called = False  # a call was delivered: a normal stop then finishes as tool_calls
        self._received = False  # any input at all: an empty body gets its own message
        self._max_event_bytes = limits.max_event_bytes
        self._hot: HotRead | None = None  # armed after a general read that proved its parts
        self._flushed = False  # flush() was called: the input ended, and feeding more is misuse

    @property
    def error(self) -> StreamError | None:
        """The error the stream failed with, raised by every call after it; None until then."""
        return self._deferred.failure

    @property
    def finished(self) -> bool:
        """True once the provider's end-of-stream marker was read: later input is ignored."""
        return self._accumulator.finished

    def feed(self, data: bytes) -> list[StreamEvent]:
        if self._flushed:
            raise self._after_flush("feed")
        if type(data) is not bytes:
            if not isinstance(data, bytes | bytearray | memoryview):
                raise UsageError(f"Assembler.feed takes bytes, got {type(data).__name__}")
            data = bytes(data)
        hot = self._hot
        if hot is not None:
            taken = hot.take(data)
            if taken is not None:
                return taken
            self._cool()
        if data and not self._received:
            self._first_input()
        return self._deferred.run(self._read_bytes, data)

    def _read_bytes(self, data: bytes, out: list[StreamEvent]) -> None:
        if self._accumulator.finished:
            return
        self._frames(self._read(data), out)
        if not self._accumulator.finished:  # read whole: the next read may be a hot one
            self._hot = arm(self._framer, self._decoder, self._accumulator, self._max_event_bytes)

    def _cool(self) -> None:
        """Drop the hot read, the stages given the bookkeeping of what it read."""
        hot = self._hot
        if hot is not None:
            self._hot = None
            hot.settle()

    def feed_frame(self, frame: Frame) -> list[StreamEvent]:
        """Feed a frame that was already cut from the bytes (an SSE event from httpx-sse)."""
        if self._flushed:
            raise self._after_flush("feed_frame")
        if not self._received:
            self._first_input()
        return self._guard(lambda out: self._frames((frame,), out))

    def feed_payload(self, payload: Any, event: str | None = None) -> list[StreamEvent]:
        """Feed one already-decoded event payload (a dict made from an SDK's event object)."""
        if self._flushed:
            raise self._after_flush("feed_payload")
        if not self._received:
            self._first_input()
        return self._guard(lambda out: self._events(self._decoder.read_payload(payload, event), out))

    def flush(self) -> list[StreamEvent]:
        """End of input: raises ``IncompleteStreamError`` if the end-of-stream marker is missing.

        A provider whose end is the end of input once every choice has finished (Gemini, an
        OpenAI-compatible server that sends no ``[DONE]``) ends normally only if the framer says
        the input ended cleanly: an SSE event cut off at the end is dropped by the framer, and
        the response it belonged to is not whole.
        """

        self._flushed = True

        def finish(out: list[StreamEvent]) -> None:
            framed = self._framer.flush()
            self._frames(framed, out)
            events = self._decoder.flush()
            if not framed.clean:
                events = [event for event in events if type(event) is not ResponseEnded]
            self._events(events, out)
            if not self._accumulator.finished:
                message = "the stream ended before the provider's end-of-stream marker"
                if not self._received:
                    message = "the stream was empty: no bytes arrived"
                raise IncompleteStreamError(message, provider=self.provider)

        return self._guard(finish)

    def close(self) -> None:
        """The reader is done with this stream, whatever state it is in: a telemetry span still
        open ends here (the iterators call it when they stop; a host of ``Assembler``s should)."""
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()

    def _first_input(self) -> None:
        self._received = True
        if self._watch is not None:
            self._watch.first_input()

    def _after_flush(self, method: str) -> UsageError:
        return UsageError(
            f"Assembler.{method} was called after flush(): the input already ended; one Assembler reads one"
            " response, so make a new one for the next"
        )

    def _guard(self, step: Callable[[list[StreamEvent]], None]) -> list[StreamEvent]:
        self._cool()
        return self._deferred.run(self._step, step)

    def _step(self, step: Callable[[list[StreamEvent]], None], out: list[StreamEvent]) -> None:
        if not self._accumulator.finished:
            step(out)

    def _frames(self, items: Iterable[Frame | Payloads], out: list[StreamEvent]) -> None:
        # The decoder reads the whole batch into a list, then the accumulator takes it. A
        # decoder error waits until the events before it have gone through the accumulator, so
        # what is delivered, and which error is raised, is what one event at a time would give.
        events: list[Event] = []
        try:
            self._decoder.read(items, events)
        except Exception:
            self._events(events, out)
            raise
        self._events(events, out)

    def _events(self, events: Iterable[Event], out: list[StreamEvent]) -> None:
        take, feed = self._take, self._accumulator.feed
        for event in events:
            for item in feed(event):
                take(item, out)

    def _take(self, item: Any, out: list[StreamEvent]) -> None:
        """Route one accumulator output: a preview, a piece of turn state, or a value."""
        kind = type(item)
        if kind is RawPreview:
            self._preview(item, out)
        elif kind in TURN_EVENTS:  # reasoning, signatures, server tools
            out += self._turn.feed(item)
        elif kind is _events.ArgumentsDelta:  # only with fragments=True
            out.append(ArgumentsFragment(item.index, item.text, choice=item.choice))
        elif kind is _events.CallStarted:  # only with fragments=True
            out.append(CallStarted(item.index, item.id, item.name, choice=item.choice))
        else:
            if kind is ResponseEnded:
                out += self._turn.close()
            out.append(self._finish(item))

    def _preview(self, item: RawPreview, out: list[StreamEvent]) -> None:
        key = (item.choice, item.index)
        partial = self._partials.get(key)
        if partial is None:
            partial = self._partials[key] = PartialJSON(self._max_depth)
        value = partial.update(item.text)
        if value is not NO_PREVIEW:
            out.append(ArgumentsPreview(item.index, item.id, item.name, value, choice=item.choice))

    def _finish(self, item: Any) -> StreamEvent:
        if type(item) is RawCall:
            self._called = True
            if self._partials:
                self._partials.pop((item.choice, item.index), None)
            call = normalize(item, self._max_depth)
            if len(call.anomalies) > len(item.anomalies):  # the normalizer noted one (null_arguments)
                _log_anomalies(self.provider, call, len(item.anomalies))
            if self._toolset is not None:
                call = self._toolset.validate(call, raw=item.arguments)
            if item.times is not None:
                call = _stamped(call, item.times)
            if self._watch is not None:
                self._watch.call(call)
            return call
        if type(item) is TextReceived:
            return TextDelta(item.text, choice=item.choice, index=item.index)
        stop, usage = self._accumulator.stop_reason, self._accumulator.usage
        finish = finish_of(self.provider, stop, self._called)
        tokens, anomalies = tokens_of(self.provider, usage), tuple(self._accumulator.anomalies)
        end = ResponseEnd(stop, usage, finish=finish, tokens=tokens, anomalies=anomalies)
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.end(end)
        return end

    def _noted(self, exc: StreamError) -> StreamError:
        """The stream's error with what the stream knows (the provider, the calls left open),
        reported to telemetry."""
        if exc.provider is None:
            exc.provider = self.provider
        if not exc.unfinished:
            exc.unfinished = self._unfinished()
        self._failed(exc)
        return exc

    def _fail(self, exc: StreamError) -> None:
        self._deferred.fail(exc)

    def _failed(self, exc: StreamError | TransportError) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.fail(exc, exc.unfinished)

    def _unfinished(self) -> tuple[InvalidToolCall, ...]:
        """Close every open call as cut off: the calls an error carries."""
        return tuple(_as_invalid(_stamped(normalize(raw), raw.times)) for raw in self._accumulator.drain_open())


def _stamped(call: ToolCall | InvalidToolCall, times: tuple[int, int] | None) -> ToolCall | InvalidToolCall:
    """``call`` with its ``CallTimes``, delivered now; unchanged for a call that was not timed."""
    if times is None:
        return call
    return replace(call, times=CallTimes(times[0], times[1], time.time_ns()))


def _log_anomalies(provider: str, call: ToolCall | InvalidToolCall, known: int) -> None:
    """Log what the normalizer noted, as the accumulator logs its own: the rule, never the arguments."""
    for anomaly in call.anomalies[known:]:
        _log.debug("%s: call index %d: %s", provider, call.index, anomaly)


def _as_invalid(call: ToolCall | InvalidToolCall) -> InvalidToolCall:
    assert isinstance(call, InvalidToolCall)  # drained calls are always marked truncated
    return call


def _make_decoder(provider: Provider | Decoder, *, early_close: bool) -> Decoder:
    if isinstance(provider, Decoder):
        return provider
    cls = decoder_for(provider)
    if early_close and not cls.supports_early_close:
        raise UsageError(f"early_close is for providers without per-call end markers, not {provider!r}")
    return cls(early_close=early_close)


def _feed(assembler: Assembler, adapter: SourceAdapter, item: Any) -> list[StreamEvent]:
    """What one source item completes: ``adapter.adapt(item)`` fed to the assembler, in one
    call per read. A text line that cannot be UTF-8 fails the stream as bad bytes do."""
    try:
        value = adapter.adapt(item)
    except UnicodeEncodeError as exc:
        shown = exc.object[exc.start : exc.end]
        error = FramingError(f"the source's text holds {shown!r}, a lone surrogate that no UTF-8 stream can carry")
        assembler._fail(error)
        raise error from None
    if type(value) is bytes:
        return assembler.feed(value)
    if isinstance(value, Payload):
        return assembler.feed_payload(value.payload, value.event)
    assert isinstance(value, Frame)
    return assembler.feed_frame(value)


def _make_accumulator(
    provider: str,
    limits: Limits,
    budget: TurnBudget,
    previews: bool,
    every: int | None,
    growth: float | None,
    *,
    fragments: bool,
    timed: bool,
) -> Accumulator:
    if not previews:
        if every is not None or growth is not None:
            raise UsageError("preview_every and preview_growth need previews=True")
        return Accumulator(provider, limits, budget, fragments=fragments, timed=timed)
    every = 1 if every is None else every
    growth = 1.0 if growth is None else growth
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise UsageError(f"preview_every must be an int of at least 1, got {every!r}")
    if isinstance(growth, bool) or not isinstance(growth, int | float) or not 1.0 <= growth <= MAX_PREVIEW_GROWTH:
        raise UsageError(f"preview_growth must be a number from 1.0 to {MAX_PREVIEW_GROWTH:g}, got {growth!r}")
    return PreviewingAccumulator(
        provider, limits, budget, every=every, growth=float(growth), fragments=fragments, timed=timed
    )


_ACCEPTED = "an iterable of stream items (bytes chunks, text lines, SSE events, dicts or SDK event objects)"
#: Sources that are iterable yet no stream: read one character, byte or key at a time, each
#: would end in a misleading stream error.
_NOT_SOURCES = {
    str: "pass its lines (text.splitlines(keepends=True)) or [text.encode()]",
    bytes: "pass [body], a list of chunks",
    bytearray: "pass [body], a list of chunks",
    memoryview: "pass [body], a list of chunks",
    dict: "pass [payload], a list of payloads",
}


def check_source(source: object, function: str, *, asynchronous: bool = False) -> None:
    """A ``UsageError`` naming what was passed as ``source`` and what ``function`` accepts."""
    accepted = f"an async iterable or {_ACCEPTED}" if asynchronous else _ACCEPTED
    got = type(source).__name__
    for kind, hint in _NOT_SOURCES.items():
        if isinstance(source, kind):
            raise UsageError(f"{function} takes {accepted}, got a {got}: {hint}")
    if isinstance(source, Iterable) or (asynchronous and isinstance(source, AsyncIterable)):
        return
    hint = "; use aiter_events (or its kin) for an async source" if isinstance(source, AsyncIterable) else ""
    raise UsageError(f"{function} takes {accepted}, got {'None' if source is None else got}{hint}")


def _assembler(provider: Provider | Decoder, options: Mapping[str, Any]) -> Assembler:
    check_options(options)
    return Assembler(provider, **options)


def iter_events(
    source: Iterable[Any], provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Iterator[StreamEvent]:
    """Yield text deltas, each call the moment it completes, and last the ``ResponseEnd``.

    ``source`` yields bytes, text lines, SSE events, dicts or SDK event objects (see
    ``streamkit._sources``). ``options`` are ``Assembler``'s; a bad provider or option raises
    ``UsageError`` here, at the call, before anything is read, as does a source that is not
    an iterable of stream items.
    """
    check_source(source, "iter_events")
    return _events_of(source, _assembler(provider, options))


def _events_of(source: Iterable[Any], assembler: Assembler) -> Iterator[StreamEvent]:
    adapter = SourceAdapter(assembler.provider, assembler.framing)
    items = iter(source)
    try:
        while (item := _next(items, assembler)) is not _END:
            yield from _feed(assembler, adapter, item)
            if assembler.error is not None:
                raise assembler.error
            if assembler.finished:
                if adapter.drains_after_end:
                    _drain(items)
                break
        yield from assembler.flush()
        if assembler.error is not None:
            raise assembler.error
    finally:
        assembler.close()


def aiter_events(
    source: Source, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> AsyncIterator[StreamEvent]:
    """The async twin of ``iter_events``; ``source`` may be an async or a plain iterable."""
    check_source(source, "aiter_events", asynchronous=True)
    return _aevents_of(source, _assembler(provider, options))


async def _aevents_of(
    source: Source, assembler: Assembler, *, calls: bool = False
) -> AsyncGenerator[StreamEvent, None]:
    """The events of ``source``; with ``calls``, only the calls: one generator per stream,
    reading an async source directly, so a read crosses no other generator."""
    adapter = SourceAdapter(assembler.provider, assembler.framing)
    try:
        items = _opened_items(source)
        try:
            while (item := await _anext(items, assembler)) is not _END:
                for value in _feed(assembler, adapter, item):
                    if not calls or isinstance(value, ToolCall | InvalidToolCall):
                        yield value
                if assembler.error is not None:
                    raise assembler.error
                if assembler.finished:
                    await _read_to_end(items, adapter)
                    break
        finally:
            aclose = getattr(items, "aclose", None)
            if aclose is not None:
                await aclose()
        for value in assembler.flush():
            if not calls or isinstance(value, ToolCall | InvalidToolCall):
                yield value
        if assembler.error is not None:
            raise assembler.error
    finally:
        assembler.close()


#: What ``_next`` returns when the source is done.
_END: Any = object()


def _next(items: Iterator[Any], assembler: Assembler) -> Any:
    """The source's next item, or ``_END``; a failure of the source's own iteration is wrapped."""
    try:
        return next(items, _END)
    except Passthrough as exc:
        raise exc.error from None
    except StreamkitError as exc:
        _enrich(exc, assembler)
        raise
    except Exception as exc:
        if not _reports(exc):
            raise  # the caller's own exception, unchanged
        raise _source_failure(exc, assembler) from exc


async def _anext(items: AsyncIterator[Any], assembler: Assembler) -> Any:
    try:
        return await anext(items, _END)
    except Passthrough as exc:
        raise exc.error from None
    except StreamkitError as exc:
        _enrich(exc, assembler)
        raise
    except Exception as exc:
        if not _reports(exc):
            raise  # the caller's own exception, unchanged
        raise _source_failure(exc, assembler) from exc


def _enrich(exc: StreamkitError, assembler: Assembler) -> StreamkitError:
    """A streamkit error raised by the source itself (the transport's): add what the stream knows."""
    if isinstance(exc, TransportError | StreamError):
        if exc.provider is None or isinstance(exc, TransportError):
            exc.provider = assembler.provider
        if not exc.unfinished:
            exc.unfinished = assembler._unfinished()
        assembler._failed(exc)
    return exc


#: Where a failure to read comes from: the HTTP stack under every SDK.
_TRANSPORT_MODULES = frozenset({"httpx", "httpcore", "h11", "h2", "anyio", "aiohttp", "urllib3", "requests", "ssl"})
_TRANSPORT_NAMES = frozenset({"APIConnectionError", "APITimeoutError"})  # openai's and anthropic's


#: The packages of the SDKs whose exceptions report the provider's error (an error event in a
#: 200 stream, or a status that is not 2xx). Any other exception a source raises that is no
#: failure to read is the caller's own (a ``KeyError`` in its generator): it passes through.
_SDK_PACKAGES = frozenset(
    {"openai", "anthropic", "google", "mistralai", "cohere", "ollama", "groq", "litellm", "botocore", "aiobotocore"}
    | {"httpx_sse", "pydantic_core"}  # an SSE reader refusing the body; an SDK refusing an event's shape
)


def _reports(exc: Exception) -> bool:
    """Whether the source's exception is a failure to read or the provider's reported error: an
    SDK's, by its package or by the error body or status it carries."""
    return (
        _is_transport(exc)
        or _comes_from(exc, _SDK_PACKAGES)
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
    if _is_transport(exc):
        error = TransportError(f"reading the stream failed: {type(exc).__name__}: {exc}")
    else:
        kind, message = _reported(exc, assembler.decoder_class)
        status = _http_status(exc)
        if status is not None and status >= 400:
            detail = ": ".join(part for part in (kind, message) if part)
            headers = getattr(getattr(exc, "response", None), "headers", None)
            error = HTTPStatusError(
                f"HTTP {status}: {detail}",
                status_code=status,
                error_type=kind,
                error_message=message,
                headers=dict(headers) if isinstance(headers, Mapping) else None,
            )
        else:
            error = ProviderError(message, type=kind)
    return _enrich(error, assembler)


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


def iter_tool_calls(
    source: Iterable[Any], provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Iterator[ToolCall | InvalidToolCall]:
    """Yield each call, valid or not, the moment its end marker arrives."""
    check_source(source, "iter_tool_calls")
    return _calls_of(iter_events(source, provider, **options))


def _calls_of(events: Iterator[StreamEvent]) -> Iterator[ToolCall | InvalidToolCall]:
    for item in events:
        if isinstance(item, ToolCall | InvalidToolCall):
            yield item


def aiter_tool_calls(
    source: Source, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> AsyncIterator[ToolCall | InvalidToolCall]:
    """The async twin of ``iter_tool_calls``."""
    check_source(source, "aiter_tool_calls", asynchronous=True)
    calls = _aevents_of(source, _assembler(provider, options), calls=True)
    return cast(AsyncIterator[ToolCall | InvalidToolCall], calls)


def _drain(items: Iterator[Any]) -> None:
    """Read an SDK's stream to its end after the provider's end marker, as ``_read_to_end`` does."""
    try:
        for _ in items:
            pass
    except Exception as exc:  # after the end marker: nothing the source says changes the response
        _log.debug("the source raised after the end of the response: %s", type(exc).__name__)


async def _read_to_end(items: AsyncIterator[Any], adapter: SourceAdapter) -> None:
    # An SDK's stream reads its body to the end after the provider's end marker, and ends;
    # reading it that far lets it close its response and its async generators (trio warns
    # about an async generator left unfinished).
    if adapter.drains_after_end:
        try:
            async for _ in items:
                pass
        except Exception as exc:  # as in _drain
            _log.debug("the source raised after the end of the response: %s", type(exc).__name__)


def collect_turn(source: Iterable[Any], provider: Provider | Decoder, **options: Unpack[StreamOptions]) -> Turn:
    """Read a whole response and return its ``Turn``: text, reasoning, server tools and calls.

    A stream that fails raises, as ``iter_events`` does: a turn is only ever built whole.
    """
    check_source(source, "collect_turn")
    slug = provider if isinstance(provider, str) else provider.slug
    return Turn.from_events(iter_events(source, provider, **options), slug)


async def acollect_turn(source: Source, provider: Provider | Decoder, **options: Unpack[StreamOptions]) -> Turn:
    """The async twin of ``collect_turn``."""
    check_source(source, "acollect_turn", asynchronous=True)
    events = aiter_events(source, provider, **options)
    slug = provider if isinstance(provider, str) else provider.slug
    return Turn.from_events([item async for item in events], slug)


def _opened_items(source: Source) -> AsyncIterator[Any]:
    """An async source's own iterator (closed by the reader when it stops), or a plain one's
    items as an async generator. A failure to open it is raised by the first read, where
    ``_anext`` reports it as the source's own, as it does a failure to read."""
    if not isinstance(source, AsyncIterable):
        return _aiter(source)
    try:
        return aiter(source)
    except Exception as exc:
        return _raising(exc)


async def _aiter(source: Iterable[Any]) -> AsyncGenerator[Any, None]:
    for chunk in source:
        yield chunk


async def _raising(exc: Exception) -> AsyncGenerator[Any, None]:
    raise exc
    yield  # an async generator that fails on its first read
