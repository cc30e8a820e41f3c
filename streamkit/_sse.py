"""Bytes -> SSE frames, incrementally, with no IO.

Follows the WHATWG algorithm (https://html.spec.whatwg.org/multipage/server-sent-events.html
#event-stream-interpretation): LF, CR and CRLF line ends, a CRLF split across two chunks read
as one line end, one leading BOM dropped, comment lines ignored, ``data`` lines joined with LF,
and an event not followed by a blank line at the end of input discarded.

Only complete lines are decoded, and a line end byte never occurs inside a multi-byte UTF-8
sequence, so characters split across chunks decode correctly. Text is split on ``\\n`` alone,
never with ``str.splitlines``, so U+2028, U+0085 and the other Unicode separators stay data.
The cost per byte is constant: an unfinished line is kept as a list of pieces and joined once.
"""

from __future__ import annotations

from ._errors import FramingError
from ._events import Frame

__all__ = ("DEFAULT_MAX_EVENT_BYTES", "SSEDecoder")

#: The largest SSE event (all its lines) buffered before a line end or blank line arrives.
DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024


class SSEDecoder:
    """Feed bytes, get complete ``Frame``s; ``flush`` at the end of input."""

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        self._max_event_bytes = max_event_bytes
        self._pending: list[bytes] = []  # bytes of the unfinished last line
        self._pending_size = 0
        self._consumed = 0  # bytes of the stream decoded into lines so far
        self._at_start = True  # no line decoded yet: a BOM may still come
        self._skip_lf = False  # the previous region ended with CR: a leading LF is its pair
        self._event: str | None = None
        self._data: list[str] = []
        self._event_size = 0

    def feed(self, chunk: bytes) -> list[Frame]:
        if not chunk:
            return []
        if b"\n" not in chunk and b"\r" not in chunk:
            self._hold(chunk)
            return []
        if self._pending:
            self._pending.append(chunk)
            chunk = b"".join(self._pending)
            self._pending = []
            self._pending_size = 0
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1
        rest = chunk[cut:]
        out = self._lines(chunk[:cut] if rest else chunk)
        if rest:
            self._hold(rest)
        return out

    def flush(self) -> list[Frame]:
        """End of input: an unfinished event is discarded, as the spec requires."""
        self._pending = []
        self._pending_size = 0
        self._data = []
        self._event = None
        return []

    def _hold(self, piece: bytes) -> None:
        self._pending.append(piece)
        self._pending_size += len(piece)
        if self._pending_size + self._event_size > self._max_event_bytes:
            raise FramingError(
                f"an SSE event grew past max_event_bytes={self._max_event_bytes} without ending",
                offset=self._consumed,
            )

    def _lines(self, region: bytes) -> list[Frame]:
        """Decode a region that ends exactly at a line end and interpret its lines."""
        try:
            text = region.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FramingError(
                "the stream is not valid UTF-8",
                offset=self._consumed + exc.start,
                excerpt=region[max(exc.start - 20, 0) : exc.start + 4].decode("utf-8", "replace"),
            ) from None
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
        lines = text.split("\n")
        lines.pop()  # the region ends with a line end: the last piece is always empty
        out: list[Frame] = []
        # The loop runs once per line of the stream, so the event's state lives in locals and
        # the two fields every event has ("data", "event") are read inline, exactly as
        # ``_field`` reads them; other lines go to ``_field`` with the state written back.
        data, event, size, limit = self._data, self._event, self._event_size, self._max_event_bytes
        for line in lines:
            if not line:
                if data:
                    out.append(Frame(event, "\n".join(data)))
                    data = []
                    size = 0
                event = None
            elif line.startswith("data:"):
                value = line[6:] if line.startswith("data: ") else line[5:]
                data.append(value)
                size += len(value)
                if size > limit:
                    raise FramingError(f"an SSE event grew past max_event_bytes={limit}", offset=self._consumed)
            elif line.startswith("event:"):
                value = line[7:] if line.startswith("event: ") else line[6:]
                event = value or None  # an empty type means the default, "message"
            else:
                self._data, self._event, self._event_size = data, event, size
                self._field(line)
                data, event, size = self._data, self._event, self._event_size
        self._data, self._event, self._event_size = data, event, size
        return out

    def _field(self, line: str) -> None:
        if line.startswith("data:"):
            value = line[6:] if line.startswith("data: ") else line[5:]
            self._data.append(value)
            self._event_size += len(value)
            if self._event_size > self._max_event_bytes:
                raise FramingError(
                    f"an SSE event grew past max_event_bytes={self._max_event_bytes}",
                    offset=self._consumed,
                )
            return
        if line[0] == ":":
            return  # a comment, used as a keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value or None  # an empty type means the default, "message"
        elif name == "data":  # a bare "data" line with no colon adds an empty line
            self._data.append("")
        # "id" and "retry" steer reconnection, which streamkit leaves to the caller; any other
        # field name is ignored, as the spec requires.
