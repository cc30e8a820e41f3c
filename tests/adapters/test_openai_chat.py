"""OpenAI Chat: decoded calls written back as the documented assistant and tool messages."""

from __future__ import annotations

import json

from streamkit.adapters import openai_chat

from .cases import BAD_JSON, BAD_JSON_PAYLOAD, SCHEMA, SCHEMA_PAYLOAD, TRUNCATED, TRUNCATED_PAYLOAD, compact, decoded

# choices[0].message of the non-streaming response for the same calls
# (https://platform.openai.com/docs/api-reference/chat/object), request-side fields only.
DOCUMENTED = {
    "role": "assistant",
    "content": "Checking both.",
    "tool_calls": [
        {"id": "call_A", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
        {"id": "call_B", "type": "function", "function": {"name": "get_stock", "arguments": '{"ticker":"AAPL"}'}},
    ],
}


def test_decoded_calls_written_back_equal_the_documented_message() -> None:
    text, calls = decoded("openai_chat")
    assert openai_chat.assistant_message(calls, text=text) == [DOCUMENTED]


def test_no_text_is_null_content() -> None:
    _, calls = decoded("openai_chat")
    assert openai_chat.assistant_message(calls) == [{**DOCUMENTED, "content": None}]


def test_results_are_tool_messages_in_order() -> None:
    _, (weather, stock) = decoded("openai_chat")
    assert openai_chat.tool_results_message([(weather, {"temp_c": 21}), (stock, "182.5")]) == [
        {"role": "tool", "tool_call_id": "call_A", "content": '{"temp_c":21}'},
        {"role": "tool", "tool_call_id": "call_B", "content": "182.5"},
    ]
    assert openai_chat.tool_result_message(weather, [1, 2]) == [
        {"role": "tool", "tool_call_id": "call_A", "content": "[1,2]"}
    ]


def test_errors_go_back_as_tool_messages() -> None:
    assert openai_chat.error_result_message(TRUNCATED) == [
        {"role": "tool", "tool_call_id": "toolu_T", "content": compact(TRUNCATED_PAYLOAD)}
    ]
    messages = openai_chat.tool_results_message([BAD_JSON, SCHEMA])
    assert [json.loads(m["content"]) for m in messages] == [BAD_JSON_PAYLOAD, SCHEMA_PAYLOAD]
    assert [m["tool_call_id"] for m in messages] == ["toolu_J", "toolu_S"]


def test_invalid_calls_are_recorded_with_their_raw_text() -> None:
    (message,) = openai_chat.assistant_message([TRUNCATED, SCHEMA])
    assert [c["function"]["arguments"] for c in message["tool_calls"]] == [TRUNCATED.raw, '{"ticker": 5}']
