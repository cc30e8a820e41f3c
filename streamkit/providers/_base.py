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
from dataclasses import replace
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
        """``feed`` for data orjson refused: read exactly (an integer beyond 64 bits), or else
        with each arguments value that no reader takes set aside as its raw text (``value_paths``).
        What is set aside must come back whole as a call's arguments; if not, the data is not JSON."""
        try:
            payload = self._unloaded(data, exc, event)
        except ProviderProtocolError as error:
            return self._apart(data, error, event)
        return self._read_exactly(self.feed_payload(payload, event), payload, data)

    def _apart(self, data: str, error: ProviderProtocolError, event: str | None) -> list[Event]:
        """``feed`` for data no reader takes: its events with each arguments value no reader takes
        set aside as its call's raw text (``value_paths``), else ``error``."""
        aside = self._set_aside(data) if self.value_paths else None
        if aside is None:
            raise error
        text, raws = aside
        try:
            payload = self.load(text, event)
        except ProviderProtocolError:
            raise error from None
        events = _put_back(self._read_exactly(self.feed_payload(payload, event), payload, text), raws)
        if events is None:
            raise error from None
        return events

    def _read_exactly(self, events: list[Event], payload: Any, data: str) -> list[Event]:
        """``events``, or ``_exact``'s when an arguments value in them may be read inexactly
        (what ``feed`` does after its common case)."""
        if any(_holds_value(item) and may_be_inexact(_value(item)) for item in events):
            return self._exact(events, payload, data)
        return events

    def _set_aside(self, data: str) -> tuple[str, list[str]] | None:
        """``data`` with each value at ``value_paths`` that ``load`` does not read, there, in its
        place, replaced by an object naming it, and their raw texts; ``None`` when there is none,
        or the structure of ``data`` cannot be followed to find them."""
        from .._json import value_spans  # the exact reader's, loaded by the first event orjson refuses

        spans = value_spans(data, self.value_paths)
        if not spans:
            return None
        pieces: list[str] = []
        raws: list[str] = []
        done = 0
        for start, end, depth in spans:
            raw = data[start:end]
            if depth <= _READER_DEPTH and self._readable(raw):
                continue
            pieces += (data[done:start], orjson.dumps({_ASIDE: len(raws)}).decode())
            raws.append(raw)
            done = end
        if not raws:
            return None
        pieces.append(data[done:])
        return "".join(pieces), raws

    def _readable(self, text: str) -> bool:
        """Whether ``load`` reads ``text``, a value's JSON, as it reads an event's."""
        try:
            self.load(text, None)
        except ProviderProtocolError:
            return False
        return True

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
        """What ``data``, which orjson refused, holds: read exactly when orjson refused an integer
        beyond 64 bits, else the protocol error."""
        from .._json import big_integer_at  # the exact reader's, loaded by the first event orjson refuses

        if big_integer_at(data, exc.msg, exc.pos):
            return self._load_exact(data, event)
        raise self._not_json(data, exc.msg, event) from None

    def _exact(self, events: list[Event], payload: Any, data: str) -> list[Event]:
        """``events`` decoded from ``payload`` (orjson's read of ``data``), with each arguments
        value read again exactly, for ``feed`` when orjson may have read an integer in one as a
        float. Only the whole values a call's arguments arrive as are checked (Gemini's
        ``args``, Ollama's ``arguments``, an object in OpenAI Chat's), so frames of text
        fragments cost nothing more."""
        from .._json import twin  # the exact reader's, loaded by the first value orjson may misread

        exact = self._load_exact(data, None)
        return [
            _with_value(item, twin(payload, exact, _value(item))) if _holds_value(item) else item for item in events
        ]

    def _load_exact(self, data: str, event: str | None) -> Any:
        from .._json import has_lone_surrogate, loads_exact  # loaded by the first event read exactly

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


#: The key of the object put in place of an arguments value set aside; the number beside it
#: is the value's place in the raw texts set aside.
_ASIDE = "\x00streamkit: set aside"
#: The deepest nesting orjson reads (its own limit, fixed): a value read alone may pass it
#: under the levels of the event around it.
_READER_DEPTH = 1024


def _put_back(events: list[Event], raws: list[str]) -> list[Event] | None:
    """``events`` with each value set aside back as its raw text, the call's arguments; ``None``
    unless each came back once, whole, as a call's arguments (a value the decoder reads
    otherwise, or copies, or drops, cannot be handed on as text)."""
    back: set[int] = set()
    out: list[Event] = []
    for item in events:
        if _holds_value(item):
            value = _value(item)
            if type(value) is dict and len(value) == 1 and type(place := value.get(_ASIDE)) is int:
                if place in back or not 0 <= place < len(raws):
                    return None
                back.add(place)
                item = _with_value(item, raws[place])
        out.append(item)
    return out if len(back) == len(raws) else None


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
