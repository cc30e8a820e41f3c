"""OpenAI Chat Completions (and Mistral, Ollama's ``/v1``, the compatible servers), written back.

Every ``delta.tool_calls`` entry is taken out of its chunk; a chunk left with nothing (no text,
no role, no finish reason) is not written. Each call is written in a chunk of its own, just
before the chunk that ended it (its choice's ``finish_reason``, or a new call taking its index),
as one entry: a distinct ``index`` counted per choice from 0, its ``id``, ``type`` and name,
and all of its arguments as one string. The chunk's other fields (``id``, ``model``,
``created``…) are those of the stream.

A call cut off is written with its raw text only when the provider's own signal comes with it
(``finish_reason`` ``length``, ``content_filter``, ``error``, or an error chunk), which is then
written too. A call
cut with no signal (``[DONE]`` or the end of the body with no finish reason) is not written:
the stream fails there, as a cut connection does, rather than end as if complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._errors import IncompleteStreamError
from ..._events import Frame
from ..._types import InvalidToolCall
from .._encoder import Call, Encoder, Piece, arguments_text, loads, sse_json
from .decode import OpenAIChatDecoder

__all__ = ("OpenAIChatEncoder",)

#: Top-level chunk fields that belong to one chunk only, not to the stream.
_OWN = frozenset({"choices", "usage", "obfuscation", "x_groq", "error", "prompt_filter_results"})


class OpenAIChatEncoder(Encoder):
    numbers_calls = True
    continues = True

    @classmethod
    def error_body(cls, kind: str, message: str, code: str | None) -> Any:
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}

    @classmethod
    def error_event(cls, kind: str, message: str, code: str) -> bytes:
        """A chunk ``data: {"error": {...}}``, on which the openai SDKs raise ``APIError``."""
        return sse_json(None, cls.error_body(kind, message, code))

    def __init__(self) -> None:
        self._envelope: dict[str, Any] | None = None  # the first chunk's id, model, created…
        self._counts: dict[int, int] = {}  # choice -> calls written

    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        return self._frame(frame, calls, ended=True)

    def ends(self, frame: Frame) -> bool:
        """A chunk with a finish reason."""
        chunk = loads(frame.data) if "finish_reason" in frame.data else None
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        return isinstance(choices, list) and any(
            isinstance(entry, dict) and isinstance(entry.get("finish_reason"), str) for entry in choices
        )

    def unended(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        """The chunk's calls, and its text without its finish reason and usage (the next
        response's own end comes instead)."""
        return self._frame(frame, calls, ended=False)

    def open_calls(self, calls: Sequence[Call]) -> list[bytes]:
        """Each a chunk of its own, its raw text: the chunks end without a finish reason, as the body did."""
        return [self._call(call, None) for call in calls if self.written(call)]

    def resume(self) -> None:
        """Nothing to drop: a chunk carries nothing of the stream before it, and the calls are
        numbered on by ``_counts``."""

    def _frame(self, frame: Frame, calls: Sequence[Call], *, ended: bool) -> list[bytes]:
        if ended and not calls and "tool_calls" not in frame.data:
            return [self.write(frame)]
        payload = loads(frame.data)
        chunk = payload if isinstance(payload, dict) else None
        if self._envelope is None and chunk is not None and chunk.get("choices"):
            self._envelope = {key: value for key, value in chunk.items() if key not in _OWN}
        out = [self._call(call, chunk) for call in calls if self._checked(call, chunk)]
        if chunk is None:
            out.append(self.write(frame))
        else:
            kept = _strip(chunk if ended else _unended(chunk))
            if kept is not None:
                out.append(sse_json(frame.event, kept))
        return out

    def _checked(self, call: Call, chunk: dict[str, Any] | None) -> bool:
        """Whether ``call`` is written; a call cut with no signal from the provider fails the body."""
        if isinstance(call, InvalidToolCall) and call.truncated and not _signalled(chunk, call.choice):
            raise IncompleteStreamError(
                f"the call at index {call.index} was cut off with no finish_reason to say so", unfinished=(call,)
            )
        return self.written(call)

    def _call(self, call: Call, chunk: dict[str, Any] | None) -> bytes:
        number = self._counts.get(call.choice, 0)
        self._counts[call.choice] = number + 1
        piece = Piece(number, call.choice, call.id, call.name, {})
        return self._chunk(piece, _started(piece, arguments_text(call)))

    def opening(self, piece: Piece, sequence: Any) -> bytes:
        return self._chunk(piece, _started(piece, ""))

    def fragment(self, piece: Piece, text: str, sequence: Any) -> bytes:
        return self._chunk(piece, {"index": piece.number, "function": {"arguments": text}})

    def _chunk(self, piece: Piece, entry: dict[str, Any]) -> bytes:
        """A chunk of the stream's envelope holding one ``tool_calls`` entry for the piece's choice."""
        choice = {"index": piece.choice, "delta": {"tool_calls": [entry]}, "finish_reason": None}
        envelope = self._envelope or {"object": "chat.completion.chunk"}
        return sse_json(None, {**envelope, "choices": [choice]})


def _started(piece: Piece, arguments: str) -> dict[str, Any]:
    """A call's first ``tool_calls`` entry: its index, id, type and name, with ``arguments``."""
    function: dict[str, Any] = {} if piece.name is None else {"name": piece.name}
    function["arguments"] = arguments
    entry: dict[str, Any] = {"index": piece.number}
    if piece.id is not None:
        entry["id"] = piece.id
    return entry | {"type": "function", "function": function}


def _signalled(chunk: dict[str, Any] | None, choice: int) -> bool:
    """Whether the chunk says itself that the choice's open calls were cut: a finish reason, an error."""
    if chunk is None:
        return False
    if OpenAIChatDecoder.error_in(chunk) is not None:
        return True
    return any(
        isinstance(entry, dict) and entry.get("index", 0) == choice and isinstance(entry.get("finish_reason"), str)
        for entry in chunk.get("choices") or ()
    )


def _unended(chunk: dict[str, Any]) -> dict[str, Any]:
    """The chunk without its finish reasons and its usage."""
    choices = [
        {**entry, "finish_reason": None} if isinstance(entry, dict) else entry for entry in chunk.get("choices") or ()
    ]
    return {key: value for key, value in chunk.items() if key != "usage"} | {"choices": choices}


def _strip(chunk: dict[str, Any]) -> dict[str, Any] | None:
    """The chunk without its call fragments; ``None`` when nothing else was in it."""
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not choices:
        return chunk
    if len(choices) == 1 and not chunk.get("usage"):  # the usual chunk: one fragment, nothing else
        choice = choices[0]
        delta = choice.get("delta") if isinstance(choice, dict) else None
        only_calls = isinstance(delta, dict) and len(delta) == 1 and "tool_calls" in delta
        if only_calls and choice.get("finish_reason") is None:
            return None
    kept = []
    for choice in choices:
        if isinstance(choice, dict) and isinstance(choice.get("delta"), dict):
            delta = {key: value for key, value in choice["delta"].items() if key != "tool_calls"}
            choice = {**choice, "delta": delta}
            if choice.get("finish_reason") is None and not any(value not in (None, "") for value in delta.values()):
                continue  # only call fragments were in it
        kept.append(choice)
    if not kept and not chunk.get("usage"):
        return None
    return {**chunk, "choices": kept}
