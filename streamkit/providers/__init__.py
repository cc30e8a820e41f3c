"""The providers, one folder per provider, registered by slug.

Every folder has the same files, so that its file list is that provider's pipeline:
``decode.py`` reads its stream into stage events, ``history.py`` writes calls, results and
turns as its history, ``reemit.py`` writes its stream back with each call whole and
``body.py`` reads the calls of a body that was not streamed and ``request.py`` writes a
streamed request (a missing file means that stage is not offered).

``FACTS`` maps each slug (the same in folders, fixtures and the command line) to its facts
(``providers/_facts.py``: what the generic code reads instead of naming a provider),
``DECODERS`` to its decoder class, ``HISTORIES`` to its history writer, ``ENCODERS`` to its
re-emitter and ``BODIES`` to its body reader and ``REQUESTS`` to its request writer. They are
read-only: to use another decoder, pass an instance to the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cache, reduce
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .._errors import UsageError

if TYPE_CHECKING:
    from ._base import Decoder, ErrorShape
    from ._body import Body
    from ._encoder import Encoder
    from ._facts import Facts
    from ._request import RequestWriter
    from .anthropic.decode import AnthropicDecoder
    from .bedrock.decode import BedrockDecoder
    from .cohere.decode import CohereDecoder
    from .gemini.decode import GeminiDecoder
    from .mistral.decode import MistralDecoder
    from .ollama.decode import OllamaDecoder
    from .openai_chat.decode import OpenAIChatDecoder
    from .openai_responses.decode import OpenAIResponsesDecoder

    ANY_ERRORS: ErrorShape  # built on first use, by ``__getattr__`` below

__all__ = (
    "ANY_ERRORS",
    "BODIES",
    "DECODERS",
    "ENCODERS",
    "FACTS",
    "HISTORIES",
    "REQUESTS",
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

#: Each slug's decoder class, in the order of ``DECODERS`` (the slug is the folder's name). A
#: provider's modules are imported the first time its slug is looked up: a stream of one
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
def _package(slug: str) -> ModuleType:
    """A known slug's folder (its ``__init__``: its facts, its decoder's names on first use), by
    a plain import statement: no module is imported by a string."""
    if slug == "openai_chat":
        from . import openai_chat

        return openai_chat
    if slug == "openai_responses":
        from . import openai_responses

        return openai_responses
    if slug == "anthropic":
        from . import anthropic

        return anthropic
    if slug == "gemini":
        from . import gemini

        return gemini
    if slug == "cohere":
        from . import cohere

        return cohere
    if slug == "mistral":
        from . import mistral

        return mistral
    if slug == "ollama":
        from . import ollama

        return ollama
    if slug == "bedrock":
        from . import bedrock

        return bedrock
    raise AssertionError(slug)  # every slug of ``_CLASSES`` has its import above


@cache
def _decoder(slug: str) -> type[Decoder]:
    """A known slug's decoder class, which its folder loads on first use."""
    cls: type[Decoder] = getattr(_package(slug), _CLASSES[slug])
    return cls


def _facts(slug: str) -> Facts:
    """A known slug's facts, declared in its folder's ``__init__``."""
    facts: Facts = _package(slug).FACTS
    return facts


@cache
def _history(slug: str) -> ModuleType:
    """A known slug's history writer (its ``history`` module), by a plain import statement."""
    if slug == "openai_chat":
        from .openai_chat import history as openai_chat

        return openai_chat
    if slug == "openai_responses":
        from .openai_responses import history as openai_responses

        return openai_responses
    if slug == "anthropic":
        from .anthropic import history as anthropic

        return anthropic
    if slug == "gemini":
        from .gemini import history as gemini

        return gemini
    if slug == "cohere":
        from .cohere import history as cohere

        return cohere
    if slug == "mistral":
        from .mistral import history as mistral

        return mistral
    if slug == "ollama":
        from .ollama import history as ollama

        return ollama
    if slug == "bedrock":
        from .bedrock import history as bedrock

        return bedrock
    raise AssertionError(slug)


#: The slugs whose streams can be written back with each call whole (Bedrock's binary frames cannot).
_REEMITTED = ("openai_chat", "mistral", "openai_responses", "anthropic", "gemini", "cohere", "ollama")


@cache
def _encoder(slug: str) -> type[Encoder]:
    """A re-emitted slug's encoder class, by a plain import statement."""
    if slug in ("openai_chat", "mistral"):  # Mistral speaks OpenAI Chat chunks: written back by that encoder
        from .openai_chat.reemit import OpenAIChatEncoder

        return OpenAIChatEncoder
    if slug == "openai_responses":
        from .openai_responses.reemit import OpenAIResponsesEncoder

        return OpenAIResponsesEncoder
    if slug == "anthropic":
        from .anthropic.reemit import AnthropicEncoder

        return AnthropicEncoder
    if slug == "gemini":
        from .gemini.reemit import GeminiEncoder

        return GeminiEncoder
    if slug == "cohere":
        from .cohere.reemit import CohereEncoder

        return CohereEncoder
    if slug == "ollama":
        from .ollama.reemit import OllamaEncoder

        return OllamaEncoder
    raise AssertionError(slug)


#: The slugs whose bodies that were not streamed are read (the formats the proxy serves).
_BODIES = ("openai_chat", "openai_responses", "anthropic")


@cache
def _body(slug: str) -> Body:
    """A read slug's body reader (its ``body`` module), by a plain import statement."""
    if slug == "openai_chat":
        from .openai_chat import body as openai_chat

        return openai_chat
    if slug == "openai_responses":
        from .openai_responses import body as openai_responses

        return openai_responses
    if slug == "anthropic":
        from .anthropic import body as anthropic

        return anthropic
    raise AssertionError(slug)


#: The slugs a streamed request can be written for (the integrations that send their own).
_REQUESTED = ("anthropic", "gemini", "mistral", "openai_chat", "openai_responses")


@cache
def _request(slug: str) -> RequestWriter:
    """A requested slug's request writer (its ``request`` module), by a plain import statement."""
    if slug == "openai_chat":
        from .openai_chat import request as openai_chat

        return openai_chat
    if slug == "openai_responses":
        from .openai_responses import request as openai_responses

        return openai_responses
    if slug == "anthropic":
        from .anthropic import request as anthropic

        return anthropic
    if slug == "gemini":
        from .gemini import request as gemini

        return gemini
    if slug == "mistral":
        from .mistral import request as mistral

        return mistral
    raise AssertionError(slug)


T = TypeVar("T")


class _Registry(Mapping[str, T], Generic[T]):
    """A read-only registry by slug, importing a provider's module on its slug's first lookup."""

    def __init__(self, name: str, slugs: tuple[str, ...], load: Callable[[str], T]) -> None:
        self._name, self._slugs, self._load = name, slugs, load

    def __getitem__(self, slug: str) -> T:
        if slug not in self._slugs:  # a KeyError, as a mapping's, before any import
            raise KeyError(slug)
        return self._load(slug)

    def __iter__(self) -> Iterator[str]:
        return iter(self._slugs)

    def __len__(self) -> int:
        return len(self._slugs)

    def __repr__(self) -> str:
        return f"{self._name}({dict(self)!r})"


#: Each slug's facts (``providers/_facts.py``), loaded without its decoder.
FACTS: Mapping[str, Facts] = _Registry("FACTS", tuple(_CLASSES), _facts)
DECODERS: Mapping[str, type[Decoder]] = _Registry("DECODERS", tuple(_CLASSES), _decoder)
#: Each slug's history writer, a module of the functions ``streamkit.adapters.Adapter`` names.
HISTORIES: Mapping[str, ModuleType] = _Registry("HISTORIES", tuple(_CLASSES), _history)
ENCODERS: Mapping[str, type[Encoder]] = _Registry("ENCODERS", _REEMITTED, _encoder)
#: Each read slug's body reader: ``calls(body)``, its ``RawCall``s, and ``stop_reason(body)``.
BODIES: Mapping[str, Body] = _Registry("BODIES", _BODIES, _body)
#: Each requested slug's request writer: ``body(...)``, ``user(text)`` and ``MERGE_ROLES``.
REQUESTS: Mapping[str, RequestWriter] = _Registry("REQUESTS", _REQUESTED, _request)


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
    from ._base import ErrorShape

    return reduce(ErrorShape.then, (cls.errors for cls in DECODERS.values()))


def __getattr__(name: str) -> Any:
    """The decoder classes, their base and ``ANY_ERRORS``, loaded on first use like ``DECODERS``'
    values: writing a history loads no decoder."""
    if name in ("Decoder", "ErrorShape"):
        from . import _base

        return getattr(_base, name)
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
