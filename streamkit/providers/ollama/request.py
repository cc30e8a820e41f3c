"""An Ollama ``/api/chat`` request: the system text as a first ``system`` message, the tools as
Chat's function tools, the sampling settings and the output limit (``num_predict``) under
``options``, reasoning as ``think``.

A user's images go in the message's ``images``, as their base64 bytes: Ollama takes no media
type and no URL (an image by URL is refused), and keeps the text apart, one string.

Ollama has no tool choice: ``none`` is carried as no tools offered, and a choice that forces a
call is refused. Its ``format`` takes a JSON schema bare, not Chat's ``response_format``, which
is refused with the settings it has no place for.
Fields: https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._turn_types import Parts
from .._request import Message, Place, RequestError, ToolSpec, function, plain_user, system_first

__all__ = ("MERGE_ROLES", "SETTINGS", "body", "choice", "effort", "user")

MERGE_ROLES = False
#: The model's parameters sit in ``options``, under Ollama's names; a reasoning effort is
#: ``think`` (``low``, ``medium``, ``high``: the levels Ollama takes).
SETTINGS: Mapping[str, Place] = {
    **{
        name: ("options", name)
        for name in ("temperature", "top_p", "top_k", "seed", "stop", "frequency_penalty", "presence_penalty")
    },
    "reasoning_effort": ("think",),
}
#: The reasoning efforts ``think`` takes as they are.
_LEVELS = ("low", "medium", "high")


def user(content: str | Parts) -> Message:
    """A user's text, and its images' bytes in ``images``; an image by URL is a ``RequestError``."""
    if isinstance(content, str):
        return plain_user(content)
    for image in content.images:
        if image.data is None:
            raise RequestError(f"the image at {image.url:.80}", "Ollama takes an image's data (base64), not its URL")
    return {**plain_user(content.text), "images": [image.data for image in content.images]}


def effort(level: str, budgets: Mapping[str, int]) -> dict[str, Any] | None:
    """``think`` at the level; ``none`` is no thinking."""
    if level == "none":
        return {"think": False}
    return {"think": level} if level in _LEVELS else None


def body(
    model: str, history: list[Message], system: str | None, tools: Sequence[ToolSpec], limit: int | None
) -> dict[str, Any]:
    written: dict[str, Any] = {"model": model, "messages": system_first(system, history), "stream": True}
    if tools:
        written["tools"] = [{"type": "function", "function": function(tool)} for tool in tools]
    if limit is not None:
        written["options"] = {"num_predict": limit}
    return written


def choice(choice: str) -> dict[str, Any]:
    """No tool choice: ``none`` offers no tools; a call cannot be forced."""
    if choice == "auto":
        return {}
    if choice == "none":
        return {"tools": []}
    raise RequestError("tool_choice", f"{choice!r} forces a call, which the upstream's format (ollama) cannot")
