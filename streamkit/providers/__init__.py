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
from .ollama import OllamaDecoder
from .openai_chat import OpenAIChatDecoder

__all__ = ("DECODERS", "AnthropicDecoder", "BedrockDecoder", "Decoder", "OllamaDecoder", "OpenAIChatDecoder")

DECODERS: Mapping[str, type[Decoder]] = MappingProxyType(
    {cls.slug: cls for cls in (AnthropicDecoder, OpenAIChatDecoder, OllamaDecoder, BedrockDecoder)}
)
