"""Per-call times (``times=True``): when each call's first fragment, end marker and delivery came,
read off a clock the test sets before each line it feeds, so every time is known exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

import streamkit
from streamkit import Assembler, CallTimes, IncompleteStreamError, InvalidToolCall
from streamkit._cli import to_json_line
from streamkit._types import Call
from streamkit.integrations._turn_json import turn_from_json, turn_json

from .helpers import Clock

FIXTURES = Path(__file__).parent.parent / "fixtures"


def fed_by_line(name: str, clock: Clock, **options: bool) -> list[streamkit.StreamEvent]:
    provider = name.split("/")[0]
    assembler = Assembler(provider, **options)  # type: ignore[arg-type]
    out: list[streamkit.StreamEvent] = []
    lines = (FIXTURES / name).read_bytes().splitlines(keepends=True)
    for number, line in enumerate(lines, 1):
        clock.now = number * 1000
        out += assembler.feed(line)
    return out + assembler.flush()


def calls_of(events: list[streamkit.StreamEvent]) -> list[Call]:
    return [item for item in events if isinstance(item, Call)]


def test_each_call_carries_its_first_fragment_end_marker_and_delivery(clock: Clock) -> None:
    calls = calls_of(fed_by_line("anthropic/text_then_two_calls.sse", clock, times=True))
    # Each SSE event is read at the blank line after it: toolu_A starts at line 21, stops at 36.
    assert [call.times for call in calls] == [CallTimes(21000, 36000, 36000), CallTimes(39000, 48000, 48000)]


def test_without_times_no_clock_is_read_and_calls_carry_none(clock: Clock) -> None:
    calls = calls_of(fed_by_line("anthropic/text_then_two_calls.sse", clock))
    assert [call.times for call in calls] == [None, None]
    assert clock.reads == 0


def test_a_call_cut_by_the_output_limit_is_timed_to_the_stop(clock: Clock) -> None:
    calls = calls_of(fed_by_line("anthropic/max_tokens_truncated.sse", clock, times=True))
    cut = calls[1]
    assert isinstance(cut, InvalidToolCall) and cut.truncated
    # toolu_B opens at the blank line 15; the stop (max_tokens) that cuts it is read at line 24.
    assert [call.times for call in calls] == [CallTimes(6000, 12000, 12000), CallTimes(15000, 24000, 24000)]


def test_the_calls_an_error_carries_are_timed_when_the_stream_failed(clock: Clock) -> None:
    with pytest.raises(IncompleteStreamError) as caught:
        fed_by_line("anthropic/no_message_stop.sse", clock, times=True)
    last = len((FIXTURES / "anthropic/no_message_stop.sse").read_bytes().splitlines()) * 1000
    unfinished = caught.value.unfinished
    assert unfinished, "the fixture leaves a call open"
    assert all(call.times is not None and call.times.end_marker == last for call in unfinished)


def test_times_change_neither_equality_nor_the_replay_line_nor_the_stored_turn(clock: Clock) -> None:
    timed = fed_by_line("anthropic/text_then_two_calls.sse", clock, times=True)
    plain = fed_by_line("anthropic/text_then_two_calls.sse", clock)
    assert timed == plain
    assert [to_json_line(item) for item in timed] == [to_json_line(item) for item in plain]
    turn = streamkit.Turn.from_events(timed, "anthropic")
    stored = turn_json(turn)
    assert "times" not in str(stored)
    assert turn_from_json(stored, "stored") == turn


def test_times_is_an_option_of_every_iterator(clock: Clock) -> None:
    body = (FIXTURES / "openai_chat" / "text_then_two_calls.sse").read_bytes()
    clock.now = 7
    calls = list(streamkit.iter_tool_calls([body], "openai_chat", times=True))
    assert [call.times for call in calls] == [CallTimes(7, 7, 7), CallTimes(7, 7, 7)]
