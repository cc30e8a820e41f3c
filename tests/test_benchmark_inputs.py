"""The benchmark's generated inputs: valid SSE whose calls decode to the generated objects."""

from __future__ import annotations

import re
from typing import Any

import pytest

import streamkit
from benchmarks.inputs import WIRES, make_case
from benchmarks.strategies import chunked, floor
from benchmarks.turns import hand_loop, make_turn, reads
from streamkit import Provider

from .helpers import one_byte


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize(("fragment", "calls"), [(1, 1), (4, 2), (64, 4)])
def test_generated_streams_decode_to_the_generated_arguments(wire: str, fragment: int, calls: int) -> None:
    case = make_case(wire, 300, fragment, calls)
    items = list(streamkit.iter_events(chunked(case.data, 37), case.wire))
    got = [item for item in items if isinstance(item, streamkit.ToolCall | streamkit.InvalidToolCall)]
    assert [call.input for call in got if isinstance(call, streamkit.ToolCall)] == list(case.arguments)
    assert [call.name for call in got] == ["write_file"] * calls
    assert [call.index for call in got] == list(range(calls))
    assert all(not call.anomalies for call in got)
    assert isinstance(items[-1], streamkit.ResponseEnd)
    assert items[-1].stop_reason == ("tool_calls" if wire == "openai_chat" else "tool_use")
    assert floor(case.data, wire) == list(case.arguments)


@pytest.mark.parametrize("wire", WIRES)
def test_generated_arguments_hold_non_ascii_and_escapes(wire: str) -> None:
    case = make_case(wire, 2048, 4, 1)
    text = case.texts[0]
    assert abs(len(text.encode()) - 2048) <= 16
    assert "\\n" in text and '\\"' in text and "\\\\" in text
    assert any(ord(char) > 0xFFFF for char in text) and any(0x80 <= ord(char) < 0x800 for char in text)
    assert case.data == make_case(wire, 2048, 4, 1).data  # seeded: the same bytes every time


def test_end_spans_hold_each_calls_end_marker() -> None:
    case = make_case("anthropic", 200, 8, 2)
    starts = [start for start, _ in case.end_spans]
    ends = [end for _, end in case.end_spans]
    assert [case.data[start:end] for start, end in case.end_spans] == [
        f'event: content_block_stop\ndata: {{"type":"content_block_stop","index":{index}}}\n\n'.encode()
        for index in range(2)
    ]
    assembler = streamkit.Assembler("anthropic")
    for chunk in one_byte(case.data[: starts[0]]):
        assert assembler.feed(chunk) == []
    (call,) = assembler.feed(case.data[starts[0] : ends[0]])
    assert isinstance(call, streamkit.ToolCall) and call.input == case.arguments[0]


def test_bad_generator_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown wire format 'gemini'"):
        make_case("gemini", 100, 4, 1)
    with pytest.raises(ValueError, match="must be positive"):
        make_case("anthropic", 100, 0, 1)


@pytest.mark.parametrize("wire", WIRES)
def test_every_installed_strategy_decodes_the_generated_calls(wire: str) -> None:
    from benchmarks.strategies import STRATEGIES

    case = make_case(wire, 300, 4, 2)
    ran = []
    for strategy in STRATEGIES:
        if wire in strategy.wires and not strategy.missing():
            assert strategy.prepare(case)() == list(case.arguments), strategy.name
            ran.append(strategy.name)
    assert {"floor", "deferred", "early/every", "early/4KiB", "early/x1.25", "httpx-sse"} <= set(ran)


def test_the_suite_runs_end_to_end_on_tiny_cases() -> None:
    from benchmarks.__main__ import exponents, report, targets
    from benchmarks.measure import Config, Progress, time_cases
    from benchmarks.strategies import STRATEGIES

    config = Config(sizes=(256, 512), fragments=(16,), calls=(1,), repeats=2, min_sample=0.0, max_events=20)
    chosen = [s for s in STRATEGIES if s.name in ("floor", "deferred", "early/x1.25")]
    rows = time_cases(config, chosen, Progress(1, enabled=False))
    assert [(r.wire, r.size, r.strategy) for r in rows] == [
        (wire, size, name) for wire in WIRES for size in (256, 512) for name in ("floor", "deferred", "early/x1.25")
    ]
    measured = [r for r in rows if not r.skipped]
    assert [(r.wire, r.size) for r in rows if r.skipped] == [(wire, 512) for wire in WIRES for _ in range(3)]
    assert all(r.seconds is not None and len(r.samples) == 2 for r in measured)
    results = {
        "timings": [r.to_dict() for r in rows],
        "exponents": exponents(rows),
        "inflight": [],
        "concurrency": [],
        "replay": [],
        "skipped": [],
    }
    results["targets"] = targets(results)
    text = report(results)
    assert "## Time per stream (median)" in text
    for wire in WIRES:
        for name in ("floor", "deferred", "early/x1.25"):
            assert re.search(rf"\| {wire} 256 B f16 c1 +\| {re.escape(name)} +\| [0-9.]+ ", text), (wire, name)


TURN_WIRES: tuple[Provider, ...] = ("openai_chat", "anthropic")


@pytest.mark.parametrize("wire", TURN_WIRES)
@pytest.mark.parametrize(("size", "tokens", "expected"), [(0, 0, [{}]), (100, 40, None)])
def test_a_realistic_turn_reads_the_same_in_streamkit_and_the_hand_loop(
    wire: Provider, size: int, tokens: int, expected: list[dict[str, Any]] | None
) -> None:
    # The fixed cost per turn compares the two over the same reads: both must give its calls.
    turn = make_turn(wire, size, 1, tokens=tokens)
    chunks = reads(turn, 1)
    calls = [call.input for call in streamkit.iter_tool_calls(chunks, wire) if isinstance(call, streamkit.ToolCall)]
    assert calls == hand_loop(chunks, wire) == list(turn.arguments) == (expected or list(turn.arguments))
    assert len(turn.events) > (4 if size == 0 else 60)
