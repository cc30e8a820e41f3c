"""The hot read: one stage crossing for a read that only continues what the stages proved.

A token-streaming server flushes each SSE event as it is made, so most reads are one event, and
most events of a call are one more fragment of the call already open. After a read through the
general path, the stages may each have proved something: the framer that it stands between two
events with nothing held, the decoder the byte template of the open call's plain fragments
(every payload of that shape is one fragment of that call and changes none of its state), the
accumulator that the call takes fragments plainly (it is in ``TEXT``, with no fragments or
previews to hand out). With all three, a read that is exactly one such event (the SSE header
and the template's prefix, one JSON string token, the template's suffix, the blank line) is
read here: one ``startswith``, one ``fullmatch``, one strict ``orjson.loads``, one append to the
call's text. Anything else (two events, a partial one, another shape, a token that does not
parse, a fragment that would pass ``max_argument_bytes``) returns False with nothing changed, and
the general path reads it. The bookkeeping the stages would have done (the framer's byte offset,
the template's hit count, the pipeline's last bytes) is settled when the hot read is dropped.
"""

from __future__ import annotations

import orjson

from ._accumulator import Accumulator, _Slot
from ._sse import SSEDecoder
from .providers._base import Decoder, Template

__all__ = ("HotRead", "arm")

_loads = orjson.loads
_BAD = orjson.JSONDecodeError


class HotRead:
    """Armed over one call's proved template; see the module's docstring."""

    __slots__ = (
        "event_limit",
        "framer",
        "head",
        "last",
        "limit",
        "match",
        "reads",
        "size",
        "slot",
        "start",
        "template",
    )

    def __init__(
        self, framer: SSEDecoder, template: Template, accumulator: Accumulator, slot: _Slot, event_limit: int
    ) -> None:
        self.framer = framer
        self.template = template
        header = b"data: " if template.event is None else b"event: " + template.event.encode() + b"\ndata: "
        self.head = header + template.prefix
        self.start = len(self.head) - 1  # the token's opening quote
        self.match = template.match
        self.slot = slot
        self.limit = accumulator.max_argument_bytes
        self.event_limit = event_limit
        self.reads = 0
        self.size = 0
        self.last = b""

    def take(self, data: bytes) -> bool:
        """Read ``data`` if it is one whole event of the template's shape; False, with nothing
        changed, otherwise."""
        if not data.startswith(self.head) or not data.endswith(b"\n\n") or len(data) > self.event_limit:
            return False
        found = self.match(data, self.start, len(data) - 2)
        if found is None:
            return False
        try:
            text: str = _loads(found.group(1))
        except _BAD:
            return False
        slot = self.slot
        if slot.size + len(text) > self.limit:
            return False  # the general path raises, naming the call
        slot.add(text, self.limit)
        self.reads += 1
        self.size += len(data)
        self.last = data
        return True

    def settle(self) -> bytes:
        """Hand the stages their bookkeeping; the last bytes read, for the pipeline's tail."""
        self.framer.passed(self.size)
        self.template.hits += self.reads
        return self.last


def arm(framer: object, decoder: Decoder, accumulator: Accumulator, event_limit: int) -> HotRead | None:
    """A hot read, when the three stages have each proved their part; else None."""
    if type(framer) is not SSEDecoder or not framer.between_events():
        return None
    template = decoder.proved_template()
    if template is None:
        return None
    slot = accumulator.plain_text(template.index, template.choice)
    if slot is None:
        return None
    return HotRead(framer, template, accumulator, slot, event_limit)
