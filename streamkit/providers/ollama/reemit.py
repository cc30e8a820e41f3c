"""Ollama's native ``/api/chat`` (NDJSON), written back.

Every ``message.tool_calls`` entry is taken out of its line; each call is written on a line of
its own just before the line that held it, as one entry with its ``id``, ``function.index`` (a
distinct count from 0), name and ``arguments`` object. A line left with no text, no thinking
and no ``done`` is not written. Ollama's calls come whole, so none is ever cut off; the
``{"error": …}`` line passes through as it came. A response whose bad call the model is told of
goes on with the answer: its ``done`` line is written as a line not done, without its reason and
counts, or not at all when nothing else was in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._events import Frame
from .._encoder import Call, Encoder, arguments_value, dumps, loads

__all__ = ("OllamaEncoder",)

#: The fields of a line that are not its end (``done_reason``, the durations and counts are).
_KEPT = frozenset({"model", "created_at", "message"})


class OllamaEncoder(Encoder):
    framing = "ndjson"
    continues = True

    def __init__(self) -> None:
        self._head: dict[str, Any] = {}  # model, created_at
        self._count = 0

    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        if not calls and "tool_calls" not in frame.data:
            return [self.write(frame)]
        line = loads(frame.data)
        if not isinstance(line, dict):
            return [self.write(frame)]
        return self._line(line, calls)

    def ends(self, frame: Frame) -> bool:
        """The line with ``"done": true``."""
        line = loads(frame.data) if "done" in frame.data else None
        return isinstance(line, dict) and line.get("done") is True

    def unended(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        """The line's calls and text as a line not done: its reason and counts go, the next
        response's own end comes instead."""
        line = loads(frame.data)
        assert isinstance(line, dict)  # ``ends`` read it
        kept = {key: value for key, value in line.items() if key in _KEPT} | {"done": False}
        return self._line(kept, calls, bare=False)

    def resume(self) -> None:
        """Nothing to drop: a line carries nothing of the stream before it, and the calls are
        numbered on by ``_count``."""

    def _line(self, line: dict[str, Any], calls: Sequence[Call], *, bare: bool = True) -> list[bytes]:
        """The calls, then the line without them; a line left with nothing is not written, and
        with ``bare`` a line that held no call is written as it came."""
        self._head = {key: line[key] for key in ("model", "created_at") if key in line}
        out = [self._call(call) for call in calls if self.written(call)]
        message = line.get("message")
        if isinstance(message, dict) and "tool_calls" in message:
            message = {key: value for key, value in message.items() if key != "tool_calls"}
            line = {**line, "message": message}
            bare = False
        if not bare and not line.get("done") and not _said(message):
            return out
        out.append(dumps(line).encode() + b"\n")
        return out

    def _call(self, call: Call) -> bytes:
        function = {"index": self._count, "name": call.name, "arguments": arguments_value(call)}
        self._count += 1
        entry: dict[str, Any] = {} if call.id is None else {"id": call.id}
        entry["function"] = function
        message = {"role": "assistant", "content": "", "tool_calls": [entry]}
        return dumps({**self._head, "message": message, "done": False}).encode() + b"\n"


def _said(message: Any) -> bool:
    """Whether a line's message holds text or thinking (what is left once its calls are out)."""
    return isinstance(message, dict) and bool(message.get("content") or message.get("thinking"))
