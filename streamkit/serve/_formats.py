"""The client formats the proxy speaks: their paths, keys and error shapes, each from its
provider's folder.

A format is a provider whose non-streamed bodies are read (its ``body.py``). Its path, key
header and the headers passed on are its facts; each format answers a failure in its own shape
(its re-emitter's ``error_body`` and ``error_event``), so the client's SDK raises its own error
with streamkit's message in it, rather than reading a cut stream or a stranger's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from .._types import Provider
from ..providers import BODIES, ENCODERS, FACTS
from ..providers._encoder import dumps
from ..providers._facts import Facts

__all__ = ("FORMATS", "KEYS", "Format")


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
    """

    slug: Provider
    path: str
    upstream_path: str
    key_header: str
    key_value: str
    forwarded: tuple[str, ...]

    def error_body(self, kind: str, message: str, code: str | None = None) -> bytes:
        """An HTTP error body in the format's own shape."""
        return dumps(ENCODERS[self.slug].error_body(kind, message, code)).encode()

    def error_event(self, kind: str, message: str, code: str) -> bytes:
        """An in-stream error, in the format's own shape: the last event of the stream."""
        return ENCODERS[self.slug].error_event(kind, message, code)


def _format(slug: Provider) -> Format:
    """A provider's format from its facts: served under ``/v1`` at its API's own path
    (``path_end``), as its official SDKs reach it from a base URL ending in ``/v1``; its key in
    its own header; the headers of any JSON request passed on, and those its SDKs add."""
    facts = FACTS[slug]
    assert facts.path_end is not None and facts.auth_header is not None  # a served format has both
    forwarded = ("content-type", "accept", *facts.client_headers, "idempotency-key")
    return Format(slug, "/v1" + facts.path_end, facts.path_end, facts.auth_header.lower(), facts.auth_value, forwarded)


FORMATS: dict[str, Format] = {slug: _format(cast(Provider, slug)) for slug in BODIES}
#: Each header a served format's key comes in, and the facts that read the key in its value.
KEYS: dict[str, Facts] = {fmt.key_header: FACTS[fmt.slug] for fmt in FORMATS.values()}
