"""A ``Turn`` and its items as plain JSON values, and back: what a framework keeps between requests.

LangChain stores the turn in a message's ``additional_kwargs``, openai-agents stores items in an
output item's ``provider_data``; checkpointers may write either to disk. Reading it back checks
every field against the item's own annotations, so stored data that streamkit did not write is a
``UsageError`` naming the field, not a value that fails later, far from where it came in.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from .. import _turn_types, _types
from .._errors import UsageError
from .._turn_types import _TURN_ITEMS, Turn, TurnItem
from .._types import ArgumentIssue, TokenUsage

__all__ = ("ITEM_TYPES", "item_from_json", "item_json", "item_kind", "turn_from_json", "turn_json")

#: Every kind of turn item, by the name stored with it.
ITEM_TYPES: dict[str, type[Any]] = {cls.__name__: cls for cls in _TURN_ITEMS}

#: The tag an item's kind is stored under, and the one openai-agents sessions stored before it
#: (still read, so a conversation stored then keeps working).
TAG, OLD_TAG = "type", "kind"

_HINTS: dict[type[Any], dict[str, Any]] = {}
_TURN_FIELDS = ("provider", "items", "stop_reason", "usage", "choice", "finish", "tokens")


class _Mismatch(Exception):
    """A stored value that does not fit its field; the message says what it is instead."""


def item_json(item: TurnItem) -> dict[str, Any]:
    """``item`` as plain JSON values, its kind under ``TAG``."""
    out: dict[str, Any] = {TAG: type(item).__name__}
    for field in dataclasses.fields(item):
        if not field.metadata.get("transient"):  # a call's times belong to the run, not the turn
            out[field.name] = _plain(getattr(item, field.name))
    return out


def item_kind(data: Any) -> str | None:
    """The kind name stored with an item (under ``TAG``, or the old ``OLD_TAG``), if any."""
    if not isinstance(data, Mapping):
        return None
    name = data.get(TAG, data.get(OLD_TAG))
    return name if isinstance(name, str) else None


def item_from_json(data: Any, where: str) -> TurnItem:
    """The item ``item_json`` wrote (or an older writer, under ``OLD_TAG``); ``where`` names the
    stored data in an error."""
    name = item_kind(data)
    kind = ITEM_TYPES.get(name) if name is not None else None
    if kind is None:
        raise UsageError(f"{where} carries streamkit data that is not a turn item: {data!r:.80}")
    tag = TAG if TAG in data else OLD_TAG
    item: TurnItem = _build(kind, {key: value for key, value in data.items() if key != tag}, where)
    return item


def turn_json(turn: Turn) -> dict[str, Any]:
    """``turn`` as plain JSON values (what a checkpointer can store); ``turn_from_json`` reads it."""
    return {
        name: [item_json(item) for item in turn.items] if name == "items" else _plain(getattr(turn, name))
        for name in _TURN_FIELDS
    }


def turn_from_json(data: Any, where: str) -> Turn:
    """The ``Turn`` that ``turn_json`` wrote; ``where`` names the stored data in an error."""
    if not isinstance(data, Mapping) or not isinstance(data.get("items"), list):
        raise UsageError(f"{where} is not a turn streamkit wrote: {data!r:.80}")
    items = tuple(item_from_json(item, f"{where}['items'][{n}]") for n, item in enumerate(data["items"]))
    built: Turn = _build(Turn, {**data, "items": ()}, where)
    return dataclasses.replace(built, items=items)


def _plain(value: Any) -> Any:
    if isinstance(value, ArgumentIssue):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [_plain(entry) for entry in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value


def _build(cls: type[Any], data: Mapping[str, Any], where: str) -> Any:
    """``cls`` made of ``data``, each field checked against its annotation."""
    fields = {field.name: field for field in dataclasses.fields(cls)}
    hints = _hints(cls)
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise UsageError(f"{where} is not {_a(cls.__name__)} streamkit wrote: it has no field {unknown[0]!r}")
    values: dict[str, Any] = {}
    for name, field in fields.items():
        if name not in data:
            if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
                raise UsageError(f"{where} is not {_a(cls.__name__)} streamkit wrote: it has no {name!r}")
            continue
        try:
            values[name] = _value(data[name], hints[name], f"{where}[{name!r}]")
        except _Mismatch as exc:
            raise UsageError(f"{where} is not {_a(cls.__name__)} streamkit wrote: its {name!r} {exc}") from None
    return cls(**values)


def _hints(cls: type[Any]) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        # the classes say they are ``streamkit``'s: their annotations are read where they were written
        hints = _HINTS[cls] = get_type_hints(cls, globalns={**vars(_types), **vars(_turn_types)})
    return hints


def _value(value: Any, hint: Any, where: str) -> Any:
    """``value`` read as ``hint`` says (a list for a tuple, a mapping for a dataclass)."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        arms = [arm for arm in args if arm is not type(None)]
        for arm in arms:
            try:
                return _value(value, arm, where)
            except _Mismatch:
                continue
        raise _Mismatch(f"is {_shown(value)}, not {' or '.join(_named(arm) for arm in args)}")
    if origin is Literal:
        if value in args and isinstance(value, str):
            return value
        raise _Mismatch(f"is {_shown(value)}, not one of {', '.join(map(repr, args))}")
    if hint in (ArgumentIssue, TokenUsage):
        if not isinstance(value, Mapping):
            raise _Mismatch(f"is {_shown(value)}, not an object")
        return _build(hint, value, where)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise _Mismatch(f"is {_shown(value)}, not a list")
        return tuple(_value(entry, args[0], f"{where}[{n}]") for n, entry in enumerate(value))
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
            raise _Mismatch(f"is {_shown(value)}, not an object")
        return {key: _value(entry, args[1], where) for key, entry in value.items()}
    if hint is int and isinstance(value, bool):
        raise _Mismatch(f"is {_shown(value)}, not an int")
    if isinstance(value, hint):
        return value
    raise _Mismatch(f"is {_shown(value)}, not {_named(hint)}")


def _named(hint: Any) -> str:
    if hint is type(None):
        return "null"
    origin = get_origin(hint)
    if origin is tuple:
        return "a list"
    if origin in (dict, Mapping) or hint in (ArgumentIssue, TokenUsage):
        return "an object"
    if origin is Literal:
        return "one of " + ", ".join(map(repr, get_args(hint)))
    return _a(getattr(hint, "__name__", str(hint)))


def _a(name: str) -> str:
    return f"{'an' if name[0] in 'AEIOUaeiou' else 'a'} {name}"


def _shown(value: Any) -> str:
    return "null" if value is None else f"{type(value).__name__} {value!r:.40}"
