"""What every provider decoder shares: loading a frame's JSON and checked field access.

A decoder is pure: ``feed(frame)`` (or ``feed_payload`` for an already-decoded payload, such
as an SDK's event object turned into a dict) returns the events the frame means, and
``flush()`` the events that the end of input means. Unknown event types are ignored, since
providers add them often; a known event with the wrong shape always raises
``ProviderProtocolError`` naming the provider, the event and the JSON path.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

import orjson

from .._errors import LimitExceededError, ProviderProtocolError
from .._events import (
    ArgumentsValue,
    CallReceived,
    Event,
    Frame,
    UsageReceived,
)
from .._inexact import may_be_inexact
from .._limits import DEFAULT_LIMITS, EVENT_BYTES_PER_TOKEN, Limits, event_tokens
from .._types import Finish, TokenUsage
from ._errorshape import ErrorShape

__all__ = ("Decoder", "ErrorShape", "TypedEventDecoder", "count", "field", "optional", "total", "usage_received")

T = TypeVar("T")


#: An event up to this many times its token allowance long is still read by orjson, which sets
#: aside 12 times its input first: at most 48/64 of ``max_event_bytes``. A longer one is read by
#: the exact reader, which sets aside nothing.
_ORJSON_ALLOWANCES = 4
_NO_TOKENS = TokenUsage()


class Decoder(ABC):
    """Base of the provider decoders."""

    #: The provider's slug, the same in modules, fixtures and the command line.
    slug: ClassVar[str]
    #: How the provider frames its stream: "sse", "ndjson" or "eventstream".
    framing: ClassVar[str] = "sse"
    #: Whether the provider lacks per-call end markers, so that ``early_close`` means something.
    supports_early_close: ClassVar[bool] = False
    #: The order policy the accumulator applies to this provider's calls: ``"sequential"`` when
    #: a choice's calls stream one after another, so that a call a later one followed is complete
    #: (``streamkit._accumulator``, rule 9); ``None`` when each call has its own end marker.
    call_order: ClassVar[str | None] = None
    #: Where a call's arguments may come as a JSON value rather than text, as JSON paths in an
    #: event (``None`` for any array index). A value there that no JSON reader takes (nested
    #: past orjson's 1,024 levels, ``1e400``, a lone surrogate, an integer longer than Python
    #: reads) is that call's raw text, for the normalizer to judge as it judges text: the
    #: call is invalid, and the event's other calls are read.
    value_paths: ClassVar[tuple[tuple[str | None, ...], ...]] = ()

    # The provider's facts that its stream's reading needs, declared here once and read by the
    # HTTP edge, the command line and detection (the others are its folder's ``FACTS``).
    #: The Content-Types its stream comes in: a 2xx answer in another is refused (for SSE as
    #: httpx-sse does, which refuses a response whose Content-Type lacks this one).
    content_types: ClassVar[tuple[str, ...]] = ("text/event-stream",)
    #: The ``data`` of the SSE event that ends the stream, for a provider that sends one.
    done: ClassVar[str | None] = None
    #: Its stop reasons (as the decoder gives them) and the ``finish`` each means; a reason not
    #: here is ``other``.
    finish_reasons: ClassVar[Mapping[str, Finish]] = MappingProxyType({})
    #: How its error objects read (where a body holds one, its type and message fields): the
    #: one reader of the decoder's error events, the response check, the SDK-exception mapping
    #: and the encoders.
    errors: ClassVar[ErrorShape] = ErrorShape()
    #: For detection: the event types (the payload's ``type``, else the SSE event name) only
    #: this provider sends, or the prefix they all have.
    event_types: ClassVar[frozenset[str]] = frozenset()
    event_prefix: ClassVar[str | None] = None
    #: For detection: top-level keys only this provider's payloads have.
    payload_keys: ClassVar[tuple[str, ...]] = ()
    #: For detection, a provider whose payloads have another's shape: its models' names.
    models: ClassVar[str | None] = None
    _limits = DEFAULT_LIMITS
    _most_tokens = event_tokens(DEFAULT_LIMITS.max_event_bytes)

    #: Whether a payload that the general path reads as exactly one ``ArgumentsDelta`` changes
    #: none of the decoder's state, and the delta's text is the payload's string at one place:
    #: then the stream's reader may learn the payload's byte template and read the call's next
    #: fragments from their string token alone (``streamkit._hot``).
    plain_fragments: ClassVar[bool] = False
    #: The same for a payload read as exactly one ``TextReceived``: a piece of the answer's
    #: text, which a token-streaming server sends as often as a call's fragments.
    plain_text: ClassVar[bool] = False

    def __init__(self, *, early_close: bool = False) -> None:
        self.early_close = early_close

    @property
    def limits(self) -> Limits:
        """The limits of the response: ``max_event_bytes`` bounds what reading an event's JSON
        builds; a decoder that holds state of its own reads those they bound (Gemini's streamed
        arguments, its candidates). The ``Assembler`` sets its own."""
        return self._limits

    @limits.setter
    def limits(self, limits: Limits) -> None:
        self._limits = limits
        self._most_tokens = event_tokens(limits.max_event_bytes)

    @classmethod
    def tokens(cls, usage: Mapping[str, Any]) -> TokenUsage:
        """The shared token counts in the provider's usage object: input and output tokens
        counted whole (cached and reasoning ones included), and those parts of them, where it
        gives them. A decoder that knows no usage shape reads none."""
        return _NO_TOKENS

    def feed(self, frame: Frame) -> list[Event]:
        data = frame.data
        if not data or data.isspace():
            return []  # data-only keep-alives (an empty ``data:`` line) carry nothing
        try:  # ``load``, its common case written out: this runs for every event the general path reads
            payload = self._load_counted(data, frame.event) if len(data) > self._most_tokens else orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            return self._refused(data, exc, frame.event)
        except ProviderProtocolError as error:  # a long event the exact reader refused
            return self._apart(data, error, frame.event)
        events = self.feed_payload(payload, frame.event)
        for item in events:
            kind = type(item)  # ``_holds_value``, written out: this runs for every event read
            if (kind is ArgumentsValue or kind is CallReceived) and may_be_inexact(_value(item)):
                return self._exact(events, payload, data)
        return events

    def _refused(self, data: str, exc: orjson.JSONDecodeError, event: str | None) -> list[Event]:
        from ._exact import refused  # the exact reading, loaded by the first event orjson refuses

        return refused(self, data, exc, event)

    def _apart(self, data: str, error: ProviderProtocolError, event: str | None) -> list[Event]:
        from ._exact import apart  # loaded by the first long event the exact reader refuses

        return apart(self, data, error, event)

    @abstractmethod
    def feed_payload(self, payload: Any, event: str | None = None) -> list[Event]:
        """Decode one already-parsed payload; ``event`` is the frame's event name, if any."""

    def flush(self) -> list[Event]:
        return []

    def load(self, data: str, event: str | None) -> Any:
        try:
            return self._load_counted(data, event) if len(data) > self._most_tokens else orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            return self._unloaded(data, exc, event)

    def _load_counted(self, data: str, event: str | None) -> Any:
        """The JSON of an event longer than its token allowance (``event_tokens``), its tokens
        counted before any is read: one past the allowance is a ``LimitExceededError`` naming
        ``max_event_bytes``. A long one is read by the exact reader (``_ORJSON_ALLOWANCES``); what
        orjson refuses is the caller's to handle, as for a short one."""
        from .._json import holds_more_tokens  # the exact reader's, loaded by the first long event

        most = self._most_tokens
        if holds_more_tokens(data, most):
            raise self.past_limit(
                "max_event_bytes",
                f"an event of {len(data)} characters holds more than {most} JSON tokens (strings, brackets,"
                f" commas, colons): one per {EVENT_BYTES_PER_TOKEN} bytes of the limit",
            )
        if len(data) > _ORJSON_ALLOWANCES * most:
            return self._load_exact(data, event)
        return orjson.loads(data)

    def _unloaded(self, data: str, exc: orjson.JSONDecodeError, event: str | None) -> Any:
        from ._exact import unloaded  # the exact reading, loaded by the first event orjson refuses

        return unloaded(self, data, exc, event)

    def _exact(self, events: list[Event], payload: Any, data: str) -> list[Event]:
        from ._exact import exact  # loaded by the first value orjson may have read inexactly

        return exact(self, events, payload, data)

    def _load_exact(self, data: str, event: str | None) -> Any:
        from ._exact import load_exact  # loaded by the first event too long for orjson

        return load_exact(self, data, event)

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


def _value(item: Event) -> Any:
    if isinstance(item, ArgumentsValue):
        return item.value
    assert isinstance(item, CallReceived)
    return item.arguments


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


def usage_received(obj: Any, key: str, path: str, decoder: Decoder, event: str | None) -> list[Event]:
    """The ``UsageReceived`` for the usage object at ``obj[key]``, which must be an object; none
    when it is absent, null or empty."""
    usage = optional(obj, key, dict, path, decoder, event)
    return [UsageReceived(usage)] if usage else []


def count(usage: Mapping[str, Any], *path: str) -> int | None:
    """The token count at ``path`` in a usage object, when it is an integer there."""
    value: Any = usage
    for key in path:
        if type(value) is not dict and (value is None or not isinstance(value, Mapping)):  # skips the ABC's check
            return None
        value = value.get(key)
    return value if type(value) is int else None


def total(*values: int | None) -> int | None:
    """The sum of the counts given; ``None`` when none was."""
    result: int | None = None
    for value in values:
        if value is not None:
            result = value if result is None else result + value
    return result
