"""What every provider decoder shares: loading a frame's JSON and checked field access.

A decoder is pure: ``feed(frame)`` (or ``feed_payload`` for an already-decoded payload, such
as an SDK's event object turned into a dict) returns the events the frame means, and
``flush()`` the events that the end of input means. Unknown event types are ignored, since
providers add them often; a known event with the wrong shape always raises
``ProviderProtocolError`` naming the provider, the event and the JSON path.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

import orjson

from .._errors import LimitExceededError, ProviderProtocolError
from .._events import ArgumentsValue, CallReceived, Event, Frame, ResponseEnded
from .._json import big_integer_at, has_lone_surrogate, loads_exact, may_be_inexact, twin
from .._limits import DEFAULT_LIMITS, Limits

__all__ = ("Decoder", "TypedEventDecoder", "ends", "field", "optional")

T = TypeVar("T")


class Decoder(ABC):
    """Base of the provider decoders."""

    #: The provider's slug, the same in modules, fixtures and the command line.
    slug: ClassVar[str]
    #: How the provider frames its stream: "sse", "ndjson" or "eventstream".
    framing: ClassVar[str] = "sse"
    #: Whether the provider lacks per-call end markers, so that ``early_close`` means something.
    supports_early_close: ClassVar[bool] = False

    # The provider's facts beyond its events, declared here once and read by the HTTP edge,
    # the command line and detection.
    #: The Content-Types its stream comes in: a 2xx answer in another is refused (for SSE as
    #: httpx-sse does, which refuses a response whose Content-Type lacks this one).
    content_types: ClassVar[tuple[str, ...]] = ("text/event-stream",)
    #: The ``data`` of the SSE event that ends the stream, for a provider that sends one.
    done: ClassVar[str | None] = None
    #: The request header that carries the API key, and its value around the key; ``None``
    #: for a provider with no key (Ollama) or one whose requests are signed (Bedrock).
    auth_header: ClassVar[str | None] = None
    auth_value: ClassVar[str] = "{}"
    #: Headers every request to the provider carries beside the key (an API version).
    request_headers: ClassVar[Mapping[str, str]] = MappingProxyType({})
    #: An error body's shape: the key that holds the error object (``None``: the body is the
    #: object; a string there is the message), then the object's fields naming its type and
    #: giving its message, in the order they are looked for.
    error_key: ClassVar[str | None] = "error"
    error_type_fields: ClassVar[tuple[str, ...]] = ("type",)
    error_message_fields: ClassVar[tuple[str, ...]] = ("message",)
    #: For detection: the event types (the payload's ``type``, else the SSE event name) only
    #: this provider sends, or the prefix they all have.
    event_types: ClassVar[frozenset[str]] = frozenset()
    event_prefix: ClassVar[str | None] = None
    #: For detection: top-level keys only this provider's payloads have.
    payload_keys: ClassVar[tuple[str, ...]] = ()
    #: For detection, a provider whose payloads have another's shape: its models' names.
    models: ClassVar[str | None] = None
    #: The limits of the response, for a decoder that holds state of its own that they bound
    #: (Gemini's streamed arguments, its candidates); the ``Assembler`` sets its own.
    limits: Limits = DEFAULT_LIMITS

    def __init__(self, *, early_close: bool = False) -> None:
        self.early_close = early_close

    def feed(self, frame: Frame) -> list[Event]:
        data = frame.data
        if not data or data.isspace():
            return []  # data-only keep-alives (an empty ``data:`` line) carry nothing
        payload = self.load(data, frame.event)
        return self.exact(self.feed_payload(payload, frame.event), payload, data)

    def feed_frames(self, frames: Iterable[Frame]) -> Iterator[Event]:
        """The events of many frames, in order, decoded lazily (one frame at a time).

        The same events as ``feed`` on each frame, without a call and a list per frame. It
        stops after the frame that gives ``ResponseEnded``: the frames after the provider's
        end-of-stream marker are never decoded, as the composer would never feed them.
        """
        feed = self.feed
        for frame in frames:
            events = feed(frame)
            yield from events
            if ends(events):
                return

    @abstractmethod
    def feed_payload(self, payload: Any, event: str | None = None) -> list[Event]:
        """Decode one already-parsed payload; ``event`` is the frame's event name, if any."""

    def flush(self) -> list[Event]:
        return []

    def load(self, data: str, event: str | None) -> Any:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            if big_integer_at(data, exc.msg, exc.pos):
                return self._load_exact(data, event)
            raise self._not_json(data, exc.msg, event) from None

    def exact(self, events: list[Event], payload: Any, data: str) -> list[Event]:
        """``events`` decoded from ``payload`` (orjson's read of ``data``), with each arguments
        value read again exactly when orjson may have read an integer in it as a float.

        Only the whole values a call's arguments arrive as are checked (Gemini's ``args``,
        Ollama's ``arguments``, an object in OpenAI Chat's), so frames of text fragments cost
        nothing more.
        """
        for item in events:
            if _holds_value(item) and may_be_inexact(_value(item)):
                break
        else:
            return events
        exact = self._load_exact(data, None)
        return [
            _with_value(item, twin(payload, exact, _value(item))) if _holds_value(item) else item for item in events
        ]

    def _load_exact(self, data: str, event: str | None) -> Any:
        try:
            value = loads_exact(data)
        except (ValueError, RecursionError) as exc:  # json.JSONDecodeError is a ValueError
            raise self._not_json(data, str(exc), event) from None
        if has_lone_surrogate(value):
            raise self._not_json(data, "a lone surrogate escape", event)
        return value

    def _not_json(self, data: str, reason: str, event: str | None) -> ProviderProtocolError:
        excerpt = data[:80] + ("..." if len(data) > 80 else "")
        return self.error(f"event data is not JSON ({reason}): {excerpt!r}", event=event)

    def error(self, message: str, *, event: str | None = None, index: int | None = None) -> ProviderProtocolError:
        return ProviderProtocolError(message, provider=self.slug, event=event, index=index)

    def past_limit(self, limit: str, message: str, *, index: int | None = None) -> LimitExceededError:
        return LimitExceededError(
            message, limit=limit, value=getattr(self.limits, limit), provider=self.slug, index=index
        )


class TypedEventDecoder(Decoder):
    """Base of the decoders whose every payload names its event in ``type`` (Anthropic, Cohere…).

    ``_HANDLERS`` maps each known type to its handler, called as ``handler(self, payload, type)``;
    a type missing from the table is ignored, and a payload without a string ``type`` raises.
    """

    _HANDLERS: ClassVar[Mapping[str, Callable[..., list[Event]]]] = {}

    def feed_payload(self, payload: Any, event: str | None = None) -> list[Event]:
        kind = payload.get("type") if isinstance(payload, dict) else None
        if not isinstance(kind, str):
            raise self.error("event data has no 'type'", event=event)
        handler = self._HANDLERS.get(kind)
        return handler(self, payload, kind) if handler is not None else []


def _holds_value(item: Event) -> bool:
    kind = type(item)
    return kind is ArgumentsValue or kind is CallReceived


def _value(item: Event) -> Any:
    if isinstance(item, ArgumentsValue):
        return item.value
    assert isinstance(item, CallReceived)
    return item.arguments


def _with_value(item: Event, value: Any) -> Event:
    if isinstance(item, ArgumentsValue):
        return replace(item, value=value)
    assert isinstance(item, CallReceived)
    return replace(item, arguments=value)


def ends(events: list[Event]) -> bool:
    """Whether a frame's events hold the end-of-stream marker."""
    return any(type(event) is ResponseEnded for event in events)


def field(obj: Any, key: str, kind: type[T], path: str, decoder: Decoder, event: str | None) -> T:
    """``obj[key]``, which must be present and of ``kind``; else a protocol error naming ``path``."""
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        got = "missing" if value is None else type(value).__name__
        raise decoder.error(f"{path}.{key} must be {kind.__name__}, got {got}", event=event)
    return value


def optional(obj: Any, key: str, kind: type[T], path: str, decoder: Decoder, event: str | None) -> T | None:
    """``obj[key]`` when present and not null, which must then be of ``kind``."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise decoder.error(f"{path}.{key} must be {kind.__name__}, got {type(value).__name__}", event=event)
    return value
