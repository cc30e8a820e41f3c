"""A provider's facts: what the generic code needs to know of a provider besides how to read
its stream, declared once, as data, in its folder's ``__init__.py`` (``FACTS``).

The decoders, the proxy, the transports, telemetry and the integrations read these rather than
naming a provider, so that the same answer means the same thing on every path: a body read
whole cuts a call on exactly the stop reasons a stream cuts it on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .._ending import cutting_reasons
from .._types import Finish

__all__ = ("BEARER", "Facts", "Paths", "Stages")

#: The usual ``auth``: the key as a bearer token.
BEARER = "Authorization: Bearer {}"


@dataclass(frozen=True, slots=True)
class Paths:
    """Where a provider's API answers, below its base URL.

    Attributes:
        request: what a streamed request is sent to (``{model}`` stands for the model's name).
        end: how the path of a request to its API ends, below the version prefix: what names
            the provider when a stream's first events do not, and where the proxy serves its
            format (under ``/v1``). ``None`` when its path is another provider's.
        models: its API's model list, with the query that reads it whole on one page where the
            API pages it (``/models?limit=1000``): below the version prefix for a format the
            proxy serves (one model at ``/models/{id}``), from the API's root for another
            (Gemini's ``/v1beta/models``); ``None`` for an API without one. Its reader is
            ``MODEL_LISTS``'.
        count: its API's count of a request's input tokens (``/messages/count_tokens``);
            ``None`` for an API without one.
    """

    request: str | None = None
    end: str | None = None
    models: str | None = None
    count: str | None = None

    @property
    def models_served(self) -> str | None:
        """``models`` without its query: the path a client of the format asks."""
        return None if self.models is None else self.models.partition("?")[0]


@dataclass(frozen=True, slots=True, eq=False)
class Facts:
    """One provider's facts.

    Attributes:
        slug: its name everywhere: its folder, its fixtures, ``--provider``.
        finish_reasons: its stop reasons, each with its finish in the shared vocabulary
            (``ResponseEnd.finish``); those whose finish is one of ``CUTTING_FINISHES`` cut off
            a call being written (``cutting``), streamed or not.
        base_url: its API's base URL as its official SDK has it (OpenAI's and Mistral's with
            the ``/v1`` prefix, Anthropic's and Gemini's without).
        paths: where its API answers, below the base URL (``Paths``).
        auth: the request header that carries the API key, as it is written, ``{}`` standing
            for the key (``x-api-key: {}``, ``BEARER``); ``None`` for a provider whose
            requests are signed (Bedrock: ``signed``).
        key_optional: whether its API answers without a key too (a local Ollama; the hosted
            one takes a key), so that a key is sent only when one is set.
        request_headers: headers every request to it carries beside the key (an API version).
        client_headers: the headers its SDKs send that a proxy passes on to it (an
            organization, a beta), beside the key and those of any JSON request.
        key_variables: the environment variables its official SDK reads the key from, the
            first one set winning, and ``base_url_variable`` the one it reads the API's base
            URL from: every integration and ``streamkit live`` read these, so a key set for the
            SDK works everywhere.
        signed: whether its requests are signed (AWS SigV4, boto3's job) rather than keyed.
        telemetry_name: its ``gen_ai.provider.name`` in OpenTelemetry's conventions: their
            well-known value, else (none given) its slug.
        sdk_packages: the top-level packages of its official SDKs, whose exceptions report its
            errors (``streamkit._foreign``).
        model_classes: the model classes of the frameworks whose streams of it streamkit reads
            under their own SDK client, by framework (pydantic-ai's ``AnthropicModel``).
        signature_deltas: whether a thinking block's signature may come in several deltas (an
            SDK keeping only the last loses the rest; streamkit joins them).
        reasoning_items: whether its history carries reasoning as opaque items that any client
            of its API may hand back as it got them (Responses' encrypted reasoning items).
        history_key: the key of a request body that holds its history (``messages``): what
            the transports and the proxy extend when they answer a bad call to the model
            themselves; ``None`` where they cannot.
        call_state_back: the keys of a call's ``state`` its API needs back with the call in
            the next request (Gemini 3's ``thoughtSignature``): the proxy carries them in the id
            a client of another format holds (``carrying``).
    """

    slug: str
    finish_reasons: Mapping[str, Finish] = field(default_factory=dict)
    base_url: str | None = None
    paths: Paths = Paths()
    auth: str | None = None
    key_optional: bool = False
    request_headers: Mapping[str, str] = field(default_factory=dict)
    client_headers: tuple[str, ...] = ()
    key_variables: tuple[str, ...] = ()
    base_url_variable: str | None = None
    signed: bool = False
    telemetry_name: str = ""
    sdk_packages: tuple[str, ...] = ()
    model_classes: Mapping[str, str] = field(default_factory=dict)
    signature_deltas: bool = False
    reasoning_items: bool = False
    history_key: str | None = None
    call_state_back: tuple[str, ...] = ()
    cutting: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "finish_reasons", MappingProxyType(dict(self.finish_reasons)))
        object.__setattr__(self, "request_headers", MappingProxyType(dict(self.request_headers)))
        object.__setattr__(self, "model_classes", MappingProxyType(dict(self.model_classes)))
        object.__setattr__(self, "cutting", cutting_reasons(self.finish_reasons))
        object.__setattr__(self, "telemetry_name", self.telemetry_name or self.slug)

    def key_from(self, environ: Mapping[str, str]) -> str | None:
        """The API key in ``environ``, from the first of ``key_variables`` that is set."""
        return next((environ[name] for name in self.key_variables if environ.get(name)), None)

    def base_url_from(self, environ: Mapping[str, str]) -> str | None:
        """The API's base URL in ``environ``, when ``base_url_variable`` is set there; a bare
        ``host[:port]`` (``OLLAMA_HOST`` names the server's own address so) takes the scheme and
        port of ``base_url``, as its SDK does."""
        value = (environ.get(self.base_url_variable) or None) if self.base_url_variable else None
        if value is None or "://" in value or self.base_url is None:
            return value
        from urllib.parse import urlsplit  # here: a stream's decoding loads no URL parser

        default = urlsplit(self.base_url)
        if default.port is not None and ":" not in value.rpartition("]")[2]:  # an IPv6 host is bracketed
            value = f"{value}:{default.port}"
        return f"{default.scheme}://{value}"

    @property
    def auth_header(self) -> str | None:
        """The header of ``auth`` (``Authorization``)."""
        return None if self.auth is None else self.auth.partition(":")[0]

    @property
    def auth_value(self) -> str:
        """The value of ``auth`` around the key (``Bearer {}``)."""
        return "{}" if self.auth is None else self.auth.partition(":")[2].strip()

    def key_in(self, value: str) -> str:
        """The key in a value of its ``auth_header`` (``Bearer sk-…`` → ``sk-…``)."""
        before, _, after = self.auth_value.partition("{}")
        value = value.removeprefix(before)
        return value.removesuffix(after) if after else value


@dataclass(frozen=True, slots=True)
class Stages:
    """The stages a provider's folder offers besides decoding and writing its history (a missing
    file: a stage not offered), with the class names of those that are classes. The registry
    (``providers/__init__.py``) reads it from the folder, which it imports at the slug's first
    lookup; a stage module is imported when it is first used."""

    decoder: str  # ``decode.py``'s class
    encoder: str | None = None  # ``reemit.py``'s class; None: its stream is not written back
    body: bool = False  # ``body.py``: a body that was not streamed is read
    request: bool = False  # ``request.py``: a streamed request is written
    writer: str | None = None  # ``write.py``'s class; None: no answer is written in its format
    asked: bool = False  # ``asked.py``: a client's request in its format is read into streamkit's terms
    messages: bool = False  # ``asked.py``'s ``conversation``: the frameworks' messages are in its format
    models: bool = False  # ``models.py``: its API's model list is read where no answer writer reads it
