"""Mistral chat stream (``POST /v1/chat/completions`` with ``stream: true``).

Mistral speaks OpenAI Chat Completions chunks, so this decoder is ``OpenAIChatDecoder`` with
two differences of its own; every rule about calls (keying, ids, end markers) is shared:

- Its documented format sends a whole call in one delta with no ``index`` and no ``type``, and
  ``arguments`` as a string or an object (the SDK type is ``Union[Dict[str, Any], str]``), often
  with ``finish_reason`` and ``usage`` in the same chunk. Entries are keyed by their position,
  as ``openai_chat`` does for a missing index; since that is Mistral's normal shape, the
  ``index_missing`` and ``arguments_object`` anomalies are not recorded here. The placeholders
  of its incremental style (``name: ""``, id ``"null"``) still are.
- ``delta.content`` of reasoning models is a list of typed chunks: ``text`` chunks are text,
  ``thinking`` chunks are not the answer and are skipped.

Like OpenAI Chat there is no per-call end marker: the choice's ``finish_reason`` ends its calls,
and ``data: [DONE]`` ends the stream.
Docs: https://docs.mistral.ai/capabilities/function_calling/
"""

from __future__ import annotations

from typing import Any

from ..._events import AnomalyNoted, Event
from .._base import ErrorShape
from ..openai_chat.decode import OpenAIChatDecoder, _path
from . import FACTS

__all__ = ("MistralDecoder",)

#: Anomalies that describe Mistral's documented format, not a deviation from it.
_NORMAL_HERE = frozenset({"index_missing", "arguments_object"})


class MistralDecoder(OpenAIChatDecoder):
    slug = "mistral"
    errors = ErrorShape(keys=(), type_fields=("type", "code"), message_fields=("message", "detail"))
    finish_reasons = FACTS.finish_reasons
    #: Its own model families: the chunk shape is OpenAI's, so the model name tells them apart.
    models = r"(?:mistral|mixtral|magistral|codestral|devstral|ministral|pixtral|voxtral)"

    def _chunk(self, payload: Any, event: str | None) -> list[Event]:
        out = super()._chunk(payload, event)
        return [e for e in out if type(e) is not AnomalyNoted or e.anomaly not in _NORMAL_HERE]

    def _content(self, content: Any, choice: int, event: str | None) -> str | None:
        if not isinstance(content, list):
            return super()._content(content, choice, event)
        where = f"{_path(choice)}.delta.content"
        pieces = []
        for number, chunk in enumerate(content):
            kind = chunk.get("type") if isinstance(chunk, dict) else None
            if kind == "text":
                text = chunk.get("text")
                if not isinstance(text, str):
                    raise self.error(f"{where}[{number}].text must be a string", event=event)
                pieces.append(text)
            elif not isinstance(kind, str):
                raise self.error(f"{where}[{number}] must be an object with a 'type'", event=event)
            # "thinking" (and any chunk type added later) is not answer text
        return "".join(pieces)
