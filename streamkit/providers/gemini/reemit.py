"""Gemini and Vertex AI, written back.

Every ``functionCall`` part is taken out of its chunk (Vertex's streamed ``partialArgs`` pieces
included); each call is put back whole, as one part ``{"functionCall": {"name", "args"[, "id"]}}``
with its ``thoughtSignature`` when it had one, in the chunk that completed it, where its first
part was. A candidate left with no parts and no finish reason is not written, nor a chunk left
with no candidate. A streamed call cut by ``MAX_TOKENS`` has no whole ``args`` to give and is not
written; the chunk with that finish reason is. ``MALFORMED_FUNCTION_CALL`` comes with no part and
passes through as it came, as do text, thoughts, their signatures and ``{"error": …}`` chunks.
A response whose bad call the model is told of goes on with the answer's chunks: its last chunk
is written without its finish reason and its usage (``unended``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._events import Frame
from ..._types import InvalidToolCall
from .._encoder import Call, Encoder, arguments_value, loads, sse_json

__all__ = ("GeminiEncoder",)

#: A candidate's fields that belong to its end: its finish reason and what says why.
_ENDS = frozenset({"finishReason", "finishMessage"})


class GeminiEncoder(Encoder):
    continues = True

    def frame(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        if not calls and "functionCall" not in frame.data:
            return [self.write(frame)]
        return self._frame(frame, calls, ended=True)

    def ends(self, frame: Frame) -> bool:
        """A chunk whose candidate has a finish reason."""
        if "finishReason" not in frame.data:
            return False
        payload = loads(frame.data)
        candidates = payload.get("candidates") if isinstance(payload, dict) else None
        return isinstance(candidates, list) and any(
            isinstance(candidate, dict) and candidate.get("finishReason") is not None for candidate in candidates
        )

    def unended(self, frame: Frame, calls: Sequence[Call]) -> list[bytes]:
        """The chunk's parts and calls, without its finish reason and its usage (the next
        response's own come instead)."""
        return self._frame(frame, calls, ended=False)

    def resume(self) -> None:
        """Nothing to drop: a chunk carries nothing of the stream before it, and a call has no index."""

    def _frame(self, frame: Frame, calls: Sequence[Call], *, ended: bool) -> list[bytes]:
        payload = loads(frame.data)
        if not isinstance(payload, dict) or not isinstance(payload.get("candidates"), list):
            return [self.write(frame)]
        candidates = []
        for number, candidate in enumerate(payload["candidates"]):
            if not isinstance(candidate, dict):
                candidates.append(candidate)
                continue
            if not ended:  # a candidate left with no part is not written (``_rebuild``)
                candidate = {"content": {"role": "model", "parts": []}} | {
                    key: value for key, value in candidate.items() if key not in _ENDS
                }
            choice = candidate.get("index", number)
            parts = [_part(call) for call in calls if call.choice == choice and _whole(call) and self.written(call)]
            rebuilt = _rebuild(candidate, parts)
            if rebuilt is not None:
                candidates.append(rebuilt)
        if not candidates:
            return []
        kept = payload if ended else {key: value for key, value in payload.items() if key != "usageMetadata"}
        return [sse_json(frame.event, {**kept, "candidates": candidates})]


def _whole(call: Call) -> bool:
    """A call that can be written as a part: not cut off, and not the provider's own malformed report."""
    if isinstance(call, InvalidToolCall):
        return not call.truncated and "malformed_function_call" not in call.anomalies
    return True


def _part(call: Call) -> dict[str, Any]:
    function: dict[str, Any] = {} if call.id is None else {"id": call.id}
    function |= {"name": call.name, "args": arguments_value(call)}
    part: dict[str, Any] = {"functionCall": function}
    signature = call.state.get("thoughtSignature")
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def _rebuild(candidate: dict[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any] | None:
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(content, dict) or not isinstance(parts, list):
        return candidate
    kept: list[Any] = []
    at: int | None = None
    for part in parts:
        if isinstance(part, dict) and "functionCall" in part:
            at = len(kept) if at is None else at
        else:
            kept.append(part)
    at = len(kept) if at is None else at
    kept[at:at] = calls
    if not kept and candidate.get("finishReason") is None:
        return None
    return {**candidate, "content": {**content, "parts": kept}}
