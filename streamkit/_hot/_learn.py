"""The template learner: a stream's frames and payloads read through its decoder, with the byte
template of the open call's plain fragments (or of the text) learned, proved and used.

A decoder declares ``plain_fragments`` (``plain_text``) when a payload it reads as exactly one
``ArgumentsDelta`` (``TextReceived``) changes none of its state, the delta's text being the
payload's string at one place. After such a payload, its string token is replaced by a probe:
when the decoder reads the probe payload as the same call's fragment (the same choice's text)
of the probe's text, the bytes around the token are the template, and a payload that matches it
is read from its string token alone. The proof is this stream's: it was made with this
decoder, in this stream's state, and no other stream reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson

from .._errors import StreamkitError
from .._events import ArgumentsDelta, Event, Frame, Payloads, ResponseEnded, TextReceived
from .._limits import event_tokens
from ..providers import Decoder
from ._template import NEVER, Template, unread

__all__ = ("TemplateReader", "ends")

#: A fragment text no provider sends, put in a learned template's place to prove it.
_PROBE = "\x00streamkit probe\x00"
_PROBE_JSON = orjson.dumps(_PROBE)[1:-1]
_MAX_PATIENCE = 64
#: The padding put in a candidate unread string's place, beside the probe: it must change nothing
#: the decoder reads. The payload read as the delta already showed one value (often empty); this
#: one is not empty, and is the value with a meaning (an error chunk's ``"object": "error"``).
_PAD = b"error"
_OTHER_PAD = b"streamkit0pad"  # when the payload's own padding is that value already
#: The most proofs a stream keeps, by the template's shape: a stream of many calls, each of its
#: own shape, holds no more. Full, they are forgotten, and the shapes still in use proved again.
_MAX_PROOFS = 64
#: The most bytes a template keeps around its string: a real payload's envelope (ids, model,
#: indexes, padding) is a few hundred. A larger one is learned from no more than it is read
#: by the general path: its pattern, compiled and cached, would cost many times its size.
_MAX_ENVELOPE = 4096


def ends(events: list[Event]) -> bool:
    """Whether a frame's events hold the end-of-stream marker."""
    return ResponseEnded in map(type, events)


class TemplateReader:
    """One stream's reading of frames and payloads through ``decoder``, with its learned template."""

    __slots__ = ("_decoder", "_most", "_patience", "_proofs", "_wait", "template")

    def __init__(self, decoder: Decoder) -> None:
        self._decoder = decoder
        #: The longest payload a template reads: a longer one takes the general path, which
        #: reads it within ``max_event_bytes``'s bound.
        self._most = event_tokens(decoder.limits.max_event_bytes)
        #: The byte template of the open call's plain fragments (or of the text), once proved:
        #: a payload that matches it changes none of the decoder's state.
        self.template: Template | None = None
        self._patience = 0  # learnings skipped after a template that matched nothing
        self._wait = 0  # learnings still to skip
        self._proofs: dict[tuple[Any, ...], bool] = {}  # this stream's, by the template's shape

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
        return self._decoder.feed_payload(payload, event)

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
        prefix, match, most = (template.prefix, template.match, template.most) if template else (b"\x00", NEVER, 0)
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
        """The decoder's ``feed``: the general path, which forgets the template and may learn a
        new one."""
        if self.template is not None:
            self._forget()
        decoder = self._decoder
        events = decoder.feed(frame)
        if len(events) == 1:
            kind = type(events[0])
            if (kind is ArgumentsDelta and decoder.plain_fragments) or (kind is TextReceived and decoder.plain_text):
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
        per shape in the stream.
        """
        text = delta.text
        if text == _PROBE or len(frame.data) > self._most:
            return  # a longer payload is never read through a template (``Template.most``)
        data = frame.data.encode()
        token = orjson.dumps(text)
        at = data.rfind(token)
        if at < 0 or len(data) - len(token) > _MAX_ENVELOPE:
            return  # escaped otherwise than orjson writes it, or kilobytes around it: no template
        prefix, suffix = data[: at + 1], data[at + len(token) - 1 :]
        hole = unread(suffix)
        shape = (frame.event, prefix, type(delta), delta.index, delta.choice)
        if hole is not None and self._proven(
            (*shape, suffix[: hole[0] + 1] + suffix[hole[1] :], True),
            lambda: self._proves(frame, delta, prefix, suffix, hole),
        ):
            self.template = Template(frame.event, prefix, suffix, hole, delta, self._most)
        elif self._proven((*shape, suffix, False), lambda: self._proves(frame, delta, prefix, suffix, None)):
            self.template = Template(frame.event, prefix, suffix, None, delta, self._most)  # string read

    def _proven(self, shape: tuple[Any, ...], prove: Callable[[], bool]) -> bool:
        """``prove()``, once per shape in the stream (at most ``_MAX_PROOFS`` kept)."""
        proofs = self._proofs
        proved = proofs.get(shape)
        if proved is None:
            if len(proofs) >= _MAX_PROOFS:
                proofs.clear()
            proved = proofs[shape] = prove()
        return proved

    def _proves(
        self,
        frame: Frame,
        delta: ArgumentsDelta | TextReceived,
        prefix: bytes,
        suffix: bytes,
        hole: tuple[int, int] | None,
    ) -> bool:
        """Whether the general path reads the payload with the probe in the fragment's place
        (and another padding in the unread string's) as the call's fragment of probe text: one
        decoder call, its one event's fields compared with the sample's (the class's ``__eq__``,
        field by field, but no expected event made to compare with)."""
        after = suffix
        if hole is not None:
            pad = _OTHER_PAD if suffix[hole[0] + 1 : hole[1]] == _PAD else _PAD
            after = suffix[: hole[0] + 1] + pad + suffix[hole[1] :]
        try:
            read = self._decoder.feed(Frame(frame.event, (prefix + _PROBE_JSON + after).decode()))
        except StreamkitError:
            return False
        if len(read) != 1:
            return False
        got = read[0]
        return (
            type(got) is type(delta) and got.text == _PROBE and got.index == delta.index and got.choice == delta.choice
        )
