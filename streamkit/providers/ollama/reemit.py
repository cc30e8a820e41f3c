"""Ollama's native ``/api/chat`` (NDJSON), written back.

Every ``message.tool_calls`` entry is taken out of its line; each call is written on a line of
its own just before the line that held it, as one entry with its ``id``, ``function.index`` (a
distinct count from 0), name and ``arguments`` object. A line left with no text, no thinking
and no ``done`` is not written. Ollama's calls come whole, so none is ever cut off; the
``{"error": …}`` line passes through as it came.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._events import Frame
from .._encoder import Call, Encoder, arguments_value, dumps, loads

__all__ = ("OllamaEncoder",)


class OllamaEncoder(Encoder):
    framing = "ndjson"

    def __init__(self) -> None:
        self._head: dict[str, Any] = {}  # model, created_at
        self._count = 0

    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        if not calls and "tool_calls" not in frame.data:
            return [self.write(frame)]
        line = loads(frame.data)
        if not isinstance(line, dict):
            return [self.write(frame)]
        self._head = {key: line[key] for key in ("model", "created_at") if key in line}
        out = [self._call(call) for call in calls if self.written(call)]
        message = line.get("message")
        if isinstance(message, dict) and "tool_calls" in message:
            message = {key: value for key, value in message.items() if key != "tool_calls"}
            line = {**line, "message": message}
            if not line.get("done") and not message.get("content") and not message.get("thinking"):
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
