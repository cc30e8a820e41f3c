"""The shared normalizer: each rule, exactly."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamkit import ArgumentIssue, InvalidToolCall, ToolCall
from streamkit._events import RawCall
from streamkit._normalize import normalize, parse_arguments
from streamkit._types import Call


def call(arguments: object, **kw: object) -> Call:
    return normalize(RawCall(0, "id_1", "tool", arguments, **kw))  # type: ignore[arg-type]


@pytest.mark.parametrize("empty", [None, "", "   ", "\n\t "])
def test_no_arguments_is_an_empty_object(empty: object) -> None:
    assert call(empty) == ToolCall(0, "id_1", "tool", {})


def test_json_null_is_an_empty_object_noted_on_the_call() -> None:
    assert call(" null ") == ToolCall(0, "id_1", "tool", {}, anomalies=("null_arguments",))


def test_a_dict_passes_as_is() -> None:
    value = {"a": [1, {"b": None}]}
    result = call(value)
    assert isinstance(result, ToolCall) and result.input is value


@pytest.mark.parametrize(
    ("arguments", "raw", "got"),
    [
        ("[1, 2]", "[1, 2]", "an array"),
        ("42", "42", "a number"),
        ('"text"', '"text"', "a string"),
        ("true", "true", "a boolean"),
        ([1, 2], "[1,2]", "an array"),
        (7, "7", "a number"),
    ],
)
def test_arrays_and_scalars_are_not_objects(arguments: object, raw: str, got: str) -> None:
    assert call(arguments) == InvalidToolCall(
        0, "id_1", "tool", raw, (ArgumentIssue("not_an_object", f"the arguments must be a JSON object, got {got}"),)
    )


@pytest.mark.parametrize(
    ("text", "position"),
    [('{"a": 1,}', 7), ('{"a": }', 6), ('{"a": "x', 8), ("{'a': 1}", 1), ('{"n": NaN}', 6), ('{"n": Infinity}', 6)],
)
def test_bad_json_is_invalid_json_with_its_position(text: str, position: int) -> None:
    result = call(text)
    assert isinstance(result, InvalidToolCall)
    assert result.raw == text
    assert [(e.kind, e.position) for e in result.errors] == [("invalid_json", position)]


def test_glued_objects_are_their_own_error_never_repaired() -> None:
    result = call('{"a": 1}{"b": 2}')
    assert isinstance(result, InvalidToolCall)
    assert [(e.kind, e.position) for e in result.errors] == [("concatenated_json", 8)]
    assert result.raw == '{"a": 1}{"b": 2}'


def test_truncated_wins_over_parsable_text() -> None:
    result = call('{"a": 1}', truncated=True)
    assert isinstance(result, InvalidToolCall)
    assert [e.kind for e in result.errors] == ["truncated"]
    assert result.truncated and result.raw == '{"a": 1}'


def test_missing_name_is_reported_with_every_other_issue() -> None:
    result = normalize(RawCall(3, None, None, "[]"))
    assert isinstance(result, InvalidToolCall)
    assert [e.kind for e in result.errors] == ["missing_name", "not_an_object"]
    assert (result.index, result.id, result.name) == (3, None, None)


@pytest.mark.parametrize(
    "text",
    [
        '{"n": 123456789012345678901234567890}',
        '{"n": -123456789012345678901234567890}',
        '{"n": 18446744073709551616}',
        '{"n": -9223372036854775809}',
        '{"deep": [[{"n": 99999999999999999999999}]]}',
    ],
)
def test_integers_keep_their_exact_value(text: str) -> None:
    result = call(text)
    assert isinstance(result, ToolCall)
    assert result.input == json.loads(text)
    assert json.dumps(result.input) == json.dumps(json.loads(text))


def test_floats_round_trip_and_exact_strings() -> None:
    text = '{"f": 0.1, "g": 1e-300, "h": 1.7976931348623157e308, "s": "\\ud83d\\ude00 é \\u0000 \\"q\\""}'
    result = call(text)
    assert isinstance(result, ToolCall)
    assert result.input == {"f": 0.1, "g": 1e-300, "h": 1.7976931348623157e308, "s": '😀 é \x00 "q"'}


def test_duplicate_keys_keep_the_last_value() -> None:
    assert parse_arguments('{"a": 1, "a": 2}') == ({"a": 2}, None, None)


def test_lone_surrogate_escape_is_invalid_json() -> None:
    result = call('{"s": "\\ud800"}')
    assert isinstance(result, InvalidToolCall) and result.errors[0].kind == "invalid_json"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(value=st.dictionaries(st.text(max_size=8), _JSON, max_size=6))
def test_any_object_round_trips(value: dict[str, object]) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=2)):
        result = call(text)
        assert isinstance(result, ToolCall)
        assert result.input == value


def test_reprs_are_short() -> None:
    big = call('{"content": "' + "x" * 10_000 + '"}')
    assert len(repr(big)) < 200
    bad = call("{" + "x" * 10_000)
    assert len(repr(bad)) < 200 and "invalid_json" in repr(bad)
