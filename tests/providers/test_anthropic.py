"""Anthropic Messages: end markers, truncation, server tools, errors."""

from __future__ import annotations

from typing import Any

import pytest

from streamkit import InvalidToolCall, ProviderError, ProviderProtocolError, ResponseEnd, TextDelta, ToolCall

from ..helpers import events, sse


def start(index: int, kind: str = "tool_use", **block: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": {"type": kind, **block}}


def pj(index: int, text: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": text}}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


MSG = {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 5}}}
END = [
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}},
    {"type": "message_stop"},
]


def run(*payloads: object) -> list[object]:
    return events(sse(MSG, *payloads, *END, named=True), "anthropic")


def test_call_is_delivered_at_its_block_stop_before_the_rest() -> None:
    from streamkit import Assembler

    assembler = Assembler("anthropic")
    assert assembler.feed(sse(MSG, start(1, id="toolu_1", name="f", input={}), pj(1, "{}"), named=True)) == []
    assert assembler.feed(sse(stop(1), named=True)) == [ToolCall(1, "toolu_1", "f", {})]


def test_placeholder_input_is_ignored_and_the_deltas_are_the_arguments() -> None:
    out = run(start(0, id="t", name="f", input={}), pj(0, '{"a": '), pj(0, "1}"), stop(0))
    assert out == [ToolCall(0, "t", "f", {"a": 1}), ResponseEnd("tool_use", {"input_tokens": 5, "output_tokens": 7})]


def test_text_deltas_come_through_in_order() -> None:
    text = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}
    assert run(start(0, "text", text=""), text, stop(0))[0] == TextDelta("Hi", index=0)


def test_server_tools_are_never_handed_out() -> None:
    out = run(start(0, "server_tool_use", id="srvtoolu_1", name="web_search"), pj(0, '{"q": 1}'), stop(0))
    assert not any(isinstance(item, ToolCall | InvalidToolCall) for item in out)


def test_input_json_delta_for_a_text_block_is_an_error() -> None:
    with pytest.raises(ProviderProtocolError, match="call index 0: not allowed in state IDLE: the call never started"):
        run(start(0, "text", text=""), pj(0, "{}"))


def test_a_block_without_stop_is_truncated_by_the_stop_reason() -> None:
    out = events(
        sse(
            MSG,
            start(0, id="t", name="f"),
            pj(0, '{"a": 1}'),
            {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}},
            {"type": "message_stop"},
            named=True,
        ),
        "anthropic",
    )
    call = out[0]
    assert isinstance(call, InvalidToolCall) and call.truncated and call.raw == '{"a": 1}'
    assert out[1] == ResponseEnd("max_tokens", {"input_tokens": 5})


def stopped(reason: str) -> list[dict[str, Any]]:
    return [{"type": "message_delta", "delta": {"stop_reason": reason}}, {"type": "message_stop"}]


def test_a_call_whose_text_stops_mid_json_waits_at_its_stop_for_the_stop_reason() -> None:
    """The output limit cut the call, and its ``content_block_stop`` came before the stop reason
    that says so: it is a cut, as when the stop reason comes first; a call that parses is not held."""
    from streamkit import Assembler

    assembler = Assembler("anthropic")
    head = sse(MSG, start(0, id="t0", name="f"), pj(0, "{}"), stop(0), start(1, id="t1", name="g"), named=True)
    assert assembler.feed(head) == [ToolCall(0, "t0", "f", {})]
    assert assembler.feed(sse(pj(1, '{"a": "sunny an'), stop(1), named=True)) == []  # held
    out = assembler.feed(sse(*stopped("max_tokens"), named=True))
    [cut] = out[:1]
    assert isinstance(cut, InvalidToolCall)
    assert (cut.id, cut.raw, [issue.kind for issue in cut.errors]) == ("t1", '{"a": "sunny an', ["truncated"])
    assert out[1:] == [ResponseEnd("max_tokens", {"input_tokens": 5})]


@pytest.mark.parametrize("reason", ["tool_use", "end_turn"])
def test_a_call_whose_text_stops_mid_json_is_invalid_json_when_no_limit_cut_it(reason: str) -> None:
    out = events(
        sse(MSG, start(0, id="t", name="f"), pj(0, '{"a": 1'), stop(0), *stopped(reason), named=True), "anthropic"
    )
    call = out[0]
    assert isinstance(call, InvalidToolCall)
    assert [(issue.kind, issue.position) for issue in call.errors] == [("invalid_json", 7)]


def test_a_call_waiting_for_its_stop_reason_is_cut_when_the_stream_ends_without_one() -> None:
    out = events(
        sse(MSG, start(0, id="t", name="f"), pj(0, '{"a": 1'), stop(0), {"type": "message_stop"}, named=True),
        "anthropic",
    )
    call = out[0]
    assert isinstance(call, InvalidToolCall) and [issue.kind for issue in call.errors] == ["truncated"]
    assert out[1] == ResponseEnd(None, {"input_tokens": 5})


def test_a_call_waiting_for_its_stop_reason_is_in_the_error_that_ends_the_stream() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(ProviderError) as info:
        events(sse(MSG, start(0, id="t", name="f"), pj(0, '{"a": 1'), stop(0), error, named=True), "anthropic")
    [call] = info.value.unfinished
    assert (call.raw, [issue.kind for issue in call.errors]) == ('{"a": 1', ["truncated"])


def test_a_block_index_reused_while_its_call_waits_delivers_that_call_first() -> None:
    out = run(start(0, id="t1", name="f"), pj(0, '{"a": 1'), stop(0), start(0, id="t2", name="g"), pj(0, "{}"), stop(0))
    first, second = out[:2]
    assert isinstance(first, InvalidToolCall) and first.id == "t1" and first.errors[0].kind == "invalid_json"
    assert second == ToolCall(0, "t2", "g", {}, anomalies=("index_reused",))


def test_error_event_after_completed_calls() -> None:
    data = sse(
        MSG,
        start(0, id="t0", name="f"),
        pj(0, "{}"),
        stop(0),
        start(1, id="t1", name="f"),
        pj(1, '{"a'),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        named=True,
    )
    from streamkit import iter_events

    seen: list[object] = []
    with pytest.raises(ProviderError) as info:
        seen.extend(iter_events([data], "anthropic"))
    assert seen == [ToolCall(0, "t0", "f", {})]
    assert (info.value.type, info.value.message) == ("overloaded_error", "Overloaded")
    assert [c.raw for c in info.value.unfinished] == ['{"a']


def test_spliced_message_start_is_an_error_and_a_repeated_one_is_not() -> None:
    assert run(MSG, start(0, id="t", name="f"), stop(0))[0] == ToolCall(0, "t", "f", {})
    other = {"type": "message_start", "message": {"id": "msg_2"}}
    with pytest.raises(ProviderProtocolError, match="second message_start"):
        run(other)


def test_unknown_events_and_pings_are_ignored() -> None:
    out = run({"type": "ping"}, {"type": "brand_new_event", "x": 1}, start(0, id="t", name="f"), stop(0))
    assert out[0] == ToolCall(0, "t", "f", {})


def test_same_call_id_twice_is_an_error() -> None:
    with pytest.raises(ProviderProtocolError, match="already used"):
        run(start(0, id="t", name="f"), stop(0), start(1, id="t", name="f"), stop(1))
