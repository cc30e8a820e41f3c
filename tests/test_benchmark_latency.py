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


async def test_the_benchmark_runs_both_ways_on_a_tiny_case(anyio_backend: str) -> None:
    lines = await latency.main_async(1, 20000.0, {"tiny": (0.01, 0.0, 0.02)})
    frameworks = list(latency.FRAMEWORK_WAYS) if anyio_backend == "asyncio" else []  # asyncio only
    rows = 2 + len(frameworks)
    assert lines[0] == "tiny:"
    assert re.fullmatch(r"  run_tools \(early\) +\d+ ms +\d+ ms +\d+ ms", lines[2])
    assert re.fullmatch(r"  after the stream +\d+ ms +\d+ ms +\d+ ms", lines[3])
    for number, way in enumerate(frameworks):
        assert re.fullmatch(rf"  {re.escape(way)} +\d+ ms +\d+ ms +\d+ ms", lines[4 + number])
        ratio = rf"  last result, run_tools / {re.escape(way)}: \d+\.\d\d"
        assert re.fullmatch(ratio, lines[4 + rows + number])
    assert re.fullmatch(r"  first result, run_tools / after the stream: \d+\.\d\d", lines[2 + rows])
    assert re.fullmatch(r"  last result, run_tools / after the stream: \d+\.\d\d", lines[3 + rows])
    assert len(lines) == 4 + rows + len(frameworks)


def test_openai_agents_has_its_row() -> None:
    pytest.importorskip("agents")
    assert "openai-agents Runner" in latency.FRAMEWORK_WAYS


def test_pydantic_ai_has_its_row() -> None:
    pytest.importorskip("pydantic_ai")
    assert "pydantic-ai (early)" in latency.FRAMEWORK_WAYS


def test_langchain_has_its_rows() -> None:
    pytest.importorskip("langchain")
    assert {"langchain create_agent", "langchain + early tools"} <= set(latency.FRAMEWORK_WAYS)


def test_litellm_has_its_row() -> None:
    pytest.importorskip("litellm")
    assert "LiteLLM, own loop" in latency.FRAMEWORK_WAYS


def test_agno_has_its_row() -> None:
    pytest.importorskip("agno")
    assert "agno Agent" in latency.FRAMEWORK_WAYS


def test_smolagents_has_its_row() -> None:
    pytest.importorskip("smolagents")
    assert "smolagents agent" in latency.FRAMEWORK_WAYS
