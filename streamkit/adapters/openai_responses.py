"""OpenAI Responses: calls and results as input items.

Each call is a ``function_call`` item (``arguments`` a JSON string, serialized here once),
preceded by an assistant ``message`` item when there was text; each result is a
``function_call_output`` item naming the call's ``call_id``.
Shapes: https://platform.openai.com/docs/guides/function-calling?api-mode=responses
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._types import InvalidToolCall, ToolCall
from ._base import (
    Call,
    Message,
    Outcome,
    arguments_text,
    call_id,
    check_calls,
    dumps,
    error_payload,
    name_of,
    result_text,
    results,
)

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message")


def assistant_message(calls: Iterable[Call], *, text: str | None = None) -> list[Message]:
    """The input items that record ``calls`` (and the ``text`` before them) in the history."""
    checked = check_calls(calls, text)
    items: list[Message] = [{"type": "message", "role": "assistant", "content": text}] if text else []
    items.extend(
        {"type": "function_call", "call_id": call_id(call), "name": name_of(call), "arguments": arguments_text(call)}
        for call in checked
    )
    return items


def tool_results_message(outcomes: Iterable[Outcome]) -> list[Message]:
    """One ``function_call_output`` item per outcome, in order."""
    return results(outcomes, _result, _error)


def tool_result_message(call: ToolCall, result: Any) -> list[Message]:
    """The item carrying one call's result (a string as is, anything else as JSON)."""
    return tool_results_message([(call, result)])


def error_result_message(call: InvalidToolCall) -> list[Message]:
    """The item telling the model what was wrong with its call: ``{"ok": false, "errors": [...]}``."""
    return tool_results_message([call])


def _result(call: ToolCall, result: Any) -> Message:
    return {"type": "function_call_output", "call_id": call_id(call), "output": result_text(result)}


def _error(call: InvalidToolCall) -> Message:
    return {"type": "function_call_output", "call_id": call_id(call), "output": dumps(error_payload(call))}
