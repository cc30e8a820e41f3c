"""Tools started early under a framework, scoped to one agent run or one model call.

``run_tools`` starts a tool at its call's end marker in an application's own loop; the
framework integrations (LangChain's ``EarlyToolsMiddleware``, pydantic-ai's ``StartToolsEarly``)
do the same inside the framework's loop, with its rules kept: only a valid call starts (an
invalid or cut one never reaches a starter), each call once. ``EarlyRuns`` holds what one scope
started, each run with the call that started it, so that

- a result goes only to the call that produced it: a provider that reuses an id (Gemini's calls
  carry none, and theirs are derived from index, name and input), or a retry that sends another
  call under an old id, gets a run of its own, never the old one's result;
- nothing outlives its scope: ``close`` cancels what was not taken and waits for it to end,
  also when the scope is itself being cancelled; a tool's sync code runs in a thread
  (``in_thread``) that a cancelled run waits for, since a thread cannot be stopped.

Each scope makes its own ``EarlyRuns``: never one shared by two runs, tasks or threads.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import Any, Generic, TypeVar

import anyio

from .._types import ToolCall

__all__ = ("STARTER", "EarlyRuns", "in_thread")

T = TypeVar("T")

#: Set by LangChain's ``EarlyToolsMiddleware`` around an async agent's model call: the model
#: hands it each valid call the moment the call completes.
STARTER: ContextVar[Callable[[ToolCall], None] | None] = ContextVar("streamkit_early_starter", default=None)


class EarlyRuns(Generic[T]):
    """The tool runs one scope started, by call key, each kept with the call that started it."""

    def __init__(self) -> None:
        self._runs: dict[str, tuple[object, asyncio.Task[T]]] = {}

    def start(self, key: str, call: object, run: Callable[[], Coroutine[Any, Any, T]]) -> None:
        """Start ``run()`` for ``call``, known as ``key``, once. A key already started for another
        call (compared with ``==``) has that run cancelled: the new call is not the old one."""
        held = self._runs.get(key)
        if held is not None and held[0] == call:
            return
        if held is not None:
            held[1].cancel()
        self._runs[key] = (call, asyncio.get_running_loop().create_task(run()))

    def take(self, key: str, call: object) -> asyncio.Task[T] | None:
        """The run started for exactly ``call``, now the caller's to await; ``None`` when there is
        none, or when the one under ``key`` was for another call (it is cancelled)."""
        held = self._runs.pop(key, None)
        if held is None:
            return None
        if held[0] != call:
            held[1].cancel()
            return None
        return held[1]

    async def close(self) -> None:
        """Cancel every run not taken and wait for each to end; a cancellation does not cut it short."""
        left = [task for _, task in self._runs.values()]
        self._runs = {}
        for task in left:
            task.cancel()
        if left:
            with anyio.CancelScope(shield=True):
                await asyncio.gather(*left, return_exceptions=True)


async def in_thread(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` in a worker thread, with this context. Cancelled, it waits for the
    thread to end before it raises: a thread cannot be stopped, and what a scope started must
    not go on after the scope has closed (asyncio's executor futures leave it running)."""
    context = contextvars.copy_context()
    future = asyncio.get_running_loop().run_in_executor(None, context.run, function, *args)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        while not future.done():
            try:
                await asyncio.wait([future])
            except asyncio.CancelledError:
                continue  # cancelled again: the thread still runs, so still wait for it
        raise
