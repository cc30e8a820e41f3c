"""A ``Turn`` and its items as JSON values and back (what LangChain and openai-agents store)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamkit import (
    ArgumentIssue,
    CallState,
    CustomToolCall,
    InvalidToolCall,
    MessageItem,
    ReasoningItem,
    RedactedThinking,
    ServerToolResult,
    ServerToolUse,
    TextDelta,
    TextSignature,
    Thinking,
    TokenUsage,
    ToolCall,
    Turn,
    TurnItem,
    UsageError,
)
from streamkit._turn_types import _TURN_ITEMS
from streamkit.integrations._turn_json import ITEM_TYPES, item_from_json, item_json, turn_from_json, turn_json

BIG = 2**80 + 1
SIGNATURE = "EqQBCkgIARABGAIiQL+/3mWx0rPqk0sN8e1a2/fz+g==\n\u00e9"
ITEMS: list[TurnItem] = [
    TextDelta("Let me look.", choice=1, index=0),
    ToolCall(
        3,
        "toolu_9",
        "get_weather",
        {"city": "Paris", "n": BIG, "neg": -BIG, "f": 0.1, "deep": [{"x": None, "t": True}]},
        choice=1,
        anomalies=("id arrived twice",),
        state={"thoughtSignature": SIGNATURE},
    ),
    InvalidToolCall(
        4,
        None,
        "write_file",
        '{"path": "a", "n": 1',
        (ArgumentIssue("truncated", "cut off"), ArgumentIssue("schema", "not an int", path="$.n", position=12)),
        anomalies=("a", "b"),
        input={"big": BIG},
        state={"id": "fc_1"},
    ),
    CustomToolCall(5, "call_p", "apply_patch", "*** Begin Patch\n*** End Patch", state={"type": "custom_tool_call"}),
    Thinking("I should call it.", SIGNATURE, choice=2),
    Thinking("unsigned"),
    RedactedThinking("c2lnbmF0dXJl" * 40),
    ReasoningItem({"id": "rs_1", "encrypted_content": SIGNATURE, "summary": [], "n": BIG}),
    MessageItem({"id": "msg_1", "phase": "final", "content": [{"type": "output_text", "text": "hi"}]}),
    ServerToolUse({"id": "srvtoolu_1", "name": "web_search", "input": {"query": "paris"}}),
    ServerToolResult({"type": "web_search_tool_result", "content": []}, choice=3),
    TextSignature(SIGNATURE),
    CallState(3, "thoughtSignature", SIGNATURE, choice=1),
]


def stored(value: Any) -> Any:
    """``value`` as a store gives it back: written as JSON text and read again."""
    return json.loads(json.dumps(value))


def test_the_class_table_is_every_turn_item() -> None:
    assert list(ITEM_TYPES.values()) == list(_TURN_ITEMS)
    assert {type(item) for item in ITEMS} == set(_TURN_ITEMS)


@pytest.mark.parametrize("tag", ["type", "kind"], ids=["written now", "stored under the old tag"])
@pytest.mark.parametrize("item", ITEMS, ids=lambda item: type(item).__name__)
def test_every_item_comes_back_exactly(item: TurnItem, tag: str) -> None:
    written = item_json(item)
    assert written["type"] == type(item).__name__
    data = stored({tag: written.pop("type"), **written})
    back = item_from_json(data, "here")
    assert back == item
    assert type(back) is type(item)
    assert repr(back) == repr(item)


def test_big_integers_and_signatures_keep_every_digit_and_byte() -> None:
    call = item_from_json(stored(item_json(ITEMS[1])), "here")
    assert isinstance(call, ToolCall)
    assert call.input["n"] == BIG and call.input["neg"] == -BIG
    assert call.state["thoughtSignature"] == SIGNATURE
    invalid = item_from_json(stored(item_json(ITEMS[2])), "here")
    assert isinstance(invalid, InvalidToolCall)
    assert invalid.errors[1] == ArgumentIssue("schema", "not an int", path="$.n", position=12)


def test_a_whole_turn_comes_back_with_its_end() -> None:
    turn = Turn(
        "anthropic",
        tuple(ITEMS),
        "tool_use",
        {"input_tokens": BIG},
        choice=1,
        finish="tool_calls",
        tokens=TokenUsage(input_tokens=10, output_tokens=BIG),
    )
    back = turn_from_json(stored(turn_json(turn)), "here")
    assert back == turn
    assert (back.finish, back.tokens) == ("tool_calls", TokenUsage(input_tokens=10, output_tokens=BIG))


def test_a_turn_without_an_end_comes_back() -> None:
    turn = Turn("gemini", (TextDelta("hi"),))
    data = stored(turn_json(turn))
    assert data == {
        "provider": "gemini",
        "items": [{"type": "TextDelta", "text": "hi", "choice": 0, "index": None}],
        "stop_reason": None,
        "usage": None,
        "choice": 0,
        "finish": None,
        "tokens": None,
    }
    back = turn_from_json(data, "here")
    assert back == turn and back.finish is None and back.tokens is None


CALL = {"type": "ToolCall", "index": 0, "id": "c", "name": "f", "input": {}}
INVALID = {"type": "InvalidToolCall", "index": 0, "id": None, "name": "f", "raw": "{", "errors": []}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"type": "Nope"}, r"^here carries streamkit data that is not a turn item: \{'type': 'Nope'\}$"),
        ({"kind": "ToolCall"}, r"^here is not a ToolCall streamkit wrote: it has no 'index'$"),  # the old tag is read
        (["ToolCall"], r"^here carries streamkit data that is not a turn item: \['ToolCall'\]$"),
        ({"type": 3}, r"^here carries streamkit data that is not a turn item"),
        ({**CALL, "index": "0"}, r"^here is not a ToolCall streamkit wrote: its 'index' is str '0', not an int$"),
        ({**CALL, "index": True}, r"^here is not a ToolCall streamkit wrote: its 'index' is bool True, not an int$"),
        ({**CALL, "id": 7}, r"^here is not a ToolCall streamkit wrote: its 'id' is int 7, not a str or null$"),
        ({**CALL, "input": [1]}, r"^here is not a ToolCall streamkit wrote: its 'input' is list \[1\], not an object$"),
        ({**CALL, "anomalies": "x"}, r"its 'anomalies' is str 'x', not a list$"),
        ({**CALL, "anomalies": [1]}, r"its 'anomalies' is int 1, not a str$"),
        ({**CALL, "state": {"id": 1}}, r"its 'state' is int 1, not a str$"),
        ({**CALL, "colour": "red"}, r"^here is not a ToolCall streamkit wrote: it has no field 'colour'$"),
        (
            {key: v for key, v in CALL.items() if key != "name"},
            r"^here is not a ToolCall streamkit wrote: it has no 'name'$",
        ),
        (
            {**INVALID, "errors": {}},
            r"^here is not an InvalidToolCall streamkit wrote: its 'errors' is dict \{\}, not a list$",
        ),
        ({**INVALID, "errors": ["x"]}, r"its 'errors' is str 'x', not an object$"),
        (
            {**INVALID, "errors": [{"kind": "truncated"}]},
            r"^here\['errors'\]\[0\] is not an ArgumentIssue streamkit wrote: it has no 'message'$",
        ),
        (
            {**INVALID, "errors": [{"kind": "truncated", "message": "m", "position": "3"}]},
            r"\[0\] is not an ArgumentIssue streamkit wrote: its 'position' is str '3', not an int or null$",
        ),
        (
            {"type": "Thinking", "text": None},
            r"^here is not a Thinking streamkit wrote: its 'text' is null, not a str$",
        ),
        ({"type": "ReasoningItem", "item": "rs_1"}, r"its 'item' is str 'rs_1', not an object$"),
    ],
)
def test_bad_stored_items_are_usage_errors_naming_what_is_wrong(data: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        item_from_json(data, "here")


TURN = {"provider": "anthropic", "items": []}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("turn", r"^here is not a turn streamkit wrote: 'turn'$"),
        ({"provider": "anthropic"}, r"^here is not a turn streamkit wrote"),
        ({"provider": "anthropic", "items": {}}, r"^here is not a turn streamkit wrote"),
        ({"items": []}, r"^here is not a Turn streamkit wrote: it has no 'provider'$"),
        ({**TURN, "finish": "done"}, r"its 'finish' is str 'done', not one of 'stop', .*'other' or null$"),
        ({**TURN, "usage": "x"}, r"its 'usage' is str 'x', not an object or null$"),
        (
            {**TURN, "tokens": {"input_tokens": "1"}},
            r"^here\['tokens'\] is not a TokenUsage streamkit wrote: its 'input_tokens'",
        ),
        (
            {**TURN, "items": [{"type": "Nope"}]},
            r"^here\['items'\]\[0\] carries streamkit data that is not a turn item",
        ),
        (
            {**TURN, "items": [CALL, {**CALL, "index": None}]},
            r"^here\['items'\]\[1\] is not a ToolCall streamkit wrote",
        ),
    ],
)
def test_bad_stored_turns_are_usage_errors_naming_what_is_wrong(data: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        turn_from_json(data, "here")
