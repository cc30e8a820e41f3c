"""Calls as each provider's decoder gives them, invalid calls, and streams built from messages.

The calls for providers whose decoders live elsewhere are written by hand from the sample
transcripts in each provider's documentation (text, then ``get_weather`` and ``get_stock``).
"""

from __future__ import annotations

import json
from typing import Any

from streamkit import ArgumentIssue, InvalidToolCall, TextDelta, ToolCall, iter_events
from streamkit._turn_types import StreamEvent

from ..helpers import FIXTURES, slug

TEXT = "Checking both."
WEATHER = {"city": "Paris"}
STOCK = {"ticker": "AAPL"}


def decoded(provider: str, case: str = "text_then_two_calls") -> tuple[str, list[ToolCall]]:
    """The text and calls a fixture decodes to (all of them valid)."""
    path = FIXTURES / provider / f"{case}.sse"
    items = list(iter_events([path.read_bytes()], slug(provider)))
    assert not [item for item in items if isinstance(item, InvalidToolCall)], items
    return _split(items)


def _split(items: list[StreamEvent]) -> tuple[str, list[ToolCall]]:
    text = "".join(item.text for item in items if isinstance(item, TextDelta))
    return text, [item for item in items if isinstance(item, ToolCall)]


# Calls as the decoders for the other providers give them (ids as in their documentation).
HAND_MADE: dict[str, list[ToolCall]] = {
    "openai_responses": [ToolCall(1, "call_A", "get_weather", WEATHER), ToolCall(2, "call_B", "get_stock", STOCK)],
    "gemini": [ToolCall(0, None, "get_weather", WEATHER), ToolCall(1, None, "get_stock", STOCK)],
    "cohere": [
        ToolCall(0, "get_weather_e8p4pn45zt0t", "get_weather", WEATHER),
        ToolCall(1, "get_stock_pyxssbwnq9fq", "get_stock", STOCK),
    ],
    "mistral": [ToolCall(0, "gSIMJiOkT", "get_weather", WEATHER), ToolCall(1, "Xq2LmPz8r", "get_stock", STOCK)],
    "ollama": [ToolCall(0, "call_k3j9x0qa", "get_weather", WEATHER), ToolCall(1, "call_p2m7b1zz", "get_stock", STOCK)],
    "bedrock": [
        ToolCall(1, "tooluse_A", "get_weather", WEATHER),
        ToolCall(2, "functions.get_stock:1", "get_stock", STOCK),
    ],
}

TRUNCATED = InvalidToolCall(
    1,
    "toolu_T",
    "write_file",
    '{"path": "notes.txt", "content": "Dear Par',
    (
        ArgumentIssue(
            "truncated", "the arguments were cut off before the call ended (output limit reached or stream ended)"
        ),
    ),
)
BAD_JSON = InvalidToolCall(
    2,
    "toolu_J",
    "get_weather",
    '{"city": Paris}',
    (ArgumentIssue("invalid_json", "the arguments are not valid JSON: unexpected character", position=9),),
)
SCHEMA = InvalidToolCall(
    3,
    "toolu_S",
    "get_stock",
    '{"ticker": 5}',
    (ArgumentIssue("schema", '5 is not of type "string"', path="$.ticker"),),
    input={"ticker": 5},
)
TRUNCATED_PAYLOAD = {
    "ok": False,
    "errors": [{"kind": "truncated", "message": "your arguments were cut off by the output limit; send less per call"}],
}
BAD_JSON_PAYLOAD = {
    "ok": False,
    "errors": [
        {"kind": "invalid_json", "message": "the arguments are not valid JSON: unexpected character", "position": 9}
    ],
}
SCHEMA_PAYLOAD = {
    "ok": False,
    "errors": [{"kind": "schema", "message": '5 is not of type "string"', "path": "$.ticker"}],
}


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --- streams built from written messages, to read them back with a decoder ----------------


def _sse(payloads: list[dict[str, Any]], *, named: bool, done: bool) -> bytes:
    out = []
    for payload in payloads:
        head = f"event: {payload['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(payload)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def openai_chat_stream(message: dict[str, Any]) -> bytes:
    """An OpenAI Chat assistant message as the stream of chunks that would have produced it."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-x",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": message["content"] or ""})]
    for index, call in enumerate(message.get("tool_calls", [])):
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [head]}))
        chunks.append(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": call["function"]["arguments"]}}]})
        )
    chunks.append(chunk({}, "tool_calls"))
    return _sse(chunks, named=False, done=True)


def anthropic_stream(message: dict[str, Any]) -> bytes:
    """An Anthropic assistant message as the stream of events that would have produced it."""
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_x", "role": "assistant", "content": [], "usage": {}}}
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            )
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            events.append({"type": "content_block_start", "index": index, "content_block": start})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}})
    events.append({"type": "message_stop"})
    return _sse(events, named=True, done=False)


STREAMS = {"openai_chat": openai_chat_stream, "anthropic": anthropic_stream}


def read_back(provider: str, message: dict[str, Any]) -> tuple[str, list[ToolCall]]:
    """Decode a written assistant message with the provider's own decoder."""
    items = list(iter_events([STREAMS[provider](message)], slug(provider)))
    assert not [item for item in items if isinstance(item, InvalidToolCall)], items
    return _split(items)
