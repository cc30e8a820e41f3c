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
from typing import Any, ClassVar, TypeVar

import orjson

from .._errors import ProviderProtocolError
from .._events import Event, Frame, ResponseEnded

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

    def __init__(self, *, early_close: bool = False) -> None:
        self.early_close = early_close

    def feed(self, frame: Frame) -> list[Event]:
        data = frame.data
        if not data or data.isspace():
            return []  # data-only keep-alives (an empty ``data:`` line) carry nothing
        return self.feed_payload(self.load(data, frame.event), frame.event)

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
            excerpt = data[:80] + ("..." if len(data) > 80 else "")
            raise self.error(f"event data is not JSON ({exc.msg}): {excerpt!r}", event=event) from None

    def error(self, message: str, *, event: str | None = None, index: int | None = None) -> ProviderProtocolError:
        return ProviderProtocolError(message, provider=self.slug, event=event, index=index)


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
