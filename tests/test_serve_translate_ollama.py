"""``streamkit serve`` between formats: OpenAI Chat, OpenAI Responses and Anthropic Messages
clients on an upstream speaking Ollama's native ``/api/chat``.

The official openai and anthropic SDKs talk to the proxy; the loopback upstream answers in
Ollama's newline-delimited JSON and records what it was sent. Each test asserts the request the
upstream got, field by field, and what the SDK made of the answer; a bad call is answered
upstream in Ollama's own terms (the turn, then a ``tool`` message naming the tool).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from streamkit.providers._request import RequestError
from streamkit.serve._translate import translate

pytest.importorskip("uvicorn")  # the proxy

from . import answers
from .agent_turns import PLAIN
from .server import LoopbackServer, Reply, Turns, bodies
from .serving import (
    PROXY_KEY,
    UPSTREAM_KEY,
    Proxy,
    assert_chat_answered,
    assert_chat_text,
    assert_messages_text,
    claude,
    gpt,
    streamed_chat,
    streamed_message,
    translating_proxy,
)
from .test_serve_clients import BASH_RAN, claude_code, runs_claude_code
from .translating import (
    PROMPT,
    STOCK,
    anthropic_error,
    blocks,
    calls,
    chat_history,
    chat_tools,
    messages_tools,
    messages_turn,
    ollama_turn,
    openai_error,
    recorded,
)

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

CHAT = "/api/chat"
NDJSON = "application/x-ndjson"
#: get_weather's parameters: a city, and the unit Ollama's recorded answer gives.
WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
    "required": ["city"],
}
TOOLS = (("get_weather", "The weather.", WEATHER), ("get_stock", "A price.", STOCK))
CHAT_TOOLS = chat_tools(*TOOLS)
MESSAGES_TOOLS = messages_tools(*TOOLS)
#: The tools as the upstream gets them: Ollama takes Chat's function tools.
OLLAMA_TOOLS = CHAT_TOOLS
#: What the upstream is sent of ``PROMPT`` with the tools, whichever client asked.
WRITTEN = {"model": "qwen3", "messages": PROMPT, "stream": True, "tools": OLLAMA_TOOLS}


def lines(*objects: dict[str, Any]) -> Reply:
    """An Ollama stream: one JSON object a line."""
    return Reply([orjson.dumps(line) + b"\n" for line in objects], content_type=NDJSON)


HEAD = {"model": "qwen3", "created_at": "2026-01-01T00:00:00Z"}
TEXT = lines(
    {**HEAD, "message": {"role": "assistant", "content": "Sunny "}, "done": False},
    {**HEAD, "message": {"role": "assistant", "content": "in Paris."}, "done": False},
    {
        **HEAD,
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 11,
        "eval_count": 7,
    },
)
TWO_CALLS = recorded("ollama/text_then_two_calls.ndjson", content_type=NDJSON)


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    """A Chat, a Messages and a Responses route, all sent to the one Ollama upstream."""
    formats = ("openai_chat", "anthropic", "openai_responses")
    with translating_proxy(upstream, "ollama", *formats, root="") as running:  # Ollama's paths have no /v1
        yield running


def sent_to(upstream: LoopbackServer, since: int) -> list[dict[str, Any]]:
    """The bodies the upstream got since ``since``, all streamed requests to /api/chat."""
    requests = upstream.requests[since:]
    assert all(request.target == CHAT for request in requests)
    # the route's key, as ollama.com's API takes it (a local server reads no header)
    assert all(request.headers.get("authorization") == f"Bearer {UPSTREAM_KEY}" for request in requests)
    return bodies(upstream, since)


#: The sampling settings a Chat request gives, which Ollama takes in its options by the same names.
SAMPLING = {
    "temperature": 0.2,
    "top_p": 0.9,
    "seed": 7,
    "stop": ["END"],
    "frequency_penalty": 0.5,
    "presence_penalty": 0.25,
}


def test_a_chat_clients_text_answer_and_the_request_written_as_ollamas(served: Proxy, upstream: LoopbackServer) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    request = {
        "model": "qwen3",
        "messages": PROMPT,
        "tools": CHAT_TOOLS,
        "max_completion_tokens": 512,
        **SAMPLING,
        "reasoning_effort": "low",
        "stream_options": {"include_usage": True},
    }
    assert_chat_text(served, request)
    [body] = sent_to(upstream, since)
    assert body == {
        **WRITTEN,
        "options": {"num_predict": 512, **SAMPLING},
        "think": "low",
    }


def test_a_messages_clients_text_answer_and_the_request_written_as_ollamas(
    served: Proxy, upstream: LoopbackServer
) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    request = {
        "model": "qwen3",
        "max_tokens": 256,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": MESSAGES_TOOLS,
        "stop_sequences": ["END"],
        "extra_body": {"top_k": 40},  # anthropic 2.x takes it only so
    }
    assert_messages_text(served, request)
    [body] = sent_to(upstream, since)
    assert body == {**WRITTEN, "options": {"num_predict": 256, "stop": ["END"], "top_k": 40}}


def test_two_calls_in_one_line_reach_each_client_as_two_calls(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(CHAT, TWO_CALLS)
    request = {"model": "m", "messages": [{"role": "user", "content": "Both?"}], "tools": CHAT_TOOLS}
    [choice] = streamed_chat(served, **request).choices
    assert choice.message.content == "Checking both."
    assert calls(choice.message) == [
        ("call_k3j9x0qa", "get_weather", {"city": "Paris", "unit": "celsius"}),
        ("call_p2m7b1zz", "get_stock", {"ticker": "AAPL"}),
    ]
    assert choice.finish_reason == "tool_calls"  # Ollama's done_reason is stop even after calls
    asked = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "Both?"}]}
    message = streamed_message(served, **asked, tools=MESSAGES_TOOLS)
    assert blocks(message) == [
        ("text", "Checking both."),
        ("tool_use", "call_k3j9x0qa", "get_weather", {"city": "Paris", "unit": "celsius"}),
        ("tool_use", "call_p2m7b1zz", "get_stock", {"ticker": "AAPL"}),
    ]
    assert message.stop_reason == "tool_use"


def test_a_responses_clients_calls_and_the_request_written_as_ollamas(served: Proxy, upstream: LoopbackServer) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TWO_CALLS)
    tools = [{"type": "function", **tool["function"]} for tool in CHAT_TOOLS]
    request = {
        "model": "qwen3",
        "instructions": "Be brief.",
        "input": "Weather and AAPL?",
        "tools": tools,
        "max_output_tokens": 64,
        "temperature": 0.2,
    }
    with gpt(served).responses.stream(**request) as stream:
        response = stream.get_final_response()
    assert response.output_text == "Checking both."
    assert [(item.type, getattr(item, "call_id", None)) for item in response.output] == [
        ("message", None),
        ("function_call", "call_k3j9x0qa"),
        ("function_call", "call_p2m7b1zz"),
    ]
    assert [json.loads(item.arguments) for item in response.output[1:]] == [
        {"city": "Paris", "unit": "celsius"},
        {"ticker": "AAPL"},
    ]
    [body] = sent_to(upstream, since)
    assert body == {
        "model": "qwen3",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather and AAPL?"}],
        "stream": True,
        "tools": OLLAMA_TOOLS,
        "options": {"num_predict": 64, "temperature": 0.2},
    }


def test_an_invalid_call_is_told_to_the_model_in_ollamas_terms_and_the_client_reads_its_correction(
    served: Proxy, upstream: LoopbackServer
) -> None:
    since = len(upstream.requests)
    bad = answers.ollama("Checking.", [("call_b1", "get_weather", {"town": "Paris"})])
    fixed = answers.ollama("", [("call_f1", "get_weather", {"city": "Paris"})])
    upstream.routes = Turns(CHAT, bad, fixed)
    request = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "Weather?"}]}
    message = streamed_message(served, **request, tools=MESSAGES_TOOLS)
    assert blocks(message) == [
        ("text", "Checking."),
        ("tool_use", "call_f1", "get_weather", {"city": "Paris"}),
    ]
    assert message.stop_reason == "tool_use"
    first, again = sent_to(upstream, since)
    assert again["options"] == first["options"] == {"num_predict": 100}
    assert again["stream"] is True
    assistant, told = again["messages"][len(first["messages"]) :]
    assert assistant == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [{"id": "call_b1", "function": {"name": "get_weather", "arguments": {"town": "Paris"}}}],
    }
    assert (told["role"], told["tool_name"]) == ("tool", "get_weather")
    errors = json.loads(told["content"])["errors"]
    assert [error["message"] for error in errors] == [
        '"town" is not a property this tool accepts',
        'the required property "city" is missing',
    ]


def test_the_next_turn_carries_the_calls_and_their_results_as_ollama_messages(
    served: Proxy, upstream: LoopbackServer
) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    history = chat_history("call_1", "call_2")
    assert_chat_answered(served, model="m", messages=history, tools=CHAT_TOOLS)
    [body] = sent_to(upstream, since)
    assert body == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather and AAPL?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {"id": "call_1", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                    {"id": "call_2", "function": {"name": "get_stock", "arguments": {"ticker": "AAPL"}}},
                ],
            },
            {"role": "tool", "tool_name": "get_weather", "content": "Sunny"},
            {"role": "tool", "tool_name": "get_stock", "content": "190"},
            {"role": "user", "content": "And tomorrow?"},
        ],
        "stream": True,  # the client asked for a body: the proxy reads the upstream's stream either way
        "tools": OLLAMA_TOOLS,
    }


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"parallel_tool_calls": False}, "parallel_tool_calls: the upstream's format (ollama) has no such setting"),
        (
            {"response_format": {"type": "json_object"}},
            "response_format: the upstream's format (ollama) has no such setting",
        ),
        (
            {"tool_choice": "required"},
            "tool_choice: 'required' forces a call, which the upstream's format (ollama) cannot",
        ),
    ],
)
def test_a_field_ollama_cannot_carry_is_a_400_in_openais_shape(
    served: Proxy, upstream: LoopbackServer, extra: dict[str, Any], message: str
) -> None:
    since = len(upstream.requests)
    request = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "tools": CHAT_TOOLS, **extra}
    with pytest.raises(openai.BadRequestError) as raised:
        gpt(served).chat.completions.create(**request)
    assert raised.value.status_code == 400
    said = f"the request cannot be sent to the upstream (ollama): {message}"
    assert raised.value.body == openai_error(said)
    assert len(upstream.requests) == since  # nothing was sent


def test_a_forced_tool_is_a_400_in_anthropics_shape(served: Proxy, upstream: LoopbackServer) -> None:
    since = len(upstream.requests)
    with pytest.raises(anthropic.BadRequestError) as raised:
        claude(served).messages.create(
            model="m",
            max_tokens=10,
            messages=[{"role": "user", "content": "Hi"}],
            tools=MESSAGES_TOOLS,
            tool_choice={"type": "tool", "name": "get_weather"},
        )
    assert raised.value.status_code == 400
    assert raised.value.body == anthropic_error(
        "the request cannot be sent to the upstream (ollama): "
        "tool_choice: 'get_weather' forces a call, which the upstream's format (ollama) cannot"
    )
    assert len(upstream.requests) == since


def test_tool_choice_none_offers_no_tools(served: Proxy, upstream: LoopbackServer) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    request = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "tools": CHAT_TOOLS}
    completion = gpt(served).chat.completions.create(**request, tool_choice="none")
    assert completion.choices[0].message.content == "Sunny in Paris."
    [body] = sent_to(upstream, since)
    assert body["tools"] == []


@pytest.mark.parametrize(("status", "error"), [(429, "RateLimitError"), (500, "InternalServerError")])
def test_an_ollama_error_status_reaches_each_client_with_its_status(
    served: Proxy, upstream: LoopbackServer, status: int, error: str
) -> None:
    said = b'{"error":"model \\"qwen3\\" is busy"}'
    upstream.routes = Turns(CHAT, Reply([said], status=status, reason="Err", content_type="application/json"))
    with pytest.raises(getattr(openai, error)) as chat_raised:
        gpt(served).chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "Hi"}])
    with pytest.raises(getattr(anthropic, error)) as messages_raised:
        claude(served).messages.create(model="qwen3", max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    expected = f'the upstream answered {status}: {{"error":"model \\"qwen3\\" is busy"}}'
    assert chat_raised.value.status_code == messages_raised.value.status_code == status
    assert chat_raised.value.body["message"] == expected
    assert messages_raised.value.body["error"]["message"] == expected


def test_an_error_line_in_the_stream_ends_each_clients_stream_in_its_shape(
    served: Proxy, upstream: LoopbackServer
) -> None:
    said = "an error was encountered while running the model: unexpected EOF"
    failing = lines({**HEAD, "message": {"role": "assistant", "content": "Looking"}, "done": False}, {"error": said})
    upstream.routes = Turns(CHAT, failing)
    hi = [{"role": "user", "content": "Hi"}]
    chunks = gpt(served).chat.completions.create(model="m", messages=hi, stream=True)
    with pytest.raises(openai.APIError) as chat_raised:
        list(chunks)
    told = f"ollama reported an error: {said}"
    assert chat_raised.value.message == told
    streamed = claude(served).messages.stream(model="m", max_tokens=10, messages=hi)
    with pytest.raises(anthropic.APIStatusError) as messages_raised, streamed as events:
        list(events.text_stream)
    assert messages_raised.value.body == anthropic_error(told, "api_error")


def test_a_request_written_as_ollamas_exactly() -> None:
    request = {
        "model": "qwen3",
        "max_tokens": 100,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Weather in Paris?"}, *messages_turn("toolu_1", "Sunny", "And now?")],
        "tools": MESSAGES_TOOLS[:1],
        "temperature": 0.2,
        "top_k": 5,
        "tool_choice": {"type": "auto"},
    }
    translated = translate("anthropic", "ollama", request)
    assert translated.path == "/api/chat"
    assert translated.body == {
        "model": "qwen3",
        "messages": [*PROMPT, *ollama_turn("toolu_1", "Sunny", "And now?")],
        "stream": True,
        "tools": OLLAMA_TOOLS[:1],
        "options": {"num_predict": 100, "temperature": 0.2, "top_k": 5},
    }
    with pytest.raises(RequestError, match=r"^tool_choice: 'required' forces a call"):
        translate("anthropic", "ollama", {**request, "tool_choice": {"type": "any"}})


CLAUDE_BASH = {"command": "touch good.txt", "description": "Make good.txt"}
#: Claude Code's runs on Ollama: the model's turns, the files made, and Claude Code's turns.
CLAUDE_ON_OLLAMA = {
    "plain": ([answers.ollama(PLAIN, [])], [], 1),
    "call": ([answers.ollama("", [("call_9", "Bash", CLAUDE_BASH)]), answers.ollama(PLAIN, [])], ["good.txt"], 2),
}


@runs_claude_code
@pytest.mark.parametrize("name", list(CLAUDE_ON_OLLAMA))
def test_claude_code_on_an_ollama_server_through_the_proxy(
    served: Proxy, upstream: LoopbackServer, tmp_path: Path, name: str
) -> None:
    """Claude Code speaks Messages, the upstream Ollama's /api/chat: each request is written as
    Ollama's, each NDJSON answer as Messages; the call runs once and its result goes back as a
    ``tool`` message naming Bash."""
    turns, files, steps = CLAUDE_ON_OLLAMA[name]
    upstream.routes = Turns(CHAT, *turns)
    since = len(upstream.requests)
    ran = claude_code(served.url, PROXY_KEY, tmp_path)
    assert ran == {"subtype": "success", "is_error": False, "num_turns": steps, "result": PLAIN}
    assert sorted(path.name for path in (tmp_path / "work").iterdir()) == files
    sent = sent_to(upstream, since)
    assert len(sent) == len(turns)
    assert all(body["stream"] is True and body["messages"][0]["role"] == "system" for body in sent)
    assert "Bash" in [tool["function"]["name"] for tool in sent[0]["tools"]]
    if name == "call":
        assistant, result = sent[1]["messages"][-2:]
        assert assistant == {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "call_9", "function": {"name": "Bash", "arguments": CLAUDE_BASH}}],
        }
        assert (result["role"], result["tool_name"], result["content"]) == ("tool", "Bash", BASH_RAN)
