"""Mistral: OpenAI-like chunks with whole calls, no index, string or object arguments."""

from __future__ import annotations

from typing import Any

import pytest

from streamkit import ProviderError, ProviderProtocolError, ResponseEnd, TextDelta, ToolCall

from ..helpers import events, sse


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def call(call_id: str, name: str, arguments: object) -> dict[str, Any]:
    return {"id": call_id, "function": {"name": name, "arguments": arguments}}


def run(*payloads: object) -> list[object]:
    return events(sse(*payloads, done=True), "mistral")


def test_whole_calls_without_index_in_the_finish_chunk() -> None:
    usage = {"prompt_tokens": 1, "completion_tokens": 2}
    two = chunk({"tool_calls": [call("a", "f", '{"x": 1}'), call("b", "g", {"y": 2})]}, "tool_calls", usage=usage)
    assert run(two) == [
        ToolCall(0, "a", "f", {"x": 1}),
        ToolCall(1, "b", "g", {"y": 2}),
        ResponseEnd("tool_calls", usage),
    ]


def test_the_same_chunks_through_openai_chat_record_the_anomalies() -> None:
    two = chunk({"tool_calls": [call("a", "f", '{"x": 1}'), call("b", "g", {"y": 2})]}, "tool_calls")
    assert events(sse(two, done=True), "openai_chat")[:2] == [
        ToolCall(0, "a", "f", {"x": 1}, anomalies=("index_missing",)),
        ToolCall(1, "b", "g", {"y": 2}, anomalies=("index_missing", "arguments_object")),
    ]


def test_content_chunks_of_reasoning_models() -> None:
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}
    out = run(chunk({"content": [thinking]}), chunk({"content": [{"type": "text", "text": "Hi"}]}), chunk({}, "stop"))
    assert out == [TextDelta("Hi"), ResponseEnd("stop")]


@pytest.mark.parametrize(
    ("content", "message"),
    [([{"type": "text", "text": 5}], r"delta\.content\[0\]\.text must be a string"), ([7], "must be an object")],
)
def test_bad_content_chunks_name_the_path(content: object, message: str) -> None:
    with pytest.raises(ProviderProtocolError, match=message):
        run(chunk({"content": content}))


def test_incremental_style_placeholders_are_still_recorded() -> None:
    first = {"index": 0, "id": "a", "type": "function", "function": {"name": "f", "arguments": ""}}
    later = {"index": 0, "id": "null", "function": {"name": "", "arguments": "{}"}}
    out = run(chunk({"tool_calls": [first]}), chunk({"tool_calls": [later]}), chunk({}, "tool_calls"))
    assert out[0] == ToolCall(0, "a", "f", {}, anomalies=("id_placeholder", "name_placeholder"))


def test_error_object() -> None:
    with pytest.raises(ProviderError, match="busy") as info:
        run({"object": "error", "message": "busy", "type": "unavailable"})
    assert info.value.provider == "mistral"
