"""Builds one JSON object from (JSONPath, value) pieces: Vertex AI's streamed function arguments.

Vertex sends a call's arguments as ``partialArgs`` entries, each a JSONPath (RFC 9535, e.g.
``$.recipe.ingredients[0].name``) and one typed value. Strings may come in pieces: an entry
with ``willContinue: true`` promises more text for the same path, and the pieces are joined in
order. This module only assembles; it raises ``PathError`` (a ``ValueError``) for anything it
cannot place exactly, and the decoder turns that into a protocol error naming the call.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

__all__ = ("PathAssembler", "PathError", "parse_path")

Segment = str | int

# One segment after "$": .name, [0], ['name'] or ["name"] (with \-escapes inside the quotes).
_SEGMENT = re.compile(r"""\.([A-Za-z_][\w-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]""")
_ESCAPE = re.compile(r"\\(.)")
_MAX_INDEX_DIGITS = 18


class PathError(ValueError):
    """A piece that cannot be placed: a bad path, a gap in an array, a value given twice."""


def parse_path(path: str) -> tuple[Segment, ...]:
    """``$.a[0]['b c']`` -> ``("a", 0, "b c")``; anything else is a ``PathError``."""
    if not path.startswith("$"):
        raise PathError(f"the path {path!r} does not start with '$'")
    segments: list[Segment] = []
    at = 1
    while at < len(path):
        match = _SEGMENT.match(path, at)
        if match is None:
            raise PathError(f"the path {path!r} cannot be read at character {at}")
        name, number, single, double = match.groups()
        if number is not None:
            if len(number) > _MAX_INDEX_DIGITS:  # no array that long: and int() would refuse 4,301 digits
                raise PathError(f"the path has an array index of {len(number)} digits at character {at}")
            segments.append(int(number))
        else:
            quoted = single if single is not None else double
            segments.append(name if quoted is None else _ESCAPE.sub(r"\1", quoted))
        at = match.end()
    if not segments:
        raise PathError("a value for the whole object ('$') is not a piece of it")
    return tuple(segments)


class PathAssembler:
    """Places each piece into ``value``, the object being built.

    The pieces of a string are kept in a list and joined once, when the string closes (or when
    ``value`` is read before that), so a long string costs time linear in its length.
    """

    __slots__ = ("_open", "_pieces", "_place", "_root", "size")

    def __init__(self) -> None:
        self._root: dict[str, Any] = {}
        self._open: tuple[Segment, ...] | None = None  # the string path still being continued
        self._place: tuple[Any, Segment] = (self._root, "")  # its container and key
        self._pieces: list[str] = []
        #: Characters received: each piece's path and its string (a number or a literal as 8).
        self.size = 0

    @property
    def value(self) -> dict[str, Any]:
        """The object so far; a string still being continued holds the pieces received."""
        if self._open is not None:
            container, key = self._place
            container[key] = "".join(self._pieces)
        return self._root

    @property
    def open_path(self) -> tuple[Segment, ...] | None:
        """The path of a string promised more pieces (``willContinue``), if any."""
        return self._open

    def add(self, path: str, value: Any, *, continues: bool) -> None:
        self.size += len(path) + (len(value) if isinstance(value, str) else 8)
        segments = parse_path(path)
        if self._open is not None and segments != self._open:
            raise PathError(f"a value for {path} while the string at {_show(self._open)} was still continuing")
        if (continues or self._open is not None) and not isinstance(value, str):
            raise PathError(f"only a string can come in pieces, but {path} got {type(value).__name__}")
        if self._open is not None:  # the next piece of the same string
            self._pieces.append(value)
            if not continues:
                container, key = self._place
                container[key] = "".join(self._pieces)
                self._open, self._pieces = None, []
            return
        parent = self._parent(segments)
        last = segments[-1]
        if isinstance(parent, list):
            if last != len(parent):
                raise PathError(f"{path} does not follow the {len(parent)} element(s) already in its array")
            parent.append(value)
        elif last in parent:
            raise PathError(f"a second value for {path}")
        else:
            parent[last] = value
        if continues:
            self._open, self._place, self._pieces = segments, (parent, last), [value]

    def _parent(self, segments: tuple[Segment, ...]) -> Any:
        node: Any = self._root
        for depth, (segment, following) in enumerate(itertools.pairwise(segments)):
            fresh: Any = [] if isinstance(following, int) else {}
            where = _show(segments[: depth + 1])
            if isinstance(segment, int):
                if not isinstance(node, list):
                    raise PathError(f"{where} indexes something that is not an array")
                if segment == len(node):
                    node.append(fresh)
                elif segment > len(node):
                    raise PathError(f"{where} skips array elements")
            elif not isinstance(node, dict):
                raise PathError(f"{where} names a member of something that is not an object")
            else:
                node.setdefault(segment, fresh)
            node = node[segment]
            if not isinstance(node, type(fresh)):
                raise PathError(f"{where} is used both as {_kind(node)} and as {_kind(fresh)}")
        if isinstance(segments[-1], int) != isinstance(node, list):
            raise PathError(f"{_show(segments)} does not match the container at {_show(segments[:-1])}")
        return node


def _show(segments: tuple[Segment, ...]) -> str:
    return "$" + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in segments)


def _kind(node: Any) -> str:
    return "an array" if isinstance(node, list) else "an object" if isinstance(node, dict) else "a value"
