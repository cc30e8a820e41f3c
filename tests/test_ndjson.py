"""The NDJSON framer: line ends, blank lines, UTF-8 across chunks, limits, a cut last line."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamkit import FramingError, LimitExceededError
from streamkit._events import Frame
from streamkit._ndjson import NDJSONDecoder

from .helpers import one_byte, split_at


def frames(chunks: list[bytes], **options: int) -> list[Frame]:
    decoder = NDJSONDecoder(**options)
    out: list[Frame] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out + decoder.flush()


def lines(*texts: str) -> list[Frame]:
    return [Frame(None, text) for text in texts]


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        pytest.param(b'{"a":1}\n', lines('{"a":1}'), id="lf"),
        pytest.param(b'{"a":1}\r\n{"b":2}\r\n', lines('{"a":1}', '{"b":2}'), id="crlf"),
        pytest.param(b'{"a":1}\n{"b":2}\r\n', lines('{"a":1}', '{"b":2}'), id="mixed"),
        pytest.param(b"\n\n1\n\r\n \t\n2\n", lines("1", "2"), id="blank-lines-skipped"),
        pytest.param(b"\xef\xbb\xbf1\n", lines("1"), id="bom"),
        pytest.param(b"1\n\xef\xbb\xbf2\n", lines("1", "\ufeff2"), id="later-bom-is-data"),
        pytest.param(b"a\rb\n", lines("a\rb"), id="lone-cr-is-no-line-end"),
        pytest.param(b" 1 \n", lines(" 1 "), id="spaces-kept"),
        pytest.param("x\u2028y\u0085z\n".encode(), lines("x\u2028y\u0085z"), id="unicode-separators-are-data"),
        pytest.param(b"1\n  \r\n", lines("1"), id="blank-last-line"),
        pytest.param(b"1\n \t", lines("1"), id="whitespace-after-last-line-end"),
        pytest.param(b"", [], id="empty"),
    ],
)
def test_rules(wire: bytes, expected: list[Frame]) -> None:
    assert frames([wire]) == expected
    assert frames(list(one_byte(wire))) == expected


def test_crlf_split_across_chunks() -> None:
    assert frames([b"1\r", b"\n2\r", b"\n"]) == lines("1", "2")


def test_multibyte_character_split_across_chunks() -> None:
    wire = '{"city": "Zürich ☃ 😀"}\n'.encode()
    for cut in range(1, len(wire)):
        assert frames([wire[:cut], wire[cut:]]) == lines('{"city": "Zürich ☃ 😀"}')


def test_a_frame_comes_out_as_soon_as_its_line_end_arrives() -> None:
    decoder = NDJSONDecoder()
    assert decoder.feed(b'{"a":') == []
    assert decoder.feed(b"1}") == []
    assert decoder.feed(b"\n{") == lines('{"a":1}')


def test_invalid_utf8_names_the_offset() -> None:
    with pytest.raises(FramingError, match="not valid UTF-8 at byte 9 near 'ab<0xFF>'"):
        frames([b"1234\r\n\nab\xff\n"])
    with pytest.raises(FramingError, match="not valid UTF-8 at byte 9"):
        frames(list(one_byte(b"1234\r\n\nab\xff\n")))


def test_offsets_count_a_dropped_bom() -> None:
    with pytest.raises(FramingError, match="at byte 5"):
        frames([b"\xef\xbb\xbf1\n\xff\n"])


def test_a_cut_last_line_is_an_error_naming_its_offset() -> None:
    with pytest.raises(FramingError, match=r"ended inside a line \(6 bytes with no line end\) at byte 8"):
        frames([b'{"a":1}\n{"b":2'])
    decoder = NDJSONDecoder()
    assert decoder.feed(b'{"a":1}\n{"done":true}') == lines('{"a":1}')
    with pytest.raises(FramingError, match="at byte 8"):
        decoder.flush()


def test_line_limit_while_buffering() -> None:
    decoder = NDJSONDecoder(max_event_bytes=10)
    assert decoder.feed(b"1\n12345") == lines("1")
    with pytest.raises(LimitExceededError) as info:
        decoder.feed(b"678901")
    assert (info.value.limit, info.value.value) == ("max_event_bytes", 10)
    assert str(info.value) == "an NDJSON line at byte 2 grew past the limit: limit max_event_bytes=10"


def test_line_limit_on_a_whole_line() -> None:
    assert frames([b"1234567890\n"], max_event_bytes=10) == lines("1234567890")
    with pytest.raises(LimitExceededError, match=r"line at byte 2 grew past the limit: limit max_event_bytes=10"):
        frames([b"1\n12345678901\n"], max_event_bytes=10)


def _reference(data: bytes) -> list[Frame]:
    """What the framer must give for data that ends with a line end."""
    out = []
    for line in data.split(b"\n")[:-1]:
        text = line.removesuffix(b"\r").decode()
        if text.strip(" \t\r"):
            out.append(Frame(None, text))
    return out


_LINE = st.sampled_from(['{"a": 1}', "", " ", "\t", "[1,2]", '"é☃😀"', "x\ry", "\u2028", '{"k": "v\\n"}'])


@given(
    lines_=st.lists(st.tuples(_LINE, st.sampled_from(["\n", "\r\n"])), max_size=30),
    cuts=st.lists(st.integers(min_value=0, max_value=1000), max_size=20),
)
def test_any_chunking_gives_the_same_frames(lines_: list[tuple[str, str]], cuts: list[int]) -> None:
    data = "".join(line + end for line, end in lines_).encode()
    expected = _reference(data)
    assert frames([data]) == expected
    assert frames(split_at(data, cuts)) == expected


def test_a_long_line_byte_by_byte_is_kept_in_one_buffer() -> None:
    # Constant cost per byte: re-joining the buffer on every byte would be quadratic (parsers
    # that do so have been measured at 123x the time for 16x the deltas), and a list of tiny pieces
    # would cost a Python object per piece. The line grows in one buffer, read at its end.
    decoder = NDJSONDecoder()
    line = b'{"x": "' + b"a" * 100_000 + b'"}'
    for i in range(len(line)):
        assert decoder.feed(line[i : i + 1]) == []
    assert decoder._pending == line
    assert decoder.feed(b"\n") == [Frame(None, line.decode())]
    assert not decoder._pending
