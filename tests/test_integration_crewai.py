"""``StreamkitLLM`` under CrewAI's own loop: a ``Crew`` of one agent with tools, ``kickoff()``.

On OpenAI Chat and Anthropic streams (two calls at index 0, a cut call, a complete call followed
by a cut one, invalid JSON, a schema failure, an unknown tool, the plain turn), with ``stream``
on and off, the crew runs exactly the valid calls with their arguments, never an invalid one,
and the next request tells the model of each call: its result, or streamkit's error. Streamed,
each call's chunk event carries its whole arguments, never an empty string. Skipped without
CrewAI, which .ci/run installs in a virtualenv of its own (it pins openai below 3).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import pytest

from streamkit import StreamError, UsageError

from .agent_loops import DONE_TEXT, PATHS, SCENARIOS, Scenario, Tools, request, results, serve, told
from .helpers import FIXTURES
from .server import LoopbackServer, Reply

pytest.importorskip("crewai")

from crewai import Agent, Crew, CrewOutput, Task
from crewai.events import crewai_event_bus
from crewai.events.base_events import BaseEvent
from crewai.events.types.llm_events import LLMCallFailedEvent, LLMStreamChunkEvent
from crewai.tools import BaseTool, tool

from streamkit.integrations.crewai import StreamkitLLM

E = TypeVar("E", bound=BaseEvent)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No telemetry export from CrewAI (only its own switches: the process's OpenTelemetry stays on)."""
    for name in ("CREWAI_DISABLE_TELEMETRY", "CREWAI_DISABLE_TRACKING"):
        monkeypatch.setenv(name, "true")
    monkeypatch.setenv("CREWAI_TRACING_ENABLED", "false")


def crew_tools(tools: Tools) -> list[BaseTool]:
    return [tool(name)(getattr(tools, name)) for name in ("get_weather", "get_stock", "write_file")]


def kickoff(llm: StreamkitLLM, tools: Tools) -> str:
    """The crew's run to its end; the final answer's text."""
    agent = Agent(role="helper", goal="answer", backstory="a helper", llm=llm, tools=crew_tools(tools), max_iter=4)
    task = Task(description="Weather in Paris?", expected_output="an answer", agent=agent)
    try:
        output = Crew(agents=[agent], tasks=[task]).kickoff()
        assert isinstance(output, CrewOutput)
        return output.raw
    finally:
        llm.close()


def llm_for(server: LoopbackServer, scenario: Scenario, *, stream: bool) -> StreamkitLLM:
    base = serve(server, scenario)
    return StreamkitLLM(provider=scenario.provider, model="m", base_url=base, api_key="k", stream=stream)  # type: ignore[arg-type]


@contextmanager
def carried(kind: type[E]) -> Iterator[list[E]]:
    """The events of ``kind`` CrewAI's bus carries meanwhile."""
    seen: list[E] = []
    with crewai_event_bus.scoped_handlers():

        @crewai_event_bus.on(kind)
        def record(source: Any, event: E) -> None:
            seen.append(event)

        yield seen


@pytest.fixture
def chunks() -> Iterator[list[LLMStreamChunkEvent]]:
    """The stream-chunk events CrewAI's bus carries during the test."""
    with carried(LLMStreamChunkEvent) as seen:
        yield seen


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "not-streaming"])
@pytest.mark.parametrize("case", SCENARIOS)
def test_the_crew_runs_the_valid_calls_and_tells_the_model_of_each(
    server: LoopbackServer, case: str, stream: bool, chunks: list[LLMStreamChunkEvent]
) -> None:
    scenario = SCENARIOS[case]
    tools = Tools()
    answer = kickoff(llm_for(server, scenario, stream=stream), tools)
    assert sorted(tools.ran) == sorted(scenario.runs)
    assert answer == DONE_TEXT[scenario.provider]
    if not scenario.told:  # the plain turn: one request, its text the answer
        assert len(server.requests) == 1
        return
    assert len(server.requests) == 2
    assert [told(content) for content in results(scenario.provider, request(server, 1))] == scenario.told
    calls = [event.tool_call for event in chunks if event.tool_call is not None]
    if not stream:
        assert calls == []
        return
    assert len(calls) == len(scenario.told)  # each call once, whole
    assert all(call.function.arguments for call in calls)  # never an empty string
    assert [call.index for call in calls] == list(range(len(calls)))


def test_streamed_calls_come_whole_with_their_own_ids(
    server: LoopbackServer, chunks: list[LLMStreamChunkEvent]
) -> None:
    kickoff(llm_for(server, SCENARIOS["openai_chat-two-calls-at-index-0"], stream=True), Tools())
    calls = [event.tool_call for event in chunks if event.tool_call is not None]
    assert [(call.id, call.function.name, call.function.arguments) for call in calls] == [
        ("call_A", "get_weather", '{"city":"Paris"}'),
        ("call_B", "get_stock", '{"ticker":"AAPL"}'),
    ]
    assert [event.chunk for event in chunks if event.tool_call is not None] == ['{"city":"Paris"}', '{"ticker":"AAPL"}']


def test_an_invalid_call_is_answered_by_crewai_and_the_model_gets_streamkits_error(server: LoopbackServer) -> None:
    llm = llm_for(server, SCENARIOS["openai_chat-cut"], stream=False)
    answer = llm.call(
        [{"role": "user", "content": "Write a.txt"}],
        tools=[
            {
                "type": "function",
                "function": {
                    "name": "write_file",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                },
            }
        ],
    )
    assert answer == [
        {
            "id": "call_A",
            "type": "function",
            "function": {
                "name": "write_file",
                "arguments": "invalid arguments (your arguments were cut off by the output limit; send less per call):"
                ' {"path": "a.txt", "content": "Once upon',
            },
        }
    ]
    tools = Tools()
    server.requests.clear()
    kickoff(llm_for(server, SCENARIOS["openai_chat-cut"], stream=False), tools)
    assert tools.ran == []
    assistant, result = request(server, 1)["messages"][-2:]
    assert (
        assistant["tool_calls"][0]["function"]["arguments"] == '{"path": "a.txt", "content": "Once upon'
    )  # as received
    assert result == {
        "role": "tool",
        "tool_call_id": "call_A",
        "content": '{"ok":false,"errors":[{"kind":"truncated","message":"your arguments were cut off by the output'
        ' limit; send less per call"}]}',
    }


def test_anthropic_thinking_goes_back_with_its_signature(server: LoopbackServer) -> None:
    scenario = Scenario("anthropic", "anthropic/thinking_then_call.sse", [("get_weather", {"city": "Paris"})], ["ran"])
    tools = Tools()
    kickoff(llm_for(server, scenario, stream=True), tools)
    assert tools.ran == scenario.runs
    assistant = request(server, 1)["messages"][1]["content"]
    assert [block["type"] for block in assistant] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert assistant[0]["signature"] == "EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w=="


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_acall_gives_the_same_calls(server: LoopbackServer) -> None:
    llm = llm_for(server, SCENARIOS["anthropic-complete-then-cut"], stream=True)
    weather = {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
    calls = await llm.acall("Weather in Paris?", tools=[{"type": "function", "function": weather}])
    await llm.aclose()
    assert [(call["id"], call["function"]["name"]) for call in calls] == [
        ("toolu_A", "get_weather"),
        ("toolu_B", "write_file"),
    ]
    assert calls[0]["function"]["arguments"] == '{"city":"Paris"}'
    assert calls[1]["function"]["arguments"].startswith("invalid arguments (")


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "not-streaming"])
def test_a_response_of_two_choices_is_refused_not_cut_to_one(server: LoopbackServer, stream: bool) -> None:
    path, suffix = PATHS["openai_chat"]
    server.routes = {path: Reply([(FIXTURES / "openai_chat/n2_same_call_id_per_choice.sse").read_bytes()])}
    llm = StreamkitLLM(provider="openai_chat", model="m", base_url=server.url(suffix), api_key="k", stream=stream)
    with pytest.raises(UsageError, match=r"^CrewAI takes one answer per request, and the response holds choice 1: "):
        llm.call("Weather in Paris?")
    assert len(server.requests) == 1
    llm.close()


def test_a_failing_stream_raises_a_typed_error(server: LoopbackServer) -> None:
    path, _ = PATHS["anthropic"]
    server.routes = {path: Reply([b"data: {not json\n\n"])}
    llm = StreamkitLLM(provider="anthropic", model="m", base_url=server.url(""), api_key="k")
    with pytest.raises(StreamError):
        llm.call("Weather in Paris?")
    server.requests.clear()
    with pytest.raises(StreamError):  # out of the crew, after CrewAI's own retries
        kickoff(llm, Tools())
    assert len(server.requests) == 3  # the agent's max_retry_limit is 2


@pytest.fixture
def failures() -> Iterator[list[LLMCallFailedEvent]]:
    """The call-failed events CrewAI's bus carries during the test."""
    with carried(LLMCallFailedEvent) as seen:
        yield seen


@pytest.mark.anyio
async def test_call_and_acall_tell_crewai_of_a_failing_stream_once_each(
    server: LoopbackServer, failures: list[LLMCallFailedEvent]
) -> None:
    path, _ = PATHS["anthropic"]
    server.routes = {path: Reply([b"data: {not json\n\n"])}
    llm = StreamkitLLM(provider="anthropic", model="m", base_url=server.url(""), api_key="k")
    with pytest.raises(StreamError) as sync_error:
        llm.call("Weather in Paris?")
    with pytest.raises(StreamError) as async_error:
        await llm.acall("Weather in Paris?")
    await llm.aclose()
    assert crewai_event_bus.flush()  # its handlers run on a thread pool
    assert str(sync_error.value) == str(async_error.value)
    assert [event.error for event in failures] == [str(sync_error.value)] * 2


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "not-streaming"])
def test_a_call_leaving_out_a_defaulted_parameter_runs_with_the_tools_default(
    server: LoopbackServer, stream: bool
) -> None:
    """CrewAI's tool schema lists ``units`` as required; CrewAI's own tool fills it in, and so the call runs."""
    ran: list[tuple[str, dict[str, Any]]] = []

    def get_weather(city: str, units: str = "c") -> str:
        """The weather in a city."""
        ran.append(("get_weather", {"city": city, "units": units}))
        return f"sunny in {city}"

    def get_stock(ticker: str) -> str:
        """A stock's price."""
        ran.append(("get_stock", {"ticker": ticker}))
        return "190"

    scenario = Scenario("openai_chat", "openai_chat/index_missing.sse", [], ["ran", "ran"])
    llm = llm_for(server, scenario, stream=stream)
    agent = Agent(
        role="helper", goal="answer", backstory="a helper", llm=llm, tools=[tool(get_weather), tool(get_stock)]
    )
    task = Task(description="Weather in Paris, and AAPL?", expected_output="an answer", agent=agent)
    try:
        output = Crew(agents=[agent], tasks=[task]).kickoff()
    finally:
        llm.close()
    assert isinstance(output, CrewOutput)
    assert output.raw == "done"
    assert ran == [("get_weather", {"city": "Paris", "units": "c"}), ("get_stock", {"ticker": "AAPL"})]
    assert results("openai_chat", request(server, 1)) == ["sunny in Paris", "190"]
