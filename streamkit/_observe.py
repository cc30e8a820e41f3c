"""The hooks telemetry plugs into: one global, ``None`` unless ``streamkit.telemetry.enable``
was called, so a stream pays one attribute read for it, and no OpenTelemetry import, when off.

The pipeline asks ``watch`` for a ``StreamWatch`` per stream and tells it about the first input,
each call, the end and a failure; ``run_tools`` and the early starters run each tool inside
``traced``. The edge names the request's secrets and address with ``within`` around the place where it
makes the stream. Another host of streams (``streamkit serve``) needs only ``watch``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from contextvars import ContextVar

    from ._types import Call, CustomToolCall, InvalidToolCall, ResponseEnd, ToolCall

__all__ = ("Request", "StreamWatch", "Watcher", "install", "traced", "watch", "watcher", "within")

T = TypeVar("T")


class StreamWatch(Protocol):
    """What one stream tells telemetry, in order: ``first_input``, then ``call`` per call, then
    ``end`` or ``fail``; ``close`` when the reader stops, whatever happened before."""

    def first_input(self) -> None: ...
    def call(self, call: Call) -> None: ...
    def end(self, end: ResponseEnd) -> None: ...
    def fail(self, error: BaseException, unfinished: Sequence[InvalidToolCall]) -> None: ...
    def close(self) -> None: ...


class Watcher(Protocol):
    def stream(self, provider: str, request: Request | None) -> StreamWatch: ...
    async def tool(self, call: ToolCall | CustomToolCall, run: Awaitable[T]) -> T: ...


class Request:
    """What the edge knows of the request a stream answers: its secrets (scrubbed from any text
    telemetry records) and its server's address."""

    __slots__ = ("address", "port", "secrets")

    def __init__(self, secrets: Sequence[str], address: str | None = None, port: int | None = None) -> None:
        self.secrets = tuple(secrets)
        self.address = address
        self.port = port

    @classmethod
    def of(cls, request: Any, secrets: Sequence[str]) -> Request:
        """An httpx or httpx2 request's server (read by its shape), with its ``secrets``."""
        return cls(secrets, request.url.host, request.url.port)


_watcher: Watcher | None = None
_request: ContextVar[Request | None] | None = None  # made by the first watcher installed: read only then


def install(new: Watcher | None) -> None:
    global _watcher, _request
    if new is not None and _request is None:
        from contextvars import ContextVar  # telemetry's alone: a program without it never loads it

        _request = ContextVar("streamkit_request", default=None)
    _watcher = new


def watcher() -> Watcher | None:
    return _watcher


def watch(provider: str) -> StreamWatch | None:
    """A new stream's watch, or ``None`` when telemetry is off (the common case: one read)."""
    current = _watcher
    if current is None or _request is None:
        return None
    return current.stream(provider, _request.get())


async def traced(call: ToolCall | CustomToolCall, run: Awaitable[T]) -> T:
    """``await run``, inside an ``execute_tool`` span linked to ``call`` when telemetry is on:
    ``run_tools``' outcome of a call (a ``ToolResult``), or an early starter's run of its tool."""
    current = _watcher
    if current is None:
        return await run
    return await current.tool(call, run)


def within(request: Request | None, make: Callable[[], T]) -> T:
    """``make()``, whose stream telemetry then knows as the answer to ``request`` (if any)."""
    if request is None or _watcher is None or _request is None:
        return make()
    token = _request.set(request)
    try:
        return make()
    finally:
        _request.reset(token)
