"""``python -m benchmarks.latency [--quick]``: how much sooner the tools' results are there with
``run_tools``, which starts each tool when its call ends, than when the tools start after the
stream, all at once, as an agent framework runs them.

A loopback HTTP server (the tests' own) streams an Anthropic turn shaped like the recorded one in
anthropic-sdk-python's fixtures (text, then three parallel ``tool_use`` blocks, their arguments in
fragments of a few characters) at a model's pace, one event per write, each write after the time
its tokens take at ``--tokens-per-second``. The tools sleep (``anyio.sleep``). Measured, in wall
time, from sending the request: the first tool result, and the last one together with the end of
the stream (what the application waits for before its next request). Each scenario alternates
the two ways ``--repeat`` times; the medians and their ratio are printed.

Each installed framework adds its own loop's rows (``FRAMEWORKS``); one not installed is skipped,
saying so, and ``--only`` keeps one framework's rows (CrewAI and Google ADK have virtualenvs of
their own). The boto3 rows read the same turn as Bedrock's ConverseStream sends it.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

import streamkit
from streamkit import ToolCall, ToolResult
from tests.eventstream_encode import event as aws_event
from tests.models import ANTHROPIC
from tests.server import LoopbackServer, Reply

#: Characters per token, for the pace: about four in English text and JSON.
CHARS_PER_TOKEN = 4
TEXT = "I'll check the current weather in all three cities at once, then compare them for you."
CALLS = (
    ("toolu_01A", "get_weather", {"location": "Paris, France", "unit": "celsius", "include_forecast": True}),
    ("toolu_01B", "get_weather", {"location": "Tokyo, Japan", "unit": "celsius", "include_forecast": True}),
    ("toolu_01C", "get_weather", {"location": "New York, NY, USA", "unit": "celsius", "include_forecast": True}),
)
#: The scenarios: the seconds each of the three tools takes.
SCENARIOS: dict[str, tuple[float, ...]] = {
    "3 tools of 300 ms": (0.3, 0.3, 0.3),
    "a slow first tool: 1 s, 300 ms, 300 ms": (1.0, 0.3, 0.3),
}


@dataclass(frozen=True)
class Timing:
    """One turn, in seconds from the request: the first and the last tool result, the stream's end."""

    first: float
    last: float
    stream_end: float


def _event(kind: str, payload: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **payload}, separators=(',', ':'))}\n\n".encode()


def _fragments(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def anthropic_turn(fragment: int = 7) -> list[tuple[bytes, int]]:
    """The turn's writes, each with the tokens it carries: an event per write, as the API sends
    them; the arguments in ``fragment``-character pieces (the recording has 2 to 8)."""
    message: dict[str, Any] = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": ANTHROPIC,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 472, "output_tokens": 1},
    }
    out = [(_event("message_start", {"message": message}), 0)]  # (bytes, the characters they carry)
    out.append((_event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}), 0))
    out.append((b'event: ping\ndata: {"type": "ping"}\n\n', 0))
    for piece in _fragments(TEXT, 4 * CHARS_PER_TOKEN):
        delta = {"index": 0, "delta": {"type": "text_delta", "text": piece}}
        out.append((_event("content_block_delta", delta), len(piece)))
    out.append((_event("content_block_stop", {"index": 0}), 0))
    for index, (call_id, name, arguments) in enumerate(CALLS, start=1):
        block = {"type": "tool_use", "id": call_id, "name": name, "caller": {"type": "direct"}, "input": {}}
        out.append((_event("content_block_start", {"index": index, "content_block": block}), len(name)))
        for piece in ["", *_fragments(json.dumps(arguments), fragment)]:
            delta = {"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}
            out.append((_event("content_block_delta", delta), len(piece)))
        out.append((_event("content_block_stop", {"index": index}), 0))
    paced = with_tokens(out)
    usage = {"output_tokens": sum(tokens for _, tokens in paced)}  # the tokens as paced
    paced.append(
        (_event("message_delta", {"delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": usage}), 0)
    )
    paced.append((_event("message_stop", {}), 0))
    return paced


def bedrock_turn(fragment: int = 7) -> list[tuple[bytes, int]]:
    """The same turn as Bedrock's ConverseStream sends it (``anthropic_turn``'s text, calls and
    pace): an AWS event-stream message per event, as botocore parses them."""
    out = [(aws_event("messageStart", {"role": "assistant"}), 0)]  # (bytes, the characters they carry)
    pieces = _fragments(TEXT, 4 * CHARS_PER_TOKEN)
    out += [(aws_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}}), len(p)) for p in pieces]
    out.append((aws_event("contentBlockStop", {"contentBlockIndex": 0}), 0))
    for index, (call_id, name, arguments) in enumerate(CALLS, start=1):
        start = {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": call_id, "name": name}}}
        out.append((aws_event("contentBlockStart", start), len(name)))
        for piece in _fragments(json.dumps(arguments), fragment):
            delta = {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}}
            out.append((aws_event("contentBlockDelta", delta), len(piece)))
        out.append((aws_event("contentBlockStop", {"contentBlockIndex": index}), 0))
    paced = with_tokens(out)
    outputs = sum(tokens for _, tokens in paced)  # the tokens as paced
    paced.append((aws_event("messageStop", {"stopReason": "tool_use"}), 0))
    usage = {"inputTokens": 472, "outputTokens": outputs, "totalTokens": 472 + outputs}
    paced.append((aws_event("metadata", {"usage": usage, "metrics": {"latencyMs": 412}}), 0))
    return paced


#: Each provider's form of the turn, and its content type.
TURNS: dict[str, tuple[Callable[[int], list[tuple[bytes, int]]], str]] = {
    "anthropic": (anthropic_turn, "text/event-stream"),
    "bedrock": (bedrock_turn, "application/vnd.amazon.eventstream"),
}


def with_tokens(writes: list[tuple[bytes, int]]) -> list[tuple[bytes, int]]:
    """Each write with the tokens its characters take."""
    return [(data, -(-chars // CHARS_PER_TOKEN)) for data, chars in writes]


def paced_reply(
    writes: list[tuple[bytes, int]], tokens_per_second: float, content_type: str = "text/event-stream"
) -> Reply:
    """``writes`` (each with its tokens) as the server sends them: each after the time its tokens take."""
    return Reply(
        writes=[data for data, _ in writes],
        pauses={number: tokens / tokens_per_second for number, (_, tokens) in enumerate(writes) if tokens},
        content_type=content_type,
    )


def reply(tokens_per_second: float, fragment: int = 7, provider: str = "anthropic") -> Reply:
    """The turn, in ``provider``'s form, as the server sends it: each write after the time its
    tokens take."""
    writes, content_type = TURNS[provider]
    return paced_reply(writes(fragment), tokens_per_second, content_type)


def tools(durations: Sequence[float], clock: Callable[[], float], finished: list[float]) -> dict[str, Any]:
    """``get_weather``, taking the next of ``durations`` per call in call order."""
    by_location = {arguments["location"]: seconds for (_, _, arguments), seconds in zip(CALLS, durations, strict=True)}

    async def get_weather(location: str, unit: str, include_forecast: bool) -> dict[str, Any]:
        await anyio.sleep(by_location[location])
        finished.append(clock())
        return {"location": location, "temperature": 21, "unit": unit}

    return {"get_weather": get_weather}


Way = Callable[[httpx.AsyncClient, str, dict[str, Any], Callable[[], float]], Awaitable[tuple[list[ToolResult], float]]]


async def early(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """``run_tools`` on the live stream: each tool starts when its call ends."""
    ended = 0.0

    async def watched(events: streamkit.AsyncEventStream) -> AsyncIterator[streamkit.StreamEvent]:
        nonlocal ended
        async for event in events:
            yield event
        ended = clock()

    async with streamkit.astream(client, "anthropic", url, json={"stream": True}) as events:
        results = await streamkit.run_tools(watched(events), tools)
    return results, ended


async def after(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """The framework's way: the whole stream first, then every tool at once."""
    async with streamkit.astream(client, "anthropic", url, json={"stream": True}) as events:
        received = [event async for event in events]
    ended = clock()
    return await streamkit.run_tools(received, tools), ended


WAYS: dict[str, Way] = {"run_tools (early)": early, "after the stream": after}
#: Each framework's rows, by its name for ``--only``: the module that runs them (importing the
#: framework) and each row's name with its function there. They run on asyncio only.
FRAMEWORKS: dict[str, tuple[str, dict[str, str]]] = {
    "openai-agents": ("benchmarks.latency_openai_agents", {"openai-agents Runner": "openai_agents"}),
    "pydantic-ai": ("benchmarks.latency_pydantic_ai", {"pydantic-ai (early)": "run"}),
    "langchain": (
        "benchmarks.latency_langchain",
        {"langchain create_agent": "after", "langchain + early tools": "early"},
    ),
    "litellm": ("benchmarks.latency_litellm", {"LiteLLM, own loop": "litellm_early"}),
    "agno": ("benchmarks.latency_agno", {"agno Agent": "agno_agent"}),
    "smolagents": ("benchmarks.latency_smolagents", {"smolagents agent": "smolagents_agent"}),
    "crewai": ("benchmarks.latency_crewai", {"CrewAI Crew": "crew"}),
    "google-adk": ("benchmarks.latency_google_adk", {"Google ADK Runner": "adk_runner"}),
    "boto3": (
        "benchmarks.latency_boto3",
        {
            "boto3 loop, early": "plain",
            "boto3 install(), early": "installed",
            "boto3 Strands-like": "strands",
        },
    ),
}
#: The rows of each framework installed here, and the framework of each row.
FRAMEWORK_WAYS: dict[str, Way] = {}
FRAMEWORK_OF: dict[str, str] = {}
#: Why each framework that is not installed here has no rows.
SKIPPED: dict[str, str] = {}
#: More paths the server answers, each with the turn in its provider's form: those a framework's
#: module declares in its ``PATHS`` (a provider other than Anthropic, in ``TURNS``).
PATHS: dict[str, str] = {}


def _load(framework: str, module_name: str, rows: dict[str, str]) -> None:
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if (exc.name or "").startswith("benchmarks"):
            raise  # the row's own module is broken, not the framework missing
        SKIPPED[framework] = f"not installed here ({exc})"
        return
    for row, function in rows.items():
        FRAMEWORK_WAYS[row] = getattr(module, function)
        FRAMEWORK_OF[row] = framework
    PATHS.update(getattr(module, "PATHS", {}))


for _framework, (_module, _rows) in FRAMEWORKS.items():
    _load(_framework, _module, _rows)
WAYS.update(FRAMEWORK_WAYS)


def ways(only: Collection[str] | None = None) -> dict[str, Way]:
    """The ways that can run here, of the frameworks in ``only`` (all by default): the frameworks'
    loops need asyncio (not trio)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return {name: way for name, way in WAYS.items() if name not in FRAMEWORK_WAYS}
    return {
        name: way
        for name, way in WAYS.items()
        if name not in FRAMEWORK_OF or only is None or FRAMEWORK_OF[name] in only
    }


async def turn(client: httpx.AsyncClient, url: str, way: Way, durations: Sequence[float]) -> Timing:
    """One request, its tools run ``way``; checks that every call ran once, with its arguments."""
    start = time.perf_counter()

    def clock() -> float:
        return time.perf_counter() - start

    finished: list[float] = []
    results, ended = await way(client, url, tools(durations, clock, finished), clock)
    expected = [ToolCall(index, call_id, name, arguments) for index, (call_id, name, arguments) in enumerate(CALLS, 1)]
    if [result.call for result in results] != expected or any(result.is_error for result in results):
        raise AssertionError(f"the turn's results are not its three calls, run: {results}")
    return Timing(min(finished), max(max(finished), ended), ended)


async def measure(
    client: httpx.AsyncClient, url: str, durations: Sequence[float], repeat: int, only: Collection[str] | None = None
) -> dict[str, list[Timing]]:
    """Each way ``repeat`` times, alternating, over one keep-alive connection."""
    out: dict[str, list[Timing]] = {name: [] for name in ways(only)}
    for _ in range(repeat):
        for name, way in ways(only).items():
            out[name].append(await turn(client, url, way, durations))
    return out


def _median(timings: list[Timing], field: str) -> float:
    return float(statistics.median(getattr(timing, field) for timing in timings))


def report(name: str, timings: dict[str, list[Timing]]) -> list[str]:
    """The scenario's table: medians in milliseconds, and early / after."""
    lines = [f"{name}:", f"  {'':<24} {'first result':>13} {'last result':>12} {'stream end':>11}"]
    for way, runs in timings.items():
        first, last, end = (_median(runs, field) * 1000 for field in ("first", "last", "stream_end"))
        lines.append(f"  {way:<24} {first:>10.0f} ms {last:>9.0f} ms {end:>8.0f} ms")
    early_runs, after_runs = timings["run_tools (early)"], timings["after the stream"]
    for field in ("first", "last"):
        ratio = _median(early_runs, field) / _median(after_runs, field)
        lines.append(f"  {field} result, run_tools / after the stream: {ratio:.2f}")
    for way in list(timings)[2:]:  # each framework's loop
        ratio = _median(early_runs, "last") / _median(timings[way], "last")
        lines.append(f"  last result, run_tools / {way}: {ratio:.2f}")
    return lines


async def main_async(
    repeat: int, tokens_per_second: float, scenarios: dict[str, tuple[float, ...]], only: Collection[str] | None = None
) -> list[str]:
    """Every scenario's table, from one server and one client; of the frameworks in ``only`` (all
    by default)."""
    server = LoopbackServer()
    server.routes["/v1/messages"] = reply(tokens_per_second)
    for path, provider in PATHS.items():
        server.routes[path] = reply(tokens_per_second, provider=provider)
    try:
        lines: list[str] = []
        async with httpx.AsyncClient(timeout=30) as client:
            for way in ways(only).values():  # one untimed turn each: a framework's first call imports much of it
                await turn(client, server.url("/v1/messages"), way, (0.0, 0.0, 0.0))
            for name, durations in scenarios.items():
                lines += report(name, await measure(client, server.url("/v1/messages"), durations, repeat, only))
        return lines
    finally:
        server.close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one turn per way and scenario (about 10 s)")
    parser.add_argument("--repeat", type=int, default=5, help="turns per way and scenario (default 5)")
    parser.add_argument("--tokens-per-second", type=float, default=60.0, help="the model's pace (default 60)")
    parser.add_argument(
        "--only",
        action="append",
        choices=FRAMEWORKS,
        help="this framework's rows alone, beside run_tools' (repeatable)",
    )
    args = parser.parse_args(argv)
    repeat: int = 1 if args.quick else args.repeat
    pace: float = args.tokens_per_second
    turn_tokens = sum(tokens for _, tokens in anthropic_turn())
    print(
        f"An Anthropic turn of {turn_tokens} tokens (text, then 3 parallel calls) at {args.tokens_per_second:g} "
        f"tokens/s over loopback HTTP; median of {repeat} turn(s) per way."
    )
    only: list[str] | None = args.only
    for framework in only or FRAMEWORKS:
        if framework in SKIPPED:
            print(f"{framework}: skipped, {SKIPPED[framework]}")
    for line in anyio.run(main_async, repeat, pace, SCENARIOS, only):
        print(line)


if __name__ == "__main__":
    main()
