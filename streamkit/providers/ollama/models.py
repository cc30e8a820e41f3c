"""Ollama's list of the models it has (``GET /api/tags``), read into streamkit's terms for a
client of another format, as Ollama's own OpenAI-compatible list reads it.

Each entry's ``model`` (``qwen3:latest``) is what a request names (``name``, its older field,
when it has none); ``modified_at`` (RFC 3339) is the model's time, and the namespace of its name
(``library`` for a name without one) its owner.
Shape: https://docs.ollama.com/api/tags
"""

from __future__ import annotations

from .._body import listed, text
from .._writer import Model, timestamp

__all__ = ("read",)

#: The namespace of a model named without one (``qwen3`` is ``library/qwen3``).
_LIBRARY = "library"


def read(body: object) -> list[Model]:
    """``models``' models by the names a request gives; an entry without one is left out."""
    entries = listed(body.get("models")) if isinstance(body, dict) else []
    return [
        Model(ident, timestamp(entry.get("modified_at")), owner=_namespace(ident))
        for entry in entries
        if (ident := text(entry, "model") or text(entry, "name"))
    ]


def _namespace(name: str) -> str:
    """The namespace of a model's name: the part before the model's own (``[host/]namespace/model:tag``)."""
    parts = name.split("/")
    return parts[-2] if len(parts) > 1 else _LIBRARY
