"""Gemini's model list (``GET /v1beta/models``), read into streamkit's terms for a client of
another format.

Each entry's ``name`` is ``models/<id>``; a request names the model by the id alone (its path
is ``/v1beta/models/<id>:streamGenerateContent``), so that is the id a client reads. A model
whose ``supportedGenerationMethods`` lack ``generateContent`` (an embedding model, an
``AQA`` one) answers no request the proxy sends, and is left out.
Shape: https://ai.google.dev/api/models#method:-models.list
"""

from __future__ import annotations

from .._body import listed, text
from .._writer import Model

__all__ = ("read",)

#: Who serves the models, as Gemini's OpenAI-compatible list says of each (``owned_by``).
OWNER = "google"
#: The method a model must offer to be asked as the proxy asks it.
_GENERATES = "generateContent"


def read(body: object) -> list[Model]:
    """``models``' models that generate content, by their ids; an entry without a name is left out."""
    entries = listed(body.get("models")) if isinstance(body, dict) else []
    return [
        Model(name.removeprefix("models/"), name=text(entry, "displayName"), owner=OWNER)
        for entry in entries
        if (name := text(entry, "name")) and _generates(entry)
    ]


def _generates(entry: dict[str, object]) -> bool:
    """Whether the entry generates content: it says so, or it names no methods at all."""
    methods = entry.get("supportedGenerationMethods")
    return not isinstance(methods, list) or _GENERATES in methods
