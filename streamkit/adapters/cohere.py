"""Cohere v2 chat: calls in the assistant message, results as ``role: tool`` messages.

The assistant message carries the text as ``tool_plan`` (the plan Cohere writes before its
calls) and ``tool_calls`` whose ``function.arguments`` is a JSON string, serialized here once;
each result is a tool message whose content is one ``document``.
Shapes: https://docs.cohere.com/docs/tool-use-overview
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._turn_types import Turn
from .._types import CallRef, InvalidToolCall, JSONObject
from ._base import (
    Call,
    Message,
    Outcome,
    Ran,
    call_id,
    check_calls,
    dumps,
    function_calls,
    one_result,
    result_text,
    results,
)
from ._history import TurnMessages, plain_turn

__all__ = (
    "assistant_message",
    "error_result_message",
    "tool_result_message",
    "tool_results_message",
    "turn_messages",
)


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


def tool_results_message(outcomes: Iterable[Outcome]) -> list[Message]:
    """One ``role: tool`` message per outcome, in order."""
    return results(outcomes, _result, _error)


def tool_result_message(call: Ran, result: Any, *, is_error: bool = False) -> list[Message]:
    """The message carrying one call's result (a string as is, anything else as JSON).

    ``call`` is the ``ToolCall`` or a ``CallRef`` (its id and name). ``is_error=True`` says the
    tool raised: ``result`` (a message, or the exception) is then written as this provider's
    error result, as an invalid call's errors are.
    """
    return tool_results_message(one_result(call, result, is_error))


def error_result_message(call: InvalidToolCall) -> list[Message]:
    """The message telling the model what was wrong with its call: ``{"ok": false, "errors": [...]}``."""
    return tool_results_message([call])


def _tool_message(call: Call | CallRef, data: str) -> Message:
    return {
        "role": "tool",
        "tool_call_id": call_id(call),
        "content": [{"type": "document", "document": {"data": data}}],
    }


def _result(call: Ran, result: Any) -> Message:
    return _tool_message(call, result_text(result))


def _error(call: Call | CallRef, payload: JSONObject) -> Message:
    return _tool_message(call, dumps(payload))


def turn_messages(turn: Turn) -> TurnMessages:
    """The history entries that record a whole ``Turn``: its text and calls, as
    ``assistant_message`` writes them. This provider takes back no reasoning or signatures, so
    any such item is listed on the result's ``dropped``."""
    return plain_turn(turn, assistant_message)
