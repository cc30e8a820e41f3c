"""Credentials out of everything streamkit shows: messages, excerpts, reprs and log records.

The secrets of a request are the values of its auth headers, the ``key=`` parameters (and kin)
of its URL and the URL's password. Every message, excerpt, error field and repr the HTTP edge
builds is scrubbed of them, and of every run of ``MIN_RUN`` or more of a secret's characters:
a secret cut by an excerpt, or by the end of what was read, shows no more than a few. A word
(letters, digits, ``-`` and ``_``) of ``MIN_EDGE`` or more characters that starts or ends a
secret goes too: an upstream that echoes a key masked (``sk-proj-abc…``, ``****Wb1Rc``) shows
its start and end as words of their own. Text is scrubbed before it is cut. The same holds
for the errors raised while its body is decoded (a provider's in-stream error that echoes the
key). While streamkit sends a request, the HTTP library's own log records (``HTTP Request:
POST ...?key=...``) are scrubbed too.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator, Generator, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any, TypeVar

from ._errors import StreamkitError
from .providers import FACTS

__all__ = (
    "EXCERPT_CHARS",
    "MIN_EDGE",
    "MIN_RUN",
    "ascrubbed",
    "excerpt",
    "logging_scrubbed",
    "redact_url",
    "scrub",
    "scrub_error",
    "scrubbed",
    "secrets",
    "where",
)

#: How much of an error body is shown.
EXCERPT_CHARS = 300
#: The shortest run of a secret's characters that counts as showing it.
MIN_RUN = 8
#: The shortest start or end of a secret that counts as showing it, when it stands as a word.
MIN_EDGE = 4
#: Shorter secrets are not looked for: they would blank out ordinary words.
_MIN_SECRET = 4
#: A word, as a key's start or end is shown: the characters keys are made of.
_WORD = re.compile(r"[A-Za-z0-9_-]+")


@cache
def _secret_headers() -> frozenset[str]:
    """Every provider's auth header, and those that carry credentials whatever the provider
    (read on first use: it loads every provider's facts, no decoder)."""
    return frozenset(
        {"authorization", "proxy-authorization", "api-key", "cookie"}
        | {facts.auth_header.lower() for facts in FACTS.values() if facts.auth_header is not None}
    )


_SECRET_PARAMS = frozenset({"key", "api_key", "apikey", "api-key", "access_token", "token"})
_REDACTED = "[REDACTED]"

T = TypeVar("T")


def secrets(request: Any) -> list[str]:
    found: list[str] = []
    for name, value in request.headers.items():
        if name.lower() in _secret_headers() and value:
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
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit  # for a URL shown only

    parts = urlsplit(str(url))
    netloc, query = parts.netloc, parts.query
    if url.password:
        netloc = f"{parts.username or ''}:{_REDACTED}@{netloc.rpartition('@')[2]}"
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, _REDACTED if k.lower() in _SECRET_PARAMS else v) for k, v in pairs], safe="[]")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def scrub(text: str, secrets: Sequence[str]) -> str:
    """``text`` with each secret, each run of ``MIN_RUN`` characters of one, and each word of
    ``MIN_EDGE`` or more that starts or ends one, as ``[REDACTED]``.

    A header value with a scheme (``Bearer sk-...``) is replaced whole; its token is among the
    secrets on its own, and only the token's runs are looked for, so "Bearer s" stays readable.
    """
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        if len(secret) < _MIN_SECRET:
            continue
        width = len(secret) if " " in secret else min(len(secret), MIN_RUN)
        for piece in {secret[i : i + width] for i in range(len(secret) - width + 1)}:
            start = text.find(piece)
            while start != -1:
                spans.append((start, start + width))
                start = text.find(piece, start + 1)
        if " " not in secret:
            spans += (word.span() for word in _WORD.finditer(text) if _edge(word.group(), secret))
    if not spans:
        return text
    pieces: list[str] = []
    done = 0  # text[:done] is written
    run_start, run_end = -1, -1
    for start, end in sorted(spans):
        if start > run_end:  # a new run: write the one before it
            if run_end >= 0:
                pieces += (text[done:run_start], _REDACTED)
                done = run_end
            run_start = start
        run_end = max(run_end, end)
    pieces += (text[done:run_start], _REDACTED, text[run_end:])
    return "".join(pieces)


def _edge(word: str, secret: str) -> bool:
    """Whether ``word`` is a start or an end of ``secret`` long enough to count."""
    return len(word) >= MIN_EDGE and (secret.startswith(word) or secret.endswith(word))


def scrub_error(exc: BaseException, secrets: Sequence[str]) -> None:
    """Scrub an error's message and its text fields in place: a provider may echo the key."""
    if not secrets:
        return
    for name, value in list(vars(exc).items()):
        if isinstance(value, str):
            setattr(exc, name, scrub(value, secrets))
    exc.args = tuple(scrub(arg, secrets) if isinstance(arg, str) else arg for arg in exc.args)


def scrubbed(events: Iterator[T], secrets: Sequence[str]) -> Generator[T, None, None]:
    """``events``, with the errors raised while decoding them scrubbed of ``secrets``.

    A provider's in-stream error may echo the request's key (``invalid api key: sk-...``).
    """
    try:
        yield from events
    except StreamkitError as exc:
        scrub_error(exc, secrets)
        raise


async def ascrubbed(events: AsyncGenerator[T, None], secrets: Sequence[str]) -> AsyncGenerator[T, None]:
    """The async twin of ``scrubbed``; closing it closes ``events``."""
    try:
        async for item in events:
            yield item
    except StreamkitError as exc:
        scrub_error(exc, secrets)
        raise
    finally:
        await events.aclose()


def where(request: Any) -> str:
    return f"{request.method} {redact_url(request.url)}"


def excerpt(body: bytes, secrets: Sequence[str]) -> str:
    """The start of a body, for a message: its whitespace folded, scrubbed, and only then cut.

    Only as much is scrubbed as can reach the excerpt: a secret that starts in it, whole.
    """
    text = " ".join(body.decode("utf-8", "replace").split())
    text = scrub(text[: EXCERPT_CHARS + max(map(len, secrets), default=0)], secrets)
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 3] + "..."


# -- the HTTP library's log records ----------------------------------------------------------

#: The secrets of the request streamkit is sending in this context, or None when it sends none.
_SENDING: ContextVar[Sequence[str] | None] = ContextVar("streamkit_sending", default=None)


class _LogScrubber(logging.Filter):
    """Scrubs the records of an HTTP library's logger made while streamkit sends a request.

    httpx and httpx2 log each request's URL at INFO (``HTTP Request: POST https://...?key=...``).
    The filter sits on their logger for good, but acts only in the context of a request
    streamkit sends: the caller's own requests are logged as the library logs them.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = _SENDING.get()
        if secrets is None:
            return True
        if isinstance(record.args, tuple):
            record.args = tuple(redact_url(arg) if _is_url(arg) else arg for arg in record.args)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: logging reports it itself
            return True
        record.msg, record.args = scrub(message, secrets), ()
        return True


def _is_url(value: object) -> bool:
    return type(value).__name__ == "URL" and hasattr(value, "password") and hasattr(value, "params")


_SCRUBBER = _LogScrubber()


@contextmanager
def logging_scrubbed(logger: str, secrets: Sequence[str]) -> Iterator[None]:
    """While the block runs (sending a request), ``logger``'s records are scrubbed of ``secrets``."""
    logging.getLogger(logger).addFilter(_SCRUBBER)  # once: a logger keeps a filter only once
    token = _SENDING.set(tuple(secrets))
    try:
        yield
    finally:
        _SENDING.reset(token)
