"""``streamkit serve`` between formats: an OpenAI Chat Completions client on an Anthropic upstream.

The official openai SDK (Python, and Node's where installed) talks to the proxy; the loopback
upstream speaks Anthropic Messages and records what it was sent. Each test asserts the request
the upstream got, field by field, and what the SDK made of the answer; a bad call is answered
upstream in Anthropic's own terms.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn")  # the proxy

from streamkit.serve._translate import translate

from .server import LoopbackServer, Reply, Turns, bodies
from .serving import PROXY_KEY, Proxy, assert_chat_answered, assert_chat_text, gpt, streamed_chat, translating_proxy
from .test_serve_clients import MODULES, NODE, needs
from .translating import (
    BOTH,
    STOCK,
    WEATHER,
    calls,
    chat_history,
    chat_tools,
    messages_tools,
    openai_error,
    recorded,
    sse_event,
    tool_use,
)

openai = pytest.importorskip("openai")

MESSAGES = "/v1/messages"
TOOLS = chat_tools(*BOTH)


def event(kind: str, **data: Any) -> bytes:
    return sse_event({"type": kind, **data}, kind)


def answer(*blocks: dict[str, Any], stop: str) -> Reply:
    """An Anthropic stream of ``blocks`` (text, or a call with its input), ending on ``stop``."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": []}
    writes = [event("message_start", message={**message, "usage": {"input_tokens": 11, "output_tokens": 1}})]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            writes.append(event("content_block_start", index=index, content_block={"type": "text", "text": ""}))
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            writes.append(event("content_block_start", index=index, content_block=start))
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        writes += [event("content_block_delta", index=index, delta=delta), event("content_block_stop", index=index)]
    writes.append(event("message_delta", delta={"stop_reason": stop}, usage={"output_tokens": 7}))
    return Reply([*writes, event("message_stop")])


TEXT = answer({"type": "text", "text": "Sunny in Paris."}, stop="end_turn")
FIXED = answer(tool_use("toolu_9", "get_weather", {"city": "Paris"}), stop="tool_use")


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with translating_proxy(upstream, "anthropic", "openai_chat") as running:
        yield running


def sent(upstream: LoopbackServer, since: int) -> list[dict[str, Any]]:
    found = bodies(upstream, since)
    assert all(request.target.startswith(MESSAGES) for request in upstream.requests[since:])
    # the headers every request to the upstream's API carries (Anthropic's version), and its key
    assert all(request.headers.get("anthropic-version") == "2023-06-01" for request in upstream.requests[since:])
    return found


def test_a_text_answer_and_the_request_written_as_anthropic(served: Proxy, upstream: LoopbackServer) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(MESSAGES, TEXT)
    request = {
        "model": "claude-sonnet-4-5",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": [{"type": "text", "text": "Use tools."}]},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "tools": TOOLS,
        "max_completion_tokens": 512,
        "temperature": 0.2,
        "stop": ["END"],
        "user": "u1",
        "stream_options": {"include_usage": True},
    }
    assert_chat_text(served, request)
    [body] = sent(upstream, since)
    assert body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]}],
        "stream": True,
        "system": "Be brief.\n\nUse tools.",
        "tools": messages_tools(*BOTH),
        "temperature": 0.2,
        "stop_sequences": ["END"],
    }


def test_one_call_at_a_time_reaches_anthropic_through_the_proxy(served: Proxy, upstream: LoopbackServer) -> None:
    """The openai SDK's ``parallel_tool_calls=False`` is Anthropic's ``disable_parallel_tool_use``."""
    since = len(upstream.requests)
    upstream.routes = Turns(MESSAGES, FIXED)
    request = {"model": "m", "messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS}
    [choice] = streamed_chat(served, **request, parallel_tool_calls=False, tool_choice="required").choices
    assert calls(choice.message) == [("toolu_9", "get_weather", {"city": "Paris"})]
    [body] = sent(upstream, since)
    assert (body["tool_choice"], "parallel_tool_calls" in body) == (
        {"type": "any", "disable_parallel_tool_use": True},
        False,
    )


def test_two_calls_reach_the_client_as_two_tool_calls(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(MESSAGES, recorded("anthropic/text_then_two_calls.sse"))
    request = {"model": "m", "messages": [{"role": "user", "content": "Both?"}], "tools": TOOLS}
    [choice] = streamed_chat(served, **request).choices
    assert choice.message.content == "Checking both."
    assert calls(choice.message) == [
        ("toolu_A", "get_weather", {"city": "Paris", "units": "c"}),
        ("toolu_B", "get_stock", {"ticker": "AAPL"}),
    ]
    assert choice.finish_reason == "tool_calls"


def test_a_cut_call_is_told_to_the_model_in_anthropic_terms_and_the_client_reads_its_correction(
    served: Proxy, upstream: LoopbackServer
) -> None:
    since = len(upstream.requests)
    cut = recorded("anthropic/max_tokens_cut_after_a_whole_value.sse")
    upstream.routes = Turns(MESSAGES, cut, FIXED)
    request = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "Weather?"}], "tools": TOOLS}
    [choice] = streamed_chat(served, **request).choices
    assert calls(choice.message) == [("toolu_9", "get_weather", {"city": "Paris"})]
    assert (choice.message.content, choice.finish_reason) == ("Checking.", "tool_calls")
    first, again = sent(upstream, since)
    assert again["max_tokens"] == first["max_tokens"] == 100
    assistant, told = again["messages"][len(first["messages"]) :]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_C", "name": "get_weather", "input": {}},
        ],
    }
    [result] = told["content"]
    assert (told["role"], result["type"], result["tool_use_id"], result["is_error"]) == (
        "user",
        "tool_result",
        "toolu_C",
        True,
    )
    assert json.loads(result["content"])["errors"][0]["kind"] == "truncated"


def test_the_next_turn_carries_the_calls_and_their_results_as_anthropic_blocks(
    served: Proxy, upstream: LoopbackServer
) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(MESSAGES, TEXT)
    history = chat_history("toolu_1", "toolu_2")
    forced = {"type": "function", "function": {"name": "get_weather"}}
    assert_chat_answered(served, model="m", messages=history, tools=TOOLS, tool_choice=forced)
    [body] = sent(upstream, since)
    assert body["system"] == "Be brief."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather and AAPL?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                tool_use("toolu_1", "get_weather", {"city": "Paris"}),
                tool_use("toolu_2", "get_stock", {"ticker": "AAPL"}),
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "190"},
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ]
    assert [message["role"] for message in body["messages"]] == ["user", "assistant", "user"]
    assert body["max_tokens"] == 4096  # Anthropic requires it: the writer's own when the client gave none
    assert [(tool["name"], tool["input_schema"]) for tool in body["tools"]] == [
        ("get_weather", WEATHER),
        ("get_stock", STOCK),
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert body["stream"] is True


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"seed": 1}, "seed: the upstream's format (anthropic) has no such setting"),
        ({"n": 2}, "n: 2 choices; streamkit carries one to another format"),
        ({"logprobs": True}, "logprobs: streamkit does not carry this field to another format"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}]},
            "messages[0].content[0].image_url: data:, is a data: URL that is not base64, which no other format takes",
        ),
    ],
)
def test_a_field_the_upstream_cannot_carry_is_a_400_in_openais_shape(
    served: Proxy, upstream: LoopbackServer, extra: dict[str, Any], message: str
) -> None:
    since = len(upstream.requests)
    request = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], **extra}
    with pytest.raises(openai.BadRequestError) as raised:
        gpt(served).chat.completions.create(**request)
    assert raised.value.status_code == 400
    said = f"the request cannot be sent to the upstream (anthropic): {message}"
    assert raised.value.body == openai_error(said)
    assert len(upstream.requests) == since  # nothing was sent


SCRIPT = Path(__file__).resolve().parent / "node" / "read_stream.cjs"


@needs("openai")
def test_node_openai_accumulates_the_calls_of_an_anthropic_answer(served: Proxy, upstream: LoopbackServer) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(MESSAGES, recorded("anthropic/text_then_two_calls.sse"))
    assert NODE is not None
    out = subprocess.run(
        [NODE, str(SCRIPT), "openai_chat_accumulated", served.url, PROXY_KEY, json.dumps(TOOLS)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NODE_PATH": str(MODULES)},
        check=True,
    )
    assert json.loads(out.stdout) == {
        "done": [[0, "get_weather", '{"city":"Paris","units":"c"}'], [1, "get_stock", '{"ticker":"AAPL"}']],
        "calls": [
            ["toolu_A", "get_weather", '{"city":"Paris","units":"c"}'],
            ["toolu_B", "get_stock", '{"ticker":"AAPL"}'],
        ],
    }
    [body] = sent(upstream, since)
    assert (body["messages"], body["max_tokens"]) == ([], 4096)


@pytest.mark.parametrize(
    ("upstream", "place"),
    [
        ("anthropic", ("stop_sequences",)),
        ("gemini", ("generationConfig", "stopSequences")),
        ("ollama", ("options", "stop")),
        ("mistral", ("stop",)),
    ],
)
def test_one_stop_sequence_as_a_string_goes_as_a_list(upstream: str, place: tuple[str, ...]) -> None:
    """OpenAI Chat takes ``stop`` as a string or a list; the other formats take a list only."""
    request = {"model": "m", "messages": [{"role": "user", "content": "Hi."}], "stop": "END"}
    value: Any = translate("openai_chat", upstream, request).body
    for key in place:
        value = value[key]
    assert value == ["END"]
