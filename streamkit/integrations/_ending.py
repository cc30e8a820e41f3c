"""A body that ends cleanly with a call still open: the call told as cut, the turn read on.

A provider's stream that ends without its end-of-stream marker while a call is open was cut,
and nothing says so; the library raises ``IncompleteStreamError`` holding the open calls. The
transports and the proxy tell the model of such calls as cut off and go on; the integrations
that read a response themselves do the same with these: after the turn's complete calls, each
open one comes as the invalid call it is (``truncated``), then the response's end with
``finish="length"``, so the framework's own path for a cut call tells the model and the
complete calls run. A stream that ends with no call open, or fails otherwise (a dropped
connection, a provider's error), fails as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator

from .._errors import IncompleteStreamError
from .._turn_types import StreamEvent
from .._types import ResponseEnd

__all__ = ("acut_at_end", "cut_at_end")


def cut_at_end(events: Iterable[StreamEvent]) -> Iterator[StreamEvent]:
    """``events``, with the calls a clean end left open told as cut ones."""
    try:
        yield from events
    except IncompleteStreamError as error:
        yield from _told(error)


class acut_at_end(AsyncIterator[StreamEvent]):  # used as a function
    """``cut_at_end`` for an async stream (an iterator, not a generator: a consumer that stops
    early leaves nothing to finalize; the stream's own context closes it)."""

    def __init__(self, events: AsyncIterable[StreamEvent]) -> None:
        self._events = aiter(events)
        self._tail: list[StreamEvent] | None = None

    async def __anext__(self) -> StreamEvent:
        if self._tail is None:
            try:
                return await anext(self._events)
            except IncompleteStreamError as error:
                self._tail = list(_told(error))
        if not self._tail:
            raise StopAsyncIteration
        return self._tail.pop(0)


def _told(error: IncompleteStreamError) -> tuple[StreamEvent, ...]:
    if not error.unfinished:
        raise error
    return (*error.unfinished, ResponseEnd(None, finish="length"))
