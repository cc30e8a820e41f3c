"""Cohere v2: calls written back with their tool plan, results as tool messages of documents."""

from __future__ import annotations

from streamkit.adapters import cohere

from .cases import BAD_JSON, BAD_JSON_PAYLOAD, HAND_MADE, TRUNCATED, compact

CALLS = HAND_MADE["cohere"]

# response.message of the non-streaming response for the same calls, as a history message
# (https://docs.cohere.com/docs/tool-use-overview).
DOCUMENTED = {
    "role": "assistant",
    "tool_plan": "I will check both.",
    "tool_calls": [
        {
            "id": "get_weather_e8p4pn45zt0t",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        },
        {
            "id": "get_stock_pyxssbwnq9fq",
            "type": "function",
            "function": {"name": "get_stock", "arguments": '{"ticker":"AAPL"}'},
        },
    ],
}


def test_calls_written_back_equal_the_documented_message() -> None:
    assert cohere.assistant_message(CALLS, text="I will check both.") == [DOCUMENTED]


def test_text_alone_is_plain_content() -> None:
    assert cohere.assistant_message([], text="Done.") == [{"role": "assistant", "content": "Done."}]


def test_results_and_errors_are_tool_messages_of_documents() -> None:
    weather, _ = CALLS
    assert cohere.tool_results_message([(weather, {"temp_c": 21}), BAD_JSON]) == [
        {
            "role": "tool",
            "tool_call_id": "get_weather_e8p4pn45zt0t",
            "content": [{"type": "document", "document": {"data": '{"temp_c":21}'}}],
        },
        {
            "role": "tool",
            "tool_call_id": "toolu_J",
            "content": [{"type": "document", "document": {"data": compact(BAD_JSON_PAYLOAD)}}],
        },
    ]


def test_invalid_calls_are_recorded_with_their_raw_text() -> None:
    (message,) = cohere.assistant_message([TRUNCATED])
    assert message["tool_calls"][0]["function"]["arguments"] == TRUNCATED.raw
