"""RawCall -> ToolCall | CustomToolCall | InvalidToolCall: the one place where arguments are read.

Every provider's calls go through ``normalize``, with exactly these rules:

- ``None`` -> ``{}``; ``""`` or only JSON whitespace (space, tab, CR, LF) -> ``{}``.
- The JSON text ``null`` -> ``{}`` too (it is ``None`` serialized), noted as the anomaly
  ``null_arguments``.
- A dict passes as is, unless it holds what JSON has no form for (a key that is not a string,
  a string with a lone surrogate, ``NaN``, an infinity): ``invalid_json``. Any other non-string
  value is ``not_an_object``. A value an event's JSON held that no reader takes comes here as
  its text (the decoder's ``value_paths``), under the rules for text.
- A string is parsed strictly and must give an object: an array or a scalar is
  ``not_an_object``, bad JSON is ``invalid_json`` with its position, and one object followed by
  more text (``{"a":1}{"b":2}``, two calls glued together) is ``concatenated_json``. Nothing is
  ever repaired, and the raw text is kept on every invalid call.
- Integers keep their exact value at any size (up to the 4,300 digits Python reads by default;
  longer is ``invalid_json``), floats round-trip, ``NaN`` and ``Infinity`` are
  not JSON, and neither is a number too big for a float (``1e400``). A repeated key keeps its
  last value (as orjson and the standard library do). A lone surrogate escape (``"\\ud800"``)
  is ``invalid_json``: it is not a character.
- Arguments nested deeper than ``max_depth`` (``Limits.max_depth``) are ``too_deep``, whatever
  their form; the check walks the parsed value once, the same walk that looks for big integers.
- A call cut off by the output limit or the end of the stream is ``truncated`` whatever its text.
- A call carrying an anomaly that makes its arguments untrustworthy (``final_arguments_differ``,
  ``malformed_function_call``) is invalid whatever its text parses to: nothing is picked.
- A call whose state marks free text (an OpenAI Responses ``custom_tool_call``) is never parsed:
  it is a ``CustomToolCall`` whose ``input`` is the text as received (``""`` when none came),
  under the same rules for a missing name, a cut and an untrusted text.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import orjson

from ._events import RawCall
from ._inexact import INEXACT_FLOAT
from ._limits import DEFAULT_MAX_DEPTH
from ._types import ArgumentIssue, Call, CustomToolCall, InvalidToolCall, JSONObject, ToolCall, takes_text

__all__ = ("normalize", "parse_arguments", "raw_text", "stops_mid_json")

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

_JSON_SPACE = " \t\n\r"


def normalize(raw: RawCall, max_depth: int = DEFAULT_MAX_DEPTH) -> Call:
    """Turn a call at its end marker into a call ready to run, or an invalid call."""
    issues: list[ArgumentIssue] = []
    text = takes_text(raw.state)
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
    elif anomalies and (untrusted := [_UNTRUSTED[a] for a in anomalies if a in _UNTRUSTED]):
        issues.extend(untrusted)
        parsed = None
    elif text:
        parsed = None
    else:
        parsed, issue, note = parse_arguments(raw.arguments, max_depth)
        if issue is not None:
            issues.append(issue)
        if note is not None:
            anomalies = (*anomalies, note)
    if text and not issues and raw.name:
        return CustomToolCall(
            raw.index,
            raw.id,
            raw.name,
            raw_text(raw.arguments),
            choice=raw.choice,
            anomalies=anomalies,
            state=raw.state,
        )
    if issues or parsed is None or not raw.name:
        return InvalidToolCall(
            raw.index,
            raw.id,
            raw.name or None,
            raw_text(raw.arguments),
            tuple(issues),
            choice=raw.choice,
            anomalies=anomalies,
            state=raw.state,
        )
    return ToolCall(raw.index, raw.id, raw.name, parsed, choice=raw.choice, anomalies=anomalies, state=raw.state)


def parse_arguments(
    arguments: Any, max_depth: int = DEFAULT_MAX_DEPTH
) -> tuple[JSONObject | None, ArgumentIssue | None, str | None]:
    """Apply the rules above: (input, None, note) on success, (None, issue, None) on failure.

    The note is an anomaly worth recording on the call (``null_arguments``), or ``None``.
    """
    if arguments is None:
        return {}, None, None
    if isinstance(arguments, dict):
        too_deep, _ = _scan(arguments, max_depth)
        if too_deep:
            return None, _too_deep(max_depth), None
        odd = _not_json(arguments)
        return (arguments, None, None) if odd is None else (None, ArgumentIssue("invalid_json", odd), None)
    if not isinstance(arguments, str):
        return None, _not_an_object(arguments), None
    if not arguments.strip(_JSON_SPACE):  # JSON's four spaces only: "\xa0" is not "no arguments"
        return {}, None, None
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError as exc:
        if exc.msg.startswith("depth limit exceeded"):
            return None, _too_deep(max_depth), None
        from ._json import big_integer_at  # the exact reader, loaded by the first arguments orjson refuses

        if not big_integer_at(arguments, exc.msg, exc.pos):
            return None, _decode_issue(arguments, exc), None
        # orjson reads an integer beyond 64 bits as a float, and one of 309 digits or more
        # overflows: read the text exactly, as strictly, with the standard library.
        value, issue = _parse_exact(arguments, exc)
        if issue is not None:
            return None, issue, None
    if value is None:
        return {}, None, "null_arguments"
    if not isinstance(value, dict):
        return None, _not_an_object(value), None
    too_deep, inexact = _scan(value, max_depth)
    if too_deep:
        return None, _too_deep(max_depth), None
    if inexact:
        from ._json import loads_exact  # loaded by the first arguments orjson may have misread

        value = loads_exact(arguments)
    return value, None, None


def _parse_exact(text: str, first: orjson.JSONDecodeError) -> tuple[Any, ArgumentIssue | None]:
    """The standard library's exact parse, held to orjson's rules: no ``NaN``/``Infinity``, no
    float that overflows, no lone surrogate. Runs only for text orjson could not read."""
    from ._json import has_lone_surrogate, loads_exact  # loaded with the first such text

    try:
        value = loads_exact(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            return None, _concatenated(exc.pos)
        return None, ArgumentIssue("invalid_json", f"the arguments are not valid JSON: {exc.msg}", position=exc.pos)
    except RecursionError:
        return None, ArgumentIssue("too_deep", "the arguments nest arrays and objects too deep to read exactly")
    except ValueError as exc:  # NaN, a float that overflows, or an integer Python will not read
        if "integer string conversion" in str(exc):
            digits = sys.get_int_max_str_digits()
            message = f"an integer has more than {digits} digits, more than can be read exactly"
            return None, ArgumentIssue("invalid_json", message, position=first.pos)
        return None, ArgumentIssue("invalid_json", f"the arguments are not valid JSON: {exc}")
    if has_lone_surrogate(value):
        return None, ArgumentIssue("invalid_json", _LONE_SURROGATE)
    return value, None


_JSON_LEAVES = (str, int, float, bool, type(None))
_LONE_SURROGATE = "the arguments are not valid JSON: a lone surrogate escape"


def _not_json(value: dict[Any, Any]) -> str | None:
    """What keeps an arguments value given as an object from being JSON, if anything.

    Only an object made in Python (a payload from an SDK object, not parsed from JSON text)
    can hold a key that is not a string or a value of another type, and a string with a lone
    surrogate (which the standard library reads from ``"\\ud800"``, and no JSON writer writes);
    one walk over it, run only for arguments that came as a value. Its depth was checked first,
    so the walk is bounded.
    """
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    return f"the arguments are not JSON: an object key is {type(key).__name__} {key!r}, not a string"
                if _lone_surrogate(key):
                    return _LONE_SURROGATE
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if _lone_surrogate(item):
                return _LONE_SURROGATE
        elif not isinstance(item, _JSON_LEAVES) or (isinstance(item, float) and not math.isfinite(item)):
            return f"the arguments are not JSON: they hold a {type(item).__name__} ({_cut(repr(item))})"
    return None


def _lone_surrogate(text: str) -> bool:
    if text.isascii():  # known without a look at the text
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


def _cut(text: str, size: int = 40) -> str:
    return text if len(text) <= size else f"{text[: size - 3]}..."


def raw_text(arguments: Any) -> str:
    """The argument text exactly as received; an object is shown as compact JSON, as it was:
    an infinity as ``Infinity`` (orjson writes ``null``), at any depth."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    try:
        text = orjson.dumps(arguments).decode()
    except TypeError:  # an integer beyond 64 bits, a lone surrogate, nesting deeper than orjson writes
        pass
    else:
        if "null" not in text or not _holds_non_finite(arguments):
            return text
    from ._json import shown  # the exact writer, loaded by the first value orjson cannot write

    try:
        return shown(arguments)
    except (TypeError, ValueError):
        # Only a value handed to ``feed_payload`` directly can get here: a frame's JSON never
        # holds a non-JSON value.
        return f"<a {type(arguments).__name__} that cannot be shown as JSON>"


def _holds_non_finite(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            return True
    return False


#: orjson's message for a text that stops before its JSON document ends.
_ENDS_EARLY = "unexpected end of data"
_ENDS_EARLY_MESSAGE = f"the arguments are not valid JSON: {_ENDS_EARLY}"


def _decode_issue(text: str, exc: orjson.JSONDecodeError) -> ArgumentIssue:
    if exc.msg.startswith("unexpected content after document"):
        return _concatenated(exc.pos)
    return ArgumentIssue("invalid_json", f"the arguments are not valid JSON: {exc.msg}", position=exc.pos)


def stops_mid_json(call: Call) -> bool:
    """Whether ``call`` is invalid because its JSON text stops before its document ends: what a
    cut by the output limit leaves, which the stop reason may still say (the accumulator's rule 11)."""
    return isinstance(call, InvalidToolCall) and any(
        issue.kind == "invalid_json" and issue.message == _ENDS_EARLY_MESSAGE for issue in call.errors
    )


def _concatenated(position: int) -> ArgumentIssue:
    return ArgumentIssue(
        "concatenated_json",
        "one JSON object is followed by more text: several calls' arguments were glued together; "
        "send each call separately",
        position=position,
    )


def _not_an_object(value: Any) -> ArgumentIssue:
    kind = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    got = kind.get(type(value), type(value).__name__)
    return ArgumentIssue("not_an_object", f"the arguments must be a JSON object, got {got}")


def _too_deep(max_depth: int) -> ArgumentIssue:
    return ArgumentIssue(
        "too_deep", f"the arguments nest arrays and objects deeper than max_depth={max_depth}; send a flatter value"
    )


def _scan(value: object, max_depth: int) -> tuple[bool, bool]:
    """(nested deeper than ``max_depth``, may hold an integer orjson read as a float).

    The walk goes level by level, one step per JSON value, not per byte. A float this big may
    be an integer beyond 64 bits that orjson read inexactly: the exact but slower
    standard-library parse runs only then.
    """
    level: list[Any] = [value]
    depth = 0
    inexact = False
    while level:
        below: list[Any] = []
        nested = False
        for item in level:
            kind = type(item)
            if kind is dict:
                nested = True
                below.extend(item.values())
            elif kind is list:
                nested = True
                below.extend(item)
            elif kind is float and (item >= INEXACT_FLOAT or item <= -INEXACT_FLOAT):
                inexact = True
        if nested:
            depth += 1
            if depth > max_depth:
                return True, inexact
        level = below
    return False, inexact
