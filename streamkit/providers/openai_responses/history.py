"""OpenAI Responses: calls and results as input items.

Each call is a ``function_call`` item (``arguments`` a JSON string, serialized here once),
preceded by an assistant ``message`` item when there was text; each result is a
``function_call_output`` item naming the call's ``call_id``. A custom tool's call (a
``CustomToolCall``, or an invalid call that came as a ``custom_tool_call`` item) is a
``custom_tool_call`` item with its text as ``input``, and its result a
``custom_tool_call_output``; a ``CallRef`` says nothing of its kind, so its result is a
``function_call_output``. A result that holds an image is an ``output`` list of ``input_text``
and ``input_image`` parts, an image's bytes as a ``data:`` URL.
Shapes: https://platform.openai.com/docs/guides/function-calling?api-mode=responses
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._turn_types import CallState, MessageItem, Parts, ReasoningItem, ServerToolUse, Turn, TurnItem
from ..._types import TEXT_CALL, Call, CallRef, CustomToolCall, TextDelta, takes_text
from ...adapters._base import Message, Ran, arguments_text, call_id, name_of, text_and_calls, text_writers
from ...adapters._history import TurnMessages, check_turn
from .request import input_parts

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message", "turn_messages")


def assistant_message(calls: Iterable[Call], *, text: str | None = None) -> list[Message]:
    """The input items that record ``calls`` (and the ``text`` before them) in the history."""
    return text_and_calls(calls, text, _message, _call_item, custom=True)


def _message(text: str) -> Message:
    return {"type": "message", "role": "assistant", "content": text}


def _call_item(call: Call, item_id: str | None = None) -> Message:
    """The ``function_call`` or ``custom_tool_call`` item of a call, with its item ``id`` when given."""
    custom = _is_custom(call)
    item: Message = {"type": TEXT_CALL[1] if custom else "function_call"}
    if item_id is not None:
        item["id"] = item_id
    item |= {"call_id": call_id(call), "name": name_of(call), "input" if custom else "arguments": arguments_text(call)}
    return item


def _is_custom(call: Call | CallRef) -> bool:
    return isinstance(call, CustomToolCall) or (not isinstance(call, CallRef) and takes_text(call.state))


def _entry(call: Call | CallRef, text: str) -> Message:
    kind = "custom_tool_call_output" if _is_custom(call) else "function_call_output"
    return {"type": kind, "call_id": call_id(call), "output": text}


def _parts(call: Ran, result: Parts) -> Message:
    return {**_entry(call, ""), "output": input_parts(result)}


tool_results_message, tool_result_message, error_result_message = text_writers(_entry, _parts)


def turn_messages(turn: Turn) -> TurnMessages:
    """The input items that record a whole ``Turn``, in output order.

    For a turn decoded from the Responses API, the output items go back as
    ``response.output_item.done`` gave them: ``reasoning`` items whole (``id``,
    ``encrypted_content``, ``summary``), ``message`` items whole (``id``, ``phase``), server-run
    tool items whole, and each ``function_call`` with both its item ``id`` and its ``call_id``,
    its arguments written once as text. The cookbook on reasoning items with function calls
    passes the output items back with the results
    (https://cookbook.openai.com/examples/responses_api/reasoning_items; openai-python
    ``types/responses/response_reasoning_item.py``). Text without a ``message`` item (a turn
    from another provider, or a message cut before its end) becomes an assistant message; other
    providers' state is dropped.
    """
    checked = check_turn(turn)
    native = checked.provider == "openai_responses"
    messages = native and any(isinstance(item, MessageItem) for item in checked.items)
    items: list[Message] = []
    dropped: list[TurnItem] = []
    for item in checked.items:
        if isinstance(item, TextDelta):
            if item.text and not messages:
                items.append(_message(item.text))
        elif isinstance(item, Call):
            items.append(_call_item(item, checked.call_state(item).get("id") if native else None))
        elif native and isinstance(item, ReasoningItem | MessageItem):
            items.append(dict(item.item))
        elif native and isinstance(item, ServerToolUse):
            items.append(dict(item.block))
        elif not (native and isinstance(item, CallState)):  # call state is written with its call
            dropped.append(item)
    return TurnMessages(items, dropped)
