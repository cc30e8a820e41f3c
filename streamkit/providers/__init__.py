"""The providers, one folder per provider, registered by slug.

Every folder has the same files, so that its file list is that provider's pipeline:
``decode.py`` reads its stream into stage events, ``history.py`` writes calls, results and
turns as its history, ``reemit.py`` writes its stream back with each call whole and
``body.py`` reads the calls of a body that was not streamed, ``request.py`` writes a
streamed request, ``write.py`` writes an answer in its format from another provider's values and
``asked.py`` reads a client's request in its format, ``models.py`` its API's model list where no
``write.py`` reads it (a missing file means that stage is not offered). Its ``__init__.py``
declares its ``FACTS`` and its ``STAGES``; the slugs are the ``Provider`` literal's.

``FACTS`` maps each slug (the same in folders, fixtures and the command line) to its facts
(``providers/_facts.py``: what the generic code reads instead of naming a provider),
``DECODERS`` to its decoder class, ``HISTORIES`` to its history writer, ``ENCODERS`` to its
re-emitter, ``BODIES`` to its body reader, ``REQUESTS`` to its request writer, ``WRITERS``
to its answer writer, ``ASKED`` to its request reader and ``MODEL_LISTS`` to its reader of its API's
model list; ``MESSAGES`` holds the one reader of the messages frameworks hand a model (LiteLLM's,
smolagents', agno's: OpenAI Chat's). They are read-only: to use another decoder, pass an instance
to the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cache, reduce
from importlib import import_module
from types import ModuleType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .._errors import UsageError
from .._types import PROVIDERS

if TYPE_CHECKING:
    from ._base import Decoder, ErrorShape
    from ._body import Body
    from ._encoder import Encoder
    from ._facts import Facts, Stages
    from ._request import Asked, RequestWriter
    from ._writer import Model, Writer
    from .anthropic.decode import AnthropicDecoder
    from .bedrock.decode import BedrockDecoder
    from .cohere.decode import CohereDecoder
    from .gemini.decode import GeminiDecoder
    from .mistral.decode import MistralDecoder
    from .ollama.decode import OllamaDecoder
    from .openai_chat.asked import Conversation
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
    "WRITERS",
    "ASKED",
    "MESSAGES",
    "MODEL_LISTS",
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


# Every provider is a slug of ``PROVIDERS`` (the ``Provider`` literal, the one list of them, in
# the order of ``DECODERS``) and a folder of that name, which declares its ``FACTS`` and its
# ``STAGES``; its modules are imported the first time its slug is looked up: a stream of one
# provider loads that provider's decoder only.


@cache  # once per slug and stage
def _module(slug: str, stage: str = "") -> ModuleType:
    """A known slug's folder (its ``__init__``: its facts), or one of its stage modules."""
    return import_module(f"{__name__}.{slug}.{stage}" if stage else f"{__name__}.{slug}")


@cache
def _decoder(slug: str) -> type[Decoder]:
    """A known slug's decoder class (in its ``decode`` module)."""
    cls: type[Decoder] = getattr(_module(slug, "decode"), _stages(slug).decoder)
    return cls


def _stages(slug: str) -> Stages:
    """A known slug's stages, declared in its folder's ``__init__``."""
    stages: Stages = _module(slug).STAGES
    return stages


def _facts(slug: str) -> Facts:
    """A known slug's facts, declared in its folder's ``__init__``."""
    facts: Facts = _module(slug).FACTS
    return facts


def _history(slug: str) -> ModuleType:
    """A known slug's history writer (its ``history`` module)."""
    return _module(slug, "history")


def _encoder(slug: str) -> type[Encoder]:
    """A re-emitted slug's encoder class (in its ``reemit`` module)."""
    cls: type[Encoder] = getattr(_module(slug, "reemit"), _stages(slug).encoder or "")
    return cls


def _body(slug: str) -> Body:
    """A read slug's body reader (its ``body`` module)."""
    reader: Body = _module(slug, "body")
    return reader


def _request(slug: str) -> RequestWriter:
    """A requested slug's request writer (its ``request`` module)."""
    writer: RequestWriter = _module(slug, "request")
    return writer


def _writer(slug: str) -> type[Writer]:
    """A written slug's answer writer class (in its ``write`` module)."""
    cls: type[Writer] = getattr(_module(slug, "write"), _stages(slug).writer or "")
    return cls


def _asked(slug: str) -> Callable[[Mapping[str, Any]], Asked]:
    """A read slug's request reader (``read`` in its ``asked`` module)."""
    read: Callable[[Mapping[str, Any]], Asked] = _module(slug, "asked").read
    return read


def _conversation(slug: str) -> Conversation:
    """A slug's reader of a framework's messages (``conversation`` in its ``asked`` module)."""
    read: Conversation = _module(slug, "asked").conversation
    return read


def _model_list(slug: str) -> Callable[[object], list[Model]]:
    """A listing slug's reader of its API's model list: ``read`` in its ``models`` module, else
    its answer writer's (the list a server of its format answers is the one it writes)."""
    if _stages(slug).models:
        read: Callable[[object], list[Model]] = _module(slug, "models").read
        return read
    return WRITERS[slug].read_models  # not ``_writer``: importing ``._writer`` rebinds that name here


def _offering(*stages: str) -> Callable[[], tuple[str, ...]]:
    """The slugs whose folders offer one of ``stages``: read from the folders at first need."""
    return lambda: tuple(slug for slug in PROVIDERS if any(getattr(_stages(slug), stage) for stage in stages))


T = TypeVar("T")


class _Registry(Mapping[str, T], Generic[T]):
    """A read-only registry by slug, importing a provider's module on its slug's first lookup."""

    def __init__(
        self, name: str, slugs: tuple[str, ...] | Callable[[], tuple[str, ...]], load: Callable[[str], T]
    ) -> None:
        self._name, self._given, self._load = name, slugs, load

    @property
    def _slugs(self) -> tuple[str, ...]:
        """Its slugs: given, or read from the folders' stages at the first lookup and kept."""
        if callable(self._given):
            self._given = self._given()
        return self._given

    def __getitem__(self, slug: str) -> T:
        if slug not in PROVIDERS or slug not in self._slugs:  # a KeyError, as a mapping's, before any import
            raise KeyError(slug)
        return self._load(slug)

    def __iter__(self) -> Iterator[str]:
        return iter(self._slugs)

    def __len__(self) -> int:
        return len(self._slugs)

    def __repr__(self) -> str:
        return f"{self._name}({dict(self)!r})"


#: Each slug's facts (``providers/_facts.py``), loaded without its decoder.
FACTS: Mapping[str, Facts] = _Registry("FACTS", PROVIDERS, _facts)
DECODERS: Mapping[str, type[Decoder]] = _Registry("DECODERS", PROVIDERS, _decoder)
#: Each slug's history writer, a module of the functions ``streamkit.adapters.Adapter`` names.
HISTORIES: Mapping[str, ModuleType] = _Registry("HISTORIES", PROVIDERS, _history)
ENCODERS: Mapping[str, type[Encoder]] = _Registry("ENCODERS", _offering("encoder"), _encoder)
#: Each read slug's body reader: ``calls(body)``, its ``RawCall``s, and ``stop_reason(body)``.
BODIES: Mapping[str, Body] = _Registry("BODIES", _offering("body"), _body)
#: Each requested slug's request writer: ``body(...)``, ``user(text)`` and ``MERGE_ROLES``.
REQUESTS: Mapping[str, RequestWriter] = _Registry("REQUESTS", _offering("request"), _request)
#: Each written slug's answer writer: an answer in its format from values decoded from any provider.
WRITERS: Mapping[str, type[Writer]] = _Registry("WRITERS", _offering("writer"), _writer)
#: Each asked slug's request reader: a client's request in its format, in streamkit's terms.
ASKED: Mapping[str, Callable[[Mapping[str, Any]], Asked]] = _Registry("ASKED", _offering("asked"), _asked)
#: Each listing slug's reader of its API's model list (at its facts' ``paths.models``): ``read(body)``,
#: its ``Model``s, an entry without an id left out.
MODEL_LISTS: Mapping[str, Callable[[object], list[Model]]] = _Registry(
    "MODEL_LISTS", _offering("models", "writer"), _model_list
)
#: The slug whose messages the frameworks hand a model, and its reader: ``conversation(provider, messages, ...)``.
MESSAGES: Mapping[str, Conversation] = _Registry("MESSAGES", _offering("messages"), _conversation)


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
    if name.endswith("Decoder"):  # a decoder class is named in its folder's stages
        for slug in PROVIDERS:
            if _stages(slug).decoder == name:
                return DECODERS[slug]
    if name == "ANY_ERRORS":
        return _any_errors()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def error_details(body: Any, decoder: type[Decoder] | None = None) -> tuple[str | None, str | None]:
    """The type and message of an error body (a refused request's, an SDK exception's): read
    in the provider's own shape first, then in every other's."""
    shape = _any_errors() if decoder is None else decoder.errors.then(_any_errors())
    return shape.in_body(body)
