"""Anthropic: decoded calls written back as the documented tool_use and tool_result blocks."""

from __future__ import annotations

import json

from streamkit import ToolCall
from streamkit.adapters import anthropic

from .cases import BAD_JSON, BAD_JSON_PAYLOAD, SCHEMA, SCHEMA_PAYLOAD, TRUNCATED, TRUNCATED_PAYLOAD, compact, decoded

# The "content" of the non-streaming response for the same calls, as a history message
# (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use).
DOCUMENTED = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Checking both."},
        {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {"city": "Paris", "units": "c"}},
        {"type": "tool_use", "id": "toolu_B", "name": "get_stock", "input": {"ticker": "AAPL"}},
    ],
}


def test_decoded_calls_written_back_equal_the_documented_message() -> None:
    text, calls = decoded("anthropic")
    assert anthropic.assistant_message(calls, text=text) == [DOCUMENTED]
    assert anthropic.assistant_message(calls) == [{"role": "assistant", "content": DOCUMENTED["content"][1:]}]


def test_all_results_of_a_turn_share_one_user_message() -> None:
    _, (weather, stock) = decoded("anthropic")
    assert anthropic.tool_results_message([(weather, {"temp_c": 21}), (stock, "182.5"), BAD_JSON]) == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_A", "content": '{"temp_c":21}'},
                {"type": "tool_result", "tool_use_id": "toolu_B", "content": "182.5"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_J",
                    "content": compact(BAD_JSON_PAYLOAD),
                    "is_error": True,
                },
            ],
        }
    ]


def test_errors_are_tool_results_with_is_error() -> None:
    assert anthropic.error_result_message(TRUNCATED) == [
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_T",
                    "content": compact(TRUNCATED_PAYLOAD),
                    "is_error": True,
                }
            ],
        }
    ]
    ((block,),) = [m["content"] for m in anthropic.error_result_message(SCHEMA)]
    assert json.loads(block["content"]) == SCHEMA_PAYLOAD


def test_invalid_calls_are_recorded_with_the_input_they_had() -> None:
    (message,) = anthropic.assistant_message([TRUNCATED, SCHEMA])
    assert [block["input"] for block in message["content"]] == [{}, {"ticker": 5}]


def test_ids_outside_the_allowed_characters_are_mapped_the_same_for_call_and_result() -> None:
    call = ToolCall(0, "functions.get_stock:1", "get_stock", {"ticker": "AAPL"})
    ((block,),) = [m["content"] for m in anthropic.assistant_message([call])]
    ((result,),) = [m["content"] for m in anthropic.tool_result_message(call, "ok")]
    assert block["id"] == result["tool_use_id"]
    assert block["id"].startswith("functions_get_stock_1_") and len(block["id"]) == len("functions_get_stock_1_") + 8
