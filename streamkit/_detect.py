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
from .providers import DECODERS, Decoder

__all__ = ("HEAD_BYTES", "detect_provider")

#: How much of the stream is read to decide.
HEAD_BYTES = 64 * 1024
#: How many events with a JSON object are looked at before giving up.
_MAX_EVENTS = 8
#: The decoders, those that tell themselves apart from another by the model's name first.
_CANDIDATES = sorted(DECODERS.values(), key=lambda cls: cls.models is None)
#: The data of the events that end a stream: every provider that sends one may.
_DONE = frozenset(cls.done for cls in DECODERS.values() if cls.done is not None)
#: The provider of each framing but SSE: one provider frames its stream so, which its bytes tell.
_FRAMED = {cls.framing: cls.slug for cls in DECODERS.values() if cls.framing != "sse"}


def detect_provider(data: bytes) -> str | None:
    """The slug of the provider whose events begin ``data``, or ``None`` when they do not tell."""
    if _is_eventstream(data):
        return _FRAMED["eventstream"]
    if _is_ndjson(data):
        return _FRAMED["ndjson"]
    decoder = SSEDecoder()
    try:
        frames = decoder.feed(data[:HEAD_BYTES])
    except StreamError:
        return None
    looked = 0
    for frame in frames:
        payload = None if frame.data in _DONE else _payload(frame)
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


def _is_ndjson(data: bytes) -> bool:
    """The NDJSON provider (Ollama's ``/api/chat``) writes one JSON object per line, each with its
    model and ``done``."""
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
    """The provider whose declared event types, or else payload keys, the payload has."""
    kind = payload.get("type")
    kind = kind if isinstance(kind, str) else event
    if kind is not None:
        for cls in DECODERS.values():
            if kind in cls.event_types or (cls.event_prefix is not None and kind.startswith(cls.event_prefix)):
                return cls.slug
    for cls in _CANDIDATES:
        if any(key in payload for key in cls.payload_keys) and _model_matches(cls, payload):
            return cls.slug
    return None  # an error or an unknown event: look further


def _model_matches(cls: type[Decoder], payload: dict[str, Any]) -> bool:
    if cls.models is None:
        return True
    model = payload.get("model")
    return isinstance(model, str) and re.search(cls.models, model, re.IGNORECASE) is not None
