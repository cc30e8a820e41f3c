"""What every re-emitting encoder shares: the call values, and writing frames back as bytes.

An encoder takes one frame of a provider's stream and the calls that frame completed (as the
pipeline decoded them) and returns the bytes to write in its place: the calls, each whole, in
the provider's own wire format, then the frame itself with its call fragments taken out. Every
other frame is written back as it came. Encoders never decode a call themselves: what a call
is, where it ends and whether it is valid is the pipeline's answer, given to them.

The encoders of the formats ``streamkit serve`` speaks also write a call as pieces, for a route
that streams calls as they arrive: its start, each fragment of its arguments, its end marker
(``opening``, ``fragment``, ``closing``); when they are written is the proxy's to decide.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson

from .._events import Frame
from .._types import Call, CustomToolCall, InvalidToolCall, ToolCall

__all__ = ("Call", "Encoder", "Piece", "arguments_text", "arguments_value", "dumps", "loads", "sse", "sse_json")


@dataclass(frozen=True, slots=True)
class Piece:
    """A call written as fragments (``streamkit serve``'s ``emit = "fragments"``): where it goes.

    Attributes:
        number: the index it is written at.
        choice, id, name: as on the call.
        item: the provider's own start of it (Anthropic's block, Responses' item), or empty.
    """

    number: int
    choice: int
    id: str | None
    name: str | None
    item: Mapping[str, Any]


class Encoder(ABC):
    """Writes one provider's frames back, with each call whole at its end marker."""

    #: "sse" or "ndjson": how the frames are written.
    framing: ClassVar[str] = "sse"
    #: Whether the format numbers a choice's calls itself, in the order they start (OpenAI
    #: Chat's ``index``), rather than by the block or item each call is.
    numbers_calls: ClassVar[bool] = False
    #: Whether an invalid call is written (with its raw text) or left out; set by the session.
    keep_invalid: bool = True
    #: Whether a response written may go on with the frames of the next one (``resume``): what
    #: the transports and the proxy need to answer a bad call to the model themselves.
    continues: ClassVar[bool] = False

    def written(self, call: Call) -> bool:
        """Whether ``call`` is written: a valid call always, an invalid one only if kept."""
        return self.keep_invalid or not isinstance(call, InvalidToolCall)

    @abstractmethod
    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        """The bytes that stand for ``frame``, which completed ``calls`` (in order)."""

    def ends(self, frame: Frame) -> bool:
        """Whether ``frame`` carries the response's end (its stop reason): where a response that
        goes on with the next one (``continues``) stops being written."""
        return False

    def unended(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        """The bytes for ``frame``, one that ``ends``, with the calls it completed and without its
        end: what is written of it when the response goes on with the next one."""
        raise NotImplementedError(f"{type(self).__name__} does not continue a response")

    def resume(self) -> None:
        """The frames that follow are the next response's, written as the rest of this one: its
        start is not written again, and its calls and blocks are numbered on from these."""
        raise NotImplementedError(f"{type(self).__name__} does not continue a response")

    def open_calls(self, calls: Sequence[Call]) -> list[bytes]:
        """The calls a body ended inside (a clean end, no signal from the provider), written as
        cut ones (their raw text, without their end) with no frame of the provider's to go with:
        where the format can carry that, for a client that checks calls itself (``pass``)."""
        raise NotImplementedError(f"{type(self).__name__} writes no call without a frame")

    def provider_error(self, message: str) -> bytes:
        """What is written where the provider reported an error in its stream, besides that frame
        (written as it came): nothing, for a stream written back in its own format."""
        return b""

    def opening(self, piece: Piece, sequence: Any) -> bytes:
        """A call's start, with no arguments yet (``sequence``: the frame's own number, if any)."""
        raise NotImplementedError(f"{type(self).__name__} does not write calls as fragments")

    def fragment(self, piece: Piece, text: str, sequence: Any) -> bytes:
        """One piece of a call's arguments."""
        raise NotImplementedError(f"{type(self).__name__} does not write calls as fragments")

    def closing(self, piece: Piece, text: str, sequence: Any) -> list[bytes]:
        """A call's end marker, ``text`` being its whole arguments; none where the format has none."""
        return []

    @classmethod
    def error_body(cls, kind: str, message: str, code: str | None) -> Any:
        """An HTTP error body in the provider's own shape, so that its SDK raises its own error
        with the message in it, rather than reading a stranger's JSON."""
        raise NotImplementedError(f"{cls.__name__} writes no error")

    @classmethod
    def error_event(cls, kind: str, message: str, code: str) -> bytes:
        """An error in the stream, in the provider's own shape: the stream's last event."""
        raise NotImplementedError(f"{cls.__name__} writes no error")

    def ending(self, kind: str, message: str, code: str) -> bytes:
        """The error that ends this stream after what it has written: ``error_event``, where a
        format's events carry nothing of the stream before them."""
        return self.error_event(kind, message, code)

    def write(self, frame: Frame) -> bytes:
        """``frame`` as it came (an SSE event, or an NDJSON line)."""
        return sse(frame.event, frame.data) if self.framing == "sse" else frame.data.encode() + b"\n"


def sse(event: str | None, data: str) -> bytes:
    """One SSE event: the ``event:`` line when named, a ``data:`` line per line of data, a blank line."""
    head = f"event: {event}\n" if event is not None else ""
    body = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"{head}{body}\n".encode()


def sse_json(event: str | None, payload: Any) -> bytes:
    return sse(event, dumps(payload))


def loads(data: str) -> Any:
    """The frame's JSON, or ``None`` when it is not JSON (``[DONE]``, a keep-alive)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def dumps(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # an integer past 64 bits, which orjson does not write
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def arguments_text(call: Call) -> str:
    """The arguments to write as text: a valid call's input as compact JSON, an invalid call's
    raw text, a custom call's own text."""
    if isinstance(call, ToolCall):
        return dumps(call.input)
    return call.input if isinstance(call, CustomToolCall) else call.raw


def arguments_value(call: Call) -> Any:
    """The arguments to write as a JSON value (Gemini, Ollama): the input, else the raw text's value."""
    if call.input is not None:
        return call.input
    assert isinstance(call, InvalidToolCall)
    value = loads(call.raw)
    return call.raw if value is None and call.raw.strip() != "null" else value
