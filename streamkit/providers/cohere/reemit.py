"""Cohere v2 chat, written back.

A call's ``tool-call-start``, ``tool-call-delta`` fragments and ``tool-call-end`` are held back;
at its end the call is written whole at its own index: the start as the provider sent it
(``arguments: ""``), one delta with all of the arguments, the end. A call cut by the output
limit is written without an end, with its raw text, just before the ``message-end`` whose
``finish_reason`` (``MAX_TOKENS``) cut it. Text, the tool plan, citations and ``message-end``
(an ``ERROR`` finish included) pass through as they came.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._events import Frame
from ..._types import InvalidToolCall
from .._encoder import Call, Encoder, arguments_text, loads, sse_json

__all__ = ("CohereEncoder",)

_HELD = frozenset({"tool-call-start", "tool-call-delta", "tool-call-end"})


class CohereEncoder(Encoder):
    def __init__(self) -> None:
        self._starts: dict[int, tuple[str | None, dict[str, Any]]] = {}  # index -> (event, start payload)

    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        held = False
        if calls or "tool-call-" in frame.data:
            payload = loads(frame.data)
            if isinstance(payload, dict) and payload.get("type") in _HELD:
                held = True
                if payload["type"] == "tool-call-start" and isinstance(payload.get("index"), int):
                    self._starts[payload["index"]] = (frame.event, payload)
        out = [piece for call in calls for piece in self._call(call)]
        if not held:
            out.append(self.write(frame))
        return out

    def _call(self, call: Call) -> list[bytes]:
        event, start = self._starts.pop(call.index, ("tool-call-start", None))
        if not self.written(call):
            return []
        entry: dict[str, Any] = {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        if start is not None:
            entry = start["delta"]["message"]["tool_calls"]
            entry = {**entry, "function": {**entry.get("function", {}), "arguments": ""}}
        index = call.index
        body = {"function": {"arguments": arguments_text(call)}}
        out = [
            sse_json(
                event,
                {
                    **(start or {}),
                    "type": "tool-call-start",
                    "index": index,
                    "delta": {"message": {"tool_calls": entry}},
                },
            ),
            sse_json(
                event and "tool-call-delta",
                {"type": "tool-call-delta", "index": index, "delta": {"message": {"tool_calls": body}}},
            ),
        ]
        if not (isinstance(call, InvalidToolCall) and call.truncated):
            out.append(sse_json(event and "tool-call-end", {"type": "tool-call-end", "index": index}))
        return out
