"""What an HTTP or in-stream error tells a retry loop, and what it never shows: no network here."""

from __future__ import annotations

import calendar

import pytest

from streamkit import HTTPStatusError, ProviderError
from streamkit._transport import retry_after

RETRYABLE_STATUSES = {400: False, 401: False, 403: False, 404: False, 413: False, 422: False}
RETRYABLE_STATUSES |= {408: True, 409: True, 429: True, 500: True, 502: True, 503: True, 504: True, 529: True}


@pytest.mark.parametrize(("status", "retryable"), sorted(RETRYABLE_STATUSES.items()))
def test_which_statuses_are_worth_retrying(status: int, retryable: bool) -> None:
    assert HTTPStatusError("x", status_code=status).retryable is retryable


RETRYABLE_TYPES: dict[str | None, bool] = {
    # Anthropic
    "overloaded_error": True,
    "rate_limit_error": True,
    "api_error": True,
    "invalid_request_error": False,
    "authentication_error": False,
    # OpenAI Chat and Responses
    "server_error": True,
    "rate_limit_exceeded": True,
    "context_length_exceeded": False,
    # Gemini
    "RESOURCE_EXHAUSTED": True,
    "UNAVAILABLE": True,
    "INTERNAL": True,
    "INVALID_ARGUMENT": False,
    # Bedrock
    "throttlingException": True,
    "serviceUnavailableException": True,
    "internalServerException": True,
    "validationException": False,
    None: False,
}


@pytest.mark.parametrize(("kind", "retryable"), list(RETRYABLE_TYPES.items()))
def test_which_in_stream_errors_are_worth_retrying(kind: str | None, retryable: bool) -> None:
    assert ProviderError("m", provider="p", type=kind).retryable is retryable


OCT_21_2015 = calendar.timegm((2015, 10, 21, 7, 28, 0))


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": " 2.5 "}, 2.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),  # unreadable: the next one counts
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 12.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:27:00 GMT"}, 0.0),  # already past
        ({"retry-after": "-3"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "tomorrow"}, None),
        ({"retry-after": ""}, None),
        ({}, None),
    ],
)
def test_retry_after_in_seconds(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after(headers, now=OCT_21_2015 - 12) == seconds
