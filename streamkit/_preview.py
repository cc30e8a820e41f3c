"""Argument text still streaming -> the value its complete part already shows, for previews.

``PartialJSON`` follows one call's growing argument text. Each ``update(text)`` scans only the
characters added since the last update (regular expressions jump over string contents, so the
scan runs at C speed), keeps the open containers on a stack, and remembers the last offset
where the text can be closed into valid JSON. The preview is that prefix, closed, parsed with
orjson: a full parse of the text so far, so a preview costs time in proportion to the text,
and callers throttle how often they ask.

What a preview shows (every value in it is final except the last string):

- complete values, exactly as they will be in the call;
- the string being received, as a prefix of its final value (a half-received escape is left
  out until its last character arrives);
- open objects and arrays, closed; a key whose value has not started is left out, and so is a
  number, ``true``, ``false`` or ``null`` until a delimiter shows that it is complete.

Text that can no longer become valid JSON gives no more previews, and so does text nested
deeper than ``max_depth`` (such a call is ``too_deep``; the parsers, the exact one for big
integers most of all, need not go that deep): the call's one strict parse, at its end marker,
reports what is wrong. This stage never decides what a call is.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from ._limits import DEFAULT_MAX_DEPTH

__all__ = ("NO_PREVIEW", "PartialJSON")

NO_PREVIEW: Any = object()
"""Returned by ``PartialJSON.update`` when there is nothing new to show."""

_STRUCTURE = re.compile(r'[{}\[\]",:]')
_STRING_END = re.compile(r'["\\]')
_LONG_INTEGER = re.compile(r"\d{19}")  # may not fit 64 bits: orjson would read it as a float
_CLOSERS = {"{": "}", "[": "]"}


class PartialJSON:
    """The scanner for one call's argument text; feed it the whole text so far each time."""

    __slots__ = (
        "_broken",
        "_done",
        "_escape",
        "_expect_key",
        "_good",
        "_in_string",
        "_is_key",
        "_last",
        "_max_depth",
        "_pos",
        "_stack",
        "_surrogate",
    )

    def __init__(self, max_depth: int = DEFAULT_MAX_DEPTH) -> None:
        self._max_depth = max_depth
        self._pos = 0  # where the next scan starts
        self._stack: list[str] = []  # the open containers, "{" or "["
        self._good = -1  # the last offset where the text closes into valid JSON
        self._in_string = False
        self._is_key = False  # the open string is an object key
        self._expect_key = False  # the next string in the open object is a key
        self._escape = -1  # offset of a backslash whose escape is not complete yet
        self._surrogate = (-1, -1)  # (start, end) of the last \uD800-\uDBFF escape
        self._done = False  # the top-level value is complete
        self._broken = False
        self._last: tuple[int, str] | None = None

    def update(self, text: str) -> Any:
        """The value the text so far shows, or ``NO_PREVIEW`` when it shows nothing new.

        ``text`` must start with the text of the previous update.
        """
        if self._broken:
            return NO_PREVIEW
        self._scan(text)
        if self._broken:
            return NO_PREVIEW
        if self._in_string and not self._is_key:
            cut = self._escape if self._escape >= 0 else len(text)
            if self._surrogate[1] == cut:  # never split a surrogate pair
                cut = self._surrogate[0]
            suffix = '"'
        else:
            cut, suffix = self._good, ""
        if cut < 0:
            return NO_PREVIEW
        suffix += "".join(_CLOSERS[opener] for opener in reversed(self._stack))
        if self._unchanged(text, cut, suffix):
            return NO_PREVIEW
        self._last = (cut, suffix)
        closed = text[:cut] + suffix
        try:
            value = orjson.loads(closed)
        except orjson.JSONDecodeError:
            self._broken = True  # a prefix that closes badly stays bad whatever follows
            return NO_PREVIEW
        if _LONG_INTEGER.search(closed):
            value = json.loads(closed)  # exact integers beyond 64 bits, as the final parse gives
        return value

    def _unchanged(self, text: str, cut: int, suffix: str) -> bool:
        """Whether ``text[:cut] + suffix`` is the text parsed last time (a string that just
        closed shows what its open form showed)."""
        if self._last is None:
            return False
        last_cut, last_suffix = self._last
        if last_cut + len(last_suffix) != cut + len(suffix):
            return False
        start = min(cut, last_cut)  # the text before both cuts was the same both times
        return text[start:cut] + suffix == text[start:last_cut] + last_suffix

    def _scan(self, text: str) -> None:
        pos, end = self._pos, len(text)
        stack = self._stack
        if self._escape >= 0:
            pos, self._escape = self._escape, -1
        while pos < end:
            if self._in_string:
                match = _STRING_END.search(text, pos)
                if match is None:
                    pos = end
                    break
                at = match.start()
                if text[at] == "\\":
                    size = 6 if text[at + 1 : at + 2] == "u" else 2
                    if at + size > end:
                        self._escape = at  # complete it on the next update
                        pos = end
                        break
                    if size == 6 and text[at + 2 : at + 4].lower() in ("d8", "d9", "da", "db"):
                        self._surrogate = (at, at + 6)
                    pos = at + size
                    continue
                self._in_string = False
                pos = at + 1
                if self._is_key:
                    self._expect_key = False
                else:
                    self._good = pos
                    self._done = not stack
                continue
            if self._done:
                if text[pos:].strip():
                    self._broken = True
                pos = end
                break
            match = _STRUCTURE.search(text, pos)
            if match is None:
                pos = end
                break
            at = match.start()
            char = text[at]
            pos = at + 1
            if char == '"':
                self._in_string = True
                self._is_key = self._expect_key and bool(stack) and stack[-1] == "{"
            elif char in "{[":
                if len(stack) >= self._max_depth:
                    self._broken = True  # too deep: the call will be too_deep
                    break
                stack.append(char)
                self._expect_key = char == "{"
                self._good = pos
            elif char in "}]":
                if not stack or _CLOSERS[stack.pop()] != char:
                    self._broken = True
                    break
                self._expect_key = False
                self._good = pos
                self._done = not stack
            elif char == ",":
                if not stack:
                    self._broken = True  # two top-level values
                    break
                self._good = at
                self._expect_key = bool(stack) and stack[-1] == "{"
        self._pos = pos
