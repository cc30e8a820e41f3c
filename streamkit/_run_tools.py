"""Running the application's own tools while the model still streams.

``run_tools`` reads the values ``aiter_events`` yields (or bare calls) and starts each call's
tool the moment the call is complete, at its own end marker, instead of after the whole
response. Nothing runs that should not: an invalid call (a truncated one among them) is
answered with the error the adapters send for it, a call to a tool not given with an
``unknown_tool`` error, and a call id seen before is not run again. The tools run in one anyio
task group, so asyncio and trio alike: when the stream fails, a tool raises what is no
``Exception`` (``KeyboardInterrupt``, a test's failure) or the caller is cancelled, every tool
started is cancelled before the error goes on, and none is waited for: a sync tool's thread
cannot be stopped, so it is left to run on, its call marked cancelled. Nothing is raised out of
the group itself (it would wrap it in an exception group): a failure is kept, and raised as
itself once the group has ended.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import AsyncIterable, AsyncIterator, Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from . import _observe
from ._errors import UsageError
from ._turn_types import StreamEvent
from ._types import Call, CustomToolCall, InvalidToolCall, JSONObject, ToolCall, ToolResult
from ._validate import unknown_tool
from .adapters._base import error_payload, failure_payload, named, output_json

if TYPE_CHECKING:
    import anyio
    import anyio.abc

__all__ = ("DEFAULT_CONCURRENCY", "run_tools")

#: How many tools run at once unless told otherwise; the calls after wait, in call order.
DEFAULT_CONCURRENCY = 8

Tool = Callable[..., Any]


async def run_tools(
    events: AsyncIterable[StreamEvent] | Iterable[StreamEvent],
    tools: Mapping[str, Tool],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    pass_call: bool = False,
    early: bool | Collection[str] = True,
) -> list[ToolResult]:
    """Run each call's tool as soon as the call completes; every call's result, in call order.

    Args:
        events: what ``aiter_events`` (or ``aiter_tool_calls``) yields, consumed to its end;
            only the calls are used. A plain iterable (``turn.calls``) is taken too, and then
            nothing starts early.
        tools: tool name -> function. A function is called with the call's input as keyword
            arguments (``tool(**call.input)``), a custom tool's (``CustomToolCall``) with its
            text as the one positional argument (``tool(call.input)``), or with the call
            itself when ``pass_call`` is true. An ``async def`` function is awaited; any other runs in a
            worker thread (``anyio.to_thread``), so it never blocks the stream.
        concurrency: at most this many tools run at once; the calls beyond wait their turn.
        pass_call: call each tool with the ``ToolCall`` (or ``CustomToolCall``) instead of its input.
        early: which tools start at their call's end marker: all (``True``), none (``False``),
            or the tools named. The others (a tool that needs an approval, or is not
            idempotent) start only once the stream has ended cleanly, and never when it fails.

    Returns:
        One ``ToolResult`` per call id, in the order the calls came: the tool's output, or an
        error for an invalid call (never run), a tool not in ``tools``, or a tool that raised
        (the exception's type and text, the exception kept on the result; a ``CancelledError``
        of the tool's own, from something it awaited, is such a failure too). ``outcome`` says
        which. Every adapter's ``tool_results_message`` writes the list.

    Raises:
        StreamkitError: the stream's own error, after cancelling the tools still running; every
            call seen has its one outcome on the error's ``tool_results`` attribute: the
            results made, the tools started and then cancelled (``outcome == "cancelled"``:
            they may have had effects; a sync tool's thread cannot be stopped, and is left
            running, not waited for), and the ones never started (``"not_run"``).
        BaseException: what a tool raised that is no ``Exception`` (``KeyboardInterrupt``,
            ``SystemExit``, pytest's ``fail()``), as itself, never wrapped, once the other tools
            are cancelled; its ``tool_results`` attribute holds every call's outcome as for a
            stream's error (the raising tool's is ``"failed"``, with the exception on it). A
            cancellation of the caller cancels every tool, and returns at once.
        UsageError: a bad argument, or an item that is not a streamkit value.
    """
    import anyio  # imported where it is used: ``import streamkit`` does without it

    _check(tools, concurrency, pass_call, early)
    run = _Run(tools, anyio.CapacityLimiter(concurrency), pass_call, early)
    iterator = _aiter(events)
    try:
        async with anyio.create_task_group() as group:
            run.scope = group.cancel_scope
            try:
                await run.read(iterator, group)
                await run.start_held(group)
            except anyio.get_cancelled_exc_class():
                raise  # the caller's cancellation, or the run's own stop: the group takes it
            except BaseException as exc:
                run.stop(exc, _STREAM_FAILED)
    finally:
        if run.failure is not None:  # raised even when the caller was cancelled at the same time
            raise run.failed()
    return run.results()


class _Run:
    """One run: the tools, the bound on how many run at once, and a slot per call, in call order."""

    def __init__(
        self, tools: Mapping[str, Tool], limiter: anyio.CapacityLimiter, pass_call: bool, early: bool | Collection[str]
    ) -> None:
        self.tools = tools
        self.pass_call = pass_call
        self.limiter = limiter
        self.early = early
        self.calls: list[Call] = []
        self.slots: list[ToolResult | None] = []
        self.begun: set[int] = set()
        self.threads: set[int] = set()  # the slots whose sync tool was handed to its thread and is not back
        self.held: list[int] = []  # the slots of calls that start once the stream has ended
        self.seen: set[tuple[object, ...]] = set()
        self.scope: anyio.CancelScope | None = None  # the task group's, once it is made
        self.failure: BaseException | None = None  # what stopped the run, raised once the group has ended
        self.why = ""  # what stopped it, in words: "the stream failed", "get_x (call c1) raised ..."

    def stop(self, failure: BaseException, why: str) -> None:
        """Cancel every tool still running, keeping ``failure`` (the first one) to raise."""
        if self.failure is None:
            self.failure, self.why = failure, why
            assert self.scope is not None
            self.scope.cancel()

    def failed(self) -> BaseException:
        """What stopped the run, with every call's outcome on its ``tool_results``, and a note that
        counts them."""
        failure = self.failure
        assert failure is not None
        done = self.results()
        failure.tool_results = tuple(done)  # type: ignore[attr-defined]
        stopped = sum(result.outcome in ("cancelled", "not_run") for result in done)
        cause = "" if self.why == _STREAM_FAILED else f"{self.why}; "
        failure.add_note(
            f"streamkit.run_tools: {cause}the tools still running were cancelled; {len(done) - stopped} result(s) "
            f"made, {stopped} call(s) cancelled or not run"
        )
        return failure

    def results(self) -> list[ToolResult]:
        """One result per call, in call order: a call left without one was stopped before its tool
        returned, told apart by whether its tool had begun and whether its thread runs on."""
        return [
            result if result is not None else _stopped(call, slot in self.begun, slot in self.threads, self.why)
            for slot, (call, result) in enumerate(zip(self.calls, self.slots, strict=True))
        ]

    async def read(self, iterator: AsyncIterator[Any], group: anyio.abc.TaskGroup) -> None:
        """Read the stream to its end, each new call refused at once, held, or its tool started."""
        try:
            position = 0
            async for event in iterator:
                call = _call_of(event, position)
                position += 1
                if call is None or _key(call) in self.seen:
                    continue
                self.seen.add(_key(call))
                self.calls.append(call)
                self.slots.append(_refused(call, self.tools))
                slot = len(self.slots) - 1
                if self.slots[slot] is not None:
                    continue
                if self.early is True or (self.early is not False and call.name in self.early):
                    await group.start(self.run, call, slot)
                else:
                    self.held.append(slot)
        except BaseException:
            await _close(iterator)  # left early: an async generator's own cleanup runs now, not at collection
            raise

    async def start_held(self, group: anyio.abc.TaskGroup) -> None:
        """The stream ended cleanly: start the tools that were not to start early, in call order."""
        for slot in self.held:
            call = self.calls[slot]
            assert not isinstance(call, InvalidToolCall)
            await group.start(self.run, call, slot)

    async def run(self, call: ToolCall | CustomToolCall, slot: int, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Run one call's tool into its slot. The stream is read on once the tool has begun (an
        async tool up to its first wait, a sync one handed to its thread), or is queued for its turn."""
        import anyio

        queued = self.limiter.available_tokens < 1
        if queued:
            task_status.started()
        async with self.limiter:
            if not queued:
                task_status.started()
            self.begun.add(slot)
            result = await _observe.traced(call, self.outcome(call, slot))
            self.slots[slot] = result
            raised = result.exception
            if raised is not None and not isinstance(raised, Exception | anyio.get_cancelled_exc_class()):
                # KeyboardInterrupt, SystemExit, a test's failure: the caller's to handle, not the model's
                self.stop(raised, f"{named(call)} raised {type(raised).__name__}")

    async def outcome(self, call: ToolCall | CustomToolCall, slot: int) -> ToolResult:
        """What running the call's tool gave: its output, or what it raised (never re-raised, but
        for the cancellation of ``run_tools`` itself)."""
        import anyio

        tool = self.tools[call.name]
        if self.pass_call or isinstance(call, CustomToolCall):  # a custom tool takes its text as it is
            bound = functools.partial(tool, call if self.pass_call else call.input)
        else:
            bound = functools.partial(tool, **call.input)
        try:
            if _is_async(tool):
                output = await bound()
            else:
                import anyio.to_thread

                # A thread cannot be stopped: when run_tools is cancelled it is left to run on, and
                # not waited for; its slot stays in ``threads`` so that its call says so.
                self.threads.add(slot)
                output = await anyio.to_thread.run_sync(bound, abandon_on_cancel=True)
                self.threads.discard(slot)
                if inspect.isawaitable(output):
                    output = await output
        except anyio.get_cancelled_exc_class() as exc:
            if anyio.current_effective_deadline() == -math.inf:
                raise  # run_tools itself is cancelled: the slot is marked as the tool stopped
            return ToolResult(call, error=_failure(exc), exception=exc)  # the tool's own: what it awaited was cancelled
        except BaseException as exc:  # kept on the result; one that is no Exception then stops the run
            return ToolResult(call, error=_failure(exc), exception=exc)
        return _returned(call, output)


_STREAM_FAILED = "the stream failed"


def _check(tools: object, concurrency: object, pass_call: object, early: object) -> None:
    if not isinstance(tools, Mapping):
        raise UsageError(f"tools must be a mapping of tool name to function, got {type(tools).__name__}")
    for name, tool in tools.items():
        if not isinstance(name, str) or not callable(tool):
            raise UsageError(f"tools[{name!r}] must be a function, under its tool's name, got {type(tool).__name__}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise UsageError(f"concurrency must be a whole number of at least 1, got {concurrency!r}")
    if not isinstance(pass_call, bool):
        raise UsageError(f"pass_call must be True or False, got {pass_call!r}")
    if not isinstance(early, bool) and (
        not isinstance(early, Collection) or isinstance(early, str) or not all(isinstance(n, str) for n in early)
    ):
        raise UsageError(f"early must be True, False or a collection of tool names, got {early!r}")


async def _over(items: Iterable[StreamEvent]) -> AsyncIterator[StreamEvent]:
    for item in items:
        yield item


def _aiter(events: object) -> AsyncIterator[Any]:
    if isinstance(events, AsyncIterable):
        return aiter(events)
    if isinstance(events, Iterable) and not isinstance(events, str | bytes | Mapping):
        return _over(events)
    raise UsageError(f"events must be an async iterable of streamkit events or calls, got {type(events).__name__}")


def _call_of(event: object, position: int) -> Call | None:
    if isinstance(event, Call):
        return event
    if isinstance(event, StreamEvent):
        return None
    raise UsageError(f"events[{position}] is not a streamkit event or call: {type(event).__name__}")


def _key(call: Call) -> tuple[object, ...]:
    """What makes a call the same call: its id, or its slot for a provider that gives none."""
    return (call.choice, "id", call.id) if call.id else (call.choice, "index", call.index)


def _refused(call: Call, tools: Mapping[str, Tool]) -> ToolResult | None:
    """The result of a call that must not run; ``None`` for a call to run."""
    if isinstance(call, InvalidToolCall):
        return ToolResult(call, error=error_payload(call))
    if call.name not in tools:
        return ToolResult(call, error={"ok": False, "errors": [unknown_tool(call.name, tools).to_dict()]})
    return None


def _returned(call: ToolCall | CustomToolCall, output: Any) -> ToolResult:
    """The result of a tool that returned: its output, or, when JSON cannot carry the output (a
    set, an object of the application's own), a failure the model is told, in the words the
    adapters would refuse it with, that error kept on the result."""
    if not isinstance(output, str):
        try:
            output_json(call, output)
        except UsageError as exc:
            return ToolResult(
                call, error={"ok": False, "errors": [{"kind": "tool_error", "message": str(exc)}]}, exception=exc
            )
    return ToolResult(call, output)


def _failure(exc: BaseException) -> JSONObject:
    """What the model is told about a tool that raised, even when the exception's text cannot be read."""
    try:
        return failure_payload(exc)
    except Exception as unreadable:
        message = f"{type(exc).__name__} (its text could not be read: {type(unreadable).__name__})"
        return {"ok": False, "errors": [{"kind": "tool_error", "message": message}]}


def _stopped(call: Call, begun: bool, threaded: bool, why: str) -> ToolResult:
    """The result of a call whose tool was stopped by ``why`` (the stream's failure, or another
    tool's): not begun, begun and cancelled, or left running in its worker thread."""
    if threaded:
        kind = "tool_cancelled"
        message = (
            f"the tool was started in a worker thread, which cannot be stopped, and was left running when {why}: "
            "it may have had effects, and may still have them"
        )
    elif begun:
        kind, message = "tool_cancelled", f"the tool was started, then cancelled when {why}: it may have had effects"
    else:
        kind, message = "not_run", f"the tool was not run: {why} before it could start"
    return ToolResult(call, error={"ok": False, "errors": [{"kind": kind, "message": message}]})


def _is_async(tool: Tool) -> bool:
    return inspect.iscoroutinefunction(tool) or inspect.iscoroutinefunction(getattr(tool, "__call__", None))  # noqa: B004


async def _close(iterator: AsyncIterator[Any]) -> None:
    close = getattr(iterator, "aclose", None)
    if close is not None:
        await close()
