"""Values passed between stages: frames, provider events and raw calls.

A framer turns bytes into ``Frame``s; a provider decoder turns frames (or already-decoded
payloads) into the events below; the accumulator turns those into ``RawCall``s at each call's
end marker. Events are slotted dataclasses (``_values.event``), built positionally on the hot
path (one per argument fragment), frozen for the type checker: a frozen dataclass's ``__init__``
sets each field through ``object.__setattr__``, about three times the cost of a plain one, and
nothing assigns a field after it. Every per-call event carries the provider's ``index`` and the
``choice`` it belongs to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Final, TypeAlias

from ._values import event

__all__ = (
    "AnomalyNoted",
    "ArgumentsDelta",
    "ArgumentsFinal",
    "ArgumentsRepeated",
    "ArgumentsValue",
    "BlockDelta",
    "BlockEnded",
    "BlockReceived",
    "BlockStarted",
    "CallDetail",
    "CallDisplaced",
    "CallEnded",
    "CallEvent",
    "CallFollowed",
    "CallOpened",
    "CallReceived",
    "ErrorReceived",
    "Event",
    "Frame",
    "ArgumentsBatch",
    "Payloads",
    "RawCall",
    "RawPreview",
    "ResponseEnded",
    "StopReceived",
    "TURN_EVENTS",
    "TextReceived",
    "TurnEvent",
    "UsageReceived",
)


@event
class Frame:
    """One framed message: an SSE event, an NDJSON line, an AWS event-stream message.

    ``event`` is the SSE event name (``None`` when the stream sent none) or the event-stream
    ``:event-type``; ``data`` is the payload text, not yet parsed.
    """

    event: str | None
    data: str


class Payloads:
    """The ``data`` of consecutive SSE events of the common shape, as bytes, from one read.

    A framer hands these over in one batch instead of a ``Frame`` each: no ``str`` is decoded
    and no object is built per event. The bytes are proved UTF-8 before they are handed over.
    ``events`` holds each event's name (``None`` for none), or is ``None`` when no event had one.
    """

    __slots__ = ("data", "events")

    def __init__(self, events: Sequence[str | None] | None, data: Sequence[bytes]) -> None:
        self.events: Final = events
        self.data: Final = data

    def frames(self) -> list[Frame]:
        """The same events as ``Frame``s."""
        names = self.events or [None] * len(self.data)
        return [Frame(name, value.decode()) for name, value in zip(names, self.data, strict=True)]


@event
class CallOpened:
    """A call opened: its id and name, set once. With ``fragments=True`` the public
    ``CallStarted`` is made from it, once the accumulator has accepted it."""

    index: int
    id: str | None
    name: str | None
    choice: int = 0


@event
class ArgumentsDelta:
    """One verbatim fragment of a call's argument text."""

    index: int
    text: str
    choice: int = 0


@event
class ArgumentsBatch:
    """Consecutive verbatim fragments of one call's argument text, from one read: the same as
    an ``ArgumentsDelta`` for each, in order, with one lookup of the call for all of them."""

    index: int
    texts: list[str]
    choice: int = 0


@event
class ArgumentsRepeated:
    """A fragment that repeats the call's identity: perhaps the whole arguments sent again.

    Some gateways re-send the full arguments after the deltas; the accumulator drops such a
    fragment only when it equals all the text before it, and appends it otherwise.
    """

    index: int
    text: str
    choice: int = 0


@event
class ArgumentsValue:
    """A call's whole arguments given at once as a value (an object, ``None``…), not text."""

    index: int
    value: Any
    choice: int = 0


@event
class ArgumentsFinal:
    """A call's end marker that also carries the provider's final arguments text.

    OpenAI Responses ends each call twice (``function_call_arguments.done``, then the item's
    ``output_item.done``), each time with the whole ``arguments``: the first ends the call and
    is compared with the joined fragments, the second is a repeat. ``text`` is ``None`` when the
    end event carried no arguments.
    """

    index: int
    text: str | None
    choice: int = 0


@event
class CallEnded:
    """The provider's end marker for one call: parse it now."""

    index: int
    choice: int = 0


@event
class CallDisplaced:
    """A later call took this call's place (its wire index, or the place of the next call
    without one): the call has ended, unless a stop or the call order already delivered it.
    The decoder says where calls are; whether this one is still open is the accumulator's."""

    index: int
    choice: int = 0


@event
class CallFollowed:
    """A later call of the same choice started. Under a decoder's sequential ``call_order`` a
    call with its arguments is then complete; the accumulator makes this event, no decoder."""

    index: int
    choice: int = 0


@event
class CallReceived:
    """A whole call in one event: started, given its arguments and ended at once."""

    index: int
    id: str | None
    name: str | None
    arguments: Any
    choice: int = 0


@event
class AnomalyNoted:
    """A reconciliation rule fired for a call (a repeated id, a missing index…)."""

    index: int
    anomaly: str
    choice: int = 0


@event
class TextReceived:
    """A piece of assistant text; ``index`` is its content block or output item, where the provider numbers them."""

    text: str
    choice: int = 0
    index: int | None = None


@event
class StopReceived:
    """The provider's stop or finish reason for one choice.

    ``cut_open_calls`` says what happens to the choice's calls that are still open: ``False``
    when the stop is their end marker (OpenAI Chat's ``finish_reason``), ``True`` when they were
    cut off (a length limit, or a provider whose calls have end markers of their own).
    """

    stop_reason: str | None
    cut_open_calls: bool
    choice: int = 0


@event
class UsageReceived:
    """Token usage; later pieces are merged over earlier ones."""

    usage: dict[str, Any]


@event
class ResponseEnded:
    """The provider's end-of-stream marker (``[DONE]``, ``message_stop``…)."""


@event
class ErrorReceived:
    """The provider reported an error inside the stream."""

    type: str | None
    message: str


@event
class BlockStarted:
    """A block of opaque turn state opened: a reasoning block, a server-side tool's use.

    ``kind`` is ``"thinking"`` or ``"server_tool_use"``; ``block`` holds what the start gave
    (a server tool's ``type``, ``id`` and ``name``), exactly as received. Blocks are keyed by
    ``(choice, index)`` in a space of their own, apart from the calls.
    """

    index: int
    kind: str
    block: dict[str, Any]
    choice: int = 0


@event
class BlockDelta:
    """One verbatim fragment of an open block's ``part``: ``"text"``, ``"signature"`` or ``"input"``."""

    index: int
    part: str
    text: str
    choice: int = 0


@event
class BlockEnded:
    """An open block's end: its fragments are joined, once, and it is handed out."""

    index: int
    choice: int = 0


@event
class BlockReceived:
    """A whole block of turn state at once, exactly as received.

    ``kind`` names the public value it becomes: ``"redacted_thinking"``, ``"reasoning_item"``,
    ``"server_tool_use"``, ``"server_tool_result"``, ``"message_item"`` or ``"text_signature"``.
    """

    kind: str
    block: dict[str, Any]
    choice: int = 0


@event
class CallDetail:
    """Provider state that belongs to one call (Gemini's ``thoughtSignature``, a Responses item id).

    It comes before the call's end marker (the accumulator puts it on the call's ``state``), and
    goes on to the turn stage as a ``CallState``.
    """

    index: int
    key: str
    value: str
    choice: int = 0


TurnEvent: TypeAlias = BlockStarted | BlockDelta | BlockEnded | BlockReceived | CallDetail
#: The events about a turn's opaque state: passed through the accumulator, in order, untouched.
TURN_EVENTS: frozenset[type] = frozenset({BlockStarted, BlockDelta, BlockEnded, BlockReceived, CallDetail})


#: The events that belong to one call, keyed by ``(choice, index)``: the columns of the
#: accumulator's table of a call's life.
CallEvent: TypeAlias = (
    CallOpened
    | ArgumentsDelta
    | ArgumentsRepeated
    | ArgumentsValue
    | ArgumentsFinal
    | CallEnded
    | CallReceived
    | CallDetail
    | AnomalyNoted
    | CallFollowed
    | CallDisplaced
)


Event: TypeAlias = (
    CallOpened
    | ArgumentsDelta
    | ArgumentsBatch
    | ArgumentsRepeated
    | ArgumentsValue
    | ArgumentsFinal
    | CallEnded
    | CallDisplaced
    | CallFollowed
    | CallReceived
    | AnomalyNoted
    | TextReceived
    | StopReceived
    | UsageReceived
    | ResponseEnded
    | ErrorReceived
    | TurnEvent
)


@event
class RawCall:
    """A call at its end marker, arguments joined but not parsed: the normalizer's input.

    ``arguments`` is the joined text, or the value exactly as the provider gave it; ``state``
    the provider's per-call state (from ``CallDetail`` events); ``times`` when its first event
    and its end marker were read, from an accumulator that keeps times.
    """

    index: int
    id: str | None
    name: str | None
    arguments: Any
    choice: int = 0
    truncated: bool = False
    anomalies: tuple[str, ...] = ()
    state: Mapping[str, str] = field(default_factory=dict)
    times: tuple[int, int] | None = None  # (first fragment, end marker), ns, when timed
    #: Its own end marker ended it before its choice's stop reason: if its text stops mid-JSON,
    #: the composer hands it back to wait for that stop reason (the accumulator's rule 11).
    stop_pending: bool = field(default=False, compare=False)


@event
class RawPreview:
    """A call's argument text so far, handed out while it streams when previews are asked for.

    Only a preview: the call itself is still open, and is delivered as a ``RawCall`` at its
    end marker.
    """

    index: int
    id: str | None
    name: str | None
    text: str
    choice: int = 0
