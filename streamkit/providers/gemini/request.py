"""A Gemini ``streamGenerateContent`` request: the model is in the path, roles alternate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._turn_types import Image, Parts
from .._request import Message, Place, RequestError, ToolSpec, no_effort

__all__ = ("MERGE_ROLES", "SETTINGS", "body", "choice", "effort", "inline", "user")

MERGE_ROLES = True
#: Sampling and stop sequences sit in ``generationConfig``, in its own spelling.
SETTINGS: Mapping[str, Place] = {
    "temperature": ("generationConfig", "temperature"),
    "top_p": ("generationConfig", "topP"),
    "stop": ("generationConfig", "stopSequences"),
}
effort = no_effort


def user(content: str | Parts) -> Message:
    """A user's message as parts: text, and each image's bytes as ``inlineData``."""
    parts = (content,) if isinstance(content, str) else content.items
    return {"role": "user", "parts": [{"text": part} if isinstance(part, str) else inline(part) for part in parts]}


def inline(image: Image) -> Message:
    """An image as an ``inlineData`` part. One given by URL is refused: Gemini's ``fileData``
    needs the file's media type (``mimeType``), which no client format gives with a URL (and its
    ``fileUri`` is documented for files Google holds: its Files API's, Cloud Storage's)."""
    if image.url is not None:
        raise RequestError(
            f"the image at {image.url:.80}",
            "Gemini takes an image by URL only with its media type, which the request does not give; "
            "send the image's data (base64)",
        )
    return {"inlineData": {"mimeType": image.media_type, "data": image.data}}


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
