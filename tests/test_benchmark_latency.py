"""The latency benchmark, on a tiny case: its turn decodes to its calls, and it runs end to end
over the loopback server, every call run once in each way (no timing is asserted)."""

from __future__ import annotations

import re

import pytest

import streamkit
from benchmarks import latency
from streamkit import ResponseEnd, TextDelta, ToolCall

pytestmark = pytest.mark.anyio


def test_the_turn_decodes_to_its_text_and_three_calls() -> None:
    writes = latency.anthropic_turn(fragment=3)
    events = list(streamkit.iter_events([data for data, _ in writes], "anthropic"))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == latency.TEXT
    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall(index, call_id, name, arguments) for index, (call_id, name, arguments) in enumerate(latency.CALLS, 1)
    ]
    paced = sum(tokens for _, tokens in writes)
    assert events[-1] == ResponseEnd("tool_use", {"input_tokens": 472, "output_tokens": paced})


async def test_the_benchmark_runs_both_ways_on_a_tiny_case(anyio_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if anyio_backend != "asyncio":  # the frameworks' own loops run on asyncio alone
        monkeypatch.setattr(latency, "WAYS", dict(list(latency.WAYS.items())[:2]))
    lines = await latency.main_async(1, 20000.0, {"tiny": (0.01, 0.0, 0.02)})
    assert lines[0] == "tiny:"
    assert re.fullmatch(r"  run_tools \(early\) +\d+ ms +\d+ ms +\d+ ms", lines[2])
    assert re.fullmatch(r"  after the stream +\d+ ms +\d+ ms +\d+ ms", lines[3])
    frameworks = list(latency.WAYS)[2:]  # each framework's own loop, where it is installed
    for number, way in enumerate(frameworks, 4):
        assert re.fullmatch(rf"  {re.escape(way)} +\d+ ms +\d+ ms +\d+ ms", lines[number])
    ratios = lines[4 + len(frameworks) :]
    assert re.fullmatch(r"  first result, run_tools / after the stream: \d+\.\d\d", ratios[0])
    assert re.fullmatch(r"  last result, run_tools / after the stream: \d+\.\d\d", ratios[1])
    for line, way in zip(ratios[2:], frameworks, strict=True):
        assert re.fullmatch(rf"  last result, run_tools / {re.escape(way)}: \d+\.\d\d", line)


def test_openai_agents_has_its_row() -> None:
    pytest.importorskip("agents")
    assert "openai-agents Runner" in latency.WAYS


def test_pydantic_ai_has_its_row() -> None:
    pytest.importorskip("pydantic_ai")
    assert "pydantic-ai (early)" in latency.WAYS
