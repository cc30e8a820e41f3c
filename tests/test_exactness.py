"""Numbers and text, exactly, through the whole pipeline and the replay output, for every wire shape."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from streamkit import FramingError, InvalidToolCall, ProviderProtocolError, ToolCall
from streamkit._normalize import parse_arguments
from streamkit._types import ArgumentIssue, Call

from .helpers import replay
from .wire import WIRES, call, run

SLUGS = sorted(WIRES)


def one_call(slug: str, text: str, fragments: int = 3) -> tuple[Call, bytes]:
    """``text`` as one call's arguments, in a few fragments; the call and the wire bytes."""
    wire = WIRES[slug]
    size = max(1, len(text) // fragments)
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    data = wire.begin() + call(wire, 0, "c", "f", pieces) + wire.finish()
    items, error = run([data], slug)
    assert error is None
    first = items[0]
    assert isinstance(first, Call)
    return first, data


def replay_lines(tmp_path: Path, slug: str, data: bytes) -> list[str]:
    path = tmp_path / "stream.sse"
    path.write_bytes(data)
    result = replay(["replay", str(path), "--provider", slug])
    assert (result.code, result.stderr) == (0, "")
    return result.stdout.splitlines()


@pytest.mark.parametrize("slug", SLUGS)
def test_integers_of_any_size_are_exact_in_values_and_in_replay(slug: str, tmp_path: Path) -> None:
    big = 10**400 + 7  # past the float range: orjson alone cannot read it
    numbers = {"u64": 2**64, "i64_low": -(2**63) - 1, "thirty": 123456789012345678901234567890, "huge": -big}
    text = json.dumps(numbers)
    result, data = one_call(slug, text)
    assert result == ToolCall(0, "c", "f", numbers)
    assert all(type(v) is int for v in result.input.values())
    line = replay_lines(tmp_path, slug, data)[0]
    assert f'"huge":-{big}' in line and '"thirty":123456789012345678901234567890' in line
    assert json.loads(line)["input"] == numbers


@pytest.mark.parametrize("slug", SLUGS)
def test_an_integer_past_pythons_digit_limit_is_invalid_with_a_clear_message(slug: str) -> None:
    text = '{"n": 1' + "0" * 5000 + "}"
    result, _ = one_call(slug, text)
    assert isinstance(result, InvalidToolCall) and result.raw == text
    assert [e.to_dict() for e in result.errors] == [
        {
            "kind": "invalid_json",
            "message": "an integer has more than 4300 digits, more than can be read exactly",
            "position": 6,
        }
    ]


FLOATS = [0.1, 1e-300, 5e-324, 1.7976931348623157e308, -2.5e-8, 1.0, -0.0, 123456.789, 2.0**60]


@pytest.mark.parametrize("slug", SLUGS)
def test_floats_round_trip_in_values_and_in_replay(slug: str, tmp_path: Path) -> None:
    text = json.dumps({"f": FLOATS})
    result, data = one_call(slug, text)
    assert isinstance(result, ToolCall)
    assert [repr(x) for x in result.input["f"]] == [repr(x) for x in FLOATS]
    printed = json.loads(replay_lines(tmp_path, slug, data)[0])["input"]["f"]
    assert [repr(x) for x in printed] == [repr(x) for x in FLOATS]


@pytest.mark.parametrize("slug", SLUGS)
@pytest.mark.parametrize(
    ("text", "message", "position"),
    [
        ('{"n": NaN}', "unexpected character, expected a JSON value", 6),
        ('{"n": Infinity}', "unexpected character, expected a JSON value", 6),
        ('{"n": -Infinity}', "no digit after sign", 7),
        ('{"n": 1e400}', "number is infinity when parsed as double", 6),
    ],
)
def test_nan_infinity_and_overflowing_floats_are_invalid_json(
    slug: str, text: str, message: str, position: int
) -> None:
    result, _ = one_call(slug, text)
    assert isinstance(result, InvalidToolCall) and result.raw == text
    assert [(e.kind, e.message, e.position) for e in result.errors] == [
        ("invalid_json", f"the arguments are not valid JSON: {message}", position)
    ]


@pytest.mark.parametrize("slug", SLUGS)
def test_nan_next_to_a_huge_integer_is_still_invalid_json(slug: str) -> None:
    # The exact reader for huge integers is held to the same rules as the fast one.
    text = '{"n": 1' + "0" * 400 + ', "x": NaN}'
    result, _ = one_call(slug, text)
    assert isinstance(result, InvalidToolCall)
    assert [(e.kind, e.message) for e in result.errors] == [
        ("invalid_json", "the arguments are not valid JSON: NaN is not a JSON number")
    ]


@pytest.mark.parametrize("slug", SLUGS)
@pytest.mark.parametrize(
    ("escape", "message"),
    [("\\ud800", "no low surrogate in string"), ("\\udc00", "invalid high surrogate in string")],
)
def test_a_lone_surrogate_escape_in_the_arguments_is_invalid_json(slug: str, escape: str, message: str) -> None:
    text = '{"s": "x' + escape + 'y"}'
    result, _ = one_call(slug, text)
    assert isinstance(result, InvalidToolCall) and result.raw == text
    assert [(e.kind, e.message) for e in result.errors] == [
        ("invalid_json", f"the arguments are not valid JSON: {message}")
    ]
    huge = '{"n": 1' + "0" * 400 + ', "s": "' + escape + '"}'
    result, _ = one_call(slug, huge)
    assert isinstance(result, InvalidToolCall)
    assert result.errors[0].message == "the arguments are not valid JSON: a lone surrogate escape"


@pytest.mark.parametrize("slug", SLUGS)
def test_a_surrogate_pair_split_across_fragments_is_one_character(slug: str) -> None:
    wire = WIRES[slug]
    data = wire.begin() + call(wire, 0, "c", "f", ['{"e": "\\ud83d', '\\ude00"}']) + wire.finish()
    items, _ = run([data], slug)
    assert items[0] == ToolCall(0, "c", "f", {"e": "😀"})


def test_a_lone_surrogate_in_the_event_itself_is_a_protocol_error_naming_the_event() -> None:
    data = b'event: content_block_delta\ndata: {"type": "content_block_delta", "x": "\\ud800"}\n\n'
    _, error = run([WIRES["anthropic"].begin() + data], "anthropic")
    assert isinstance(error, ProviderProtocolError)
    assert str(error) == (
        "anthropic, event 'content_block_delta': event data is not JSON (no low surrogate in string): "
        '\'{"type": "content_block_delta", "x": "\\\\ud800"}\''
    )


@pytest.mark.parametrize("slug", SLUGS)
def test_invalid_utf8_is_a_framing_error_naming_the_byte_after_what_was_complete(slug: str) -> None:
    wire = WIRES[slug]
    head = wire.begin() + call(wire, 0, "c", "f", ['{"a": 1}']) + wire.end_call(0)
    bad = b'data: {"x": "caf\xe9"}\n\n'
    items, error = run([head + bad], slug)
    assert isinstance(error, FramingError)
    assert error.offset == len(head) + bad.index(b"\xe9")
    assert (
        str(error)
        == f'{slug}: the stream is not valid UTF-8 at byte {error.offset} near \'data: {{"x": "caf<0xE9>"}}\''
    )
    assert error.provider == slug
    expected = [ToolCall(0, "c", "f", {"a": 1})] if wire.ends_each_call else []
    assert items == expected
    # The same, byte by byte: the outcome never depends on the chunking.
    data = head + bad
    chunked = run([data[i : i + 1] for i in range(len(data))], slug)
    assert (chunked[0], str(chunked[1])) == (expected, str(error))


@pytest.mark.parametrize("slug", SLUGS)
def test_a_repeated_key_keeps_its_last_value(slug: str) -> None:
    result, _ = one_call(slug, '{"a": 1, "b": {"c": 1, "c": [2]}, "a": "last"}')
    assert result == ToolCall(0, "c", "f", {"a": "last", "b": {"c": [2]}})
    huge = 10**400
    result, _ = one_call(slug, f'{{"a": 1, "a": {huge}}}')  # the exact reader follows the same rule
    assert result == ToolCall(0, "c", "f", {"a": huge})


@pytest.mark.parametrize("slug", SLUGS)
def test_text_that_looks_like_code_is_only_ever_data(slug: str) -> None:
    code = "__import__('os').system('echo pwned')"
    result, _ = one_call(slug, code)
    assert isinstance(result, InvalidToolCall) and result.raw == code
    assert [e.kind for e in result.errors] == ["invalid_json"]
    result, _ = one_call(slug, json.dumps({"cmd": code}))
    assert result == ToolCall(0, "c", "f", {"cmd": code})


@pytest.mark.parametrize("slug", SLUGS)
def test_glued_objects_with_a_huge_integer_are_still_concatenated_json(slug: str) -> None:
    first = '{"n": 1' + "0" * 400 + "}"
    result, _ = one_call(slug, first + '{"m": 2}')
    assert isinstance(result, InvalidToolCall)
    assert [(e.kind, e.position) for e in result.errors] == [("concatenated_json", len(first))]


# -- arguments that arrive as an object: read exactly from the frame's text too ----------------------

NUMBERS = {"thirty": 123456789012345678901234567890, "u64": 2**64, "i64_low": -(2**63) - 1, "small": 7, "x": 1.5}
HUGE = {"huge": -(10**400) - 7}  # past the float range: orjson fails on the frame itself


def _object_wire(slug: str, arguments: dict[str, object]) -> bytes:
    """One call whose arguments are a JSON object on the wire, in ``slug``'s own shape."""
    function = {"name": "f", "arguments": arguments}
    if slug in ("openai_chat", "mistral"):
        entry = {"index": 0, "id": "c", "type": "function", "function": function}
        chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}, "finish_reason": "tool_calls"}]}
        return f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    if slug == "ollama":
        first = {"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": [{"function": function}]}}
        last = {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}
        return f"{json.dumps({**first, 'done': False})}\n{json.dumps(last)}\n".encode()
    if slug == "gemini":
        part = {"functionCall": {"name": "f", "args": arguments}}
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}]}
        return f"data: {json.dumps(chunk)}\n\n".encode()
    assert slug == "anthropic"
    block = {"type": "tool_use", "id": "c", "name": "f", "input": arguments}
    start = {"type": "content_block_start", "index": 0, "content_block": block}
    return (
        WIRES["anthropic"].begin()
        + f"event: content_block_start\ndata: {json.dumps(start)}\n\n".encode()
        + WIRES["anthropic"].end_call(0)
        + WIRES["anthropic"].finish()
    )


OBJECT_SLUGS = ["anthropic", "gemini", "mistral", "ollama", "openai_chat"]


@pytest.mark.parametrize("numbers", [NUMBERS, {**NUMBERS, **HUGE}], ids=["beyond-64-bits", "beyond-floats"])
@pytest.mark.parametrize("slug", OBJECT_SLUGS)
def test_integers_in_object_arguments_are_exact(slug: str, numbers: dict[str, object], tmp_path: Path) -> None:
    data = _object_wire(slug, numbers)
    items, error = run([data], slug)
    assert error is None
    (result,) = [item for item in items if isinstance(item, Call)]
    assert isinstance(result, ToolCall) and result.input == numbers
    assert [type(v) for v in result.input.values()] == [type(v) for v in numbers.values()]
    path = tmp_path / "stream"
    path.write_bytes(data)
    replayed = replay(["replay", str(path), "--provider", slug])
    assert replayed.code == 0 and json.loads(replayed.stdout.splitlines()[0])["input"] == numbers
    assert '"thirty":123456789012345678901234567890' in replayed.stdout


def test_a_frame_with_nan_next_to_a_huge_integer_is_still_not_json() -> None:
    data = b'data: {"choices": [], "n": 1' + b"0" * 400 + b', "x": NaN}\n\n'
    _, error = run([data], "openai_chat")
    assert isinstance(error, ProviderProtocolError) and "event data is not JSON (NaN is not a JSON number)" in str(
        error
    )


# -- an arguments value that no JSON reader takes: that call is invalid, the others are read ---------

UNREADABLE = {
    "nested-past-1024": '{"a":' + "[" * 1030 + "]" * 1030 + "}",
    "1e400": '{"a":1e400}',
    "lone-surrogate": '{"a":"\\ud800"}',
    "5000-digits": '{"a":' + "1" * 5000 + "}",
}
#: What the normalizer says of each as text: the same issue whether the arguments came as text or as a value.
UNREADABLE_ISSUES = {
    "nested-past-1024": ArgumentIssue(
        "too_deep", "the arguments nest arrays and objects deeper than max_depth=64; send a flatter value"
    ),
    "1e400": ArgumentIssue(
        "invalid_json", "the arguments are not valid JSON: number is infinity when parsed as double", position=5
    ),
    "lone-surrogate": ArgumentIssue(
        "invalid_json", "the arguments are not valid JSON: no low surrogate in string", position=6
    ),
    "5000-digits": ArgumentIssue(
        "invalid_json", "an integer has more than 4300 digits, more than can be read exactly", position=5
    ),
}
PARIS = '{"city":"Paris"}'


def _two_values(slug: str, first: str, second: str = PARIS) -> bytes:
    """Two calls, ``f`` and ``g``, in one event, their arguments the JSON texts given, as values."""
    if slug in ("openai_chat", "mistral"):
        index = ('"index":0,', '"index":1,') if slug == "openai_chat" else ("", "")
        calls = (
            f'[{{{index[0]}"id":"c0","type":"function","function":{{"name":"f","arguments":{first}}}}},'
            f'{{{index[1]}"id":"c1","type":"function","function":{{"name":"g","arguments":{second}}}}}]'
        )
        return (
            f'data: {{"choices":[{{"index":0,"delta":{{"tool_calls":{calls}}},"finish_reason":"tool_calls"}}]}}\n\n'
            "data: [DONE]\n\n"
        ).encode()
    if slug == "ollama":
        calls = (
            f'[{{"function":{{"index":0,"name":"f","arguments":{first}}}}},'
            f'{{"function":{{"index":0,"name":"g","arguments":{second}}}}}]'
        )
        message = f'{{"role":"assistant","content":"","tool_calls":{calls}}}'
        return f'{{"model":"m","message":{message},"done":true,"done_reason":"stop"}}\n'.encode()
    if slug == "gemini":
        parts = f'[{{"functionCall":{{"name":"f","args":{first}}}}},{{"functionCall":{{"name":"g","args":{second}}}}}]'
        candidate = f'{{"content":{{"role":"model","parts":{parts}}},"finishReason":"STOP"}}'
        return f'data: {{"candidates":[{candidate}]}}\n\n'.encode()
    assert slug == "anthropic"
    wire = WIRES["anthropic"]
    starts = b""
    for at, (call_id, name, value) in enumerate((("c0", "f", first), ("c1", "g", second))):
        block = f'{{"type":"tool_use","id":"{call_id}","name":"{name}","input":{value}}}'
        start = f'{{"type":"content_block_start","index":{at},"content_block":{block}}}'
        starts += f"event: content_block_start\ndata: {start}\n\n".encode() + wire.end_call(at)
    return wire.begin() + starts + wire.finish()


def _expected(slug: str, raw: str, issue: ArgumentIssue) -> list[Call]:
    ids = (None, None) if slug in ("gemini", "ollama") else ("c0", "c1")
    noted = {"openai_chat": ("arguments_object",), "anthropic": ("input_in_start",)}.get(slug, ())
    return [
        InvalidToolCall(0, ids[0], "f", raw, (issue,), anomalies=noted),
        ToolCall(1, ids[1], "g", {"city": "Paris"}, anomalies=noted),
    ]


@pytest.mark.parametrize("value", sorted(UNREADABLE))
@pytest.mark.parametrize("slug", OBJECT_SLUGS)
def test_an_arguments_value_no_reader_takes_makes_only_its_call_invalid(slug: str, value: str) -> None:
    """Nested past orjson's 1,024 levels, ``1e400``, a lone surrogate or 5,000 digits failed the
    whole event, and the calls beside it were lost. The value is its call's raw text, judged as
    the same arguments sent as text are."""
    raw = UNREADABLE[value]
    assert parse_arguments(raw)[1] == UNREADABLE_ISSUES[value]  # the text path's issue
    data = _two_values(slug, raw)
    for chunks in ([data], [data[i : i + 7] for i in range(0, len(data), 7)]):
        items, error = run(chunks, slug)
        assert error is None
        assert [item for item in items if isinstance(item, Call)] == _expected(slug, raw, UNREADABLE_ISSUES[value])


@pytest.mark.parametrize("slug", OBJECT_SLUGS)
def test_a_value_read_alone_but_past_the_readers_depth_in_its_event_is_its_calls_raw_text(slug: str) -> None:
    # 1,023 levels read alone; under the event's own levels they pass orjson's 1,024.
    raw = '{"a":' + "[" * 1022 + "]" * 1022 + "}"
    items, error = run([_two_values(slug, raw)], slug)
    assert error is None
    assert [item for item in items if isinstance(item, Call)] == _expected(
        slug, raw, UNREADABLE_ISSUES["nested-past-1024"]
    )


@pytest.mark.parametrize("slug", OBJECT_SLUGS)
def test_values_beside_one_no_reader_takes_are_read_exactly(slug: str) -> None:
    huge = "-1" + "0" * 400
    items, error = run(
        [_two_values(slug, UNREADABLE["1e400"], f'{{"n":{huge},"m":123456789012345678901234567890}}')], slug
    )
    assert error is None
    invalid, valid = [item for item in items if isinstance(item, Call)]
    assert invalid == _expected(slug, UNREADABLE["1e400"], UNREADABLE_ISSUES["1e400"])[0]
    assert isinstance(valid, ToolCall) and valid.input == {"n": int(huge), "m": 123456789012345678901234567890}


def test_a_value_no_reader_takes_after_fragments_read_fast_is_still_its_calls_raw_text() -> None:
    """The fast path reads a call's plain fragments by their template; the event with the value
    matches none, and the general path sets the value aside."""
    wire = WIRES["openai_chat"]
    fragments = ['{"a":', " 1", ", ", '"b"', ": ", "2", "}"]
    entry = '{"index":1,"id":"c1","type":"function","function":{"name":"g","arguments":{"a":1e400}}}'
    value = f'data: {{"choices":[{{"index":0,"delta":{{"tool_calls":[{entry}]}}}}]}}\n\n'.encode()
    data = wire.begin() + call(wire, 0, "c0", "f", fragments) + value + wire.finish()
    for chunks in ([data], [data[i : i + 1] for i in range(len(data))]):
        items, error = run(chunks, "openai_chat")
        assert error is None
        assert [item for item in items if isinstance(item, Call)] == [
            ToolCall(0, "c0", "f", {"a": 1, "b": 2}),
            InvalidToolCall(
                1, "c1", "g", '{"a":1e400}', (UNREADABLE_ISSUES["1e400"],), anomalies=("arguments_object",)
            ),
        ]


@pytest.mark.parametrize(
    ("slug", "data"),
    [
        pytest.param(
            "gemini",
            b'data: {"candidates":[{"content":{"parts":[{"text":"hi"}]}}],"usageMetadata":{"n":1e400}}\n\n',
            id="gemini-usage",
        ),
        pytest.param(
            "anthropic",
            WIRES["anthropic"].begin()
            + b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":'
            b'{"type":"server_tool_use","id":"s","name":"web_search","input":{"q":1e400}}}\n\n',
            id="anthropic-server-tool-input",
        ),
    ],
)
def test_a_value_no_reader_takes_outside_a_calls_arguments_is_still_not_json(slug: str, data: bytes) -> None:
    _, error = run([data], slug)
    assert isinstance(error, ProviderProtocolError)
    assert "event data is not JSON (number is infinity when parsed as double)" in str(error)


def _deep(arrays: int) -> dict[str, Any]:
    inner: list[Any] = []
    for _ in range(arrays - 1):
        inner = [inner]
    return {"a": inner}


#: What an SDK's standard-library read makes of each (it reads ``1e400`` as an infinity, and a
#: lone surrogate escape as the character), given to the pipeline as payloads, not text.
READ_BY_AN_SDK: dict[str, tuple[object, str, ArgumentIssue]] = {
    "1e400": (
        {"a": math.inf},
        '{"a":Infinity}',
        ArgumentIssue("invalid_json", "the arguments are not JSON: they hold a float (inf)"),
    ),
    "lone-surrogate": (
        {"a": "\ud800"},
        '{"a":"\\ud800"}',
        ArgumentIssue("invalid_json", "the arguments are not valid JSON: a lone surrogate escape"),
    ),
    "nested-past-1024": (_deep(1030), UNREADABLE["nested-past-1024"], UNREADABLE_ISSUES["nested-past-1024"]),
}


def _as_payloads(data: bytes, first: object) -> list[Any]:
    """The payloads of a stream made by ``_two_values`` with ``{"x":0}`` for the first value, that one
    replaced by ``first``."""

    def put(item: Any) -> Any:
        if item == {"x": 0}:
            return first
        if isinstance(item, dict):
            return {key: put(value) for key, value in item.items()}
        return [put(value) for value in item] if isinstance(item, list) else item

    lines = (line.removeprefix("data: ") for line in data.decode().splitlines())
    return [put(json.loads(line)) for line in lines if line.startswith("{")]


@pytest.mark.parametrize("value", sorted(READ_BY_AN_SDK))
@pytest.mark.parametrize("slug", OBJECT_SLUGS)
def test_an_arguments_value_from_an_sdk_that_is_not_json_makes_only_its_call_invalid_with_its_text(
    slug: str, value: str
) -> None:
    """A lone surrogate passed as valid, an infinity was shown as ``null``, and nesting past a few
    hundred levels as no text at all."""
    arguments, raw, issue = READ_BY_AN_SDK[value]
    items, error = run(_as_payloads(_two_values(slug, '{"x":0}'), arguments), slug)
    assert error is None
    assert [item for item in items if isinstance(item, Call)] == _expected(slug, raw, issue)


@pytest.mark.parametrize("slug", OBJECT_SLUGS)
def test_a_value_read_whole_but_nested_past_what_orjson_writes_keeps_its_raw_text(slug: str) -> None:
    # Read from the event, written back for the raw text: orjson writes 254 levels at most.
    raw = '{"a":' + "[" * 999 + "]" * 999 + "}"
    items, error = run([_two_values(slug, raw)], slug)
    assert error is None
    assert [item for item in items if isinstance(item, Call)] == _expected(
        slug, raw, UNREADABLE_ISSUES["nested-past-1024"]
    )
