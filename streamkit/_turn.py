"""Turn events -> the public values of a turn's opaque state (reasoning, signatures, server tools).

Rules (every rule about the order of turn events lives here):

1. A block is keyed by ``(choice, index)``, in a space of its own (calls have theirs in the
   accumulator). It is open from ``BlockStarted`` to ``BlockEnded``; a key is never reused.
2. Fragments go into a list per part (``text``, ``signature``, ``input``) and are joined once at
   the block's end, as argument fragments are: the result does not depend on how the stream was
   cut, and the cost is linear. Signatures and other opaque text are never decoded or parsed.
3. A server tool's ``input`` fragments are JSON (Anthropic's ``input_json_delta``): joined and
   parsed once at the end, since its block is sent back with ``input`` as an object. No
   fragment keeps the start's own ``input``.
4. A fragment or end for a block that is not open, a second start, or a fragment of a part its
   kind of block has not (a thinking delta in a server tool's block), is a protocol error.
5. At the end of the stream, a block still open (cut by the output limit) is handed out as it
   is, so nothing received is lost.
6. What an open block holds (its start, its fragments) and the key of every block seen count
   against ``max_turn_bytes`` in the response's ``TurnBudget``; a block's contents are
   released when it is handed out, its key is kept (it is never reused).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ._errors import ProviderProtocolError
from ._events import BlockDelta, BlockEnded, BlockReceived, BlockStarted, CallDetail, TurnEvent
from ._limits import KEY_BYTES, TurnBudget, held_size
from ._turn_types import (
    CallState,
    MessageItem,
    ReasoningItem,
    RedactedThinking,
    ServerToolResult,
    ServerToolUse,
    TextSignature,
    Thinking,
    TurnState,
)

__all__ = ("TurnStage",)

#: The parts each kind of block is made of.
_PARTS = {"thinking": frozenset({"text", "signature"}), "server_tool_use": frozenset({"input"})}
_ANY_PART = frozenset({"text", "signature", "input"})


class _Block:
    __slots__ = ("block", "held", "index", "kind", "parts")

    def __init__(self, index: int, kind: str, block: dict[str, Any], held: int) -> None:
        self.index = index
        self.kind = kind
        self.block = block
        self.parts: dict[str, list[str]] = {}
        self.held = held  # bytes counted in the budget for the start and the fragments


_WHOLE: dict[str, Callable[[dict[str, Any], int], TurnState]] = {
    "redacted_thinking": lambda block, choice: RedactedThinking(block["data"], choice=choice),
    "reasoning_item": lambda block, choice: ReasoningItem(block, choice=choice),
    "message_item": lambda block, choice: MessageItem(block, choice=choice),
    "server_tool_use": lambda block, choice: ServerToolUse(block, choice=choice),
    "server_tool_result": lambda block, choice: ServerToolResult(block, choice=choice),
    "text_signature": lambda block, choice: TextSignature(block["signature"], choice=choice),
}


class TurnStage:
    """Feed turn events in stream order; get the public values back as each block completes."""

    def __init__(self, provider: str, budget: TurnBudget | None = None) -> None:
        self.provider = provider
        self._budget = TurnBudget() if budget is None else budget
        self._open: dict[tuple[int, int], _Block] = {}
        self._done: set[tuple[int, int]] = set()

    def feed(self, event: TurnEvent) -> list[TurnState]:
        if type(event) is BlockDelta:
            block = self._require(event.choice, event.index, "BlockDelta")
            if event.part not in _PARTS.get(block.kind, ()):
                message = f"unknown part {event.part!r}" if event.part not in _ANY_PART else f"no {event.part!r} part"
                raise self._error(event.index, "BlockDelta", f"{message} in a {block.kind} block")
            self._budget.add(len(event.text), event.part, event.index)
            block.held += len(event.text)
            block.parts.setdefault(event.part, []).append(event.text)
            return []
        if type(event) is BlockStarted:
            key = (event.choice, event.index)
            if key in self._open or key in self._done:
                raise self._error(event.index, "BlockStarted", "a second start for the same block")
            held = held_size(event.block, self._budget.limit)
            self._budget.add(KEY_BYTES + held, "the start", event.index)
            self._open[key] = _Block(event.index, event.kind, event.block, held)
            return []
        if type(event) is BlockEnded:
            self._require(event.choice, event.index, "BlockEnded")
            return [self._close((event.choice, event.index))]
        if type(event) is BlockReceived:
            make = _WHOLE.get(event.kind)
            if make is None:
                raise self._error(None, "BlockReceived", f"unknown kind {event.kind!r}")
            return [make(event.block, event.choice)]
        assert type(event) is CallDetail
        return [CallState(event.index, event.key, event.value, choice=event.choice)]

    def close(self) -> list[TurnState]:
        """The end of the stream: every block still open, as it is."""
        return [self._close(key) for key in list(self._open)]

    def _close(self, key: tuple[int, int]) -> TurnState:
        block = self._open.pop(key)
        self._done.add(key)
        self._budget.release(block.held)  # handed out: the key alone stays
        parts = block.parts
        if block.kind == "thinking":
            signature = parts.get("signature")
            return Thinking(
                "".join(parts.get("text", ())), None if signature is None else "".join(signature), choice=key[0]
            )
        if block.kind == "server_tool_use":
            body = dict(block.block)
            pieces = parts.get("input")
            if pieces is not None:
                text = "".join(pieces)
                try:
                    body["input"] = orjson.loads(text) if text else {}
                except orjson.JSONDecodeError as exc:
                    message = f"a server tool's input is not JSON ({exc.msg})"
                    raise self._error(block.index, "BlockEnded", message) from None
            return ServerToolUse(body, choice=key[0])
        raise self._error(block.index, "BlockEnded", f"unknown block kind {block.kind!r}")

    def _require(self, choice: int, index: int, event: str) -> _Block:
        block = self._open.get((choice, index))
        if block is None:
            raise self._error(index, event, "arrived for a block that is not open")
        return block

    def _error(self, index: int | None, event: str, message: str) -> ProviderProtocolError:
        return ProviderProtocolError(message, provider=self.provider, index=index, event=event)
