"""Cohere v2 chat, written back.

A call's ``tool-call-start``, ``tool-call-delta`` fragments and ``tool-call-end`` are held back;
at its end the call is written whole at its own index: the start as the provider sent it
(``arguments: ""``), one delta with all of the arguments, the end. A call cut by the output
limit is written without an end, with its raw text, just before the ``message-end`` whose
``finish_reason`` (``MAX_TOKENS``) cut it. Text, the tool plan, citations and ``message-end``
(an ``ERROR`` finish included) pass through as they came. A response whose bad call the model
is told of goes on with the answer: its ``message-end`` is not written, nor the answer's
``message-start``, and the answer's calls and content blocks are numbered on from these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._events import Frame
from ..._types import InvalidToolCall
from .._encoder import Call, Encoder, arguments_text, loads, sse_json

__all__ = ("CohereEncoder",)

_HELD = frozenset({"tool-call-start", "tool-call-delta", "tool-call-end"})
_BLOCKS = frozenset({"content-start", "content-delta", "content-end"})


class CohereEncoder(Encoder):
    continues = True

    def __init__(self) -> None:
        self._starts: dict[int, tuple[str | None, dict[str, Any]]] = {}  # index -> (event, start payload)
        self._calls = 0  # the index the next response's first call is written at
        self._blocks = 0  # and its first content block
        self._next = (0, 0)  # the same, past what this response has written
        self._resumed = False  # the next response's frames come: its message-start is not written

    def ends(self, frame: Frame) -> bool:
        """``message-end``, with the finish reason and the usage."""
        return frame.event == "message-end" or '"type":"message-end"' in frame.data

    def unended(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        """Only the calls the frame completed: the frame itself is all end."""
        return [piece for call in calls for piece in self._call(call)]

    def resume(self) -> None:
        """The next response's calls and content blocks are written at the indexes after these."""
        self._starts.clear()
        self._calls, self._blocks = self._next
        self._resumed = True

    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        if self._resumed and (frame.event == "message-start" or '"type":"message-start"' in frame.data):
            self._resumed = False
            return []
        if self._blocks or frame.event == "content-start" or '"type":"content-start"' in frame.data:
            block = self._block(frame)
            if block is not None:
                return [block]
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
        index = self._calls + call.index
        self._next = (max(self._next[0], index + 1), self._next[1])
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

    def _block(self, frame: Frame) -> bytes | None:
        """A content block's frame, at the index after the blocks of the responses before this
        one; ``None`` for any other frame."""
        payload = loads(frame.data) if "content-" in frame.data else None
        if not isinstance(payload, dict) or payload.get("type") not in _BLOCKS:
            return None
        index = payload.get("index")
        if not isinstance(index, int):
            return None
        self._next = (self._next[0], max(self._next[1], self._blocks + index + 1))
        return (
            self.write(frame) if not self._blocks else sse_json(frame.event, {**payload, "index": self._blocks + index})
        )
