"""The framing rule, held once in ``streamkit._framing``: the same for every framer and the Assembler."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from streamkit import Assembler, FramingError, IncompleteStreamError, ResponseEnd
from streamkit._awsstream import EventStreamDecoder
from streamkit._events import Frame
from streamkit._framing import Flushed, Framer
from streamkit._ndjson import NDJSONDecoder
from streamkit._sse import SSEDecoder

from .eventstream_encode import event

#: Each framer, a chunk holding one good frame and then bad bytes, and that frame.
BAD_AFTER_GOOD: list[tuple[Callable[[], Framer], bytes, Frame]] = [
    (SSEDecoder, b"data: 1\n\ndata: a\xffb\n\n", Frame(None, "1")),
    (NDJSONDecoder, b'{"a": 1}\n{"a": \xff}\n', Frame(None, '{"a": 1}')),
    (
        EventStreamDecoder,
        event("messageStart", {"role": "assistant"}) + b"\x00" * 16,
        Frame("messageStart", '{"role":"assistant"}'),
    ),
]


@pytest.mark.parametrize(("make", "chunk", "good"), BAD_AFTER_GOOD, ids=["sse", "ndjson", "eventstream"])
def test_the_frames_before_bad_bytes_come_first_and_the_error_on_every_later_call(
    make: Callable[[], Framer], chunk: bytes, good: Frame
) -> None:
    framer = make()
    assert framer.feed(chunk) == [good]
    with pytest.raises(FramingError) as first:
        framer.feed(b"\n")
    with pytest.raises(FramingError) as again:
        framer.flush()
    assert again.value is first.value


@pytest.mark.parametrize(
    ("make", "bad"),
    [(SSEDecoder, b"data: \xff\n\n"), (NDJSONDecoder, b"\xff\n"), (EventStreamDecoder, b"\x00" * 16)],
    ids=["sse", "ndjson", "eventstream"],
)
def test_an_error_with_nothing_before_it_is_raised_now_and_kept(make: Callable[[], Framer], bad: bytes) -> None:
    framer = make()
    with pytest.raises(FramingError) as first:
        framer.feed(bad)
    with pytest.raises(FramingError) as again:
        framer.feed(b"data: 1\n\n")
    assert again.value is first.value


@pytest.mark.parametrize(
    ("tail", "clean"),
    [
        (b"", True),
        (b"data: 2\n", False),  # an event with no blank line after it: discarded
        (b"data: 2", False),  # a line cut off
        (b"event: x\n", False),  # an event begun
        (b": keep-alive\n", True),  # a comment: nothing dropped
        (b"\n", True),
    ],
)
def test_the_sse_framers_flush_says_whether_the_input_ended_cleanly(tail: bytes, clean: bool) -> None:
    framer = SSEDecoder()
    assert framer.feed(b"data: 1\n\n" + tail) == [Frame(None, "1")]
    flushed = framer.flush()
    assert isinstance(flushed, Flushed)
    assert (flushed, flushed.clean) == ([], clean)


CHUNK = b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'


@pytest.mark.parametrize(("tail", "whole"), [(b"", True), (b": ping\n", True), (b"data: {", False)])
def test_a_stream_with_no_done_ends_normally_only_when_the_framer_dropped_nothing(tail: bytes, whole: bool) -> None:
    # OpenAI-compatible servers that send no [DONE] (Cerebras): every choice finished is the end,
    # unless the framer discarded an event the input ended inside.
    assembler = Assembler("openai_chat")
    assembler.feed(CHUNK + tail)
    if whole:
        assert isinstance(assembler.flush()[-1], ResponseEnd)
    else:
        with pytest.raises(IncompleteStreamError):
            assembler.flush()
