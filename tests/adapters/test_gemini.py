"""Gemini: calls written back as functionCall parts, results as functionResponse parts."""

from __future__ import annotations

from streamkit import ArgumentIssue, InvalidToolCall, TextDelta, ToolCall, Turn
from streamkit.adapters import gemini
from streamkit.providers.gemini.history import SKIP_SIGNATURE as SKIP

from .cases import HAND_MADE, SCHEMA, SCHEMA_PAYLOAD, TEXT, TRUNCATED, TRUNCATED_PAYLOAD

CALLS = HAND_MADE["gemini"]
MALFORMED = ArgumentIssue("malformed_call", "unreadable")

# candidates[0].content of the non-streaming response for the same calls (Gemini 2.5 gives no
# ids; https://ai.google.dev/gemini-api/docs/function-calling).
DOCUMENTED = {
    "role": "model",
    "parts": [
        {"text": "Checking both."},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
        {"functionCall": {"name": "get_stock", "args": {"ticker": "AAPL"}}},
    ],
}


def test_calls_written_back_equal_the_documented_content() -> None:
    assert gemini.assistant_message(CALLS, text=TEXT) == [DOCUMENTED]


def test_ids_are_written_when_the_call_has_one() -> None:
    call = ToolCall(0, "96c1su3s", "get_weather", {"city": "Paris"})
    assert gemini.assistant_message([call]) == [
        {
            "role": "model",
            "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "96c1su3s"}}],
        }
    ]
    assert gemini.tool_result_message(call, {"temp_c": 21}) == [
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "get_weather", "response": {"temp_c": 21}, "id": "96c1su3s"}}],
        }
    ]


def test_all_results_of_a_turn_share_one_user_turn() -> None:
    weather, stock = CALLS
    assert gemini.tool_results_message([(weather, {"temp_c": 21}), (stock, 182.5), SCHEMA]) == [
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"temp_c": 21}}},
                {"functionResponse": {"name": "get_stock", "response": {"output": 182.5}}},
                {"functionResponse": {"name": "get_stock", "response": {"error": SCHEMA_PAYLOAD}, "id": "toolu_S"}},
            ],
        }
    ]


def test_errors_are_function_responses_with_an_error_key() -> None:
    assert gemini.error_result_message(TRUNCATED) == [
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "write_file", "response": {"error": TRUNCATED_PAYLOAD}, "id": "toolu_T"}}
            ],
        }
    ]


def test_another_providers_turn_has_its_first_call_signed_with_the_documented_skip_value() -> None:
    """Gemini 3 refuses a model turn whose first call has no thoughtSignature; a turn another
    model made has none to give, so its first call goes with the value Google documents for that;
    a Gemini turn keeps exactly what it came with (2.5: none)."""
    weather, stock = CALLS
    other = Turn("anthropic", (weather, stock))
    assert other.provider != "gemini"
    assert gemini.turn_messages(other) == [
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": SKIP},
                {"functionCall": {"name": "get_stock", "args": {"ticker": "AAPL"}}},
            ],
        }
    ]
    assert gemini.turn_messages(Turn("gemini", (weather, stock))) == [DOCUMENTED | {"parts": DOCUMENTED["parts"][1:]}]
    assert gemini.turn_messages(Turn("anthropic", (TextDelta("Hi."),))) == [
        {"role": "model", "parts": [{"text": "Hi."}]}
    ]


def test_a_call_gemini_could_not_read_is_told_as_text_not_a_nameless_function_part() -> None:
    """MALFORMED_FUNCTION_CALL gives no name, and a function part needs one: the call has no
    part in the model turn, its errors and the call as Gemini reported it go back as text."""
    malformed = InvalidToolCall(0, None, None, "Malformed function call: print(f(x=))", (MALFORMED,))
    assert gemini.assistant_message([malformed], text="Checking.") == [
        {"role": "model", "parts": [{"text": "Checking."}]}
    ]
    assert gemini.assistant_message([malformed]) == []
    assert gemini.turn_messages(Turn("gemini", (TextDelta("Checking."), malformed))) == [
        {"role": "model", "parts": [{"text": "Checking."}]}
    ]
    assert gemini.error_result_message(malformed) == [
        {
            "role": "user",
            "parts": [
                {
                    "text": '{"ok":false,"errors":[{"kind":"malformed_call","message":"unreadable"}],'
                    '"call":"Malformed function call: print(f(x=))"}'
                }
            ],
        }
    ]
