"""``streamkit/<provider>/<model>`` under LiteLLM, and under the OpenAI Agents SDK's LiteLLM model.

Two agent loops run against the loopback server: an application's own loop on
``litellm.acompletion``, and the Agents SDK's ``Runner`` over its ``LitellmModel``. On parallel
calls sent at index 0, calls sent without an index, a call cut off by the output limit and an
Anthropic turn with thinking, they run exactly the tools asked for with their arguments, never
the cut call, and send the thinking block back with its signature byte for byte. Skipped where
LiteLLM is not installed (the ``framework-tests`` extra installs it); offline, since
tests/conftest.py has LiteLLM read its bundled cost map.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from streamkit import UsageError
from streamkit.adapters._base import TRUNCATED_MESSAGE

from .helpers import FIXTURES
from .server import LoopbackServer, Reply, Turns

litellm = pytest.importorskip("litellm")

from litellm.exceptions import MidStreamFallbackError  # noqa: E402

from streamkit.integrations import litellm as integration  # noqa: E402

from .models import ANTHROPIC, GEMINI, OPENAI  # noqa: E402

pytestmark = pytest.mark.anyio  # LiteLLM's own warnings are ignored in pyproject.toml
CHAT = "/v1/chat/completions"
MESSAGES = "/v1/messages"

integration.register()
litellm.suppress_debug_info = True  # its cost lookup prints a banner for every model it does not price


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # LiteLLM runs on asyncio


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": OPENAI}
    body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return b"data: " + json.dumps(body).encode() + b"\n\n"


#: The answer after the tools ran, per route.
FINAL = {
    CHAT: chat_chunk({"role": "assistant", "content": "done"}) + chat_chunk({}, "stop") + b"data: [DONE]\n\n",
    MESSAGES: fixture("anthropic/text_only_crlf.sse"),
}
ANSWER = {CHAT: "done", MESSAGES: "Hello ☃"}


def function(name: str, **properties: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {key: {"type": kind} for key, kind in properties.items()}}
    return {"type": "function", "function": {"name": name, "parameters": {**schema, "required": list(properties)}}}


TOOLS = [
    function("get_weather", city="string"),
    function("get_stock", ticker="string"),
    function("write_file", path="string", content="string"),
]

#: (model, route, fixture) of each case.
PARALLEL = {
    "all_index_zero": (f"streamkit/openai_chat/{OPENAI}", CHAT, "openai_chat/parallel_calls_all_index_zero.sse"),
    "index_missing": (f"streamkit/openai_chat/{OPENAI}", CHAT, "openai_chat/index_missing.sse"),
}
BOTH = [("get_stock", {"ticker": "AAPL"}), ("get_weather", {"city": "Paris"})]
CUT = {
    "id": "call_A",
    "name": "write_file",
    "arguments": '{"path": "a.txt", "content": "Once upon',
    "error": {"ok": False, "errors": [{"kind": "truncated", "message": TRUNCATED_MESSAGE}]},
    "position": 0,
}
#: The assistant turn of anthropic/thinking_then_call.sse, as Anthropic must get it back.
THINKING_TURN = {
    "role": "assistant",
    "content": [
        {
            "type": "thinking",
            "thinking": "The user wants the weather in Paris.",
            "signature": "EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w==",
        },
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"},
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
    ],
}


def base_url(server: LoopbackServer, route: str) -> str:
    return server.url("/v1" if route == CHAT else "")


def sent(server: LoopbackServer, number: int) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(server.requests[number].body)
    return body


# -- an application's own loop on litellm.acompletion --------------------------------------------


async def own_loop(server: LoopbackServer, model: str, route: str, ran: list[tuple[str, Any]]) -> list[Any]:
    """Stream, run each call, send the results, until the model answers; the chunks of each turn."""
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris, and AAPL?"}]
    turns = []
    for _ in range(3):
        response = await litellm.acompletion(
            model=model, messages=messages, tools=TOOLS, stream=True, api_base=base_url(server, route), api_key="k"
        )
        chunks = [chunk async for chunk in response]
        turns.append(chunks)
        message = litellm.stream_chunk_builder(chunks).choices[0].message
        turn = integration.assistant_turn(message)  # as the page's loop does
        messages += turn
        for call in message.tool_calls or ():
            ran.append((call.function.name, json.loads(call.function.arguments)))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "ok"})
        if len(turn) == 1 and not message.tool_calls:
            return turns
        server.routes[route] = Reply([FINAL[route]])
    raise AssertionError("the loop did not end")


def whole(index: int, ident: str, name: str, arguments: str) -> dict[str, Any]:
    """A call as one chunk gives it: all of its arguments at once."""
    return {"index": index, "id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


def streamed_calls(chunks: list[Any]) -> list[list[dict[str, Any]]]:
    """The ``tool_calls`` of each chunk that has some."""
    return [
        [call.model_dump(exclude_none=True) for call in chunk.choices[0].delta.tool_calls]
        for chunk in chunks
        if chunk.choices and chunk.choices[0].delta.tool_calls
    ]


@pytest.mark.parametrize("case", PARALLEL)
async def test_own_loop_gets_each_parallel_call_whole_in_one_chunk(server: LoopbackServer, case: str) -> None:
    model, route, name = PARALLEL[case]
    server.routes[route] = Reply([fixture(name)])
    ran: list[tuple[str, Any]] = []
    turns = await own_loop(server, model, route, ran)
    assert streamed_calls(turns[0]) == [
        [whole(0, "call_A", "get_weather", '{"city":"Paris"}')],
        [whole(1, "call_B", "get_stock", '{"ticker":"AAPL"}')],
    ]
    assert turns[0][-1].choices[0].finish_reason == "tool_calls"
    assert sorted(ran) == BOTH
    assert sent(server, 1)["messages"][2:] == [
        {"role": "tool", "tool_call_id": "call_A", "content": "ok"},
        {"role": "tool", "tool_call_id": "call_B", "content": "ok"},
    ]
    assert "".join(chunk.choices[0].delta.content or "" for chunk in turns[1] if chunk.choices) == "done"


def told(error: dict[str, Any], kind: str) -> bool:
    return error["ok"] is False and [entry["kind"] for entry in error["errors"]] == [kind]


async def test_own_loop_never_runs_a_cut_call_and_tells_the_model(server: LoopbackServer) -> None:
    server.routes[CHAT] = Reply([fixture("openai_chat/length_truncated.sse")])
    ran: list[tuple[str, Any]] = []
    first, second = await own_loop(server, f"streamkit/openai_chat/{OPENAI}", CHAT, ran)
    assert ran == []
    assert streamed_calls(first) == []
    assert first[-1].choices[0].finish_reason == "length"
    fields = [chunk.choices[0].delta.provider_specific_fields for chunk in first if chunk.choices]
    assert [field for field in fields if field] == [{integration.INVALID_CALLS: [CUT]}]
    assert fields[-2] == {integration.INVALID_CALLS: [CUT]}  # just before the finish
    assert sent(server, 1)["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_A", "type": "function", "function": {"name": "write_file", "arguments": CUT["arguments"]}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_A", "content": json.dumps(CUT["error"], separators=(",", ":"))},
    ]
    assert "".join(chunk.choices[0].delta.content or "" for chunk in second if chunk.choices) == "done"


#: Each scenario on Anthropic: the fixture, the tools that run, and what the next request tells the model.
SCENARIOS = {
    "cut": ("anthropic/max_tokens_cut_after_a_whole_value.sse", [], {"toolu_C": "truncated"}),
    "complete-then-cut": (
        "anthropic/max_tokens_truncated.sse",
        [("get_weather", {"city": "Paris"})],
        {"toolu_A": "ok", "toolu_B": "truncated"},
    ),
    "invalid-json-schema-unknown": (
        "anthropic/invalid_calls_between_blocks.sse",
        [("get_stock", {"ticker": "AAPL"})],
        {"toolu_01": "invalid_json", "toolu_02": "ok", "toolu_03": "schema", "toolu_04": "unknown_tool"},
    ),
}


@pytest.mark.parametrize("case", SCENARIOS)
async def test_own_loop_runs_the_valid_calls_and_tells_the_model_of_each_invalid_one(
    server: LoopbackServer, case: str
) -> None:
    name, runs, results = SCENARIOS[case]
    server.routes[MESSAGES] = Reply([fixture(name)])
    ran: list[tuple[str, Any]] = []
    turns = await own_loop(server, f"streamkit/anthropic/{ANTHROPIC}", MESSAGES, ran)
    assert ran == runs
    assert len(turns) == 2 and len(server.requests) == 2
    assistant, answer = sent(server, 1)["messages"][1:]
    assert [block["id"] for block in assistant["content"] if block["type"] == "tool_use"] == list(results)
    got = {block["tool_use_id"]: block["content"] for block in answer["content"]}
    assert sorted(got) == sorted(results)  # the errors first, then the results, as the loop appends them
    for ident, kind in results.items():
        assert got[ident] == "ok" if kind == "ok" else told(json.loads(got[ident]), kind)
    text = "".join(chunk.choices[0].delta.content or "" for chunk in turns[1] if chunk.choices)
    assert text == ANSWER[MESSAGES]


async def test_own_loop_sends_the_thinking_back_byte_for_byte(server: LoopbackServer) -> None:
    server.routes[MESSAGES] = Reply([fixture("anthropic/thinking_then_call.sse")])
    ran: list[tuple[str, Any]] = []
    turns = await own_loop(server, f"streamkit/anthropic/{ANTHROPIC}", MESSAGES, ran)
    blocks = [getattr(chunk.choices[0].delta, "thinking_blocks", None) for chunk in turns[0] if chunk.choices]
    assert [block for block in blocks if block] == [[THINKING_TURN["content"][0]], [THINKING_TURN["content"][1]]]
    assert ran == [("get_weather", {"city": "Paris"})]
    assert sent(server, 1)["messages"][1:] == [
        THINKING_TURN,
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "ok"}]},
    ]


async def test_unstreamed_the_message_holds_the_whole_calls(server: LoopbackServer) -> None:
    server.routes[CHAT] = Reply([fixture("openai_chat/parallel_calls_all_index_zero.sse")])
    response = await litellm.acompletion(
        model=f"streamkit/openai_chat/{OPENAI}", messages=[{"role": "user", "content": "?"}], api_base=server.url("/v1")
    )
    [choice] = response.choices
    assert choice.finish_reason == "tool_calls"
    assert [(call.id, call.function.name, call.function.arguments) for call in choice.message.tool_calls] == [
        ("call_A", "get_weather", '{"city":"Paris"}'),
        ("call_B", "get_stock", '{"ticker":"AAPL"}'),
    ]


async def test_unstreamed_a_cut_call_is_withheld_and_described(server: LoopbackServer) -> None:
    server.routes[CHAT] = Reply([fixture("openai_chat/length_truncated.sse")])
    response = await litellm.acompletion(
        model=f"streamkit/openai_chat/{OPENAI}", messages=[{"role": "user", "content": "?"}], api_base=server.url("/v1")
    )
    [choice] = response.choices
    assert (choice.finish_reason, choice.message.tool_calls) == ("length", None)
    assert choice.message.provider_specific_fields == {integration.INVALID_CALLS: [CUT]}


@pytest.mark.parametrize("sync", [False, True], ids=["acompletion", "completion"])
async def test_the_invalid_calls_are_where_the_page_says(server: LoopbackServer, sync: bool) -> None:
    """Streamed: on one chunk's ``choices[0].delta.provider_specific_fields``, just before the
    finish, and on the message ``stream_chunk_builder`` builds; unstreamed, on the message: the
    same list, read by ``invalid_calls`` from each."""
    given = {"model": f"streamkit/anthropic/{ANTHROPIC}", "api_base": server.url(""), "api_key": "k", "tools": TOOLS}
    messages = [{"role": "user", "content": "?"}]
    server.routes[MESSAGES] = Reply([fixture("anthropic/invalid_calls_between_blocks.sse")])
    if sync:
        chunks = list(litellm.completion(messages=messages, stream=True, **given))
        unstreamed = litellm.completion(messages=messages, **given)
    else:
        chunks = [chunk async for chunk in await litellm.acompletion(messages=messages, stream=True, **given)]
        unstreamed = await litellm.acompletion(messages=messages, **given)
    described = [
        i for i, chunk in enumerate(chunks) if chunk.choices and chunk.choices[0].delta.provider_specific_fields
    ]
    [at] = described
    assert at == len(chunks) - 2  # just before the finish
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    on_chunk = integration.invalid_calls(chunks[at].choices[0].delta)
    assert [(call["id"], call["error"]["errors"][0]["kind"]) for call in on_chunk] == [
        ("toolu_01", "invalid_json"),
        ("toolu_03", "schema"),
        ("toolu_04", "unknown_tool"),
    ]
    assert chunks[at].choices[0].delta.provider_specific_fields == {integration.INVALID_CALLS: on_chunk}
    built = litellm.stream_chunk_builder(chunks).choices[0].message
    assert built.provider_specific_fields == {integration.INVALID_CALLS: on_chunk}
    assert integration.invalid_calls(built) == on_chunk
    assert integration.invalid_calls(unstreamed.choices[0].message) == on_chunk


@pytest.mark.parametrize("streamed", [False, True], ids=["acompletion", "acompletion-stream"])
async def test_a_response_of_two_choices_is_refused_not_merged_into_one(server: LoopbackServer, streamed: bool) -> None:
    server.routes[CHAT] = Reply([fixture("openai_chat/n2_same_call_id_per_choice.sse")])
    given = {"model": f"streamkit/openai_chat/{OPENAI}", "api_base": server.url("/v1"), "api_key": "k"}
    refused = r"LiteLLM takes one answer per request, and the response holds choice 1: ask for one"
    wrapped = MidStreamFallbackError if streamed else litellm.APIConnectionError  # LiteLLM's own wrapping
    with pytest.raises(wrapped, match=refused):
        response = await litellm.acompletion(messages=[{"role": "user", "content": "?"}], stream=streamed, **given)
        if streamed:
            _ = [chunk async for chunk in response]
    assert len(server.requests) == 1
    assert server.connections[0].closed.wait(5)  # the response closed as it failed, not left to the collector


def test_the_sync_calls(server: LoopbackServer) -> None:
    server.routes[MESSAGES] = Reply([fixture("anthropic/thinking_then_call.sse")])
    given = {"model": f"streamkit/anthropic/{ANTHROPIC}", "api_base": server.url(""), "api_key": "k"}
    messages = [{"role": "user", "content": "?"}]
    chunks = list(litellm.completion(messages=messages, stream=True, **given))
    assert streamed_calls(chunks) == [[whole(0, "toolu_01A", "get_weather", '{"city":"Paris"}')]]
    message = litellm.completion(messages=messages, **given).choices[0].message
    assert message.content == "Let me check."
    assert message.thinking_blocks == THINKING_TURN["content"][:2]
    assert server.requests[0].headers["x-api-key"] == "k"


async def test_each_model_keeps_one_client_across_calls(
    server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx

    made: list[httpx.AsyncClient] = []

    class Counted(httpx.AsyncClient):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(httpx, "AsyncClient", Counted)
    server.routes[CHAT] = Reply([FINAL[CHAT]])
    server.routes[MESSAGES] = Reply([FINAL[MESSAGES]])
    handler = integration.StreamkitLLM()  # its own clients, apart from the registered handler's
    given = {"messages": [{"role": "user", "content": "?"}], "optional_params": {}, "api_key": "k"}
    chat = {**given, "model": f"openai_chat/{OPENAI}", "api_base": server.url("/v1")}
    for _ in range(3):
        response = await handler.acompletion(**chat, model_response=litellm.ModelResponse())
        assert response.choices[0].message.content == "done"
    assert (len(server.requests), len(made)) == (3, 1)
    messages = {**given, "model": f"anthropic/{ANTHROPIC}", "api_base": server.url("")}
    await handler.acompletion(**messages, model_response=litellm.ModelResponse())
    assert len(made) == 2  # another model, another client
    assert not any(client.is_closed for client in made)
    await handler.aclose()
    assert all(client.is_closed for client in made)


def test_without_api_key_and_api_base_the_providers_variables_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google")
    monkeypatch.setenv("MISTRAL_BASE_URL", "http://mistral.test/v1")
    messages = [{"role": "user", "content": "?"}]
    gemini = integration._Call({"model": f"gemini/{GEMINI}", "messages": messages})
    assert gemini.request.headers["x-goog-api-key"] == "from-google"
    mistral = integration._Call({"model": "mistral/mistral-large-latest", "messages": messages})
    assert mistral.request.url == "http://mistral.test/v1/chat/completions"


# -- the OpenAI Agents SDK's own loop over its LitellmModel --------------------------------------


def agent(server: LoopbackServer, model: str, route: str, ran: list[tuple[str, Any]], **settings: Any) -> Any:
    from agents import Agent, ModelSettings, function_tool
    from agents.extensions.models.litellm_model import LitellmModel

    def answered(result: str) -> Callable[..., str]:
        def record(name: str, arguments: dict[str, str]) -> str:
            ran.append((name, arguments))
            server.routes[route] = Reply([FINAL[route]])
            return result

        return record

    @function_tool
    def get_weather(city: str) -> str:
        return answered("sunny")("get_weather", {"city": city})

    @function_tool
    def get_stock(ticker: str) -> str:
        return answered("190")("get_stock", {"ticker": ticker})

    @function_tool
    def write_file(path: str, content: str) -> str:
        return answered("written")("write_file", {"path": path, "content": content})

    llm = LitellmModel(model, base_url=base_url(server, route), api_key="k")
    tools: list[Any] = [get_weather, get_stock, write_file]
    return Agent(name="assistant", tools=tools, model=llm, model_settings=ModelSettings(**settings))


async def run(made: Any, streamed: bool, **options: Any) -> Any:
    from agents import RunConfig, Runner

    config = RunConfig(tracing_disabled=True, **options)
    if not streamed:
        return (await Runner.run(made, "Weather in Paris, and AAPL?", run_config=config)).final_output
    result = Runner.run_streamed(made, "Weather in Paris, and AAPL?", run_config=config)
    async for _ in result.stream_events():
        pass
    return result.final_output


STREAMED = pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])


@STREAMED
@pytest.mark.parametrize("case", PARALLEL)
async def test_agents_run_each_parallel_call_once(server: LoopbackServer, case: str, streamed: bool) -> None:
    model, route, name = PARALLEL[case]
    server.routes[route] = Reply([fixture(name)])
    ran: list[tuple[str, Any]] = []
    assert await run(agent(server, model, route, ran), streamed) == "done"
    assert sorted(ran) == BOTH


def one_call(name: str, arguments: str) -> bytes:
    """An OpenAI Chat turn of one call, ``call_X``, with these arguments."""
    call = {"index": 0, "id": "call_X", "type": "function", "function": {"name": name, "arguments": arguments}}
    return chat_chunk({"role": "assistant", "tool_calls": [call]}) + chat_chunk({}, "tool_calls") + b"data: [DONE]\n\n"


#: Under the Agents SDK's Runner over LitellmModel("streamkit/..."): (model, route, first turn),
#: the tools that run, and what the next request tells the model of each call: ``"ran"`` for a
#: result, else the kind of streamkit's error it was sent.
AGENT_SCENARIOS = {
    "cut": (CHAT, fixture("openai_chat/length_truncated.sse"), [], {"call_A": "truncated"}),
    "cut-after-a-whole-value": (
        CHAT,
        fixture("openai_chat/length_cut_after_a_whole_value.sse"),
        [],
        {"call_C": "truncated"},
    ),
    "invalid-json": (CHAT, one_call("get_weather", '{"city": "Paris",}'), [], {"call_X": "invalid_json"}),
    "schema": (CHAT, one_call("get_weather", '{"city": 7}'), [], {"call_X": "schema"}),
    "complete-then-cut": (
        MESSAGES,
        fixture("anthropic/max_tokens_truncated.sse"),
        [("get_weather", {"city": "Paris"})],
        {"toolu_A": "ran", "toolu_B": "truncated"},
    ),
    "invalid-json-schema-unknown-beside-a-valid-call": (
        CHAT,
        fixture("openai_chat/invalid_calls_then_a_valid_one.sse"),
        [("get_stock", {"ticker": "AAPL"})],
        {"call_1": "invalid_json", "call_2": "ran", "call_3": "schema", "call_4": "unknown_tool"},
    ),
}
MODELS = {CHAT: f"streamkit/openai_chat/{OPENAI}", MESSAGES: f"streamkit/anthropic/{ANTHROPIC}"}


def results_told(body: dict[str, Any]) -> dict[str, str]:
    """What a request tells the model of each call: ``"ran"``, or the kinds of streamkit's error."""
    answers: dict[str, Any] = {}
    for message in body["messages"]:
        if message["role"] == "tool":
            answers[message["tool_call_id"]] = message["content"]
        elif message["role"] == "user" and isinstance(message["content"], list):
            answers |= {b["tool_use_id"]: b["content"] for b in message["content"] if b["type"] == "tool_result"}
    return {
        ident: "ran" if not content.startswith("{") else ",".join(e["kind"] for e in json.loads(content)["errors"])
        for ident, content in answers.items()
    }


@STREAMED
@pytest.mark.parametrize("case", AGENT_SCENARIOS)
async def test_agents_over_litellm_run_the_valid_calls_and_tell_the_model_of_the_others(
    server: LoopbackServer, case: str, streamed: bool
) -> None:
    """A call that cannot run never runs; openai-agents answers it, and the next request tells
    the model streamkit's error for it; the run goes on to the model's answer."""
    route, first, runs, results = AGENT_SCENARIOS[case]
    server.routes = Turns(route, Reply([first]), Reply([FINAL[route]]))
    ran: list[tuple[str, Any]] = []
    made = agent(server, MODELS[route], route, ran)
    assert await run(made, streamed, tool_not_found_behavior="return_error_to_model") == ANSWER[route]
    assert ran == runs
    assert len(server.requests) == 2
    assert results_told(sent(server, 1)) == results


@STREAMED
async def test_agents_over_litellm_stop_on_an_unknown_tool_with_their_own_error(
    server: LoopbackServer, streamed: bool
) -> None:
    """openai-agents' default for a tool it does not know: ``ModelBehaviorError``, naming it."""
    from agents.exceptions import ModelBehaviorError

    server.routes[CHAT] = Reply([one_call("delete_everything", "{}")])
    ran: list[tuple[str, Any]] = []
    with pytest.raises(ModelBehaviorError, match=r"^Tool delete_everything not found in agent assistant$"):
        await run(agent(server, MODELS[CHAT], CHAT, ran), streamed)
    assert (ran, len(server.requests)) == ([], 1)


@STREAMED
async def test_agents_over_litellm_run_a_call_leaving_out_a_defaulted_parameter(
    server: LoopbackServer, streamed: bool
) -> None:
    """The Agents SDK's strict schema lists ``units`` as required; the tool's default applies."""
    from agents import Agent, function_tool
    from agents.extensions.models.litellm_model import LitellmModel

    server.routes = Turns(CHAT, Reply([one_call("get_weather", '{"city": "Paris"}')]), Reply([FINAL[CHAT]]))
    ran: list[tuple[str, Any]] = []

    @function_tool
    def get_weather(city: str, units: str = "c") -> str:
        ran.append(("get_weather", {"city": city, "units": units}))
        return "sunny"

    llm = LitellmModel(MODELS[CHAT], base_url=base_url(server, CHAT), api_key="k")
    assert await run(Agent(name="assistant", tools=[get_weather], model=llm), streamed) == "done"
    assert ran == [("get_weather", {"city": "Paris", "units": "c"})]
    assert results_told(sent(server, 1)) == {"call_X": "ran"}


@STREAMED
async def test_agents_send_the_thinking_back_byte_for_byte(server: LoopbackServer, streamed: bool) -> None:
    from openai.types.shared import Reasoning

    server.routes[MESSAGES] = Reply([fixture("anthropic/thinking_then_call.sse")])
    ran: list[tuple[str, Any]] = []
    # The Agents SDK sends thinking blocks back only with a reasoning effort, which LiteLLM lets
    # through to a custom provider only when allowed.
    settings = {"reasoning": Reasoning(effort="low"), "extra_args": {"allowed_openai_params": ["reasoning_effort"]}}
    made = agent(server, f"streamkit/anthropic/{ANTHROPIC}", MESSAGES, ran, **settings)
    assert await run(made, streamed) == "Hello ☃"
    assert ran == [("get_weather", {"city": "Paris"})]
    first, second = sent(server, 0), sent(server, 1)
    assert first["thinking"] == second["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert second["messages"][1:] == [
        THINKING_TURN,
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": "sunny"}]},
    ]


# -- what is read from LiteLLM's arguments --------------------------------------------------------


def read(messages: list[Any], model: str = f"anthropic/{ANTHROPIC}", **optional: Any) -> Any:
    given = {"model": model, "messages": messages, "optional_params": optional, "api_base": "http://h", "api_key": "k"}
    return integration._Call(given)


def test_a_conversation_in_the_providers_shape() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather "}, {"type": "text", "text": "in Paris?"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    call = read(messages, f"gemini/{GEMINI}", max_tokens=50, extra_body={"labels": {"a": "b"}})
    assert call.request.url == "http://h/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse"
    assert call.request.headers == {"x-goog-api-key": "k"}
    assert call.request.body == {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}}],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}, "id": "c1"}}],
            },
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {"maxOutputTokens": 50},
        "labels": {"a": "b"},
    }


@pytest.mark.parametrize(
    ("messages", "model", "optional", "message"),
    [
        (
            [],
            f"openai/{OPENAI}",
            {},
            "a streamkit model is streamkit/<provider>/<model>, the provider one of anthropic, ",
        ),
        ([], "anthropic", {}, "got streamkit/anthropic$"),
        ([{"role": "critic", "content": "x"}], "anthropic/m", {}, r"messages\[0\] has the role 'critic'"),
        (
            [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}]}],
            "anthropic/m",
            {},
            r"messages\[0\]\.content\[0\] is a 'input_audio' part; streamkit sends text and images",
        ),
        ([{"role": "tool", "tool_call_id": "x", "content": "1"}], "anthropic/m", {}, "answers the call 'x', which no"),
        (
            [],
            "gemini/m",
            {"temperature": 0, "seed": 1},
            "streamkit/gemini does not translate seed; give the provider's own",
        ),
        ([], "mistral/m", {"reasoning_effort": "low"}, r"does not translate reasoning_effort='low'"),
        ([], "anthropic/m", {"tools": [{"type": "web_search"}]}, r"tools\[0\] is not a function tool"),
    ],
)
def test_what_cannot_be_sent_is_named(messages: list[Any], model: str, optional: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        read(messages, model, **optional)


def test_registering_again_changes_nothing() -> None:
    before = list(litellm.custom_provider_map)
    assert integration.register() is integration.register()
    assert litellm.custom_provider_map == before


def test_litellm_reads_its_bundled_cost_map() -> None:
    """Offline: LiteLLM never fetched its model cost map (tests/conftest.py tells it not to)."""
    from litellm.litellm_core_utils.get_model_cost_map import get_model_cost_map_source_info

    info = get_model_cost_map_source_info()
    assert (info["source"], info["is_env_forced"]) == ("local", True)


def test_importing_streamkit_does_not_import_litellm() -> None:
    code = "import sys, streamkit, streamkit.integrations; print('litellm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "False\n"
