"""Gemini and Vertex: whole calls, streamed partialArgs, finish reasons, end at EOF."""

from __future__ import annotations

import re
from typing import Any

import pytest

from streamkit import (
    ArgumentIssue,
    Assembler,
    IncompleteStreamError,
    InvalidToolCall,
    ProviderError,
    ProviderProtocolError,
    ResponseEnd,
    TextDelta,
    Thinking,
    ToolCall,
)
from streamkit.providers._jsonpath import PathAssembler, PathError, parse_path

from ..helpers import events, sse


def chunk(*parts: dict[str, Any], finish: str | None = None, index: int | None = None, **extra: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if index is not None:
        candidate["index"] = index
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **extra}


def fc(**call: Any) -> dict[str, Any]:
    return {"functionCall": call}


def piece(path: str, more: bool = False, **value: Any) -> dict[str, Any]:
    entry = {"jsonPath": path, **value}
    if more:
        entry["willContinue"] = True
    return entry


def run(*payloads: object) -> list[object]:
    return events(sse(*payloads), "gemini")


def test_each_part_is_a_whole_call_delivered_at_once() -> None:
    assembler = Assembler("gemini")
    two = chunk(fc(name="f", args={"a": 1}), fc(id="x1", name="f", args={"a": 1}))
    assert assembler.feed(sse(two)) == [ToolCall(0, None, "f", {"a": 1}), ToolCall(1, "x1", "f", {"a": 1})]
    assert assembler.feed(sse(chunk({"text": ""}, finish="STOP", usageMetadata={"totalTokenCount": 5}))) == []
    assert assembler.flush() == [ResponseEnd("STOP", {"totalTokenCount": 5})]


def test_missing_args_and_empty_id() -> None:
    out = run(chunk(fc(name="f"), fc(name="g", id="", args={}), finish="STOP"))
    assert out[:2] == [ToolCall(0, None, "f", {}), ToolCall(1, None, "g", {})]


def test_text_thoughts_and_empty_text() -> None:
    out = run(chunk({"text": "plan", "thought": True}, {"text": "Hi"}, {"text": ""}, finish="STOP"))
    assert out == [Thinking("plan"), TextDelta("Hi"), ResponseEnd("STOP")]


def test_streamed_call_ends_with_an_empty_function_call() -> None:
    assembler = Assembler("gemini")
    assert assembler.feed(sse(chunk(fc(name="f", willContinue=True)))) == []
    more = fc(partialArgs=[piece("$.q", True, stringValue="Bos")], willContinue=True)
    assert (
        assembler.feed(sse(chunk(more), chunk(fc(partialArgs=[piece("$.q", stringValue="ton")], willContinue=True))))
        == []
    )
    assert assembler.feed(sse(chunk(fc(willContinue=True)))) == []
    assert assembler.feed(sse(chunk(fc(), finish="STOP"))) == [ToolCall(0, None, "f", {"q": "Boston"})]


def test_streamed_call_ends_with_a_last_piece() -> None:
    out = run(
        chunk(fc(name="f", willContinue=True)),
        chunk(fc(partialArgs=[piece("$.n", numberValue=3), piece("$.ok", boolValue=True)])),
        chunk(fc(name="g", partialArgs=[piece("$.z", nullValue="NULL_VALUE")])),
        chunk({"text": ""}, finish="STOP"),
    )
    assert out[:2] == [ToolCall(0, None, "f", {"n": 3, "ok": True}), ToolCall(1, None, "g", {"z": None})]


def test_max_tokens_truncates_the_open_streamed_call_with_what_arrived() -> None:
    out = run(
        chunk(fc(name="f", willContinue=True)),
        chunk(fc(partialArgs=[piece("$.t", True, stringValue="lor")], willContinue=True)),
        chunk(finish="MAX_TOKENS"),
    )
    call, end = out
    assert isinstance(call, InvalidToolCall) and call.truncated and call.raw == '{"t":"lor"}'
    assert end == ResponseEnd("MAX_TOKENS")


def test_malformed_function_call_is_an_invalid_call_with_the_message() -> None:
    candidate = chunk(finish="MALFORMED_FUNCTION_CALL")
    candidate["candidates"][0]["finishMessage"] = "Malformed function call: f(x="
    call, end = run(candidate)
    assert call == InvalidToolCall(
        0,
        None,
        None,
        "Malformed function call: f(x=",
        (
            ArgumentIssue("missing_name", "the call has no tool name"),
            ArgumentIssue(
                "malformed_call", "the provider reported a malformed function call; its message is the raw text"
            ),
        ),
        anomalies=("malformed_function_call",),
    )
    assert end == ResponseEnd("MALFORMED_FUNCTION_CALL")


def test_several_candidates_each_need_a_finish_reason() -> None:
    first = chunk(fc(name="f", args={}), index=0, finish="STOP")
    second = chunk(fc(name="g", args={}), index=1)
    with pytest.raises(IncompleteStreamError):
        run(first, second)
    out = run(first, second, chunk(index=1, finish="STOP"))
    assert out[:2] == [ToolCall(0, None, "f", {}), ToolCall(0, None, "g", {}, choice=1)]


def test_eof_without_finish_reason_is_incomplete_and_keeps_partial_arguments() -> None:
    with pytest.raises(IncompleteStreamError) as info:
        run(
            chunk(fc(name="f", willContinue=True)),
            chunk(fc(partialArgs=[piece("$.a", numberValue=1)], willContinue=True)),
        )
    assert [c.raw for c in info.value.unfinished] == ['{"a":1}']


def test_a_blocked_prompt_ends_the_response() -> None:
    assert run({"promptFeedback": {"blockReason": "SAFETY"}}) == [ResponseEnd("SAFETY")]


def test_error_chunk() -> None:
    with pytest.raises(ProviderError) as info:
        run(chunk({"text": "x"}), {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}})
    assert (info.value.type, info.value.message) == ("RESOURCE_EXHAUSTED", "quota")


@pytest.mark.parametrize(
    ("payloads", "message"),
    [
        ([chunk(fc())], "has no name, and no streamed call is open"),
        ([chunk(fc(willContinue=True))], "has no name, and no streamed call is open"),
        (
            [chunk(fc(name="f", willContinue=True)), chunk(fc(name="g"))],
            "starts a call while the streamed call at index 0",
        ),
        ([chunk(fc(name="f", args={}, willContinue=True))], "has both args and streamed arguments"),
        (
            [chunk(fc(name="f", partialArgs=[piece("$.s", True, stringValue="a")]))],
            "ends the call while a string piece",
        ),
        ([chunk(fc(name="f", willContinue=True)), chunk(fc(args={}))], "starts a call while the streamed call"),
        (
            [chunk(fc(name="f", id="a", args={}), fc(name="g", id="a", args={}))],
            "call id 'a' was already used at index 0",
        ),
        ([chunk(fc(name="f", partialArgs=[piece("$.a")]))], "must have exactly one of stringValue"),
        ([chunk(fc(name="f", partialArgs=[piece("$.a", numberValue=[1])]))], "numberValue must be a JSON scalar"),
        (
            [chunk(fc(name="f", partialArgs=[piece("$.a", numberValue=1), piece("$.a", numberValue=2)]))],
            "a second value for $.a",
        ),
        ([chunk({"functionCall": []})], "functionCall must be an object"),
        ([{"candidates": {}}], "$.candidates must be list"),
        (["[1]"], "a chunk must be a JSON object, got list"),
    ],
)
def test_bad_shapes_and_sequences(payloads: list[object], message: str) -> None:
    with pytest.raises(ProviderProtocolError, match=re.escape(message)):
        run(*payloads, chunk(finish="STOP"))


# -- the JSONPath assembler -----------------------------------------------------------------------


def test_parse_path() -> None:
    assert parse_path('$.a.b_c[0][\'d e\'][12]["f\\"g"]') == ("a", "b_c", 0, "d e", 12, 'f"g')


@pytest.mark.parametrize("path", ["a.b", "$", "$.", "$[x]", "$..a", "$.a[-1]"])
def test_bad_paths(path: str) -> None:
    with pytest.raises(PathError):
        parse_path(path)


def test_assembler_builds_nested_values_and_joins_string_pieces() -> None:
    assembler = PathAssembler()
    assembler.add("$.items[0].name", "ap", continues=True)
    assert assembler.open_path == ("items", 0, "name")
    assembler.add("$.items[0].name", "ple", continues=True)
    assembler.add("$.items[0].name", "", continues=False)
    assembler.add("$.items[1]", 2, continues=False)
    assembler.add("$.grid[0][0]", True, continues=False)
    assembler.add("$.grid[0][1]", None, continues=False)
    assert assembler.value == {"items": [{"name": "apple"}, 2], "grid": [[True, None]]}
    assert assembler.open_path is None


@pytest.mark.parametrize(
    ("pieces", "message"),
    [
        ([("$.a[1]", 1)], "does not follow the 0 element(s)"),
        ([("$.a", 1), ("$.a.b", 2)], "$.a is used both as a value and as an object"),
        ([("$.a[0]", 1), ("$.a.b", 2)], "$.a is used both as an array and as an object"),
        ([("$.a[0]", 1), ("$.a[0][0]", 2)], "$.a[0] is used both as a value and as an array"),
        ([("$[0].a", 1)], "$[0] indexes something that is not an array"),
        ([("$[0]", 1)], "$[0] does not match the container at $"),
        ([("$.a", 1), ("$.a", 1)], "a second value for $.a"),
    ],
)
def test_assembler_refuses_what_it_cannot_place(pieces: list[tuple[str, object]], message: str) -> None:
    assembler = PathAssembler()
    with pytest.raises(PathError, match=re.escape(message)):
        for path, value in pieces:
            assembler.add(path, value, continues=False)


def test_assembler_refuses_to_interleave_or_continue_non_strings() -> None:
    assembler = PathAssembler()
    assembler.add("$.a", "x", continues=True)
    with pytest.raises(PathError, match=r"while the string at \$\.a was still continuing"):
        assembler.add("$.b", "y", continues=False)
    with pytest.raises(PathError, match="only a string can come in pieces"):
        PathAssembler().add("$.n", 1, continues=True)
