"""openai-agents' own Runner, driven by ``StreamkitModel`` against the loopback server.

``Runner.run`` and ``Runner.run_streamed`` run their own agent loop: each parallel call runs once
with its own arguments (OpenAI Chat calls all at index 0, or without an index), a call the
output limit cut off never runs (the stream ends with ``response.incomplete``), an Anthropic
thinking signature and a Gemini thought signature go back byte for byte in the next request,
and each call leaves the stream as ``response.output_item.done`` the moment it completes.
Skipped where openai-agents is not installed (the ``framework-tests`` extra installs it).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from .helpers import FIXTURES
from .server import LoopbackServer, Reply, Turns

pytest.importorskip("agents")

import httpx
from agents import Agent, ModelSettings, ModelTracing, RunConfig, Runner, SQLiteSession, function_tool
from agents.exceptions import ModelBehaviorError
from openai.types.responses import ResponseFunctionToolCall

import streamkit
from streamkit.integrations.openai_agents import StreamkitModel, StreamkitModelProvider

from .models import ANTHROPIC, GEMINI, OPENAI

pytestmark = pytest.mark.anyio

Ran = list[tuple[str, dict[str, Any]]]
PATHS = {
    "openai_chat": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "gemini": "/v1beta/models/gemini-3.8-flash:streamGenerateContent",
    "openai_responses": "/v1/responses",
}
MODELS = {
    "openai_chat": OPENAI,
    "anthropic": ANTHROPIC,
    "gemini": GEMINI,
    "openai_responses": OPENAI,
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # openai-agents runs on asyncio


def _sse(payload: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


def final_reply(provider: str, text: str = "done") -> Reply:
    """A last turn of plain text, in the provider's own stream format."""
    if provider == "openai_chat":
        chunk = {"id": "c9", "object": "chat.completion.chunk", "created": 1, "model": OPENAI}
        first = {
            **chunk,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}],
        }
        last = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        return Reply([_sse(first) + _sse(last) + b"data: [DONE]\n\n"])
    if provider == "anthropic":
        message: dict[str, Any] = {"id": "msg_9", "type": "message", "role": "assistant", "content": []}
        message |= {"model": ANTHROPIC, "stop_reason": None, "usage": {"input_tokens": 5, "output_tokens": 1}}
        events = [
            _sse({"type": "message_start", "message": message}, "message_start"),
            _sse(
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                "content_block_start",
            ),
            _sse(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
                "content_block_delta",
            ),
            _sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            _sse(
                {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}},
                "message_delta",
            ),
            _sse({"type": "message_stop"}, "message_stop"),
        ]
        return Reply([b"".join(events)])
    if provider == "openai_responses":
        delta = {"type": "response.output_text.delta", "item_id": "msg_9", "output_index": 0, "content_index": 0}
        end: dict[str, Any] = {"id": "resp_9", "object": "response", "status": "completed", "output": [], "usage": None}
        return Reply([_sse({**delta, "delta": text}) + _sse({"type": "response.completed", "response": end})])
    candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
    return Reply([_sse({"candidates": [candidate], "modelVersion": GEMINI})])


def fixture_reply(provider: str, name: str) -> Reply:
    return Reply([(FIXTURES / provider / f"{name}.sse").read_bytes()])


def make_agent(server: LoopbackServer, provider: str, ran: Ran) -> Agent[None]:
    """An agent whose tools record each run and switch the route to a final answer."""
    path = PATHS[provider]

    def record(name: str, arguments: dict[str, Any]) -> None:
        ran.append((name, arguments))
        server.routes[path] = final_reply(provider)

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        record("get_weather", {"city": city})
        return f"sunny in {city}"

    @function_tool
    def get_stock(ticker: str) -> str:
        """A stock's price."""
        record("get_stock", {"ticker": ticker})
        return "190"

    @function_tool
    def write_file(path: str, content: str) -> str:
        """Write a file."""
        record("write_file", {"path": path, "content": content})
        return "written"

    return Agent(name="assistant", instructions="Be brief.", tools=[get_weather, get_stock, write_file])


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as made:
        yield made


def run_config(server: LoopbackServer, provider: str, client: httpx.AsyncClient, **options: Any) -> RunConfig:
    base = server.url("/v1") if provider.startswith("openai") else server.url("")
    made = StreamkitModelProvider(
        provider, default_model=MODELS[provider], client=client, base_url=base, api_key="k", **options
    )
    return RunConfig(model_provider=made, tracing_disabled=True)


async def run_plain(agent: Agent[None], prompt: str, config: RunConfig) -> Any:
    return (await Runner.run(agent, prompt, run_config=config)).final_output


async def run_streamed(agent: Agent[None], prompt: str, config: RunConfig) -> Any:
    result = Runner.run_streamed(agent, prompt, run_config=config)
    async for _ in result.stream_events():
        pass
    return result.final_output


RUNS: dict[str, Callable[[Agent[None], str, RunConfig], Awaitable[Any]]] = {
    "run": run_plain,
    "run_streamed": run_streamed,
}


@pytest.fixture(params=sorted(RUNS))
def run(request: pytest.FixtureRequest) -> Callable[[Agent[None], str, RunConfig], Awaitable[Any]]:
    return RUNS[request.param]


@pytest.mark.parametrize("fixture", ["parallel_calls_all_index_zero", "index_missing"])
async def test_each_parallel_call_runs_once_with_its_own_arguments(
    server: LoopbackServer, client: httpx.AsyncClient, run: Callable[..., Awaitable[Any]], fixture: str
) -> None:
    server.routes[PATHS["openai_chat"]] = fixture_reply("openai_chat", fixture)
    ran: Ran = []
    config = run_config(server, "openai_chat", client)
    assert await run(make_agent(server, "openai_chat", ran), "Weather in Paris, and AAPL?", config) == "done"
    assert ran == [("get_weather", {"city": "Paris"}), ("get_stock", {"ticker": "AAPL"})]
    follow_up = json.loads(server.requests[1].body)
    assert follow_up["messages"][1:] == [
        {"role": "user", "content": "Weather in Paris, and AAPL?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_A",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "call_B",
                    "type": "function",
                    "function": {"name": "get_stock", "arguments": '{"ticker":"AAPL"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_A", "content": "sunny in Paris"},
        {"role": "tool", "tool_call_id": "call_B", "content": "190"},
    ]


async def test_a_response_of_two_choices_is_refused_not_cut_to_one(
    server: LoopbackServer, client: httpx.AsyncClient, run: Callable[..., Awaitable[Any]]
) -> None:
    server.routes[PATHS["openai_chat"]] = fixture_reply("openai_chat", "n2_same_call_id_per_choice")
    ran: Ran = []
    config = run_config(server, "openai_chat", client)
    refused = r"^the OpenAI Agents SDK integration takes one answer per request, and the response holds choice 1: "
    with pytest.raises(streamkit.UsageError, match=refused):
        await run(make_agent(server, "openai_chat", ran), "Weather in Paris?", config)
    assert (ran, len(server.requests)) == ([], 1)


@pytest.mark.parametrize(
    ("provider", "fixture"),
    [("openai_chat", "length_truncated"), ("anthropic", "max_tokens_truncated"), ("gemini", "max_tokens_truncated")],
)
async def test_on_cut_stop_a_call_cut_by_the_output_limit_never_runs(
    server: LoopbackServer, client: httpx.AsyncClient, run: Callable[..., Awaitable[Any]], provider: str, fixture: str
) -> None:
    """The response ends with ``response.incomplete``: openai-agents stops the run, and nothing of
    the turn runs, not even Gemini's cut call whose arguments happen to be whole JSON."""
    server.routes[PATHS[provider]] = fixture_reply(provider, fixture)
    ran: Ran = []
    config = run_config(server, provider, client, on_cut="stop")
    with pytest.raises(ModelBehaviorError, match=r"response\.incomplete"):
        await run(make_agent(server, provider, ran), "Write a story to a.txt", config)
    assert ran == []
    assert len(server.requests) == 1


async def test_an_anthropic_thinking_signature_goes_back_byte_for_byte(
    server: LoopbackServer, client: httpx.AsyncClient, run: Callable[..., Awaitable[Any]]
) -> None:
    server.routes[PATHS["anthropic"]] = fixture_reply("anthropic", "thinking_then_call")
    ran: Ran = []
    assert (
        await run(make_agent(server, "anthropic", ran), "Weather in Paris?", run_config(server, "anthropic", client))
        == "done"
    )
    assert ran == [("get_weather", {"city": "Paris"})]
    history = (FIXTURES / "anthropic" / "thinking_then_call.history.jsonl").read_text().splitlines()[-1]
    (turn,) = json.loads(history)["items"]
    sent = json.loads(server.requests[1].body)
    assert sent["system"] == "Be brief."
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        turn,
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "sunny in Paris"}],
        },
    ]
    assert '"signature":"EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w=="' in server.requests[1].body.decode()


async def test_gemini_thought_signatures_go_back_on_their_parts(
    server: LoopbackServer, client: httpx.AsyncClient, run: Callable[..., Awaitable[Any]]
) -> None:
    server.routes[PATHS["gemini"]] = fixture_reply("gemini", "thought_signatures")
    ran: Ran = []
    assert (
        await run(make_agent(server, "gemini", ran), "Paris and Rome?", run_config(server, "gemini", client)) == "done"
    )
    assert ran == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    history = (FIXTURES / "gemini" / "thought_signatures.history.jsonl").read_text().splitlines()[-1]
    (turn,) = json.loads(history)["items"]
    sent = json.loads(server.requests[1].body)
    assert sent["contents"] == [
        {"role": "user", "parts": [{"text": "Paris and Rome?"}]},
        turn,
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"output": "sunny in Paris"}}},
                {"functionResponse": {"name": "get_weather", "response": {"output": "sunny in Rome"}}},
            ],
        },
    ]


async def test_on_cut_tell_runs_the_whole_calls_and_tells_the_model_of_the_cut_one(
    server: LoopbackServer, client: httpx.AsyncClient, run: Callable[..., Awaitable[Any]]
) -> None:
    server.routes[PATHS["anthropic"]] = fixture_reply("anthropic", "max_tokens_truncated")
    ran: Ran = []
    made = StreamkitModelProvider(
        "anthropic", default_model=ANTHROPIC, client=client, base_url=server.url(""), on_cut="tell"
    )
    config = RunConfig(model_provider=made, tracing_disabled=True)
    assert await run(make_agent(server, "anthropic", ran), "Weather, then a note", config) == "done"
    assert ran == [("get_weather", {"city": "Paris"})]
    turn, results = json.loads(server.requests[1].body)["messages"][1:]
    assert [block["type"] for block in turn["content"]] == ["tool_use", "tool_use"]
    assert turn["content"][1] == {"type": "tool_use", "id": "toolu_B", "name": "write_file", "input": {}}
    error = {"ok": False, "errors": [{"kind": "truncated", "message": streamkit.adapters._base.TRUNCATED_MESSAGE}]}
    assert results == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_A", "content": "sunny in Paris"},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_B",
                "content": json.dumps(error, separators=(",", ":")),
                "is_error": True,
            },
        ],
    }


def chat_call(arguments: str, finish: str) -> Reply:
    """An OpenAI Chat turn of one ``get_weather`` call with these arguments, ended by ``finish``."""
    chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": OPENAI}
    call = {"index": 0, "id": "call_A", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    first = {
        **chunk,
        "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}, "finish_reason": None}],
    }
    last = {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    return Reply([_sse(first) + _sse(last) + b"data: [DONE]\n\n"])


BAD_TURNS = {
    "cut": (
        chat_call('{"city": "Par', "length"),
        {"kind": "truncated", "message": streamkit.adapters._base.TRUNCATED_MESSAGE},
    ),
    "invalid JSON": (
        chat_call('{"city": Paris}', "tool_calls"),
        {
            "kind": "invalid_json",
            "message": "the arguments are not valid JSON: unexpected character, expected a JSON value",
            "position": 9,
        },
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_TURNS))
async def test_a_turn_whose_only_call_cannot_run_asks_the_model_again_with_streamkits_message(
    server: LoopbackServer, client: httpx.AsyncClient, run: Callable[..., Awaitable[Any]], case: str
) -> None:
    """openai-agents cannot parse the call's arguments, so it answers the call with an error and
    asks the model again; that request carries streamkit's own error for the call."""
    bad, error = BAD_TURNS[case]
    server.routes = Turns(PATHS["openai_chat"], bad, final_reply("openai_chat"))
    ran: Ran = []
    assert (
        await run(make_agent(server, "openai_chat", ran), "Weather?", run_config(server, "openai_chat", client))
        == "done"
    )
    assert ran == []
    assert len(server.requests) == 2
    answer = json.loads(server.requests[1].body)["messages"][-1]
    assert (answer["role"], answer["tool_call_id"]) == ("tool", "call_A")
    assert json.loads(answer["content"]) == {"ok": False, "errors": [error]}


def model(server: LoopbackServer, client: httpx.AsyncClient, provider: str = "anthropic") -> StreamkitModel:
    base = server.url("/v1") if provider.startswith("openai") else server.url("")
    return StreamkitModel(provider, MODELS[provider], client=client, base_url=base)


def stream_of(made: StreamkitModel, items: Any) -> AsyncIterator[Any]:
    settings, tracing = ModelSettings(), ModelTracing.DISABLED
    options: dict[str, Any] = {"previous_response_id": None, "conversation_id": None, "prompt": None}
    return made.stream_response(None, items, settings, [], None, [], tracing, **options)


async def events_of(made: StreamkitModel, items: Any) -> list[Any]:
    return [event async for event in stream_of(made, items)]


async def test_the_stream_as_responses_events(server: LoopbackServer, client: httpx.AsyncClient) -> None:
    server.routes[PATHS["anthropic"]] = fixture_reply("anthropic", "thinking_then_call")
    events = await events_of(model(server, client), "Weather in Paris?")
    assert [(event.type, getattr(event, "output_index", None)) for event in events] == [
        ("response.created", None),
        ("response.output_item.added", 0),
        ("response.output_item.done", 0),
        ("response.output_item.added", 1),
        ("response.output_item.done", 1),
        ("response.output_item.added", 2),
        ("response.content_part.added", 2),
        ("response.output_text.delta", 2),
        ("response.output_text.done", 2),
        ("response.content_part.done", 2),
        ("response.output_item.done", 2),
        ("response.output_item.added", 3),
        ("response.function_call_arguments.done", 3),
        ("response.output_item.done", 3),
        ("response.completed", None),
    ]
    assert [event.sequence_number for event in events] == list(range(len(events)))
    thinking, redacted, message, call = events[-1].response.output
    assert (thinking.content[0].text, thinking.encrypted_content) == (
        "The user wants the weather in Paris.",
        "EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w==",
    )
    assert redacted.encrypted_content == "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"
    assert message.content[0].text == "Let me check."
    assert isinstance(call, ResponseFunctionToolCall)
    assert (call.call_id, call.name, call.arguments) == ("toolu_01A", "get_weather", '{"city":"Paris"}')
    assert call is events[-2].item  # the item handed out at its end is the one in the response
    assert events[-1].response.usage.input_tokens == 90


async def test_each_call_is_handed_out_before_the_stream_ends(
    server: LoopbackServer, client: httpx.AsyncClient
) -> None:
    """The first call's ``output_item.done`` comes while the server still holds back the rest."""
    events = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes().split(b"\n\n")
    writes = [event + b"\n\n" for event in events if event.strip()]
    first_end = next(n for n, write in enumerate(writes) if b"content_block_stop" in write and b'"index":1' in write)
    server.routes[PATHS["anthropic"]] = Reply(writes, pauses={first_end + 1: 2.0})
    seen = [
        (event.item.name, server.connections[-1].finished.is_set())
        async for event in stream_of(model(server, client), "Two calls")
        if event.type == "response.output_item.done" and event.item.type == "function_call"
    ]
    assert seen[0][1] is False
    assert len(seen) == 2


async def test_a_history_made_elsewhere_is_sent_as_text_and_calls(
    server: LoopbackServer, client: httpx.AsyncClient
) -> None:
    """Items no StreamkitModel of this provider stamped (another provider's, or written by hand)
    give their text and calls; another provider's reasoning cannot be sent, and is not."""
    history = [
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-openai-only"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Checking.", "annotations": []}],
        },
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"role": "user", "content": [{"type": "input_text", "text": "And tomorrow?"}]},
    ]
    request = model(server, client).request("Be brief.", history, ModelSettings(max_tokens=100), [])
    assert request.body["system"] == "Be brief.\n\nAnswer in French."
    assert request.body["max_tokens"] == 100
    assert request.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"},
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"type": "computer_call", "call_id": "c"}, r"input\[0\] is a 'computer_call' item"),
        (
            {"type": "function_call_output", "call_id": "nope", "output": "x"},
            r"input\[0\] is the output of call 'nope'",
        ),
        (
            {"role": "user", "content": [{"type": "input_image", "image_url": "x"}]},
            r"input\[0\] has a 'input_image' part",
        ),
        (
            {
                "type": "reasoning",
                "summary": [],
                "provider_data": {"streamkit": {"provider": "anthropic", "items": [{"kind": "Nope"}]}},
            },
            r"input\[0\] carries streamkit data that is not a turn item",
        ),
    ],
)
def test_an_item_it_cannot_send_is_a_usage_error(item: dict[str, Any], message: str) -> None:
    made = StreamkitModel("anthropic", ANTHROPIC)
    with pytest.raises(streamkit.UsageError, match=message):
        made.request(None, [item], ModelSettings(), [])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"provider": "cohere", "model": "m"},
            "StreamkitModel sends to anthropic, gemini, mistral, ollama, openai_chat, openai_responses, not 'cohere'",
        ),
        ({"provider": "anthropic", "model": ""}, "model must be the provider's model name"),
        ({"provider": "anthropic", "model": "m", "on_cut": "retry"}, "on_cut must be one of stop, tell, got 'retry'"),
    ],
)
def test_bad_arguments_are_usage_errors(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(streamkit.UsageError, match=message):
        StreamkitModel(**arguments)


def test_the_provider_hands_its_models_its_options_and_refuses_another() -> None:
    made = StreamkitModelProvider("anthropic", base_url="http://127.0.0.1:9", api_key="k", max_tokens=7, on_cut="stop")
    model = made.get_model("claude")
    assert isinstance(model, StreamkitModel)
    assert (model.base_url, model.max_tokens, model.on_cut) == ("http://127.0.0.1:9", 7, "stop")
    with pytest.raises(streamkit.UsageError) as raised:
        StreamkitModelProvider("anthropic", timeout=3)  # type: ignore[call-arg]
    assert str(raised.value) == (
        "StreamkitModelProvider takes no 'timeout' (its options: base_url, api_key, max_tokens, extra, on_cut)"
    )


async def test_the_signature_survives_a_session_stored_as_json(
    server: LoopbackServer, client: httpx.AsyncClient
) -> None:
    """A later run reads the turn back from an SQLite session: the stamp is JSON, and the
    thinking block still goes back with its signature."""
    server.routes[PATHS["anthropic"]] = fixture_reply("anthropic", "thinking_then_call")
    ran: Ran = []
    agent, config = make_agent(server, "anthropic", ran), run_config(server, "anthropic", client)
    session = SQLiteSession("conversation")
    try:
        assert (await Runner.run(agent, "Weather in Paris?", run_config=config, session=session)).final_output == "done"
        assert (await Runner.run(agent, "Thanks", run_config=config, session=session)).final_output == "done"
    finally:
        session.close()
    history = (FIXTURES / "anthropic" / "thinking_then_call.history.jsonl").read_text().splitlines()[-1]
    (turn,) = json.loads(history)["items"]
    assert json.loads(server.requests[2].body)["messages"][1] == turn


def test_a_call_whose_arguments_are_not_json_goes_back_with_streamkits_error() -> None:
    """Whatever output openai-agents recorded for it, the model is told what streamkit found."""
    history = [
        {"role": "user", "content": "Weather?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": '},
        {"type": "function_call_output", "call_id": "call_1", "output": "An error occurred while running the tool."},
    ]
    made = StreamkitModel("openai_chat", OPENAI)
    body = made.request(None, history, ModelSettings(temperature=0.0), []).body
    assert body["temperature"] == 0.0
    messages = body["messages"]
    assert messages[1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": '}
    assert messages[2]["tool_call_id"] == "call_1"
    assert [issue["kind"] for issue in json.loads(messages[2]["content"])["errors"]] == ["invalid_json"]


async def test_openai_responses_reasoning_and_item_ids_go_back(
    server: LoopbackServer, client: httpx.AsyncClient, run: Callable[..., Awaitable[Any]]
) -> None:
    server.routes[PATHS["openai_responses"]] = fixture_reply("openai_responses", "reasoning_then_call")
    ran: Ran = []
    config = run_config(server, "openai_responses", client)
    assert await run(make_agent(server, "openai_responses", ran), "Weather in Paris?", config) == "done"
    assert ran == [("get_weather", {"city": "Paris"})]
    history = (FIXTURES / "openai_responses" / "reasoning_then_call.history.jsonl").read_text().splitlines()[-1]
    sent = json.loads(server.requests[1].body)
    assert sent["instructions"] == "Be brief."
    assert sent["input"] == [
        {"role": "user", "content": "Weather in Paris?"},
        *json.loads(history)["items"],
        {"type": "function_call_output", "call_id": "call_A1", "output": "sunny in Paris"},
    ]


async def test_a_call_leaving_out_a_defaulted_parameter_runs_with_the_tools_default(
    server: LoopbackServer, client: httpx.AsyncClient, run: Callable[..., Awaitable[Any]]
) -> None:
    """openai-agents' strict schema lists ``units`` as required; its default still applies."""
    server.routes[PATHS["openai_chat"]] = fixture_reply("openai_chat", "index_missing")
    ran: Ran = []

    @function_tool
    def get_weather(city: str, units: str = "c") -> str:
        """The weather in a city."""
        ran.append(("get_weather", {"city": city, "units": units}))
        return f"sunny in {city}"

    @function_tool
    def get_stock(ticker: str) -> str:
        """A stock's price."""
        ran.append(("get_stock", {"ticker": ticker}))
        server.routes[PATHS["openai_chat"]] = final_reply("openai_chat")
        return "190"

    assert "units" in get_weather.params_json_schema["required"]
    agent = Agent(name="assistant", tools=[get_weather, get_stock])
    assert await run(agent, "Weather in Paris, and AAPL?", run_config(server, "openai_chat", client)) == "done"
    assert ran == [("get_weather", {"city": "Paris", "units": "c"}), ("get_stock", {"ticker": "AAPL"})]
    follow_up = json.loads(server.requests[1].body)["messages"]
    assert follow_up[-2:] == [
        {"role": "tool", "tool_call_id": "call_A", "content": "sunny in Paris"},
        {"role": "tool", "tool_call_id": "call_B", "content": "190"},
    ]
