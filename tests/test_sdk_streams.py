"""The official SDKs' stream helpers as sources, against the loopback server (skipped without them)."""

from __future__ import annotations

import pytest

import streamkit
from streamkit import ResponseEnd, TextDelta, ToolCall

from .helpers import FIXTURES
from .server import LoopbackServer, Reply, split_awkwardly

ANTHROPIC = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
OPENAI = (FIXTURES / "openai_chat" / "text_then_two_calls.sse").read_bytes()


def test_the_anthropic_messages_stream_helper(server: LoopbackServer) -> None:
    anthropic = pytest.importorskip("anthropic")
    server.routes["/v1/messages"] = Reply(split_awkwardly(ANTHROPIC))
    client = anthropic.Anthropic(base_url=server.url(""), api_key="sk-test", max_retries=0)
    with client, client.messages.stream(model="m", max_tokens=64, messages=[]) as sdk_stream:
        got = list(streamkit.iter_events(sdk_stream, "anthropic"))
    assert got == [
        TextDelta("Checking ", index=0),
        TextDelta("both.", index=0),
        ToolCall(1, "toolu_A", "get_weather", {"city": "Paris", "units": "c"}),
        ToolCall(2, "toolu_B", "get_stock", {"ticker": "AAPL"}),
        ResponseEnd("tool_use", {"input_tokens": 377, "output_tokens": 65}),
    ]


def test_the_openai_chat_stream_helper(server: LoopbackServer) -> None:
    openai = pytest.importorskip("openai")
    server.routes["/v1/chat/completions"] = Reply(split_awkwardly(OPENAI))
    client = openai.OpenAI(base_url=server.url("/v1"), api_key="sk-test", max_retries=0)
    with client, client.chat.completions.stream(model="gpt-4o", messages=[]) as sdk_stream:
        got = list(streamkit.iter_tool_calls(sdk_stream, "openai_chat"))
    assert got == [
        ToolCall(0, "call_A", "get_weather", {"city": "Paris"}),
        ToolCall(1, "call_B", "get_stock", {"ticker": "AAPL"}),
    ]
