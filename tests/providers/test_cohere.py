"""Cohere v2 chat stream: tool-call-end as the end marker, message-end, errors."""

from __future__ import annotations

import re
from typing import Any

import pytest

from streamkit import (
    Assembler,
    IncompleteStreamError,
    InvalidToolCall,
    ProviderError,
    ProviderProtocolError,
    ResponseEnd,
    TextDelta,
    ToolCall,
)

from ..helpers import events, sse


def start(index: int, call_id: str, name: str, arguments: str = "") -> dict[str, Any]:
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    return {"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": call}}}


def delta(index: int, text: str) -> dict[str, Any]:
    return {
        "type": "tool-call-delta",
        "index": index,
        "delta": {"message": {"tool_calls": {"function": {"arguments": text}}}},
    }


def end(index: int) -> dict[str, Any]:
    return {"type": "tool-call-end", "index": index}


def message_end(reason: str = "TOOL_CALL", **extra: Any) -> dict[str, Any]:
    return {"type": "message-end", "delta": {"finish_reason": reason, **extra}}


def run(*payloads: object) -> list[object]:
    return events(sse(*payloads, named=True), "cohere")


def test_a_call_is_delivered_at_its_tool_call_end() -> None:
    assembler = Assembler("cohere")
    assert assembler.feed(sse(start(0, "c0", "f"), delta(0, '{"a": '), delta(0, "1}"), named=True)) == []
    assert assembler.feed(sse(end(0), named=True)) == [ToolCall(0, "c0", "f", {"a": 1})]
    assert assembler.feed(sse(message_end(), named=True)) == [ResponseEnd("TOOL_CALL")]


def test_tool_plan_and_content_are_text_and_usage_is_kept() -> None:
    plan = {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will"}}}
    text = {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"type": "text", "text": "Hi"}}}}
    thinking = {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"thinking": "The"}}}}
    typed = {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"type": "thinking"}}}}
    usage = {"tokens": {"input_tokens": 3, "output_tokens": 4}}
    assert run(plan, text, thinking, typed, message_end("COMPLETE", usage=usage)) == [
        TextDelta("I will"),  # the tool plan has no index
        TextDelta("Hi", index=0),
        ResponseEnd("COMPLETE", usage),
    ]


def test_no_deltas_and_null_text_are_no_arguments() -> None:
    out = run(start(0, "a", "f"), end(0), start(1, "b", "g"), delta(1, "null"), end(1), message_end())
    assert out[:2] == [ToolCall(0, "a", "f", {}), ToolCall(1, "b", "g", {}, anomalies=("null_arguments",))]


def test_arguments_in_the_start_event_are_kept() -> None:
    out = run(start(0, "a", "f", '{"x": '), delta(0, "2}"), end(0), message_end())
    assert out[0] == ToolCall(0, "a", "f", {"x": 2})


def test_a_stray_done_after_message_end_is_harmless() -> None:
    data = sse(start(0, "a", "f"), end(0), message_end(), named=True) + b"data: [DONE]\n\n"
    assert events(data, "cohere")[-1] == ResponseEnd("TOOL_CALL")


def test_done_before_message_end_cuts_the_open_calls() -> None:
    data = sse(start(0, "a", "f", '{"x'), named=True) + b"data: [DONE]\n\n"
    call, end_ = events(data, "cohere")
    assert isinstance(call, InvalidToolCall) and call.truncated and call.raw == '{"x'
    assert end_ == ResponseEnd(None)


def test_max_tokens_cuts_the_open_call() -> None:
    (call, end_) = run(start(0, "a", "f", '{"x": 1}'), message_end("MAX_TOKENS"))
    assert isinstance(call, InvalidToolCall) and call.truncated and end_ == ResponseEnd("MAX_TOKENS")


@pytest.mark.parametrize(
    ("reason", "extra", "message"),
    [
        ("ERROR", {"error": "internal"}, "internal"),
        ("TIMEOUT", {}, "the response ended with TIMEOUT"),
        ("COMPLETE", {"error": "odd"}, "odd"),
    ],
)
def test_failed_message_end_is_a_provider_error(reason: str, extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ProviderError) as info:
        run(start(0, "a", "f", '{"x'), message_end(reason, **extra))
    assert (info.value.type, info.value.message, info.value.provider) == (reason, message, "cohere")
    assert [c.raw for c in info.value.unfinished] == ['{"x']


def test_eof_before_message_end_is_incomplete() -> None:
    with pytest.raises(IncompleteStreamError):
        run(start(0, "a", "f"), end(0))


def test_unknown_and_skipped_events_are_ignored() -> None:
    out = run({"type": "message-start", "id": "x"}, {"type": "citation-start"}, {"type": "new-thing"}, message_end())
    assert out == [ResponseEnd("TOOL_CALL")]


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"index": 0}, "event data has no 'type'"),
        ({"type": "tool-call-start", "delta": {}}, "$.index must be int, got missing"),
        ({"type": "tool-call-start", "index": 0, "delta": {"message": {"tool_calls": []}}}, "tool_calls must be dict"),
        ({"type": "tool-call-delta", "index": 0, "delta": {"message": {"tool_calls": {"function": {}}}}}, "arguments"),
    ],
)
def test_wrong_shapes_name_the_path(payload: dict[str, Any], path: str) -> None:
    with pytest.raises(ProviderProtocolError, match=re.escape(path)):
        run(payload, message_end())
