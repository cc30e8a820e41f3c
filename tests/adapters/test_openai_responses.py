"""OpenAI Responses: calls written back as function_call items, results as function_call_output."""

from __future__ import annotations

from streamkit.adapters import openai_responses

from .cases import BAD_JSON, BAD_JSON_PAYLOAD, HAND_MADE, TEXT, TRUNCATED, TRUNCATED_PAYLOAD, compact

CALLS = HAND_MADE["openai_responses"]

# The output items of the non-streaming response for the same calls, as input items
# (https://platform.openai.com/docs/guides/function-calling?api-mode=responses); the output's
# item ids ("fc_...") and "status" are optional on input and not kept by the decoder.
DOCUMENTED = [
    {"type": "message", "role": "assistant", "content": "Checking both."},
    {"type": "function_call", "call_id": "call_A", "name": "get_weather", "arguments": '{"city":"Paris"}'},
    {"type": "function_call", "call_id": "call_B", "name": "get_stock", "arguments": '{"ticker":"AAPL"}'},
]


def test_calls_written_back_equal_the_documented_items() -> None:
    assert openai_responses.assistant_message(CALLS, text=TEXT) == DOCUMENTED
    assert openai_responses.assistant_message(CALLS) == DOCUMENTED[1:]


def test_results_and_errors_are_function_call_outputs() -> None:
    weather, stock = CALLS
    assert openai_responses.tool_results_message([(weather, {"temp_c": 21}), (stock, "182.5"), BAD_JSON]) == [
        {"type": "function_call_output", "call_id": "call_A", "output": '{"temp_c":21}'},
        {"type": "function_call_output", "call_id": "call_B", "output": "182.5"},
        {"type": "function_call_output", "call_id": "toolu_J", "output": compact(BAD_JSON_PAYLOAD)},
    ]
    assert openai_responses.error_result_message(TRUNCATED) == [
        {"type": "function_call_output", "call_id": "toolu_T", "output": compact(TRUNCATED_PAYLOAD)}
    ]
    assert openai_responses.tool_result_message(weather, "sunny") == [
        {"type": "function_call_output", "call_id": "call_A", "output": "sunny"}
    ]


def test_invalid_calls_are_recorded_with_their_raw_text() -> None:
    assert openai_responses.assistant_message([TRUNCATED])[0]["arguments"] == TRUNCATED.raw
