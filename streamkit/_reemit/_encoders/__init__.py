"""The encoders that write a decoded stream back in its provider's own format, by slug."""

from __future__ import annotations

from ._base import Encoder
from .anthropic import AnthropicEncoder
from .cohere import CohereEncoder
from .gemini import GeminiEncoder
from .ollama import OllamaEncoder
from .openai_chat import OpenAIChatEncoder
from .openai_responses import OpenAIResponsesEncoder

__all__ = ("ENCODERS", "Encoder")

#: Mistral speaks OpenAI Chat chunks, so it is written back by the same encoder.
ENCODERS: dict[str, type[Encoder]] = {
    "openai_chat": OpenAIChatEncoder,
    "mistral": OpenAIChatEncoder,
    "openai_responses": OpenAIResponsesEncoder,
    "anthropic": AnthropicEncoder,
    "gemini": GeminiEncoder,
    "cohere": CohereEncoder,
    "ollama": OllamaEncoder,
}
