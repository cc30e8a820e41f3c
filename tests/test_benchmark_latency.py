"""The latency benchmark, on a tiny case: its turn decodes to its calls, and it runs end to end
over the loopback server, every call run once in each way (no timing is asserted)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

import streamkit
from benchmarks import latency
from streamkit import ResponseEnd, TextDelta, ToolCall

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("provider", "usage"),
    [
        ("anthropic", lambda paced: {"input_tokens": 472, "output_tokens": paced}),
        ("bedrock", lambda paced: {"inputTokens": 472, "outputTokens": paced, "totalTokens": 472 + paced}),
    ],
)
def test_the_turn_decodes_to_its_text_and_three_calls(
    provider: streamkit.Provider, usage: Callable[[int], dict[str, int]]
) -> None:
    writes = latency.TURNS[provider][0](3)
    events = list(streamkit.iter_events([data for data, _ in writes], provider))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == latency.TEXT
    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall(index, call_id, name, arguments) for index, (call_id, name, arguments) in enumerate(latency.CALLS, 1)
    ]
    paced = sum(tokens for _, tokens in writes)
    assert paced == sum(tokens for _, tokens in latency.anthropic_turn(fragment=3))  # one pace for every form
    assert events[-1] == ResponseEnd("tool_use", usage(paced))


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


@pytest.mark.parametrize(
    ("package", "rows"),
    [
        ("agents", {"openai-agents Runner"}),
        ("pydantic_ai", {"pydantic-ai (early)"}),
        ("langchain", {"langchain create_agent", "langchain + early tools"}),
        ("litellm", {"LiteLLM, own loop"}),
        ("agno", {"agno Agent"}),
        ("smolagents", {"smolagents agent"}),
        ("crewai", {"CrewAI Crew"}),
        ("google.adk", {"Google ADK Runner"}),
        ("boto3", {"boto3 loop, early", "boto3 install(), early", "boto3 Strands-like"}),
    ],
    ids=lambda value: value.replace(".", "_") if isinstance(value, str) else "rows",  # -k google_adk
)
def test_an_installed_framework_has_its_rows(package: str, rows: set[str]) -> None:
    pytest.importorskip(package)
    assert rows <= set(latency.FRAMEWORK_WAYS)


TINY: dict[str, tuple[float, ...]] = {"tiny": (0.01, 0.0, 0.02)}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the frameworks' loops run on asyncio
@pytest.mark.parametrize(
    "framework",
    latency.FRAMEWORKS,
    ids=[module.removeprefix("benchmarks.") for module, _ in latency.FRAMEWORKS.values()],
)
async def test_only_runs_a_frameworks_rows_beside_run_tools(framework: str, anyio_backend: str) -> None:
    if framework in latency.SKIPPED:
        pytest.skip(latency.SKIPPED[framework])
    rows = list(latency.FRAMEWORKS[framework][1])
    lines = await latency.main_async(1, 20000.0, TINY, only=[framework])
    shown = [line.split("  ")[1].strip() for line in lines[2 : 4 + len(rows)]]
    assert shown == ["run_tools (early)", "after the stream", *rows]
    assert [line.rsplit(": ", 1)[0] for line in lines[4 + len(rows) :]] == [
        "  first result, run_tools / after the stream",
        "  last result, run_tools / after the stream",
        *(f"  last result, run_tools / {row}" for row in rows),
    ]


def test_a_framework_not_installed_is_skipped_saying_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    framework = next(iter(latency.SKIPPED), None)
    if framework is None:
        pytest.skip("every framework is installed here")
    monkeypatch.setattr(latency, "SCENARIOS", TINY)
    latency.main(["--quick", "--only", framework, "--tokens-per-second", "20000"])
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(rf"{re.escape(framework)}: skipped, not installed here \(No module named '[\w.]+'\)", lines[1])
    assert [line.split("  ")[1].strip() for line in lines[4:6]] == ["run_tools (early)", "after the stream"]
    assert len(lines) == 2 + 2 + 2 + 2


def test_a_missing_framework_is_noted_but_a_broken_row_module_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(latency, "SKIPPED", {})
    latency._load("absent", "no_such_framework_here", {"row": "function"})
    assert latency.SKIPPED == {"absent": "not installed here (No module named 'no_such_framework_here')"}
    with pytest.raises(ModuleNotFoundError, match=r"benchmarks\.latency_no_such_rows"):
        latency._load("broken", "benchmarks.latency_no_such_rows", {"row": "function"})
    assert "broken" not in latency.SKIPPED and "row" not in latency.FRAMEWORK_WAYS


def test_only_names_a_known_framework(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        latency.main(["--only", "nope"])
    assert exit_.value.code == 2
    assert "argument --only: invalid choice: 'nope' (choose from" in capsys.readouterr().err
