"""An answer that is not 2xx, as ``HTTPStatusError``: one builder for every path that meets one.

The HTTP edge meets it on the response it opened (``_response``); an SDK meets it first and
raises its own exception, which the composer translates (``_foreign``). Both build the error
here, from the status, the headers and the start of the body, so the same answer fails the same
way whichever read it: the provider's error type and message, the body's excerpt, the headers,
the wait the server asked for, every text scrubbed of the request's secrets when the request is
known, and the request named.
"""

from __future__ import annotations

import json as jsonlib
import re
import time
from collections.abc import Mapping
from datetime import UTC
from typing import Any

from . import _redact
from ._errors import HTTPStatusError
from .providers import Decoder, error_details

__all__ = ("error_details_of", "retry_after", "status_error")


def status_error(
    status: int,
    body: bytes,
    decoder: type[Decoder],
    *,
    headers: Mapping[str, str] | None = None,
    reason: str = "",
    request: Any = None,
    reported: tuple[str | None, str | None] | None = None,
) -> HTTPStatusError:
    """The error for an answer of ``status``: the provider's error type and message (``reported``,
    as an SDK already read them, else read from ``body`` as its JSON error), the start of
    ``body``, ``headers`` and the wait they ask for. ``request`` (an httpx or httpx2 request),
    when known, is named in the message, and its secrets are scrubbed from every text."""
    secrets = [] if request is None else _redact.secrets(request)
    kind, message = reported if reported is not None else error_details_of(body, decoder)
    kind = None if kind is None else _redact.scrub(kind, secrets)
    message = None if message is None else _redact.scrub(message, secrets)
    excerpt = _redact.excerpt(body, secrets)
    detail = ": ".join(part for part in (kind, message) if part) or excerpt or "(no body)"
    said = f" {reason}" if reason else ""
    where = "" if request is None else f" from {_redact.where(request)}"
    return HTTPStatusError(
        f"HTTP {status}{said}{where}: {detail}",
        status_code=status,
        body_excerpt=excerpt,
        error_type=kind,
        error_message=message,
        headers=headers,
        retry_after=None if headers is None else retry_after(headers),
    )


def error_details_of(body: bytes, decoder: type[Decoder]) -> tuple[str | None, str | None]:
    """The provider's error type and message from a JSON error body, where it has them."""
    try:
        data = jsonlib.loads(body)
    except ValueError:
        return None, None
    return error_details(data, decoder)


_SECONDS = re.compile(r"\s*[0-9]+(\.[0-9]+)?\s*")


def _seconds(text: str | None) -> float | None:
    return float(text) if text is not None and _SECONDS.fullmatch(text) else None


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait a refusal asks for, in seconds; None when it names none we can read.

    ``retry-after-ms`` (OpenAI's, in milliseconds) first, then ``Retry-After`` as seconds or as
    an HTTP-date (the time left until then from ``now``, at least 0).
    """
    millis = _seconds(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    text = headers.get("retry-after")
    seconds = _seconds(text)
    if seconds is not None or not text:
        return seconds
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": a time in UTC from a source that does not say its zone
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
