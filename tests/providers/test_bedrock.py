"""Bedrock ConverseStream: binary frames and boto3's decoded events give the same calls."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import botocore.session
import pytest
from botocore.eventstream import EventStream
from botocore.parsers import EventStreamJSONParser
from hypothesis import given
from hypothesis import strategies as st

from streamkit import (
    Assembler,
    IncompleteStreamError,
    InvalidToolCall,
    LimitExceededError,
    ProviderError,
    ProviderProtocolError,
    ResponseEnd,
    StreamkitError,
    TextDelta,
    Thinking,
    ToolCall,
    iter_events,
)
from streamkit._turn_types import RedactedThinking, StreamEvent

from ..damage import damage
from ..eventstream_encode import encode_message, error, event, exception
from ..helpers import FIXTURES, events, split_at

START = event("messageStart", {"role": "assistant", "p": "abc"})
USAGE = {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12}


def start(index: int, tool_id: str = "tooluse_1", name: str = "f", **extra: Any) -> bytes:
    body = {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": tool_id, "name": name, **extra}}}
    return event("contentBlockStart", body)


def delta(index: int, **body: Any) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": body, "p": "ab"})


def args(index: int, text: str) -> bytes:
    return delta(index, toolUse={"input": text})


def stop(index: int) -> bytes:
    return event("contentBlockStop", {"contentBlockIndex": index})


def message_stop(reason: str = "tool_use") -> bytes:
    return event("messageStop", {"stopReason": reason, "p": "abcdef"})


METADATA = event("metadata", {"usage": USAGE, "metrics": {"latencyMs": 100}, "p": "a"})


def run(*messages: bytes, end: bool = True) -> list[object]:
    tail = [message_stop(), METADATA] if end else []
    return events(b"".join([START, *messages, *tail]), "bedrock")


def test_a_call_is_delivered_at_its_block_stop() -> None:
    assembler = Assembler("bedrock")
    assert assembler.feed(START + start(1, "tooluse_A", "get") + args(1, '{"a":') + args(1, " 1}")) == []
    assert assembler.feed(stop(1)) == [ToolCall(1, "tooluse_A", "get", {"a": 1})]
    assert assembler.feed(message_stop()) == []
    assert assembler.feed(METADATA) == [ResponseEnd("tool_use", USAGE)]
    assert assembler.finished


def test_text_and_calls_keyed_by_content_block_index() -> None:
    out = run(delta(0, text="Hi"), stop(0), start(1, "t1", "a"), args(1, "{}"), stop(1), start(2, "t2", "b"), stop(2))
    assert out == [
        TextDelta("Hi", index=0),  # the content block it came in
        ToolCall(1, "t1", "a", {}),
        ToolCall(2, "t2", "b", {}),
        ResponseEnd("tool_use", USAGE),
    ]


def test_empty_start_and_server_tools_are_not_calls() -> None:
    server_result = {"contentBlockIndex": 2, "start": {"toolResult": {"toolUseId": "srv", "type": "web"}}}
    out = run(
        event("contentBlockStart", {"contentBlockIndex": 0, "start": {}}),
        delta(0, text="x"),
        stop(0),
        start(1, "srv", "web", type="server_tool_use"),
        args(1, '{"q": 1}'),
        stop(1),
        event("contentBlockStart", server_result),
        delta(2, toolResult=[{"text": "result"}]),
        stop(2),
    )
    assert out == [TextDelta("x", index=0), ResponseEnd("tool_use", USAGE)]


def test_reasoning_deltas_are_a_thinking_value_not_a_call() -> None:
    out = run(delta(0, reasoningContent={"text": "hmm"}), stop(0))
    assert out == [Thinking("hmm"), ResponseEnd("tool_use", USAGE)]


def test_every_shape_of_a_reasoning_delta_decodes() -> None:
    """``ReasoningContentBlockDelta`` is a union: ``text``, ``signature`` (strings) or
    ``redactedContent`` (a blob: base64 text in the JSON body)."""
    out = run(
        delta(0, reasoningContent={"text": "Let me "}),
        delta(0, reasoningContent={"text": "think."}),
        delta(0, reasoningContent={"signature": "c2lnbmVk"}),
        stop(0),
        delta(1, reasoningContent={"redactedContent": "AAEC/w=="}),
        stop(1),
    )
    assert out == [Thinking("Let me think.", "c2lnbmVk"), RedactedThinking("AAEC/w=="), ResponseEnd("tool_use", USAGE)]


def test_redacted_reasoning_from_boto3_is_its_base64_text() -> None:
    items: list[dict[str, Any]] = [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"redactedContent": b"\0\1\2\xff"}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    assert from_dicts(iter(items)) == [RedactedThinking("AAEC/w=="), ResponseEnd("end_turn")]


def test_redacted_reasoning_of_another_type_is_a_protocol_error() -> None:
    match = r"\$\.delta\.reasoningContent\.redactedContent must be base64 text or bytes, got int"
    with pytest.raises(ProviderProtocolError, match=match):
        run(delta(0, reasoningContent={"redactedContent": 5}))


def test_max_tokens_cuts_the_open_call() -> None:
    out = events(START + start(0) + args(0, '{"a": "b') + message_stop("max_tokens") + METADATA, "bedrock")
    call = out[0]
    assert isinstance(call, InvalidToolCall) and call.truncated and call.raw == '{"a": "b'
    assert out[1:] == [ResponseEnd("max_tokens", USAGE)]


def test_max_tokens_after_the_cut_calls_block_stop_still_cuts_it() -> None:
    out = events(START + start(0) + args(0, '{"a": "b') + stop(0) + message_stop("max_tokens") + METADATA, "bedrock")
    call = out[0]
    assert isinstance(call, InvalidToolCall) and call.truncated and call.raw == '{"a": "b'


def test_metadata_before_message_stop_ends_at_message_stop() -> None:
    assembler = Assembler("bedrock")
    assert assembler.feed(START + METADATA) == []
    assert assembler.feed(message_stop("end_turn")) == [ResponseEnd("end_turn", USAGE)]


def test_no_metadata_after_message_stop_ends_normally_at_the_end_of_input() -> None:
    assert events(START + message_stop("end_turn"), "bedrock") == [ResponseEnd("end_turn", None)]


def test_no_message_stop_is_an_incomplete_stream() -> None:
    with pytest.raises(IncompleteStreamError) as info:
        events(START + start(0) + args(0, '{"a"'), "bedrock")
    assert [call.raw for call in info.value.unfinished] == ['{"a"']


def test_an_exception_message_is_a_provider_error() -> None:
    with pytest.raises(ProviderError) as info:
        run(start(0), args(0, "{"), exception("modelStreamErrorException", "The model failed."), end=False)
    assert (info.value.type, info.value.message) == ("modelStreamErrorException", "The model failed.")
    assert str(info.value) == "bedrock reported an error modelStreamErrorException: The model failed."
    assert [call.raw for call in info.value.unfinished] == ["{"]


def test_an_error_message_is_a_provider_error_with_its_code() -> None:
    with pytest.raises(ProviderError) as info:
        run(error("InternalFailure", "Something broke."), end=False)
    assert (info.value.type, info.value.message) == ("InternalFailure", "Something broke.")


@pytest.mark.parametrize(
    ("messages", "match"),
    [
        pytest.param([args(0, "{}")], "call index 0: not allowed in state IDLE: the call never started"),
        pytest.param([start(0), args(0, "{}"), stop(0), args(0, "x")], "not allowed in state DELIVERED"),
        pytest.param([start(0, "t1"), start(0, "t2")], "call id changed from 't1' to 't2'"),
        # A new id on the index after its stop is a new call (the accumulator's rule 10); the same id is not.
        pytest.param([start(0, "t1"), stop(0), start(0, "t1")], "already delivered"),
        pytest.param([event("contentBlockStart", {"start": {}})], r"\$\.contentBlockIndex must be int, got missing"),
        pytest.param(
            [event("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {"name": "f"}}})],
            r"\$\.start\.toolUse\.toolUseId must be str, got missing",
        ),
        pytest.param([start(0), delta(0, toolUse={"input": 5})], r"\$\.delta\.toolUse\.input must be str, got int"),
        pytest.param([delta(0, text=5)], r"\$\.delta\.text must be str, got int"),
        pytest.param([event("messageStop", {})], r"\$\.stopReason must be str, got missing"),
        pytest.param([event("contentBlockStop", [1])], "the event body must be an object, got list"),
    ],
)
def test_bad_events_are_protocol_errors(messages: list[bytes], match: str) -> None:
    with pytest.raises(ProviderProtocolError, match=match):
        run(*messages)


# -- boto3's decoded events -------------------------------------------------------------------


def boto3_events(data: bytes) -> Iterator[dict[str, Any]]:
    """The dicts boto3's ``converse_stream()["stream"]`` yields for these bytes (botocore's parser)."""

    class Body:
        def stream(self) -> Iterator[bytes]:
            yield data

        def close(self) -> None:
            pass

    yield from EventStream(Body(), _stream_shape(), EventStreamJSONParser(), "ConverseStream")


@functools.cache
def _stream_shape() -> Any:
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    return model.operation_model("ConverseStream").output_shape.members["stream"]


def from_dicts(items: Iterator[dict[str, Any]]) -> list[StreamEvent]:
    assembler = Assembler("bedrock")
    out: list[StreamEvent] = []
    for item in items:
        out += assembler.feed_payload(item)
    return out + assembler.flush()


@pytest.mark.parametrize(
    "case",
    [
        "text_then_two_calls",
        "no_arguments",
        "max_tokens_truncated",
        "reasoning_then_tool_use",
        "redacted_reasoning_then_tool_use",  # the blob: base64 text in the bytes, bytes from botocore
    ],
)
def test_boto3_events_give_what_the_bytes_give(case: str) -> None:
    data = (FIXTURES / "bedrock" / f"{case}.bin").read_bytes()
    items = list(boto3_events(data))
    assert "p" not in items[0]["messageStart"]  # botocore drops the padding
    expected = list(iter_events([data], "bedrock"))
    assert from_dicts(iter(items)) == expected
    assert any(isinstance(item, ToolCall) for item in expected)


def test_a_boto3_exception_event_is_a_provider_error() -> None:
    with pytest.raises(ProviderError) as info:
        from_dicts(iter([{"messageStart": {"role": "assistant"}}, {"throttlingException": {"message": "slow"}}]))
    assert (info.value.type, info.value.message) == ("throttlingException", "slow")


@pytest.mark.parametrize(
    ("item", "match"),
    [
        pytest.param({"a": {}, "b": {}}, r"one key, the event type; got keys \['a', 'b'\]"),
        pytest.param({}, r"one key, the event type; got keys \[\]"),
        pytest.param(["messageStart"], "one key, the event type; got list"),
        pytest.param({1: {}}, r"one key, the event type; got keys \[1\]"),
        pytest.param({"messageStop": "x"}, "the event body must be an object, got str"),
    ],
)
def test_boto3_events_of_the_wrong_shape(item: Any, match: str) -> None:
    with pytest.raises(ProviderProtocolError, match=match):
        Assembler("bedrock").feed_payload(item)


def test_the_fixtures_are_what_the_encoder_writes() -> None:
    from ..eventstream_encode import fixtures as written
    from ..helpers import fixtures

    on_disk = {fixture.path.stem: fixture.path.read_bytes() for fixture in fixtures("bedrock")}
    assert on_disk == written()
    assert {"text_then_two_calls", "no_arguments", "error_midstream", "max_tokens_truncated"} <= set(on_disk)


@pytest.mark.asyncio
async def test_async_over_an_async_source_matches_the_sync_twin() -> None:
    from streamkit import aiter_events

    data = (FIXTURES / "bedrock" / "text_then_two_calls.bin").read_bytes()

    async def drip() -> AsyncIterator[bytes]:
        for start in range(0, len(data), 7):
            yield data[start : start + 7]

    got = [item async for item in aiter_events(drip(), "bedrock")]
    assert got == list(iter_events([data], "bedrock"))
    assert sum(isinstance(item, ToolCall) for item in got) == 2


_FRAGMENTS = st.lists(st.text(max_size=6), max_size=6)


@st.composite
def conversations(draw: st.DrawFn) -> bytes:
    """A random well-formed ConverseStream: text blocks and calls with random fragments."""
    out = [START]
    for index in range(draw(st.integers(min_value=0, max_value=4))):
        if draw(st.booleans()):
            out += [delta(index, text=t) for t in draw(_FRAGMENTS)]
        else:
            out.append(start(index, f"tooluse_{index}", draw(st.sampled_from(["f", "g"]))))
            out += [args(index, t) for t in draw(_FRAGMENTS)]
        out.append(stop(index))
    out += [message_stop(draw(st.sampled_from(["tool_use", "end_turn", "max_tokens"]))), METADATA]
    return b"".join(out)


@given(data=conversations(), cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=20))
def test_boto3_events_and_any_chunking_of_the_bytes_agree(data: bytes, cuts: list[int]) -> None:
    expected = from_dicts(boto3_events(data))
    assert list(iter_events(split_at(data, cuts), "bedrock")) == expected
    assert isinstance(expected[-1], ResponseEnd)


@st.composite
def _valid_events(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """A well-formed ConverseStream as (event type, body) pairs."""
    out: list[tuple[str, Any]] = [("messageStart", {"role": "assistant"})]
    for index in range(draw(st.integers(min_value=0, max_value=3))):
        kind = draw(st.sampled_from(["text", "tool", "server"]))
        if kind == "text":
            out += [("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": "hi"}})]
        else:
            tool = {"toolUseId": f"t{index}", "name": "f", **({"type": "server_tool_use"} if kind == "server" else {})}
            out.append(("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": tool}}))
            pieces = draw(st.sampled_from([[], [""], ["{", "}"], ['{"a":', " 1}"]]))
            out += [
                ("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": p}}}) for p in pieces
            ]
        out.append(("contentBlockStop", {"contentBlockIndex": index}))
    out.append(("messageStop", {"stopReason": draw(st.sampled_from(["tool_use", "max_tokens"]))}))
    out.append(("metadata", {"usage": {"inputTokens": 1}, "metrics": {"latencyMs": 1}}))
    return out


@given(
    events_=_valid_events(),
    mutations=st.lists(st.tuples(st.integers(min_value=0), st.data()), min_size=1, max_size=3),
    boto3_shape=st.booleans(),
)
def test_any_damaged_event_gives_values_or_a_typed_error(
    events_: list[tuple[str, Any]], mutations: list[tuple[int, st.DataObject]], boto3_shape: bool
) -> None:
    for position, data in mutations:
        name, body = events_[position % len(events_)]
        events_[position % len(events_)] = (name, damage(body, data))
    assembler = Assembler("bedrock")
    try:
        for name, body in events_:
            if boto3_shape:
                assembler.feed_payload({name: body})
            else:
                assembler.feed_payload(body, name)
        assembler.flush()
    except StreamkitError:
        pass  # every failure is one of streamkit's own errors, never a TypeError or KeyError


# -- a bad message: the calls completed before it first, and nothing after the end is read -------

BAD_MESSAGES = {
    "no-event-type": encode_message([(":message-type", 7, "event")], b"{}"),
    "bad-message-type": encode_message([(":message-type", 7, "weird")], b"{}"),
    "payload-not-utf8": encode_message([(":message-type", 7, "event"), (":event-type", 7, "x")], b'{"a":"\xff"}'),
}


def outcome(chunks: list[bytes]) -> tuple[list[object], str | None]:
    got: list[object] = []
    try:
        got.extend(iter_events(chunks, "bedrock"))
    except StreamkitError as exc:
        return got, type(exc).__name__
    return got, None


@pytest.mark.parametrize("bad", sorted(BAD_MESSAGES))
@given(cuts=st.lists(st.integers(min_value=0, max_value=1 << 12), max_size=6))
def test_a_bad_message_fails_after_the_calls_before_it_at_any_chunking(bad: str, cuts: list[int]) -> None:
    data = START + start(1, "t1", "a") + args(1, "{}") + stop(1) + BAD_MESSAGES[bad] + message_stop() + METADATA
    expected = ([ToolCall(1, "t1", "a", {})], "FramingError")
    assert outcome([data]) == expected
    assert outcome(split_at(data, [c % (len(data) + 1) for c in cuts])) == expected


@pytest.mark.parametrize("bad", sorted(BAD_MESSAGES))
@given(cuts=st.lists(st.integers(min_value=0, max_value=1 << 12), max_size=6))
def test_a_bad_message_after_the_end_is_never_read(bad: str, cuts: list[int]) -> None:
    data = START + start(1, "t1", "a") + args(1, "{}") + stop(1) + message_stop() + METADATA + BAD_MESSAGES[bad]
    expected = ([ToolCall(1, "t1", "a", {}), ResponseEnd("tool_use", USAGE)], None)
    assert outcome([data]) == expected
    assert outcome(split_at(data, [c % (len(data) + 1) for c in cuts])) == expected


def test_a_message_past_max_event_bytes_is_a_limit() -> None:
    big = args(1, "x" * 500)
    with pytest.raises(LimitExceededError) as info:
        events(START + start(1, "t1", "a") + big, "bedrock", max_event_bytes=len(big) - 1)
    assert (info.value.limit, info.value.value, info.value.provider) == ("max_event_bytes", len(big) - 1, "bedrock")
    assert [c.raw for c in info.value.unfinished] == [""]
