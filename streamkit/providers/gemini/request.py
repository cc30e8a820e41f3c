"""A Gemini ``streamGenerateContent`` request: the model is in the path, roles alternate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._request import Message, Place, ToolSpec, no_effort

__all__ = ("MERGE_ROLES", "SETTINGS", "body", "choice", "effort", "user")

MERGE_ROLES = True
#: Sampling and stop sequences sit in ``generationConfig``, in its own spelling.
SETTINGS: Mapping[str, Place] = {
    "temperature": ("generationConfig", "temperature"),
    "top_p": ("generationConfig", "topP"),
    "stop": ("generationConfig", "stopSequences"),
}
effort = no_effort


def user(text: str) -> Message:
    return {"role": "user", "parts": [{"text": text}]}


def body(
    model: str, history: list[Message], system: str | None, tools: Sequence[ToolSpec], limit: int | None
) -> dict[str, Any]:
    written: dict[str, Any] = {"contents": history}
    if system is not None:
        written["systemInstruction"] = {"parts": [{"text": system}]}
    if tools:
        # parametersJsonSchema takes JSON Schema as it is; `parameters` wants Gemini's OpenAPI subset.
        declarations = [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters} for t in tools
        ]
        written["tools"] = [{"functionDeclarations": declarations}]
    if limit is not None:
        written["generationConfig"] = {"maxOutputTokens": limit}
    return written


def choice(choice: str) -> dict[str, Any]:
    if choice == "auto":
        return {}
    modes = {"required": {"mode": "ANY"}, "none": {"mode": "NONE"}}
    config = modes.get(choice, {"mode": "ANY", "allowedFunctionNames": [choice]})
    return {"toolConfig": {"functionCallingConfig": config}}
