"""Bedrock Converse: calls written back as toolUse blocks, results as toolResult blocks."""

from __future__ import annotations

from streamkit.adapters import bedrock

from .cases import HAND_MADE, SCHEMA, SCHEMA_PAYLOAD, TEXT, TRUNCATED, TRUNCATED_PAYLOAD

CALLS = HAND_MADE["bedrock"][:1]

# output.message of the non-streaming Converse response for the same call
# (https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html).
DOCUMENTED = {
    "role": "assistant",
    "content": [
        {"text": "Checking both."},
        {"toolUse": {"toolUseId": "tooluse_A", "name": "get_weather", "input": {"city": "Paris"}}},
    ],
}


def test_calls_written_back_equal_the_documented_message() -> None:
    assert bedrock.assistant_message(CALLS, text=TEXT) == [DOCUMENTED]


def test_all_results_share_one_user_message_and_errors_have_status_error() -> None:
    (weather,) = CALLS
    assert bedrock.tool_results_message([(weather, {"temp_c": 21}), (weather, "21C"), SCHEMA]) == [
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_A", "content": [{"json": {"temp_c": 21}}]}},
                {"toolResult": {"toolUseId": "tooluse_A", "content": [{"text": "21C"}]}},
                {"toolResult": {"toolUseId": "toolu_S", "content": [{"json": SCHEMA_PAYLOAD}], "status": "error"}},
            ],
        }
    ]
    assert bedrock.error_result_message(TRUNCATED) == [
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "toolu_T", "content": [{"json": TRUNCATED_PAYLOAD}], "status": "error"}}
            ],
        }
    ]


def test_ids_outside_the_allowed_characters_are_mapped_the_same_for_call_and_result() -> None:
    kimi = HAND_MADE["bedrock"][1]  # "functions.get_stock:1", as Kimi on Bedrock sends it
    ((block,),) = [m["content"] for m in bedrock.assistant_message([kimi])]
    ((result,),) = [m["content"] for m in bedrock.tool_result_message(kimi, "ok")]
    assert block["toolUse"]["toolUseId"] == result["toolResult"]["toolUseId"]
    assert block["toolUse"]["toolUseId"].startswith("functions_get_stock_1_")
