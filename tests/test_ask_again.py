"""A bad call told to the model by the transports themselves (the policy's ``tell``), under the
official SDKs, against the loopback server.

The server answers the first request with a turn holding bad calls and the second with the
model's corrected answer; the SDK reads one response: the valid calls of both, the text of
both, the second's stop reason. The second request is the first with the turn and each call's
result appended: a bad call's error in streamkit's words, a valid call's "it stands".
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from streamkit import InvalidToolCall
from streamkit._reemit import PENDING, BadCalls
from streamkit.integrations.httpx2 import AsyncTransport, Transport, invalid_calls

from . import answers
from .helpers import FIXTURES
from .models import ANTHROPIC, OPENAI
from .server import LoopbackServer, Reply, Turns, split_awkwardly

openai = pytest.importorskip("openai", minversion="3")
anthropic = pytest.importorskip("anthropic", minversion="2")
httpx2 = pytest.importorskip("httpx2")

MODES = ["sync", "async"]
CHAT_PATH, MESSAGES_PATH = "/v1/chat/completions", "/v1/messages"
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
STOCK = {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]}
CHAT_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
    {"type": "function", "function": {"name": "get_stock", "parameters": STOCK}},
]
MESSAGES_TOOLS = [{"name": "get_weather", "input_schema": WEATHER}, {"name": "get_stock", "input_schema": STOCK}]


def fixture(path: str) -> Reply:
    return Reply(split_awkwardly((FIXTURES / path).read_bytes()))


#: The model's corrected answer: a word, the call again whole (over Chat, over Messages).
CHAT_FIXED = answers.chat(" Fixed.", [("call_9", "get_weather", {"city": "Paris"})])


def messages_fixed(stop: str = "tool_use") -> Reply:
    return answers.messages(" Fixed.", [("toolu_9", "get_weather", {"city": "Paris"})], stop=stop)


def chat(server: LoopbackServer, mode: str, *replies: Reply, invalid: Any = None) -> tuple[Any, Any]:
    """One streamed Chat request through the transport: the SDK's final completion (or its
    error) and the response the SDK read."""
    server.routes = Turns(CHAT_PATH, *replies)
    seen: list[Any] = []
    kwargs = {} if invalid is None else {"invalid": invalid}
    request = {"model": OPENAI, "messages": [{"role": "user", "content": "Weather and AAPL?"}], "tools": CHAT_TOOLS}
    if mode == "sync":
        http = httpx2.Client(transport=Transport(**kwargs), event_hooks={"response": [seen.append]})
        with openai.OpenAI(base_url=server.url("/v1"), api_key="sk-test", max_retries=0, http_client=http) as client:
            try:
                with client.chat.completions.stream(**request) as stream:
                    return stream.get_final_completion(), seen[0]
            except openai.APIError as exc:
                return exc, seen[0]

    async def run() -> tuple[Any, Any]:
        async def hook(response: Any) -> None:
            seen.append(response)

        http = httpx2.AsyncClient(transport=AsyncTransport(**kwargs), event_hooks={"response": [hook]})
        client = openai.AsyncOpenAI(base_url=server.url("/v1"), api_key="sk-test", max_retries=0, http_client=http)
        async with client:
            try:
                async with client.chat.completions.stream(**request) as stream:
                    return await stream.get_final_completion(), seen[0]
            except openai.APIError as exc:
                return exc, seen[0]

    return asyncio.run(run())


def messages(server: LoopbackServer, mode: str, *replies: Reply) -> tuple[Any, Any]:
    server.routes = Turns(MESSAGES_PATH, *replies)
    seen: list[Any] = []
    request = {
        "model": ANTHROPIC,
        "max_tokens": 1024,
        "tools": MESSAGES_TOOLS,
        "messages": [{"role": "user", "content": "Weather and AAPL?"}],
    }
    if mode == "sync":
        http = httpx2.Client(transport=Transport(), event_hooks={"response": [seen.append]})
        sdk = anthropic.Anthropic(base_url=server.url(""), api_key="sk-test", max_retries=0, http_client=http)
        with sdk as client, client.messages.stream(**request) as stream:
            return stream.get_final_message(), seen[0]

    async def run() -> tuple[Any, Any]:
        async def hook(response: Any) -> None:
            seen.append(response)

        http = httpx2.AsyncClient(transport=AsyncTransport(), event_hooks={"response": [hook]})
        client = anthropic.AsyncAnthropic(base_url=server.url(""), api_key="sk-test", max_retries=0, http_client=http)
        async with client, client.messages.stream(**request) as stream:
            return await stream.get_final_message(), seen[0]

    return asyncio.run(run())


def told(request_body: bytes) -> list[Any]:
    """What the second request appended to the first's one user message."""
    messages: list[Any] = orjson.loads(request_body)["messages"]
    return messages[1:]


@pytest.mark.parametrize("mode", MODES)
def test_openai_chat_gets_one_turn_of_valid_calls_and_the_model_is_told_of_each_bad_one(
    server: LoopbackServer, mode: str
) -> None:
    final, response = chat(server, mode, fixture("openai_chat/invalid_calls_then_a_valid_one.sse"), CHAT_FIXED)
    choice = final.choices[0]
    calls = [(call.index, call.id, call.function.name, call.function.arguments) for call in choice.message.tool_calls]
    assert calls == [(0, "call_2", "get_stock", '{"ticker":"AAPL"}'), (1, "call_9", "get_weather", '{"city":"Paris"}')]
    assert (choice.finish_reason, choice.message.content) == ("tool_calls", " Fixed.")
    assert [call.id for call in invalid_calls(response)] == ["call_1", "call_3", "call_4"]
    first, again = server.requests
    assert orjson.loads(again.body)["messages"][0] == orjson.loads(first.body)["messages"][0]
    assistant, *results = told(again.body)
    assert [entry["id"] for entry in assistant["tool_calls"]] == ["call_1", "call_2", "call_3", "call_4"]
    assert [(entry["tool_call_id"], entry["content"]) for entry in results[1:2]] == [("call_2", PENDING)]
    kinds = [orjson.loads(results[n]["content"])["errors"][0]["kind"] for n in (0, 2, 3)]
    assert kinds == ["invalid_json", "schema", "unknown_tool"]
    assert len(server.requests) == 2


@pytest.mark.parametrize("mode", MODES)
def test_anthropic_gets_one_message_of_valid_calls_after_a_cut_one(server: LoopbackServer, mode: str) -> None:
    cut = fixture("anthropic/max_tokens_cut_after_a_whole_value.sse")
    final, response = messages(server, mode, cut, messages_fixed())
    blocks = [(block.type, getattr(block, "text", None) or getattr(block, "input", None)) for block in final.content]
    assert final.stop_reason == "tool_use"
    assert blocks[-2:] == [("text", " Fixed."), ("tool_use", {"city": "Paris"})]
    assert [block.type for block in final.content].count("tool_use") == 1 + sum(
        1 for block in final.content[:-2] if block.type == "tool_use"
    )
    [bad] = invalid_calls(response)
    assert bad.truncated
    assistant, results = told(server.requests[1].body)
    assert assistant["role"] == "assistant" and results["role"] == "user"
    [error] = [entry for entry in results["content"] if entry.get("is_error")]
    assert error["tool_use_id"] == bad.id
    assert orjson.loads(error["content"])["errors"][0]["kind"] == "truncated"


@pytest.mark.parametrize("mode", MODES)
def test_a_model_that_keeps_sending_bad_calls_ends_in_one_typed_error_after_the_rounds(
    server: LoopbackServer, mode: str
) -> None:
    bad = fixture("openai_chat/invalid_calls_then_a_valid_one.sse")
    error, response = chat(server, mode, bad, invalid=BadCalls("tell", rounds=1))
    assert isinstance(error, openai.APIConnectionError)
    assert "the model was told of its invalid calls 1 times and sent invalid ones again" in str(error.__cause__)
    assert len(server.requests) == 2  # the first, and one round: never more
    assert [call.id for call in invalid_calls(response)] == ["call_1", "call_3", "call_4"] * 2


@pytest.mark.parametrize("mode", MODES)
def test_raise_fails_the_body_at_the_first_bad_call_without_asking_again(server: LoopbackServer, mode: str) -> None:
    error, _ = chat(server, mode, fixture("openai_chat/invalid_calls_then_a_valid_one.sse"), invalid="raise")
    assert isinstance(error, openai.APIConnectionError)
    assert "get_weather (call_1) was not run: the arguments are not valid JSON" in str(error.__cause__)
    assert len(server.requests) == 1


def test_a_refused_ask_again_fails_the_body_with_the_apis_own_error(server: LoopbackServer) -> None:
    refusal = Reply(
        [b'{"error": {"message": "overloaded", "type": "server_error"}}'],
        status=529,
        reason="Overloaded",
        content_type="application/json",
    )
    error, _ = chat(server, "sync", fixture("openai_chat/invalid_calls_then_a_valid_one.sse"), refusal)
    assert isinstance(error, openai.APIConnectionError)
    assert "HTTP 529 from POST" in str(error.__cause__) and "server_error: overloaded" in str(error.__cause__)
    assert len(server.requests) == 2


def test_a_turn_without_a_bad_call_is_never_asked_again(server: LoopbackServer) -> None:
    final, response = chat(server, "sync", fixture("openai_chat/text_then_two_calls.sse"), CHAT_FIXED)
    assert len(final.choices[0].message.tool_calls) == 2 and invalid_calls(response) == []
    assert len(server.requests) == 1


def test_a_bad_call_of_the_second_response_is_told_in_a_third(server: LoopbackServer) -> None:
    first = fixture("openai_chat/invalid_calls_then_a_valid_one.sse")
    final, response = chat(server, "sync", first, first, CHAT_FIXED)
    ids = [call.id for call in final.choices[0].message.tool_calls]
    assert ids == ["call_2", "call_2", "call_9"]  # the valid call of each answer, as the model sent it
    assert len(server.requests) == 3
    assert isinstance(invalid_calls(response)[0], InvalidToolCall)


@pytest.mark.parametrize("mode", MODES)
def test_a_body_that_ends_inside_a_call_is_told_as_a_cut_and_goes_on(server: LoopbackServer, mode: str) -> None:
    """The upstream closes the body cleanly in the middle of the second call, with no finish
    reason: both open calls are told to the model as cut, and its answer ends the turn."""
    events = (FIXTURES / "openai_chat/length_after_a_followed_call.sse").read_bytes().split(b"\n\n")
    ended = Reply([b"\n\n".join(events[:5]) + b"\n\n"])
    final, response = chat(server, mode, ended, CHAT_FIXED)
    calls = [(call.id, call.function.arguments) for call in final.choices[0].message.tool_calls]
    assert calls == [("call_9", '{"city":"Paris"}')]
    assert [(call.id, call.truncated) for call in invalid_calls(response)] == [
        ("call_St0ck1", True),
        ("call_St0ck2", True),
    ]
    _, results_one, results_two = told(server.requests[1].body)
    assert [orjson.loads(entry["content"])["errors"][0]["kind"] for entry in (results_one, results_two)] == [
        "truncated",
        "truncated",
    ]
    assert len(server.requests) == 2
