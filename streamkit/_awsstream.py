"""Bytes -> AWS event-stream frames (``application/vnd.amazon.eventstream``), with no IO.

Each binary message is a 12-byte prelude (total length, headers length, both uint32
big-endian, and the CRC32 of those 8 bytes), the headers, the payload, and the CRC32 of
everything before it. Both CRCs are checked, the prelude's before its lengths are trusted;
a bad CRC, an impossible length, a bad header or a message cut at the end of input is a
``FramingError`` naming the byte offset of the message; a message longer than
``max_event_bytes`` is a ``LimitExceededError``, raised on its prelude. Bad bytes, or a message
that makes no frame, fail after the frames before them in the same read, never instead of them.
The layout and the header value types follow botocore ``botocore/eventstream.py`` and
https://docs.aws.amazon.com/lexv2/latest/dg/event-stream-encoding.html.

A message becomes a ``Frame`` by its ``:message-type`` header:

- ``event``: ``Frame(<:event-type>, <payload text>)``;
- ``exception`` (a modeled error, such as Bedrock's ``throttlingException``):
  ``Frame("exception:<:exception-type>", <payload text>)``;
- ``error`` (an unmodeled error, whose code and text are headers):
  ``Frame("error:<:error-code>", <:error-message>)``.

Event types are identifiers with no colon, so a decoder can tell the three apart by the name.
Messages do not line up with network reads: the bytes of an unfinished message are kept as a
list of pieces, joined when its prelude is complete and again when the whole message is, so
each byte is copied a bounded number of times however the stream is chunked.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

from ._errors import FramingError, LimitExceededError
from ._events import Frame, Payloads
from ._framing import Flushed, Framer

__all__ = (
    "DEFAULT_MAX_MESSAGE_BYTES",
    "MAX_HEADERS_BYTES",
    "PRELUDE_BYTES",
    "EventStreamDecoder",
    "EventStreamMessage",
    "HeaderValue",
)

#: The largest message accepted (prelude, headers, payload and CRC).
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: botocore's limit on the headers of one message.
MAX_HEADERS_BYTES = 128 * 1024

#: A message's prelude: total length, headers length, and their CRC32.
PRELUDE_BYTES = 12
_PRELUDE = PRELUDE_BYTES
_OVERHEAD = _PRELUDE + 4  # the prelude and the message CRC
_U32 = struct.Struct("!I")
_U16 = struct.Struct("!H")
_PRELUDE_STRUCT = struct.Struct("!III")
_KNOWN_HEADERS = 64  # distinct header blocks remembered

#: A header value, typed as botocore types it: ``bool`` (types 0 and 1), ``int`` (2-5: int8 to
#: int64; 8: a timestamp in milliseconds since the epoch), ``bytes`` (6: a byte array; 9: a
#: 16-byte UUID) or ``str`` (7).
HeaderValue: TypeAlias = bool | int | bytes | str

# value type -> its codec, for the integer types (8 is a timestamp)
_INTEGERS = {
    2: struct.Struct("!b"),
    3: struct.Struct("!h"),
    4: struct.Struct("!i"),
    5: struct.Struct("!q"),
    8: struct.Struct("!q"),
}


@dataclass(frozen=True, slots=True)
class EventStreamMessage:
    """One decoded message: its headers, its raw payload, and where it began in the stream."""

    headers: Mapping[str, HeaderValue]
    """Shared by the messages with the same header bytes: read-only."""
    payload: bytes
    offset: int
    """Stream offset of the message's first byte."""
    payload_offset: int
    """Stream offset of the payload's first byte."""


class EventStreamDecoder(Framer):
    """Feed bytes, get complete ``Frame``s (or raw messages); ``flush`` at the end of input.

    Args:
        max_event_bytes: the largest message accepted, checked on its prelude, before any of
            it is buffered.
    """

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        super().__init__()
        self._max = max_event_bytes
        self._pending: list[bytes] = []  # bytes received and not yet decoded
        self._size = 0
        self._need = _PRELUDE  # bytes needed before decoding can go on
        self._total: int | None = None  # the current message's length, once its prelude is checked
        self._offset = 0  # stream offset of the first pending byte
        # A stream repeats a few header blocks (one per event type): each is read once.
        self._known: dict[bytes, Mapping[str, HeaderValue]] = {}

    def _feed(self, chunk: bytes, out: list[Frame | Payloads]) -> None:
        messages: list[EventStreamMessage] = []
        try:
            self._messages(chunk, messages)
        finally:
            # extend takes the frames one by one: those before a message that makes no frame
            # stay in ``out``, and its error, the earlier in the stream, is the one raised.
            out.extend(self._frame(message) for message in messages)

    def _flush(self) -> Flushed:
        """End of input: any bytes left are a message cut short."""
        got = self._size
        if not got:
            return Flushed()
        self._pending, self._size = [], 0
        expected = f"{self._total}" if self._total is not None else f"at least {_PRELUDE}"
        raise self._error(f"the stream ended after {got} of its {expected} bytes")

    def feed_messages(self, chunk: bytes) -> list[EventStreamMessage]:
        """Like ``feed``, but return the messages with all their headers, not frames."""
        return self._deferred.run(self._messages, chunk)

    def _messages(self, chunk: bytes, out: list[EventStreamMessage]) -> None:
        if not chunk:
            return
        self._pending.append(chunk)
        self._size += len(chunk)
        if self._size < self._need:
            return
        data = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
        view = memoryview(data)
        end = len(data)
        pos = 0
        try:
            while True:
                if self._total is None:
                    if end - pos < _PRELUDE:
                        break
                    self._total = self._prelude(view, pos)
                total = self._total
                if end - pos < total:
                    break
                out.append(self._message(data, view, pos, total))
                pos += total
                self._offset += total
                self._total = None
        finally:
            view.release()
        rest = data[pos:] if pos else data
        self._pending = [rest] if rest else []
        self._size = len(rest)
        self._need = _PRELUDE if self._total is None else self._total

    # -- one message ------------------------------------------------------------------------------

    def _prelude(self, view: memoryview, pos: int) -> int:
        total, headers_length, stored = _PRELUDE_STRUCT.unpack_from(view, pos)
        computed = zlib.crc32(view[pos : pos + 8])
        if computed != stored:
            raise self._error(
                f"the prelude's checksum does not match its bytes "
                f"(CRC32 0x{stored:08x} stored, 0x{computed:08x} computed)"
            )
        if headers_length > MAX_HEADERS_BYTES:
            raise self._error(f"the headers length {headers_length} is over the limit of {MAX_HEADERS_BYTES}")
        if total < _OVERHEAD + headers_length:
            raise self._error(
                f"the total length {total} is shorter than the prelude, {headers_length} bytes of headers and the CRC"
            )
        if total > self._max:
            raise LimitExceededError(
                f"a message of {total} bytes at byte {self._offset} is larger than the limit",
                limit="max_event_bytes",
                value=self._max,
            )
        return int(total)

    def _message(self, data: bytes, view: memoryview, pos: int, total: int) -> EventStreamMessage:
        (stored,) = _U32.unpack_from(view, pos + total - 4)
        computed = zlib.crc32(view[pos : pos + total - 4])
        if computed != stored:
            raise self._error(
                f"the message's checksum does not match its bytes "
                f"(CRC32 0x{stored:08x} stored, 0x{computed:08x} computed)"
            )
        (headers_length,) = _U32.unpack_from(view, pos + 4)
        start = pos + _PRELUDE
        raw = data[start : start + headers_length]
        headers = self._known.get(raw)
        if headers is None:
            headers = self._headers(data, start, start + headers_length)
            if len(self._known) < _KNOWN_HEADERS:
                self._known[raw] = headers
        payload_start = start + headers_length
        return EventStreamMessage(
            headers,
            data[payload_start : pos + total - 4],
            self._offset,
            self._offset + (payload_start - pos),
        )

    def _headers(self, data: bytes, start: int, end: int) -> dict[str, HeaderValue]:
        """Read a headers block; every length is checked against the block's end."""
        headers: dict[str, HeaderValue] = {}
        i = start
        while i < end:
            name_end = i + 1 + data[i]
            if name_end >= end:  # the name, then at least the value type byte
                raise self._error("a header runs past the end of the headers")
            name = self._text(data[i + 1 : name_end], "a header name")
            kind = data[name_end]
            i = name_end + 1
            value: HeaderValue
            if kind <= 1:
                value = kind == 0
            elif kind in _INTEGERS:
                codec = _INTEGERS[kind]
                if i + codec.size > end:
                    raise self._error(f"header {name!r} runs past the end of the headers")
                (value,) = codec.unpack_from(data, i)
                i += codec.size
            elif kind in (6, 7):
                if i + 2 > end:
                    raise self._error(f"header {name!r} runs past the end of the headers")
                (length,) = _U16.unpack_from(data, i)
                if i + 2 + length > end:
                    raise self._error(f"header {name!r} runs past the end of the headers")
                raw = data[i + 2 : i + 2 + length]
                value = raw if kind == 6 else self._text(raw, f"header {name!r}")
                i += 2 + length
            elif kind == 9:
                if i + 16 > end:
                    raise self._error(f"header {name!r} runs past the end of the headers")
                value = data[i : i + 16]
                i += 16
            else:
                raise self._error(f"header {name!r} has the unknown value type {kind}")
            if name in headers:
                raise self._error(f"the header {name!r} appears twice")
            headers[name] = value
        return headers

    # -- message -> frame -------------------------------------------------------------------------

    def _frame(self, message: EventStreamMessage) -> Frame:
        headers = message.headers
        kind = self._header(message, ":message-type")
        if kind == "event":
            return Frame(self._header(message, ":event-type"), self._payload(message))
        if kind == "exception":
            return Frame(f"exception:{self._header(message, ':exception-type')}", self._payload(message))
        if kind == "error":
            text = headers.get(":error-message", "")
            if not isinstance(text, str):
                raise self._error("the header ':error-message' is not a string", message.offset)
            return Frame(f"error:{self._header(message, ':error-code')}", text)
        raise self._error(f"unknown :message-type {kind!r}", message.offset)

    def _header(self, message: EventStreamMessage, name: str) -> str:
        value = message.headers.get(name)
        if not isinstance(value, str) or not value:
            got = "missing" if value is None else repr(value)
            raise self._error(f"the header {name!r} must be a non-empty string, got {got}", message.offset)
        return value

    def _payload(self, message: EventStreamMessage) -> str:
        try:
            return message.payload.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FramingError(
                "an event-stream payload is not valid UTF-8", offset=message.payload_offset + exc.start
            ) from None

    def _text(self, raw: bytes, what: str) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self._error(f"{what} is not valid UTF-8") from None

    def _error(self, message: str, offset: int | None = None) -> FramingError:
        where = self._offset if offset is None else offset
        return FramingError(f"{message}, in the event-stream message", offset=where)
