"""Credentials out of everything streamkit shows: the request's secrets, URLs, excerpts.

The secrets of a request are the values of its auth headers, the ``key=`` parameters (and kin)
of its URL and the URL's password; every message, excerpt and repr the HTTP edge builds is
scrubbed of them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ("EXCERPT_CHARS", "excerpt", "redact_url", "scrub", "secrets", "where")

#: How much of an error body is shown.
EXCERPT_CHARS = 300

_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"}
)
_SECRET_PARAMS = frozenset({"key", "api_key", "apikey", "api-key", "access_token", "token"})
_REDACTED = "[REDACTED]"


def secrets(request: Any) -> list[str]:
    found: list[str] = []
    for name, value in request.headers.items():
        if name.lower() in _SECRET_HEADERS and value:
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                found.append(token)
    for name, value in request.url.params.multi_items():
        if name.lower() in _SECRET_PARAMS and value:
            found.append(value)
    if request.url.password:
        found.append(request.url.password)
    return sorted(set(found), key=len, reverse=True)  # the longest first: a token inside its header


def redact_url(url: Any) -> str:
    """The URL with its password and secret query parameters replaced by ``[REDACTED]``."""
    parts = urlsplit(str(url))
    netloc, query = parts.netloc, parts.query
    if url.password:
        netloc = f"{parts.username or ''}:{_REDACTED}@{netloc.rpartition('@')[2]}"
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, _REDACTED if k.lower() in _SECRET_PARAMS else v) for k, v in pairs], safe="[]")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if len(secret) >= 4:  # shorter values would blank out ordinary words
            text = text.replace(secret, _REDACTED)
    return text


def where(request: Any) -> str:
    return f"{request.method} {redact_url(request.url)}"


def excerpt(body: bytes) -> str:
    text = body[: EXCERPT_CHARS * 4].decode("utf-8", "replace")
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 3] + "..."
