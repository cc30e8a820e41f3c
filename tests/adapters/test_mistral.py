"""Mistral: calls written back with 9-character ids, the same id on each result."""

from __future__ import annotations

import re

from streamkit import ToolCall
from streamkit.adapters import mistral

from .cases import HAND_MADE, SCHEMA, SCHEMA_PAYLOAD, TEXT, WEATHER, compact

CALLS = HAND_MADE["mistral"]

# choices[0].message of the non-streaming response for the same calls
# (https://docs.mistral.ai/capabilities/function_calling/).
DOCUMENTED = {
    "role": "assistant",
    "content": "Checking both.",
    "tool_calls": [
        {"id": "gSIMJiOkT", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
        {"id": "Xq2LmPz8r", "type": "function", "function": {"name": "get_stock", "arguments": '{"ticker":"AAPL"}'}},
    ],
}


def test_calls_written_back_equal_the_documented_message() -> None:
    assert mistral.assistant_message(CALLS, text=TEXT) == [DOCUMENTED]
    assert mistral.assistant_message(CALLS)[0]["content"] == ""


def test_results_name_the_tool_and_the_call() -> None:
    weather, _ = CALLS
    assert mistral.tool_results_message([(weather, "21C"), SCHEMA]) == [
        {"role": "tool", "name": "get_weather", "tool_call_id": "gSIMJiOkT", "content": "21C"},
        {"role": "tool", "name": "get_stock", "tool_call_id": "3NixDlNCU", "content": compact(SCHEMA_PAYLOAD)},
    ]
    # "toolu_S" is not a Mistral id: the call in the history gets the same mapped id
    assert mistral.assistant_message([SCHEMA])[0]["tool_calls"][0]["id"] == "3NixDlNCU"


def test_other_ids_are_mapped_to_nine_characters_consistently() -> None:
    calls = [
        ToolCall(0, "call_A", "get_weather", WEATHER),
        ToolCall(1, "toolu_01A09q90qw90lq917835lq9", "get_weather", WEATHER),
        ToolCall(2, None, "get_weather", WEATHER),
    ]
    (message,) = mistral.assistant_message(calls)
    ids = [entry["id"] for entry in message["tool_calls"]]
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", i) for i in ids) and len(set(ids)) == 3
    assert [m["tool_call_id"] for m in mistral.tool_results_message([(c, "ok") for c in calls])] == ids
    assert mistral.assistant_message(calls) == [message]  # the same every time
