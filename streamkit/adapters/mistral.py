"""Mistral chat: calls in the assistant message, results as ``role: tool`` messages.

As OpenAI Chat (``function.arguments`` a JSON string, serialized here once), except that
Mistral requires ids of exactly 9 letters and digits: any other id is mapped, the same way
for the call and its result. A tool message also names the tool.
Shapes: https://docs.mistral.ai/capabilities/function_calling/
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
    check_calls,
    dumps,
    function_calls,
    mistral_id,
    name_of,
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
    """The assistant message that records ``calls`` (and its ``text``) in the history."""
    checked = check_calls(calls, text)
    message: Message = {"role": "assistant", "content": text or ""}
    if checked:
        message["tool_calls"] = function_calls(checked, mistral_id)
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


def _result(call: Ran, result: Any) -> Message:
    return {"role": "tool", "name": name_of(call), "tool_call_id": mistral_id(call), "content": result_text(result)}


def _error(call: Call | CallRef, payload: JSONObject) -> Message:
    return {
        "role": "tool",
        "name": name_of(call),
        "tool_call_id": mistral_id(call),
        "content": dumps(payload),
    }


def turn_messages(turn: Turn) -> TurnMessages:
    """The history entries that record a whole ``Turn``: its text and calls, as
    ``assistant_message`` writes them. This provider takes back no reasoning or signatures, so
    any such item is listed on the result's ``dropped``."""
    return plain_turn(turn, assistant_message)
