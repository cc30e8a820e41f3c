"""Provider events -> RawCalls at each call's end marker.

Rules (every rule about which sequences of events are legal lives in this module):

1. A call is keyed by ``(choice, index)``. It is *open* from its start until its end marker,
   then *delivered*; a key is never reused.
2. ``id`` and ``name`` are set once. The same value again is noted as an anomaly, never
   concatenated; a different non-empty value is a protocol error.
3. Argument fragments go into a per-call list, joined once at the end marker: the cost is
   linear in the size of the arguments. Arguments are either text fragments or one whole
   value, never both.
4. A fragment, a value or an end marker for a call that never started, or for a call already
   delivered, is a protocol error naming the index and the event. Exactly one delivery per call.
5. A stop reason closes the choice's open calls, as complete or as cut off, as the decoder
   says; the end-of-stream marker closes any call still open as cut off.
6. An error reported by the provider stops the stream (``ProviderError``); the calls still
   open can be drained with their raw text.

The events about a turn's opaque state (reasoning blocks, signatures, server-side tools) are
not calls: they pass through unchanged, in order, for the turn stage.

The accumulator never parses arguments: it hands each ``RawCall`` on, and the composer passes
it to the normalizer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._errors import ProviderError, ProviderProtocolError
from ._events import (
    TURN_EVENTS,
    AnomalyNoted,
    ArgumentsDelta,
    ArgumentsRepeated,
    ArgumentsValue,
    CallEnded,
    CallReceived,
    CallStarted,
    ErrorReceived,
    Event,
    RawCall,
    ResponseEnded,
    StopReceived,
    TextReceived,
    TurnEvent,
    UsageReceived,
)

__all__ = ("Accumulator", "Output")

Output = RawCall | TextReceived | ResponseEnded | TurnEvent
_NOTHING: tuple[Output, ...] = ()
_UNSET: Any = object()


class _Slot:
    """One open call."""

    __slots__ = ("anomalies", "id", "index", "name", "parts", "value")

    def __init__(self, index: int, id: str | None, name: str | None) -> None:  # noqa: A002
        self.index = index
        self.id = id
        self.name = name
        self.parts: list[str] = []
        self.value: Any = _UNSET
        self.anomalies: list[str] = []

    def note(self, anomaly: str) -> None:
        if anomaly not in self.anomalies:
            self.anomalies.append(anomaly)


class Accumulator:
    """Feed provider events one at a time; get ``RawCall``s, text and the end marker back."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.finished = False
        self._open: dict[tuple[int, int], _Slot] = {}
        self._delivered: set[tuple[int, int]] = set()
        self._ids: dict[str, tuple[int, int]] = {}
        self._notes: dict[tuple[int, int], list[str]] = {}
        self._stop_seen: set[int] = set()
        self._handlers: dict[type, Callable[[Any], Sequence[Output]]] = {
            CallStarted: self._start,
            ArgumentsDelta: self._delta,
            ArgumentsRepeated: self._repeated,
            ArgumentsValue: self._value,
            CallEnded: self._end,
            CallReceived: self._received,
            AnomalyNoted: self._anomaly,
            TextReceived: self._text,
            StopReceived: self._stop,
            UsageReceived: self._usage,
            ResponseEnded: self._response_ended,
            ErrorReceived: self._error,
        }
        self._handlers.update(dict.fromkeys(TURN_EVENTS, self._text))

    def feed(self, event: Event) -> Sequence[Output]:
        if type(event) is ArgumentsDelta:  # the hot path: one event per fragment
            slot = self._open.get((event.choice, event.index))
            if slot is not None and slot.value is _UNSET:
                slot.parts.append(event.text)
                return _NOTHING
        return self._handlers[type(event)](event)

    def drain_open(self) -> list[RawCall]:
        """Close every open call as cut off, for an error that carries their raw text."""
        return [self._close(key, truncated=True) for key in list(self._open)]

    # -- handlers -----------------------------------------------------------------------------

    def _start(self, event: CallStarted) -> Sequence[Output]:
        key = (event.choice, event.index)
        slot = self._open.get(key)
        if slot is None:
            self._check_new(key, event.id, "CallStarted")
            self._open[key] = slot = _Slot(event.index, event.id, event.name)
            for note in self._notes.pop(key, ()):
                slot.note(note)
            return _NOTHING
        self._merge_identity(slot, event.id, event.name, "CallStarted")
        return _NOTHING

    def _delta(self, event: ArgumentsDelta) -> Sequence[Output]:
        slot = self._require_open(event.choice, event.index, "ArgumentsDelta")
        if slot.value is not _UNSET:
            raise self._error_for(event.index, "ArgumentsDelta", "text fragments after a whole arguments value")
        slot.parts.append(event.text)
        return _NOTHING

    def _repeated(self, event: ArgumentsRepeated) -> Sequence[Output]:
        """A fragment that may be the whole arguments sent again after the deltas.

        A fragment equal to all the text before it can never complete a valid object (the text
        before it is either a complete object or an unbalanced prefix), so dropping it is safe.
        """
        slot = self._require_open(event.choice, event.index, "ArgumentsDelta")
        if slot.parts and sum(map(len, slot.parts)) == len(event.text) and "".join(slot.parts) == event.text:
            slot.note("arguments_resent")
            return _NOTHING
        return self._delta(ArgumentsDelta(event.index, event.text, event.choice))

    def _value(self, event: ArgumentsValue) -> Sequence[Output]:
        slot = self._require_open(event.choice, event.index, "ArgumentsValue")
        if slot.parts and any(slot.parts):
            raise self._error_for(event.index, "ArgumentsValue", "a whole arguments value after text fragments")
        if slot.value is not _UNSET:
            if slot.value != event.value:
                raise self._error_for(event.index, "ArgumentsValue", "two different arguments values for one call")
            slot.note("arguments_resent")
            return _NOTHING
        slot.value = event.value
        return _NOTHING

    def _end(self, event: CallEnded) -> Sequence[Output]:
        self._require_open(event.choice, event.index, "CallEnded")
        return (self._close((event.choice, event.index), truncated=False),)

    def _received(self, event: CallReceived) -> Sequence[Output]:
        key = (event.choice, event.index)
        slot = self._open.get(key)
        if slot is None:
            self._start(CallStarted(event.index, event.id, event.name, event.choice))
        else:
            self._merge_identity(slot, event.id, event.name, "CallReceived")
        self._value(ArgumentsValue(event.index, event.arguments, event.choice))
        return (self._close(key, truncated=False),)

    def _anomaly(self, event: AnomalyNoted) -> Sequence[Output]:
        key = (event.choice, event.index)
        slot = self._open.get(key)
        if slot is not None:
            slot.note(event.anomaly)
        elif key not in self._delivered:
            self._notes.setdefault(key, []).append(event.anomaly)
        return _NOTHING

    def _text(self, event: TextReceived | TurnEvent) -> Sequence[Output]:
        return (event,)

    def _stop(self, event: StopReceived) -> Sequence[Output]:
        if event.choice == 0 or self.stop_reason is None:
            self.stop_reason = event.stop_reason
        self._stop_seen.add(event.choice)
        keys = [key for key in self._open if key[0] == event.choice]
        return [self._close(key, truncated=event.cut_open_calls) for key in keys]

    def _usage(self, event: UsageReceived) -> Sequence[Output]:
        self.usage = {**(self.usage or {}), **event.usage}
        return _NOTHING

    def _response_ended(self, event: ResponseEnded) -> Sequence[Output]:
        out: list[Output] = [self._close(key, truncated=True) for key in list(self._open)]
        self.finished = True
        out.append(event)
        return out

    def _error(self, event: ErrorReceived) -> Sequence[Output]:
        raise ProviderError(event.message, provider=self.provider, type=event.type)

    # -- rules ----------------------------------------------------------------------------------

    def _check_new(self, key: tuple[int, int], call_id: str | None, event: str) -> None:
        if key in self._delivered:
            raise self._error_for(key[1], event, "a call at an index that was already delivered")
        if call_id is not None:
            seen = self._ids.get(call_id)
            if seen is not None:
                raise self._error_for(key[1], event, f"call id {call_id!r} was already used at index {seen[1]}")
            self._ids[call_id] = key

    def _merge_identity(self, slot: _Slot, call_id: str | None, name: str | None, event: str) -> None:
        if call_id is not None:
            if slot.id is None:
                slot.id = call_id
            elif call_id == slot.id:
                slot.note("id_repeated")
            else:
                raise self._error_for(slot.index, event, f"call id changed from {slot.id!r} to {call_id!r}")
        if name is not None:
            if slot.name is None:
                slot.name = name
            elif name == slot.name:
                slot.note("name_repeated")
            else:
                raise self._error_for(slot.index, event, f"tool name changed from {slot.name!r} to {name!r}")

    def _require_open(self, choice: int, index: int, event: str) -> _Slot:
        slot = self._open.get((choice, index))
        if slot is None:
            if (choice, index) in self._delivered:
                raise self._error_for(index, event, "arrived for a call that was already delivered")
            raise self._error_for(index, event, "arrived for a call that never started")
        return slot

    def _close(self, key: tuple[int, int], *, truncated: bool) -> RawCall:
        slot = self._open.pop(key)
        self._delivered.add(key)
        arguments = slot.value if slot.value is not _UNSET else ("".join(slot.parts) if slot.parts else None)
        return RawCall(slot.index, slot.id, slot.name, arguments, key[0], truncated, tuple(slot.anomalies))

    def _error_for(self, index: int, event: str, message: str) -> ProviderProtocolError:
        return ProviderProtocolError(message, provider=self.provider, index=index, event=event)
