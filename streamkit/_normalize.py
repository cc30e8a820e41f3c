"""RawCall -> ToolCall | InvalidToolCall: the one place where arguments are read.

Every provider's calls go through ``normalize``, with exactly these rules:

- ``None`` -> ``{}``; ``""`` or only whitespace -> ``{}``.
- The JSON text ``null`` -> ``{}`` too (it is ``None`` serialized), noted as the anomaly
  ``null_arguments``.
- A dict passes as is; any other non-string value is ``not_an_object``.
- A string is parsed strictly and must give an object: an array or a scalar is
  ``not_an_object``, bad JSON is ``invalid_json`` with its position, and one object followed by
  more text (``{"a":1}{"b":2}``, two calls glued together) is ``concatenated_json``. Nothing is
  ever repaired, and the raw text is kept on every invalid call.
- Integers keep their exact value at any size, floats round-trip, ``NaN`` and ``Infinity`` are
  not JSON. A repeated key keeps its last value (as orjson and the standard library do).
- A call cut off by the output limit or the end of the stream is ``truncated`` whatever its text.
- A call carrying an anomaly that makes its arguments untrustworthy (``final_arguments_differ``,
  ``malformed_function_call``) is invalid whatever its text parses to: nothing is picked.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from ._events import RawCall
from ._types import ArgumentIssue, InvalidToolCall, JSONObject, ToolCall

__all__ = ("normalize", "parse_arguments", "raw_text")

#: Anomalies after which the arguments cannot be trusted, whatever they parse to: the issue each gives.
_UNTRUSTED = {
    "final_arguments_differ": ArgumentIssue(
        "arguments_mismatch",
        "the provider's final arguments text differs from the streamed fragments (kept as the raw text); "
        "neither can be trusted",
    ),
    "malformed_function_call": ArgumentIssue(
        "malformed_call", "the provider reported a malformed function call; its message is the raw text"
    ),
}

# orjson reads an integer beyond the 64-bit range as a float; such a float is at least this big.
_INEXACT_FLOAT = 9.2e18


def normalize(raw: RawCall) -> ToolCall | InvalidToolCall:
    """Turn a call at its end marker into a call ready to run, or an invalid call."""
    issues: list[ArgumentIssue] = []
    anomalies = raw.anomalies
    if not raw.name:
        issues.append(ArgumentIssue("missing_name", "the call has no tool name"))
    if raw.truncated:
        issues.append(
            ArgumentIssue(
                "truncated",
                "the arguments were cut off before the call ended (output limit reached or stream ended)",
            )
        )
        parsed = None
    elif untrusted := [_UNTRUSTED[a] for a in anomalies if a in _UNTRUSTED]:
        issues.extend(untrusted)
        parsed = None
    else:
        parsed, issue, note = parse_arguments(raw.arguments)
        if issue is not None:
            issues.append(issue)
        if note is not None:
            anomalies = (*anomalies, note)
    if issues or parsed is None or not raw.name:
        return InvalidToolCall(
            raw.index,
            raw.id,
            raw.name or None,
            raw_text(raw.arguments),
            tuple(issues),
            choice=raw.choice,
            anomalies=anomalies,
        )
    return ToolCall(raw.index, raw.id, raw.name, parsed, choice=raw.choice, anomalies=anomalies)


def parse_arguments(arguments: Any) -> tuple[JSONObject | None, ArgumentIssue | None, str | None]:
    """Apply the rules above: (input, None, note) on success, (None, issue, None) on failure.

    The note is an anomaly worth recording on the call (``null_arguments``), or ``None``.
    """
    if arguments is None:
        return {}, None, None
    if isinstance(arguments, dict):
        return arguments, None, None
    if not isinstance(arguments, str):
        return None, _not_an_object(arguments), None
    if not arguments or arguments.isspace():
        return {}, None, None
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError as exc:
        return None, _decode_issue(arguments, exc), None
    if value is None:
        return {}, None, "null_arguments"
    if not isinstance(value, dict):
        return None, _not_an_object(value), None
    if _has_inexact_number(value):
        value = json.loads(arguments)
    return value, None, None


def raw_text(arguments: Any) -> str:
    """The argument text exactly as received; an object is shown as compact JSON."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    try:
        return orjson.dumps(arguments).decode()
    except TypeError:  # an integer beyond 64 bits
        return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


def _decode_issue(text: str, exc: orjson.JSONDecodeError) -> ArgumentIssue:
    if exc.msg.startswith("unexpected content after document"):
        return ArgumentIssue(
            "concatenated_json",
            "one JSON object is followed by more text: several calls' arguments were glued "
            "together; send each call separately",
            position=exc.pos,
        )
    return ArgumentIssue("invalid_json", f"the arguments are not valid JSON: {exc.msg}", position=exc.pos)


def _not_an_object(value: Any) -> ArgumentIssue:
    kind = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    got = kind.get(type(value), type(value).__name__)
    return ArgumentIssue("not_an_object", f"the arguments must be a JSON object, got {got}")


def _has_inexact_number(value: object) -> bool:
    """True when orjson may have read an integer too big for 64 bits as a float.

    The walk costs one step per JSON value, not per byte, and finds nothing in the common case;
    the exact but slower standard-library parse runs only when it does.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
        elif type(item) is float and (item >= _INEXACT_FLOAT or item <= -_INEXACT_FLOAT):
            return True
    return False
