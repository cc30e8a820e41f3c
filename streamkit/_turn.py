"""Turn events -> the public values of a turn's opaque state (reasoning, signatures, server tools).

Rules (every rule about the order of turn events lives here):

1. A block is keyed by ``(choice, index)``, in a space of its own (calls have theirs in the
   accumulator), and is in one state of ``TRANSITIONS``: ``IDLE`` (never started), ``OPEN``
   (from ``BlockStarted`` to ``BlockEnded``) or ``DELIVERED`` (handed out: a key is never
   reused). ``TRANSITIONS[state][event type]`` is the state a block event leads to; a pair
   missing from the table is a ``ProviderProtocolError`` naming the state, the event and the
   index, as the accumulator's table does for a call's life.
2. Fragments go into a list per part (``text``, ``signature``, ``input``) and are joined once at
   the block's end, as argument fragments are: the result does not depend on how the stream was
   cut, and the cost is linear. Signatures and other opaque text are never decoded or parsed.
   An empty fragment of an open block carries nothing, and a second end of a block handed out
   changes nothing: decoders pass both on, and keep no set of open blocks.
3. A server tool's ``input`` fragments are JSON (Anthropic's ``input_json_delta``): joined and
   parsed once at the end, since its block is sent back with ``input`` as an object. No
   fragment keeps the start's own ``input``.
4. A start of a kind not in ``_PARTS``, or a fragment of a part its kind of block has not (a
   thinking delta in a server tool's block), is a protocol error, as is every pair the table
   lacks (a fragment or end for a block that is not open, a second start).
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
from ._turn_types import WHOLE_BLOCKS, CallState, ServerToolUse, Thinking, TurnState

__all__ = ("BLOCK_EVENTS", "STATES", "TRANSITIONS", "TurnStage")

IDLE = "IDLE"  # never started
OPEN = "OPEN"  # started: its fragments are being kept
DELIVERED = "DELIVERED"  # handed out: its key is never reused
STATES = (IDLE, OPEN, DELIVERED)

#: The events that belong to one block, keyed by ``(choice, index)``: the table's columns. A
#: ``BlockReceived`` (a whole block) and a ``CallDetail`` (a call's state) have no life to track.
BLOCK_EVENTS: tuple[type, ...] = (BlockStarted, BlockDelta, BlockEnded)

#: ``TRANSITIONS[state][event type]``: the state the event leads to. A missing pair is illegal.
TRANSITIONS: dict[str, dict[type, str]] = {
    IDLE: {BlockStarted: OPEN},
    OPEN: {BlockDelta: OPEN, BlockEnded: DELIVERED},
    DELIVERED: {BlockEnded: DELIVERED},  # a repeated end: nothing
}

#: What a missing pair means, by state: the text of the protocol error.
_WHY = {
    IDLE: "the block never started",
    OPEN: "the block is already open",
    DELIVERED: "the block was already handed out",
}

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


class TurnStage:
    """Feed turn events in stream order; get the public values back as each block completes."""

    def __init__(self, provider: str, budget: TurnBudget | None = None) -> None:
        self.provider = provider
        self._budget = TurnBudget() if budget is None else budget
        self._open: dict[tuple[int, int], _Block] = {}
        self._done: set[tuple[int, int]] = set()
        #: The work of each allowed transition, by event type: ``(key, block or None, event)``.
        self._actions: dict[type, Callable[[tuple[int, int], Any, Any], list[TurnState]]] = {
            BlockStarted: self._start,
            BlockDelta: self._delta,
            BlockEnded: self._end,
        }

    def feed(self, event: TurnEvent) -> list[TurnState]:
        """Look the block's state and the event up in ``TRANSITIONS``, then do the work; the
        events with no block life are turned into their public values at once."""
        if isinstance(event, BlockReceived):
            make = WHOLE_BLOCKS.get(event.kind)
            if make is None:
                raise self._error(None, "BlockReceived", f"unknown kind {event.kind!r}")
            return [make(event.block, event.choice)]
        if isinstance(event, CallDetail):
            return [CallState(event.index, event.key, event.value, choice=event.choice)]
        key = (event.choice, event.index)
        state = self.state_of(event.index, event.choice)
        kind = type(event)
        if kind not in TRANSITIONS[state]:
            message = f"not allowed in state {state}: {_WHY[state]}"
            raise ProviderProtocolError(
                message, provider=self.provider, index=event.index, event=kind.__name__, state=state
            )
        return self._actions[kind](key, self._open.get(key), event)

    def state_of(self, index: int, choice: int = 0) -> str:
        """The block's state in ``TRANSITIONS``."""
        key = (choice, index)
        return OPEN if key in self._open else DELIVERED if key in self._done else IDLE

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
        body = dict(block.block)  # a server tool's use: the one other kind a start may have
        pieces = parts.get("input")
        if pieces is not None:
            text = "".join(pieces)
            try:
                body["input"] = orjson.loads(text) if text else {}
            except orjson.JSONDecodeError as exc:
                message = f"a server tool's input is not JSON ({exc.msg})"
                raise self._error(block.index, "BlockEnded", message) from None
        return ServerToolUse(body, choice=key[0])

    # -- the work of each transition ------------------------------------------------------------

    def _start(self, key: tuple[int, int], block: None, event: BlockStarted) -> list[TurnState]:
        if event.kind not in _PARTS:
            raise self._error(event.index, "BlockStarted", f"unknown block kind {event.kind!r}")
        held = held_size(event.block, self._budget.limit)
        self._budget.add(KEY_BYTES + held, "the start", event.index)
        self._open[key] = _Block(event.index, event.kind, event.block, held)
        return []

    def _delta(self, key: tuple[int, int], block: _Block, event: BlockDelta) -> list[TurnState]:
        if event.part not in _PARTS.get(block.kind, ()):
            message = f"unknown part {event.part!r}" if event.part not in _ANY_PART else f"no {event.part!r} part"
            raise self._error(event.index, "BlockDelta", f"{message} in a {block.kind} block")
        if not event.text:
            return []
        self._budget.add(len(event.text), event.part, event.index)
        block.held += len(event.text)
        block.parts.setdefault(event.part, []).append(event.text)
        return []

    def _end(self, key: tuple[int, int], block: _Block | None, event: BlockEnded) -> list[TurnState]:
        return [] if block is None else [self._close(key)]  # DELIVERED -> DELIVERED: a repeat

    def _error(self, index: int | None, event: str, message: str) -> ProviderProtocolError:
        return ProviderProtocolError(message, provider=self.provider, index=index, event=event)
