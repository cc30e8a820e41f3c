"""Provider events -> RawCalls at each call's end marker.

Rules (every rule about which sequences of events are legal lives in this module):

1. A call is keyed by ``(choice, index)`` and is in one state of ``TRANSITIONS``: ``IDLE``
   (never started), ``OPEN`` (started, no arguments yet), ``TEXT`` (text fragments came),
   ``VALUE`` (a whole arguments value came), ``FOLLOWED`` (text came, then a later call of its
   choice started), ``ENDED`` (its end marker came, its text stops mid-JSON: rule 11) or
   ``DELIVERED`` (handed out). ``TRANSITIONS[state][event type]`` is the
   state a call event leads to; a pair missing from the table is a ``ProviderProtocolError``
   naming the state, the event, the call index and the provider. Decoders only translate and
   route: they never judge an order, but may declare one as data (``call_order``).
2. ``id`` and ``name`` are set once. The same value again is noted as an anomaly, never
   concatenated; a different non-empty value is a protocol error.
3. Argument fragments go into a per-call list, joined once at the end marker: the cost is
   linear in the size of the arguments. Every ``_PACK_AT`` fragments the list is packed into
   UTF-8 bytes, so an open call holds about one byte per byte of its arguments rather than a
   string object per fragment. An empty fragment carries nothing: where the table lets the call
   take a fragment it changes nothing (the call stays ``OPEN``, and none is handed on), and
   where it does not it is refused as any fragment is. Decoders pass empty fragments on.
4. ``ArgumentsFinal`` (OpenAI Responses) ends a call with the provider's final text, compared
   with the joined fragments: a call without fragments takes it (``arguments_in_done``), a
   different text is noted (``final_arguments_differ``) and never picked. The second end
   marker of a delivered call is a repeat. The arguments are held here only, once.
   ``CallEnded`` for a delivered call (a second ``content_block_stop``, or one after the stop
   reason cut the call off) is a repeat too: it changes nothing, and is listed on the response
   as ``end_repeated``. Decoders pass every end marker on, and keep no set of open calls: a
   call whose place a later call took (OpenAI Chat's index reused with a new id) is
   ``CallDisplaced``, which ends it if a stop or rule 9 has not already delivered it.
5. A stop reason closes the choice's open calls, as complete or as cut off, as the decoder
   says; the end-of-stream marker closes any call still open as cut off. A choice's first
   stop reason ends it and is its stop reason (choice 0's is the response's); a later one
   (Together sends ``tool_calls``, ``tool_calls``, ``stop``) changes nothing but the calls
   opened since, and is listed on the response as ``stop_reason_repeated``, never fatal.
6. An error reported by the provider stops the stream (``ProviderError``); the calls still
   open can be drained with their raw text.
7. ``Limits``: a call's argument text is counted fragment by fragment (one addition each) and
   stopped as soon as it passes ``max_argument_bytes``; a call that would open past
   ``max_open_calls`` or ``max_calls``, and a call, text, reasoning or a stop for a choice
   past ``max_choices``, are refused. Each raises ``LimitExceededError`` before
   anything more is stored, so memory stays bounded whatever the stream sends. Usage is
   merged into one dict, and what it holds counts against ``max_turn_bytes``.
8. A call id is unique within its choice: with ``n > 1`` each choice is its own message, and
   OpenAI gives each choice's call the same id.
9. A decoder whose ``call_order`` is ``"sequential"`` (OpenAI Chat: a choice's calls stream one
   after another) has each later call of a choice follow its open calls (``CallFollowed``). A
   call that was followed once its text came is complete: a stop that cuts the choice off
   (``length``) truncates only the call still being written, and the others are parsed as they
   are (a followed call whose text does not parse stays invalid). The assumption is checked:
   text for a call after it was followed breaks it, is noted (``fragment_after_next_call``), and
   the call is again the one being written. With ``early_close`` a followed call is delivered at
   once. A call that has no arguments yet is never complete by following, so never delivered
   before its arguments came.
10. A key delivered can start again only as a new call, with an id that its choice never used
   (an Anthropic-format server reusing a block index after its ``content_block_stop``): noted
   as ``index_reused``, it never touches the call delivered before. Anything else for a
   delivered key is a protocol error.
11. A provider may send a call's end marker before the stop reason that says the output limit
   cut it (Anthropic: ``content_block_stop``, then ``message_delta`` with ``max_tokens``). So a
   call ended by its own marker (not by following, rule 9) before its choice's stop reason goes
   out with ``RawCall.stop_pending``; if its text stops mid-JSON (the normalizer's parse says so,
   and the composer hands it back with ``hold``) it waits, ``ENDED``, for that stop reason: one
   that stops the output where it is (``cutting``: the decoder's reasons for ``length``,
   ``content_filter`` or ``error``) delivers it cut off (``truncated``), as if the stop had come
   first; any other stop, or a new call on its key, delivers it as it is (``invalid_json``). Until
   then it counts as open: the end-of-stream marker, or an error, closes it as cut off (rule 5). A
   call whose text parses is never held.

The events about a turn's opaque state (reasoning blocks, signatures, server-side tools) are
not calls: they pass through unchanged, in order, for the turn stage (which owns their rules).

The accumulator never parses arguments: it hands each ``RawCall`` on, and the composer passes
it to the normalizer. ``PreviewingAccumulator`` (``_previewing``, loaded by the first stream that
asks for previews) also hands on, now and then, a ``RawPreview`` of an open call's text so far;
the plain ``Accumulator`` never pays for that option. With
``fragments=True`` it also hands on the ``CallOpened`` that opened each call and each
``ArgumentsDelta`` it kept, once each rule above has accepted them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from operator import attrgetter
from typing import Any, Protocol, get_args

from . import _log
from ._errors import LimitExceededError, ProviderError, ProviderProtocolError
from ._events import (
    TURN_EVENTS,
    AnomalyNoted,
    ArgumentsBatch,
    ArgumentsDelta,
    ArgumentsFinal,
    ArgumentsRepeated,
    ArgumentsValue,
    CallDetail,
    CallDisplaced,
    CallEnded,
    CallEvent,
    CallFollowed,
    CallOpened,
    CallReceived,
    ErrorReceived,
    Event,
    RawCall,
    RawPreview,
    ResponseEnded,
    StopReceived,
    TextReceived,
    TurnEvent,
    UsageReceived,
)
from ._limits import DEFAULT_LIMITS, KEY_BYTES, Limits, TurnBudget, held_size
from ._types import NO_STATE

__all__ = ("CALL_EVENTS", "STATES", "TRANSITIONS", "Accumulator", "Output")

Output = RawCall | TextReceived | ResponseEnded | RawPreview | TurnEvent | CallOpened | ArgumentsDelta
_NOTHING: tuple[Output, ...] = ()
_UNSET: Any = object()
#: Fragments kept as strings before they are packed into bytes. A 4-character fragment costs
#: about 60 bytes as a str object in a list; packed, 4 to 16 bytes. Packing every 64 fragments
#: keeps that overhead to a few KiB per call and costs ~1% of the time per fragment.
_PACK_AT = 64
_SEQ = attrgetter("seq")

# -- the call's life, as a table ------------------------------------------------------------------
#
# Everything that decides whether a call event is legal lives in ``TRANSITIONS``; the handlers
# below only do the work of a transition the table allows (and the checks on values that no
# state can express: an id or a name that changes, two different whole values, the limits).

IDLE = "IDLE"  # never started: no slot, not delivered (notes and call state may wait here)
OPEN = "OPEN"  # started; no arguments yet
TEXT = "TEXT"  # started; text fragments came
VALUE = "VALUE"  # started; a whole arguments value came
FOLLOWED = "FOLLOWED"  # text came, then a later call of its choice started: complete in sequential order
ENDED = "ENDED"  # its end marker came, its text stops mid-JSON: it waits for its stop reason (rule 11)
DELIVERED = "DELIVERED"  # handed out as a RawCall: the key starts again only as a new call (rule 10)
STATES = (IDLE, OPEN, TEXT, VALUE, FOLLOWED, ENDED, DELIVERED)

#: The events that belong to one call, keyed by ``(choice, index)``: the table's columns.
CALL_EVENTS: tuple[type, ...] = get_args(CallEvent)

#: ``TRANSITIONS[state][event type]``: the state the event leads to. A missing pair is illegal.
TRANSITIONS: dict[str, dict[type, str]] = {
    IDLE: {
        CallOpened: OPEN,
        CallReceived: DELIVERED,  # a whole call at once: started, given its value, ended
        CallDetail: IDLE,  # held until the call starts
        AnomalyNoted: IDLE,  # held until the call starts
    },
    OPEN: {
        CallOpened: OPEN,  # the identity again: set once, repeats noted
        ArgumentsDelta: TEXT,
        ArgumentsRepeated: TEXT,
        ArgumentsValue: VALUE,
        ArgumentsFinal: DELIVERED,  # no fragments: the final text is the arguments
        CallEnded: DELIVERED,
        CallReceived: DELIVERED,
        CallDetail: OPEN,
        AnomalyNoted: OPEN,
        CallFollowed: OPEN,  # no arguments yet: a call is never complete before they came
        CallDisplaced: DELIVERED,
    },
    TEXT: {
        CallOpened: TEXT,
        ArgumentsDelta: TEXT,  # many at once: ``ArgumentsBatch``, the hot path
        ArgumentsRepeated: TEXT,
        ArgumentsFinal: DELIVERED,  # compared with the joined fragments
        CallEnded: DELIVERED,
        CallDetail: TEXT,
        AnomalyNoted: TEXT,
        CallFollowed: FOLLOWED,
        CallDisplaced: DELIVERED,
    },
    VALUE: {
        CallOpened: VALUE,
        ArgumentsValue: VALUE,  # the same value again is a repeat; another is an error
        CallEnded: DELIVERED,
        CallReceived: DELIVERED,
        CallDetail: VALUE,
        AnomalyNoted: VALUE,
        CallFollowed: VALUE,  # a whole value is whole: following adds nothing
        CallDisplaced: DELIVERED,
    },
    FOLLOWED: {
        CallOpened: FOLLOWED,
        ArgumentsDelta: TEXT,  # the sequential order broken: noted, and written again
        ArgumentsRepeated: TEXT,
        ArgumentsFinal: DELIVERED,
        CallEnded: DELIVERED,
        CallDetail: FOLLOWED,
        AnomalyNoted: FOLLOWED,
        CallFollowed: FOLLOWED,
        CallDisplaced: DELIVERED,
    },
    ENDED: {  # held back by ``hold``; its choice's stop reason delivers it (rule 11)
        CallOpened: OPEN,  # as for DELIVERED, once the held call is delivered as it is
        ArgumentsFinal: ENDED,  # a repeated end marker
        CallEnded: ENDED,  # a repeated end marker: listed on the response (rule 4)
        CallFollowed: ENDED,  # ended already: following adds nothing
        CallDisplaced: DELIVERED,  # a new call took its place: delivered as it is
        AnomalyNoted: ENDED,  # too late to matter: dropped
    },
    DELIVERED: {
        CallOpened: OPEN,  # only as a new call with a new id (rule 10)
        ArgumentsFinal: DELIVERED,  # OpenAI Responses' second end marker: a repeat
        CallEnded: DELIVERED,  # a repeated end marker: listed on the response (rule 4)
        CallDisplaced: DELIVERED,  # delivered already, by a stop or by following: nothing
        AnomalyNoted: DELIVERED,  # too late to matter: dropped
    },
}

#: The states in which a followed call is complete: its arguments came (rule 9).
_COMPLETE_WHEN_FOLLOWED = (FOLLOWED, VALUE)

#: What a missing pair means, by state: the text of the protocol error.
_WHY = {
    IDLE: "the call never started",
    OPEN: "the call is open",
    TEXT: "a whole arguments value after text fragments",
    VALUE: "text after a whole arguments value",
    FOLLOWED: "a whole arguments value after text fragments",
    ENDED: "the call ended, and waits for the stop reason",
    DELIVERED: "the call was already delivered",
}


class PlainCall(Protocol):
    """An open call that takes fragments plainly (``Accumulator.plain_call``), for a reader that
    reads them past the table: each grows its text, and one that would take it past
    ``max_argument_bytes`` is refused (False, nothing changed) by the call itself, for the
    general path to read and raise."""

    def add(self, text: str) -> bool: ...

    def extend(self, texts: list[str]) -> bool: ...


class _Slot:
    """One open call. Its text is ``packed`` (UTF-8, once packing began) then ``parts``, of at
    most ``limit`` characters (rule 7), whichever path adds them."""

    __slots__ = (
        "anomalies",
        "held",
        "id",
        "index",
        "limit",
        "name",
        "opened",
        "packed",
        "parts",
        "phase",
        "seq",
        "size",
        "state",
        "value",
    )

    def __init__(self, index: int, id: str | None, name: str | None, limit: int) -> None:  # noqa: A002
        self.phase = OPEN  # the call's state in ``TRANSITIONS``
        self.limit = limit  # the most characters of text: ``max_argument_bytes``
        self.seq = 0  # its place among the calls opened, for the order of following (rule 9)
        self.index = index
        self.id = id
        self.name = name
        self.parts: list[str] = []
        self.packed: bytearray | None = None
        self.size = 0  # characters in packed and parts together
        self.value: Any = _UNSET
        self.anomalies: list[str] = []
        self.state: dict[str, str] | None = None  # the provider's per-call state, once some arrives
        self.opened = 0  # when the call opened (``time.time_ns``), when the accumulator keeps times
        self.held: RawCall | None = None  # ENDED: the call as it went out at its end marker (rule 11)

    def note(self, anomaly: str) -> bool:
        if anomaly in self.anomalies:
            return False
        self.anomalies.append(anomaly)
        return True

    def add(self, text: str) -> bool:
        """Append one fragment; ``False``, with nothing changed, when it would take the text past
        ``limit``."""
        size = self.size + len(text)
        if size > self.limit:
            return False
        self.parts.append(text)
        self.size = size
        if len(self.parts) >= _PACK_AT:
            self.pack()
        return True

    def extend(self, texts: list[str]) -> bool:
        """``add`` on every text at once, or on none."""
        size = self.size + sum(map(len, texts))
        if size > self.limit:
            return False
        self.parts += texts
        self.size = size
        if len(self.parts) >= _PACK_AT:
            self.pack()
        return True

    def overflow(self, texts: list[str]) -> None:
        """Keep ``texts`` as one at a time would have, up to and with the first past ``limit``:
        the text a ``LimitExceededError`` carries (nothing is added after it)."""
        for text in texts:
            self.parts.append(text)
            self.size += len(text)
            if self.size > self.limit:
                return

    def pack(self) -> None:
        # "surrogatepass": a fragment given as a payload may hold a lone surrogate; it
        # round-trips unchanged, and the one strict parse at the end judges it.
        joined = "".join(self.parts)
        self.parts.clear()  # before encoding: the text is never held three times over
        encoded = joined.encode("utf-8", "surrogatepass")
        del joined
        if self.packed is None:
            self.packed = bytearray(encoded)
        else:
            self.packed += encoded

    def text(self) -> str | None:
        """The joined fragments; ``None`` when no fragment arrived at all."""
        if self.packed is None:
            return "".join(self.parts) if self.parts else None
        if self.parts:
            self.pack()  # one decode of one buffer: the text is never held three times over
        return self.packed.decode("utf-8", "surrogatepass")


class Accumulator:
    """Feed provider events one at a time; get ``RawCall``s, text and the end marker back.

    With ``timed``, each ``RawCall`` carries when the call opened and when it ended: one clock
    read at each, and none at all without it.
    """

    def __init__(
        self,
        provider: str,
        limits: Limits = DEFAULT_LIMITS,
        budget: TurnBudget | None = None,
        *,
        fragments: bool = False,
        timed: bool = False,
        sequential: bool = False,
        early_close: bool = False,
        cutting: frozenset[str] = frozenset(),
    ) -> None:
        self.provider = provider
        self._fragments = fragments
        self._cutting = cutting  # the stop reasons that stop the output where it is (rule 11)
        self._sequential = sequential  # the decoder's call_order is "sequential" (rule 9)
        self._early_close = early_close
        self._clock: Callable[[], int] | None = time.time_ns if timed else None
        self._budget = TurnBudget(limits.max_turn_bytes) if budget is None else budget
        self._usage_sizes: dict[str, int] = {}  # usage key -> what its value counts in the budget
        self._max_argument_bytes = limits.max_argument_bytes
        self._max_open_calls = limits.max_open_calls
        self._max_calls = limits.max_calls
        self._max_choices = limits.max_choices
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.finished = False
        self._open: dict[tuple[int, int], _Slot] = {}
        self._delivered: set[tuple[int, int]] = set()
        self._calls = 0  # calls started, for max_calls: a key may start again (rule 10)
        self._ids: dict[tuple[int, str], tuple[int, int]] = {}  # (choice, call id) -> the call's key
        self._stops: set[int] = set()  # choices whose first stop reason came
        #: The response's anomalies, each listed once: what the rules above noted beyond one call.
        self.anomalies: list[str] = []
        self._notes: dict[tuple[int, int], list[str]] = {}
        self._states: dict[tuple[int, int], dict[str, str]] = {}  # state for calls not started yet
        self._choices: set[int] = set()  # choices with calls, text, turn state or a stop reason
        #: Rule 9: per choice, the calls whose arguments came since its last call started, the
        #: only ones a new call's following changes. The others were followed already, or are
        #: ``OPEN`` (never complete by following): visiting them again costs the square of the calls.
        self._unfollowed: dict[int, dict[tuple[int, int], None]] = {}

    def feed(self, event: Event) -> Sequence[Output]:
        return _HANDLERS[type(event)](self, event)

    def drain_open(self) -> list[RawCall]:
        """Close every open call as cut off, for an error that carries their raw text (a call that
        waits for its stop reason too: the stream ended before it came, rule 11)."""
        return [self._close(key, truncated=True) for key in list(self._open)]

    def hold(self, raw: RawCall) -> None:
        """Rule 11: ``raw`` (``stop_pending``) has text that stops mid-JSON; it waits, ``ENDED``,
        for its choice's stop reason to say whether the output limit cut it."""
        key = (raw.choice, raw.index)
        self._delivered.discard(key)
        slot = self._open[key] = _Slot(raw.index, raw.id, raw.name, self._max_argument_bytes)
        slot.phase = ENDED
        slot.held = raw

    def state_of(self, index: int, choice: int = 0) -> str:
        """The call's state in ``TRANSITIONS``."""
        slot = self._open.get((choice, index))
        if slot is not None:
            return slot.phase
        return DELIVERED if (choice, index) in self._delivered else IDLE

    # -- the table ------------------------------------------------------------------------------

    def _call_event(self, event: Any) -> Sequence[Output]:
        """Look the call's state and the event up in ``TRANSITIONS``, then do the work."""
        key = (event.choice, event.index)
        slot = self._open.get(key)
        state = slot.phase if slot is not None else DELIVERED if key in self._delivered else IDLE
        kind = type(event)
        after = TRANSITIONS[state].get(kind)
        if after is None:
            raise self._illegal(state, kind, event.index)
        if (kind is ArgumentsDelta or kind is ArgumentsRepeated) and not event.text:
            return _NOTHING  # an empty fragment carries nothing (rule 3)
        out = _ACTIONS[kind](self, key, slot, event)
        # IDLE -> OPEN made the slot OPEN, and a delivered call has none.
        if slot is not None and after is not state and after is not DELIVERED:
            slot.phase = after
            if self._sequential and (after is TEXT or after is VALUE):
                self._unfollowed.setdefault(key[0], {})[key] = None
        return out

    # -- the work of each transition ------------------------------------------------------------

    def _start(
        self, key: tuple[int, int], slot: _Slot | None, event: CallOpened, sent: str = "CallOpened"
    ) -> Sequence[Output]:
        """Open the call, or set its identity once; ``sent`` names the event the stream sent,
        for the errors (a ``CallReceived`` opens its call too)."""
        waiting = None
        if slot is not None and slot.phase is ENDED:  # ENDED -> OPEN: as for DELIVERED (rules 10, 11)
            if event.id is None or (key[0], event.id) in self._ids:
                raise self._illegal(ENDED, CallOpened, event.index)
            waiting, slot = slot, None
        if slot is not None:
            self._merge_identity(key, slot, event.id, event.name, sent)
            return _NOTHING
        again = key in self._delivered  # DELIVERED -> OPEN: only as a new call (rule 10)
        if again and (event.id is None or (key[0], event.id) in self._ids):
            raise self._illegal(DELIVERED, CallOpened, event.index)
        out = self._follow(key) if self._sequential else _NOTHING
        if waiting is not None:  # the new call takes its key: it goes as it is, first
            out = (self._close(key, truncated=False), *out)
            again = True
            try:
                self._check_new(key, event.id, sent)
            except LimitExceededError:  # still waiting: the error carries it, cut off
                self._open[key] = waiting
                self._delivered.discard(key)
                raise
        else:
            self._check_new(key, event.id, sent)
        self._delivered.discard(key)
        self._open[key] = slot = _Slot(event.index, event.id, event.name, self._max_argument_bytes)
        slot.seq = self._calls
        if self._clock is not None:
            slot.opened = self._clock()
        for note in self._notes.pop(key, ()):
            self._note(slot, note)
        if again:
            self._note(slot, "index_reused")
        slot.state = self._states.pop(key, None)
        return (*out, event) if self._fragments else out

    def _follow(self, key: tuple[int, int]) -> list[Output]:
        """Rule 9: the new call follows its choice's open calls; with ``early_close`` each one
        complete by that is delivered now, in the order the calls opened.

        Only the calls whose arguments came since the choice's last call started are visited:
        following changes no other open call, so each call is followed about once, not once per
        later call."""
        unfollowed = self._unfollowed.pop(key[0], None)
        if not unfollowed:
            return []
        open_calls = self._open
        # A key listed may have been delivered since, or started again as a call in ``OPEN``.
        slots = sorted((slot for other in unfollowed if (slot := open_calls.get(other)) is not None), key=_SEQ)
        out: list[Output] = []
        for slot in slots:
            self._call_event(CallFollowed(slot.index, key[0]))
            if self._early_close and slot.phase in _COMPLETE_WHEN_FOLLOWED:
                out += self._call_event(CallEnded(slot.index, key[0]))
        return out

    def _followed(self, key: tuple[int, int], slot: _Slot, event: CallFollowed) -> Sequence[Output]:
        return _NOTHING  # the table's new state is all that changes

    def _displaced(self, key: tuple[int, int], slot: _Slot | None, event: CallDisplaced) -> Sequence[Output]:
        return _NOTHING if slot is None else (self._close(key, truncated=False),)

    def _delta(self, key: tuple[int, int], slot: _Slot, event: ArgumentsDelta) -> Sequence[Output]:
        if slot.phase is FOLLOWED:  # the sequential order broken: the call is written again
            self._note(slot, "fragment_after_next_call")
        if not slot.add(event.text):
            raise self._too_long(slot, [event.text])
        return (event,) if self._fragments else _NOTHING

    def _batch(self, event: ArgumentsBatch) -> Sequence[Output]:
        """Many fragments of one call, where the table takes each as ``ArgumentsDelta`` to ``TEXT``:
        one lookup, and the limit checked fragment by fragment only when the batch would pass it.
        Anywhere else each fragment goes through the table alone, so the outcome and any error are
        those of feeding the fragments one by one."""
        slot = self._plain(event.index, event.choice)
        if slot is None:
            out: list[Output] = []
            for text in event.texts:
                out += self.feed(ArgumentsDelta(event.index, text, event.choice))
            return out
        if not slot.extend(event.texts):
            raise self._too_long(slot, event.texts)
        # Empty fragments are no text: the call stays OPEN until some came.
        if slot.size and slot.phase is not TEXT:
            slot.phase = TEXT
            if self._sequential:
                self._unfollowed.setdefault(event.choice, {})[event.choice, event.index] = None
        return _NOTHING

    def _plain(self, index: int, choice: int) -> _Slot | None:
        """The open call's slot where the table takes each fragment as ``ArgumentsDelta`` to
        ``TEXT`` and nothing but its text changes (no fragments or previews handed out)."""
        slot = self._open.get((choice, index))
        if (
            slot is None
            or TRANSITIONS[slot.phase].get(ArgumentsDelta) is not TEXT
            or slot.phase is FOLLOWED  # a fragment then is noted
            or self._fragments
            or type(self).feed is not Accumulator.feed
        ):
            return None
        return slot

    def plain_call(self, index: int, choice: int) -> PlainCall | None:
        """``_plain``, for a call already in ``TEXT``: a fragment it takes is then exactly what
        the table would do with it, and one it refuses is past ``max_argument_bytes``."""
        slot = self._plain(index, choice)
        return slot if slot is not None and slot.phase is TEXT else None

    def takes_text(self, choice: int) -> bool:
        """Whether a piece of the choice's text passes through unchanged, as it does once the
        choice is known (and no subclass reads the events)."""
        return choice in self._choices and type(self).feed is Accumulator.feed

    def _repeated(self, key: tuple[int, int], slot: _Slot, event: ArgumentsRepeated) -> Sequence[Output]:
        """A fragment that may be the whole arguments sent again after the deltas.

        A fragment equal to all the text before it can never complete a valid object (the text
        before it is either a complete object or an unbalanced prefix), so dropping it is safe.
        """
        if slot.size and slot.size == len(event.text) and slot.text() == event.text:
            self._note(slot, "arguments_resent")
            return _NOTHING
        return self._delta(key, slot, ArgumentsDelta(event.index, event.text, event.choice))

    def _value(self, key: tuple[int, int], slot: _Slot, event: ArgumentsValue) -> Sequence[Output]:
        if slot.value is not _UNSET:  # VALUE -> VALUE
            if slot.value != event.value:
                raise self._error_for(event.index, "ArgumentsValue", "two different arguments values for one call")
            self._note(slot, "arguments_resent")
            return _NOTHING
        slot.value = event.value
        return _NOTHING

    def _final(self, key: tuple[int, int], slot: _Slot | None, event: ArgumentsFinal) -> Sequence[Output]:
        if slot is None or slot.phase is ENDED:  # DELIVERED or ENDED: the second end marker
            return _NOTHING
        final, text = event.text, _UNSET
        out: Sequence[Output] = _NOTHING
        if slot.phase is TEXT:
            text = slot.text()
            if final is not None and text != final:
                # One of the two is wrong, and nothing says which: the normalizer never picks.
                self._note(slot, "final_arguments_differ")
        elif final:  # no fragments at all: the final text has nothing to contradict
            out = self.feed(ArgumentsDelta(event.index, final, event.choice))  # counted, previewed
            self._note(slot, "arguments_in_done")
        return (*out, self._close(key, truncated=False, text=text, marker=True))

    def _end(self, key: tuple[int, int], slot: _Slot | None, event: CallEnded) -> Sequence[Output]:
        if slot is None or slot.phase is ENDED:  # DELIVERED or ENDED: a repeated end marker
            self._note_response("end_repeated")
            return _NOTHING
        return (self._close(key, truncated=False, marker=True),)

    def _received(self, key: tuple[int, int], slot: _Slot | None, event: CallReceived) -> Sequence[Output]:
        opened: Sequence[Output] = _NOTHING
        if slot is None:  # IDLE -> DELIVERED
            opened = self._start(key, None, CallOpened(event.index, event.id, event.name, event.choice), "CallReceived")
            slot = self._open[key]
        else:
            self._merge_identity(key, slot, event.id, event.name, "CallReceived")
        self._value(key, slot, ArgumentsValue(event.index, event.arguments, event.choice))
        return (*opened, self._close(key, truncated=False))

    def _anomaly(self, key: tuple[int, int], slot: _Slot | None, event: AnomalyNoted) -> Sequence[Output]:
        if slot is not None:
            self._note(slot, event.anomaly)
        elif key not in self._delivered:  # IDLE: held until the call starts
            self._notes.setdefault(key, []).append(event.anomaly)
        return _NOTHING

    def _detail(self, key: tuple[int, int], slot: _Slot | None, event: CallDetail) -> Sequence[Output]:
        """Provider state for one call: kept for its ``RawCall``, and passed on for the turn.

        It may come before the call starts (held until it does), never after its delivery.
        """
        if slot is not None:
            state = slot.state
            if state is None:
                state = slot.state = {}
        else:
            state = self._states.setdefault(key, {})
        known = state.setdefault(event.key, event.value)
        if known != event.value:
            message = f"call state {event.key!r} changed from {known!r} to {event.value!r}"
            raise self._error_for(event.index, "CallDetail", message)
        return (event,)

    # -- events about the response --------------------------------------------------------------

    def _text(self, event: TextReceived | TurnEvent) -> Sequence[Output]:
        if event.choice not in self._choices:  # text and reasoning are held per choice too
            self._check_choice(event.choice, None)
        return (event,)

    def _stop(self, event: StopReceived) -> Sequence[Output]:
        self._check_choice(event.choice, None)
        if event.choice in self._stops:
            self._note_response("stop_reason_repeated")
        else:
            self._stops.add(event.choice)
            if event.choice == 0 or self.stop_reason is None:
                self.stop_reason = event.stop_reason
        if not self._open:
            return _NOTHING
        # A cut truncates the call still being written; a followed one was complete (rule 9); one
        # that ended mid-JSON was cut if the stop reason stops the output where it is (rule 11).
        keys = [key for key in self._open if key[0] == event.choice]
        cut, limit = event.cut_open_calls, event.stop_reason in self._cutting
        out: list[Output] = []
        for key in keys:
            phase = self._open[key].phase
            out.append(self._close(key, truncated=limit if phase is ENDED else cut and phase is not FOLLOWED))
        return out

    def _usage(self, event: UsageReceived) -> Sequence[Output]:
        # Merged into one dict in place: copying the merged dict on every event would cost time
        # in proportion to its size each time, the square of the usage in all. What it holds
        # counts in the turn's budget, each key by its latest value.
        sizes, budget = self._usage_sizes, self._budget
        for key, value in event.usage.items():
            size = KEY_BYTES + held_size(value, budget.limit)
            budget.add(size - sizes.get(key, 0), "usage")
            sizes[key] = size
        if self.usage is None:
            self.usage = dict(event.usage)
        else:
            self.usage.update(event.usage)
        return _NOTHING

    def _response_ended(self, event: ResponseEnded) -> Sequence[Output]:
        closed = self.drain_open() if self._open else _NOTHING
        self.finished = True
        return (*closed, event)

    def _error(self, event: ErrorReceived) -> Sequence[Output]:
        raise ProviderError(event.message, provider=self.provider, type=event.type)

    # -- rules ----------------------------------------------------------------------------------

    def _check_new(self, key: tuple[int, int], call_id: str | None, event: str) -> None:
        if len(self._open) >= self._max_open_calls:
            raise self._limit("max_open_calls", self._max_open_calls, key[1], "too many calls open at once")
        if self._calls >= self._max_calls:
            raise self._limit("max_calls", self._max_calls, key[1], "too many calls in one response")
        self._check_choice(key[0], key[1])
        if call_id is not None:
            self._claim_id(key, call_id, event)
        self._calls += 1

    def _claim_id(self, key: tuple[int, int], call_id: str, event: str) -> None:
        """Each id names one call of its choice: a second call with it, open or delivered, is an error."""
        seen = self._ids.get((key[0], call_id))
        if seen is not None and seen != key:
            raise self._error_for(key[1], event, f"call id {call_id!r} was already used at index {seen[1]}")
        self._ids[key[0], call_id] = key

    def _check_choice(self, choice: int, index: int | None) -> None:
        if choice not in self._choices:
            if len(self._choices) >= self._max_choices:
                raise self._limit("max_choices", self._max_choices, index, f"too many choices (choice {choice})")
            self._choices.add(choice)

    def _merge_identity(
        self, key: tuple[int, int], slot: _Slot, call_id: str | None, name: str | None, event: str
    ) -> None:
        if call_id is not None:
            if slot.id is None:
                self._claim_id(key, call_id, event)  # an id that arrives late is still unique
                slot.id = call_id
            elif call_id == slot.id:
                self._note(slot, "id_repeated")
            else:
                raise self._error_for(slot.index, event, f"call id changed from {slot.id!r} to {call_id!r}")
        if name is not None:
            if slot.name is None:
                slot.name = name
            elif name == slot.name:
                self._note(slot, "name_repeated")
            else:
                raise self._error_for(slot.index, event, f"tool name changed from {slot.name!r} to {name!r}")

    def _close(self, key: tuple[int, int], *, truncated: bool, text: Any = _UNSET, marker: bool = False) -> RawCall:
        """Deliver the call; ``text`` is its joined text when the caller has already joined it;
        ``marker``: its own end marker ended it (which a stop reason may yet revise: rule 11)."""
        slot = self._open.pop(key)
        self._delivered.add(key)
        if slot.held is not None:  # ENDED: out again, cut off or as it is
            return replace(slot.held, truncated=truncated, stop_pending=False)
        arguments = slot.value
        if arguments is _UNSET:
            arguments = slot.text() if text is _UNSET else text
        state = NO_STATE if slot.state is None else slot.state
        times = None if self._clock is None else (slot.opened, self._clock())
        anomalies = tuple(slot.anomalies)
        pending = marker and slot.phase is TEXT and key[0] not in self._stops  # rule 11
        return RawCall(slot.index, slot.id, slot.name, arguments, key[0], truncated, anomalies, state, times, pending)

    def _note_response(self, anomaly: str) -> None:
        if anomaly not in self.anomalies:
            self.anomalies.append(anomaly)
            _log.debug(__name__, "%s: %s", self.provider, anomaly)

    def _note(self, slot: _Slot, anomaly: str) -> None:
        if slot.note(anomaly):  # logged once per call: the rule's name, never the arguments
            _log.debug(__name__, "%s: call index %d: %s", self.provider, slot.index, anomaly)

    def _too_long(self, slot: _Slot, texts: list[str]) -> LimitExceededError:
        """The error for ``texts``, which ``slot`` refused: kept as one at a time would have kept
        them, so the call's raw text in the error is the same on every path."""
        slot.overflow(texts)
        limit = self._max_argument_bytes
        return self._limit("max_argument_bytes", limit, slot.index, f"the arguments grew to {slot.size} characters")

    def _limit(self, limit: str, value: int, index: int | None, message: str) -> LimitExceededError:
        where = "" if index is None else f"call index {index}: "
        _log.debug(__name__, "%s: %s%s (%s=%d)", self.provider, where, message, limit, value)
        return LimitExceededError(message, limit=limit, value=value, provider=self.provider, index=index)

    def _illegal(self, state: str, kind: type, index: int) -> ProviderProtocolError:
        message = f"not allowed in state {state}: {_WHY[state]}"
        return ProviderProtocolError(message, provider=self.provider, index=index, event=kind.__name__, state=state)

    def _error_for(self, index: int, event: str, message: str) -> ProviderProtocolError:
        return ProviderProtocolError(message, provider=self.provider, index=index, event=event)


#: The handler of each event type, called as ``handler(accumulator, event)``: built once, so a
#: response's accumulator costs no table of its own.
_HANDLERS: dict[type, Callable[[Accumulator, Any], Sequence[Output]]] = {
    **dict.fromkeys(CALL_EVENTS, Accumulator._call_event),
    **dict.fromkeys(TURN_EVENTS, Accumulator._text),
    CallDetail: Accumulator._call_event,  # a turn event that also belongs to one call
    ArgumentsBatch: Accumulator._batch,  # many ArgumentsDelta of one call, from the fast path
    TextReceived: Accumulator._text,
    StopReceived: Accumulator._stop,
    UsageReceived: Accumulator._usage,
    ResponseEnded: Accumulator._response_ended,
    ErrorReceived: Accumulator._error,
}
#: The work of each allowed transition, by event type: ``(accumulator, key, slot or None, event)``.
_ACTIONS: dict[type, Callable[[Accumulator, tuple[int, int], Any, Any], Sequence[Output]]] = {
    CallOpened: Accumulator._start,
    ArgumentsDelta: Accumulator._delta,
    ArgumentsRepeated: Accumulator._repeated,
    ArgumentsValue: Accumulator._value,
    ArgumentsFinal: Accumulator._final,
    CallEnded: Accumulator._end,
    CallReceived: Accumulator._received,
    CallDetail: Accumulator._detail,
    AnomalyNoted: Accumulator._anomaly,
    CallFollowed: Accumulator._followed,
    CallDisplaced: Accumulator._displaced,
}
