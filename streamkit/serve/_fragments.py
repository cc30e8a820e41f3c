"""A route with ``emit = "fragments"``: each call's arguments written as they arrive, canonically.

The whole-call encoders (each provider's ``reemit``) still write every frame that is not a
call's (text, reasoning, stop reason, usage, errors); the call's own frames are replaced by
pieces made from the pipeline's values: its start when it opens (``CallStarted``), a delta per
raw piece of its arguments (``ArgumentsFragment``), and its end once the pipeline completed it
and found it valid. So a client sees each call once, with its own index and id, and its end
marker only after the check: on a ``withhold`` route an invalid call ends the stream (the
session writes nothing of the frame that completed it) before its end is sent, and the
format's error event follows, so no SDK accumulator ever completes it.

One call per choice is written at a time (the front one): the fragments of a call opened
while another is still open are held, and written in one delta when the front one ends. An
OpenAI Chat SDK takes a new index as the end of the call before it, so a call is never started
before the one before it was checked.

What ends a call, per format: OpenAI Chat has no end marker of its own (the finish reason,
which passes as it came, ends every call of its choice), Anthropic a ``content_block_stop``,
OpenAI Responses ``response.function_call_arguments.done`` and ``response.output_item.done``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._events import Frame
from .._reemit import Session
from .._types import ArgumentsFragment, CallStarted, CustomToolCall, InvalidToolCall, Provider, ToolCall
from ..providers._encoder import Call, Encoder, Piece, arguments_text, loads

__all__ = ("ServeSession",)


class ServeSession(Session):
    """The proxy's session: ``fragments`` streams calls (a response written so does not go on
    with another: a bad call's start is already written, so ``tell`` ends as ``withhold``)."""

    def __init__(self, *args: Any, fragments: bool, **kwargs: Any) -> None:
        self._fragments = fragments
        super().__init__(*args, **kwargs)

    def _start(self, name: str | None) -> None:
        super()._start(name)
        if self._fragments and self.provider is not None:
            self._encoder = Fragments(self.provider, self._encoder)
            self._withhold = self._withhold or self.policy.action == "tell"  # a call's start is out: no going on

    def _take(self, values: Sequence[object]) -> list[Call]:
        if isinstance(self._encoder, Fragments):
            self._encoder.values = values
        return super()._take(values)


@dataclass(slots=True)
class _Open:
    """A call opened and not yet ended: where it is written, and what of it is held."""

    piece: Piece
    held: list[str] = field(default_factory=list)
    sent: bool = False  # its start was written
    written: list[str] = field(default_factory=list)  # the arguments written
    done: Call | None = None


class Fragments(Encoder):
    """Wraps a format's whole-call encoder: its frames without the calls', and the calls as pieces."""

    def __init__(self, provider: Provider, base: Encoder) -> None:
        self.provider = provider
        self.keep_invalid = base.keep_invalid
        self.values: Sequence[object] = ()  # the pipeline's values for the frame written next
        self._base = base
        self._open: dict[tuple[int, int], _Open] = {}
        self._fronts: dict[int, list[_Open]] = {}  # choice -> its open calls, in order
        self._counts: dict[int, int] = {}  # choice -> calls started (OpenAI Chat's own indexes)
        self._number: Any = None  # the frame's sequence_number (Responses)

    def write(self, frame: Frame) -> bytes:
        return self._base.write(frame)

    def ending(self, kind: str, message: str, code: str) -> bytes:
        return self._base.ending(kind, message, code)

    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        values, self.values = self.values, ()
        payload = loads(frame.data) if values or calls else None
        payload = payload if isinstance(payload, dict) else {}
        self._learn(payload)
        rest = self._base.frame(frame, [])  # first: the encoder learns the stream's envelope from it
        out: list[bytes] = []
        seen = {id(value) for value in values}
        # in the pipeline's order (a call may end and its index open again), then the calls a
        # provider's error cut, which are not among the values
        for value in [*values, *(call for call in calls if id(call) not in seen)]:
            if isinstance(value, CallStarted):
                out += self._started(value, payload)
            elif isinstance(value, ArgumentsFragment):
                out += self._fragment(value)
            elif isinstance(value, ToolCall | CustomToolCall | InvalidToolCall):
                out += self._ended(value)
        return out + rest

    def _learn(self, payload: dict[str, Any]) -> None:
        self._number = payload.get("sequence_number")

    def _started(self, started: CallStarted, payload: dict[str, Any]) -> list[bytes]:
        number = started.index  # the provider's block or item index: the other blocks and items keep theirs
        if self._base.numbers_calls:  # OpenAI Chat's own indexes, per choice
            number = self._counts.get(started.choice, 0)
            self._counts[started.choice] = number + 1
        item = payload.get("content_block", payload.get("item"))
        piece = Piece(number, started.choice, started.id, started.name, item if isinstance(item, dict) else {})
        call = _Open(piece)
        self._open[started.choice, started.index] = call
        queue = self._fronts.setdefault(started.choice, [])
        queue.append(call)
        return self._send(call) if len(queue) == 1 else []

    def _fragment(self, fragment: ArgumentsFragment) -> list[bytes]:
        call = self._open.get((fragment.choice, fragment.index))
        if call is None or not fragment.text:
            return []
        if not call.sent:
            call.held.append(fragment.text)
            return []
        return [self._delta(call, fragment.text)]

    def _ended(self, done: Call) -> list[bytes]:
        key = (done.choice, done.index)
        if key not in self._open:  # no start was seen: the call opens here, its arguments whole at its end
            out = self._started(CallStarted(done.index, done.id, done.name, choice=done.choice), {})
        else:
            out = []
        call = self._open.pop(key)
        call.done = done
        queue = self._fronts[done.choice]
        while queue and queue[0].done is not None:
            out += self._end(queue.pop(0))
            if queue:
                out += self._send(queue[0])
        return out

    def _send(self, call: _Open) -> list[bytes]:
        """The front call's start, and the fragments held until it became the front."""
        call.sent = True
        out = [self._start(call)]
        text = "".join(call.held)
        call.held.clear()
        if text:
            out.append(self._delta(call, text))
        return out

    def _end(self, call: _Open) -> list[bytes]:
        done = call.done
        assert done is not None
        out: list[bytes] = []
        if not call.written and (
            not isinstance(done, InvalidToolCall) or done.raw
        ):  # no fragment came: the arguments whole
            out.append(self._delta(call, arguments_text(done)))
        if isinstance(done, InvalidToolCall) and done.truncated:
            return out  # cut: never ended, as the provider left it
        # the text the client joined (the text the call was parsed from), for the formats that repeat it
        return out + self._base.closing(call.piece, "".join(call.written), self._number)

    def _start(self, call: _Open) -> bytes:
        return self._base.opening(call.piece, self._number)

    def _delta(self, call: _Open, text: str) -> bytes:
        call.written.append(text)
        return self._base.fragment(call.piece, text, self._number)
