"""Ollama: calls written back with object arguments, results as tool messages naming the tool."""

from __future__ import annotations

from streamkit import ToolCall
from streamkit.adapters import ollama

from .cases import BAD_JSON, BAD_JSON_PAYLOAD, HAND_MADE, SCHEMA, TEXT, WEATHER, compact

CALLS = HAND_MADE["ollama"]

# "message" of the non-streaming /api/chat response for the same calls
# (https://docs.ollama.com/capabilities/tool-calling), without the decoder-only function.index.
DOCUMENTED = {
    "role": "assistant",
    "content": "Checking both.",
    "tool_calls": [
        {"id": "call_k3j9x0qa", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        {"id": "call_p2m7b1zz", "function": {"name": "get_stock", "arguments": {"ticker": "AAPL"}}},
    ],
}


def test_calls_written_back_equal_the_documented_message() -> None:
    assert ollama.assistant_message(CALLS, text=TEXT) == [DOCUMENTED]


def test_calls_without_ids_are_written_without() -> None:
    assert ollama.assistant_message([ToolCall(0, None, "get_weather", WEATHER)]) == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": WEATHER}}],
        }
    ]


def test_results_and_errors_are_tool_messages() -> None:
    weather, _ = CALLS
    assert ollama.tool_results_message([(weather, {"temp_c": 21}), BAD_JSON]) == [
        {"role": "tool", "tool_name": "get_weather", "content": '{"temp_c":21}'},
        {"role": "tool", "tool_name": "get_weather", "content": compact(BAD_JSON_PAYLOAD)},
    ]


def test_invalid_calls_are_recorded_with_the_input_they_had() -> None:
    (message,) = ollama.assistant_message([BAD_JSON, SCHEMA])
    assert [c["function"]["arguments"] for c in message["tool_calls"]] == [{}, {"ticker": 5}]
