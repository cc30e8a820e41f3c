"""JSON text -> Python values with every integer exact, at orjson's speed where that is free.

orjson reads an integer beyond the 64-bit range as a float (``123456789012345678901234567890``
comes back as ``1.2345678901234568e+29``), and fails on one of 309 digits or more ("number is
infinity"). The standard library reads both exactly, more slowly. So text is read by orjson,
and read again by ``loads_exact`` only when orjson's value may be inexact (``_inexact``, the
check every read pays, apart from this module) or orjson failed on such an integer
(``big_integer_at``). ``loads_exact`` keeps orjson's rules: no ``NaN`` or ``Infinity``, no float
that overflows. ``shown`` writes what orjson cannot (an integer beyond 64 bits, a lone
surrogate, nesting past its depth, ``NaN``) as the standard library writes it. Only a read or a
write that needs it loads this module.

This module belongs to the vocabulary: every stage may import it, and it imports nothing from
streamkit.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from itertools import islice
from typing import Any, cast

import orjson

__all__ = (
    "big_integer_at",
    "holds_more_tokens",
    "has_lone_surrogate",
    "json_path",
    "loads_exact",
    "shown",
    "twin",
    "value_spans",
)

# An integer literal (no fraction, no exponent).
_INTEGER = re.compile(r"-?[0-9]+(?![0-9.eE])")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: The tokens that give JSON text its structure: a string, or one of ``{}[]:,``; an unclosed
#: string's quote alone. Numbers and literals lie between them, unread.
_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|"', re.DOTALL)
_SPACE = " \t\n\r"
# A string, whole (its escapes inside it), or one bracket, comma or colon: the tokens of JSON
# text that reading it builds an object for, or a slot in one.
_TOKEN = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|[\[{,:]', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")


def json_path(parts: Iterable[Any]) -> str:
    """A JSON path in the ``$.items[2].qty`` form; odd keys are quoted: ``$["first name"]``."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif isinstance(part, str) and _IDENTIFIER.match(part):
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(str(part), ensure_ascii=False)}]")
    return "".join(out)


def big_integer_at(text: str, message: str, position: int) -> bool:
    """Whether orjson's error is an integer too big for a float, not a float that overflowed."""
    return message.startswith("number is infinity") and _INTEGER.match(text, position) is not None


def holds_more_tokens(text: str, most: int) -> bool:
    """Whether JSON ``text`` holds more than ``most`` tokens: strings, brackets, commas and colons
    (one inside a string is not one).

    Every value is a string or follows one of the others, so their number bounds what reading
    the text builds (a container counts twice, with its bracket) before any of it is built. Text
    that is not JSON is counted as if it were: the reader stops at its first bad character.
    """
    if text.count('"') // 2 + sum(map(text.count, "[{,:")) <= most:
        return False  # at most that many, counted in C: the common answer, without a walk
    return sum(1 for _ in islice(_TOKEN.finditer(text), most + 1)) > most


def loads_exact(text: str) -> Any:
    """The standard library's exact read, held to orjson's rules.

    Raises ``json.JSONDecodeError`` for text that is not JSON, ``ValueError`` for ``NaN``,
    ``Infinity``, a float that overflows or an integer longer than Python reads, and
    ``RecursionError`` for nesting too deep to read this way.
    """
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    number = float(text)
    if number in (math.inf, -math.inf):
        raise ValueError("number is infinity when parsed as double")
    return number


def has_lone_surrogate(value: Any) -> bool:
    """Whether a string in ``value`` holds a lone surrogate (orjson refuses ``"\\ud800"``)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            stack.extend(item)
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
        elif type(item) is str and not item.isascii() and _SURROGATE.search(item):  # no copy of the text
            return True
    return False


_MISSING: Any = object()


def twin(read: Any, exact: Any, node: Any) -> Any:
    """The value in ``exact`` at the place ``node`` (found by identity) has in ``read``.

    ``read`` and ``exact`` are two reads of the same text, so they have the same shape; the
    result is ``node`` itself when it is not inside ``read``.
    """
    stack = [(read, exact)]
    while stack:
        mine, theirs = stack.pop()
        if mine is node:
            return theirs
        if type(mine) is dict and type(theirs) is dict:
            stack.extend((value, theirs.get(key, _MISSING)) for key, value in mine.items())
        elif type(mine) is list and type(theirs) is list:
            stack.extend(zip(mine, theirs, strict=False))
    return node


Paths = tuple[tuple[str | None, ...], ...]


class _Level:
    """A container open in ``value_spans``' scan: the patterns its path fits, the label of its
    member being read (a key, or an index), and whether it waits for a key."""

    __slots__ = ("alive", "is_object", "label", "wants_key")

    def __init__(self, is_object: bool, alive: Paths) -> None:
        self.is_object = is_object
        self.alive = alive
        self.wants_key = is_object
        self.label: str | int | None = None if is_object else 0


def value_spans(text: str, paths: Paths) -> list[tuple[int, int, int]] | None:
    """``(start, end, depth)`` of each value in JSON ``text`` at one of ``paths`` (keys, and
    ``None`` for any array index), but strings: ``depth`` is the deepest nesting of arrays and
    objects in it, counted from the text's root. ``None`` when the structure cannot be followed.

    The scan reads the structure alone (strings, brackets, colons, commas): no number is read,
    and no string decoded but the keys on a path. So it follows text a strict reader refuses
    for a value inside it (a number too big for a float, a lone surrogate escape, nesting deeper
    than the reader goes), and finds which value that is. A value on a path is not looked into.
    """
    spans: list[tuple[int, int, int]] = []
    stack: list[_Level] = []
    fits: Paths = paths  # the patterns the value starting next fits, when one is due
    due = True  # a value starts with the next token, or lies before it (a number, a literal)
    begun = -1  # where the value on a path being scanned starts
    floor = deepest = 0  # the stack's height outside it, and the deepest nesting within it
    after = 0  # the end of the token before
    for token in _STRUCTURE.finditer(text):
        mark, at = token.group(), token.start()
        if mark == '"':
            return None  # a string never closed
        on_path = due and any(len(path) == len(stack) for path in fits)
        if mark == "{" or mark == "[":
            if on_path:
                begun, floor, deepest = at, len(stack), len(stack)
            below = () if begun >= 0 else tuple(path for path in fits if len(path) > len(stack))
            stack.append(_Level(mark == "{", below))
            deepest = max(deepest, len(stack))
        elif on_path and mark[0] != '"':  # a number or a literal ends before this token
            start, end = _trim(text, after, at)
            if start < end:
                spans.append((start, end, len(stack)))
        due, fits = False, ()
        if mark == "[":
            due, fits = _member(stack)  # its first value, if any
        elif mark == "{":
            pass  # a key comes first
        elif mark == "}" or mark == "]":
            if not stack or stack[-1].is_object != (mark == "}"):
                return None
            stack.pop()
            if begun >= 0 and len(stack) == floor:
                spans.append((begun, token.end(), deepest))
                begun = -1
        elif not stack:
            return None  # a colon, a comma or a string outside any container
        elif mark == ":":
            due, fits = _member(stack)
        elif mark == ",":
            top = stack[-1]
            if top.is_object:
                top.wants_key = True
            else:
                top.label = cast(int, top.label) + 1
                due, fits = _member(stack)
        elif stack[-1].wants_key:  # a key: the next member's label
            top = stack[-1]
            top.wants_key = False
            top.label = _key(mark) if top.alive else None
        after = token.end()
    return spans if not stack else None


def _member(stack: list[_Level]) -> tuple[bool, Paths]:
    """A value is due in the container on top: the patterns its label fits."""
    top = stack[-1]
    if not top.alive:
        return True, ()
    step, label = len(stack) - 1, top.label
    return True, tuple(path for path in top.alive if _fits(path[step], label))


def _fits(step: str | None, label: str | int | None) -> bool:
    return type(label) is int if step is None else step == label


def _key(token: str) -> str | None:
    """A key's text, as the reader takes it; ``None`` for a key no reader takes."""
    try:
        key = json.loads(token)
    except ValueError:
        return None
    return key if isinstance(key, str) else None


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """The span ``start:end`` of ``text`` without the JSON spaces around it."""
    while start < end and text[start] in _SPACE:
        start += 1
    while end > start and text[end - 1] in _SPACE:
        end -= 1
    return start, end


def shown(value: Any) -> str:
    """``value`` as compact JSON, one level at a time (no writer that recurses goes past a few
    hundred levels); ``NaN`` and the infinities as the standard library writes them. Raises
    ``TypeError`` for what JSON has no form for, ``ValueError`` for an integer too long to write."""
    out: list[str] = []
    stack: list[tuple[bool, Any]] = [(False, value)]  # (a token to write as it is, the token or value)
    while stack:
        token, item = stack.pop()
        if token:
            out.append(item)
        elif isinstance(item, dict):
            stack.append((True, "}"))
            entries = list(item.items())
            for position in range(len(entries) - 1, -1, -1):
                key, member = entries[position]
                stack += ((False, member), (True, _shown_key(key) + ":"))
                if position:
                    stack.append((True, ","))
            stack.append((True, "{"))
        elif isinstance(item, list):
            stack.append((True, "]"))
            for position in range(len(item) - 1, -1, -1):
                stack.append((False, item[position]))
                if position:
                    stack.append((True, ","))
            stack.append((True, "["))
        elif isinstance(item, str):
            out.append(_shown_string(item))
        elif isinstance(item, (bool, int, float)) or item is None:
            out.append(json.dumps(item))  # an integer of any size; NaN, Infinity
        else:
            raise TypeError(type(item).__name__)
    return "".join(out)


def _shown_key(key: Any) -> str:
    """An object key, as the standard library writes one: a scalar key as its JSON text, quoted."""
    if isinstance(key, str):
        return _shown_string(key)
    if isinstance(key, (bool, int, float)) or key is None:
        return _shown_string(json.dumps(key))
    raise TypeError(type(key).__name__)


def _shown_string(text: str) -> str:
    try:
        return orjson.dumps(text).decode()
    except TypeError:  # a lone surrogate: shown as its escape
        return json.dumps(text)
