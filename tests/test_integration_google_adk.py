"""``StreamkitLlm`` under Google ADK's own loop: an ``LlmAgent`` run by an ``InMemoryRunner``.

On OpenAI Chat, Anthropic and Gemini streams (two calls at index 0, a cut call, a complete call
followed by a cut one, invalid JSON, a schema failure, an unknown tool, the plain turn), with
streaming on and off, the agent runs exactly the valid calls with their arguments, never an
invalid one, and the next request tells the model of each call: its result, or streamkit's error.
Gemini's thought signatures go back byte for byte. Skipped without google-adk (the
``framework-tests`` extra installs it).
"""

from __future__ import annotations

import json

import pytest

from streamkit import StreamError, UsageError
from streamkit.integrations._turn_json import turn_json

from .agent_loops import DONE_TEXT, GEMINI_SCENARIOS, PATHS, SCENARIOS, Scenario, Tools, request, results, serve, told
from .helpers import FIXTURES
from .server import LoopbackServer, Reply

pytest.importorskip("google.adk")

from google.adk.agents import (
    LlmAgent,
    RunConfig,
)
from google.adk.agents._streaming_mode import StreamingMode
from google.adk.events import Event
from google.adk.runners import InMemoryRunner
from google.genai import types

from streamkit.integrations.google_adk import NOT_RUN, TURN_KEY, StreamkitLlm, turn_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # ADK runs on asyncio


async def run(model: StreamkitLlm, tools: Tools, *, streaming: bool, prompt: str = "Weather in Paris?") -> list[Event]:
    """The agent's run: every event it yields, to the end."""
    agent = LlmAgent(name="helper", model=model, tools=[tools.get_weather, tools.get_stock, tools.write_file])
    runner = InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE, max_llm_calls=4)
    message = types.Content(role="user", parts=[types.Part(text=prompt)])
    try:
        return [
            event
            async for event in runner.run_async(
                user_id="u", session_id=session.id, new_message=message, run_config=config
            )
        ]
    finally:
        await runner.close()
        await model.aclose()


def model_for(server: LoopbackServer, scenario: Scenario) -> StreamkitLlm:
    return StreamkitLlm(provider=scenario.provider, model="m", base_url=serve(server, scenario), api_key="k")  # type: ignore[arg-type]


def final_text(events: list[Event]) -> str:
    last = events[-1]
    assert last.content is not None and not last.partial
    return "".join(part.text or "" for part in last.content.parts or ())


ALL = {**SCENARIOS, **GEMINI_SCENARIOS}


@pytest.mark.parametrize("streaming", [True, False], ids=["streaming", "not-streaming"])
@pytest.mark.parametrize("case", ALL)
async def test_the_agent_runs_the_valid_calls_and_tells_the_model_of_each(
    server: LoopbackServer, case: str, streaming: bool
) -> None:
    scenario = ALL[case]
    tools = Tools()
    events = await run(model_for(server, scenario), tools, streaming=streaming)
    assert tools.ran == scenario.runs
    if not scenario.told:  # the plain turn: one request, its text the answer
        assert len(server.requests) == 1
        assert final_text(events) == DONE_TEXT[scenario.provider]
        return
    assert len(server.requests) == 2
    sent = results(scenario.provider, request(server, 1))
    assert [told(content) for content in sent] == scenario.told
    assert final_text(events) == DONE_TEXT[scenario.provider]
    partial = [event for event in events if event.partial]
    assert bool(partial) is streaming  # text streams only when asked
    assert all(not event.get_function_calls() for event in partial)  # a call is only ever whole


async def test_an_invalid_call_never_reaches_a_tool_and_its_name_says_so(server: LoopbackServer) -> None:
    tools = Tools()
    events = await run(model_for(server, SCENARIOS["anthropic-complete-then-cut"]), tools, streaming=True)
    calls = [(call.id, call.name) for event in events for call in event.get_function_calls()]
    assert calls == [("toolu_A", "get_weather"), ("toolu_B", "write_file" + NOT_RUN)]
    answered = {response.id: response.response for event in events for response in event.get_function_responses()}
    assert answered["toolu_A"] == {"result": "sunny in Paris"}
    assert "no tool with that name" in (answered["toolu_B"] or {})["error"]  # ADK's own answer; not what the model gets
    assert results("anthropic", request(server, 1)) == [
        '{"result":"sunny in Paris"}',
        '{"ok":false,"errors":[{"kind":"truncated","message":"your arguments were cut off by the output limit; '
        'send less per call"}]}',
    ]


async def test_the_schema_is_the_tools_own(server: LoopbackServer) -> None:
    await run(model_for(server, SCENARIOS["anthropic-plain"]), Tools(), streaming=False)
    tools = {tool["name"]: tool["input_schema"] for tool in request(server, 0)["tools"]}
    assert tools["get_weather"] == {
        "properties": {"city": {"title": "City", "type": "string"}},
        "required": ["city"],
        "title": "get_weatherParams",
        "type": "object",
    }
    assert request(server, 0)["system"] == 'You are an agent. Your internal name is "helper".'


async def test_gemini_thought_signatures_go_back_byte_for_byte(server: LoopbackServer) -> None:
    events = await run(model_for(server, GEMINI_SCENARIOS["gemini-two-calls-with-signatures"]), Tools(), streaming=True)
    recorded = (FIXTURES / "gemini/thought_signatures.history.jsonl").read_text().splitlines()
    [history] = [json.loads(line)["items"] for line in recorded if '"history"' in line]
    assert request(server, 1)["contents"][1:2] == history
    first = next(event for event in events if event.get_function_calls())
    assert first.content is not None
    signed = [part.thought_signature for part in first.content.parts or () if part.function_call]
    assert signed == [b"\n,\x01r\xc8\xda|-\xf3\xf9X\xf6\xc1", None]  # on the part, where ADK looks too


async def test_anthropic_thinking_goes_back_with_its_signature(server: LoopbackServer) -> None:
    scenario = Scenario("anthropic", "anthropic/thinking_then_call.sse", [("get_weather", {"city": "Paris"})], ["ran"])
    await run(model_for(server, scenario), Tools(), streaming=False)
    assistant = request(server, 1)["messages"][1]["content"]
    assert [block["type"] for block in assistant] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert assistant[0]["signature"] == "EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w=="


async def test_a_failing_stream_raises_a_typed_error(server: LoopbackServer) -> None:
    path, _ = PATHS["anthropic"]
    server.routes = {path: Reply([b"data: {not json\n\n"])}
    with pytest.raises(StreamError):
        await run(
            StreamkitLlm(provider="anthropic", model="m", base_url=server.url(""), api_key="k"), Tools(), streaming=True
        )


@pytest.mark.parametrize("streaming", [True, False], ids=["streaming", "not-streaming"])
async def test_a_response_of_two_choices_is_refused_not_cut_to_one(server: LoopbackServer, streaming: bool) -> None:
    path, suffix = PATHS["openai_chat"]
    server.routes = {path: Reply([(FIXTURES / "openai_chat/n2_same_call_id_per_choice.sse").read_bytes()])}
    tools = Tools()
    model = StreamkitLlm(provider="openai_chat", model="m", base_url=server.url(suffix), api_key="k")
    refused = r"^Google ADK takes one answer per request, and the response holds choice 1: "
    with pytest.raises(UsageError, match=refused):
        await run(model, tools, streaming=streaming)
    assert (tools.ran, len(server.requests)) == ([], 1)


def test_the_turn_rides_in_the_first_visible_part() -> None:
    from streamkit import Turn
    from streamkit._types import TextDelta

    turn = Turn("anthropic", (TextDelta("hi"),))
    content = types.Content(role="model", parts=[types.Part(text="hi", part_metadata={TURN_KEY: turn_json(turn)})])
    assert turn_of(content) == turn
    assert turn_of(types.Content(role="model", parts=[types.Part(text="hi")])) is None
