"""Anthropic Messages: calls as ``tool_use`` blocks, results as ``tool_result`` blocks.

The assistant message holds the text block and one ``tool_use`` block per call, ``input`` an
object; all results of a turn go in one user message, an error with ``is_error: true``.
Ids are kept to letters, digits, ``_`` and ``-``, as the API requires.
Shapes: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._types import InvalidToolCall, ToolCall
from ._base import (
    Call,
    Message,
    Outcome,
    check_calls,
    dumps,
    error_payload,
    input_object,
    name_of,
    result_text,
    results,
    safe_id,
)

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message")


def assistant_message(calls: Iterable[Call], *, text: str | None = None) -> list[Message]:
    """The assistant message that records ``calls`` (and the ``text`` before them) in the history."""
    checked = check_calls(calls, text)
    content: list[Message] = [{"type": "text", "text": text}] if text else []
    content.extend(
        {"type": "tool_use", "id": safe_id(call), "name": name_of(call), "input": input_object(call)}
        for call in checked
    )
    return [{"role": "assistant", "content": content}]


def tool_results_message(outcomes: Iterable[Outcome]) -> list[Message]:
    """One user message holding a ``tool_result`` block per outcome, in order."""
    return [{"role": "user", "content": results(outcomes, _result, _error)}]


def tool_result_message(call: ToolCall, result: Any) -> list[Message]:
    """The user message carrying one call's result (a string as is, anything else as JSON)."""
    return tool_results_message([(call, result)])


def error_result_message(call: InvalidToolCall) -> list[Message]:
    """The user message telling the model what was wrong with its call (``is_error: true``)."""
    return tool_results_message([call])


def _result(call: ToolCall, result: Any) -> Message:
    return {"type": "tool_result", "tool_use_id": safe_id(call), "content": result_text(result)}


def _error(call: InvalidToolCall) -> Message:
    return {
        "type": "tool_result",
        "tool_use_id": safe_id(call),
        "content": dumps(error_payload(call)),
        "is_error": True,
    }
