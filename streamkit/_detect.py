"""Which provider wrote a recorded stream: ``streamkit replay --provider auto``.

``detect_provider`` reads the first events of the stream and names the provider whose event
shapes they have, or returns ``None`` when they match none (or several), so that the caller can
ask for ``--provider`` rather than guess. It decides on the first event that is telling; events
that every provider may send (an error, a keep-alive, ``[DONE]``) are passed over. Pure: bytes
in, a slug out.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ._awsstream import PRELUDE_BYTES, EventStreamDecoder
from ._errors import StreamError
from ._events import Frame
from ._sse import SSEDecoder

__all__ = ("HEAD_BYTES", "detect_provider")

#: How much of the stream is read to decide.
HEAD_BYTES = 64 * 1024
#: How many events with a JSON object are looked at before giving up.
_MAX_EVENTS = 8

_ANTHROPIC = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)
_COHERE = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
    }
)
# Mistral's own model families; the chunk shape is OpenAI's, so the model name tells them apart.
_MISTRAL_MODEL = re.compile(r"(?:mistral|mixtral|magistral|codestral|devstral|ministral|pixtral|voxtral)", re.I)


def detect_provider(data: bytes) -> str | None:
    """The slug of the provider whose events begin ``data``, or ``None`` when they do not tell."""
    if _is_eventstream(data):
        return "bedrock"
    if _is_ollama(data):
        return "ollama"
    decoder = SSEDecoder()
    try:
        frames = decoder.feed(data[:HEAD_BYTES])
    except StreamError:
        return None
    looked = 0
    for frame in frames:
        payload = _payload(frame)
        if payload is None:
            continue
        slug = _classify(frame.event, payload)
        if slug is not None:
            return slug
        looked += 1
        if looked == _MAX_EVENTS:
            break
    return None


def _is_eventstream(data: bytes) -> bool:
    """An AWS event-stream message starts with a prelude that the event-stream framer accepts."""
    if len(data) < PRELUDE_BYTES:
        return False
    try:
        EventStreamDecoder().feed_messages(data[:PRELUDE_BYTES])  # checks the prelude, then waits
    except StreamError:
        return False
    return True


def _is_ollama(data: bytes) -> bool:
    """Ollama's ``/api/chat`` writes one JSON object per line, each with its model and ``done``."""
    first = data[:HEAD_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    if not first.startswith(b"{"):
        return False
    try:
        line = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(line, dict) and "model" in line and "done" in line and "choices" not in line


def _payload(frame: Frame) -> dict[str, Any] | None:
    try:
        payload = orjson.loads(frame.data)
    except orjson.JSONDecodeError:
        return None  # [DONE], an empty keep-alive
    return payload if isinstance(payload, dict) else None


def _classify(event: str | None, payload: dict[str, Any]) -> str | None:
    kind = payload.get("type")
    kind = kind if isinstance(kind, str) else event
    if kind in _ANTHROPIC:
        return "anthropic"
    if kind in _COHERE:
        return "cohere"
    if kind is not None and kind.startswith("response."):
        return "openai_responses"
    if "candidates" in payload or "promptFeedback" in payload:
        return "gemini"
    if "choices" in payload:
        model = payload.get("model")
        return "mistral" if isinstance(model, str) and _MISTRAL_MODEL.search(model) else "openai_chat"
    return None  # an error or an unknown event: look further
