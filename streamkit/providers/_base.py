"""What every provider decoder shares: loading a frame's JSON and checked field access.

A decoder is pure: ``feed(frame)`` (or ``feed_payload`` for an already-decoded payload, such
as an SDK's event object turned into a dict) returns the events the frame means, and
``flush()`` the events that the end of input means. Unknown event types are ignored, since
providers add them often; a known event with the wrong shape always raises
``ProviderProtocolError`` naming the provider, the event and the JSON path.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import lru_cache
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

import orjson

from .._errors import LimitExceededError, ProviderProtocolError, StreamkitError
from .._events import (
    ArgumentsBatch,
    ArgumentsDelta,
    ArgumentsValue,
    CallReceived,
    Event,
    Frame,
    Payloads,
    ResponseEnded,
    TextReceived,
)
from .._json import (
    big_integer_at,
    has_lone_surrogate,
    holds_more_tokens,
    loads_exact,
    may_be_inexact,
    twin,
    value_spans,
)
from .._limits import DEFAULT_LIMITS, EVENT_BYTES_PER_TOKEN, Limits, event_tokens
from .._types import Finish, TokenUsage
from ._errorshape import ErrorShape

__all__ = ("Decoder", "ErrorShape", "Template", "TypedEventDecoder", "count", "ends", "field", "optional", "total")

T = TypeVar("T")


#: A fragment text no provider sends, put in a learned template's place to prove it.
_PROBE = "\x00streamkit probe\x00"
_PROBE_JSON = orjson.dumps(_PROBE)[1:-1]
_MAX_PATIENCE = 64
_NEVER = re.compile(b"(?!)").fullmatch
#: A JSON string token that is not empty, by its quotes and escapes; orjson then judges it.
_TOKEN = rb'("(?=[^"])[^"\\\n]*(?:\\[^\n][^"\\\n]*)*")'
#: The padding put in a candidate unread string's place, beside the probe: it must change nothing
#: the decoder reads. The payload read as the delta already showed one value (often empty); this
#: one is not empty, and is the value with a meaning (an error chunk's ``"object": "error"``).
_PAD = b"error"
_OTHER_PAD = b"streamkit0pad"  # when the payload's own padding is that value already
#: Proofs already made, by the template's shape (the decoder's kind and options, the event, the
#: prefix, the fragment's place, the suffix with its unread string left out): a response of a
#: shape seen before (Anthropic's delta events hold no response id) learns its template with no
#: probe.
_PROOFS: dict[tuple[Any, ...], bool] = {}
_MAX_PROOFS = 256
#: The most bytes a template keeps around its string: a real payload's envelope (ids, model,
#: indexes, padding) is a few hundred. A larger one is learned from no more than it is read
#: by the general path: its pattern, compiled and cached, would cost many times its size.
_MAX_ENVELOPE = 4096
#: An event up to this many times its token allowance long is still read by orjson, which sets
#: aside 12 times its input first: at most 48/64 of ``max_event_bytes``. A longer one is read by
#: the exact reader, which sets aside nothing.
_ORJSON_ALLOWANCES = 4
_NO_TOKENS = TokenUsage()


def _unread(suffix: bytes) -> tuple[int, int] | None:
    """The quotes of the last string value in a fragment's suffix, when it is one of ASCII
    letters and digits: a candidate for a string the decoder never reads."""
    close = suffix.rfind(b'"')
    opening = suffix.rfind(b'"', 1, close)
    if opening < 1 or suffix[opening - 1 : opening] != b":":
        return None
    value = suffix[opening + 1 : close]
    return (opening, close) if not value or value.isalnum() else None


@lru_cache(maxsize=256)
def _shapes(
    before: int, suffix: bytes, hole: int | None
) -> tuple[Callable[..., re.Match[bytes] | None], Callable[[bytes], list[bytes]]]:
    """A template's two patterns, which depend on its prefix only by length: a response's id,
    time and model sit in the prefix, so every new response has new prefix bytes, and a pattern
    holding them would be compiled anew for each (some 350 µs). The prefix is checked apart.
    ``suffix`` comes with its unread string left out (its opening quote at ``hole``), so the
    cache holds one entry per shape, escaped once."""
    if hole is None:
        rest = re.escape(suffix[1:])
    else:
        rest = re.escape(suffix[1 : hole + 1]) + rb"[A-Za-z0-9]*" + re.escape(suffix[hole + 1 :])
    whole = re.compile(_TOKEN + rest).fullmatch
    lines = re.compile(b"^[^\n]{%d}" % before + _TOKEN + rest + b"$", re.MULTILINE).findall
    return whole, lines


class Template:
    """The bytes around a call's plain fragment string, learned from one payload and proved.

    ``prefix`` runs up to and with the string's opening quote, ``suffix`` from its closing
    quote on. A suffix may hold one *unread* string (OpenAI's ``obfuscation`` padding, which
    changes on every chunk), of any ASCII letters and digits. A payload matches when it starts
    with the prefix and the rest is one JSON string token followed by the suffix; the token is
    then parsed strictly, alone.
    """

    __slots__ = ("choice", "event", "hits", "index", "is_text", "lines", "match", "most", "prefix", "rows", "start")

    def __init__(
        self,
        event: str | None,
        prefix: bytes,
        suffix: bytes,
        hole: tuple[int, int] | None,
        sample: ArgumentsDelta | TextReceived,
        most: int,
    ) -> None:
        self.event = event
        #: The longest payload read here: a longer one goes to the general path, which reads
        #: it within ``max_event_bytes``'s bound (``Decoder.feed``).
        self.most = most
        self.prefix = prefix
        self.start = len(prefix) - 1  # the token's opening quote
        shape = suffix if hole is None else suffix[: hole[0] + 1] + suffix[hole[1] :]
        # The same shape, one payload a line: a whole batch is read with one search, once its
        # every line is seen to start with the prefix (``rows``).
        self.match, self.lines = _shapes(self.start, shape, None if hole is None else hole[0])
        self.rows = b"\n" + prefix[:-1]
        #: Whether the string is a piece of text (``TextReceived``) rather than a call's fragment.
        self.is_text = type(sample) is TextReceived
        self.index = sample.index
        self.choice = sample.choice
        self.hits = 0

    def text(self, data: bytes) -> str | None:
        """The fragment text of a payload of this shape, its string token parsed strictly; None
        for any other payload, which the general path then reads (and reports, if bad)."""
        if len(data) > self.most or not data.startswith(self.prefix):
            return None
        found = self.match(data, self.start)
        if found is None:
            return None
        try:
            return orjson.loads(found.group(1))  # type: ignore[no-any-return]  # a token in quotes is a str
        except orjson.JSONDecodeError:
            return None

    def whole(self, batch: Payloads) -> list[str] | None:
        """The fragment texts of a batch whose every payload has this shape, or None.

        Payloads hold no line end, so joined one a line, each is matched by at most one
        search result; as many results as payloads means that every one matched. The tokens
        are then parsed strictly, as one JSON array.
        """
        names, data = batch.events, batch.data
        if (self.event is not None or names is not None) and (names is None or names.count(self.event) != len(names)):
            return None
        joined = b"\n".join(data)
        if len(joined) > self.most:
            return None  # read payload by payload, so no one read of JSON is larger than an event's
        # A payload holds no line end, nor does the prefix: each "\n" + prefix found starts a line.
        if not joined.startswith(self.prefix) or joined.count(self.rows) != len(data) - 1:
            return None
        tokens = self.lines(joined)
        if len(tokens) != len(data):
            return None
        try:
            texts: list[str] = orjson.loads(b"[" + b",".join(tokens) + b"]")
        except orjson.JSONDecodeError:
            return None
        return texts

    def batch(self, texts: list[str]) -> list[Event]:
        """The events of a run of payloads of this shape: one ``ArgumentsBatch`` of a call's
        fragments, or a ``TextReceived`` for each piece of text."""
        self.hits += len(texts)
        if self.is_text:
            return [TextReceived(text, self.choice, self.index) for text in texts]
        assert self.index is not None  # a call's fragment always has its index
        return [ArgumentsBatch(self.index, texts, self.choice)]


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
    #: then ``read`` learns the payload's byte template and reads the call's next fragments
    #: from their string token alone.
    plain_fragments: ClassVar[bool] = False
    #: The same for a payload read as exactly one ``TextReceived``: a piece of the answer's
    #: text, which a token-streaming server sends as often as a call's fragments.
    plain_text: ClassVar[bool] = False
    #: The byte template of the open call's plain fragments (or of the text), once proved: a
    #: payload that matches it changes none of the decoder's state (``plain_fragments``).
    template: Template | None = None
    _patience = 0  # learnings skipped after a template that matched nothing
    _wait = 0  # learnings still to skip

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

    def read(self, items: Iterable[Frame | Payloads], out: list[Event]) -> None:
        """Append the events of a read's frames and payloads to ``out``, in order: the one loop
        every provider's stream goes through.

        It stops after the item that gives ``ResponseEnded``: what follows the provider's
        end-of-stream marker is never decoded. On bad input it raises with the events of the
        items before it already in ``out``, for the caller to pass on first.
        """
        for item in items:
            if type(item) is Payloads:
                if self._payloads(item, out):
                    return
            else:
                assert isinstance(item, Frame)
                template = self.template
                if template is not None and item.event == template.event and len(item.data) <= template.most:
                    # A read's first event, completed by it, comes as a Frame.
                    text = template.text(item.data.encode("utf-8", "surrogatepass"))
                    if text is not None:
                        out += template.batch([text])
                        continue
                events = self._general(item)
                out += events
                if ends(events):
                    return

    def read_event(self, event: str | None, data: bytes) -> list[Event]:
        """The events of one payload (its bytes proved UTF-8) read alone, as ``read`` reads a
        batch of one: a read of one event, as a token-streaming server sends, walks no batch."""
        template = self.template
        if template is not None and event == template.event:
            text = template.text(data)
            if text is not None:
                return template.batch([text])
        return self._general(Frame(event, data.decode()))

    def read_payload(self, payload: Any, event: str | None = None) -> list[Event]:
        """``feed_payload``, for a payload that did not come through ``read``."""
        self._forget()
        return self.feed_payload(payload, event)

    def _payloads(self, batch: Payloads, out: list[Event]) -> bool:
        """The events of a batch of payload bytes; True once the stream's end was read.

        A payload that matches the learned template is a fragment of the same call, and only
        its string token is parsed, strictly; consecutive ones leave as one ``ArgumentsBatch``.
        Any other payload (or a token that is not one JSON string) takes the general path.
        """
        names = batch.events
        if len(batch.data) == 1:  # one event, as most boundary events come: no loop to set up
            events = self.read_event(None if names is None else names[0], batch.data[0])
            out += events
            return ends(events)
        template = self.template
        if template is not None:
            texts = template.whole(batch)
            if texts is not None:
                out += template.batch(texts)
                return False
        prefix, match, most = (template.prefix, template.match, template.most) if template else (b"\x00", _NEVER, 0)
        run: list[str] = []
        loads, bad = orjson.loads, orjson.JSONDecodeError
        for position, data in enumerate(batch.data):
            event = None if names is None else names[position]
            # ``Template.text``, written out: this line runs once per event.
            if data.startswith(prefix) and template is not None and event == template.event and len(data) <= most:
                found = match(data, template.start)
                if found is not None:
                    try:
                        run.append(loads(found.group(1)))
                        continue
                    except bad:
                        pass
            if run and template is not None:  # a run is only ever filled through a template
                out += template.batch(run)
                run = []
            events = self._general(Frame(event, data.decode()))
            out += events
            if ends(events):
                return True
            template = self.template
            if template is not None:
                prefix, match, most = template.prefix, template.match, template.most
        if run and template is not None:
            out += template.batch(run)
        return False

    def _general(self, frame: Frame) -> list[Event]:
        """``feed``: the general path, which forgets the template and may learn a new one."""
        if self.template is not None:
            self._forget()
        events = self.feed(frame)
        if len(events) == 1:
            kind = type(events[0])
            if (kind is ArgumentsDelta and self.plain_fragments) or (kind is TextReceived and self.plain_text):
                if self._wait:
                    self._wait -= 1
                else:
                    self._learn(frame, events[0])  # type: ignore[arg-type]  # one of the two kinds
        return events

    def _forget(self) -> None:
        """Drop the template. One that matched nothing makes the next learning wait longer, so a
        stream whose fragments never share a shape pays for learning rarely."""
        template = self.template
        if template is not None:
            self.template = None
            self._patience = 0 if template.hits else min(2 * self._patience + 1, _MAX_PATIENCE)
            self._wait = self._patience

    def _learn(self, frame: Frame, delta: ArgumentsDelta | TextReceived) -> None:
        """Learn the byte template of the plain fragment (or piece of text) that ``frame`` was,
        once proved.

        The fragment's string token is found in the payload and replaced by a probe; the
        general path must read the probe payload as the same call's fragment (the same choice's
        text) with the probe's text. A decoder that declares ``plain_fragments`` (``plain_text``)
        changes no state on such a payload, so the proof costs nothing but time: one probe, once
        per shape (``_PROOFS``).
        """
        text = delta.text
        if text == _PROBE or len(frame.data) > self._most_tokens:
            return  # a longer payload is never read through a template (``Template.most``)
        data = frame.data.encode()
        token = orjson.dumps(text)
        at = data.rfind(token)
        if at < 0 or len(data) - len(token) > _MAX_ENVELOPE:
            return  # escaped otherwise than orjson writes it, or kilobytes around it: no template
        prefix, suffix = data[: at + 1], data[at + len(token) - 1 :]
        hole = _unread(suffix)
        shape = (type(self), self.early_close, self.limits, frame.event, prefix, type(delta), delta.index, delta.choice)
        if hole is not None and _proven(
            (*shape, suffix[: hole[0] + 1] + suffix[hole[1] :], True),
            lambda: self._proves(frame, delta, prefix, suffix, hole),
        ):
            self.template = Template(frame.event, prefix, suffix, hole, delta, self._most_tokens)
        elif _proven((*shape, suffix, False), lambda: self._proves(frame, delta, prefix, suffix, None)):
            self.template = Template(frame.event, prefix, suffix, None, delta, self._most_tokens)  # string read

    def _proves(
        self,
        frame: Frame,
        delta: ArgumentsDelta | TextReceived,
        prefix: bytes,
        suffix: bytes,
        hole: tuple[int, int] | None,
    ) -> bool:
        """Whether the general path reads the payload with the probe in the fragment's place
        (and another padding in the unread string's) as the call's fragment of probe text."""
        expected: list[Event] = [
            TextReceived(_PROBE, delta.choice, delta.index)
            if type(delta) is TextReceived
            else ArgumentsDelta(delta.index, _PROBE, delta.choice)  # type: ignore[arg-type]  # an int
        ]
        after = suffix
        if hole is not None:
            pad = _OTHER_PAD if suffix[hole[0] + 1 : hole[1]] == _PAD else _PAD
            after = suffix[: hole[0] + 1] + pad + suffix[hole[1] :]
        try:
            return self.feed(Frame(frame.event, (prefix + _PROBE_JSON + after).decode())) == expected
        except StreamkitError:
            return False

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
        if big_integer_at(data, exc.msg, exc.pos):
            return self._load_exact(data, event)
        raise self._not_json(data, exc.msg, event) from None

    def _exact(self, events: list[Event], payload: Any, data: str) -> list[Event]:
        """``events`` decoded from ``payload`` (orjson's read of ``data``), with each arguments
        value read again exactly, for ``feed`` when orjson may have read an integer in one as a
        float. Only the whole values a call's arguments arrive as are checked (Gemini's
        ``args``, Ollama's ``arguments``, an object in OpenAI Chat's), so frames of text
        fragments cost nothing more."""
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


def _proven(shape: tuple[Any, ...], prove: Callable[[], bool]) -> bool:
    """``prove()``, once per shape. The cache is bounded: full, it is emptied (one step, safe
    with streams read in other threads), and the shapes still in use are proved again."""
    proved = _PROOFS.get(shape)
    if proved is None:
        if len(_PROOFS) >= _MAX_PROOFS:
            _PROOFS.clear()
        proved = _PROOFS[shape] = prove()
    return proved


def ends(events: list[Event]) -> bool:
    """Whether a frame's events hold the end-of-stream marker."""
    return ResponseEnded in map(type, events)


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
