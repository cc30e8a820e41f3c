"""Responses recorded from the live APIs (../shared/real-streams) decode to what the SDKs saw."""

from __future__ import annotations

import json

import pytest

from streamkit import InvalidToolCall, ResponseEnd, iter_events

from .helpers import REAL_STREAMS, one_byte, slug

pytestmark = pytest.mark.skipif(not REAL_STREAMS.is_dir(), reason="shared/real-streams is not beside the repo")


def load(name: str) -> bytes:
    data = (REAL_STREAMS / name).read_bytes()
    # The SDK's fixture files lost the blank line that ends the last event on the wire.
    return data if data.endswith(b"\n\n") else data.rstrip(b"\n") + b"\n\n"


def lines(name: str, provider: str) -> list[dict[str, object]]:
    from streamkit._cli import to_json_line

    data = load(name)
    whole = [to_json_line(item) for item in iter_events([data], slug(provider))]
    assert [to_json_line(item) for item in iter_events(one_byte(data), slug(provider))] == whole
    return [json.loads(json.dumps(line)) for line in whole if line is not None]


def test_openai_two_parallel_calls() -> None:
    out = lines("openai_chat-f82268f2.sse", "openai_chat")
    assert [(line["name"], line["input"]) for line in out[:2]] == [
        ("GetWeatherArgs", {"city": "Edinburgh", "country": "GB", "units": "c"}),
        ("get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"}),
    ]
    assert out[2]["stop_reason"] == "tool_calls"


@pytest.mark.parametrize(
    ("name", "tool", "arguments"),
    [
        ("openai_chat-2018feb6.sse", "get_weather", {"city": "New York City"}),
        ("openai_chat-a247c49c.sse", "get_weather", {"city": "San Francisco", "state": "CA"}),
        ("openai_chat-c6aa7e39.sse", "GetWeatherArgs", {"city": "Edinburgh", "country": "UK", "units": "c"}),
    ],
)
def test_openai_single_calls(name: str, tool: str, arguments: dict[str, object]) -> None:
    first = lines(name, "openai_chat")[0]
    assert (first["type"], first["name"], first["input"]) == ("tool_call", tool, arguments)


def test_anthropic_tool_use() -> None:
    out = lines("anthropic-tool_use_response.sse", "anthropic")
    assert out[0] == {
        "type": "tool_call",
        "index": 1,
        "id": "toolu_01NRLabsLyVHZPKxbKvkfSMn",
        "name": "get_weather",
        "input": {"location": "Paris"},
    }
    assert out[1]["type"] == "end" and out[1]["stop_reason"] == "tool_use"


def test_anthropic_max_tokens_is_truncated_with_its_raw_text() -> None:
    items = list(iter_events([load("anthropic-incomplete_partial_json_response.sse")], "anthropic"))
    call, end = items[-2], items[-1]
    assert isinstance(call, InvalidToolCall) and call.truncated and call.name == "make_file"
    assert call.raw.startswith('{"filename": "taxes.txt", "lines_of_text": [\n"# COMPREHENSIVE TAX GUIDE')
    assert isinstance(end, ResponseEnd) and end.stop_reason == "max_tokens"


def test_anthropic_text_only() -> None:
    assert [line["type"] for line in lines("anthropic-basic_response.sse", "anthropic")] == ["end"]
