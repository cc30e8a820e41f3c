"""``streamkit serve`` between formats: an Anthropic Messages client on an OpenAI Chat upstream.

The official anthropic SDK talks to the proxy; the loopback upstream speaks Chat Completions and
records what it was sent. Each test asserts the request the upstream got, field by field, and
what the SDK made of the answer; a bad call is answered upstream in Chat's own terms.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")  # the proxy

from .server import LoopbackServer, Turns
from .serving import Proxy, assert_messages_text, claude, streamed_message, translating_proxy
from .translating import (
    CHAT,
    CITY,
    FIXED,
    STOCK,
    TEXT,
    anthropic_error,
    assert_told_cut,
    blocks,
    chat_turn,
    messages_turn,
    recorded,
    sent,
    tool_use,
)

anthropic = pytest.importorskip("anthropic")

TOOLS = [
    {"name": "get_weather", "description": "The weather in a city.", "input_schema": CITY},
    {
        "name": "get_stock",
        "description": "A stock's price.",
        "input_schema": STOCK,
        "cache_control": {"type": "ephemeral"},
    },
]


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with translating_proxy(upstream, "openai_chat", "anthropic") as running:
        yield running


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
    assert_messages_text(served, request)
    [body] = sent(upstream, since)
    assert body["model"] == "qwen3-coder"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
    ]
    assert [tool["function"]["name"] for tool in body["tools"]] == ["get_weather", "get_stock"]
    assert body["tools"][0]["function"]["parameters"] == CITY
    assert (body["max_completion_tokens"], body["temperature"], body["stop"]) == (512, 0.2, ["END"])
    assert body["stream"] is True and "metadata" not in body


def test_two_calls_at_index_zero_reach_the_client_as_two_tool_use_blocks(
    served: Proxy, upstream: LoopbackServer
) -> None:
    upstream.routes = Turns(CHAT, recorded("openai_chat/parallel_calls_all_index_zero.sse"))
    request = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "Both?"}], "tools": TOOLS}
    message = streamed_message(served, **request)
    assert [(kind, *rest[1:]) for kind, *rest in blocks(message)] == [
        ("tool_use", "get_weather", {"city": "Paris"}),
        ("tool_use", "get_stock", {"ticker": "AAPL"}),
    ]
    assert message.stop_reason == "tool_use"


def test_a_cut_call_is_told_to_the_model_in_chat_and_the_client_reads_its_correction(
    served: Proxy, upstream: LoopbackServer
) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, recorded("openai_chat/length_truncated.sse"), FIXED)
    request = {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "Write."}], "tools": TOOLS}
    message = streamed_message(served, **request)
    assert blocks(message) == [("tool_use", "call_9", "get_weather", {"city": "Paris"})]
    assert message.stop_reason == "tool_use"
    assert_told_cut(upstream, since)


def test_the_next_turn_carries_the_calls_and_their_results_as_chat_messages(
    served: Proxy, upstream: LoopbackServer
) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        *messages_turn("toolu_1", [{"type": "text", "text": "Sunny"}], "And tomorrow?"),
    ]
    message = claude(served).messages.create(model="m", max_tokens=100, messages=history, tools=TOOLS)
    assert (blocks(message), message.stop_reason) == ([("text", "Sunny in Paris.")], "end_turn")
    [body] = sent(upstream, since)
    assert body["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        *chat_turn("toolu_1", "Sunny", "And tomorrow?"),
    ]


#: A 1x1 PNG, as base64.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def test_an_image_reaches_the_chat_upstream_as_a_data_url(served: Proxy, upstream: LoopbackServer) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    content = [image, {"type": "text", "text": "What is this?"}]
    message = claude(served).messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": content}])
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


READ_CALL = tool_use("toolu_1", "get_weather", {"city": "Paris"})
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
        claude(served).messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": content}])
    assert raised.value.status_code == 400
    assert raised.value.body == anthropic_error(f"the request cannot be sent to the upstream (openai_chat): {said}")
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
    message = claude(served).messages.create(model="m", max_tokens=10, messages=history, tools=TOOLS)
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
