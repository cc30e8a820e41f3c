"""Ollama /api/chat: whole calls numbered by position, the done line, errors, bad shapes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamkit import (
    Assembler,
    FramingError,
    IncompleteStreamError,
    ProviderError,
    ProviderProtocolError,
    ResponseEnd,
    StreamkitError,
    TextDelta,
    ToolCall,
)

from ..damage import damage
from ..helpers import events


def line(**fields: Any) -> dict[str, Any]:
    return {"model": "qwen3", "created_at": "2026-01-01T00:00:00Z", **fields}


def message(content: Any = "", **extra: Any) -> dict[str, Any]:
    return line(message={"role": "assistant", "content": content, **extra}, done=False)


def call(name: str, arguments: Any, call_id: Any = None, index: int = 0) -> dict[str, Any]:
    entry: dict[str, Any] = {"function": {"index": index, "name": name, "arguments": arguments}}
    if call_id is not None:
        entry["id"] = call_id
    return entry


DONE = line(message={"role": "assistant", "content": ""}, done=True, done_reason="stop", eval_count=3)


def ndjson(*payloads: object) -> bytes:
    return b"".join((p if isinstance(p, str) else json.dumps(p)).encode() + b"\n" for p in payloads)


def run(*payloads: object) -> list[object]:
    return events(ndjson(*payloads), "ollama")


def test_calls_at_index_0_are_numbered_by_their_position_across_lines() -> None:
    out = run(
        message(tool_calls=[call("a", {"x": 1}, "call_1"), call("b", {}, "call_2")]),
        message(tool_calls=[call("c", {"y": [1, 2]}, "call_3")]),
        DONE,
    )
    assert out == [
        ToolCall(0, "call_1", "a", {"x": 1}),
        ToolCall(1, "call_2", "b", {}),
        ToolCall(2, "call_3", "c", {"y": [1, 2]}),
        ResponseEnd("stop", {"eval_count": 3}),
    ]


def test_a_call_is_delivered_the_moment_its_line_is_read() -> None:
    assembler = Assembler("ollama")
    assert assembler.feed(ndjson(message(tool_calls=[call("f", {"a": 1}, "call_1")]))[:-1]) == []
    assert assembler.feed(b"\n") == [ToolCall(0, "call_1", "f", {"a": 1})]
    assert not assembler.finished


def test_text_comes_through_and_thinking_is_ignored() -> None:
    out = run(message("Hel", thinking="hmm"), message("lo", thinking=" more"), DONE)
    assert out == [TextDelta("Hel"), TextDelta("lo"), ResponseEnd("stop", {"eval_count": 3})]


def test_a_call_on_the_done_line_comes_before_the_end() -> None:
    last = line(
        message={"role": "assistant", "content": "", "thinking": "x", "tool_calls": [call("f", {"q": "z"})]},
        done=True,
        done_reason="stop",
        prompt_eval_count=10,
        eval_count=4,
        total_duration=99,
    )
    assert run(last) == [
        ToolCall(0, None, "f", {"q": "z"}),
        ResponseEnd("stop", {"prompt_eval_count": 10, "eval_count": 4}),
    ]


def test_done_reason_is_the_stop_reason_and_usage_may_be_missing() -> None:
    out = run(message("cut"), line(message={"role": "assistant", "content": ""}, done=True, done_reason="length"))
    assert out[-1] == ResponseEnd("length", None)
    assert run(line(done=True))[-1] == ResponseEnd(None, None)


def test_an_empty_id_is_no_id() -> None:
    assert run(message(tool_calls=[call("f", {}, "")]), DONE)[0] == ToolCall(0, None, "f", {})


def test_lines_after_done_are_ignored() -> None:
    assert run(DONE, "not json at all") == [ResponseEnd("stop", {"eval_count": 3})]


def test_an_error_line_is_a_provider_error_after_the_calls_before_it() -> None:
    assembler = Assembler("ollama")
    wire = ndjson(
        message(tool_calls=[call("f", {"a": 1}, "call_1")]), {"error": "model runner has unexpectedly stopped"}
    )
    assert assembler.feed(wire) == [ToolCall(0, "call_1", "f", {"a": 1})]
    with pytest.raises(ProviderError) as info:
        assembler.flush()
    assert (info.value.type, info.value.message) == (None, "model runner has unexpectedly stopped")
    assert str(info.value) == "ollama reported an error: model runner has unexpectedly stopped"


def test_an_error_object_from_a_proxy_keeps_its_type() -> None:
    with pytest.raises(ProviderError) as info:
        run({"error": {"type": "overloaded", "message": "busy"}})
    assert (info.value.type, info.value.message) == ("overloaded", "busy")


def test_a_null_error_field_is_no_error() -> None:
    out = run({**message("a"), "error": None}, {**DONE, "error": None})
    assert out == [TextDelta("a"), ResponseEnd("stop", {"eval_count": 3})]


def test_no_done_line_is_an_incomplete_stream() -> None:
    with pytest.raises(IncompleteStreamError):
        run(message(tool_calls=[call("f", {})]))


def test_a_cut_last_line_is_a_framing_error() -> None:
    with pytest.raises(FramingError, match="ended inside a line"):
        events(ndjson(message("a"))[:-1], "ollama")


@pytest.mark.parametrize(
    ("payload", "match"),
    [
        pytest.param([1, 2], "a line must be a JSON object, got list", id="not-object"),
        pytest.param(line(message="hi"), r"\$\.message must be dict, got str", id="message-not-object"),
        pytest.param(message(tool_calls={"a": 1}), r"\$\.message\.tool_calls must be list", id="calls-not-list"),
        pytest.param(
            message(tool_calls=["x"]), r"\$\.message\.tool_calls\[0\] must be an object", id="call-not-object"
        ),
        pytest.param(
            message(tool_calls=[call("a", {}), {"id": "x"}]),
            r"\$\.message\.tool_calls\[1\]\.function must be dict, got missing",
            id="no-function",
        ),
        pytest.param(
            message(tool_calls=[{"function": {"arguments": {}}}]),
            r"\$\.message\.tool_calls\[0\]\.function\.name must be str, got missing",
            id="no-name",
        ),
        pytest.param(message(tool_calls=[call("a", {}, 5)]), r"tool_calls\[0\]\.id must be str, got int", id="bad-id"),
        pytest.param(message(content=5), r"\$\.message\.content must be str", id="content-not-str"),
        pytest.param(line(done="yes"), r"\$\.done must be bool", id="done-not-bool"),
        pytest.param("{not json", "event data is not JSON", id="not-json"),
    ],
)
def test_bad_shapes_name_the_json_path(payload: object, match: str) -> None:
    with pytest.raises(ProviderProtocolError, match=match) as info:
        run(payload, DONE)
    assert info.value.provider == "ollama"


def test_arguments_go_to_the_normalizer_as_sent() -> None:
    from streamkit import InvalidToolCall

    out = run(message(tool_calls=[call("a", [1]), call("b", '{"s": 1}'), call("c", None)]), DONE)
    first = out[0]
    assert isinstance(first, InvalidToolCall) and [e.kind for e in first.errors] == ["not_an_object"]
    assert out[1:3] == [ToolCall(1, None, "b", {"s": 1}), ToolCall(2, None, "c", {})]


def test_the_fixtures_cover_the_required_cases() -> None:
    from ..helpers import fixtures

    cases = {fixture.path.stem for fixture in fixtures("ollama")}
    assert {"text_then_two_calls", "no_arguments", "error_midstream", "length_limit", "cut_mid_line"} <= cases


@pytest.mark.asyncio
async def test_async_over_an_async_source_matches_the_sync_twin() -> None:
    from collections.abc import AsyncIterator

    from streamkit import aiter_events, iter_events

    from ..helpers import FIXTURES

    data = (FIXTURES / "ollama" / "text_then_two_calls.ndjson").read_bytes()

    async def drip() -> AsyncIterator[bytes]:
        for start in range(0, len(data), 13):
            yield data[start : start + 13]

    got = [item async for item in aiter_events(drip(), "ollama")]
    assert got == list(iter_events([data], "ollama"))
    assert sum(isinstance(item, ToolCall) for item in got) == 2


@st.composite
def _valid_lines(draw: st.DrawFn) -> list[Any]:
    """A well-formed /api/chat stream as parsed lines."""
    out: list[Any] = [message("Hi", thinking="x")]
    for number in range(draw(st.integers(min_value=0, max_value=3))):
        calls = [call("f", {"a": [1, {"b": None}]}, f"call_{number}_{i}") for i in range(draw(st.integers(1, 2)))]
        out.append(message(tool_calls=calls))
    out.append({**DONE, "prompt_eval_count": 2, "message": {"role": "assistant", "content": "", "tool_calls": []}})
    return out


@given(
    lines_=_valid_lines(),
    mutations=st.lists(st.tuples(st.integers(min_value=0), st.data()), min_size=1, max_size=3),
)
def test_any_damaged_line_gives_values_or_a_typed_error(lines_: list[Any], mutations: list[tuple[int, Any]]) -> None:
    for position, data in mutations:
        lines_[position % len(lines_)] = damage(lines_[position % len(lines_)], data)
    assembler = Assembler("ollama")
    try:
        for payload in lines_:
            assembler.feed_payload(payload)
        assembler.flush()
    except StreamkitError:
        pass  # every failure is one of streamkit's own errors, never a TypeError or KeyError
