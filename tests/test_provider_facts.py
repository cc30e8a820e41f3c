"""Each provider's facts beyond its events are declared once, on its decoder, and read from there."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from streamkit._detect import _classify
from streamkit._live import AUTH
from streamkit._redact import secrets
from streamkit._response import _accepted
from streamkit.providers import DECODERS

PACKAGE = Path(__file__).resolve().parent.parent / "streamkit"
#: The modules that read the facts, and facts that would show one restated there.
READERS: tuple[str, ...] = ("_detect.py", "_response.py", "_redact.py", "_live.py", "_cli.py", "_sources.py")
READERS += ("_transport.py", "integrations/_chat.py")
RESTATED: tuple[str, ...] = (
    "text/event-stream",
    "x-ndjson",
    "x-api-key",
    "x-goog-api-key",
    '"[DONE]"',
    "message_start",
    "tool-call-start",
)


@pytest.mark.parametrize("module", READERS)
def test_no_reader_restates_a_providers_facts(module: str) -> None:
    text = (PACKAGE / module).read_text()
    assert [fact for fact in RESTATED if fact in text] == []


@pytest.mark.parametrize("slug", sorted(DECODERS))
def test_the_response_check_takes_each_declared_content_type(slug: str) -> None:
    decoder = DECODERS[slug]
    for kind in decoder.content_types:
        assert _accepted(httpx.Response(200, headers={"content-type": f"{kind}; charset=utf-8"}), decoder)
    assert not _accepted(httpx.Response(200, headers={"content-type": "text/html"}), decoder)


@pytest.mark.parametrize("slug", sorted(slug for slug, cls in DECODERS.items() if cls.auth_header))
def test_the_declared_auth_header_is_sent_and_redacted(slug: str) -> None:
    decoder = DECODERS[slug]
    assert decoder.auth_header is not None
    assert (AUTH[slug].header, AUTH[slug].template) == (decoder.auth_header, decoder.auth_value)
    request = httpx.Request("POST", "https://api.example/v1", headers={decoder.auth_header: "sk-0123456789"})
    assert "sk-0123456789" in secrets(request)


@pytest.mark.parametrize("slug", sorted(slug for slug, cls in DECODERS.items() if cls.event_types))
def test_detection_reads_the_declared_event_types(slug: str) -> None:
    for kind in DECODERS[slug].event_types:
        assert (_classify(kind, {}), _classify(None, {"type": kind})) == (slug, slug)
