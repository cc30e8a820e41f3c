"""What every ``turn_messages`` shares: the result type, the turn check, the text-and-calls fallback.

A turn's opaque state (signatures, reasoning items, encrypted or redacted reasoning, server
tool blocks) is only ever written back for the provider it came from: a provider cannot read
another's signatures, and must not be sent them. What a writer leaves out is listed on the
result's ``dropped``, never lost without a word.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._errors import UsageError
from .._turn_types import Turn, TurnItem
from .._types import InvalidToolCall, TextDelta, ToolCall
from ._base import Call, CallBlock, Message, block_of

__all__ = ("TurnMessages", "block_turn", "check_turn", "plain_turn")


class TurnMessages(list[Message]):
    """History entries (a list, to add with ``history += ...``) and what could not be carried.

    ``dropped`` holds the turn's items that were not written: state that belongs to another
    provider, or that this provider has no place for. Empty when the turn was written whole.
    """

    dropped: tuple[TurnItem, ...]

    def __init__(self, entries: Iterable[Message] = (), dropped: Iterable[TurnItem] = ()) -> None:
        super().__init__(entries)
        self.dropped = tuple(dropped)


def check_turn(turn: Any) -> Turn:
    if not isinstance(turn, Turn):
        raise UsageError(f"turn must be a streamkit.Turn, got {type(turn).__name__}")
    return turn


def plain_turn(
    turn: Any, assistant_message: Callable[..., list[Message]], *, kept: Callable[[TurnItem], bool] = lambda _: False
) -> TurnMessages:
    """The turn as its text and calls only, through the adapter's ``assistant_message``.

    Every other item is dropped unless ``kept`` says the caller writes it itself.
    """
    checked = check_turn(turn)
    calls: list[Call] = []
    dropped: list[TurnItem] = []
    for item in checked.items:
        if isinstance(item, Call):
            calls.append(item)
        elif not isinstance(item, TextDelta) and not kept(item):
            dropped.append(item)
    text = checked.text or None
    if not calls and not text:
        return TurnMessages((), dropped)
    return TurnMessages(assistant_message(calls, text=text), dropped)


def block_turn(
    turn: Any,
    provider: str,
    text_block: Callable[[str], Message],
    call_block: CallBlock,
    state: Callable[[TurnItem], Message | None],
) -> TurnMessages:
    """The turn as one assistant message of content blocks, in the order the items came.

    Text and calls are written by the provider's block writers (``block_message``'s); ``state``
    writes any other item, only in a turn that is ``provider``'s own (its state), ``None``
    dropping it; another provider's state is dropped. An empty text delta is neither written
    nor dropped.
    """
    checked = check_turn(turn)
    native = checked.provider == provider
    call = block_of(call_block)
    content: list[Message] = []
    dropped: list[TurnItem] = []
    for item in checked.items:
        if isinstance(item, TextDelta):
            if not item.text:
                continue
            written: Message | None = text_block(item.text)
        elif isinstance(item, ToolCall | InvalidToolCall):
            written = call(item)
        else:
            written = state(item) if native else None
        if written is None:
            dropped.append(item)
        else:
            content.append(written)
    return TurnMessages([{"role": "assistant", "content": content}] if content else [], dropped)
