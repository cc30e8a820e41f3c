"""An Anthropic Messages request: ``max_tokens`` is required, roles alternate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._request import Message, ToolSpec

__all__ = ("MAX_TOKENS", "MERGE_ROLES", "body", "user")

#: The API requires ``max_tokens``: what is sent when the caller sets none.
MAX_TOKENS = 4096
MERGE_ROLES = True


def user(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


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
