"""Provider decoders, one module per provider, registered by slug.

``DECODERS`` maps each slug (the same in modules, fixtures and the command line) to its
decoder class. It is read-only: to use another decoder, pass an instance to the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce
from types import MappingProxyType
from typing import Any

from .._errors import UsageError
from ._base import Decoder, ErrorShape
from .anthropic import AnthropicDecoder
from .bedrock import BedrockDecoder
from .cohere import CohereDecoder
from .gemini import GeminiDecoder
from .mistral import MistralDecoder
from .ollama import OllamaDecoder
from .openai_chat import OpenAIChatDecoder
from .openai_responses import OpenAIResponsesDecoder

__all__ = (
    "ANY_ERRORS",
    "DECODERS",
    "AnthropicDecoder",
    "BedrockDecoder",
    "CohereDecoder",
    "Decoder",
    "ErrorShape",
    "GeminiDecoder",
    "MistralDecoder",
    "OllamaDecoder",
    "OpenAIChatDecoder",
    "OpenAIResponsesDecoder",
    "decoder_for",
    "error_details",
)

_ALL = (
    OpenAIChatDecoder,
    OpenAIResponsesDecoder,
    AnthropicDecoder,
    GeminiDecoder,
    CohereDecoder,
    MistralDecoder,
    OllamaDecoder,
    BedrockDecoder,
)

DECODERS: Mapping[str, type[Decoder]] = MappingProxyType({cls.slug: cls for cls in _ALL})


def decoder_for(provider: Any) -> type[Decoder]:
    """The decoder class of a provider's slug: the one lookup, and its one error."""
    cls = DECODERS.get(provider) if isinstance(provider, str) else None
    if cls is None:
        raise UsageError(f"unknown provider {provider!r}; known providers: {', '.join(sorted(DECODERS))}")
    return cls


#: Every provider's error shape in one, in the order of ``DECODERS``: a gateway in front of one
#: provider may answer in another's (an OpenAI-compatible server with Gemini's errors).
ANY_ERRORS: ErrorShape = reduce(ErrorShape.then, (cls.errors for cls in _ALL))


def error_details(body: Any, decoder: type[Decoder] | None = None) -> tuple[str | None, str | None]:
    """The type and message of an error body (a refused request's, an SDK exception's): read
    in the provider's own shape first, then in every other's."""
    shape = ANY_ERRORS if decoder is None else decoder.errors.then(ANY_ERRORS)
    return shape.in_body(body)
