"""``streamkit serve`` between formats: an Anthropic Messages client on an OpenAI Chat upstream.

The official anthropic SDK talks to the proxy; the loopback upstream speaks Chat Completions and
records what it was sent. Each test asserts the request the upstream got, field by field, and
what the SDK made of the answer; a bad call is answered upstream in Chat's own terms.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")  # the proxy

from .helpers import FIXTURES
from .server import LoopbackServer, Reply, Turns
from .serving import CLIENTS, PROXY_KEY, Proxy, keyed_proxy, route

anthropic = pytest.importorskip("anthropic")

CHAT = "/v1/chat/completions"
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
STOCK = {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]}
TOOLS = [
    {"name": "get_weather", "description": "The weather in a city.", "input_schema": WEATHER},
    {
        "name": "get_stock",
        "description": "A stock's price.",
        "input_schema": STOCK,
        "cache_control": {"type": "ephemeral"},
    },
]


def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
    body: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        body |= {"choices": [], "usage": usage}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def call(index: int, ident: str, name: str, arguments: str) -> bytes:
    entry = {"index": index, "id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}
    return chunk({"tool_calls": [entry]})


DONE = b"data: [DONE]\n\n"
USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
TEXT = Reply(
    [
        chunk({"role": "assistant", "content": "Sunny "}),
        chunk({"content": "in Paris."}),
        chunk({}, "stop"),
        chunk({}, usage=USAGE),
        DONE,
    ]
)
FIXED = Reply(
    [
        chunk({"role": "assistant", "content": None}),
        call(0, "call_9", "get_weather", '{"city": "Paris"}'),
        chunk({}, "tool_calls"),
        DONE,
    ]
)


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with keyed_proxy(upstream, route(upstream, "anthropic", upstream_format="openai_chat")) as running:
        yield running


def client(served: Proxy) -> Any:
    return CLIENTS.add(anthropic.Anthropic(base_url=served.url, api_key=PROXY_KEY, max_retries=0))


def sent(upstream: LoopbackServer, since: int) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = [json.loads(request.body) for request in upstream.requests[since:]]
    assert all(request.target.startswith(CHAT) for request in upstream.requests[since:])
    return bodies


def blocks(message: Any) -> list[tuple[Any, ...]]:
    return [(b.type, b.text) if b.type == "text" else (b.type, b.id, b.name, b.input) for b in message.content]


def test_a_text_answer_and_the_request_written_as_chat(served: Proxy, upstream: LoopbackServer) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    request = {
        "model": "qwen3-coder",
        "max_tokens": 512,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": TOOLS,
        "stop_sequences": ["END"],
        "metadata": {"user_id": "u1"},
        "extra_body": {"temperature": 0.2},  # anthropic 2.x takes it only so
    }
    with client(served).messages.stream(**request) as stream:
        message = stream.get_final_message()
    assert (blocks(message), message.stop_reason) == ([("text", "Sunny in Paris.")], "end_turn")
    assert (message.usage.input_tokens, message.usage.output_tokens) == (11, 7)
    [body] = sent(upstream, since)
    assert body["model"] == "qwen3-coder"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert [tool["function"]["name"] for tool in body["tools"]] == ["get_weather", "get_stock"]
    assert body["tools"][0]["function"]["parameters"] == WEATHER
    assert (body["max_completion_tokens"], body["temperature"], body["stop"]) == (512, 0.2, ["END"])
    assert body["stream"] is True and "metadata" not in body


def test_two_calls_at_index_zero_reach_the_client_as_two_tool_use_blocks(
    served: Proxy, upstream: LoopbackServer
) -> None:
    upstream.routes = Turns(CHAT, Reply([(FIXTURES / "openai_chat/parallel_calls_all_index_zero.sse").read_bytes()]))
    request = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "Both?"}], "tools": TOOLS}
    with client(served).messages.stream(**request) as stream:
        message = stream.get_final_message()
    assert [(kind, *rest[1:]) for kind, *rest in blocks(message)] == [
        ("tool_use", "get_weather", {"city": "Paris"}),
        ("tool_use", "get_stock", {"ticker": "AAPL"}),
    ]
    assert message.stop_reason == "tool_use"


def test_a_cut_call_is_told_to_the_model_in_chat_and_the_client_reads_its_correction(
    served: Proxy, upstream: LoopbackServer
) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, Reply([(FIXTURES / "openai_chat/length_truncated.sse").read_bytes()]), FIXED)
    request = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "Write."}], "tools": TOOLS}
    with client(served).messages.stream(**request) as stream:
        message = stream.get_final_message()
    assert blocks(message) == [("tool_use", "call_9", "get_weather", {"city": "Paris"})]
    assert message.stop_reason == "tool_use"
    first, again = sent(upstream, since)
    assistant, told = again["messages"][len(first["messages"]) :]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["id"] == "call_A"
    assert (told["role"], told["tool_call_id"]) == ("tool", "call_A")
    assert json.loads(told["content"])["errors"][0]["kind"] == "truncated"


def test_the_next_turn_carries_the_calls_and_their_results_as_chat_messages(
    served: Proxy, upstream: LoopbackServer
) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "Sunny"}]},
                {"type": "text", "text": "And tomorrow?"},
            ],
        },
    ]
    message = client(served).messages.create(model="m", max_tokens=100, messages=history, tools=TOOLS)
    assert (blocks(message), message.stop_reason) == ([("text", "Sunny in Paris.")], "end_turn")
    [body] = sent(upstream, since)
    assert body["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "Sunny"},
        {"role": "user", "content": "And tomorrow?"},
    ]


#: A 1x1 PNG, as base64.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_an_image_reaches_the_chat_upstream_as_a_data_url(served: Proxy, upstream: LoopbackServer) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    content = [image, {"type": "text", "text": "What is this?"}]
    message = client(served).messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": content}])
    assert blocks(message) == [("text", "Sunny in Paris.")]
    [body] = sent(upstream, since)
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                {"type": "text", "text": "What is this?"},
            ],
        }
    ]


READ_CALL = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
SHOWN = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (
            [{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}}],
            "messages[0].content[0]: a 'document' block, where streamkit carries text and images",
        ),
        (
            [{"type": "image", "source": {"type": "file", "file_id": "file_1"}}],
            "messages[0].content[0].source: a 'file' image source, where streamkit carries base64 data or a URL",
        ),
    ],
    ids=["document", "file-image"],
)
def test_a_field_the_upstream_cannot_carry_is_a_400_in_the_clients_shape(
    served: Proxy, upstream: LoopbackServer, content: list[Any], said: str
) -> None:
    since = len(upstream.requests)
    with pytest.raises(anthropic.BadRequestError) as raised:
        client(served).messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": content}])
    assert raised.value.status_code == 400
    assert raised.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": f"the request cannot be sent to the upstream (openai_chat): {said}",
        },
    }
    assert len(upstream.requests) == since


def test_an_image_in_a_tool_result_reaches_the_chat_upstream_after_the_tool_message(
    served: Proxy, upstream: LoopbackServer
) -> None:
    """Claude Code's Read on a screenshot: a ``tool_result`` of text and an image. A ``tool``
    message carries text, so the upstream gets the text in it and, after it, a user message
    showing the same bytes, named by the call; the session goes on."""
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "c.png:"}, SHOWN]}
    history = [
        {"role": "user", "content": "Show me."},
        {"role": "assistant", "content": [READ_CALL]},
        {"role": "user", "content": [result]},
    ]
    message = client(served).messages.create(model="m", max_tokens=10, messages=history, tools=TOOLS)
    assert blocks(message) == [("text", "Sunny in Paris.")]
    [body] = sent(upstream, since)
    assert body["messages"] == [
        {"role": "user", "content": "Show me."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "c.png:\n\n(1 image follows in a user message)"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The image get_weather (call toolu_1) returned:"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
        },
    ]
