"""The requests the framework integrations send: one conversation, each provider's wire shape.

The bodies are compared whole. The last test sends a request to the loopback server, decodes
the recorded Anthropic thinking turn it answers, and checks that the next request carries the
thinking block and its signature byte for byte.
"""

from __future__ import annotations

import json
from typing import Any, get_args

import httpx
import pytest

import streamkit
from streamkit import CallRef, InvalidToolCall, TextDelta, Thinking, ToolCall, Turn, UsageError
from streamkit._types import Requested
from streamkit.integrations._chat import PROVIDERS, Results, Tool, User, build
from streamkit.providers import REQUESTS
from streamkit.providers._request import settings

from .helpers import FIXTURES
from .models import ANTHROPIC, GEMINI, OPENAI
from .server import LoopbackServer, Reply
from .translating import PROMPT, chat_tools, chat_turn, messages_tools, messages_turn, ollama_turn, responses_tools

WEATHER = Tool("get_weather", "The weather in a city.", {"type": "object", "properties": {"city": {"type": "string"}}})
CALL = ToolCall(0, "call_1", "get_weather", {"city": "Paris"})
#: ``WEATHER`` as the tests declare it in each format.
DECLARED = (WEATHER.name, WEATHER.description, WEATHER.parameters)


def conversation(provider: str) -> list[Any]:
    turn = Turn(provider, (TextDelta("Checking."), CALL))
    return [User("Weather in Paris?"), turn, Results(((CALL, {"temp": 21}),)), User("And now?")]


def test_the_providers() -> None:
    assert PROVIDERS == ("anthropic", "gemini", "mistral", "ollama", "openai_chat", "openai_responses")
    assert PROVIDERS == tuple(sorted(REQUESTS)) == get_args(Requested)


SAMPLING = {"temperature": 0.5, "top_p": 0.9, "stop": ["END"]}


@pytest.mark.parametrize(
    ("provider", "fields", "left"),
    [
        ("openai_chat", SAMPLING, []),
        ("mistral", SAMPLING, []),
        ("openai_responses", {"temperature": 0.5, "top_p": 0.9}, ["stop"]),
        ("anthropic", {"temperature": 0.5, "top_p": 0.9, "stop_sequences": ["END"]}, []),
        ("gemini", {"generationConfig": {"temperature": 0.5, "topP": 0.9, "stopSequences": ["END"]}}, []),
        ("ollama", {"options": {"temperature": 0.5, "top_p": 0.9, "stop": ["END"]}}, []),
    ],
)
def test_each_provider_writes_the_settings_at_its_own_places(
    provider: str, fields: dict[str, Any], left: list[str]
) -> None:
    assert settings(REQUESTS[provider], SAMPLING) == (fields, left)


def test_a_setting_under_an_object_keeps_what_the_body_has_there() -> None:
    fields, _ = settings(REQUESTS["gemini"], {"temperature": 0})
    request = build("gemini", GEMINI, [User("Hi")], max_tokens=100, extra=fields, api_key="k")
    assert request.body["generationConfig"] == {"maxOutputTokens": 100, "temperature": 0}


@pytest.mark.parametrize(
    ("provider", "level", "fields"),
    [
        ("openai_responses", "low", {"reasoning": {"effort": "low"}}),
        ("anthropic", "medium", {"thinking": {"type": "enabled", "budget_tokens": 2048}}),
        ("anthropic", "none", {}),
        ("anthropic", "extreme", None),
        ("gemini", "low", None),
        ("mistral", "low", None),
        ("ollama", "high", {"think": "high"}),
        ("ollama", "none", {"think": False}),
        ("ollama", "minimal", None),
    ],
)
def test_each_provider_writes_a_reasoning_effort_its_own_way(provider: str, level: str, fields: Any) -> None:
    assert REQUESTS[provider].effort(level, {"low": 1024, "medium": 2048}) == fields


def built(provider: str, model: str, **options: Any) -> Any:
    """The conversation's request to ``provider``, with a system prompt and the tool."""
    return build(provider, model, conversation(provider), system="Be brief.", tools=[WEATHER], **options)


def test_openai_chat() -> None:
    request = built("openai_chat", OPENAI, api_key="sk-1", max_tokens=100)
    assert request.url == "https://api.openai.com/v1/chat/completions"
    assert request.headers == {"Authorization": "Bearer sk-1"}
    assert request.body == {
        "model": OPENAI,
        "messages": [*PROMPT, *chat_turn("call_1", '{"temp":21}', "And now?")],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": chat_tools(DECLARED),
        "max_completion_tokens": 100,
    }


def test_openai_responses() -> None:
    request = built("openai_responses", OPENAI, base_url="http://127.0.0.1:9/v1/", max_tokens=100)
    assert request.url == "http://127.0.0.1:9/v1/responses"
    assert request.headers == {}
    assert request.body == {
        "model": OPENAI,
        "input": [
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "message", "role": "assistant", "content": "Checking."},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": '{"temp":21}'},
            {"role": "user", "content": "And now?"},
        ],
        "stream": True,
        "instructions": "Be brief.",
        "tools": responses_tools(DECLARED),
        "max_output_tokens": 100,
    }


def test_anthropic_joins_the_results_and_the_next_user_text_into_one_message() -> None:
    extra = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    request = built("anthropic", ANTHROPIC, api_key="sk-ant", extra=extra)
    assert request.url == "https://api.anthropic.com/v1/messages"
    assert request.headers == {"x-api-key": "sk-ant", "anthropic-version": "2023-06-01"}
    assert request.body == {
        "model": ANTHROPIC,
        "max_tokens": 4096,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
            *messages_turn("call_1", '{"temp":21}', "And now?"),
        ],
        "stream": True,
        "system": "Be brief.",
        "tools": messages_tools(DECLARED),
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }


def test_gemini() -> None:
    request = built("gemini", GEMINI, api_key="g-key", max_tokens=100)
    assert request.url == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse"
    )
    assert request.headers == {"x-goog-api-key": "g-key"}
    assert request.body == {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Checking."},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "get_weather", "response": {"temp": 21}, "id": "call_1"}},
                    {"text": "And now?"},
                ],
            },
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "get_weather",
                        "description": "The weather in a city.",
                        "parametersJsonSchema": WEATHER.parameters,
                    }
                ]
            }
        ],
        "generationConfig": {"maxOutputTokens": 100},
    }


def test_mistral_uses_its_own_ids_and_max_tokens() -> None:
    request = build("mistral", "mistral-large", conversation("mistral"), max_tokens=50)
    assert request.url == "https://api.mistral.ai/v1/chat/completions"
    messages = request.body["messages"]
    mistral_id = messages[1]["tool_calls"][0]["id"]
    assert len(mistral_id) == 9 and mistral_id.isalnum()
    assert messages[2] == {"role": "tool", "name": "get_weather", "tool_call_id": mistral_id, "content": '{"temp":21}'}
    assert (request.body["max_tokens"], "stream_options" in request.body) == (50, False)


def test_ollama_takes_arguments_as_objects_and_results_by_tool_name() -> None:
    request = built("ollama", "qwen3", max_tokens=50, environ={})
    assert (request.url, request.headers) == ("http://localhost:11434/api/chat", {})  # a local server: no key
    assert request.body == {
        "model": "qwen3",
        "messages": [*PROMPT, *ollama_turn("call_1", '{"temp":21}', "And now?")],
        "stream": True,
        "tools": chat_tools(DECLARED),
        "options": {"num_predict": 50},
    }


@pytest.mark.parametrize(
    ("environ", "url", "headers"),
    [
        ({"OLLAMA_HOST": "0.0.0.0"}, "http://0.0.0.0:11434/api/chat", {}),  # the server's own address, bare
        ({"OLLAMA_HOST": "gpu-box:8080"}, "http://gpu-box:8080/api/chat", {}),
        ({"OLLAMA_HOST": "[::1]"}, "http://[::1]:11434/api/chat", {}),
        (
            {"OLLAMA_HOST": "https://ollama.com", "OLLAMA_API_KEY": "k"},
            "https://ollama.com/api/chat",
            {"Authorization": "Bearer k"},  # as ollama.com's API takes it
        ),
    ],
)
def test_ollamas_host_and_key_are_read_as_its_sdk_reads_them(
    environ: dict[str, str], url: str, headers: dict[str, str]
) -> None:
    request = build("ollama", "qwen3", [User("hi")], environ=environ)
    assert (request.url, request.headers) == (url, headers)


def test_an_invalid_call_goes_back_with_streamkits_message() -> None:
    cut = InvalidToolCall(0, "toolu_9", "get_weather", '{"city": "Par', (streamkit.ArgumentIssue("truncated", "cut"),))
    turn = Turn("anthropic", (cut,))
    request = build("anthropic", "m", [User("hi"), turn, Results((cut,))])
    assert request.headers == {"anthropic-version": "2023-06-01"}  # no key given: the version still goes
    result = request.body["messages"][2]["content"][0]
    assert (result["tool_use_id"], result["is_error"]) == ("toolu_9", True)
    assert json.loads(result["content"]) == {
        "ok": False,
        "errors": [
            {"kind": "truncated", "message": "your arguments were cut off by the output limit; send less per call"}
        ],
    }


def test_a_result_by_reference() -> None:
    request = build("openai_chat", "m", [Results(((CallRef("call_1", "get_weather"), "sunny"),))])
    assert request.body["messages"] == [{"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]


def test_an_unknown_provider_or_entry_is_a_usage_error() -> None:
    with pytest.raises(
        UsageError, match=r"no request can be built for provider 'bedrock'; the providers are: anthropic, "
    ):
        build("bedrock", "m", [])
    with pytest.raises(UsageError, match="a conversation entry is a User, a Turn or Results, not str"):
        build("openai_chat", "m", ["hi"])  # type: ignore[list-item]


@pytest.mark.anyio
async def test_a_thinking_turn_goes_back_with_its_signature(server: LoopbackServer) -> None:
    server.routes["/v1/messages"] = Reply([(FIXTURES / "anthropic" / "thinking_then_call.sse").read_bytes()])
    first = build(
        "anthropic",
        ANTHROPIC,
        [User("Weather in Paris?")],
        tools=[WEATHER],
        base_url=server.url(""),
        api_key="sk-ant",
    )
    async with (
        httpx.AsyncClient() as client,
        streamkit.astream(client, "anthropic", first.url, json=first.body, headers=first.headers) as events,
    ):
        turn = Turn.from_events([event async for event in events], "anthropic")
    thinking = [item for item in turn.items if isinstance(item, Thinking)]
    calls = [item for item in turn.items if isinstance(item, ToolCall)]
    assert thinking and thinking[0].signature and calls
    following = build("anthropic", ANTHROPIC, [User("Weather in Paris?"), turn, Results(((calls[0], "sunny"),))])
    sent = json.loads(server.requests[0].body)
    assert sent == first.body and server.requests[0].headers["x-api-key"] == "sk-ant"
    assistant = following.body["messages"][1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": thinking[0].text, "signature": thinking[0].signature}
