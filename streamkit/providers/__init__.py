"""Provider decoders, one module per provider, registered by slug.

``DECODERS`` maps each slug (the same in modules, fixtures and the command line) to its
decoder class. It is read-only: to use another decoder, pass an instance to the pipeline.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache, reduce
from typing import TYPE_CHECKING, Any

from .._errors import UsageError
from ._base import Decoder, ErrorShape

if TYPE_CHECKING:
    from .anthropic import AnthropicDecoder
    from .bedrock import BedrockDecoder
    from .cohere import CohereDecoder
    from .gemini import GeminiDecoder
    from .mistral import MistralDecoder
    from .ollama import OllamaDecoder
    from .openai_chat import OpenAIChatDecoder
    from .openai_responses import OpenAIResponsesDecoder

    ANY_ERRORS: ErrorShape  # built on first use, by ``__getattr__`` below

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

#: Each slug's module and decoder class, in the order of ``DECODERS`` (the slug is the module's
#: name). A decoder's module is imported the first time its slug is looked up: a stream of one
#: provider loads that provider's decoder only.
_CLASSES = {
    "openai_chat": "OpenAIChatDecoder",
    "openai_responses": "OpenAIResponsesDecoder",
    "anthropic": "AnthropicDecoder",
    "gemini": "GeminiDecoder",
    "cohere": "CohereDecoder",
    "mistral": "MistralDecoder",
    "ollama": "OllamaDecoder",
    "bedrock": "BedrockDecoder",
}
_SLUGS = {name: slug for slug, name in _CLASSES.items()}


@cache  # an import statement costs microseconds even when the module is loaded: once per slug
def _load(slug: str) -> type[Decoder]:
    """A known slug's decoder class, by a plain import statement: no module is imported by a string."""
    if slug == "openai_chat":
        from .openai_chat import OpenAIChatDecoder

        return OpenAIChatDecoder
    if slug == "openai_responses":
        from .openai_responses import OpenAIResponsesDecoder

        return OpenAIResponsesDecoder
    if slug == "anthropic":
        from .anthropic import AnthropicDecoder

        return AnthropicDecoder
    if slug == "gemini":
        from .gemini import GeminiDecoder

        return GeminiDecoder
    if slug == "cohere":
        from .cohere import CohereDecoder

        return CohereDecoder
    if slug == "mistral":
        from .mistral import MistralDecoder

        return MistralDecoder
    if slug == "ollama":
        from .ollama import OllamaDecoder

        return OllamaDecoder
    if slug == "bedrock":
        from .bedrock import BedrockDecoder

        return BedrockDecoder
    raise AssertionError(slug)  # every slug of ``_CLASSES`` has its import above


class _Decoders(Mapping[str, "type[Decoder]"]):
    """The read-only registry, importing a decoder's module on its first lookup."""

    def __getitem__(self, slug: str) -> type[Decoder]:
        if slug not in _CLASSES:  # a KeyError, as a mapping's, before any import
            raise KeyError(slug)
        return _load(slug)

    def __iter__(self) -> Iterator[str]:
        return iter(_CLASSES)

    def __len__(self) -> int:
        return len(_CLASSES)

    def __repr__(self) -> str:
        return f"DECODERS({dict(self)!r})"


DECODERS: Mapping[str, type[Decoder]] = _Decoders()


def decoder_for(provider: Any) -> type[Decoder]:
    """The decoder class of a provider's slug: the one lookup, and its one error."""
    cls = DECODERS.get(provider) if isinstance(provider, str) else None
    if cls is None:
        raise UsageError(f"unknown provider {provider!r}; known providers: {', '.join(sorted(DECODERS))}")
    return cls


@cache
def _any_errors() -> ErrorShape:
    """Every provider's error shape in one, in the order of ``DECODERS``: a gateway in front of
    one provider may answer in another's (an OpenAI-compatible server with Gemini's errors)."""
    return reduce(ErrorShape.then, (cls.errors for cls in DECODERS.values()))


def __getattr__(name: str) -> Any:
    """The decoder classes and ``ANY_ERRORS``, loaded on first use like ``DECODERS``' values."""
    if name in _SLUGS:
        return DECODERS[_SLUGS[name]]
    if name == "ANY_ERRORS":
        return _any_errors()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def error_details(body: Any, decoder: type[Decoder] | None = None) -> tuple[str | None, str | None]:
    """The type and message of an error body (a refused request's, an SDK exception's): read
    in the provider's own shape first, then in every other's."""
    shape = _any_errors() if decoder is None else decoder.errors.then(_any_errors())
    return shape.in_body(body)
