"""Google Gemini (and Vertex AI): calls as ``functionCall`` parts, results as ``functionResponse``.

The model turn holds the text part and one ``functionCall`` part per call, ``args`` an
object; all results of a turn go in one user turn. A ``functionResponse.response`` must be
an object: a result that is not one is wrapped as ``{"output": result}`` and an error as
``{"error": {"ok": false, "errors": [...]}}``, the keys the API documents for output and
error. An id is written only when the call has one (Gemini 2.5 gives none).
Shapes: https://ai.google.dev/gemini-api/docs/function-calling
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._types import InvalidToolCall, ToolCall
from ._base import Call, Message, Outcome, check_calls, error_payload, input_object, name_of, results

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message")


def assistant_message(calls: Iterable[Call], *, text: str | None = None) -> list[Message]:
    """The model turn that records ``calls`` (and the ``text`` before them) in the history."""
    checked = check_calls(calls, text)
    parts: list[Message] = [{"text": text}] if text else []
    parts.extend(
        {"functionCall": _with_id(call, {"name": name_of(call), "args": input_object(call)})} for call in checked
    )
    return [{"role": "model", "parts": parts}]


def tool_results_message(outcomes: Iterable[Outcome]) -> list[Message]:
    """One user turn holding a ``functionResponse`` part per outcome, in order."""
    return [{"role": "user", "parts": results(outcomes, _result, _error)}]


def tool_result_message(call: ToolCall, result: Any) -> list[Message]:
    """The user turn carrying one call's result (an object as is, anything else as ``output``)."""
    return tool_results_message([(call, result)])


def error_result_message(call: InvalidToolCall) -> list[Message]:
    """The user turn telling the model what was wrong with its call."""
    return tool_results_message([call])


def _with_id(call: Call, body: Message) -> Message:
    if call.id:
        body["id"] = call.id
    return body


def _result(call: ToolCall, result: Any) -> Message:
    response = result if isinstance(result, dict) else {"output": result}
    return {"functionResponse": _with_id(call, {"name": name_of(call), "response": response})}


def _error(call: InvalidToolCall) -> Message:
    return {"functionResponse": _with_id(call, {"name": name_of(call), "response": {"error": error_payload(call)}})}
