"""OpenAI Responses: call_id handed out, end markers, final-arguments cross-check, terminal events."""

from __future__ import annotations

import gc
import json
import re
import tracemalloc
from typing import Any

import pytest

from streamkit import (
    ArgumentIssue,
    Assembler,
    CallState,
    IncompleteStreamError,
    InvalidToolCall,
    ProviderError,
    ProviderProtocolError,
    ResponseEnd,
    ServerToolUse,
    TextDelta,
    ToolCall,
)
from streamkit._events import ArgumentsDelta, ArgumentsFinal, Frame
from streamkit.providers import OpenAIResponsesDecoder

from ..helpers import events, sse


def added(index: int, item_id: str, call_id: str | None, name: str, kind: str = "function_call") -> dict[str, Any]:
    item = {"id": item_id, "type": kind, "arguments": "", "call_id": call_id, "name": name}
    return {"type": "response.output_item.added", "output_index": index, "item": item}


def delta(item_id: str | None, text: str, **where: Any) -> dict[str, Any]:
    payload = {"type": "response.function_call_arguments.delta", "delta": text, **where}
    if item_id is not None:
        payload["item_id"] = item_id
    return payload


def args_done(item_id: str, index: int, arguments: str) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.done",
        "item_id": item_id,
        "output_index": index,
        "arguments": arguments,
    }


def item_done(index: int, arguments: str, kind: str = "function_call") -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": {"type": kind, "arguments": arguments}}


COMPLETED = {"type": "response.completed", "response": {"status": "completed", "usage": {"total_tokens": 3}}}


def run(*payloads: object) -> list[object]:
    """The values a stream makes, less the ``CallState`` events (each call carries its item id as ``state``)."""
    return [item for item in events(sse(*payloads, named=True), "openai_responses") if not isinstance(item, CallState)]


def test_call_id_is_handed_out_and_the_call_ends_at_its_done_event() -> None:
    assembler = Assembler("openai_responses")
    feed = assembler.feed
    opened = feed(sse(added(1, "fc_1", "call_1", "f"), delta("fc_1", '{"a":'), delta("fc_1", "1}"), named=True))
    assert opened == [CallState(1, "id", "fc_1")]  # the item's own id, for the history
    assert feed(sse(args_done("fc_1", 1, '{"a":1}'), named=True)) == [
        ToolCall(1, "call_1", "f", {"a": 1}, state={"id": "fc_1"})
    ]
    assert feed(sse(item_done(1, '{"a":1}'), named=True)) == []  # the second end marker is a repeat
    assert feed(sse(COMPLETED, named=True)) == [ResponseEnd("completed", {"total_tokens": 3})]


def test_an_item_announced_twice_keeps_its_fragments() -> None:
    again = added(0, "fc_1", "call_1", "f")
    out = run(
        added(0, "fc_1", "call_1", "f"),
        delta("fc_1", '{"a":'),
        again,
        delta("fc_1", "1}"),
        args_done("fc_1", 0, '{"a":1}'),
        COMPLETED,
    )
    assert out[0] == ToolCall(
        0, "call_1", "f", {"a": 1}, anomalies=("id_repeated", "name_repeated"), state={"id": "fc_1"}
    )


def test_output_item_done_alone_ends_a_call() -> None:
    out = run(added(0, "fc_1", "call_1", "f"), delta("fc_1", "{}"), item_done(0, "{}"), COMPLETED)
    assert out[0] == ToolCall(0, "call_1", "f", {}, state={"id": "fc_1"})


def test_final_arguments_that_differ_make_the_call_invalid() -> None:
    (call, _) = run(
        added(0, "fc_1", "call_1", "f"), delta("fc_1", '{"n":1}'), args_done("fc_1", 0, '{"n":2}'), COMPLETED
    )
    assert call == InvalidToolCall(
        0,
        "call_1",
        "f",
        '{"n":1}',
        (
            ArgumentIssue(
                "arguments_mismatch",
                "the provider's final arguments text differs from the streamed fragments (kept as the raw text); "
                "neither can be trusted",
            ),
        ),
        anomalies=("final_arguments_differ",),
        state={"id": "fc_1"},
    )


def test_no_fragments_take_the_final_text() -> None:
    out = run(added(0, "fc_1", "call_1", "f"), delta("fc_1", ""), args_done("fc_1", 0, '{"x":1}'), COMPLETED)
    assert out[0] == ToolCall(0, "call_1", "f", {"x": 1}, anomalies=("arguments_in_done",), state={"id": "fc_1"})


def test_fragments_located_by_output_index_or_call_id() -> None:
    out = run(
        added(0, "call_1", "call_1", "f"),
        delta(None, '{"a":', output_index=0),
        delta(None, "1}", call_id="call_1"),
        item_done(0, '{"a":1}'),
        COMPLETED,
    )
    assert out[0] == ToolCall(0, "call_1", "f", {"a": 1}, state={"id": "call_1"})


def test_text_is_text_and_server_tool_items_are_not_calls() -> None:
    text = {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "delta": "Hi"}
    out = run(
        text,
        added(1, "ws_1", None, "web_search", kind="web_search_call"),
        item_done(1, "{}", "web_search_call"),
        COMPLETED,
    )
    web_search = ServerToolUse({"type": "web_search_call", "arguments": "{}"})
    assert out == [TextDelta("Hi", index=0), web_search, ResponseEnd("completed", {"total_tokens": 3})]


def test_incomplete_truncates_open_calls() -> None:
    incomplete = {
        "type": "response.incomplete",
        "response": {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
    }
    call, end = run(added(0, "fc_1", "call_1", "f"), delta("fc_1", '{"a'), incomplete)
    assert isinstance(call, InvalidToolCall) and call.truncated and call.raw == '{"a'
    assert end == ResponseEnd("max_output_tokens")


@pytest.mark.parametrize(
    ("payload", "kind", "message"),
    [
        (
            {"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": None},
            "rate_limit_exceeded",
            "slow down",
        ),
        ({"type": "error", "error": {"type": "server_error", "message": "boom"}}, "server_error", "boom"),
        (
            {"type": "response.failed", "response": {"error": {"code": "server_error", "message": "x"}}},
            "server_error",
            "x",
        ),
        ({"type": "response.failed", "response": {"error": None}}, None, "the response failed"),
    ],
)
def test_errors(payload: dict[str, Any], kind: str | None, message: str) -> None:
    with pytest.raises(ProviderError) as info:
        run(added(0, "fc_1", "call_1", "f"), delta("fc_1", '{"a'), payload)
    assert (info.value.type, info.value.message) == (kind, message)
    assert [c.raw for c in info.value.unfinished] == ['{"a']


def test_eof_without_a_terminal_event_is_incomplete() -> None:
    with pytest.raises(IncompleteStreamError):
        run(added(0, "fc_1", "call_1", "f"), delta("fc_1", "{}"), args_done("fc_1", 0, "{}"))


def test_done_marker_from_a_compatible_server_ends_the_stream() -> None:
    data = sse(added(0, "fc_1", "call_1", "f"), args_done("fc_1", 0, "{}"), named=True) + b"data: [DONE]\n\n"
    assert events(data, "openai_responses")[-1] == ResponseEnd(None)


@pytest.mark.parametrize(
    ("payloads", "message"),
    [
        ([delta("fc_9", "{")], "names no function_call or custom_tool_call item that was added"),
        ([added(0, "fc_1", "c", "f"), delta("fc_1", "{", output_index=3)], "item 'fc_1' is at output_index 0, not 3"),
        ([added(0, "fc_1", "c", "f"), args_done("fc_1", 0, "{}"), delta("fc_1", "x")], "already delivered"),
        ([{"type": "response.output_item.added", "item": {}}], "$.output_index must be int, got missing"),
        ([{"sequence_number": 1}], "event data has no 'type'"),
    ],
)
def test_bad_sequences_and_shapes(payloads: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(ProviderProtocolError, match=re.escape(message)):
        run(*payloads, COMPLETED)


# -- the arguments are held once, by the accumulator -------------------------------------------------


def frame(payload: dict[str, Any]) -> Frame:
    return Frame(payload["type"], json.dumps(payload))


def test_the_decoder_keeps_no_fragment_and_hands_the_final_text_on() -> None:
    decoder = OpenAIResponsesDecoder()
    fragment = frame(delta("fc_1", "x" * 4096))
    decoder.feed(frame(added(0, "fc_1", "call_1", "f")))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(256):  # 1 MiB of arguments, each fragment's event dropped at once
            (event,) = decoder.feed(fragment)
            assert type(event) is ArgumentsDelta and len(event.text) == 4096
            del event
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 64 * 1024  # the 1 MiB of fragments is not held here (it was, once per call)
    assert decoder.feed(frame(args_done("fc_1", 0, "{}"))) == [ArgumentsFinal(0, "{}")]
    assert decoder.feed(frame(item_done(0, "{}"))) == [ArgumentsFinal(0, "{}")]  # the accumulator's repeat


def test_an_open_call_holds_its_arguments_about_once() -> None:
    assembler = Assembler("openai_responses")
    assembler.feed(sse(added(0, "fc_1", "call_1", "f"), named=True))
    chunk = sse(*[delta("fc_1", "x" * 4096)] * 16, named=True)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(16):  # 1 MiB of arguments in 4 KiB fragments, the call still open
            assert assembler.feed(chunk) == []
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert (1 << 20) <= held < 1.2 * (1 << 20)
