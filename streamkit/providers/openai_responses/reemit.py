"""OpenAI Responses, written back.

A ``function_call`` item's events (``response.output_item.added``, the
``response.function_call_arguments.delta`` fragments, ``.done``, ``response.output_item.done``)
are held back; at the call's end marker it is written whole at its own ``output_index``: the
item added as the provider sent it (``arguments: ""``), one delta with all of the arguments,
the arguments' ``done`` and the item's ``done``. The events written carry the
``sequence_number`` of the event that ended the call. The ``function_call`` items of the final
``response.completed`` are given the same arguments, since that event is what an SDK's final
response is read from. A call whose fragments and final text disagree stays so: its fragments
go in the delta, the provider's final text in the ``done`` events, and the final response keeps
its own. A call cut by the output limit is written with its raw text and no ``done`` events,
just before the ``response.incomplete`` that cut it, which is written as the provider sent it.
Reasoning, messages, server tools, ``error`` and ``response.failed`` pass through as they came.
An invalid call left out takes its item with it, in the final response too; the items after it
are written one ``output_index`` lower (the SDK appends each item and finds it by that index).
A ``custom_tool_call`` item is held and written the same way, its text in ``input`` and its
events ``response.custom_tool_call_input.delta`` and ``.done``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._events import Frame
from ..._types import TEXT_CALL, InvalidToolCall, takes_text
from .._encoder import Call, Encoder, Piece, arguments_text, loads, sse_json

__all__ = ("OpenAIResponsesEncoder",)

_ITEM_EVENTS = frozenset({"response.output_item.added", "response.output_item.done"})
#: Each call item type: the field its text is in, and the prefix of its text's events.
_CALL_ITEMS = {
    "function_call": ("arguments", "response.function_call_arguments"),
    TEXT_CALL[1]: ("input", "response.custom_tool_call_input"),
}
_ARGUMENT_EVENTS = frozenset(f"{prefix}.{end}" for _, prefix in _CALL_ITEMS.values() for end in ("delta", "done"))


class OpenAIResponsesEncoder(Encoder):
    @classmethod
    def error_body(cls, kind: str, message: str, code: str | None) -> Any:
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}  # Chat's

    @classmethod
    def error_event(cls, kind: str, message: str, code: str) -> bytes:
        """The ``error`` event, which the SDKs hand over as ``ResponseErrorEvent``; the stream
        ends after it, with no ``response.completed``."""
        payload = {"type": "error", "code": code, "message": message, "param": None, "sequence_number": None}
        return sse_json("error", payload)

    def __init__(self) -> None:
        self._items: dict[int, dict[str, Any]] = {}  # output_index -> the function_call item added
        self._written: dict[str, str] = {}  # call_id -> the arguments written
        self._left_out: set[Any] = set()  # the call_id (or item id) of each call left out
        self._moved: dict[int, int] = {}  # an item added after one was left out: its output_index -> the one written

    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        data = frame.data
        if not calls and "function_call" not in data and TEXT_CALL[1] not in data:
            return [self._move(frame) if self._left_out and "output_index" in data else self.write(frame)]
        payload = loads(data)
        payload = payload if isinstance(payload, dict) else {}
        kind = payload.get("type")
        held = kind in _ARGUMENT_EVENTS
        item = payload.get("item")
        if kind in _ITEM_EVENTS and isinstance(item, dict) and _is_call(item):
            held = True
            if kind == "response.output_item.added" and isinstance(payload.get("output_index"), int):
                self._items.setdefault(payload["output_index"], item)
        number = payload.get("sequence_number")
        final = _text_of(payload, item)
        out = [piece for call in calls for piece in self._call(call, number, final)]
        if not held:
            if kind in ("response.completed", "response.incomplete") and (self._written or self._left_out):
                out.append(sse_json(frame.event, self._final(payload)))
            else:
                out.append(self._move(frame) if self._left_out else self.write(frame))
        return out

    def _move(self, frame: Frame) -> bytes:
        """An event with the ``output_index`` it is written at, once an item before it was left out."""
        payload = loads(frame.data)
        index = payload.get("output_index") if isinstance(payload, dict) else None
        if not isinstance(index, int):
            return self.write(frame)
        if payload.get("type") == "response.output_item.added":
            self._moved[index] = index - len(self._left_out)
        return sse_json(frame.event, {**payload, "output_index": self._moved.get(index, index)})

    def _call(self, call: Call, number: Any, final: Any) -> list[bytes]:
        item = self._items.pop(call.index, None)
        if item is None:
            kind = TEXT_CALL[1] if takes_text(call.state) else "function_call"
            item = {"id": call.state.get("id"), "type": kind, "call_id": call.id, "name": call.name}
        field, prefix = _CALL_ITEMS.get(str(item.get("type")), _CALL_ITEMS["function_call"])
        if not self.written(call):
            self._left_out.add(item.get("call_id") or item.get("id"))
            return []
        index = call.index - len(self._left_out)
        text = arguments_text(call)
        item_id = item.get("id")
        where = {"sequence_number": number, "item_id": item_id, "output_index": index}
        added = {**item, field: "", "status": "in_progress"}
        out = [
            _event("response.output_item.added", {"sequence_number": number, "output_index": index, "item": added}),
            _event(f"{prefix}.delta", {**where, "delta": text}),
        ]
        if isinstance(call, InvalidToolCall) and call.truncated:
            return out
        if isinstance(call, InvalidToolCall) and any(issue.kind == "arguments_mismatch" for issue in call.errors):
            text = final  # the fragments and the final text disagree: both are written, as they came
        elif call.id is not None and not isinstance(call, InvalidToolCall):
            self._written[call.id] = text
        done = {**item, field: text, "status": "completed"}
        named = {"name": call.name} if field == "arguments" else {}
        out += [
            _event(f"{prefix}.done", {**where, **named, field: text}),
            _event("response.output_item.done", {"sequence_number": number, "output_index": index, "item": done}),
        ]
        return out

    def _final(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The final event with its call items' text as written."""
        response = payload.get("response")
        if not isinstance(response, dict) or not isinstance(response.get("output"), list):
            return payload
        items = []
        for item in response["output"]:
            if isinstance(item, dict) and _is_call(item):
                if (item.get("call_id") or item.get("id")) in self._left_out:
                    continue
                if item.get("call_id") in self._written:
                    item = {**item, _CALL_ITEMS[item["type"]][0]: self._written[item["call_id"]]}
            items.append(item)
        return {**payload, "response": {**response, "output": items}}

    def opening(self, piece: Piece, sequence: Any) -> bytes:
        field, _ = _kind(piece)
        item = _item(piece) | {field: "", "status": "in_progress"}
        return _event(
            "response.output_item.added", {"sequence_number": sequence, "output_index": piece.number, "item": item}
        )

    def fragment(self, piece: Piece, text: str, sequence: Any) -> bytes:
        _, prefix = _kind(piece)
        return _event(f"{prefix}.delta", {**_where(piece, sequence), "delta": text})

    def closing(self, piece: Piece, text: str, sequence: Any) -> list[bytes]:
        field, prefix = _kind(piece)
        done = {**_where(piece, sequence), "name": piece.name, field: text}
        item = _item(piece) | {field: text, "status": "completed"}
        added = {"sequence_number": sequence, "output_index": piece.number, "item": item}
        return [_event(f"{prefix}.done", done), _event("response.output_item.done", added)]


def _kind(piece: Piece) -> tuple[str, str]:
    """The field and the event prefix of the piece's item: a function's arguments or a custom tool's input."""
    return _CALL_ITEMS.get(str(piece.item.get("type")), _CALL_ITEMS["function_call"])


def _item(piece: Piece) -> dict[str, Any]:
    return {"type": "function_call", "call_id": piece.id, "name": piece.name} | dict(piece.item)


def _where(piece: Piece, sequence: Any) -> dict[str, Any]:
    return {"sequence_number": sequence, "item_id": piece.item.get("id"), "output_index": piece.number}


def _text_of(payload: dict[str, Any], item: Any) -> Any:
    """The final text an end event carries: a ``.done`` event's own, or its item's."""
    for field, _ in _CALL_ITEMS.values():
        if field in payload:
            return payload[field]
    return item.get(_CALL_ITEMS[item["type"]][0]) if isinstance(item, dict) and _is_call(item) else None


def _is_call(item: dict[str, Any]) -> bool:
    kind = item.get("type")
    return isinstance(kind, str) and kind in _CALL_ITEMS


def _event(kind: str, body: dict[str, Any]) -> bytes:
    return sse_json(kind, {"type": kind, **body})
