"""Call -> Call: checking each call against the tools actually sent.

``Toolset`` takes the tool definitions in the form the caller sends them to the provider (read
by ``_tooldefs``), compiles each schema once with jsonschema-rs, and then checks calls: every
error is reported with its JSON path. A schema that is itself invalid is a ``UsageError`` at
construction, never a surprise mid-stream.

A custom tool's text (``CustomToolCall``) is checked against the grammar its tool declares,
where one can be checked here: a ``regex`` grammar with Python's ``re`` (the whole text must
match) when it compiles there, a ``lark`` grammar with the ``lark`` package when it is installed
and reads the grammar. Any other declared grammar is never guessed at: the call passes with the
anomaly ``grammar_not_checked``. Free text for a tool that takes JSON, or JSON for a custom
tool, is ``wrong_input_type``.

A property the schema gives a ``default`` may be left out, even where ``required`` lists it:
the tool's own default applies. Strict schemas (the OpenAI Agents SDK's, CrewAI's) list every
property as required, a defaulted one too, while the tool behind them fills a missing one in;
the rule is decided here once, for every path that checks calls.

This stage is pure: it neither parses arguments (the normalizer did) nor runs tools, and it
imports nothing but the vocabulary, the definitions' reader, jsonschema-rs and (for a lark
grammar) lark.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias, overload

from ._errors import UsageError
from ._json import json_path as _path
from ._tooldefs import TextFormat, definitions
from ._types import ArgumentIssue, Call, CustomToolCall, InvalidToolCall, JSONObject, ToolCall

if TYPE_CHECKING:
    import jsonschema_rs

__all__ = ("Toolset", "as_toolset", "unknown_tool")

#: The longest error message kept: a message that quotes a 16 KiB value is cut here.
MAX_MESSAGE_CHARS = 300

#: A custom tool's check of its text: the issue found, or ``None`` for text that matches.
TextCheck: TypeAlias = Callable[[str], ArgumentIssue | None]
#: The anomaly of a custom call whose tool declares a grammar that cannot be checked here.
GRAMMAR_NOT_CHECKED = "grammar_not_checked"
_UNCHECKED = "unchecked"  # a grammar declared that this process cannot check
_ANY_TEXT = "any text"  # a custom tool that takes any text
# Keywords under which a schema lists or maps subschemas (2020-12 and earlier drafts).
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_VALUES = ("items", "additionalItems", "contains", "not", "if", "then", "else", "propertyNames")
# An object schema with any of these already decides what undeclared properties mean, or gets
# properties from elsewhere; it is left as written.
_OPEN_KEYWORDS = frozenset(
    ("additionalProperties", "patternProperties", "unevaluatedProperties", "allOf", "anyOf", "oneOf", "$ref", "if")
)


class Toolset:
    """The tools offered to the model, each schema compiled once, ready to check calls.

    Args:
        tools: the tool definitions exactly as sent to the provider: a list in any provider's
            format (formats may be mixed), or a mapping of tool name to JSON Schema. pydantic
            model classes may stand in a list for tools named after the class.
        report_undeclared: report properties that a schema does not declare, unless the schema
            says itself what undeclared properties mean (``additionalProperties``,
            ``patternProperties``, ``unevaluatedProperties``, or a combination such as
            ``allOf``). On by default: a model that invents a field should be told.

    A property with a ``default`` may be left out even where ``required`` lists it (as strict
    schemas list every property): the tool's own default applies.

    Raises:
        UsageError: a definition in no known format, a missing or repeated name, or a schema
            that is not valid JSON Schema; the message names the tool and where it was.

    Attributes:
        names: the offered tools' names, in the order given.
    """

    def __init__(self, tools: Iterable[Any] | Mapping[str, Any], *, report_undeclared: bool = True) -> None:
        if not isinstance(report_undeclared, bool):
            raise UsageError(f"report_undeclared must be True or False, got {report_undeclared!r}")
        self.report_undeclared = report_undeclared
        self._validators: dict[str, jsonschema_rs.Validator | TextCheck | str | None] = {}
        for where, name, schema in definitions(tools):
            if name in self._validators:
                raise UsageError(f"{where}: the tool name {name!r} is given twice")
            if isinstance(schema, TextFormat):
                self._validators[name] = _text_check(schema)
            else:
                self._validators[name] = None if schema is None else _compile(where, name, schema, report_undeclared)
        self.names: tuple[str, ...] = tuple(self._validators)

    def __repr__(self) -> str:
        return f"Toolset(names={list(self.names)!r})"

    def __contains__(self, name: object) -> bool:
        return name in self._validators

    @overload
    def validate(self, call: ToolCall | InvalidToolCall, *, raw: object = None) -> ToolCall | InvalidToolCall: ...
    @overload
    def validate(self, call: CustomToolCall, *, raw: object = None) -> CustomToolCall | InvalidToolCall: ...
    @overload
    def validate(self, call: Call, *, raw: object = None) -> Call: ...
    def validate(self, call: Call, *, raw: object = None) -> Call:
        """Check one call: the same call when it is valid, else an invalid call with every error.

        A call that was already invalid stays invalid, with ``unknown_tool`` added when its tool
        was not offered. ``raw`` is the argument text as received, kept on an invalid call; when
        it is not given (or not text) the input is shown as compact JSON.
        """
        if not isinstance(call, Call):
            raise UsageError(
                f"validate takes a ToolCall, a CustomToolCall or an InvalidToolCall, got {type(call).__name__}"
            )
        if call.name is not None and call.name not in self._validators:
            return _invalid(call, (*_issues_of(call), self._unknown(call.name)), raw)
        if isinstance(call, InvalidToolCall):
            return call
        validator = self._validators[call.name]
        if isinstance(call, CustomToolCall):
            return _check_text(call, validator)
        if validator is None:
            return call
        if isinstance(validator, str) or callable(validator):
            return _invalid(call, (_wrong_input(call.name, "a custom tool: it takes free text, not JSON"),), raw)
        if validator.is_valid(call.input):  # is_valid: no error objects on the hot path
            return call
        return _invalid(call, tuple(_schema_issues(validator, call.input)), raw)

    def _unknown(self, name: str) -> ArgumentIssue:
        return unknown_tool(name, self.names)


def unknown_tool(name: str, offered: Iterable[str]) -> ArgumentIssue:
    """What the model is told about a call to a tool that is not among ``offered``."""
    listed = ", ".join(offered) or "none"
    return ArgumentIssue("unknown_tool", f"no tool named {_quote(name)} was offered; the offered tools are: {listed}")


def as_toolset(tools: Toolset | Iterable[Any] | Mapping[str, Any]) -> Toolset:
    """``tools`` when it is already a ``Toolset``, else a ``Toolset`` built from it."""
    return tools if isinstance(tools, Toolset) else Toolset(tools)


def _issues_of(call: Call) -> tuple[ArgumentIssue, ...]:
    return call.errors if isinstance(call, InvalidToolCall) else ()


def _check_text(call: CustomToolCall, validator: jsonschema_rs.Validator | TextCheck | str | None) -> Call:
    """A custom call checked against its tool: the grammar's issue, or the call (noted when its
    grammar could not be checked)."""
    if validator is None or validator == _ANY_TEXT:
        return call
    if validator == _UNCHECKED:
        return replace(call, anomalies=(*call.anomalies, GRAMMAR_NOT_CHECKED))
    if not callable(validator):
        return _invalid(
            call, (_wrong_input(call.name, "a function tool: it takes JSON arguments, not free text"),), None
        )
    issue = validator(call.input)
    return call if issue is None else _invalid(call, (issue,), None)


def _wrong_input(name: str, what: str) -> ArgumentIssue:
    return ArgumentIssue("wrong_input_type", f"the tool {_quote(name)} is {what}")


def _invalid(call: Call, issues: tuple[ArgumentIssue, ...], raw: object) -> InvalidToolCall:
    if isinstance(call, CustomToolCall):
        text, parsed = call.input, None
    elif isinstance(call, InvalidToolCall):
        text, parsed = call.raw, call.input
    else:
        text = raw if isinstance(raw, str) else json.dumps(call.input, ensure_ascii=False, separators=(",", ":"))
        parsed = call.input
    return InvalidToolCall(
        call.index,
        call.id,
        call.name,
        text,
        issues,
        choice=call.choice,
        anomalies=call.anomalies,
        input=parsed,
        state=call.state,
    )


# --- compiling -----------------------------------------------------------------------------


def _text_check(text_format: TextFormat) -> TextCheck | str:
    """A custom tool's check, compiled once: a function of the text, ``_ANY_TEXT``, or
    ``_UNCHECKED`` for a grammar this process cannot read."""
    if text_format.syntax is None:
        return _ANY_TEXT
    if text_format.syntax == "regex":
        return _regex_check(text_format.definition)
    return _lark_check(text_format.definition)


def _regex_check(definition: str) -> TextCheck | str:
    try:
        pattern = re.compile(definition)
    except (re.error, RecursionError, OverflowError):
        return _UNCHECKED  # OpenAI reads the Rust regex dialect; Python's re does not read it all

    def check(text: str) -> ArgumentIssue | None:
        if pattern.fullmatch(text):
            return None
        return ArgumentIssue("grammar", "the input does not match the tool's regex grammar (the whole text must match)")

    return check


def _lark_check(definition: str) -> TextCheck | str:
    try:
        import lark
    except ImportError:  # the optional extra streamkit-toolcalls[grammar]
        return _UNCHECKED
    try:
        parser = lark.Lark(definition, start="start")
    except (lark.exceptions.LarkError, RecursionError):
        return _UNCHECKED  # a grammar in a dialect (LLGuidance's) that lark does not read

    def check(text: str) -> ArgumentIssue | None:
        try:
            parser.parse(text)
        except lark.exceptions.UnexpectedInput as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            message = _shortened(f"the input does not match the tool's lark grammar: {reason}")
            position = exc.pos_in_stream if isinstance(exc.pos_in_stream, int) else None
            return ArgumentIssue("grammar", message, position=position)
        return None

    return check


def _shortened(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE_CHARS else f"{message[: MAX_MESSAGE_CHARS - 3]}..."


def _compile(where: str, name: str, schema: JSONObject, report_undeclared: bool) -> jsonschema_rs.Validator:
    schema = _defaults_optional(schema)
    if report_undeclared:
        schema = _close_objects(schema, _allof_targets(schema))
    import jsonschema_rs  # at the first schema compiled: ``import streamkit`` does not pay for it

    try:
        return jsonschema_rs.validator_for(schema, offline=True)
    except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError, TypeError) as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"{where}: the schema of tool {name!r} is not valid JSON Schema: {first_line}") from None


def _allof_targets(schema: Any) -> frozenset[str]:
    """The local ``$ref`` targets used as parts of a multi-part ``allOf``: they stay open."""
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            parts = node.get("allOf")
            if isinstance(parts, list) and len(parts) > 1:
                found.update(p["$ref"] for p in parts if isinstance(p, dict) and isinstance(p.get("$ref"), str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(found)


def _close_objects(schema: Any, keep_open: frozenset[str], pointer: str = "#", in_allof: bool = False) -> Any:
    """A copy of ``schema`` where each object schema that declares ``properties`` and says
    nothing about other properties gets ``additionalProperties: false``.

    Parts of a multi-part ``allOf`` (and the definitions such parts refer to) are left open, since
    each declares only some of the properties that the whole accepts.
    """
    if not isinstance(schema, dict):
        return schema

    def close(part: Any, key: str, sub: str | int | None) -> Any:
        where = (
            f"{pointer}/{key}" if sub is None else f"{pointer}/{key}/{_escape(sub) if isinstance(sub, str) else sub}"
        )
        split = key == "allOf" and len(schema[key]) > 1
        return _close_objects(part, keep_open, where, split)

    out = _subschemas_mapped(schema, close)
    closable = isinstance(schema.get("properties"), dict) and not (_OPEN_KEYWORDS & schema.keys())
    if closable and not in_allof and pointer not in keep_open:
        out["additionalProperties"] = False
    return out


def _defaults_optional(schema: Any) -> Any:
    """A copy of ``schema`` where no object schema requires a property it gives a ``default``:
    the tool's own default applies when the model leaves it out."""
    if not isinstance(schema, dict):
        return schema
    out = _subschemas_mapped(schema, lambda part, _key, _sub: _defaults_optional(part))
    properties, required = schema.get("properties"), schema.get("required")
    if isinstance(properties, dict) and isinstance(required, list):
        defaulted = {name for name, part in properties.items() if isinstance(part, dict) and "default" in part}
        kept = [name for name in required if not (isinstance(name, str) and name in defaulted)]
        if len(kept) < len(required):
            out["required"] = kept
    return out


def _subschemas_mapped(schema: dict[str, Any], visit: Callable[[Any, str, str | int | None], Any]) -> dict[str, Any]:
    """A copy of ``schema`` with each of its subschemas replaced by ``visit(part, keyword, key)``
    (``key`` the name or position under the keyword, None for a keyword holding one schema)."""
    out = dict(schema)
    for key in _SCHEMA_MAPS:
        value = schema.get(key)
        if isinstance(value, dict):
            out[key] = {sub: visit(part, key, sub) for sub, part in value.items()}
    for key in _SCHEMA_LISTS:
        value = schema.get(key)
        if isinstance(value, list):
            out[key] = [visit(part, key, i) for i, part in enumerate(value)]
    for key in _SCHEMA_VALUES:
        if key in schema:
            out[key] = visit(schema[key], key, None)
    return out


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


# --- reporting -----------------------------------------------------------------------------


def _schema_issues(validator: jsonschema_rs.Validator, value: JSONObject) -> list[ArgumentIssue]:
    """Every error, in the order of the values they concern in the input (a missing property
    after the properties present), so the order never depends on the validator's internals.
    The cost is linear in the number of errors: each object's keys are numbered once."""
    found: list[tuple[tuple[int, ...], ArgumentIssue]] = []
    position = _Positions(value).of
    for error in validator.iter_errors(value):
        kind = error.kind.name
        where = list(error.instance_path)
        if kind in ("additionalProperties", "unevaluatedProperties"):
            for name in error.kind.as_dict().get("unexpected", []):
                message = f"{_quote(name)} is not a property this tool accepts"
                found.append((position([*where, name]), ArgumentIssue("schema", message, path=_path([*where, name]))))
        elif kind == "required":
            missing = error.kind.as_dict().get("property")
            message = f"the required property {_quote(missing)} is missing"
            found.append((position([*where, missing]), ArgumentIssue("schema", message, path=_path([*where, missing]))))
        else:
            message = _shortened(error.message)
            found.append((position(where), ArgumentIssue("schema", message, path=_path(where))))
    found.sort(key=lambda pair: pair[0])
    return [issue for _, issue in found]


class _Positions:
    """Where a path points in one value, as the index of each step (keys in their order)."""

    def __init__(self, value: Any) -> None:
        self._value = value
        self._keys: dict[int, dict[Any, int]] = {}  # id of an object -> its keys, numbered once

    def of(self, where: list[Any]) -> tuple[int, ...]:
        value = self._value
        out = []
        for part in where:
            if isinstance(value, dict):
                keys = self._keys.get(id(value))
                if keys is None:
                    keys = self._keys[id(value)] = {key: number for number, key in enumerate(value)}
                out.append(keys.get(part, len(keys)))
                value = value.get(part)
            elif isinstance(value, list) and isinstance(part, int):
                out.append(part)
                value = value[part] if part < len(value) else None
            else:
                out.append(0)
        return tuple(out)


def _quote(name: object) -> str:
    return json.dumps(str(name), ensure_ascii=False)
