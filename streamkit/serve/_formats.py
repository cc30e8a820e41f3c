"""The client formats the proxy speaks: their paths, keys and the shapes of their answers, each
from its provider's folder.

A format is a provider whose non-streamed bodies are read (its ``body.py``). Its path, key
header and the headers passed on are its facts; each format answers a failure in its own shape
(its re-emitter's ``error_body`` and ``error_event``), so the client's SDK raises its own error
with streamkit's message in it, rather than reading a cut stream or a stranger's JSON. Its model
list, one model and a count of input tokens are its answer writer's (``WRITERS``).

A request on a path of no one format (``/v1/models``) is answered in the format of its client,
told by the headers its SDK sends (``client_format``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from .._types import Provider
from ..providers import BODIES, ENCODERS, FACTS, WRITERS
from ..providers._encoder import dumps
from ..providers._facts import Facts
from ..providers._writer import Model

__all__ = ("FORMATS", "KEYS", "Format", "Model", "client_format")


@dataclass(frozen=True, slots=True)
class Format:
    """One client API.

    Attributes:
        slug: the provider slug streamkit decodes it as, and the route's name.
        path: the path the proxy serves it on.
        upstream_path: what is appended to a route's upstream base URL (``.../v1``).
        key_header: the header an upstream key is sent in, and ``key_value`` its value around
            the key (``Bearer {}``).
        forwarded: the request headers passed on to the upstream, besides the key.
        models_path: the path of its model list (``/v1/models``), ``None`` without one.
        count_path: the path of its count of input tokens, ``None`` without one.
    """

    slug: Provider
    path: str
    upstream_path: str
    key_header: str
    key_value: str
    forwarded: tuple[str, ...]
    models_path: str | None
    count_path: str | None

    @property
    def facts(self) -> Facts:
        return FACTS[self.slug]

    def error_body(self, kind: str, message: str, code: str | None = None) -> bytes:
        """An HTTP error body in the format's own shape."""
        return dumps(ENCODERS[self.slug].error_body(kind, message, code)).encode()

    def error_event(self, kind: str, message: str, code: str) -> bytes:
        """An in-stream error, in the format's own shape: the last event of the stream."""
        return ENCODERS[self.slug].error_event(kind, message, code)

    def model_list(self, models: Sequence[Model]) -> bytes:
        return dumps(WRITERS[self.slug].model_list(models)).encode()

    def model_info(self, model: Model) -> bytes:
        return dumps(WRITERS[self.slug].model_info(model)).encode()

    def token_count(self, tokens: int) -> bytes:
        return dumps(WRITERS[self.slug].token_count(tokens)).encode()

    def lists_like(self, other: Format) -> bool:
        """Whether the two formats' clients are one API's, whose model list is one (OpenAI's
        Chat and Responses): the same base URL."""
        return self.facts.base_url == other.facts.base_url


def client_format(headers: Mapping[str, str], formats: Iterable[Format]) -> Format:
    """The format of the client that sent ``headers``, among ``formats`` (the routes' first):
    the first whose own headers it sends (``anthropic-version``), else the first whose key
    header it sends, else the first."""
    ordered = list(formats)
    own = (fmt for fmt in ordered if any(name.lower() in headers for name in fmt.facts.request_headers))
    keyed = (fmt for fmt in ordered if fmt.key_header in headers)
    return next(own, None) or next(keyed, None) or ordered[0]


def _format(slug: Provider) -> Format:
    """A provider's format from its facts: served under ``/v1`` at its API's own path
    (``path_end``), as its official SDKs reach it from a base URL ending in ``/v1``; its key in
    its own header; the headers of any JSON request passed on, and those its SDKs add."""
    facts = FACTS[slug]
    end = facts.paths.end
    assert end is not None and facts.auth_header is not None  # a served format has both
    forwarded = ("content-type", "accept", *facts.client_headers, "idempotency-key")
    models = None if facts.paths.models_served is None else "/v1" + facts.paths.models_served
    count = None if facts.paths.count is None else "/v1" + facts.paths.count
    key_header = facts.auth_header.lower()
    return Format(slug, "/v1" + end, end, key_header, facts.auth_value, forwarded, models, count)


FORMATS: dict[str, Format] = {slug: _format(cast(Provider, slug)) for slug in BODIES}
#: Each header a served format's key comes in, and the facts that read the key in its value.
KEYS: dict[str, Facts] = {fmt.key_header: FACTS[fmt.slug] for fmt in FORMATS.values()}
