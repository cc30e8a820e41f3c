"""Bytes -> NDJSON frames (one JSON text per line), incrementally, with no IO.

Each non-blank line becomes ``Frame(event=None, data=line)``; the JSON itself is left to the
provider decoder. Lines end with LF; a CR before the LF is dropped, so CRLF works too (a lone
CR is JSON whitespace, not a line end: https://github.com/ndjson/ndjson-spec). Lines holding
only whitespace are skipped, and one leading BOM is dropped (RFC 8259 §8.1 lets a parser ignore
it).

Only complete lines are decoded, and the LF byte never occurs inside a multi-byte UTF-8
sequence, so characters split across chunks decode correctly; invalid UTF-8 is a
``FramingError`` naming its byte offset. The cost per byte is constant: an unfinished line is
kept in one growing buffer. When bytes turn out bad, the frames completed before them are
returned first and the error is raised by the next ``feed`` or ``flush``, so how the bytes were
chunked never changes the outcome, and bad bytes after the end of the response are never read.

A last line with no line end is an error, not a frame. JSON Lines allows it in a file, but a
streaming server ends every line (Ollama writes ``\\n`` after each object), so bytes after the
last LF mean the stream was cut inside a line; guessing that they are whole would hide that.
"""

from __future__ import annotations

from ._errors import FramingError, LimitExceededError
from ._events import Frame, Payloads
from ._framing import Flushed, Framer

__all__ = ("DEFAULT_MAX_LINE_BYTES", "NDJSONDecoder")

#: The longest line accepted, line end excluded.
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024

_BLANK = b" \t\r"


class NDJSONDecoder(Framer):
    """Feed bytes, get one ``Frame`` per complete non-blank line; ``flush`` at the end of input.

    Args:
        max_event_bytes: the longest line accepted; a longer one is a ``LimitExceededError``
            naming ``max_event_bytes``, raised as soon as the buffered part of the line passes it.
    """

    content_type = "application/x-ndjson"

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        super().__init__()
        self._max = max_event_bytes
        self._pending = bytearray()  # the unfinished last line
        self._consumed = 0  # stream offset of the first byte not yet split into lines
        self._at_start = True  # no byte decoded yet: a BOM may still come

    def _feed(self, chunk: bytes, out: list[Frame | Payloads]) -> None:
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            self._hold(chunk)
            return
        head = chunk[:cut]
        if self._pending:
            self._pending += head
            head = bytes(self._pending)
            self._pending = bytearray()
        self._lines(head, out)
        if cut < len(chunk):
            self._hold(chunk[cut:])

    def _flush(self) -> Flushed:
        """End of input: bytes after the last line end are a cut line, unless only whitespace."""
        rest = bytes(self._pending)
        self._pending = bytearray()
        if rest.strip(_BLANK) and not (self._at_start and rest == b"\xef\xbb\xbf"):
            raise FramingError(
                f"the stream ended inside a line ({len(rest)} bytes with no line end)",
                offset=self._consumed,
                excerpt=rest[:40].decode("utf-8", "replace"),
            )
        return Flushed()

    def _hold(self, piece: bytes) -> None:
        self._pending += piece
        size, offset = len(self._pending), self._consumed
        if size > self._max and self._at_start:
            head = bytes(self._pending[:3])
            if b"\xef\xbb\xbf".startswith(head):  # a BOM, whole or still arriving, is not the line's
                size, offset = size - len(head), offset + len(head)
        if size > self._max:
            raise self._too_long(offset)

    def _too_long(self, offset: int) -> LimitExceededError:
        # The same error whether the line is still arriving or complete: chunking never shows.
        return LimitExceededError(
            f"an NDJSON line at byte {offset} grew past the limit", limit="max_event_bytes", value=self._max
        )

    def _lines(self, region: bytes, out: list[Frame | Payloads]) -> None:
        """Split a region that ends exactly at an LF into frames."""
        offset = self._consumed
        if self._at_start:
            self._at_start = False
            if region.startswith(b"\xef\xbb\xbf"):
                region = region[3:]
                offset += 3
        lines = region.split(b"\n")
        lines.pop()  # the region ends with LF: the last piece is always empty
        limit = self._max
        for line in lines:
            size = len(line)
            if size > limit:
                raise self._too_long(offset)
            end = size - 1 if line.endswith(b"\r") else size  # CRLF: the CR belongs to the line end
            if line.strip(_BLANK):
                try:
                    text = line[:end].decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise FramingError.not_utf8(
                        line, exc, line_start=0, line_end=end, offset=offset + exc.start
                    ) from None
                out.append(Frame(None, text))
            offset += size + 1
            self._consumed = offset
