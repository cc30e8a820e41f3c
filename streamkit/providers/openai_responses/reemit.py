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

A response whose bad call the model is told of goes on with the model's answer as the same
response (``continues``): the first's ``response.completed`` or ``.incomplete`` is not written,
nor the answer's ``response.created`` and ``.in_progress``; the answer's events are numbered on
from the last ``sequence_number`` read, its items placed at the ``output_index`` after those
written, every ``response`` it carries given the first's id (the openai SDK refuses a lifecycle
event of another id), and its final event lists the items written before it, then its own.
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
#: The events that end a response (``response.failed`` is an error), and those that start one.
_ENDS = frozenset({"response.completed", "response.incomplete"})
_STARTS = frozenset({"response.created", "response.queued", "response.in_progress"})


class OpenAIResponsesEncoder(Encoder):
    continues = True

    @classmethod
    def error_body(cls, kind: str, message: str, code: str | None) -> Any:
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}  # Chat's

    @classmethod
    def error_event(cls, kind: str, message: str, code: str, number: int = 0) -> bytes:
        """The ``error`` event, which the SDKs hand over as ``ResponseErrorEvent``, numbered
        ``number`` (clients that check the events' types want an integer)."""
        payload = {"type": "error", "code": code, "message": message, "param": None, "sequence_number": number}
        return sse_json("error", payload)

    def ending(self, kind: str, message: str, code: str) -> bytes:
        """The ``error`` event and then ``response.failed``, numbered on from the last event read:
        a client that waits for a terminal event of the response (Codex) stops there rather than
        reading a cut stream and sending the request again."""
        number = self._numbered() + 1
        response = _response_of(self._created)
        failed = {
            **response,
            "status": "failed",
            "error": {"code": code, "message": message},
            "incomplete_details": None,
        }
        return self.error_event(kind, message, code, number) + _event(
            "response.failed", {"sequence_number": number + 1, "response": failed}
        )

    def __init__(self) -> None:
        self._items: dict[int, dict[str, Any]] = {}  # output_index -> the function_call item added
        self._written: dict[str, str] = {}  # call_id -> the arguments written
        self._left_out: set[Any] = set()  # the call_id (or item id) of each call left out
        self._moved: dict[int, int] = {}  # an item added after one was left out: its output_index -> the one written
        self._last = ""  # the data of the last event read: its sequence_number
        self._created = ""  # the data of ``response.created``: the response an ending fails
        # A response that goes on with the next one (``resume``):
        self._base = 0  # the output_index this response's first item is written at
        self._next = 0  # the output_index after the last item written
        self._done: list[tuple[int, Any]] = []  # this response's items written done, at their output_index
        self._unread: list[str] = []  # the item events written as they came, not read yet (``_settle``)
        self._carried: list[Any] | None = None  # the items of the responses before this one
        self._shift: int | None = 0  # what this response's sequence_numbers are moved by (None: not known yet)
        self._high = -1  # the last sequence_number of the responses before this one
        self._restarting = False  # the next response's start events come: they are not written

    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        data = frame.data
        if self._restarting:
            if _named(frame, _STARTS):
                return []
            self._restarting = False
        self._last = data
        if frame.event == "response.created":
            self._created = data
        if not calls and "function_call" not in data and TEXT_CALL[1] not in data:
            return [self._pass(frame)]
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
            out.append(self._pass(frame, payload))
        return out

    def ends(self, frame: Frame) -> bool:
        """``response.completed`` and ``response.incomplete``: ``response.failed`` is an error."""
        return _named(frame, _ENDS)

    def unended(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        """Only the calls the frame completed: the frame itself is all end. Its items, as written,
        are carried to the final response of the next one."""
        self._last = frame.data
        payload = loads(frame.data)
        payload = payload if isinstance(payload, dict) else {}
        self._settle()
        out = [piece for call in calls for piece in self._call(call, payload.get("sequence_number"), None)]
        self._carried = [*(self._carried or []), *self._output(payload)]
        return out

    def resume(self) -> None:
        """The next response is written as the rest of this one: its ``response.created`` and
        ``.in_progress`` are not written, its events are numbered on from this one's last, its
        items placed after these, and its final response holds these items then its own, under
        this response's id."""
        self._high = self._numbered()
        self._base, self._shift, self._restarting = self._next, None, True
        self._items.clear()
        self._left_out = set()
        self._moved.clear()
        self._done = []

    def _numbered(self) -> int:
        """The ``sequence_number`` of the last event read, as written; -1 before any."""
        own = _number(self._last)
        return self._high if own < 0 or self._shift is None else own + self._shift

    def _pass(self, frame: Frame, payload: dict[str, Any] | None = None) -> bytes:
        """An event that is no call's, at the ``output_index`` and ``sequence_number`` it is
        written at; a final one with its items as written (``_final``)."""
        ends = (self._written or self._left_out or self._carried is not None) and (
            _named(frame, _ENDS) if payload is None else payload.get("type") in _ENDS
        )
        if not ends and not (self._left_out or self._base or self._shift != 0):
            if _named(frame, _ITEM_EVENTS):
                self._unread.append(frame.data)
            return self.write(frame)
        if payload is None:
            payload = loads(frame.data)
        if not isinstance(payload, dict):
            return self.write(frame)
        placed = self._placed(payload)
        if ends:
            placed = self._final(placed)
        self._note(placed)
        return self.write(frame) if placed is payload else sse_json(frame.event, placed)

    def _placed(self, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` with the ``output_index`` and ``sequence_number`` it is written at, and,
        after a response it goes on from, the first response's id."""
        changes: dict[str, Any] = {}
        index = payload.get("output_index")
        if isinstance(index, int):
            if payload.get("type") == "response.output_item.added":
                self._moved[index] = self._base + index - len(self._left_out)
            where = self._moved.get(index, self._base + index)
            if where != index:
                changes["output_index"] = where
        number = payload.get("sequence_number")
        if _integer(number) and self._shift != 0:
            changes["sequence_number"] = self._sequence(number)
        response = payload.get("response")
        first = _response_of(self._created).get("id") if self._carried is not None else None
        if isinstance(response, dict) and first is not None and response.get("id") != first:
            changes["response"] = {**response, "id": first}
        return {**payload, **changes} if changes else payload

    def _sequence(self, number: Any) -> Any:
        """An event's ``sequence_number`` as written: numbered on from the responses before."""
        if not _integer(number):
            return number
        if self._shift is None:
            self._shift = self._high + 1 - number
        return number + self._shift

    def _settle(self) -> None:
        """The item events written as they came, read now that where they are matters."""
        for data in self._unread:
            payload = loads(data)
            if isinstance(payload, dict):
                self._note(payload)
        self._unread.clear()

    def _note(self, payload: dict[str, Any]) -> None:
        """An item event written: where the next response's items go, and this one's items done."""
        index = payload.get("output_index")
        if not isinstance(index, int):
            return
        if payload.get("type") == "response.output_item.added":
            self._next = max(self._next, index + 1)
        elif payload.get("type") == "response.output_item.done" and isinstance(payload.get("item"), dict):
            self._done.append((index, payload["item"]))

    def _call(self, call: Call, number: Any, final: Any) -> list[bytes]:
        item = self._items.pop(call.index, None)
        if item is None:
            kind = TEXT_CALL[1] if takes_text(call.state) else "function_call"
            item = {"id": call.state.get("id"), "type": kind, "call_id": call.id, "name": call.name}
        field, prefix = _CALL_ITEMS.get(str(item.get("type")), _CALL_ITEMS["function_call"])
        if not self.written(call):
            self._left_out.add(item.get("call_id") or item.get("id"))
            return []
        index = self._base + call.index - len(self._left_out)
        number = self._sequence(number)
        text = arguments_text(call)
        item_id = item.get("id")
        where = {"sequence_number": number, "item_id": item_id, "output_index": index}
        added = {**item, field: "", "status": "in_progress"}
        self._next = max(self._next, index + 1)
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
        self._done.append((index, done))
        out += [
            _event(f"{prefix}.done", {**where, **named, field: text}),
            _event("response.output_item.done", {"sequence_number": number, "output_index": index, "item": done}),
        ]
        return out

    def _final(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The final event with its items as written: those of the responses before it, then its own."""
        response = payload.get("response")
        if not isinstance(response, dict) or not isinstance(response.get("output"), list):
            return payload
        if self._carried is None:
            return {**payload, "response": {**response, "output": self._own(response["output"])}}
        output = [*self._carried, *self._output(payload)]
        return {**payload, "response": {**response, "output": output}}

    def _output(self, payload: dict[str, Any]) -> list[Any]:
        """This response's items as written: its final output's, else those written done."""
        self._settle()
        response = payload.get("response")
        output = response.get("output") if isinstance(response, dict) else None
        own = self._own(output) if isinstance(output, list) else []
        return own or [item for _, item in sorted(self._done, key=lambda done: done[0])]

    def _own(self, output: list[Any]) -> list[Any]:
        """A final output's items, less the calls left out, each call's text as written."""
        items = []
        for item in output:
            if isinstance(item, dict) and _is_call(item):
                if (item.get("call_id") or item.get("id")) in self._left_out:
                    continue
                if item.get("call_id") in self._written:
                    item = {**item, _CALL_ITEMS[item["type"]][0]: self._written[item["call_id"]]}
            items.append(item)
        return items

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


def _named(frame: Frame, kinds: frozenset[str]) -> bool:
    """Whether an event is one of ``kinds``: by its SSE name, else by its payload's ``type``."""
    if frame.event is not None:
        return frame.event in kinds
    return any(f'"type":"{kind}"' in frame.data for kind in kinds)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(data: str) -> int:
    """An event's ``sequence_number``, -1 where it has none (no event read yet)."""
    payload = loads(data) if data else None
    number = payload.get("sequence_number") if isinstance(payload, dict) else None
    return number if isinstance(number, int) and not isinstance(number, bool) else -1


def _response_of(created: str) -> dict[str, Any]:
    """The response ``response.created`` announced, its output emptied; a bare one without it."""
    payload = loads(created) if created else None
    response = payload.get("response") if isinstance(payload, dict) else None
    return {**response, "output": []} if isinstance(response, dict) else {"object": "response", "output": []}
