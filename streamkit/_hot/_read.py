"""``HotRead``: one stage crossing for a read that only continues what the stages proved.

A token-streaming server flushes each SSE event as it is made, so most reads are one event, and
most events are one more fragment of the call already open, or one more piece of text. After a
read through the general path, the stages may each have proved something: the framer that it
stands between two events with nothing held, the decoder the byte template of the open call's
plain fragments or of the text (every payload of that shape is one fragment of that call, or
one piece of that choice's text, and changes none of its state), the accumulator that the call
takes fragments plainly (it is in ``TEXT``, with no fragments or previews to hand out) or that
it passes the choice's text through. With all three, a read that is exactly one such event (the
SSE header and the template's prefix, one JSON string token, the template's suffix, the blank
line, each as the framer writes them: ``SSEDecoder.event_head``, ``EVENT_END``) is read here:
one ``endswith``, one ``startswith`` and one ``count`` of its line ends (or, when the suffix
holds an unread string, one ``fullmatch``), one strict ``orjson.loads``, then one append to the
call's text or one ``TextDelta``. Anything else (two events, a partial one,
another shape, a token that does not parse, a fragment that would pass ``max_argument_bytes``)
gives None with nothing changed, and the general path reads it. A read that ends inside an
event (reads of a fixed size) leaves that event's start ``held`` here, to be read with the next
read; when the hot read is dropped, the held bytes go to the general path ahead of the next read,
as one read of both would (no event completes in them: they hold no ``EVENT_END``, and nothing
the framer would not hold, ``SSEDecoder.may_hold``). The
bookkeeping the stages would have done (the framer's byte offset, the template's hit count) is
settled then too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from .._accumulator import Accumulator, PlainCall
from .._sse import EVENT_END, SSEDecoder
from .._types import TextDelta
from ._template import Template

if TYPE_CHECKING:
    from .._turn_types import StreamEvent
    from ._learn import TemplateReader

__all__ = ("HotRead", "arm", "text_delta")

_loads = orjson.loads
_END, _ENDS = EVENT_END, len(EVENT_END)
_BAD = orjson.JSONDecodeError


class HotRead:
    """Armed over one call's proved template; see the module's docstring."""

    __slots__ = (
        "breaks",
        "choice",
        "cut",
        "event_limit",
        "framer",
        "head",
        "held",
        "index",
        "match",
        "may_hold",
        "reads",
        "size",
        "slot",
        "start",
        "template",
        "text",
        "whole",
    )

    def __init__(self, framer: SSEDecoder, template: Template, slot: PlainCall | None, *, text: bool = True) -> None:
        self.framer = framer
        self.template = template
        self.choice, self.index = template.choice, template.index  # a text's place
        self.head = framer.event_head(template.event) + template.prefix
        self.may_hold = framer.may_hold
        self.start = len(self.head) - 1  # the token's opening quote
        #: What a whole event of the shape ends with, from its token's closing quote on, when the
        #: suffix holds no unread string (``take``'s common read); None when it holds one.
        self.whole = None if template.suffix is None else template.suffix + _END
        self.cut = 1 - len(self.whole or b"")  # the token's end, counted from the read's end
        self.breaks = self.head.count(b"\n") + _ENDS  # the line ends of one such event
        self.match = template.match
        self.slot = slot
        self.text = text  # whether a piece of text is handed on as a TextDelta, or only read
        self.event_limit = template.most  # a longer event is the general path's, read within its bound
        self.reads = 0
        self.size = 0
        self.held = b""  # the start of an event that the last read ended inside

    def take(self, data: bytes) -> list[StreamEvent] | None:
        """What ``data`` gives if it is whole events of the template's shape (after the bytes
        held from the last read, and before the start of one more); None, with nothing changed,
        otherwise."""
        held = self.held
        if not held and self.whole is not None and data.endswith(self.whole):
            # Whole events, nothing held, the last of the template's shape, whose suffix holds no
            # unread string: the common read, one event, needs no pattern. Its token runs from
            # the head's last quote to the suffix's first; with no line end between them, those
            # bytes are the token the pattern would find when they are one JSON string (orjson
            # judges, strictly), and no token at all when they are not.
            if not data.startswith(self.head) or len(data) > self.event_limit:
                return None
            if data.count(b"\n") != self.breaks:  # several events: a line end before the last
                return self._take_several(data, b"")
            token, tail = data[self.start : self.cut], b""
        else:
            if held:
                data = held + data
            if data.endswith(_END):
                tail = b""
            else:
                end = data.rfind(_END) + _ENDS
                tail = data[end:] if end >= _ENDS else data
                if len(tail) > self.event_limit or not self.may_hold(tail):
                    return None
                if end < _ENDS:  # still inside the event: held whole, once (held twice, the framer's
                    if held:  # growing buffer is the way that stays linear)
                        return None
                    self.held = tail
                    return []
                data = data[:end]
            if not data.startswith(self.head) or len(data) > self.event_limit:
                return None
            found = self.match(data, self.start, len(data) - _ENDS)
            if found is None:
                return self._take_several(data, tail)
            token = found.group(1)
        try:
            text: str = _loads(token)
        except _BAD:
            return None
        if not text:  # the pattern takes no empty string
            return None
        slot = self.slot
        if slot is None:
            out: list[StreamEvent] = [text_delta(text, self.choice, self.index)] if self.text else []
        elif slot.add(text):
            out = []
        else:
            return None  # past max_argument_bytes: the general path raises, naming the call
        self.reads += 1
        self.size += len(data)
        self.held = tail
        return out

    def _take_several(self, data: bytes, tail: bytes) -> list[StreamEvent] | None:
        """``take``, for a read of several whole events."""
        try:
            texts = self._several(data)
        except _BAD:
            return None
        if not texts:
            return None
        slot = self.slot
        if slot is None:
            out: list[StreamEvent] = [text_delta(text, self.choice, self.index) for text in texts] if self.text else []
        elif slot.extend(texts):
            out = []
        else:
            return None  # past max_argument_bytes: the general path raises, naming the call
        self.reads += len(texts)
        self.size += len(data)
        self.held = tail
        return out

    def _several(self, data: bytes) -> list[str]:
        """The texts of a read of several whole events, each of the template's shape; none if
        any is not. Split at the blank lines, each piece must be one event (its header, the
        prefix, one token, the suffix: no line end but the header's), so the pieces are exactly
        the events the framer would find."""
        head, match, start = self.head, self.match, self.start
        tokens: list[bytes] = []
        for piece in data[:-_ENDS].split(_END):
            found = match(piece, start) if piece.startswith(head) else None
            if found is None:
                return []
            tokens.append(found.group(1))
        return _loads(b"[" + b",".join(tokens) + b"]")  # type: ignore[no-any-return]  # tokens in quotes

    def settle(self) -> bytes:
        """Hand the stages their bookkeeping; the bytes held, which the general path reads next."""
        self.framer.passed(self.size)
        self.template.hits += self.reads
        return self.held


_new = object.__new__
_fields = vars(TextDelta)  # the slots' descriptors
_set_text, _set_choice, _set_index = (_fields[name].__set__ for name in ("text", "choice", "index"))


def text_delta(text: str, choice: int, index: int | None) -> TextDelta:
    """``TextDelta(text, choice=choice, index=index)``, its slots set directly: a frozen
    dataclass's ``__init__`` sets each field through ``object.__setattr__``, which costs twice as
    much, and a turn's text is most of its events."""
    delta: TextDelta = _new(TextDelta)
    _set_text(delta, text)
    _set_choice(delta, choice)
    _set_index(delta, index)
    return delta


def arm(framer: object, reader: TemplateReader, accumulator: Accumulator, *, text: bool = True) -> HotRead | None:
    """A hot read, when the three stages have each proved their part (the decoder's through
    ``reader``, its template); else None. The framer hands over what it holds last, once the
    other two agreed."""
    if type(framer) is not SSEDecoder:
        return None
    template = reader.template
    if template is None:
        return None
    slot = None
    if template.is_text:
        if not accumulator.takes_text(template.choice):
            return None
    else:
        assert template.index is not None  # a call's fragment always has its index
        slot = accumulator.plain_call(template.index, template.choice)
        if slot is None:
            return None
    held = framer.release()
    if held is None:
        return None
    hot = HotRead(framer, template, slot, text=text)
    hot.held = held
    return hot
