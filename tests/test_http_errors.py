"""What an HTTP or in-stream error tells a retry loop, and what it never shows: no network here."""

from __future__ import annotations

import calendar
import string

import httpx
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from streamkit import HTTPStatusError, ProviderError
from streamkit._redact import EXCERPT_CHARS, MIN_EDGE, MIN_RUN, scrub
from streamkit._response import ERROR_BODY_LIMIT, refusal
from streamkit._status import retry_after
from streamkit.providers import DECODERS

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


# -- no run of a secret survives a cut -------------------------------------------------------

SECRET_CHARS = string.ascii_letters + string.digits + "-_"
#: Where a body is cut: the excerpt (with and without its "..."), the byte window the excerpt
#: was once taken from, and the end of what is read of an error body.
CUTS = (EXCERPT_CHARS - 3, EXCERPT_CHARS, EXCERPT_CHARS * 4, ERROR_BODY_LIMIT)
JSON_HEAD = '{"error": {"type": "authentication_error", "message": "'


def runs_shown(secret: str, texts: list[str]) -> list[str]:
    runs = {secret[i : i + MIN_RUN] for i in range(len(secret) - MIN_RUN + 1)}
    return sorted(run for run in runs if any(run in text for text in texts))


@given(
    secret=st.text(SECRET_CHARS, min_size=MIN_RUN, max_size=64),
    cut=st.sampled_from(CUTS),
    shift=st.integers(-70, 2),
    as_json=st.booleans(),
    status=st.sampled_from([401, 200]),
    auth=st.sampled_from(["x-api-key", "authorization"]),
)
@example(secret="anthropi", cut=EXCERPT_CHARS - 3, shift=0, as_json=False, status=200, auth="x-api-key")
def test_no_run_of_a_secret_survives_any_cut(
    secret: str, cut: int, shift: int, as_json: bool, status: int, auth: str
) -> None:
    # A run the error shows for any key is the message's own words ("anthropic"), not the key's.
    own = runs_shown(secret, shown_for("~" * len(secret), cut, shift, as_json, status, auth))
    assert [
        run for run in runs_shown(secret, shown_for(secret, cut, shift, as_json, status, auth)) if run not in own
    ] == []


def shown_for(secret: str, cut: int, shift: int, as_json: bool, status: int, auth: str) -> list[str]:
    """What the error for a body holding ``secret``, sent with it as the key, shows."""
    head = JSON_HEAD if as_json else ""
    filler = "." * max(0, cut + shift - len(head))  # the secret starts at cut + shift
    text = f"{head}{filler}{secret} was sent{'.' * 80}" + ('"}}' if as_json else "")
    headers = {auth: f"Bearer {secret}" if auth == "authorization" else secret}
    request = httpx.Request("POST", "https://api.example/v1/messages", headers=headers)
    content_type = "application/json" if status != 200 else "text/html"
    response = httpx.Response(status, request=request, headers={"content-type": content_type})
    error = refusal(response, DECODERS["anthropic"], text.encode())
    shown = [str(error), repr(error)]
    if isinstance(error, HTTPStatusError):
        shown += [error.body_excerpt, error.error_message or "", error.error_type or ""]
    return shown


# -- nor does a key's start or end, echoed with the rest masked --------------------------------

ECHO = "Incorrect API key provided: {shown}. You can find your API key at https://platform.example/keys."


@given(
    secret=st.text(SECRET_CHARS, min_size=MIN_RUN + 4, max_size=64),
    start=st.integers(0, MIN_RUN - 1),
    end=st.integers(0, MIN_RUN - 1),
    mask=st.sampled_from(["*" * 20, "\u2026", "...", "****...****"]),
)
def test_a_masked_echo_shows_neither_end_of_a_secret(secret: str, start: int, end: int, mask: str) -> None:
    """OpenAI's "Incorrect API key provided: sk-proj-abc*****wxyz": each end shown as a word of its own."""
    plain = ECHO.format(shown=mask).split()
    assume(not any(len(word) >= MIN_EDGE and (secret.startswith(word) or secret.endswith(word)) for word in plain))
    head, tail = secret[:start], secret[len(secret) - end :]
    scrubbed = scrub(ECHO.format(shown=f"{head}{mask}{tail}"), [secret])
    shown_head = "[REDACTED]" if start >= MIN_EDGE else head
    shown_tail = "[REDACTED]" if end >= MIN_EDGE else tail
    assert scrubbed == ECHO.format(shown=f"{shown_head}{mask}{shown_tail}")


def test_an_ordinary_word_inside_a_longer_one_is_not_a_secrets_end() -> None:
    """Only a whole word that starts or ends the key goes: the key's start inside another word stays."""
    key = "test-9f3Kq2Lx7Vm4Zt8Wb1Rc"
    assert scrub("the tests passed; test failed", [key]) == "the tests passed; [REDACTED] failed"
    assert scrub("Incorrect API key provided: test-9f3K\u2026", [key]) == "Incorrect API key provided: [REDACTED]\u2026"
