"""The AWS event-stream framer, checked against botocore's own parser, and its errors."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer
from hypothesis import given
from hypothesis import strategies as st

from streamkit import FramingError, LimitExceededError
from streamkit._awsstream import EventStreamDecoder, EventStreamMessage
from streamkit._events import Frame

from .eventstream_encode import Header, encode_message, error, event, exception
from .helpers import one_byte, split_at

# A ConverseStream contentBlockDelta message whose decoding was checked with botocore.
VECTOR = bytes.fromhex(
    "000000b400000057756ab5ea0b3a6576656e742d74797065070011636f6e74656e74426c6f636b44656c74610d3a636f"
    "6e74656e742d747970650700106170706c69636174696f6e2f6a736f6e0d3a6d6573736167652d747970650700056576"
    "656e747b22636f6e74656e74426c6f636b496e646578223a312c2264656c7461223a7b22746f6f6c557365223a7b2269"
    "6e707574223a227b5c22636974795c223a227d7d2c2270223a2261626364227dcab7185c"
)
VECTOR_PAYLOAD = '{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\\"city\\":"}},"p":"abcd"}'


def frames(chunks: list[bytes], **options: int) -> list[Frame]:
    decoder = EventStreamDecoder(**options)
    out: list[Frame] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out + decoder.flush()


def messages(chunks: list[bytes]) -> list[EventStreamMessage]:
    decoder = EventStreamDecoder()
    out: list[EventStreamMessage] = []
    for chunk in chunks:
        out += decoder.feed_messages(chunk)
    decoder.flush()
    return out


def botocore_messages(data: bytes) -> list[tuple[dict[str, Any], bytes]]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(message.headers, message.payload) for message in buffer]


def test_the_protocols_test_vector() -> None:
    assert (len(VECTOR), struct.unpack("!III", VECTOR[:12])) == (180, (180, 87, 0x756AB5EA))
    assert frames([VECTOR]) == [Frame("contentBlockDelta", VECTOR_PAYLOAD)]
    assert frames(list(one_byte(VECTOR))) == [Frame("contentBlockDelta", VECTOR_PAYLOAD)]
    # The encoder the fixtures are written with gives the very same bytes.
    assert (
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"city":'}}, "p": "abcd"})
        == VECTOR
    )
    assert botocore_messages(VECTOR) == [(m.headers, m.payload) for m in messages([VECTOR])]


def test_message_types_become_frame_names() -> None:
    wire = event("messageStop", {"stopReason": "tool_use"})
    wire += exception("throttlingException", "slow down")
    wire += error("InternalFailure", "it broke")
    assert frames([wire]) == [
        Frame("messageStop", '{"stopReason":"tool_use"}'),
        Frame("exception:throttlingException", '{"message":"slow down"}'),
        Frame("error:InternalFailure", "it broke"),
    ]


def test_every_header_value_type_is_read_as_botocore_reads_it() -> None:
    headers: list[Header] = [
        ("t", 0, True),
        ("f", 1, False),
        ("b", 2, -128),
        ("s", 3, -32768),
        ("i", 4, 2**31 - 1),
        ("l", 5, -(2**63)),
        ("bytes", 6, b"\x00\xff"),
        ("str", 7, "é☃"),
        ("ts", 8, 1_700_000_000_123),
        ("uuid", 9, bytes(range(16))),
        (":message-type", 7, "event"),
        (":event-type", 7, "x"),
    ]
    wire = encode_message(headers, b"{}")
    (message,) = messages([wire])
    assert message.headers == {
        "t": True,
        "f": False,
        "b": -128,
        "s": -32768,
        "i": 2**31 - 1,
        "l": -(2**63),
        "bytes": b"\x00\xff",
        "str": "é☃",
        "ts": 1_700_000_000_123,
        "uuid": bytes(range(16)),
        ":message-type": "event",
        ":event-type": "x",
    }
    assert botocore_messages(wire) == [(message.headers, message.payload)]


_NAME = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12).filter(lambda s: len(s.encode()) < 256)
_VALUE = st.one_of(
    st.tuples(st.just(0), st.just(True)),
    st.tuples(st.just(1), st.just(False)),
    st.tuples(st.just(2), st.integers(-(2**7), 2**7 - 1)),
    st.tuples(st.just(3), st.integers(-(2**15), 2**15 - 1)),
    st.tuples(st.just(4), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just(5), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just(6), st.binary(max_size=40)),
    st.tuples(st.just(7), st.text(max_size=40)),
    st.tuples(st.just(8), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just(9), st.binary(min_size=16, max_size=16)),
)
_MESSAGE = st.tuples(
    st.dictionaries(_NAME, _VALUE, max_size=6),
    st.binary(max_size=300),
)


@given(
    raw=st.lists(_MESSAGE, max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=5000), max_size=30),
)
def test_matches_botocore_on_random_messages_and_chunkings(
    raw: list[tuple[dict[str, tuple[int, Any]], bytes]], cuts: list[int]
) -> None:
    data = b"".join(
        encode_message([(name, kind, value) for name, (kind, value) in headers.items()], payload)
        for headers, payload in raw
    )
    expected = botocore_messages(data)
    assert len(expected) == len(raw)
    for chunks in ([data], split_at(data, cuts)):
        got = messages(chunks)
        assert [(m.headers, m.payload) for m in got] == expected
        assert [m.offset for m in got] == _offsets(data)


def _offsets(data: bytes) -> list[int]:
    out, at = [], 0
    while at < len(data):
        out.append(at)
        at += struct.unpack_from("!I", data, at)[0]
    return out


@given(
    texts=st.lists(st.text(max_size=50), min_size=1, max_size=5),
    position=st.integers(min_value=0),
    bit=st.integers(min_value=0, max_value=7),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=10),
)
def test_any_flipped_bit_is_a_framing_error(texts: list[str], position: int, bit: int, cuts: list[int]) -> None:
    data = bytearray(b"".join(event("contentBlockDelta", {"delta": {"text": text}}) for text in texts))
    data[position % len(data)] ^= 1 << bit
    with pytest.raises(FramingError, match="event-stream message at byte"):
        frames(split_at(bytes(data), cuts))


def _second_message_corrupted(at: int) -> bytes:
    first = event("messageStart", {"role": "assistant"})
    second = bytearray(event("contentBlockStop", {"contentBlockIndex": 0}))
    second[at] ^= 0x01
    return first + bytes(second)


def test_a_bad_prelude_crc_names_the_message() -> None:
    wire = _second_message_corrupted(8)
    first = len(event("messageStart", {"role": "assistant"}))
    with pytest.raises(
        FramingError,
        match=rf"the prelude's checksum does not match its bytes \(CRC32 0x[0-9a-f]{{8}} stored, .* at byte {first}$",
    ):
        frames([wire])


def test_a_bad_length_is_caught_by_the_prelude_crc() -> None:
    with pytest.raises(FramingError, match="the prelude's checksum does not match"):
        frames(list(one_byte(_second_message_corrupted(2))))


def test_a_bad_message_crc_names_the_message() -> None:
    wire = _second_message_corrupted(-8)  # a payload byte
    first = len(event("messageStart", {"role": "assistant"}))
    with pytest.raises(
        FramingError,
        match=rf"the message's checksum does not match its bytes \(CRC32 0x[0-9a-f]{{8}} stored, .* at byte {first}$",
    ):
        frames([wire])


def _with_prelude(total: int, headers_length: int, rest: bytes) -> bytes:
    prelude = struct.pack("!II", total, headers_length)
    return prelude + struct.pack("!I", zlib.crc32(prelude)) + rest


def test_impossible_lengths() -> None:
    with pytest.raises(FramingError, match="the total length 20 is shorter than the prelude, 10 bytes of headers"):
        frames([_with_prelude(20, 10, b"\x00" * 8)])
    with pytest.raises(FramingError, match="the headers length 131073 is over the limit of 131072"):
        frames([_with_prelude(200_000, 128 * 1024 + 1, b"")])
    with pytest.raises(
        LimitExceededError,
        match="a message of 1000 bytes at byte 0 is larger than the limit: limit max_event_bytes=999",
    ):
        frames([_with_prelude(1000, 0, b"")], max_event_bytes=999)


def _message_with_raw_headers(raw_headers: bytes, payload: bytes = b"{}") -> bytes:
    total = 16 + len(raw_headers) + len(payload)
    body = _with_prelude(total, len(raw_headers), raw_headers + payload)
    return body + struct.pack("!I", zlib.crc32(body))


@pytest.mark.parametrize(
    ("raw_headers", "message"),
    [
        pytest.param(b"\x01a\x0a", "header 'a' has the unknown value type 10", id="unknown-type"),
        pytest.param(b"\x05ab", "a header runs past the end of the headers", id="name-overruns"),
        pytest.param(b"\x01a", "a header runs past the end of the headers", id="no-value-type"),
        pytest.param(b"\x01a\x04\x00\x00", "header 'a' runs past the end of the headers", id="int-overruns"),
        pytest.param(b"\x01a\x07\x00\x05abc", "header 'a' runs past the end of the headers", id="string-overruns"),
        pytest.param(b"\x01a\x07\x00", "header 'a' runs past the end of the headers", id="length-overruns"),
        pytest.param(b"\x01a\x09" + b"\x00" * 15, "header 'a' runs past the end of the headers", id="uuid-overruns"),
        pytest.param(b"\x01a\x00\x01a\x01", "the header 'a' appears twice", id="duplicate"),
        pytest.param(b"\x01\xff\x00", "a header name is not valid UTF-8", id="bad-name"),
        pytest.param(b"\x01a\x07\x00\x01\xff", "header 'a' is not valid UTF-8", id="bad-string"),
    ],
)
def test_bad_headers(raw_headers: bytes, message: str) -> None:
    wire = event("messageStart", {}) + _message_with_raw_headers(raw_headers)
    offset = len(event("messageStart", {}))
    with pytest.raises(FramingError, match=f"^{message}, in the event-stream message at byte {offset}$"):
        frames([wire])


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        pytest.param([], "the header ':message-type' must be a non-empty string, got missing", id="no-type"),
        pytest.param([(":message-type", 7, "weird")], "unknown :message-type 'weird'", id="unknown-type"),
        pytest.param([(":message-type", 4, 1)], "':message-type' must be a non-empty string, got 1", id="not-str"),
        pytest.param([(":message-type", 7, "event")], "':event-type' must be a non-empty string", id="no-event-type"),
        pytest.param(
            [(":message-type", 7, "exception")], "':exception-type' must be a non-empty string", id="no-exception-type"
        ),
        pytest.param([(":message-type", 7, "error")], "':error-code' must be a non-empty string", id="no-error-code"),
        pytest.param(
            [(":message-type", 7, "error"), (":error-code", 7, "E"), (":error-message", 6, b"x")],
            "':error-message' is not a string",
            id="error-message-bytes",
        ),
    ],
)
def test_headers_that_do_not_make_a_frame(headers: list[Header], message: str) -> None:
    with pytest.raises(FramingError, match=f"{message}.*, in the event-stream message at byte 0$"):
        frames([encode_message(headers, b"{}")])


def test_a_payload_that_is_not_utf8_names_the_byte() -> None:
    wire = encode_message([(":message-type", 7, "event"), (":event-type", 7, "x")], b'{"a":"\xff"}')
    headers_length = struct.unpack_from("!I", wire, 4)[0]
    with pytest.raises(FramingError, match=f"payload is not valid UTF-8 at byte {12 + headers_length + 6}$"):
        frames([wire])


@pytest.mark.parametrize("keep", [1, 11, 12, 13, 40])
def test_a_message_cut_at_the_end_of_input(keep: int) -> None:
    whole = event("messageStart", {"role": "assistant"})
    cut = event("contentBlockStop", {"contentBlockIndex": 0})[:keep]
    decoder = EventStreamDecoder()
    assert decoder.feed(whole + cut) == [Frame("messageStart", '{"role":"assistant"}')]
    expected = (
        "of its at least 12" if keep < 12 else f"of its {len(event('contentBlockStop', {'contentBlockIndex': 0}))}"
    )
    with pytest.raises(FramingError, match=f"ended after {keep} {expected} bytes, .* message at byte {len(whole)}$"):
        decoder.flush()


def test_nothing_left_at_the_end_is_fine() -> None:
    decoder = EventStreamDecoder()
    assert decoder.flush() == []
    assert decoder.feed(b"") == []
    assert frames([event("a", {}), event("b", {})]) == [Frame("a", "{}"), Frame("b", "{}")]


def test_a_long_message_byte_by_byte_is_kept_as_pieces() -> None:
    # As for NDJSON: the bytes are joined once at the prelude and once when the message is
    # whole, never on every read.
    wire = event("contentBlockDelta", {"delta": {"text": "a" * 100_000}})
    decoder = EventStreamDecoder()
    for i in range(len(wire) - 1):
        assert decoder.feed(wire[i : i + 1]) == []
    assert len(decoder._pending) == 1 + (len(wire) - 1 - 12)
    assert decoder.feed(wire[-1:]) == [
        Frame("contentBlockDelta", json.dumps({"delta": {"text": "a" * 100_000}}, separators=(",", ":")))
    ]
    assert decoder._pending == []


def test_messages_and_a_partial_one_in_one_read() -> None:
    first, second = event("a", {}), event("b", {"x": 1})
    decoder = EventStreamDecoder()
    assert decoder.feed(first + second[:20]) == [Frame("a", "{}")]
    assert len(decoder._pending) == 1  # only the partial message is kept
    assert decoder.feed(second[20:] + first[:5]) == [Frame("b", '{"x":1}')]
    assert decoder.feed(first[5:]) == [Frame("a", "{}")]
