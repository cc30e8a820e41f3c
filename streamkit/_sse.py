"""Bytes -> SSE frames, incrementally, with no IO.

Follows the WHATWG algorithm (https://html.spec.whatwg.org/multipage/server-sent-events.html
#event-stream-interpretation): LF, CR and CRLF line ends, a CRLF split across two chunks read
as one line end, one leading BOM dropped, comment lines ignored, ``data`` lines joined with LF,
and an event not followed by a blank line at the end of input discarded.

Only complete lines are decoded, and a line end byte never occurs inside a multi-byte UTF-8
sequence, so characters split across chunks decode correctly. Text is split on ``\\n`` alone,
never with ``str.splitlines``, so U+2028, U+0085 and the other Unicode separators stay data.
The cost per byte is constant: an unfinished line is kept in one growing buffer.

Memory is bounded by ``max_event_bytes``: the unfinished line and the event's data lines
together may not grow past it (``LimitExceededError``). When bytes turn out bad (invalid UTF-8,
an event too large), the events completed before them are returned first and the error is
raised by the next ``feed`` or ``flush``: how the bytes were chunked never changes the outcome,
and bad bytes after the provider's end-of-stream marker are never read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from . import _log
from ._errors import FramingError, LimitExceededError
from ._events import Frame, Payloads
from ._framing import Flushed, Framer
from ._limits import DEFAULT_MAX_EVENT_BYTES

__all__ = ("DEFAULT_MAX_EVENT_BYTES", "EVENT_END", "SSEDecoder")

#: What ends an event as servers write it, a blank line: a reader of whole events past the
#: framer finds them here, and only here (``SSEDecoder.event_head``, ``SSEDecoder.may_hold``).
EVENT_END = b"\n\n"

_BOM = b"\xef\xbb\xbf"
_BLANK = [""]
_UNKNOWN = "\x00unknown"  # a name not yet in the cache (no decoded name is this object)
#: One event of the common named shape: its name and its data.
_EVENT = re.compile(rb"event: ([^\n]*)\ndata: ([^\n]*)\n\n")
#: Event names decoded, shared by every stream (a provider uses about ten, the same in each
#: response): at most ``_MAX_NAMES`` of at most ``_MAX_NAME`` bytes, emptied when full.
_NAMES: dict[bytes, str | None] = {}
_MAX_NAMES, _MAX_NAME = 64, 64
#: Data lines kept as strings before they are joined into one: a short line costs about 50
#: bytes as a str object, so an event of many short lines would be held at ten times its size.
_PACK_AT = 64
#: A block of lines longer than this is read line by line rather than split into a list at once.
_SPLIT_AT = 64 * 1024


class SSEDecoder(Framer):
    """Feed bytes, get complete ``Frame``s; ``flush`` at the end of input."""

    content_type = "text/event-stream"

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        super().__init__()
        self._max_event_bytes = max_event_bytes
        self._pending = bytearray()  # bytes of the unfinished last line
        self._named = 0  # bytes of a complete ``event:`` line held at the start of _pending
        self._consumed = 0  # bytes of the stream decoded into lines so far
        self._at_start = True  # no line decoded yet: a BOM may still come
        self._skip_lf = False  # the previous region ended with CR: a leading LF is its pair
        self._event: str | None = None
        self._data: list[str] = []  # the event's last data lines; never empty while _groups is not
        self._groups: list[str] = []  # the event's earlier data lines, joined _PACK_AT at a time
        self._event_size = 0  # bytes of the event's data lines so far, one more for each line end
        self._names = _NAMES  # event names read by _whole, decoded once

    def _flush(self) -> Flushed:
        """End of input: an unfinished event is discarded, as the spec requires, and the
        input did not end cleanly.

        A complete ``event:`` line held undecoded (``_named_tail``) is decoded first, so bad
        bytes in it are reported as they are when the chunks put it in a region of its own.
        """
        if self._named:
            self._text(bytes(self._pending[: self._named]), [])
        cut = bool(self._pending or self._data or self._event is not None)
        if cut:
            _log.debug(
                __name__, "input ended inside an SSE event: %d bytes dropped", len(self._pending) + self._event_size
            )
        self._pending = bytearray()
        self._named = 0
        self._data = []
        self._groups = []
        self._event = None
        self._event_size = 0
        return Flushed(clean=not cut)

    def _feed(self, chunk: bytes, out: list[Frame | Payloads]) -> None:
        if b"\n" not in chunk and b"\r" not in chunk:
            self._hold(chunk)
            return
        if self._pending:
            self._pending += chunk
            chunk = bytes(self._pending)
            self._pending = bytearray()
            self._named = 0
        if not (self._at_start or self._skip_lf or self._data or self._event is not None) and self._quick(chunk, out):
            return  # nothing open: no event begun, no BOM or split CRLF still possible
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1
        named = self._named_tail(chunk, cut)
        cut -= named
        rest = chunk[cut:]
        self._lines(chunk[:cut] if rest else chunk, out)
        if rest:
            self._named = named
            self._hold(rest)

    def release(self) -> bytes | None:
        """For a reader that reads whole events past the framer: the bytes held of the event
        the last read ended inside (``b""`` between events), handed over and no longer held
        here; None, with nothing changed, while anything else is open (a BOM still possible, a
        CR's pair, an event's lines, a failure to raise). Fed back later ahead of the next
        read, they are read as they would have been."""
        if self._at_start or self._skip_lf or self._data or self._event is not None:
            return None
        if self._deferred.failure is not None:
            return None
        held = bytes(self._pending)
        self._pending = bytearray()
        self._named = 0
        return held

    @staticmethod
    def event_head(event: str | None) -> bytes:
        """The bytes before the data of an event named ``event`` (None: no name) whose data is
        one line, as servers write it: such an event is these bytes, its data (holding no line
        end) and ``EVENT_END``, for a reader of whole events past the framer to match."""
        return b"data: " if event is None else b"event: " + event.encode() + b"\ndata: "

    @staticmethod
    def may_hold(tail: bytes) -> bool:
        """Whether ``tail``, the start of an event after a read's last ``EVENT_END``, may be held
        past the framer and handed back ahead of the next read (as ``release`` hands its bytes)
        to be read as one read of both would: it holds no CR, a line end that may pair with
        the next read's LF."""
        return b"\r" not in tail

    def whole_event(self, chunk: bytes) -> tuple[str | None, bytes] | None:
        """A read that is exactly one whole event of a common shape, with nothing open before
        it (as a token-streaming server sends each event): its name and its data, which
        ``feed_batch`` would hand over as a batch of one; None, with nothing changed, for
        anything else, which ``feed_batch`` then reads. The stream's first read may be one: an
        event's first byte is no BOM's."""
        if self._pending or self._skip_lf or self._data or self._event is not None:
            return None
        if len(chunk) > self._max_event_bytes or not chunk.endswith(b"\n\n") or b"\r" in chunk:
            return None
        if self._deferred.failure is not None or not (chunk.isascii() or _utf8(chunk)):
            return None
        one = _single(chunk, self._names)
        if one is not None:
            self._consumed += len(chunk)
            self._at_start = False
        return one

    def passed(self, size: int) -> None:
        """Count ``size`` bytes of whole events read past the framer (its offsets stay exact)."""
        self._consumed += size

    def _quick(self, chunk: bytes, out: list[Frame | Payloads]) -> bool:
        """The common read, split once: the complete events up to the last blank line read by
        ``_whole``, and what follows (part of a line, or an ``event:`` line and part of the
        next) held, as ``_lines`` and ``_named_tail`` would. False, with nothing changed, for
        anything else (a CR, a complete line after the last event, a shape ``_whole`` refuses),
        which the general path then reads."""
        blank = chunk.rfind(b"\n\n") + 2
        if blank < 2 or max(blank, len(chunk) - blank) > self._max_event_bytes or b"\r" in chunk:
            return False
        named = chunk.find(b"\n", blank) + 1 - blank
        if named > 0 and (not chunk.startswith(b"event:", blank) or chunk.find(b"\n", blank + named) >= 0):
            return False  # a complete line that is not an event's name: read it line by line
        if not _whole(chunk if blank == len(chunk) else chunk[:blank], out, self._names):
            return False
        self._consumed += blank
        if blank < len(chunk):
            self._named = max(named, 0)
            self._pending += chunk[blank:]  # within the limit, checked above
        return True

    def _named_tail(self, chunk: bytes, cut: int) -> int:
        """The length of an ``event:`` line that opens the unfinished event at the end of the
        chunk, to be held with it: the next read then starts at an event's start, where the
        events are read from the bytes. Anything else after the last blank line is read now."""
        blank = chunk.rfind(b"\n\n", 0, cut) + 2
        if blank < 2 or blank == cut or len(chunk) - blank > self._max_event_bytes:
            return 0
        line = chunk[blank:cut]
        if not line.startswith(b"event:") or line.find(b"\n") != len(line) - 1 or b"\r" in chunk[blank:]:
            return 0
        return len(line)

    def _hold(self, piece: bytes) -> None:
        self._pending += piece
        if self._over(self._pending):
            raise self._too_big()

    def _over(self, line: bytes | bytearray) -> bool:
        """Whether the event with this line (complete or still arriving) is past the limit."""
        size = len(line) + self._event_size - self._named  # a held event line counts nothing
        if size > self._max_event_bytes and self._at_start:
            head = bytes(line[:3])
            if _BOM.startswith(head):
                size -= len(head)  # a BOM, whole or still arriving, is not part of the line
        return size > self._max_event_bytes

    def _too_big(self) -> LimitExceededError:
        # One measure whether a line is complete or still arriving: the bytes of the event's
        # data lines (each with one line end) and of the line at hand. So the error, and whether
        # there is one, never depends on how the bytes were chunked.
        return LimitExceededError(
            "an SSE event grew past the limit", limit="max_event_bytes", value=self._max_event_bytes
        )

    def _lines(self, region: bytes, out: list[Frame | Payloads]) -> None:
        """Interpret a region that ends exactly at a line end.

        The common case is read from the bytes: the complete events of a region with no CR, no
        run of three line ends and nothing special at the start (a BOM, the LF of a split
        CRLF), when ``_whole`` can read them all at once. Everything else, and the event left
        open by the previous region, goes line by line through ``_text``.
        """
        if self._at_start and not region.startswith(b"\xef"):
            self._at_start = False  # the stream does not start with a BOM: nothing to drop
        if b"\r" in region or self._at_start or self._skip_lf:
            self._text(region, out)
            return
        if self._data or self._event is not None:
            # Without a run of three line ends, the open event ends at the first "\n\n".
            first = region.find(b"\n\n") + 2
            if first < 2:
                self._text(region, out)
                return
            self._text(region[:first], out)
            region = region[first:]
        cut = region.rfind(b"\n\n") + 2
        if 1 < cut <= self._max_event_bytes and _whole(region[:cut], out, self._names):
            self._consumed += cut
            region = region[cut:]
        if region:
            self._text(region, out)

    def _text(self, region: bytes, out: list[Frame | Payloads]) -> None:
        """Decode a region that ends exactly at a line end and interpret its lines."""
        try:
            text = region.decode("utf-8")
        except UnicodeDecodeError as exc:
            offset = self._consumed + exc.start
            good = max(region.rfind(b"\n", 0, exc.start), region.rfind(b"\r", 0, exc.start)) + 1
            # The excerpt stays inside the bad line, so it is the same however the bytes came.
            ends = [i for i in (region.find(b"\n", exc.start), region.find(b"\r", exc.start)) if i >= 0]
            error = FramingError.not_utf8(region, exc, line_start=good, line_end=min(ends), offset=offset)
            if good:
                self._text(region[:good], out)  # the complete lines before the bad bytes
            if self._over(region[good : min(ends)]):
                raise self._too_big() from None  # as it would have been while the line arrived
            raise error from None
        self._consumed += len(region)
        if self._at_start:
            self._at_start = False
            if text.startswith("\ufeff"):
                text = text[1:]
        if self._skip_lf:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        if "\r" in text:
            # A CR at the very end may be half of a CRLF whose LF is in the next chunk.
            self._skip_lf = text.endswith("\r")
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        plain = region.isascii()  # then each line's characters are its bytes
        limit = self._max_event_bytes if plain else self._max_event_bytes // 4
        blocks = text.split("\n\n")
        last = blocks.pop()
        for block in blocks:
            # Nearly every event is one "data:" line, perhaps after one "event:" line: such a
            # block, with nothing left over from the lines before it and short enough to be
            # within the limit in any encoding, is read whole; everything else line by line.
            if len(block) <= limit and not self._data and self._event is None:
                if block.startswith("data:") and "\n" not in block:
                    out.append(Frame(None, block[6:] if block.startswith("data: ") else block[5:]))
                    continue
                if block.startswith("event:"):
                    cut = block.find("\n")
                    if block.startswith("data:", cut + 1) and block.find("\n", cut + 1) < 0:
                        event = block[7:cut] if block.startswith("event: ") else block[6:cut]
                        data = block[cut + 7 :] if block.startswith("data: ", cut + 1) else block[cut + 6 :]
                        out.append(Frame(event or None, data))
                        continue
            self._read(_lines(block), plain, out)
            self._read(_BLANK, plain, out)
        if last:
            self._read(_lines(last[:-1]), plain, out)  # the region ends with a line end: drop it

    def _read(self, lines: Iterable[str], plain: bool, out: list[Frame | Payloads]) -> None:
        for line in lines:
            if line:
                size = len(line) if plain else len(line.encode())
                if self._event_size + size > self._max_event_bytes:
                    raise self._too_big()
                if self._field(line):
                    self._event_size += size + 1
            elif self._data:
                if self._groups:
                    self._groups.append("\n".join(self._data))
                    data = "\n".join(self._groups)
                    self._groups = []
                else:
                    data = "\n".join(self._data)
                out.append(Frame(self._event, data))
                self._data = []
                self._event = None
                self._event_size = 0
            else:
                self._event = None

    def _field(self, line: str) -> bool:
        """Interpret one line; True when it added a line to the event's data."""
        if line.startswith("data:"):
            value = line[6:] if line.startswith("data: ") else line[5:]
        elif line[0] == ":":
            return False  # a comment, used as a keep-alive
        else:
            name, colon, value = line.partition(":")
            if colon and value.startswith(" "):
                value = value[1:]
            if name == "event":
                self._event = value or None  # an empty type means the default, "message"
                return False
            if name != "data":
                # "id" and "retry" steer reconnection, which streamkit leaves to the caller; any
                # other field name is ignored, as the spec requires.
                return False
            value = ""  # a bare "data" line with no colon adds an empty line
        data = self._data
        data.append(value)
        if len(data) > _PACK_AT:  # the last line stays, so _data is never empty with groups
            self._groups.append("\n".join(data[:_PACK_AT]))
            del data[:_PACK_AT]
        return True


def _lines(block: str) -> Iterable[str]:
    """The lines of a block: a list when it is short, else one at a time, so that a long event
    of short lines is never held as a list of millions of strings."""
    if len(block) <= _SPLIT_AT:
        return block.split("\n")
    return _each_line(block)


def _each_line(block: str) -> Iterator[str]:
    start = 0
    while (end := block.find("\n", start)) >= 0:
        yield block[start:end]
        start = end + 1
    yield block[start:]


def _whole(head: bytes, out: list[Frame | Payloads], names: dict[bytes, str | None]) -> bool:
    """Hand over complete events that all have one shape as ``Payloads``; False (nothing
    read) otherwise.

    ``head`` ends with a blank line, holds no CR and no run of three line ends, and is no
    longer than the limit. The shapes are the common ones: every event one ``data: `` line, or
    every event one ``event: `` line and one ``data: `` line. Counting the line ends proves the
    shape: a separator between events is two of them, so any other line (a comment, an ``id``,
    a second data line, a field without its space) leaves more line ends than the split
    accounts for, or a piece without its ``data: `` line. The values stay bytes; the whole
    region is proved UTF-8 once (the separators are ASCII, so they never split a character),
    and bytes that are not return False, for the line-by-line path to report.
    """
    if not (head.isascii() or _utf8(head)):
        return False
    if head.startswith(b"data: "):
        values = head[6:-2].split(b"\n\ndata: ")
        if head.count(b"\n") != 2 * len(values):
            return False
        out.append(Payloads(None, values))
        return True
    if head.startswith(b"event: "):
        if head.count(b"\n") == 3:  # one event (a read of one, as a token-streaming server sends)
            one = _single(head, names)
            if one is None:
                return False
            out.append(Payloads((one[0],), (one[1],)))
            return True
        pairs = _EVENT.findall(head)
        if not pairs:
            return False
        raw, data = zip(*pairs, strict=True)
        # The matches are disjoint; they cover the whole head only if their lengths add up to it.
        if 16 * len(pairs) + sum(map(len, raw)) + sum(map(len, data)) != len(head):
            return False
        events = [names.get(name, _UNKNOWN) for name in raw]
        if _UNKNOWN in events:
            events = [_name(name, names) for name in raw]
        out.append(Payloads(events, data))
        return True
    return False


def _utf8(head: bytes) -> bool:
    """Whether bytes that are not all ASCII are UTF-8 (proved for a whole region at once: the
    separators are ASCII, so they never split a character)."""
    try:
        head.decode()
    except UnicodeDecodeError:
        return False
    return True


def _single(head: bytes, names: dict[bytes, str | None]) -> tuple[str | None, bytes] | None:
    """The name and data of ``head`` when it is exactly one event of a common shape (one
    ``data: `` line, or one ``event: `` line and one ``data: `` line, then the blank line), as
    ``_whole`` proves it; else None. ``head`` is proved UTF-8 and holds no CR."""
    if head.startswith(b"data: "):
        return (None, head[6:-2]) if head.count(b"\n") == 2 else None
    cut = head.find(b"\n")
    if not head.startswith(b"event: ") or head.count(b"\n") != 3 or not head.startswith(b"data: ", cut + 1):
        return None
    name = names.get(head[7:cut], _UNKNOWN)  # ``_name``'s cache, read here: every event has a name
    return name if name is not _UNKNOWN else _name(head[7:cut], names), head[cut + 7 : -2]


def _name(raw: bytes, names: dict[bytes, str | None]) -> str | None:
    """An event name decoded, once while it stays in the cache."""
    event = names.get(raw, _UNKNOWN)
    if event is _UNKNOWN:
        event = raw.decode() or None
        if len(raw) <= _MAX_NAME:
            if len(names) >= _MAX_NAMES:
                names.clear()  # one step, safe with streams read in other threads
            names[raw] = event
    return event
