"""An Anthropic Messages request: ``max_tokens`` is required, roles alternate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._turn_types import Image, Parts
from .._request import Message, Place, ToolSpec, Written, same_names

__all__ = ("MAX_TOKENS", "MERGE_ROLES", "SETTINGS", "WRITTEN", "body", "choice", "effort", "image", "user")

#: The API requires ``max_tokens``: what is sent when the caller sets none.
MAX_TOKENS = 4096
MERGE_ROLES = True
SETTINGS: Mapping[str, Place] = {**same_names("temperature", "top_p", "top_k", "thinking"), "stop": ("stop_sequences",)}


def _one_call(parallel: Any) -> dict[str, Any]:
    """``parallel_tool_calls: false`` as Anthropic asks it: ``disable_parallel_tool_use``, in the
    tool choice beside its type (``auto``, unless the choice written over it names another)."""
    return {"tool_choice": {"type": "auto", "disable_parallel_tool_use": True}} if parallel is False else {}


WRITTEN: Mapping[str, Written] = {"parallel_tool_calls": _one_call}


def effort(level: str, budgets: Mapping[str, int]) -> dict[str, Any] | None:
    """Extended thinking with the level's budget; ``none`` is no thinking."""
    if level == "none":
        return {}
    if level in budgets:
        return {"thinking": {"type": "enabled", "budget_tokens": budgets[level]}}
    return None


def user(content: str | Parts) -> Message:
    """A user's message as content blocks: text, and ``image`` blocks from base64 data or a URL."""
    parts = (content,) if isinstance(content, str) else content.items
    return {
        "role": "user",
        "content": [{"type": "text", "text": part} if isinstance(part, str) else image(part) for part in parts],
    }


def image(given: Image) -> Message:
    """An ``image`` block (https://docs.claude.com/en/docs/build-with-claude/vision)."""
    if given.url is not None:
        return {"type": "image", "source": {"type": "url", "url": given.url}}
    return {"type": "image", "source": {"type": "base64", "media_type": given.media_type, "data": given.data}}


def body(
    model: str, history: list[Message], system: str | None, tools: Sequence[ToolSpec], limit: int | None
) -> dict[str, Any]:
    written: dict[str, Any] = {"model": model, "max_tokens": limit or MAX_TOKENS, "messages": history}
    written["stream"] = True
    if system is not None:
        written["system"] = system
    if tools:
        written["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]
    return written


def choice(choice: str) -> dict[str, Any]:
    if choice == "auto":
        return {}
    kinds = {"required": {"type": "any"}, "none": {"type": "none"}}
    return {"tool_choice": kinds.get(choice, {"type": "tool", "name": choice})}
