"""Provider decoders, one module per provider, registered by slug.

``DECODERS`` maps each slug (the same in modules, fixtures and the command line) to its
decoder class. It is read-only: to use another decoder, pass an instance to the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._base import Decoder
from .anthropic import AnthropicDecoder
from .cohere import CohereDecoder
from .gemini import GeminiDecoder
from .mistral import MistralDecoder
from .openai_chat import OpenAIChatDecoder
from .openai_responses import OpenAIResponsesDecoder

__all__ = (
    "DECODERS",
    "AnthropicDecoder",
    "CohereDecoder",
    "Decoder",
    "GeminiDecoder",
    "MistralDecoder",
    "OpenAIChatDecoder",
    "OpenAIResponsesDecoder",
)

DECODERS: Mapping[str, type[Decoder]] = MappingProxyType(
    {cls.slug: cls for cls in (AnthropicDecoder, OpenAIChatDecoder)}
    | {cls.slug: cls for cls in (CohereDecoder, GeminiDecoder, MistralDecoder, OpenAIResponsesDecoder)}
)
