"""Argument previews: exact partial values, throttling, and calls that previews never change."""

from __future__ import annotations

from typing import Any

import pytest

import streamkit
from streamkit import ArgumentsPreview, InvalidToolCall, ResponseEnd, ToolCall, UsageError
from streamkit._events import ArgumentsDelta, CallEnded, CallOpened, RawCall, RawPreview
from streamkit._preview import NO_PREVIEW, PartialJSON
from streamkit._previewing import PreviewingAccumulator

from .helpers import sse


def shown(text: str, step: int = 1) -> list[Any]:
    """Every preview of ``text`` fed ``step`` characters at a time."""
    partial = PartialJSON()
    out = []
    for end in range(step, len(text) + step, step):
        value = partial.update(text[:end])
        if value is not NO_PREVIEW:
            out.append(value)
    return out


def test_each_preview_shows_only_final_values_and_the_growing_string() -> None:
    text = '{"a": [1, 22], "s": "x\\ny", "t": true}'
    assert shown(text) == [
        {},
        {"a": []},
        {"a": [1]},
        {"a": [1, 22]},
        {"a": [1, 22], "s": ""},
        {"a": [1, 22], "s": "x"},
        {"a": [1, 22], "s": "x\n"},
        {"a": [1, 22], "s": "x\ny"},
        {"a": [1, 22], "s": "x\ny", "t": True},
    ]


def test_half_escapes_and_surrogate_pairs_wait_for_their_last_character() -> None:
    text = '{"e": "\\u00e9\\ud83d\\ude80!"}'
    assert shown(text) == [{}, {"e": ""}, {"e": "é"}, {"e": "é🚀"}, {"e": "é🚀!"}]


def test_a_prefix_that_cannot_become_json_stops_the_previews() -> None:
    assert shown('{"a": 1}} {"b": 2}') == [{}, {"a": 1}]
    assert shown('{"a": 1} x') == [{}, {"a": 1}]
    assert shown("1, 2") == []


def test_integers_beyond_64_bits_are_exact_in_previews() -> None:
    assert shown('{"n": 123456789012345678901234567, "m": 1}')[-2:] == [
        {"n": 123456789012345678901234567},
        {"n": 123456789012345678901234567, "m": 1},
    ]


def fragmented(text: str, size: int) -> bytes:
    """An Anthropic stream with one call whose arguments come in ``size``-character fragments."""
    events: list[object] = [
        {"type": "message_start", "message": {"id": "msg_1"}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        },
    ]
    for start in range(0, len(text), size):
        delta = {"type": "input_json_delta", "partial_json": text[start : start + size]}
        events.append({"type": "content_block_delta", "index": 0, "delta": delta})
    events += [{"type": "content_block_stop", "index": 0}, {"type": "message_stop"}]
    return sse(*events, named=True)


def test_previews_come_before_the_call_which_is_unchanged() -> None:
    data = fragmented('{"path": "a.py", "n": 12}', 6)
    plain = list(streamkit.iter_events([data], "anthropic"))
    with_previews = list(streamkit.iter_events([data], "anthropic", previews=True))
    assert with_previews == [
        ArgumentsPreview(0, "toolu_1", "f", {}),
        ArgumentsPreview(0, "toolu_1", "f", {"path": "a."}),
        ArgumentsPreview(0, "toolu_1", "f", {"path": "a.py"}),
        ArgumentsPreview(0, "toolu_1", "f", {"path": "a.py", "n": 12}),
        *plain,
    ]
    assert plain == [ToolCall(0, "toolu_1", "f", {"path": "a.py", "n": 12}), ResponseEnd(None)]


def test_previews_never_create_calls() -> None:
    data = fragmented('{"a": 1}}', 1)
    items = list(streamkit.iter_events([data], "anthropic", previews=True))
    assert items[:2] == [ArgumentsPreview(0, "toolu_1", "f", {}), ArgumentsPreview(0, "toolu_1", "f", {"a": 1})]
    assert items[2:] == list(streamkit.iter_events([data], "anthropic"))
    assert isinstance(items[2], InvalidToolCall)
    assert [issue.kind for issue in items[2].errors] == ["concatenated_json"]


def test_a_call_cut_off_gets_previews_and_stays_truncated() -> None:
    data = fragmented('{"a": "xyz', 4).replace(b"event: content_block_stop", b"event: ping")
    data = data.replace(b'"type": "content_block_stop"', b'"type": "ping"')
    items = list(streamkit.iter_events([data], "anthropic", previews=True))
    assert items[:3] == [
        ArgumentsPreview(0, "toolu_1", "f", {}),
        ArgumentsPreview(0, "toolu_1", "f", {"a": "x"}),
        ArgumentsPreview(0, "toolu_1", "f", {"a": "xyz"}),
    ]
    assert items[3:] == list(streamkit.iter_events([data], "anthropic"))
    assert isinstance(items[3], InvalidToolCall) and items[3].truncated


def test_throttled_previews_fire_at_exact_lengths() -> None:
    accumulator = PreviewingAccumulator("test", every=10, growth=2.0)
    accumulator.feed(CallOpened(0, "c", "f"))
    lengths = []
    for _ in range(40):
        for item in accumulator.feed(ArgumentsDelta(0, "ab")):
            assert isinstance(item, RawPreview)
            lengths.append(len(item.text))
    # due at 10, then at max(10 + 10, 2 * 10) = 20, max(30, 40) = 40 and max(50, 80) = 80
    assert lengths == [10, 20, 40, 80]
    (raw,) = accumulator.feed(CallEnded(0))
    assert isinstance(raw, RawCall)
    assert raw.arguments == "ab" * 40


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"preview_every": 10}, "need previews=True"),
        ({"previews": True, "preview_every": 0}, "preview_every must be an int of at least 1, got 0"),
        ({"previews": True, "preview_growth": 0.5}, r"preview_growth must be a number from 1.0 to 1e\+06, got 0.5"),
        # A factor whose product with a length is no finite number would fail mid-stream.
        ({"previews": True, "preview_growth": float("inf")}, "preview_growth must be a number from 1.0"),
        ({"previews": True, "preview_growth": 1e308}, "preview_growth must be a number from 1.0"),
        ({"previews": True, "preview_growth": float("nan")}, "preview_growth must be a number from 1.0"),
    ],
)
def test_bad_preview_options_are_usage_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        streamkit.Assembler("anthropic", **options)


def test_each_call_has_its_own_previews() -> None:
    def chunk(index: int, arguments: str, **start: str) -> dict[str, object]:
        function = {"arguments": arguments, **({"name": start["name"]} if start else {})}
        entry = {"index": index, "function": function, **({"id": start["id"]} if start else {})}
        return {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}, "finish_reason": None}]}

    data = sse(
        chunk(0, '{"a": "x', id="call_0", name="f"),
        chunk(1, '{"b": [1,', id="call_1", name="g"),
        chunk(0, 'y"}'),
        chunk(1, " 2]}"),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        done=True,
    )
    items = list(streamkit.iter_events([data], "openai_chat", previews=True))
    assert items == [
        ArgumentsPreview(0, "call_0", "f", {"a": "x"}),
        ArgumentsPreview(1, "call_1", "g", {"b": [1]}),
        ArgumentsPreview(0, "call_0", "f", {"a": "xy"}),
        ArgumentsPreview(1, "call_1", "g", {"b": [1, 2]}),
        # Call 0's text after call 1 started: the sequential order broken, noted.
        ToolCall(0, "call_0", "f", {"a": "xy"}, anomalies=("fragment_after_next_call",)),
        ToolCall(1, "call_1", "g", {"b": [1, 2]}),
        ResponseEnd("tool_calls"),
    ]


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_arguments_too_deep_to_read_give_no_preview_and_are_too_deep(opener: str) -> None:
    # 1,000 levels with a 19-digit integer: the exact parser for big integers recurses, so a
    # preview this deep would overflow the stack. Past max_depth a call is too_deep anyway.
    closer = "]" if opener == "[" else "}"
    text = '{"a":' + opener * 1000 + "1234567890123456789" + closer * 1000 + "}"
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [_entry(text)]}, "finish_reason": None}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    items = list(streamkit.iter_events([sse(chunk, end, done=True)], "openai_chat", previews=True))
    assert [type(item) for item in items] == [InvalidToolCall, ResponseEnd]
    assert [issue.kind for issue in items[0].errors] == ["too_deep"]  # type: ignore[union-attr]


def test_a_preview_stops_past_max_depth_and_shows_what_was_shallow_enough() -> None:
    partial = PartialJSON(max_depth=2)
    assert partial.update('{"a": [1, ') == {"a": [1]}
    assert partial.update('{"a": [1, [') is NO_PREVIEW
    assert partial.update('{"a": [1, [2]]}') is NO_PREVIEW


def _entry(arguments: str) -> dict[str, object]:
    return {"index": 0, "id": "call_0", "type": "function", "function": {"name": "f", "arguments": arguments}}
