"""OpenAI Responses custom tools: a ``custom_tool_call`` is delivered as a ``CustomToolCall``
whose input is its text, checked against its tool's grammar where one can be checked, and
written back as ``custom_tool_call`` / ``custom_tool_call_output`` items.

The transcripts are fixtures/openai_responses/custom_tool_*.sse, with the tools they were
answered for in custom_tools.json.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

import streamkit
from streamkit import ArgumentIssue, CustomToolCall, InvalidToolCall, Limits, ToolCall, Toolset, UsageError
from streamkit._types import Call
from streamkit.adapters import anthropic, openai_chat, openai_responses
from streamkit.integrations._turns import refuse_custom
from streamkit.serve._whole import whole_calls

from .helpers import FIXTURES, replay

HERE = FIXTURES / "openai_responses"
TOOLS = json.loads((HERE / "custom_tools.json").read_text(encoding="utf-8"))
SQL = "SELECT name FROM users\nWHERE id = 7;"
PATCH = "*** Begin Patch\n*** Update File: a.py\n-x = 1\n+x = 2\n*** End Patch"
TEXT_STATE = {"type": "custom_tool_call"}


def calls_of(name: str, tools: Any = None) -> list[Call]:
    with open(HERE / f"{name}.sse", "rb") as stream:
        return list(streamkit.iter_tool_calls(stream, "openai_responses", tools=tools))


def lines(name: str) -> list[dict[str, Any]]:
    args = [
        "replay",
        str(HERE / f"{name}.sse"),
        "--provider",
        "openai_responses",
        "--tools",
        str(HERE / "custom_tools.json"),
    ]
    result = replay(args)
    assert (result.code, result.stderr) == (0, "")
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_a_custom_call_is_delivered_with_its_text_as_input() -> None:
    assert calls_of("custom_tool_call") == [
        CustomToolCall(1, "call_sql1", "run_sql", SQL, state={"id": "ctc_1", **TEXT_STATE})
    ]


def test_a_custom_call_beside_a_function_call_keeps_each_kind() -> None:
    weather, patch = calls_of("custom_tool_beside_function", TOOLS)
    assert weather == ToolCall(0, "call_w1", "get_weather", {"city": "Paris"}, state={"id": "fc_1"})
    assert patch == CustomToolCall(1, "call_p1", "apply_patch", PATCH, state={"id": "ctc_2", **TEXT_STATE})


def test_a_cut_custom_call_is_truncated_and_keeps_its_text() -> None:
    (call,) = calls_of("custom_tool_incomplete")
    assert isinstance(call, InvalidToolCall) and call.truncated
    assert (call.raw, call.state) == ("SELECT * FROM orders WHERE", {"id": "ctc_7", **TEXT_STATE})


def test_replay_marks_text_input_on_valid_and_invalid_lines() -> None:
    valid, invalid, _ = lines("custom_tool_grammar_regex")
    assert valid == {
        "type": "tool_call",
        "index": 0,
        "id": "call_d1",
        "name": "set_date",
        "input": "2026-12-04",
        "input_type": "text",
    }
    assert invalid == {
        "type": "invalid_tool_call",
        "index": 1,
        "id": "call_d2",
        "name": "set_date",
        "raw": "December 4",
        "errors": [
            {
                "kind": "grammar",
                "message": "the input does not match the tool's regex grammar (the whole text must match)",
            }
        ],
        "input_type": "text",
    }


def test_a_lark_grammar_is_checked_with_the_position_of_the_first_mismatch() -> None:
    pytest.importorskip("lark")
    valid, invalid, _ = lines("custom_tool_grammar_lark")
    assert valid["input"] == "SELECT name FROM users" and "errors" not in valid
    assert invalid["errors"] == [
        {
            "kind": "grammar",
            "message": "the input does not match the tool's lark grammar: "
            "No terminal matches ' ' in the current parser context, at line 1 col 12",
            "position": 11,
        }
    ]


def test_a_lark_grammar_without_lark_is_reported_as_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "lark", None)  # import lark now raises ImportError
    calls = calls_of("custom_tool_grammar_lark", TOOLS)
    assert [type(call) for call in calls] == [CustomToolCall, CustomToolCall]
    assert [call.anomalies for call in calls] == [("grammar_not_checked",)] * 2


def test_a_regex_python_cannot_read_is_not_checked_never_guessed() -> None:
    tools = Toolset(
        [{"type": "custom", "name": "f", "format": {"type": "grammar", "syntax": "regex", "definition": "(?<x"}}]
    )
    call = CustomToolCall(0, "c", "f", "anything")
    assert tools.validate(call) == CustomToolCall(0, "c", "f", "anything", anomalies=("grammar_not_checked",))


def test_text_for_a_function_tool_and_json_for_a_custom_tool_are_refused() -> None:
    tools = Toolset(TOOLS)
    text = tools.validate(CustomToolCall(0, "c1", "get_weather", "Paris", state=TEXT_STATE))
    assert text == InvalidToolCall(
        0,
        "c1",
        "get_weather",
        "Paris",
        (
            ArgumentIssue(
                "wrong_input_type", 'the tool "get_weather" is a function tool: it takes JSON arguments, not free text'
            ),
        ),
        state=TEXT_STATE,
    )
    json_call = tools.validate(ToolCall(1, "c2", "run_sql", {"q": "x"}), raw='{"q": "x"}')
    assert isinstance(json_call, InvalidToolCall)
    assert json_call.raw == '{"q": "x"}'
    assert [issue.to_dict() for issue in json_call.errors] == [
        {"kind": "wrong_input_type", "message": 'the tool "run_sql" is a custom tool: it takes free text, not JSON'}
    ]


def test_a_custom_call_to_a_tool_not_offered_is_unknown() -> None:
    call = Toolset(TOOLS).validate(CustomToolCall(0, "c", "rm_rf", "/", state=TEXT_STATE))
    assert isinstance(call, InvalidToolCall)
    assert (call.raw, [issue.kind for issue in call.errors]) == ("/", ["unknown_tool"])


@pytest.mark.parametrize(
    ("format_", "message"),
    [
        ({"type": "json"}, r'tools\[0\].format must be \{"type": "text"\} or \{"type": "grammar", ...\}'),
        (
            {"type": "grammar", "syntax": "ebnf", "definition": "x"},
            r'tools\[0\].format.syntax must be "lark" or "regex"',
        ),
        (
            {"type": "grammar", "syntax": "regex"},
            r"tools\[0\].format.definition must be the grammar as a non-empty string",
        ),
    ],
)
def test_a_bad_custom_format_names_where_it_is(format_: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        Toolset([{"type": "custom", "name": "f", "format": format_}])


def test_the_responses_adapter_writes_custom_items_and_outputs() -> None:
    weather, patch = calls_of("custom_tool_beside_function", TOOLS)
    assert isinstance(weather, ToolCall) and isinstance(patch, CustomToolCall)
    assert openai_responses.assistant_message([weather, patch]) == [
        {"type": "function_call", "call_id": "call_w1", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        {"type": "custom_tool_call", "call_id": "call_p1", "name": "apply_patch", "input": PATCH},
    ]
    assert openai_responses.tool_results_message([(weather, {"temp_c": 21}), (patch, "applied")]) == [
        {"type": "function_call_output", "call_id": "call_w1", "output": '{"temp_c":21}'},
        {"type": "custom_tool_call_output", "call_id": "call_p1", "output": "applied"},
    ]


def test_an_invalid_custom_call_goes_back_as_a_custom_item_with_its_errors() -> None:
    _, invalid = calls_of("custom_tool_grammar_regex", TOOLS)
    assert isinstance(invalid, InvalidToolCall)
    assert openai_responses.assistant_message([invalid]) == [
        {"type": "custom_tool_call", "call_id": "call_d2", "name": "set_date", "input": "December 4"}
    ]
    (output,) = openai_responses.error_result_message(invalid)
    assert output["type"] == "custom_tool_call_output"
    assert json.loads(output["output"])["errors"][0]["kind"] == "grammar"


@pytest.mark.parametrize("adapter", [anthropic, openai_chat], ids=["anthropic", "openai_chat"])
def test_other_adapters_refuse_a_custom_call_by_name(adapter: Any) -> None:
    (call,) = calls_of("custom_tool_call")
    with pytest.raises(UsageError, match=r"calls\[0\]: a CustomToolCall .* only by the openai_responses adapter"):
        adapter.assistant_message([call])


@pytest.mark.anyio
async def test_run_tools_calls_a_custom_tool_with_its_text() -> None:
    got: list[Any] = []

    def get_weather(city: str) -> int:
        got.append(city)
        return 21

    def apply_patch(text: str) -> str:
        got.append(text)
        return "ok"

    tools = {"get_weather": get_weather, "apply_patch": apply_patch}
    results = await streamkit.run_tools(calls_of("custom_tool_beside_function", TOOLS), tools)
    assert sorted(got) == sorted(["Paris", PATCH])  # each ran once; they run concurrently, in any order
    assert [(result.id, result.output) for result in results] == [("call_w1", 21), ("call_p1", "ok")]
    passed = await streamkit.run_tools(calls_of("custom_tool_call"), {"run_sql": lambda call: call}, pass_call=True)
    assert passed[0].output == calls_of("custom_tool_call")[0]


def test_a_turn_with_a_custom_call_goes_back_with_its_item_id() -> None:
    with open(HERE / "custom_tool_beside_function.sse", "rb") as stream:
        turn = streamkit.Turn.from_events(streamkit.iter_events(stream, "openai_responses"), "openai_responses")
    assert [item["type"] for item in openai_responses.turn_messages(turn)] == ["function_call", "custom_tool_call"]
    assert openai_responses.turn_messages(turn)[1]["id"] == "ctc_2"


def test_a_whole_responses_body_gives_its_custom_calls_as_text() -> None:
    items = [
        {"type": "custom_tool_call", "id": "ctc_1", "call_id": "c1", "name": "set_date", "input": "2026-12-04"},
        {"type": "custom_tool_call", "id": "ctc_2", "call_id": "c2", "name": "set_date", "input": "soon"},
    ]
    first, second = whole_calls("openai_responses", {"status": "completed", "output": items}, Toolset(TOOLS), Limits())
    assert first == CustomToolCall(0, "c1", "set_date", "2026-12-04", state=TEXT_STATE)
    assert isinstance(second, InvalidToolCall)
    assert (second.raw, [issue.kind for issue in second.errors]) == ("soon", ["grammar"])


def test_the_framework_integrations_refuse_a_custom_call_by_name() -> None:
    """Their requests offer only function tools; a custom call that comes anyway is an error."""
    (call,) = calls_of("custom_tool_call")
    with pytest.raises(UsageError, match=r"called 'run_sql' as a custom tool .* which LangChain cannot run"):
        refuse_custom(call, "LangChain")
    refuse_custom(calls_of("custom_tool_beside_function")[0], "LangChain")  # a function call passes
