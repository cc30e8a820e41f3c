"""Cohere v2 chat: calls in the assistant message, results as ``role: tool`` messages.

The assistant message carries the text as ``tool_plan`` (the plan Cohere writes before its
calls) and ``tool_calls`` whose ``function.arguments`` is a JSON string, serialized here once;
each result is a tool message whose content is one ``document``.
Shapes: https://docs.cohere.com/docs/tool-use-overview
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._turn_types import Turn
from ..._types import CallRef
from ...adapters._base import Call, Message, call_id, check_calls, function_calls, text_writers
from ...adapters._history import TurnMessages, plain_turn

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message", "turn_messages")


def assistant_message(calls: Iterable[Call], *, text: str | None = None) -> list[Message]:
    """The assistant message that records ``calls`` (and the tool plan ``text``) in the history."""
    checked = check_calls(calls, text)
    if not checked:
        return [{"role": "assistant", "content": text}]
    message: Message = {"role": "assistant"}
    if text:
        message["tool_plan"] = text
    message["tool_calls"] = function_calls(checked)
    return [message]


def _tool_message(call: Call | CallRef, data: str) -> Message:
    return {
        "role": "tool",
        "tool_call_id": call_id(call),
        "content": [{"type": "document", "document": {"data": data}}],
    }


tool_results_message, tool_result_message, error_result_message = text_writers(_tool_message)


def turn_messages(turn: Turn) -> TurnMessages:
    """The history entries that record a whole ``Turn``: its text and calls, as
    ``assistant_message`` writes them. This provider takes back no reasoning or signatures, so
    any such item is listed on the result's ``dropped``."""
    return plain_turn(turn, assistant_message)
