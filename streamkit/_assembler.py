"""The composer: bytes -> frames -> provider events -> accumulator -> normalizer -> values.

``Assembler`` wires the stages for one response and is itself sans-IO (``feed``/``flush``). Stages
never call each other: it hands each stage's output to the next, the moment it appears, so a
call is delivered as soon as its end marker has been read (one whose text stops mid-JSON, at the
stop reason that says whether it was cut: the accumulator's rule 11). Errors are enriched here, at the
boundary: the provider slug, and the raw text of every call still open when the stream failed;
the framing rule (``streamkit._framing.Deferred``) returns what was finished first.
"""

from __future__ import annotations

import time
from collections.abc import (
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Never, TypedDict, TypeVar

from . import _events, _log, _observe
from ._accumulator import Accumulator
from ._ending import cutting_reasons, finish_of, tokens_of
from ._errors import (
    IncompleteStreamError,
    StreamError,
    TransportError,
    UsageError,
)
from ._events import TURN_EVENTS, Event, Frame, Payloads, RawCall, RawPreview, ResponseEnded, TextReceived
from ._framing import Deferred, Framer
from ._hot import HotRead, TemplateReader, arm, text_delta
from ._limits import DEFAULT_LIMITS, Limits, TurnBudget
from ._normalize import normalize, stops_mid_json
from ._sse import SSEDecoder
from ._types import (
    ArgumentsFragment,
    ArgumentsPreview,
    Call,
    CallStarted,
    CallTimes,
    InvalidToolCall,
    Provider,
    ResponseEnd,
)
from .providers import Decoder, decoder_for

if TYPE_CHECKING:
    from ._preview import PartialJSON
    from ._turn import TurnStage
    from ._turn_types import StreamEvent
    from ._validate import Toolset

__all__ = ("MAX_PREVIEW_GROWTH", "Assembler", "StreamOptions", "check_options")

_Failure = TypeVar("_Failure", bound=StreamError | TransportError)


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


def _toolset(tools: Toolset | Iterable[Any] | Mapping[str, Any]) -> Toolset:
    """The tools' validation set, its module (and jsonschema-rs's) imported only when tools are given."""
    from ._validate import as_toolset

    return as_toolset(tools)


def _eventstream(**options: Any) -> Framer:
    """AWS's binary framer, imported only for the provider that speaks it (Bedrock)."""
    from ._awsstream import EventStreamDecoder

    return EventStreamDecoder(**options)


def _ndjson(**options: Any) -> Framer:
    """The NDJSON framer, imported only for the provider that speaks it (Ollama)."""
    from ._ndjson import NDJSONDecoder

    return NDJSONDecoder(**options)


_FRAMERS: dict[str, Callable[..., Framer]] = {
    "sse": SSEDecoder,
    "ndjson": _ndjson,
    "eventstream": _eventstream,
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
        self._toolset = None if tools is None else _toolset(tools)
        self._decoder = _make_decoder(provider, early_close=early_close)
        self._decoder.limits = limits
        self._reader = TemplateReader(self._decoder)  # the decoder, with the stream's template
        self.provider = self._decoder.slug
        self._watch = _observe.watch(self.provider)  # None unless telemetry is on
        self.decoder_class = type(self._decoder)
        self.framing = self._decoder.framing
        self._framer = _FRAMERS[self._decoder.framing](max_event_bytes=limits.max_event_bytes)
        self._read: Callable[[bytes], Sequence[Frame | Payloads]] = self._framer.feed_batch
        #: A read of exactly one whole event, framed with no batch (SSE, nothing open): None when not.
        self._one: Callable[[bytes], tuple[str | None, bytes] | None] | None = (
            self._framer.whole_event if type(self._framer) is SSEDecoder else None
        )
        self._deferred: Deferred = Deferred(self.noted)
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
            sequential=self._decoder.call_order == "sequential",
            early_close=self._decoder.early_close,
            cutting=cutting_reasons(self._decoder.finish_reasons),
        )
        self._max_depth = limits.max_depth
        self._partials: dict[tuple[int, int], PartialJSON] = {}  # open calls being previewed
        self._budget = budget
        self._turn: TurnStage | None = None  # made by the first turn event: most responses have none
        self._called = False  # a call was delivered: a normal stop then finishes as tool_calls
        self._received = False  # any input at all: an empty body gets its own message
        self._hot: HotRead | None = None  # armed after a general read that proved its parts
        self._text = True  # text deltas are made: a reader of the calls alone wants none
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
        return self._general(data)

    def calls_only(self) -> None:
        """From now on, make no ``TextDelta``: the reader keeps only the calls and the end
        (``iter_tool_calls``), and a turn's text is most of its events. Its text is still read,
        and checked, as ever."""
        self._text = False
        self._hot = None  # armed again, for the calls alone, by the next general read

    @property
    def hot(self) -> HotRead | None:
        """The hot read armed for the next read of bytes (``streamkit._hot``), or None. A
        driver reading bytes hands each read to its ``take`` first, which is ``feed`` in one
        stage crossing, and a read it turns down (None) to ``feed_general``."""
        return self._hot

    def feed_general(self, data: bytes) -> list[StreamEvent]:
        """``feed`` for a read of bytes that the hot read (``hot``), when one is armed, already
        turned down: the general path, with no second try of the hot read."""
        return self._general(data)

    def _general(self, data: bytes) -> list[StreamEvent]:
        """``feed`` past the hot read: the bytes the hot read held, then ``data``, through the
        stages."""
        if self._hot is not None:  # most general reads come with none armed: no call to drop it
            held = self._cool()
            if held:
                data = held + data
        if data and not self._received:
            self._first_input()
        return self._deferred.run(self._read_bytes, data)

    def _read_bytes(self, data: bytes, out: list[StreamEvent]) -> None:
        self._staged(data, out)
        if self._reader.template is not None and not self._accumulator.finished:  # the next read may be hot
            self._hot = arm(self._framer, self._reader, self._accumulator, text=self._text)

    def _staged(self, data: bytes, out: list[StreamEvent]) -> None:
        """Read ``data`` through the stages, arming no hot read after it."""
        if self._accumulator.finished:
            return
        one = None if self._one is None else self._one(data)
        if one is None:
            self._frames(self._read(data), out)
        else:  # one payload: a decoder error leaves no events before it to pass on
            events = self._reader.read_event(*one)
            if events:
                self._events(events, out)

    def _cool(self) -> bytes:
        """Drop the hot read, the stages given the bookkeeping of what it read; the bytes it
        held, for the general path to read next."""
        hot = self._hot
        if hot is None:
            return b""
        self._hot = None
        return hot.settle()

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
        return self._guard(lambda out: self._events(self._reader.read_payload(payload, event), out))

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
        held = self._cool()
        # The start of an event the hot read held goes back to the framer first, as the next
        # read would have taken it; it completes nothing (no blank line, no CR). No hot read is
        # armed after it: one would take those bytes back, and they would be lost to the framer
        # (a cut last event read as a clean end).
        early = self._deferred.run(self._staged, held) if held else []
        return early + self._deferred.run(self._step, step)

    def _step(self, step: Callable[[list[StreamEvent]], None], out: list[StreamEvent]) -> None:
        if not self._accumulator.finished:
            step(out)

    def _frames(self, items: Iterable[Frame | Payloads], out: list[StreamEvent]) -> None:
        # The decoder reads the whole batch into a list, then the accumulator takes it. A
        # decoder error waits until the events before it have gone through the accumulator, so
        # what is delivered, and which error is raised, is what one event at a time would give.
        events: list[Event] = []
        try:
            self._reader.read(items, events)
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
            out += self._turn_stage().feed(item)
        elif kind is _events.ArgumentsDelta:  # only with fragments=True
            out.append(ArgumentsFragment(item.index, item.text, choice=item.choice))
        elif kind is _events.CallOpened:  # only with fragments=True
            out.append(CallStarted(item.index, item.id, item.name, choice=item.choice))
        else:
            if kind is ResponseEnded and self._turn is not None:
                out += self._turn.close()
            value = self._finish(item)
            if value is not None:
                out.append(value)

    def _turn_stage(self) -> TurnStage:
        if self._turn is None:
            from ._turn import TurnStage  # with the turn's values, at the first turn event

            self._turn = TurnStage(self.provider, self._budget)
        return self._turn

    def _preview(self, item: RawPreview, out: list[StreamEvent]) -> None:
        key = (item.choice, item.index)
        from ._preview import NO_PREVIEW, PartialJSON  # loaded by the first preview asked for

        partial = self._partials.get(key)
        if partial is None:
            partial = self._partials[key] = PartialJSON(self._max_depth)
        value = partial.update(item.text)
        if value is not NO_PREVIEW:
            out.append(ArgumentsPreview(item.index, item.id, item.name, value, choice=item.choice))

    def _finish(self, item: Any) -> StreamEvent | None:
        """The value ``item`` makes; ``None`` for a call that waits for its stop reason."""
        if type(item) is RawCall:
            if self._partials:
                self._partials.pop((item.choice, item.index), None)
            call = normalize(item, self._max_depth)
            if item.stop_pending and stops_mid_json(call):  # it may have been cut: the stop says
                self._accumulator.hold(item)
                return None
            self._called = True
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
            return text_delta(item.text, item.choice, item.index) if self._text else None
        stop, usage = self._accumulator.stop_reason, self._accumulator.usage
        finish = finish_of(self._decoder.finish_reasons, stop, self._called)
        tokens, anomalies = tokens_of(self._decoder.tokens, usage), tuple(self._accumulator.anomalies)
        end = ResponseEnd(stop, usage, finish=finish, tokens=tokens, anomalies=anomalies)
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.end(end)
        return end

    def noted(self, exc: _Failure) -> _Failure:
        """The stream's error with what the stream knows, reported to telemetry: the one place a
        stream's context is added to its error, whoever raised it (a stage, the source, the HTTP
        edge, the re-emitting transports).

        Its provider, unless it names one (a transport error never does: the edge that raised it
        knows no stream), and the calls still open, closed as cut ones, unless it carries some.
        """
        if exc.provider is None or isinstance(exc, TransportError):
            exc.provider = self.provider
        if not exc.unfinished:
            exc.unfinished = self._unfinished()
        self._failed(exc)
        return exc

    def fail(self, exc: StreamError) -> None:
        """Fail the stream with ``exc``, an error found outside the stages (a source's item that
        no stream can carry): kept, as the stages' own are, for every later call."""
        self._deferred.fail(exc)

    def _failed(self, exc: StreamError | TransportError) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.fail(exc, exc.unfinished)

    def _unfinished(self) -> tuple[InvalidToolCall, ...]:
        """Close every open call as cut off: the calls an error carries."""
        return tuple(_as_invalid(_stamped(normalize(raw), raw.times)) for raw in self._accumulator.drain_open())


def _stamped(call: Call, times: tuple[int, int] | None) -> Call:
    """``call`` with its ``CallTimes``, delivered now; unchanged for a call that was not timed."""
    if times is None:
        return call
    return replace(call, times=CallTimes(times[0], times[1], time.time_ns()))


def _log_anomalies(provider: str, call: Call, known: int) -> None:
    """Log what the normalizer noted, as the accumulator logs its own: the rule, never the arguments."""
    for anomaly in call.anomalies[known:]:
        _log.debug(__name__, "%s: call index %d: %s", provider, call.index, anomaly)


def _as_invalid(call: Call) -> InvalidToolCall:
    assert isinstance(call, InvalidToolCall)  # drained calls are always marked truncated
    return call


def _make_decoder(provider: Provider | Decoder, *, early_close: bool) -> Decoder:
    if type(provider) is not str and isinstance(provider, Decoder):  # a slug skips the ABC's check
        return provider
    cls = decoder_for(provider)
    if early_close and not cls.supports_early_close:
        raise UsageError(f"early_close is for providers without per-call end markers, not {provider!r}")
    return cls(early_close=early_close)


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
    sequential: bool,
    early_close: bool,
    cutting: frozenset[str],
) -> Accumulator:
    """The accumulator the options ask for, with the decoder's order policy (its ``call_order``)
    and the stop reasons that cut a call off (from its ``finish_reasons``)."""
    order = {"sequential": sequential, "early_close": early_close}
    if not previews:
        if every is not None or growth is not None:
            raise UsageError("preview_every and preview_growth need previews=True")
        return Accumulator(provider, limits, budget, fragments=fragments, timed=timed, cutting=cutting, **order)
    every = 1 if every is None else every
    growth = 1.0 if growth is None else growth
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise UsageError(f"preview_every must be an int of at least 1, got {every!r}")
    if isinstance(growth, bool) or not isinstance(growth, int | float) or not 1.0 <= growth <= MAX_PREVIEW_GROWTH:
        raise UsageError(f"preview_growth must be a number from 1.0 to {MAX_PREVIEW_GROWTH:g}, got {growth!r}")
    from ._previewing import PreviewingAccumulator  # loaded by the first stream that asks for previews

    return PreviewingAccumulator(
        provider,
        limits,
        budget,
        every=every,
        growth=float(growth),
        fragments=fragments,
        timed=timed,
        cutting=cutting,
        **order,
    )
