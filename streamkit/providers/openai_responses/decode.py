"""OpenAI Responses API stream (``POST /v1/responses`` with ``stream: true``).

Only ``function_call`` and ``custom_tool_call`` output items are the caller's calls; messages,
reasoning, built-in and server-run tools (``web_search_call``, ``mcp_call``,
``tool_search_call``…) are other item types and are ignored. A ``custom_tool_call`` (a tool
declared ``{"type": "custom"}``) carries free text, not JSON: its ``input`` streams as
``response.custom_tool_call_input.delta`` and ends with ``.done``, in the same order as a
function call's arguments, and the call is marked with the state ``{"type":
"custom_tool_call"}`` so that it is delivered as a ``CustomToolCall`` and written back as such.
A call starts at ``response.output_item.added``; it is keyed by its ``output_index`` and handed
out with its ``call_id`` (``call_…``, what a ``function_call_output`` must name), never the item
id (``fc_…``). Argument fragments
(``response.function_call_arguments.delta``) name their item by ``item_id`` or, from
Responses-compatible servers, only by ``output_index`` or ``call_id``: each is accepted, in that
order. The end marker is ``response.function_call_arguments.done`` or, when a server sends
none, ``response.output_item.done``: the first ends the call, the second is then only a repeat.

Both end events carry the server's final ``arguments`` text, handed on as ``ArgumentsFinal``:
the accumulator, which holds the fragments (the decoder keeps none), compares the two at the
call's end and takes the second end marker as a repeat. When the final text is not the joined
fragments, one of the two is wrong (a lost or repeated fragment, a gateway rewriting one side)
and nothing says which. streamkit never picks: the call is delivered as an ``InvalidToolCall``
whose ``raw`` is the joined fragments, with the issue ``arguments_mismatch`` and the anomaly
``final_arguments_differ``, so it is never run and can be sent back to the model. A call with
no fragments at all takes the final text as its arguments (``arguments_in_done``): there is
nothing for it to contradict.

The stream ends with ``response.completed`` (usage kept), or ``response.incomplete`` (the output
limit or a content filter: a call still open is truncated). ``response.failed`` and the
``error`` event are provider errors. There is no ``data: [DONE]`` from OpenAI; one from a
compatible server ends the stream too.
The turn's other output items are carried beside the calls, whole, as
``response.output_item.done`` gives them (the ``added`` event's copy is not final: a reasoning
item's ``encrypted_content`` changes between the two): ``reasoning`` items (``id``,
``encrypted_content`` when the request asked for ``include: ["reasoning.encrypted_content"]``,
``summary``), ``message`` items (``id``, ``phase``, content) and the items of server-run tools.
A ``function_call`` item's own ``id`` is kept as the call's state, since the item goes back
with both its ``id`` and its ``call_id``.
Docs: https://platform.openai.com/docs/api-reference/responses-streaming,
openai-python ``types/responses/response_reasoning_item.py`` and ``response_create_params.py``
(``include``), and the cookbook "Better performance from reasoning models using the Responses
API" (reasoning items passed back with the function call outputs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ..._events import (
    ArgumentsDelta,
    ArgumentsFinal,
    BlockReceived,
    CallDetail,
    CallOpened,
    Event,
    Frame,
    ResponseEnded,
    StopReceived,
    TextReceived,
)
from ..._types import TEXT_CALL, TokenUsage
from .._base import ErrorShape, TypedEventDecoder, count, field, optional, usage_received
from . import FACTS

__all__ = ("OpenAIResponsesDecoder",)

_NOTHING: list[Event] = []
#: The output item types that are the caller's calls, and the field each carries its text in.
_CALL_TEXT = {"function_call": "arguments", TEXT_CALL[1]: "input"}
#: Output items carried whole at ``response.output_item.done``, and the public value each becomes.
_CARRIED = {"reasoning": "reasoning_item", "message": "message_item"} | dict.fromkeys(
    (
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "tool_search_call",
    ),
    "server_tool_use",
)


class OpenAIResponsesDecoder(TypedEventDecoder):
    slug = "openai_responses"
    done = "[DONE]"  # from a gateway: OpenAI sends none
    errors = ErrorShape(type_fields=("code", "type"))
    finish_reasons = FACTS.finish_reasons
    event_prefix = "response."

    @classmethod
    def tokens(cls, usage: Mapping[str, Any]) -> TokenUsage:
        return TokenUsage(
            count(usage, "input_tokens"),
            count(usage, "output_tokens"),
            count(usage, "input_tokens_details", "cached_tokens"),
            count(usage, "output_tokens_details", "reasoning_tokens"),
        )

    def __init__(self, *, early_close: bool = False) -> None:
        super().__init__(early_close=early_close)
        self._seen: set[int] = set()  # output indexes of the function_call items announced
        self._by_item: dict[str, int] = {}  # item id -> output_index
        self._by_call: dict[str, int] = {}  # call id -> output_index

    def feed(self, frame: Frame) -> list[Event]:
        if frame.data == self.done:
            return [ResponseEnded()]
        return super().feed(frame)

    def _item_added(self, payload: Any, event: str) -> list[Event]:
        index = field(payload, "output_index", int, "$", self, event)
        item = field(payload, "item", dict, "$", self, event)
        kind = item.get("type")
        if not isinstance(kind, str) or kind not in _CALL_TEXT:
            return _NOTHING
        call_id = optional(item, "call_id", str, "$.item", self, event)
        item_id = optional(item, "id", str, "$.item", self, event)
        if index not in self._seen:
            # Only a call's first announcement names it: a stream announcing one index again and
            # again with new ids would otherwise grow these maps without bound.
            self._seen.add(index)
            if item_id is not None:
                self._by_item[item_id] = index
            if call_id is not None:
                self._by_call[call_id] = index
        out: list[Event] = [CallOpened(index, call_id, optional(item, "name", str, "$.item", self, event))]
        if item_id is not None:
            out.append(CallDetail(index, "id", item_id))
        if kind == TEXT_CALL[1]:
            out.append(CallDetail(index, *TEXT_CALL))
        arguments = optional(item, _CALL_TEXT[kind], str, "$.item", self, event)
        if arguments:  # a server that sends the arguments with the item, not as fragments
            out.append(ArgumentsDelta(index, arguments))
        return out

    def _index(self, payload: Any, event: str) -> int:
        """The output_index of the call an event names, by item id, output index or call id."""
        item_id = optional(payload, "item_id", str, "$", self, event)
        output_index = optional(payload, "output_index", int, "$", self, event)
        if item_id is not None and item_id in self._by_item:
            index = self._by_item[item_id]
            if output_index is not None and output_index != index:
                raise self.error(f"item {item_id!r} is at output_index {index}, not {output_index}", event=event)
            return index
        if output_index is not None:
            return output_index
        call_id = optional(payload, "call_id", str, "$", self, event)
        if call_id is not None and call_id in self._by_call:
            return self._by_call[call_id]
        raise self.error("the event names no function_call or custom_tool_call item that was added", event=event)

    def _arguments_delta(self, payload: Any, event: str) -> list[Event]:
        index = self._index(payload, event)
        # A fragment for an ended or unknown call goes on too: the accumulator's table rejects it.
        return [ArgumentsDelta(index, field(payload, "delta", str, "$", self, event))]

    def _end(self, index: int, final: str | None) -> list[Event]:
        return [ArgumentsFinal(index, final)]  # the first ends the call; a second is a repeat

    def _arguments_done(self, payload: Any, event: str) -> list[Event]:
        index = self._index(payload, event)
        return self._end(index, optional(payload, "arguments", str, "$", self, event))

    def _input_done(self, payload: Any, event: str) -> list[Event]:
        index = self._index(payload, event)
        return self._end(index, optional(payload, "input", str, "$", self, event))

    def _item_done(self, payload: Any, event: str) -> list[Event]:
        index = field(payload, "output_index", int, "$", self, event)
        item = field(payload, "item", dict, "$", self, event)
        kind = item.get("type")
        if not isinstance(kind, str) or kind not in _CALL_TEXT:
            carried = _CARRIED.get(kind) if isinstance(kind, str) else None
            return [BlockReceived(carried, item)] if carried is not None else _NOTHING
        return self._end(index, optional(item, _CALL_TEXT[kind], str, "$.item", self, event))

    def _text_delta(self, payload: Any, event: str) -> list[Event]:
        text = field(payload, "delta", str, "$", self, event)
        return [TextReceived(text, 0, optional(payload, "output_index", int, "$", self, event))] if text else _NOTHING

    def _finished(self, payload: Any, event: str) -> list[Event]:
        response = field(payload, "response", dict, "$", self, event)
        out = usage_received(response, "usage", "$.response", self, event)
        reason = optional(response, "status", str, "$.response", self, event)
        details = optional(response, "incomplete_details", dict, "$.response", self, event)
        if details is not None:
            reason = optional(details, "reason", str, "$.response.incomplete_details", self, event) or reason
        if reason is None:
            reason = "completed" if event == "response.completed" else "incomplete"
        # Calls end with their own end markers: one still open here was cut off.
        out += [StopReceived(reason, cut_open_calls=True), ResponseEnded()]
        return out

    def _failed(self, payload: Any, event: str) -> list[Event]:
        response = optional(payload, "response", dict, "$", self, event) or {}
        error = optional(response, "error", dict, "$.response", self, event) or {}
        return [self.errors.received(error, "the response failed")]

    def _error(self, payload: Any, event: str) -> list[Event]:
        # The fields are at the top level (ResponseErrorEvent); some servers nest them in "error".
        nested = payload.get("error")
        return [self.errors.received(nested if isinstance(nested, dict) else payload, "the stream reported an error")]

    _HANDLERS: ClassVar[dict[str, Callable[[OpenAIResponsesDecoder, Any, str], list[Event]]]] = {
        "response.function_call_arguments.delta": _arguments_delta,  # by far the most common event
        "response.output_item.added": _item_added,
        "response.function_call_arguments.done": _arguments_done,
        "response.custom_tool_call_input.delta": _arguments_delta,
        "response.custom_tool_call_input.done": _input_done,
        "response.output_item.done": _item_done,
        "response.output_text.delta": _text_delta,
        "response.completed": _finished,
        "response.incomplete": _finished,
        "response.failed": _failed,
        "error": _error,
    }
