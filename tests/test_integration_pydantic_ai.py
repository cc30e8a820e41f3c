"""``streamkit.integrations.pydantic_ai`` under pydantic-ai's own agent loop, against the loopback server.

Each test runs an ``Agent`` on a wrapped OpenAI Chat, OpenAI Responses, Anthropic or Google
model whose provider is the loopback server, asserts exactly which tools ran with which
arguments, and reads the body of the request that follows the tools. Skipped where pydantic-ai
is not installed (the ``framework-tests`` extra installs it).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterable
from typing import Any

import pytest

from .helpers import FIXTURES
from .server import LoopbackServer, Reply

pytest.importorskip("pydantic_ai")
httpx2 = pytest.importorskip("httpx2")
pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("google.genai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelRequest,
    PartDeltaEvent,
    PartStartEvent,
    ToolCallPart,
    ToolCallPartDelta,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters  # noqa: E402
from pydantic_ai.models.anthropic import AnthropicModel  # noqa: E402
from pydantic_ai.models.google import GoogleModel  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel  # noqa: E402
from pydantic_ai.providers.anthropic import AnthropicProvider  # noqa: E402
from pydantic_ai.providers.google import GoogleProvider  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402
from pydantic_ai.tools import ToolDefinition  # noqa: E402

from streamkit import Limits, UsageError  # noqa: E402
from streamkit.adapters._base import TRUNCATED_MESSAGE  # noqa: E402
from streamkit.integrations.pydantic_ai import (  # noqa: E402
    StartToolsEarly,
    StreamkitModel,
    StreamkitStreamedResponse,
    wrap,
)

from .models import ANTHROPIC, GEMINI, OPENAI  # noqa: E402

pytestmark = pytest.mark.anyio

Ran = list[tuple[str, dict[str, Any]]]
PATHS = {
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": "/v1/models/gemini-3.8-flash:streamGenerateContent",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # pydantic-ai runs on asyncio


class Replies(dict[str, Reply]):
    """Routes that answer each request on a path with the next of its replies (the last one repeats)."""

    def __init__(self, path: str, *bodies: bytes, **first: Any) -> None:
        super().__init__()
        self.queue = [Reply([body], **(first if number == 0 else {})) for number, body in enumerate(bodies)]
        self[path] = self.queue[0]

    def get(self, key: str, default: Any = None) -> Any:
        if key in self and len(self.queue) > 1:
            reply = self.queue.pop(0)
            self[key] = self.queue[0]
            return reply
        return super().get(key, default)


def sse(*events: tuple[str | None, dict[str, Any]]) -> bytes:
    out = b""
    for name, data in events:
        out += (f"event: {name}\n" if name else "").encode() + b"data: " + json.dumps(data).encode() + b"\n\n"
    return out


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, dict[str, Any]]:
    body = {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": OPENAI}
    return None, body | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


FINAL = {
    "openai_chat": sse(chat_chunk({"role": "assistant", "content": "done"}), chat_chunk({}, "stop"))
    + b"data: [DONE]\n\n",
    "anthropic": sse(
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_2", "type": "message", "role": "assistant", "model": ANTHROPIC, "content": [],
            "stop_reason": None, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "done"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": 2}}),
        ("message_stop", {"type": "message_stop"}),
    ),
    "openai_responses": sse(
        ("response.created", {"type": "response.created", "sequence_number": 0, "response": {
            "id": "resp_2", "object": "response", "created_at": 1, "status": "in_progress", "model": OPENAI,
            "output": []}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 1,
                                        "item_id": "msg_2", "output_index": 0, "content_index": 0, "delta": "done"}),
        ("response.completed", {"type": "response.completed", "sequence_number": 2, "response": {
            "id": "resp_2", "object": "response", "created_at": 1, "status": "completed", "model": OPENAI,
            "output": [{"type": "message", "id": "msg_2", "status": "completed", "role": "assistant",
                        "content": [{"type": "output_text", "text": "done", "annotations": []}]}],
            "usage": {"input_tokens": 5, "output_tokens": 1, "total_tokens": 6}}}),
    ),
    "gemini": sse((None, {"candidates": [{"content": {"role": "model", "parts": [{"text": "done"}]},
                                          "finishReason": "STOP", "index": 0}],
                          "modelVersion": GEMINI, "responseId": "r2"})),
}  # fmt: skip


def model_for(provider: str, server: LoopbackServer, client: Any) -> Model:
    if provider == "openai_chat":
        return OpenAIChatModel(OPENAI, provider=OpenAIProvider(server.url("/v1"), "test-key", http_client=client))
    if provider == "openai_responses":
        openai = OpenAIProvider(server.url("/v1"), "test-key", http_client=client)
        return OpenAIResponsesModel(OPENAI, provider=openai)
    if provider == "anthropic":
        anthropic = AnthropicProvider(api_key="test-key", base_url=server.url(""), http_client=client)
        return AnthropicModel(ANTHROPIC, provider=anthropic)
    google = GoogleProvider(api_key="test-key", base_url=server.url(""), http_client=client)
    return GoogleModel(GEMINI, provider=google)


def agent_for(model: Model, ran: Ran) -> Agent[None, str]:
    made: Agent[None, str] = Agent(model)

    @made.tool_plain
    def get_weather(city: str) -> str:
        ran.append(("get_weather", {"city": city}))
        return "sunny"

    @made.tool_plain
    def get_stock(ticker: str) -> str:
        ran.append(("get_stock", {"ticker": ticker}))
        return "190"

    @made.tool_plain
    def write_file(path: str, content: str) -> str:
        ran.append(("write_file", {"path": path, "content": content}))
        return "written"

    return made


async def run(
    server: LoopbackServer,
    provider: str,
    first: bytes,
    *,
    how: str = "run_stream",
    wrapped: bool = True,
    body: dict[str, Any] | None = None,
) -> tuple[str, Ran, list[dict[str, Any]]]:
    """The agent's output, the tools that ran, and the bodies of the requests it sent.

    ``how``: ``run_stream``; ``run`` (the model's ``request``); ``events`` (``run`` with an event
    stream handler, which makes the agent use the model's ``request_stream``). ``body``: how the
    first reply is sent (``Reply``'s options: compressed, another content type).
    """
    server.routes = Replies(PATHS[provider], first, FINAL[provider], **(body or {}))
    ran: Ran = []
    async with httpx2.AsyncClient(timeout=60) as client:
        model = model_for(provider, server, client)
        agent = agent_for(wrap(model) if wrapped else model, ran)
        if how == "run_stream":
            async with agent.run_stream("Go") as result:
                output = await result.get_output()
        elif how == "run":
            output = (await agent.run("Go")).output
        else:
            output = (await agent.run("Go", event_stream_handler=drain)).output
    return output, ran, [json.loads(request.body) for request in server.requests]


async def drain(context: Any, events: AsyncIterable[Any]) -> None:
    async for _ in events:
        pass


def fixture(provider: str, name: str) -> bytes:
    return (FIXTURES / provider / f"{name}.sse").read_bytes()


# OpenAI Chat


@pytest.mark.parametrize("name", ["parallel_calls_all_index_zero", "index_missing"])
@pytest.mark.parametrize("how", ["run_stream", "run", "events"])
async def test_openai_chat_parallel_calls_each_run_once(server: LoopbackServer, name: str, how: str) -> None:
    output, ran, bodies = await run(server, "openai_chat", fixture("openai_chat", name), how=how)
    assert output == "done"
    assert sorted(ran) == [("get_stock", {"ticker": "AAPL"}), ("get_weather", {"city": "Paris"})]
    assert len(bodies) == 2
    assistant = next(message for message in bodies[1]["messages"] if message["role"] == "assistant")
    calls = [(call["function"]["name"], json.loads(call["function"]["arguments"])) for call in assistant["tool_calls"]]
    assert calls == [("get_weather", {"city": "Paris"}), ("get_stock", {"ticker": "AAPL"})]
    results = [message for message in bodies[1]["messages"] if message["role"] == "tool"]
    assert [result["content"] for result in results] == ["sunny", "190"]


async def test_openai_chat_truncated_call_never_runs_and_the_model_is_told_it_was_cut(server: LoopbackServer) -> None:
    output, ran, bodies = await run(server, "openai_chat", fixture("openai_chat", "length_truncated"))
    assert output == "done"
    assert ran == []
    assistant = next(message for message in bodies[1]["messages"] if message["role"] == "assistant")
    raw = '{"path": "a.txt", "content": "Once upon'
    assert assistant["tool_calls"] == [
        {
            "id": "call_A",
            "type": "function",
            "function": {"name": "write_file", "arguments": json.dumps({"INVALID_JSON": raw}, separators=(",", ":"))},
        }
    ]
    (result,) = [message for message in bodies[1]["messages"] if message["role"] == "tool"]
    assert result["tool_call_id"] == "call_A"
    assert json.loads(result["content"]) == {
        "error": {"ok": False, "errors": [{"kind": "truncated", "message": TRUNCATED_MESSAGE}]}
    }
    assert "json" not in result["content"].lower()


# Anthropic


async def test_anthropic_thinking_signature_goes_back_byte_for_byte(server: LoopbackServer) -> None:
    output, ran, bodies = await run(server, "anthropic", fixture("anthropic", "thinking_then_call"), how="events")
    assert output == "done"
    assert ran == [("get_weather", {"city": "Paris"})]
    assistant = next(message for message in bodies[1]["messages"] if message["role"] == "assistant")
    assert assistant["content"] == [
        {
            "type": "thinking",
            "thinking": "The user wants the weather in Paris.",
            "signature": "EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w==",
        },
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"},
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
    ]


def anthropic_cut(arguments: str) -> bytes:
    """A turn whose second call is cut by ``max_tokens`` after ``arguments``."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": ANTHROPIC,
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 9, "output_tokens": 1},
        },
    }

    def block(index: int, call_id: str, name: str, partial: str, stop: bool) -> list[tuple[str, dict[str, Any]]]:
        use = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": partial}
        events = [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": use}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
        ]
        return events + ([("content_block_stop", {"type": "content_block_stop", "index": index})] if stop else [])

    return sse(
        ("message_start", start),
        *block(0, "toolu_A", "get_weather", '{"city": "Paris"}', True),
        *block(1, "toolu_B", "write_file", arguments, False),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {}}),
        ("message_stop", {"type": "message_stop"}),
    )


@pytest.mark.parametrize(
    "arguments",
    ['{"path": "notes.txt", "content": "Dear Paris, the weat', '{"path": "notes.txt", "content": "Dear Paris"}'],
    ids=["invalid-json", "valid-json"],
)
async def test_anthropic_truncated_call_never_runs_even_when_its_text_is_valid_json(
    server: LoopbackServer, arguments: str
) -> None:
    output, ran, bodies = await run(server, "anthropic", anthropic_cut(arguments))
    assert output == "done"
    assert ran == [("get_weather", {"city": "Paris"})]
    assistant = next(message for message in bodies[1]["messages"] if message["role"] == "assistant")
    assert [block["id"] for block in assistant["content"]] == ["toolu_A", "toolu_B"]
    results = bodies[1]["messages"][-1]["content"]
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_A",
        "content": [{"type": "text", "text": "sunny"}],
        "is_error": False,
    }
    assert results[1]["tool_use_id"] == "toolu_B"
    assert results[1]["is_error"] is True
    content = results[1]["content"]
    text = content if isinstance(content, str) else "".join(block["text"] for block in content)
    assert json.loads(text) == {"ok": False, "errors": [{"kind": "truncated", "message": TRUNCATED_MESSAGE}]}


# OpenAI Responses and Google


@pytest.mark.parametrize("provider", ["openai_responses", "gemini"])
async def test_parallel_calls_each_run_once(server: LoopbackServer, provider: str) -> None:
    output, ran, bodies = await run(server, provider, fixture(provider, "text_then_two_calls"), how="events")
    assert output == "done"
    assert sorted(ran) == [("get_stock", {"ticker": "AAPL"}), ("get_weather", {"city": "Paris"})]
    if provider == "openai_responses":
        calls = [
            (item["call_id"], item["arguments"]) for item in bodies[1]["input"] if item.get("type") == "function_call"
        ]
        assert calls == [("call_A", '{"city":"Paris"}'), ("call_B", '{"ticker":"AAPL"}')]
    else:
        (_, model, _) = bodies[1]["contents"]
        assert [part.get("thoughtSignature") for part in model["parts"]] == [None, "EqUCAbcd1234", None]
        assert [part["functionCall"]["args"] for part in model["parts"][1:]] == [{"city": "Paris"}, {"ticker": "AAPL"}]


GENERATED_ID = re.compile(r"pyd_ai_[0-9a-f]{32}")


def numbered(body: dict[str, Any]) -> str:
    """The body as JSON, with the call ids pydantic-ai made up numbered in order of appearance."""
    text = json.dumps(body, sort_keys=True)
    ids: dict[str, str] = {}
    return GENERATED_ID.sub(lambda match: ids.setdefault(match[0], f"id{len(ids)}"), text)


@pytest.mark.parametrize(
    ("provider", "name", "kept"),
    [
        ("openai_chat", "text_then_two_calls", '"id": "call_B"'),
        ("openai_chat", "reasoning_content_then_call", '"reasoning_content": "Need the weather tool."'),
        ("openai_responses", "text_then_two_calls", '"call_id": "call_B"'),
        ("openai_responses", "reasoning_text_and_two_calls", '"encrypted_content": "gAAAAABfinal-Zx_9w=="'),
        ("anthropic", "text_then_two_calls", '"id": "toolu_B"'),
        ("gemini", "text_then_two_calls", '"thoughtSignature": "EqUCAbcd1234"'),
        ("gemini", "thought_signatures", '"thoughtSignature": "CiwBcsjafC3z-Vj2wQ=="'),
    ],
)
async def test_the_next_request_is_the_one_pydantic_ai_sends_itself(
    server: LoopbackServer, provider: str, name: str, kept: str
) -> None:
    """On a stream pydantic-ai reads right by itself, the wrapped model sends the same history back:
    thinking, signatures, reasoning items, ids and provider details round-trip as pydantic-ai's own."""
    _, ran, bodies = await run(server, provider, fixture(provider, name), how="events")
    server.requests.clear()
    _, bare_ran, bare_bodies = await run(server, provider, fixture(provider, name), how="events", wrapped=False)
    assert sorted(ran, key=repr) == sorted(bare_ran, key=repr)
    assert ran
    assert len(bodies) == len(bare_bodies) == 2
    assert numbered(bodies[1]) == numbered(bare_bodies[1])
    assert kept in numbered(bodies[1])


# The model on its own


async def test_each_call_enters_whole_with_dict_arguments(server: LoopbackServer) -> None:
    server.routes["/v1/messages"] = Reply([fixture("anthropic", "text_then_two_calls")])
    tools = [
        ToolDefinition(name=name, parameters_json_schema={"type": "object"}) for name in ("get_weather", "get_stock")
    ]
    messages: list[Any] = [ModelRequest(parts=[UserPromptPart("Go")])]
    async with httpx2.AsyncClient(timeout=60) as client:
        model = wrap(model_for("anthropic", server, client))
        parameters = ModelRequestParameters(function_tools=tools)
        async with model.request_stream(messages, None, parameters) as response:
            assert isinstance(response, StreamkitStreamedResponse)
            events = [event async for event in response]
    starts = [
        event.part for event in events if isinstance(event, PartStartEvent) and isinstance(event.part, ToolCallPart)
    ]
    assert [(part.tool_name, part.args) for part in starts] == [
        ("get_weather", {"city": "Paris", "units": "c"}),
        ("get_stock", {"ticker": "AAPL"}),
    ]
    assert not [
        event for event in events if isinstance(event, PartDeltaEvent) and isinstance(event.delta, ToolCallPartDelta)
    ]
    calls = [part for part in response.get().parts if isinstance(part, ToolCallPart)]
    assert [(part.tool_call_id, part.args) for part in calls] == [
        ("toolu_A", {"city": "Paris", "units": "c"}),
        ("toolu_B", {"ticker": "AAPL"}),
    ]


def test_wrap_takes_the_four_models_only() -> None:
    assert isinstance(wrap(OpenAIChatModel(OPENAI, provider=OpenAIProvider(api_key="k"))), StreamkitModel)
    with pytest.raises(UsageError, match="OpenAIChatModel, OpenAIResponsesModel, AnthropicModel, GoogleModel"):
        wrap(Agent("test").model)  # type: ignore[arg-type]


# Early execution


@pytest.mark.parametrize("how", ["run", "events"])
@pytest.mark.parametrize("early", [True, False], ids=["StartToolsEarly", "after the response"])
async def test_start_tools_early_runs_each_tool_once_while_the_model_streams(
    server: LoopbackServer, early: bool, how: str
) -> None:
    """The stream pauses after the first call's end: with ``StartToolsEarly`` its tool runs during
    the pause, before the server has written the rest; each tool runs once either way."""
    turn = fixture("anthropic", "text_then_two_calls")
    cut = turn.index(b"event: content_block_start", turn.index(b'"toolu_A"'))  # after the first call's stop
    paused = Reply([turn[:cut], turn[cut:]], pauses={1: 1.0})
    server.routes = Replies(PATHS["anthropic"], b"", FINAL["anthropic"])
    server.routes.queue[0] = paused
    seen: list[tuple[str, bool]] = []  # each tool, and whether the server had written the whole turn
    async with httpx2.AsyncClient(timeout=60) as client:
        model = model_for("anthropic", server, client)
        capabilities = [StartToolsEarly()] if early else []
        agent: Agent[None, str] = Agent(model, capabilities=capabilities)

        @agent.tool_plain
        def get_weather(city: str, units: str) -> str:
            seen.append(("get_weather", server.connections[0].finished.is_set()))
            return "sunny"

        @agent.tool_plain
        def get_stock(ticker: str) -> str:
            seen.append(("get_stock", server.connections[0].finished.is_set()))
            return "190"

        result = await agent.run("Go", event_stream_handler=drain if how == "events" else None)
    assert result.output == "done"
    assert sorted(name for name, _ in seen) == ["get_stock", "get_weather"]
    assert dict(seen)["get_weather"] is not early
    results = json.loads(server.requests[1].body)["messages"][-1]["content"]
    assert [(block["tool_use_id"], block["content"][0]["text"]) for block in results] == [
        ("toolu_A", "sunny"),
        ("toolu_B", "190"),
    ]


def test_start_tools_early_wraps_the_model_once_keeping_its_limits() -> None:
    model = OpenAIChatModel(OPENAI, provider=OpenAIProvider(api_key="k"))
    limits = Limits(max_calls=3)
    wrapped = StartToolsEarly().get_wrapper_model(wrap(model, limits=limits))
    assert isinstance(wrapped, StreamkitModel)
    assert wrapped.wrapped is model
    assert wrapped._limits is limits


# Compressed and mislabelled bodies: streamkit reads them too, so a cut call never runs

BODIES: dict[str, dict[str, Any]] = {
    "gzip": {"gzip": True},
    "deflate": {"deflate": True},
    "text/plain": {"content_type": "text/plain"},
    "octet-stream": {"content_type": "application/octet-stream"},
}


@pytest.mark.parametrize("body", list(BODIES))
async def test_openai_chat_cut_call_never_runs_whatever_the_body_looks_like(server: LoopbackServer, body: str) -> None:
    output, ran, bodies = await run(
        server, "openai_chat", fixture("openai_chat", "length_truncated"), body=BODIES[body]
    )
    assert (output, ran) == ("done", [])
    (result,) = [message for message in bodies[1]["messages"] if message["role"] == "tool"]
    assert json.loads(result["content"]) == {
        "error": {"ok": False, "errors": [{"kind": "truncated", "message": TRUNCATED_MESSAGE}]}
    }


@pytest.mark.parametrize("body", list(BODIES))
async def test_anthropic_cut_call_never_runs_whatever_the_body_looks_like(server: LoopbackServer, body: str) -> None:
    output, ran, bodies = await run(
        server, "anthropic", fixture("anthropic", "max_tokens_cut_after_a_whole_value"), how="events", body=BODIES[body]
    )
    assert (output, ran) == ("done", [])
    (result,) = bodies[1]["messages"][-1]["content"]
    assert (result["tool_use_id"], result["is_error"]) == ("toolu_C", True)
    text = "".join(block["text"] for block in result["content"])
    assert json.loads(text) == {"ok": False, "errors": [{"kind": "truncated", "message": TRUNCATED_MESSAGE}]}


@pytest.mark.parametrize("wrapped", [False, True])
async def test_a_compressed_call_cut_after_a_whole_value_runs_only_without_wrap(
    server: LoopbackServer, wrapped: bool
) -> None:
    """What the wrapper fixes: pydantic-ai alone runs the call that ``finish_reason: "length"`` cut."""
    case = fixture("openai_chat", "length_cut_after_a_whole_value")
    output, ran, _ = await run(server, "openai_chat", case, wrapped=wrapped, body=BODIES["gzip"])
    assert (output, ran) == ("done", [] if wrapped else [("get_weather", {"city": "Paris"})])


async def test_invalid_json_and_schema_failures_never_run_and_the_valid_call_does(server: LoopbackServer) -> None:
    output, ran, bodies = await run(
        server, "openai_chat", fixture("openai_chat", "invalid_calls_then_a_valid_one"), body=BODIES["gzip"]
    )
    assert (output, ran) == ("done", [("get_stock", {"ticker": "AAPL"})])
    results = {
        message["tool_call_id"]: message["content"] for message in bodies[1]["messages"] if message["role"] == "tool"
    }
    assert results["call_2"] == "190"
    assert json.loads(results["call_1"])["error"]["errors"][0]["kind"] == "invalid_json"
    assert "string" in results["call_3"].lower()  # pydantic's own schema error, as pydantic-ai sends it
    assert "delete_everything" in results["call_4"]  # pydantic-ai's unknown-tool retry
