"""An OpenAI Responses request: the history as ``input``, the system text as ``instructions``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._request import Message, ToolSpec, function, openai_choice, plain_user, same_names

__all__ = ("MERGE_ROLES", "SETTINGS", "body", "choice", "effort", "user")

MERGE_ROLES = False
SETTINGS = same_names("temperature", "top_p", "parallel_tool_calls")  # no stop sequences
user = plain_user


def effort(level: str, budgets: Mapping[str, int]) -> dict[str, Any] | None:
    return {"reasoning": {"effort": level}}


def body(
    model: str, history: list[Message], system: str | None, tools: Sequence[ToolSpec], limit: int | None
) -> dict[str, Any]:
    written: dict[str, Any] = {"model": model, "input": history, "stream": True}
    if system is not None:
        written["instructions"] = system
    if tools:
        written["tools"] = [{"type": "function", **function(tool)} for tool in tools]
    if limit is not None:
        written["max_output_tokens"] = limit
    return written


choice = openai_choice(lambda name: {"type": "function", "name": name})
