"""Provider decoders, one module per provider, registered by slug.

``DECODERS`` maps each slug (the same in modules, fixtures and the command line) to its
decoder class. It is read-only: to use another decoder, pass an instance to the pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._base import Decoder
from .anthropic import AnthropicDecoder
from .bedrock import BedrockDecoder
from .cohere import CohereDecoder
from .gemini import GeminiDecoder
from .mistral import MistralDecoder
from .ollama import OllamaDecoder
from .openai_chat import OpenAIChatDecoder
from .openai_responses import OpenAIResponsesDecoder

__all__ = (
    "DECODERS",
    "AnthropicDecoder",
    "BedrockDecoder",
    "CohereDecoder",
    "Decoder",
    "GeminiDecoder",
    "MistralDecoder",
    "OllamaDecoder",
    "OpenAIChatDecoder",
    "OpenAIResponsesDecoder",
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
