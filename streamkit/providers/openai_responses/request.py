"""An OpenAI Responses request: the history as ``input``, the system text as ``instructions``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._turn_types import Parts
from .._request import Message, ToolSpec, function, openai_choice, plain_user, same_names

__all__ = ("MERGE_ROLES", "SETTINGS", "body", "choice", "effort", "input_parts", "user")

MERGE_ROLES = False
#: No stop sequences; a reasoning effort under ``reasoning``.
SETTINGS = {**same_names("temperature", "top_p", "parallel_tool_calls"), "reasoning_effort": ("reasoning", "effort")}


def user(content: str | Parts) -> Message:
    """A user's text as one string; text and images as ``input_text`` and ``input_image`` parts,
    an image's bytes as a ``data:`` URL, at ``detail: auto`` (the API's default)."""
    if isinstance(content, str):
        return plain_user(content)
    return {"role": "user", "content": input_parts(content)}


def input_parts(content: Parts) -> list[Message]:
    """Text and images as ``input_text`` and ``input_image`` parts (a user's message, a call's
    output), an image's bytes as a ``data:`` URL, at ``detail: auto`` (the API's default)."""
    return [
        {"type": "input_text", "text": part}
        if isinstance(part, str)
        else {"type": "input_image", "image_url": part.as_url, "detail": "auto"}
        for part in content.items
    ]


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
