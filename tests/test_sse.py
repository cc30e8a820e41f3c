"""The SSE framer: the WHATWG rules, any chunking, and httpx-sse as an oracle."""

from __future__ import annotations

import pytest
from httpx_sse._decoders import SSEDecoder as OracleDecoder
from httpx_sse._decoders import SSELineDecoder as OracleLines
from hypothesis import given
from hypothesis import strategies as st

from streamkit import FramingError, LimitExceededError
from streamkit._events import Frame
from streamkit._sse import _MAX_NAMES, _NAMES, EVENT_END, SSEDecoder

from .helpers import one_byte, split_at


def frames(chunks: list[bytes], **options: int) -> list[Frame]:
    decoder = SSEDecoder(**options)
    out: list[Frame] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out + decoder.flush()


def oracle(data: bytes) -> list[Frame]:
    """httpx-sse's result, keeping only events with data, as streamkit dispatches them."""
    lines, decoder = OracleLines(), OracleDecoder()
    out = []
    for line in [*lines.decode(data.decode("utf-8")), *lines.flush()]:
        event = decoder.decode(line)
        if event is not None:
            out.append(event)
    return [Frame(e.event if e.event != "message" else None, e.data) for e in out if e.data]


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        pytest.param(b"data: a\n\n", [Frame(None, "a")], id="lf"),
        pytest.param(b"data: a\r\n\r\n", [Frame(None, "a")], id="crlf"),
        pytest.param(b"data: a\r\r", [Frame(None, "a")], id="cr"),
        pytest.param(b"data:a\n\n", [Frame(None, "a")], id="no-space"),
        pytest.param(b"data:  a\n\n", [Frame(None, " a")], id="one-space-removed"),
        pytest.param(b"data: a\ndata: b\n\n", [Frame(None, "a\nb")], id="multi-line"),
        pytest.param(b"event: x\ndata: 1\n\n", [Frame("x", "1")], id="event"),
        pytest.param(b": keep-alive\n\ndata: 1\n\n", [Frame(None, "1")], id="comment"),
        pytest.param(b"event: ping\n\ndata: 1\n\n", [Frame(None, "1")], id="event-without-data"),
        pytest.param(b"data\n\n", [Frame(None, "")], id="field-without-colon"),
        pytest.param(b"id: 7\nretry: 10\nfoo: bar\ndata: z\n\n", [Frame(None, "z")], id="other-fields"),
        pytest.param(b"\xef\xbb\xbfdata: a\n\n", [Frame(None, "a")], id="bom"),
        pytest.param(b"data: \xef\xbb\xbfa\n\n", [Frame(None, "\ufeffa")], id="later-bom-is-data"),
        pytest.param(b"data: a\n\ndata: b", [Frame(None, "a")], id="unfinished-last-event-dropped"),
        pytest.param(
            "data: x\u2028y\u0085z\u2029\n\n".encode(), [Frame(None, "x\u2028y\u0085z\u2029")], id="separators"
        ),
        pytest.param(b"data: a\r\n\ndata: b\n\r\n", [Frame(None, "a"), Frame(None, "b")], id="mixed-line-ends"),
    ],
)
def test_rules(wire: bytes, expected: list[Frame]) -> None:
    assert frames([wire]) == expected
    assert frames(list(one_byte(wire))) == expected


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    # Were the CR taken as a line end, the LF would be an empty line dispatching early.
    assert frames([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]) == [Frame(None, "a\nb")]


def test_bom_split_byte_by_byte() -> None:
    assert frames([b"\xef", b"\xbb", b"\xbf", b"data: 1\n\n"]) == [Frame(None, "1")]


def test_multibyte_character_split_across_chunks() -> None:
    wire = 'data: {"city": "Zürich ☃ 😀"}\n\n'.encode()
    for cut in range(1, len(wire)):
        assert frames([wire[:cut], wire[cut:]]) == [Frame(None, '{"city": "Zürich ☃ 😀"}')]


def test_invalid_utf8_names_the_offset() -> None:
    with pytest.raises(FramingError, match="not valid UTF-8 at byte 8"):
        frames([b"data: ab\xff\n\n"])


def test_event_size_limit() -> None:
    with pytest.raises(LimitExceededError) as info:
        frames([b"data: " + b"x" * 50, b"y" * 60], max_event_bytes=100)
    assert (info.value.limit, info.value.value, info.value.index) == ("max_event_bytes", 100, None)
    assert str(info.value) == "an SSE event grew past the limit: limit max_event_bytes=100"
    with pytest.raises(LimitExceededError) as info:
        frames([b"data: " + b"x" * 60 + b"\n" + b"data: " + b"y" * 60 + b"\n"], max_event_bytes=100)
    assert str(info.value) == "an SSE event grew past the limit: limit max_event_bytes=100"


_LINE = st.sampled_from(
    [
        'data: {"a": 1}',
        "data:x",
        "data",
        "event: e",
        "event:",
        ": c",
        "id: 1",
        "retry: 5",
        "data:  sp",
        "",
        "",
        "data: é☃😀",
        "foo",
        "data: a\u2028b",
    ]
)
_END = st.sampled_from(["\n", "\r\n", "\r"])


@given(
    lines=st.lists(st.tuples(_LINE, _END), max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=20),
)
def test_matches_httpx_sse_at_any_chunking(lines: list[tuple[str, str]], cuts: list[int]) -> None:
    data = "".join(line + end for line, end in lines).encode()
    expected = oracle(data)
    # httpx-sse also dispatches events whose data is empty; streamkit's decoders skip them.
    assert [f for f in frames([data]) if f.data] == expected
    assert [f for f in frames(split_at(data, cuts)) if f.data] == expected


_SHAPED = st.sampled_from(
    [
        'data: {"a": 1}',
        "data: é☃😀",
        "data: ",
        "event: e",
        "event: content_block_delta",
        "event: ",
        "data:x",
        ": c",
        "id: 1",
        "",
        "",
        "",
    ]
)


@given(
    lines=st.lists(_SHAPED, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=1500), max_size=12),
)
def test_lf_only_streams_match_httpx_sse_at_any_chunking(lines: list[str], cuts: list[int]) -> None:
    # LF only and mostly the common shapes: the events read whole from the bytes (after a
    # first read, and after an event left open by the read before) meet the line-by-line rules.
    data = ("data: 0\n\n" + "".join(line + "\n" for line in lines)).encode()
    expected = oracle(data)
    assert [f for f in frames([data]) if f.data] == expected
    assert [f for f in frames(split_at(data, cuts)) if f.data] == expected


def test_common_shapes_read_whole_after_the_first_read() -> None:
    head = b"event: ping\ndata: {}\n\n"
    body = b"event: delta\ndata: 1\n\nevent: delta\ndata: \xc3\xa9\n\nevent: \ndata: 3\n\nevent: delta\n"
    tail = b"data: 4\n\ndata: 5\n\ndata: 6\n\n"
    expected = [Frame("ping", "{}"), Frame("delta", "1"), Frame("delta", "é"), Frame(None, "3")]
    expected += [Frame("delta", "4"), Frame(None, "5"), Frame(None, "6")]
    assert frames([head, body, tail]) == expected


def test_invalid_utf8_after_the_first_read_names_the_same_offset() -> None:
    first = b"data: 1\n\n"
    later = b"data: 2\n\ndata: a\xffb\n\ndata: 4\n\n"
    decoder = SSEDecoder()
    assert decoder.feed(first) == [Frame(None, "1")]
    assert decoder.feed(later) == [Frame(None, "2")]  # the events before the bad bytes first
    with pytest.raises(FramingError, match="not valid UTF-8 at byte 25") as info:
        decoder.feed(b"data: 5\n\n")
    assert info.value.excerpt == "data: a<0xFF>b"
    with pytest.raises(FramingError, match="not valid UTF-8 at byte 25"):
        frames(list(one_byte(first + later)))


@pytest.mark.parametrize("cut", [0, 8, 9, 10, 18])
def test_bad_bytes_in_the_event_line_the_input_ends_after_are_reported_however_it_was_cut(cut: int) -> None:
    # The event line after the last blank line is held undecoded when a read holds both: the
    # end of input decodes it, as a read that holds only it would.
    data = b"data: 1\n\nevent:\xa0x\n"
    with pytest.raises(FramingError, match="not valid UTF-8 at byte 15") as info:
        frames(split_at(data, [cut]) if cut else [data])
    assert info.value.excerpt == "event:<0xA0>x"


def test_event_size_limit_when_events_are_read_whole() -> None:
    with pytest.raises(LimitExceededError):
        frames([b"data: 0\n\n", b"data: " + b"x" * 120 + b"\n\n"], max_event_bytes=100)
    assert frames([b"data: 0\n\n", b"data: " + b"x" * 90 + b"\n\n"], max_event_bytes=100)[1].data == "x" * 90


def test_invalid_utf8_is_shown_in_hex_and_no_character_is_cut_in_the_excerpt() -> None:
    line = b"data: " + ("é" * 15 + "x").encode() + b"\xe9" + "日本".encode()
    with pytest.raises(FramingError) as info:
        frames([line + b"\n\n"])
    # 20 bytes before the bad one is inside an "é", 4 bytes after inside "本": neither is cut.
    assert info.value.excerpt == "é" * 9 + "x<0xE9>日本"
    assert str(info.value) == f"the stream is not valid UTF-8 at byte 37 near {'é' * 9 + 'x<0xE9>日本'!r}"


@pytest.mark.parametrize("size", [100_000, 4096, 7])
def test_a_long_event_of_many_short_lines_matches_httpx_sse_at_any_chunk_size(size: int) -> None:
    # Past 64 lines the data lines are joined in groups, and a block past 64 KiB is read one
    # line at a time: the frames are the same as the oracle's however the bytes come.
    lines = [f"data: {n % 7 * 'ab'}" if n % 5 else ("event: e" if n % 3 else ": c") for n in range(20_000)]
    data = ("\n".join(lines) + "\n\ndata: after\n\n" + "\r\n".join(lines) + "\r\n\r\n").encode()
    chunks = [data[i : i + size] for i in range(0, len(data), size)]
    got = frames(chunks)
    assert got == oracle(data) and len(got) == 3


def frames_by_event(chunks: list[bytes]) -> list[Frame]:
    """``frames``, each read of one whole event taken by ``whole_event`` where it takes it."""
    decoder = SSEDecoder()
    out: list[Frame] = []
    for chunk in chunks:
        one = decoder.whole_event(chunk)
        out += decoder.feed(chunk) if one is None else [Frame(one[0], one[1].decode())]
    return out + decoder.flush()


@pytest.mark.parametrize(
    "chunks",
    [
        pytest.param([b"event: a\ndata: 1\n\n", b"data: 2\n\n", "data: é\n\n".encode()], id="one-event-reads"),
        pytest.param([b"\xef\xbb\xbfdata: 1\n\n", b"data: 2\n\n"], id="bom-first"),
        pytest.param([b"data: 1\r\n\r\n", b"data: 2\n\n"], id="crlf"),
        pytest.param([b"data: 1\r", b"\ndata: 2\n\n"], id="split-crlf"),
        pytest.param([b"data: 1\n", b"\n", b"data: 2\n\n"], id="event-open"),
        pytest.param([b"data: 1\ndata: 2\n\n", b": ping\n\n", b"id: 3\ndata: 3\n\n"], id="other-shapes"),
        pytest.param([b"event: a\ndata: 1\n\nevent: b\ndata: 2\n\n", b"event:\ndata: 3\n\n"], id="two-events"),
        pytest.param([b"data: 1\n\ndata: 2", b"\n\n", b"event: x\ndata: 4\n\n"], id="partial"),
        pytest.param([b"event: \ndata: 1\n\n", b"event: a\n\ndata: 2\n\n"], id="empty-name"),
    ],
)
def test_a_read_of_one_whole_event_gives_what_feed_gives(chunks: list[bytes]) -> None:
    assert frames_by_event(chunks) == frames(chunks)


def test_a_read_of_one_event_is_refused_while_anything_is_open_or_bad() -> None:
    decoder = SSEDecoder(max_event_bytes=32)
    assert decoder.whole_event(b"data: 1\n\n") == (None, b"1")  # the first read: no BOM in it
    assert decoder.feed(b"data: 2\n") == []
    assert decoder.whole_event(b"data: 3\n\n") is None  # an event open
    assert decoder.feed(b"\n") == [Frame(None, "2")]
    assert decoder.whole_event(b"data: " + b"x" * 40 + b"\n\n") is None  # past the limit
    assert decoder.whole_event(b"data: \xff\n\n") is None  # not UTF-8: feed reports it
    with pytest.raises(FramingError, match="not valid UTF-8 at byte 24"):  # the offsets stayed exact
        decoder.feed(b"data: \xff\n\n")


def test_event_names_are_cached_across_streams_within_bounds() -> None:
    for number in range(3 * _MAX_NAMES):
        assert frames([f"event: e{number}\ndata: 1\n\n".encode()]) == [Frame(f"e{number}", "1")]
        assert len(_NAMES) <= _MAX_NAMES
    long = "n" * 100
    assert frames([f"event: {long}\ndata: 1\n\n".encode()]) == [Frame(long, "1")]
    assert long.encode() not in _NAMES


@pytest.mark.parametrize("event", [None, "content_block_delta"])
def test_an_event_written_from_its_head_is_framed_as_one(event: str | None) -> None:
    # What a reader of whole events past the framer matches is what the framer reads as one event.
    data = SSEDecoder.event_head(event) + b'{"a": "b c"}' + EVENT_END
    assert SSEDecoder().feed(data) == [Frame(event, '{"a": "b c"}')]
    start = data[: len(data) // 2]
    assert SSEDecoder.may_hold(start)
    assert not SSEDecoder.may_hold(start + b"\r")
