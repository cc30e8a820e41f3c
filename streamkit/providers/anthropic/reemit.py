"""Anthropic Messages, written back.

A ``tool_use`` block's frames (its ``content_block_start``, ``input_json_delta`` fragments and
``content_block_stop``) are held back; at the block's stop the call is written whole at the
block's own index: the start as the provider sent it (``input: {}``), one ``input_json_delta``
with all of the arguments, the stop. A block cut by the output limit is written without a stop,
with its raw text, just before the ``message_delta`` whose ``stop_reason`` (``max_tokens``) cut
it, as the provider sent it. Text, thinking (signatures included), server tools, pings and
errors pass through as they came. An invalid call left out takes its block with it. The SDK
appends each block and finds it by index, so each block is written at its place among the blocks
written: one index lower for each block left out before it, and a new index for a block whose
index the provider reused after that index's stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._events import Frame
from ..._types import InvalidToolCall
from .._encoder import Call, Encoder, Piece, arguments_text, loads, sse_json

__all__ = ("AnthropicEncoder",)

#: The events that end a message: its stop reason and usage, then its stop.
_ENDS = ("message_delta", "message_stop")


class AnthropicEncoder(Encoder):
    continues = True

    @classmethod
    def error_body(cls, kind: str, message: str, code: str | None) -> Any:
        return {"type": "error", "error": {"type": kind, "message": message}}

    @classmethod
    def error_event(cls, kind: str, message: str, code: str) -> bytes:
        """``event: error``, on which the anthropic SDKs raise ``APIStatusError``."""
        return sse_json("error", cls.error_body(kind, message, code))

    def __init__(self) -> None:
        self._starts: dict[int, dict[str, Any]] = {}  # held tool_use blocks: index -> start payload
        self._written = 0  # blocks written so far: the index the next one is written at
        self._moved: dict[int, int] = {}  # an open block's index -> the index it is written at
        self._shifted = False  # some block is written at an index other than its own
        self._pieces: dict[int, int] = {}  # a call written as fragments: its block's index -> where written
        self._resumed = False  # the next response's frames come: its message_start is not written

    def ends(self, frame: Frame) -> bool:
        """The ``message_delta`` with the stop reason, and the ``message_stop`` after it."""
        return frame.event in _ENDS or any(f'"type":"{name}"' in frame.data for name in _ENDS)

    def unended(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        """Only the calls the frame completed: the frame itself is all end."""
        return [piece for call in calls for piece in self._call(call)]

    def open_calls(self, calls: Sequence[Call]) -> list[bytes]:
        """Each a block without its stop, its raw text, as a cut block is written."""
        return [piece for call in calls for piece in self._call(call)]

    def resume(self) -> None:
        """The next response's blocks are written after these, at the next places (``_place``)."""
        self._starts.clear()
        self._moved.clear()
        self._shifted = self._resumed = True

    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        data = frame.data
        if self._resumed and (frame.event == "message_start" or '"type":"message_start"' in data):
            self._resumed = False
            return []
        held = False
        if calls or "tool_use" in data or (self._starts and "content_block_" in data):
            held = self._hold(loads(data))
        out = [piece for call in calls for piece in self._call(call)]
        if not held:
            moving = "content_block_start" in data or (self._shifted and "content_block_" in data)
            out.append(self._move(frame) if moving else self.write(frame))
        return out

    def _move(self, frame: Frame) -> bytes:
        """A block's frame with the index it is written at (a start takes the next place)."""
        payload = loads(frame.data)
        index = payload.get("index") if isinstance(payload, dict) else None
        if not isinstance(index, int) or not str(payload.get("type", "")).startswith("content_block_"):
            return self.write(frame)
        if payload["type"] == "content_block_start":
            self._moved[index] = self._place(index)
        return sse_json(frame.event, {**payload, "index": self._moved.get(index, index)})

    def _hold(self, payload: Any) -> bool:
        """Whether the frame belongs to a client call's block (and is written with the call)."""
        if not isinstance(payload, dict):
            return False
        kind, index = payload.get("type"), payload.get("index")
        if kind == "content_block_start":
            block = payload.get("content_block")
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(index, int):
                self._starts[index] = payload
                return True
            return False
        return kind in ("content_block_delta", "content_block_stop") and index in self._starts

    def _call(self, call: Call) -> list[bytes]:
        start = self._starts.pop(call.index, None)
        if not self.written(call):
            return []
        block = dict(start["content_block"]) if start is not None else {"type": "tool_use"}
        if start is None:
            block |= {"id": call.id, "name": call.name}
        block["input"] = {}
        index = self._place(call.index)
        delta = {"type": "input_json_delta", "partial_json": arguments_text(call)}
        out = [
            sse_json(
                "content_block_start",
                {**(start or {"type": "content_block_start"}), "index": index, "content_block": block},
            ),
            sse_json("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
        ]
        if not (isinstance(call, InvalidToolCall) and call.truncated):
            out.append(sse_json("content_block_stop", {"type": "content_block_stop", "index": index}))
        return out

    def opening(self, piece: Piece, sequence: Any) -> bytes:
        number = self._pieces[piece.number] = self._place(piece.number)
        block = {"type": "tool_use", "id": piece.id, "name": piece.name} | dict(piece.item) | {"input": {}}
        return sse_json("content_block_start", {"type": "content_block_start", "index": number, "content_block": block})

    def fragment(self, piece: Piece, text: str, sequence: Any) -> bytes:
        delta = {"type": "input_json_delta", "partial_json": text}
        index = self._pieces[piece.number]
        return sse_json("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})

    def closing(self, piece: Piece, text: str, sequence: Any) -> list[bytes]:
        self._starts.pop(piece.number, None)  # its held start: the index is free again
        index = self._pieces.pop(piece.number)
        return [sse_json("content_block_stop", {"type": "content_block_stop", "index": index})]

    def _place(self, index: int) -> int:
        """The index a block the provider started at ``index`` is written at: the next one."""
        place, self._written = self._written, self._written + 1
        self._shifted = self._shifted or place != index
        return place
