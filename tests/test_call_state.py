"""A call's provider state travels on the call itself (``state``), for every provider, in one place."""

from __future__ import annotations

import pytest

from streamkit import (
    Assembler,
    CallState,
    InvalidToolCall,
    ProviderProtocolError,
    ToolCall,
    Toolset,
    iter_events,
    iter_tool_calls,
)
from streamkit._accumulator import Accumulator
from streamkit._events import CallDetail, CallEnded, CallOpened, CallReceived, RawCall
from streamkit._types import Call
from streamkit.adapters import ADAPTERS

from .helpers import FIXTURES, one_byte, slug, sse


def wire(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_a_gemini_call_carries_its_signature_and_its_parallel_sibling_none() -> None:
    calls = list(iter_tool_calls([wire("gemini/thought_signatures.sse")], "gemini"))
    assert calls == [
        ToolCall(0, None, "get_weather", {"city": "Paris"}, state={"thoughtSignature": "CiwBcsjafC3z+Vj2wQ=="}),
        ToolCall(1, None, "get_weather", {"city": "Rome"}),
    ]
    assert calls[1].state == {}


def test_a_vertex_streamed_call_carries_the_signature_of_its_first_part() -> None:
    data = wire("gemini/vertex_streamed_arguments.sse")
    calls = list(iter_tool_calls(one_byte(data), "gemini"))
    assert [(call.name, dict(call.state)) for call in calls] == [
        ("cookRecipe", {"thoughtSignature": "EqUCAbcd1234"}),
        ("writeItems", {}),
    ]


def test_the_call_state_event_comes_before_its_call_for_gemini_and_responses() -> None:
    for name in ("gemini/thought_signatures.sse", "openai_responses/text_then_two_calls.sse"):
        events = list(iter_events([wire(name)], slug(name.split("/")[0])))
        for position, event in enumerate(events):
            if isinstance(event, CallState):
                call = next(item for item in events[position:] if isinstance(item, Call))
                assert call.index == event.index
                assert call.state[event.key] == event.value


def test_a_responses_call_carries_its_item_id_even_when_truncated() -> None:
    (call,) = list(iter_tool_calls([wire("openai_responses/incomplete_truncated.sse")], "openai_responses"))
    assert isinstance(call, InvalidToolCall)
    assert call.truncated
    assert call.state == {"id": "fc_A"}


def test_responses_calls_each_carry_their_own_item_id() -> None:
    calls = list(iter_tool_calls([wire("openai_responses/text_then_two_calls.sse")], "openai_responses"))
    assert [(call.id, dict(call.state)) for call in calls] == [
        ("call_A", {"id": "fc_A"}),
        ("call_B", {"id": "fc_B"}),
    ]


def test_a_call_cut_by_a_stream_error_keeps_its_state() -> None:
    assembler = Assembler("openai_responses")
    item = {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "f", "arguments": ""}
    added = {"type": "response.output_item.added", "output_index": 0, "item": item}
    error = {"type": "error", "code": "server_error", "message": "boom"}
    with pytest.raises(Exception) as caught:
        assembler.feed(sse(added, error, named=True))
        assembler.feed(b"")
    (cut,) = caught.value.unfinished  # type: ignore[attr-defined]
    assert cut.state == {"id": "fc_1"}


def test_providers_without_call_state_give_an_empty_one() -> None:
    for name in ("anthropic/text_then_two_calls.sse", "cohere/text_then_two_calls.sse"):
        assert all(call.state == {} for call in iter_tool_calls([wire(name)], slug(name.split("/")[0])))


def test_a_schema_failure_keeps_the_state() -> None:
    tools = [{"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "integer"}}}}]
    calls = list(iter_tool_calls([wire("gemini/thought_signatures.sse")], "gemini", tools=Toolset(tools)))
    assert isinstance(calls[0], InvalidToolCall)
    assert calls[0].errors[0].kind == "schema"
    assert calls[0].state == {"thoughtSignature": "CiwBcsjafC3z+Vj2wQ=="}


def test_the_gemini_adapter_writes_a_calls_signature_back_on_its_part() -> None:
    calls = list(iter_tool_calls([wire("gemini/thought_signatures.sse")], "gemini"))
    (message,) = ADAPTERS["gemini"].assistant_message(calls)
    assert message["parts"] == [
        {
            "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
            "thoughtSignature": "CiwBcsjafC3z+Vj2wQ==",
        },
        {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
    ]


# -- the accumulator's rules ---------------------------------------------------------------


def test_state_before_the_call_starts_is_kept_for_it() -> None:
    acc = Accumulator("x")
    assert acc.feed(CallDetail(0, "k", "v")) == (CallDetail(0, "k", "v"),)
    (raw,) = acc.feed(CallReceived(0, None, "f", {}))
    assert raw == RawCall(0, None, "f", {}, state={"k": "v"})


def test_state_while_the_call_is_open_is_kept_for_it() -> None:
    acc = Accumulator("x")
    acc.feed(CallOpened(2, "a", "f"))
    acc.feed(CallDetail(2, "k", "v"))
    acc.feed(CallDetail(2, "k", "v"))  # the same again: nothing changes
    (raw,) = acc.feed(CallEnded(2))
    assert isinstance(raw, RawCall)
    assert raw.state == {"k": "v"}


def test_state_after_the_call_was_delivered_is_a_protocol_error() -> None:
    acc = Accumulator("x")
    acc.feed(CallReceived(0, None, "f", {}))
    message = "event 'CallDetail', call index 0: not allowed in state DELIVERED: the call was already delivered"
    with pytest.raises(ProviderProtocolError, match=message):
        acc.feed(CallDetail(0, "k", "v"))


def test_state_that_changes_is_a_protocol_error() -> None:
    acc = Accumulator("x")
    acc.feed(CallOpened(0, "a", "f"))
    acc.feed(CallDetail(0, "k", "v"))
    with pytest.raises(ProviderProtocolError, match="call state 'k' changed from 'v' to 'w'"):
        acc.feed(CallDetail(0, "k", "w"))


def test_a_call_without_state_shows_none_in_its_repr_and_one_with_state_its_keys() -> None:
    assert repr(ToolCall(0, "a", "f", {})) == "ToolCall(index=0, id='a', name='f', input={})"
    assert repr(ToolCall(0, "a", "f", {}, state={"id": "fc_1"})).endswith("input={}, state=[id])")
