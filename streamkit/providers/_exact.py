"""What a decoder does with an event orjson cannot read as it is, or may have read inexactly:
read it exactly (an integer beyond 64 bits), or else read it with each arguments value that no
reader takes set aside as its call's raw text (the decoder's ``value_paths``).

A part of the decoders' base (``Decoder._refused`` and its kin call here), in a module of its
own so that a stream of plain JSON never loads it, nor the exact reader (``_json``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import orjson

from .._errors import ProviderProtocolError
from .._events import ArgumentsValue, CallReceived, Event
from .._inexact import may_be_inexact
from .._json import big_integer_at, has_lone_surrogate, loads_exact, twin, value_spans
from ._base import _value

if TYPE_CHECKING:
    from ._base import Decoder

__all__ = ("apart", "exact", "load_exact", "refused", "unloaded")

#: The key of the object put in place of an arguments value set aside; the number beside it
#: is the value's place in the raw texts set aside.
_ASIDE = "\x00streamkit: set aside"
#: The deepest nesting orjson reads (its own limit, fixed): a value read alone may pass it
#: under the levels of the event around it.
_READER_DEPTH = 1024


def refused(decoder: Decoder, data: str, exc: orjson.JSONDecodeError, event: str | None) -> list[Event]:
    """``feed`` for data orjson refused: read exactly (an integer beyond 64 bits), or else
    with each arguments value that no reader takes set aside as its raw text (``value_paths``).
    What is set aside must come back whole as a call's arguments; if not, the data is not JSON."""
    try:
        payload = unloaded(decoder, data, exc, event)
    except ProviderProtocolError as error:
        return apart(decoder, data, error, event)
    return _read_exactly(decoder, decoder.feed_payload(payload, event), payload, data)


def apart(decoder: Decoder, data: str, error: ProviderProtocolError, event: str | None) -> list[Event]:
    """``feed`` for data no reader takes: its events with each arguments value no reader takes
    set aside as its call's raw text (``value_paths``), else ``error``."""
    aside = _set_aside(decoder, data) if decoder.value_paths else None
    if aside is None:
        raise error
    text, raws = aside
    try:
        payload = decoder.load(text, event)
    except ProviderProtocolError:
        raise error from None
    events = _put_back(_read_exactly(decoder, decoder.feed_payload(payload, event), payload, text), raws)
    if events is None:
        raise error from None
    return events


def _read_exactly(decoder: Decoder, events: list[Event], payload: Any, data: str) -> list[Event]:
    """``events``, or ``exact``'s when an arguments value in them may be read inexactly
    (what ``feed`` does after its common case)."""
    if any(_holds_value(item) and may_be_inexact(_value(item)) for item in events):
        return exact(decoder, events, payload, data)
    return events


def _set_aside(decoder: Decoder, data: str) -> tuple[str, list[str]] | None:
    """``data`` with each value at ``value_paths`` that ``load`` does not read, there, in its
    place, replaced by an object naming it, and their raw texts; ``None`` when there is none,
    or the structure of ``data`` cannot be followed to find them."""
    spans = value_spans(data, decoder.value_paths)
    if not spans:
        return None
    pieces: list[str] = []
    raws: list[str] = []
    done = 0
    for start, end, depth in spans:
        raw = data[start:end]
        if depth <= _READER_DEPTH and _readable(decoder, raw):
            continue
        pieces += (data[done:start], orjson.dumps({_ASIDE: len(raws)}).decode())
        raws.append(raw)
        done = end
    if not raws:
        return None
    pieces.append(data[done:])
    return "".join(pieces), raws


def _readable(decoder: Decoder, text: str) -> bool:
    """Whether ``load`` reads ``text``, a value's JSON, as it reads an event's."""
    try:
        decoder.load(text, None)
    except ProviderProtocolError:
        return False
    return True


def unloaded(decoder: Decoder, data: str, exc: orjson.JSONDecodeError, event: str | None) -> Any:
    """What ``data``, which orjson refused, holds: read exactly when orjson refused an integer
    beyond 64 bits, else the protocol error."""
    if big_integer_at(data, exc.msg, exc.pos):
        return load_exact(decoder, data, event)
    raise _not_json(decoder, data, exc.msg, event) from None


def exact(decoder: Decoder, events: list[Event], payload: Any, data: str) -> list[Event]:
    """``events`` decoded from ``payload`` (orjson's read of ``data``), with each arguments
    value read again exactly, for ``feed`` when orjson may have read an integer in one as a
    float. Only the whole values a call's arguments arrive as are checked (Gemini's
    ``args``, Ollama's ``arguments``, an object in OpenAI Chat's), so frames of text
    fragments cost nothing more."""
    read = load_exact(decoder, data, None)
    return [_with_value(item, twin(payload, read, _value(item))) if _holds_value(item) else item for item in events]


def load_exact(decoder: Decoder, data: str, event: str | None) -> Any:
    """``data`` read by the exact reader, held to orjson's rules, else the protocol error."""
    try:
        value = loads_exact(data)
    except (ValueError, RecursionError) as exc:  # json.JSONDecodeError is a ValueError
        raise _not_json(decoder, data, str(exc), event) from None
    if has_lone_surrogate(value):
        raise _not_json(decoder, data, "a lone surrogate escape", event)
    return value


def _not_json(decoder: Decoder, data: str, reason: str, event: str | None) -> ProviderProtocolError:
    excerpt = data[:80] + ("..." if len(data) > 80 else "")
    return decoder.error(f"event data is not JSON ({reason}): {excerpt!r}", event=event)


def _put_back(events: list[Event], raws: list[str]) -> list[Event] | None:
    """``events`` with each value set aside back as its raw text, the call's arguments; ``None``
    unless each came back once, whole, as a call's arguments (a value the decoder reads
    otherwise, or copies, or drops, cannot be handed on as text)."""
    back: set[int] = set()
    out: list[Event] = []
    for item in events:
        if _holds_value(item):
            value = _value(item)
            if type(value) is dict and len(value) == 1 and type(place := value.get(_ASIDE)) is int:
                if place in back or not 0 <= place < len(raws):
                    return None
                back.add(place)
                item = _with_value(item, raws[place])
        out.append(item)
    return out if len(back) == len(raws) else None


def _holds_value(item: Event) -> bool:
    kind = type(item)
    return kind is ArgumentsValue or kind is CallReceived


def _with_value(item: Event, value: Any) -> Event:
    if isinstance(item, ArgumentsValue):
        return replace(item, value=value)
    assert isinstance(item, CallReceived)
    return replace(item, arguments=value)
