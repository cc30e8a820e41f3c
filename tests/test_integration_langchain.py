"""``StreamkitChatModel`` under LangChain: its own agent loop (``create_agent``), merging, invoke.

The loopback server plays the provider. Each agent test runs ``create_agent``'s loop three ways:
``invoke``, ``ainvoke``, and ``astream`` with ``stream_mode="messages"``, which makes LangChain
stream the model and merge its chunks itself. A tool that runs swaps the route's reply for a
final answer, so the follow-up request ends the loop. Skipped where LangChain is not installed
(the ``framework-tests`` extra installs it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable
from functools import reduce
from typing import Any
from urllib.parse import urlsplit

import pytest

from .helpers import FIXTURES, waited
from .server import LoopbackServer, Reply, Turns

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain.tools import ToolRuntime
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import BaseTool, StructuredTool, tool

from streamkit import ArgumentIssue, InvalidToolCall, Thinking, ToolCall, UsageError
from streamkit.adapters._base import TRUNCATED_MESSAGE
from streamkit.integrations._chat import User, build
from streamkit.integrations.langchain import TURN_KEY, StreamkitChatModel, turn_of

from .models import ANTHROPIC, GEMINI, OPENAI

pytestmark = pytest.mark.anyio
BASES = {"anthropic": "", "openai_chat": "/v1", "openai_responses": "/v1", "gemini": ""}
MODELS = {
    "anthropic": ANTHROPIC,
    "openai_chat": OPENAI,
    "openai_responses": OPENAI,
    "gemini": GEMINI,
}
Ran = list[tuple[str, dict[str, Any]]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # LangChain runs on asyncio


def fixture(name: str) -> Reply:
    data = (FIXTURES / name).read_bytes()
    return Reply([data[i : i + 61] for i in range(0, len(data), 61)])  # cut anywhere


def openai_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": OPENAI}
    body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return b"data: " + json.dumps(body).encode() + b"\n\n"


FINAL = {
    "openai_chat": Reply(
        [openai_chunk({"role": "assistant", "content": "done"}), openai_chunk({}, "stop"), b"data: [DONE]\n\n"]
    ),
    "anthropic": fixture("anthropic/text_only_crlf.sse"),
}


#: The models a test made: each keeps its HTTP clients, closed when the test ends.
MADE: list[StreamkitChatModel] = []


@pytest.fixture(autouse=True)
async def _close_models() -> AsyncIterator[None]:
    yield
    while MADE:
        await MADE.pop().aclose()


def model(server: LoopbackServer, provider: str, **fields: Any) -> StreamkitChatModel:
    settings: dict[str, Any] = {"provider": provider, "model": MODELS[provider], "api_key": "test-key", **fields}
    MADE.append(StreamkitChatModel(base_url=server.url(BASES[provider]), **settings))
    return MADE[-1]


def path(server: LoopbackServer, provider: str) -> str:
    """The path the model sends its requests to (the request builder decides it)."""
    url = build(provider, MODELS[provider], [User("x")], base_url=server.url(BASES[provider]), api_key="k").url
    return urlsplit(url).path


def tools(server: LoopbackServer, provider: str, ran: Ran) -> list[BaseTool]:
    def done() -> None:
        server.routes[path(server, provider)] = FINAL[provider]

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(("get_weather", {"city": city}))
        done()
        return "sunny"

    @tool
    def get_stock(ticker: str) -> str:
        """A stock's price."""
        ran.append(("get_stock", {"ticker": ticker}))
        done()
        return "190"

    @tool
    def write_file(path: str, content: str) -> str:
        """Write a file."""
        ran.append(("write_file", {"path": path, "content": content}))
        done()
        return "written"

    return [get_weather, get_stock, write_file]


async def run_agent(server: LoopbackServer, provider: str, how: str, prompt: str) -> tuple[Ran, list[BaseMessage]]:
    """``create_agent``'s own loop over the model, run ``how``; the tools that ran and the messages."""
    ran: Ran = []
    agent = create_agent(model(server, provider), tools=tools(server, provider, ran))
    state: Any = {"messages": [HumanMessage(prompt)]}
    if how == "invoke":
        messages = agent.invoke(state)["messages"]
    elif how == "ainvoke":
        messages = (await agent.ainvoke(state))["messages"]
    else:
        streamed: list[Any] = [item async for item in agent.astream(state, stream_mode=["messages", "values"])]
        assert any(mode == "messages" for mode, _ in streamed)  # the model was streamed, and merged by LangChain
        messages = [values for mode, values in streamed if mode == "values"][-1]["messages"]
    return ran, messages


def sent(server: LoopbackServer, number: int) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(server.requests[number].body)
    return body


HOW = ["invoke", "ainvoke", "astream"]


@pytest.mark.parametrize("how", HOW)
async def test_a_response_of_two_choices_is_refused_not_cut_to_one(server: LoopbackServer, how: str) -> None:
    server.routes[path(server, "openai_chat")] = fixture("openai_chat/n2_same_call_id_per_choice.sse")
    refused = r"^LangChain takes one answer per request, and the response holds choice 1: "
    with pytest.raises(UsageError, match=refused):
        await run_agent(server, "openai_chat", how, "Weather in Paris?")
    assert len(server.requests) == 1


async def test_usage_is_reported_whenever_the_provider_sent_counts(server: LoopbackServer) -> None:
    """A count the provider did not send is 0, as under every framework: the usage is never dropped."""
    usage = {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": OPENAI, "choices": []}
    usage["usage"] = {"completion_tokens": 7, "completion_tokens_details": {"reasoning_tokens": 3}}
    text = [openai_chunk({"role": "assistant", "content": "done"}), openai_chunk({}, "stop")]
    server.routes[path(server, "openai_chat")] = Reply([*text, b"data: " + json.dumps(usage).encode() + b"\n\n"])
    message = await model(server, "openai_chat").ainvoke("?")
    assert isinstance(message, AIMessage)
    assert message.usage_metadata == {
        "input_tokens": 0,
        "output_tokens": 7,
        "total_tokens": 7,
        "output_token_details": {"reasoning": 3},
    }


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("case", ["parallel_calls_all_index_zero", "index_missing"])
async def test_each_parallel_call_runs_once_with_its_own_arguments(server: LoopbackServer, case: str, how: str) -> None:
    server.routes[path(server, "openai_chat")] = fixture(f"openai_chat/{case}.sse")
    ran, messages = await run_agent(server, "openai_chat", how, "Weather in Paris, and AAPL?")
    assert sorted(ran) == [("get_stock", {"ticker": "AAPL"}), ("get_weather", {"city": "Paris"})]
    assert isinstance(messages[1], AIMessage) and type(messages[1]) is AIMessage
    assert messages[1].tool_calls == [
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_A", "type": "tool_call"},
        {"name": "get_stock", "args": {"ticker": "AAPL"}, "id": "call_B", "type": "tool_call"},
    ]
    assert messages[1].invalid_tool_calls == []
    assert messages[-1].content == "done"
    follow_up = sent(server, 1)["messages"]
    assert [m["role"] for m in follow_up] == ["user", "assistant", "tool", "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in follow_up[2:]] == [("call_A", "sunny"), ("call_B", "190")]
    assert len(server.requests) == 2


@pytest.mark.parametrize("how", HOW)
async def test_without_middleware_a_turn_of_invalid_calls_only_ends_the_run_with_a_typed_error(
    server: LoopbackServer, how: str
) -> None:
    """create_agent would end its loop on it, the model untold: the run raises, naming the call and why."""
    from streamkit.integrations.langchain import InvalidCallsError

    server.routes[path(server, "openai_chat")] = fixture("openai_chat/length_truncated.sse")
    with pytest.raises(InvalidCallsError) as info:
        await run_agent(server, "openai_chat", how, "Write a story to a.txt")
    assert str(info.value) == (
        f"the tool call write_file (call_A) was not run: {TRUNCATED_MESSAGE}. Send the calls again, each whole."
    )
    assert [(call.id, call.raw, call.truncated) for call in info.value.invalid] == [
        ("call_A", '{"path": "a.txt", "content": "Once upon', True)
    ]
    assert (info.value.withheld, info.value.turns) == ((), None)
    assert len(server.requests) == 1


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
async def test_a_call_cut_by_the_output_limit_is_an_invalid_call_of_the_message(
    server: LoopbackServer, how: str
) -> None:
    """Outside an agent the message holds it, never runnable, with streamkit's message."""
    server.routes[path(server, "openai_chat")] = fixture("openai_chat/length_truncated.sse")
    bound = model(server, "openai_chat").bind_tools(tools(server, "openai_chat", []))
    last = bound.invoke("Write a story to a.txt") if how == "invoke" else await bound.ainvoke("Write a story to a.txt")
    assert isinstance(last, AIMessage) and last.tool_calls == []
    [invalid] = last.invalid_tool_calls
    raw = '{"path": "a.txt", "content": "Once upon'
    assert (invalid["id"], invalid["name"]) == ("call_A", "write_file")
    assert invalid["args"] == f"invalid arguments ({TRUNCATED_MESSAGE}): {raw}"
    assert invalid["error"] == TRUNCATED_MESSAGE
    turn = turn_of(last)
    assert turn is not None and [call.raw for call in turn.calls if isinstance(call, InvalidToolCall)] == [raw]


async def test_the_next_request_tells_the_model_its_call_was_cut_off(server: LoopbackServer) -> None:
    """A conversation that holds a cut call goes on: create_agent answers it with its own note,
    and the model is told streamkit's message instead, once."""
    route = path(server, "openai_chat")
    server.routes[route] = fixture("openai_chat/length_truncated.sse")
    ran: Ran = []
    offered = tools(server, "openai_chat", ran)
    cut = await model(server, "openai_chat").bind_tools(offered).ainvoke("Write a story to a.txt")
    server.routes[route] = FINAL["openai_chat"]
    agent = create_agent(model(server, "openai_chat"), tools=offered)
    history: Any = {"messages": [HumanMessage("Write a story to a.txt"), cut, HumanMessage("Shorter, then.")]}
    second = await agent.ainvoke(history)
    assert ran == []
    assert second["messages"][-1].content == "done"
    follow_up = sent(server, 1)["messages"]
    assert [m["role"] for m in follow_up] == ["user", "assistant", "tool", "user"]
    assert follow_up[1]["tool_calls"][0]["function"]["arguments"] == '{"path": "a.txt", "content": "Once upon'
    assert follow_up[2]["tool_call_id"] == "call_A"
    assert json.loads(follow_up[2]["content"]) == {
        "ok": False,
        "errors": [{"kind": "truncated", "message": TRUNCATED_MESSAGE}],
    }


@pytest.mark.parametrize("how", HOW)
async def test_a_thinking_signature_goes_back_byte_for_byte(server: LoopbackServer, how: str) -> None:
    server.routes[path(server, "anthropic")] = fixture("anthropic/thinking_then_call.sse")
    ran, messages = await run_agent(server, "anthropic", how, "Weather in Paris?")
    assert ran == [("get_weather", {"city": "Paris"})]
    turn = turn_of(messages[1])
    assert (
        turn is not None
        and Thinking("The user wants the weather in Paris.", "EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w==") in turn.items
    )
    assert messages[1].additional_kwargs["reasoning_content"] == "The user wants the weather in Paris."
    body = server.requests[1].body
    assert b'"signature":"EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w=="' in body.replace(b" ", b"")
    assistant = sent(server, 1)["messages"][1]
    assert [block["type"] for block in assistant["content"]] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert assistant["content"][0]["signature"] == "EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w=="
    assert assistant["content"][1]["data"] == "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"
    assert sent(server, 1)["messages"][2]["content"][0]["tool_use_id"] == "toolu_01A"
    assert messages[-1].text == "Hello \u2603"


# -- merging -----------------------------------------------------------------------------------


def merges(chunks: list[AIMessageChunk]) -> list[AIMessageChunk]:
    """The ways LangChain code merges a stream: one by one, all at once, in pairs, from the right."""
    one_by_one = reduce(lambda left, right: left + right, chunks)
    at_once = chunks[0] + chunks[1:]
    pairs = list(chunks)
    while len(pairs) > 1:
        pairs = [pairs[i] + pairs[i + 1] if i + 1 < len(pairs) else pairs[i] for i in range(0, len(pairs), 2)]
    from_right = reduce(lambda right, left: left + right, reversed(chunks))
    return [one_by_one, at_once, pairs[0], from_right]


@pytest.mark.parametrize(
    ("case", "calls", "invalid"),
    [
        (
            "openai_chat/parallel_calls_all_index_zero.sse",
            [("get_weather", {"city": "Paris"}), ("get_stock", {"ticker": "AAPL"})],
            [],
        ),
        ("openai_chat/index_missing.sse", [("get_weather", {"city": "Paris"}), ("get_stock", {"ticker": "AAPL"})], []),
        ("openai_chat/length_truncated.sse", [], ["write_file"]),
        ("anthropic/max_tokens_truncated.sse", [("get_weather", {"city": "Paris"})], ["write_file"]),
        ("anthropic/bad_arguments.sse", None, None),
    ],
)
async def test_every_merge_of_the_stream_keeps_each_call_as_it_was(
    server: LoopbackServer, case: str, calls: list[tuple[str, dict[str, Any]]] | None, invalid: list[str] | None
) -> None:
    provider = case.split("/")[0]
    server.routes[path(server, provider)] = fixture(case)
    chunks = [chunk for chunk in model(server, provider).stream("go") if isinstance(chunk, AIMessageChunk)]
    turn = None
    for merged in merges(chunks):
        turn = turn_of(merged)
        assert turn is not None
        expected_calls = [(c.name, c.input) for c in turn.calls if isinstance(c, ToolCall)]
        expected_invalid = [c.name for c in turn.calls if isinstance(c, InvalidToolCall)]
        assert [(c["name"], c["args"]) for c in merged.tool_calls] == expected_calls
        assert [c["name"] for c in merged.invalid_tool_calls] == expected_invalid
        if calls is not None:
            assert (expected_calls, expected_invalid) == (calls, invalid)
    assert turn is not None and turn.calls  # every case has calls
    call_chunks = [chunk.tool_call_chunks for chunk in chunks if chunk.tool_call_chunks]
    assert all(len(entries) == 1 for entries in call_chunks)  # each call whole, in a chunk of its own
    assert [entries[0]["index"] for entries in call_chunks] == list(range(len(turn.calls)))


async def test_astream_gives_the_same_chunks_as_stream(server: LoopbackServer) -> None:
    server.routes[path(server, "anthropic")] = fixture("anthropic/max_tokens_truncated.sse")
    chunks = list(model(server, "anthropic").stream("go"))
    achunks = [chunk async for chunk in model(server, "anthropic").astream("go")]
    assert [c.model_copy(update={"id": None}) for c in chunks] == [c.model_copy(update={"id": None}) for c in achunks]
    assert len(chunks) >= 3 and chunks[-1].chunk_position == "last"


# -- invoke, bind_tools, the four providers ------------------------------------------------------


@pytest.mark.parametrize("provider", ["anthropic", "openai_chat", "openai_responses", "gemini"])
async def test_invoke_and_ainvoke_on_each_provider_and_the_results_go_back(
    server: LoopbackServer, provider: str
) -> None:
    route = path(server, provider)
    server.routes[route] = fixture(f"{provider}/text_then_two_calls.sse")
    ran: Ran = []
    bound = model(server, provider, validate_calls=False).bind_tools(tools(server, "anthropic", ran)[:2])
    message = bound.invoke([SystemMessage("Be brief."), HumanMessage("Weather in Paris, and AAPL?")])
    again = await bound.ainvoke([SystemMessage("Be brief."), HumanMessage("Weather in Paris, and AAPL?")])
    assert message.tool_calls == again.tool_calls
    expected = (FIXTURES / provider / "text_then_two_calls.expected.jsonl").read_text().splitlines()[:2]
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [
        (json.loads(line)["name"], json.loads(line)["input"]) for line in expected
    ]
    assert message.text
    assert all(c["id"] for c in message.tool_calls)  # Gemini gives none: streamkit derives one
    results = [ToolMessage("sunny", tool_call_id=message.tool_calls[0]["id"], name="get_weather")]
    results.append(ToolMessage("190", tool_call_id=message.tool_calls[1]["id"], name="get_stock"))
    server.routes[route] = fixture(f"{provider}/text_then_two_calls.sse")
    bound.invoke([HumanMessage("Weather in Paris, and AAPL?"), message, *results])
    body = server.requests[-1].body.decode()
    assert "sunny" in body and "190" in body
    first = sent(server, 0)
    assert "get_weather" in json.dumps(first.get("tools")) and "Be brief." in json.dumps(first)


async def test_bind_tools_offers_the_tools_and_validates_their_calls(server: LoopbackServer) -> None:
    server.routes[path(server, "openai_chat")] = fixture("openai_chat/text_then_two_calls.sse")
    ran: Ran = []
    weather = tools(server, "openai_chat", ran)[0]
    message = model(server, "openai_chat").bind_tools([weather]).invoke("go")
    offered = sent(server, 0)["tools"]
    assert [t["function"]["name"] for t in offered] == ["get_weather"]
    assert offered[0]["function"]["parameters"]["required"] == ["city"]
    assert [c["name"] for c in message.tool_calls] == ["get_weather"]
    [unknown] = message.invalid_tool_calls  # a tool that was not offered: never a call to run
    assert unknown["name"] == "get_stock" and unknown["error"] is not None and "get_stock" in unknown["error"]
    unchecked = model(server, "openai_chat", validate_calls=False).bind_tools([weather]).invoke("go")
    assert [c["name"] for c in unchecked.tool_calls] == ["get_weather", "get_stock"]


async def test_a_message_from_elsewhere_goes_back_as_its_text_and_calls(server: LoopbackServer) -> None:
    server.routes[path(server, "anthropic")] = FINAL["anthropic"]
    foreign = AIMessage(
        "Let me look.", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "toolu_9"}]
    )
    model(server, "anthropic").invoke([HumanMessage("Paris?"), foreign, ToolMessage("sunny", tool_call_id="toolu_9")])
    assistant, results = sent(server, 0)["messages"][1:]
    assert assistant["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    assert results["content"] == [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "sunny"}]


async def test_the_turn_survives_a_json_round_trip(server: LoopbackServer) -> None:
    server.routes[path(server, "anthropic")] = fixture("anthropic/thinking_then_call.sse")
    message = model(server, "anthropic").invoke("go")
    stored = json.loads(json.dumps(message.additional_kwargs[TURN_KEY]))
    assert turn_of(AIMessage("", additional_kwargs={TURN_KEY: stored})) == turn_of(message)


@pytest.mark.parametrize(
    ("build_", "message"),
    [
        (lambda s: model(s, "anthropic").invoke("x", stop=["END"]), "stop sequences"),
        (lambda s: model(s, "anthropic").bind_tools([], tool_choice="any"), "tool_choice"),
        (lambda s: model(s, "anthropic").invoke([HumanMessage("x"), SystemMessage("late")]), "SystemMessage must come"),
        (lambda s: model(s, "anthropic").invoke([HumanMessage([{"type": "image", "url": "u"}])]), "only text"),
    ],
)
async def test_what_cannot_be_sent_is_refused_by_name(
    server: LoopbackServer, build_: Callable[[LoopbackServer], Any], message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        build_(server)
    assert server.requests == []


async def test_a_provider_not_offered_is_refused() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="openai_responses"):
        StreamkitChatModel(provider="cohere", model="m")  # type: ignore[arg-type]


async def test_an_invalid_call_from_elsewhere_keeps_its_error() -> None:
    from streamkit.integrations.langchain import _entries_of

    bad = AIMessage("", invalid_tool_calls=[{"name": "f", "args": "{", "id": "c1", "error": "boom"}])
    _, entries = _entries_of([HumanMessage("x"), bad], "openai_chat")
    turn = entries[1]
    assert turn.calls == (InvalidToolCall(0, "c1", "f", "{", (ArgumentIssue("invalid_json", "boom"),)),)  # type: ignore[union-attr]


# -- early execution -----------------------------------------------------------------------------


def gated(server: LoopbackServer, case: str, gate: threading.Event, at: bytes = b"event: message_delta") -> Reply:
    """The fixture, its end (from ``at`` on) written only once ``gate`` is set."""
    data = (FIXTURES / case).read_bytes()
    cut = data.index(at)

    def end(_: int) -> bytes:
        gate.wait(10)
        return data[cut:]

    return Reply([data[:cut]], endless=end, endless_limit=1)


@pytest.mark.parametrize("how", ["ainvoke", "astream", "invoke"])
async def test_early_tools_start_while_the_model_still_streams(server: LoopbackServer, how: str) -> None:
    from streamkit.integrations.langchain import EarlyToolsMiddleware

    route = path(server, "anthropic")
    gate = threading.Event()
    server.routes[route] = gated(server, "anthropic/text_then_two_calls.sse", gate)
    ran: list[tuple[str, dict[str, Any], bool]] = []

    def weather(city: str, units: str) -> str:
        ran.append(("get_weather", {"city": city, "units": units}, server.connections[0].finished.is_set()))
        if len(ran) == 2:
            gate.set()  # both tools began: the model's stream may end now
        return "sunny"

    async def aweather(city: str, units: str) -> str:
        return weather(city, units)

    get_weather = StructuredTool.from_function(weather, coroutine=aweather, name="get_weather", description="Weather.")

    @tool
    def get_stock(ticker: str) -> str:
        """A stock's price."""
        ran.append(("get_stock", {"ticker": ticker}, server.connections[0].finished.is_set()))
        if len(ran) == 2:
            gate.set()
        server.routes[route] = FINAL["anthropic"]
        return "190"

    agent = create_agent(
        model(server, "anthropic"), tools=[get_weather, get_stock], middleware=[EarlyToolsMiddleware()]
    )
    state: Any = {"messages": [HumanMessage("Weather in Paris, and AAPL?")]}
    if how == "ainvoke":
        messages = (await agent.ainvoke(state))["messages"]
    elif how == "astream":
        messages = [v async for mode, v in agent.astream(state, stream_mode=["messages", "values"]) if mode == "values"]
        messages = messages[-1]["messages"]
    else:
        gate.set()  # the sync agent starts nothing early
        messages = agent.invoke(state)["messages"]
    early = how != "invoke"
    assert sorted(ran) == [
        ("get_stock", {"ticker": "AAPL"}, not early),
        ("get_weather", {"city": "Paris", "units": "c"}, not early),
    ]
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.content) for m in results] == [("toolu_A", "sunny"), ("toolu_B", "190")]
    assert messages[-1].text == "Hello \u2603"
    follow_up = sent(server, 1)["messages"][2]["content"]
    assert [(r["tool_use_id"], r["content"]) for r in follow_up] == [("toolu_A", "sunny"), ("toolu_B", "190")]


async def test_an_early_tool_never_runs_for_a_cut_call_and_only_plain_tools_start(server: LoopbackServer) -> None:
    from streamkit.integrations.langchain import EarlyToolsMiddleware

    middleware = EarlyToolsMiddleware()

    @tool
    def plain(city: str) -> str:
        """Plain."""
        return city

    @tool
    def injected(city: str, runtime: ToolRuntime) -> str:
        """Injected."""
        return city

    assert list(middleware.early([plain, injected, {"name": "raw"}])) == ["plain"]
    assert list(EarlyToolsMiddleware(["injected"]).early([plain, injected])) == ["injected"]
    server.routes[path(server, "anthropic")] = fixture("anthropic/max_tokens_truncated.sse")
    ran: Ran = []
    made = tools(server, "anthropic", ran)
    agent = create_agent(model(server, "anthropic", validate_calls=False), tools=made, middleware=[middleware])
    server.routes[path(server, "anthropic")] = fixture("anthropic/max_tokens_truncated.sse")
    messages = (await agent.ainvoke({"messages": [HumanMessage("Paris, then a note")]}))["messages"]
    assert ran == [("get_weather", {"city": "Paris"})]  # the cut write_file never ran
    assert [c["name"] for c in messages[1].invalid_tool_calls] == ["write_file"]


async def test_a_message_edited_since_goes_back_as_it_now_reads(server: LoopbackServer) -> None:
    server.routes[path(server, "anthropic")] = fixture("anthropic/thinking_then_call.sse")
    message = model(server, "anthropic").invoke("go")
    edited = message.model_copy(update={"tool_calls": [{**message.tool_calls[0], "args": {"city": "[city]"}}]})
    server.routes[path(server, "anthropic")] = FINAL["anthropic"]
    model(server, "anthropic").invoke([HumanMessage("go"), message, ToolMessage("sunny", tool_call_id="toolu_01A")])
    model(server, "anthropic").invoke([HumanMessage("go"), edited, ToolMessage("sunny", tool_call_id="toolu_01A")])
    kept, rewritten = sent(server, 1)["messages"][1]["content"], sent(server, 2)["messages"][1]["content"]
    assert [block["type"] for block in kept] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert [block["type"] for block in rewritten] == ["text", "tool_use"]
    assert rewritten[1]["input"] == {"city": "[city]"}


async def test_a_stream_that_fails_cancels_the_tools_it_started(server: LoopbackServer) -> None:
    import asyncio

    from streamkit import ProviderError
    from streamkit.integrations.langchain import EarlyToolsMiddleware

    gate = threading.Event()
    server.routes[path(server, "anthropic")] = gated(server, "anthropic/error_midstream.sse", gate, b"event: error")
    seen: list[str] = []

    async def wait(city: str) -> str:
        seen.append(city)
        gate.set()  # the error comes once the tool has begun
        try:
            await waited(asyncio.Event(), "the tool to be cancelled")
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return city

    get_weather = StructuredTool.from_function(coroutine=wait, name="get_weather", description="Weather.")
    middleware = EarlyToolsMiddleware()
    agent = create_agent(model(server, "anthropic"), tools=[get_weather], middleware=[middleware])
    with pytest.raises(ProviderError, match="Overloaded"):
        await agent.ainvoke({"messages": [HumanMessage("Oslo and Berlin?")]})
    assert seen == ["Oslo", "cancelled"]  # started early, then stopped with the stream, before the run ended


# -- the early starter belongs to one model call of one run --------------------------------------


def gemini_chunk(part: dict[str, Any], finish: str | None = "STOP") -> bytes:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return b"data: " + json.dumps({"candidates": [candidate], "modelVersion": GEMINI}).encode() + b"\r\n\r\n"


#: A Gemini call carries no id: the one LangChain sees is derived from its index, name and input,
#: the same in every run that makes the same call.
BALANCE_CALL = Reply([gemini_chunk({"functionCall": {"name": "get_balance", "args": {"user": "alice"}}})])
GEMINI_FINAL = Reply([gemini_chunk({"text": "Done."})])


async def test_two_parallel_runs_of_one_agent_each_get_their_own_tools_result(server: LoopbackServer) -> None:
    import asyncio
    from contextvars import ContextVar

    from streamkit.integrations.langchain import EarlyToolsMiddleware

    route = path(server, "gemini")
    server.routes[route] = BALANCE_CALL
    both = asyncio.Event()
    ran: list[str] = []
    who: ContextVar[str] = ContextVar("who")  # which run a tool belongs to, as its context says

    async def balance(user: str) -> str:
        ran.append(user)
        if len(ran) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 10)  # the two runs' tools overlap
        server.routes[route] = GEMINI_FINAL
        return f"balance of {user} for run {who.get()}"

    get_balance = StructuredTool.from_function(coroutine=balance, name="get_balance", description="Balance.")
    agent = create_agent(model(server, "gemini"), tools=[get_balance], middleware=[EarlyToolsMiddleware()])

    async def run(name: str) -> list[str]:
        who.set(name)
        messages = (await agent.ainvoke({"messages": [HumanMessage("my balance")]}))["messages"]
        return [str(m.content) for m in messages if isinstance(m, ToolMessage)]

    assert list(await asyncio.gather(run("one"), run("two"))) == [
        ["balance of alice for run one"],
        ["balance of alice for run two"],
    ]
    assert ran == ["alice", "alice"]  # one tool run per agent run, never one shared
    told = [
        part["functionResponse"]["response"]
        for request in server.requests[2:]
        for content in json.loads(request.body)["contents"]
        for part in content["parts"]
        if "functionResponse" in part
    ]
    assert sorted(told, key=str) == [
        {"output": "balance of alice for run one"},
        {"output": "balance of alice for run two"},
    ]


async def test_a_run_closed_mid_stream_cancels_its_tool_and_the_next_run_gets_its_own(server: LoopbackServer) -> None:
    import asyncio

    from streamkit.integrations.langchain import EarlyToolsMiddleware

    route = path(server, "anthropic")
    gate = threading.Event()
    server.routes[route] = gated(server, "anthropic/thinking_then_call.sse", gate)
    started = asyncio.Event()
    seen: list[str] = []

    async def weather(city: str) -> str:
        seen.append(f"{city} started")
        started.set()
        try:
            if len(seen) == 1:  # the first run's tool waits
                await waited(asyncio.Event(), "the first run's tool to be cancelled")
        except asyncio.CancelledError:
            seen.append(f"{city} cancelled")
            raise
        server.routes[route] = FINAL["anthropic"]
        return f"sunny, run {len(seen)}"

    get_weather = StructuredTool.from_function(coroutine=weather, name="get_weather", description="Weather.")
    agent = create_agent(model(server, "anthropic"), tools=[get_weather], middleware=[EarlyToolsMiddleware()])
    stream = agent.astream({"messages": [HumanMessage("Paris?")]}, stream_mode="messages")

    async def read() -> None:
        async for _ in stream:
            pass

    reading = asyncio.ensure_future(read())
    await asyncio.wait_for(started.wait(), 10)  # the model still streams: its end is held back
    reading.cancel()  # the application stops the run
    with pytest.raises(asyncio.CancelledError):
        await reading
    await stream.aclose()  # type: ignore[attr-defined]  # an async generator
    assert seen == ["Paris started", "Paris cancelled"]  # stopped with its run, before the close returned
    gate.set()
    server.routes[route] = fixture("anthropic/thinking_then_call.sse")
    messages = (await agent.ainvoke({"messages": [HumanMessage("Paris?")]}))["messages"]
    assert seen == ["Paris started", "Paris cancelled", "Paris started"]
    assert [m.content for m in messages if isinstance(m, ToolMessage)] == ["sunny, run 3"]


async def test_a_run_closed_after_its_model_streamed_waits_for_its_sync_tool_to_end(server: LoopbackServer) -> None:
    """A tool of sync code runs in a thread, which nothing can stop: closing the run waits for
    it, so nothing the run started goes on once the close has returned."""
    import time

    from streamkit.integrations.langchain import EarlyToolsMiddleware

    server.routes[path(server, "anthropic")] = fixture("anthropic/thinking_then_call.sse")
    seen: list[str] = []

    def weather(city: str) -> str:
        seen.append(f"{city} started")
        time.sleep(0.5)
        seen.append(f"{city} ended")
        return "sunny"

    get_weather = StructuredTool.from_function(func=weather, name="get_weather", description="Weather.")
    agent = create_agent(model(server, "anthropic"), tools=[get_weather], middleware=[EarlyToolsMiddleware()])
    stream = agent.astream({"messages": [HumanMessage("Paris?")]}, stream_mode="messages")
    async for chunk, _ in stream:
        if isinstance(chunk, AIMessageChunk) and chunk.chunk_position == "last":
            break  # the model's message is whole; its tool still runs
    await stream.aclose()  # type: ignore[attr-defined]
    assert seen == ["Paris started", "Paris ended"]


# -- a turn of invalid calls only: the model is told, and asked again -----------------------------


def chat_call(arguments: str, finish: str) -> Reply:
    call = {"index": 0, "id": "call_A", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    return Reply(
        [openai_chunk({"role": "assistant", "tool_calls": [call]}), openai_chunk({}, finish), b"data: [DONE]\n\n"]
    )


ASKED_AGAIN = {
    "cut": (chat_call('{"city": "Par', "length"), {"kind": "truncated", "message": TRUNCATED_MESSAGE}),
    "invalid JSON": (
        chat_call('{"city": Paris}', "tool_calls"),
        {
            "kind": "invalid_json",
            "message": "the arguments are not valid JSON: unexpected character, expected a JSON value",
            "position": 9,
        },
    ),
    "schema": (
        chat_call('{"city": 7}', "tool_calls"),
        {"kind": "schema", "message": '7 is not of type "string"', "path": "$.city"},
    ),
}


@pytest.mark.parametrize("how", ["ainvoke", "invoke"])
@pytest.mark.parametrize("case", sorted(ASKED_AGAIN))
async def test_a_turn_of_invalid_calls_only_tells_the_model_and_asks_again(
    server: LoopbackServer, case: str, how: str
) -> None:
    from streamkit.integrations.langchain import AskAgainMiddleware

    bad, error = ASKED_AGAIN[case]
    server.routes = Turns(path(server, "openai_chat"), bad, FINAL["openai_chat"])
    ran: Ran = []
    agent = create_agent(
        model(server, "openai_chat"), tools=tools(server, "openai_chat", ran), middleware=[AskAgainMiddleware()]
    )
    state: Any = {"messages": [HumanMessage("Weather?")]}
    messages = (await agent.ainvoke(state) if how == "ainvoke" else agent.invoke(state))["messages"]
    assert ran == []
    assert messages[-1].text == "done"
    assert len(server.requests) == 2
    answer = sent(server, 1)["messages"][-1]
    assert (answer["role"], answer["tool_call_id"]) == ("tool", "call_A")
    assert json.loads(answer["content"]) == {"ok": False, "errors": [error]}


async def test_invalid_calls_turn_after_turn_end_the_run_with_a_typed_error(server: LoopbackServer) -> None:
    from streamkit.integrations.langchain import EarlyToolsMiddleware, InvalidCallsError

    server.routes[path(server, "openai_chat")] = chat_call('{"city": "Par', "length")
    agent = create_agent(
        model(server, "openai_chat"),
        tools=tools(server, "openai_chat", []),
        middleware=[EarlyToolsMiddleware(retries=1)],
    )
    with pytest.raises(InvalidCallsError) as info:
        await agent.ainvoke({"messages": [HumanMessage("Weather?")]})
    assert str(info.value) == (
        "the model sent only invalid tool calls 2 turns in a row; the last turn's: the tool call get_weather (call_A) "
        "was not run: your arguments were cut off by the output limit; send less per call."
    )
    assert [(call.name, call.raw, call.truncated) for call in info.value.invalid] == [
        ("get_weather", '{"city": "Par', True)
    ]
    assert (info.value.withheld, info.value.turns) == ((), 2)
    assert len(server.requests) == 2  # asked once again, then stopped
