"""run_tools: each tool starts at its call's end marker, results come in call order, and
nothing runs that should not (invalid, truncated, repeated), under asyncio and trio.

The event sources are memory streams and generators that wait on the tools' own flags, so the
order of things is proven by the test's structure, never by a clock: a source that waits for a
tool to start before it sends the rest would hang (and hit the guard) if tools only started at
the end of the stream.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest

import streamkit
from streamkit import (
    ArgumentIssue,
    InvalidToolCall,
    ProviderError,
    ResponseEnd,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolResult,
    TransportError,
    UsageError,
)
from streamkit.adapters import anthropic
from streamkit.adapters._base import TRUNCATED_MESSAGE, error_payload

from .helpers import FIXTURES, waited
from .server import LoopbackServer, Reply

pytestmark = pytest.mark.anyio

GUARD = 10  # seconds before a test that waits on a flag gives up: a hang is a failure, not a timing
WEATHER = ToolCall(0, "call_A", "get_weather", {"city": "Paris"})
STOCK = ToolCall(1, "call_B", "get_stock", {"ticker": "AAPL"})
CUT = InvalidToolCall(
    2, "call_C", "get_weather", '{"city": "Ber', (ArgumentIssue("truncated", "the arguments were cut off"),)
)


def sse(case: str) -> bytes:
    return (FIXTURES / "anthropic" / f"{case}.sse").read_bytes()


def after_first_call(data: bytes) -> int:
    """Where the first call of an Anthropic turn has ended: just after its ``content_block_stop``."""
    stop = b'{"type":"content_block_stop","index":1}\n\n'
    return data.index(stop) + len(stop)


def tool_error(message: str) -> dict[str, Any]:
    return {"ok": False, "errors": [{"kind": "tool_error", "message": message}]}


CANCELLED = {
    "ok": False,
    "errors": [
        {
            "kind": "tool_cancelled",
            "message": "the tool was started, then cancelled when the stream failed: it may have had effects",
        }
    ],
}
NOT_RUN = {
    "ok": False,
    "errors": [{"kind": "not_run", "message": "the tool was not run: the stream failed before it could start"}],
}


async def test_results_come_in_call_order_whatever_order_the_tools_finish_in() -> None:
    stock_done = anyio.Event()

    async def get_weather(city: str) -> str:
        await waited(stock_done, "get_stock to finish")  # finishes last, though called first
        return f"21C in {city}"

    threads: list[threading.Thread] = []

    def get_stock(ticker: str) -> dict[str, Any]:  # a sync tool: runs in a worker thread
        threads.append(threading.current_thread())
        anyio.from_thread.run_sync(stock_done.set)
        return {"ticker": ticker, "price": 182.5}

    async def source() -> AsyncIterator[StreamEvent]:
        yield TextDelta("Checking both.")
        yield WEATHER
        yield STOCK
        yield CUT
        yield ResponseEnd("tool_use")

    with anyio.fail_after(GUARD):
        results = await streamkit.run_tools(source(), {"get_weather": get_weather, "get_stock": get_stock})
    assert results == [
        ToolResult(WEATHER, "21C in Paris"),
        ToolResult(STOCK, {"ticker": "AAPL", "price": 182.5}),
        ToolResult(CUT, error=error_payload(CUT)),
    ]
    assert len(threads) == 1 and threads[0] is not threading.current_thread()
    assert [(r.id, r.name, r.is_error) for r in results] == [
        ("call_A", "get_weather", False),
        ("call_B", "get_stock", False),
        ("call_C", "get_weather", True),
    ]


async def test_a_tool_starts_when_its_call_ends_while_the_model_still_streams() -> None:
    """The bytes of a real Anthropic turn go through a memory stream; the rest of the turn is
    only sent once the first tool has started."""
    data = sse("text_then_two_calls")
    first_end = after_first_call(data)
    log: list[str] = []
    started = anyio.Event()

    async def get_weather(city: str, units: str) -> str:
        log.append(f"get_weather({city}, {units}) started")
        started.set()
        return "21C"

    async def get_stock(ticker: str) -> str:
        log.append(f"get_stock({ticker}) started")
        return "182.5"

    send, receive = anyio.create_memory_object_stream[bytes](100)

    async def model() -> None:
        async with send:
            await send.send(data[:first_end])
            await waited(started, "the first tool to start")
            log.append("the rest of the turn sent")
            await send.send(data[first_end:])

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as group:
            group.start_soon(model)
            events = streamkit.aiter_events(receive, "anthropic")
            results = await streamkit.run_tools(events, {"get_weather": get_weather, "get_stock": get_stock})
    assert log == ["get_weather(Paris, c) started", "the rest of the turn sent", "get_stock(AAPL) started"]
    assert [r.output for r in results] == ["21C", "182.5"]
    assert [r.id for r in results] == ["toolu_A", "toolu_B"]


def held_until(data: bytes, split: int, started: threading.Event, *, cut: bool = False) -> Reply:
    """The server sends ``data[:split]``, then the rest only once ``started`` is set (it waits in
    its own thread); with ``cut``, the connection drops before the body ends."""
    rest = data[split:]

    def after_the_tool_started(number: int) -> bytes:
        assert started.wait(GUARD), "the tool did not start while the model was streaming"
        return rest

    return Reply([data[:split]], endless=after_the_tool_started, endless_limit=len(rest), cut=cut)


async def test_over_http_the_first_tool_runs_before_the_server_sends_the_rest(server: LoopbackServer) -> None:
    data = sse("text_then_two_calls")
    first_end = after_first_call(data)
    started = threading.Event()

    def get_weather(city: str, units: str) -> str:  # a sync tool, in its worker thread
        started.set()
        return f"21{units.upper()} in {city}"

    async def get_stock(ticker: str) -> float:
        return 182.5

    server.routes["/v1/messages"] = held_until(data, first_end, started)
    async with httpx.AsyncClient() as client:
        with anyio.fail_after(GUARD):
            async with streamkit.astream(client, "anthropic", server.url("/v1/messages")) as events:
                results = await streamkit.run_tools(events, {"get_weather": get_weather, "get_stock": get_stock})
    assert [(r.id, r.output) for r in results] == [("toolu_A", "21C in Paris"), ("toolu_B", 182.5)]


async def test_over_http_a_dropped_connection_cancels_the_running_tool(server: LoopbackServer) -> None:
    data = sse("text_then_two_calls")
    first_end = after_first_call(data)
    started = threading.Event()
    seen: list[str] = []

    async def get_weather(city: str, units: str) -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            seen.append("cancelled")
            raise
        return "never"

    server.routes["/v1/messages"] = held_until(data[: first_end + 200], first_end, started, cut=True)
    async with httpx.AsyncClient() as client:
        with anyio.fail_after(GUARD), pytest.raises(TransportError, match="the connection closed") as info:
            async with streamkit.astream(client, "anthropic", server.url("/v1/messages")) as events:
                await streamkit.run_tools(events, {"get_weather": get_weather, "get_stock": print})
    assert seen == ["cancelled"]
    [stopped] = info.value.tool_results  # type: ignore[attr-defined]
    assert (stopped.name, stopped.outcome, stopped.error) == ("get_weather", "cancelled", CANCELLED)


async def test_the_next_event_is_read_only_once_the_tool_has_begun() -> None:
    """Even when the source hands out its events without ever waiting."""
    log: list[str] = []

    async def get_weather(city: str) -> str:
        log.append(f"{city} begun")
        await anyio.lowlevel.checkpoint()
        log.append(f"{city} done")
        return city

    async def source() -> AsyncIterator[StreamEvent]:
        yield WEATHER
        log.append("next event read")
        yield ToolCall(1, "call_B", "get_weather", {"city": "Oslo"})
        log.append("stream ended")

    await streamkit.run_tools(source(), {"get_weather": get_weather})
    order = ["Paris begun", "next event read", "Oslo begun", "stream ended"]
    assert [log.index(entry) for entry in order] == sorted(log.index(entry) for entry in order), log


async def test_at_most_concurrency_tools_run_at_once() -> None:
    calls = [ToolCall(i, f"call_{i}", "work", {"n": i}) for i in range(5)]
    running: list[int] = []
    peak = 0
    started: list[int] = []
    release = anyio.Event()
    two_running = anyio.Event()

    async def work(n: int) -> int:
        nonlocal peak
        started.append(n)
        running.append(n)
        peak = max(peak, len(running))
        if len(running) == 2:
            two_running.set()
        await waited(release, "the release of the tools")
        running.remove(n)
        return n * 10

    async def opener() -> None:
        await waited(two_running, "two tools running")
        for _ in range(20):  # give a third tool every chance to start, were it allowed to
            await anyio.lowlevel.checkpoint()
        assert started == [0, 1]
        release.set()

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as group:
            group.start_soon(opener)
            results = await streamkit.run_tools(calls, {"work": work}, concurrency=2)
    assert peak == 2
    assert sorted(started) == [0, 1, 2, 3, 4]  # those released together start in any order (trio shuffles)
    assert [r.output for r in results] == [0, 10, 20, 30, 40]


async def test_cancelling_the_caller_cancels_every_tool_it_started() -> None:
    seen: list[str] = []
    both_started = anyio.Event()

    async def wait_forever(city: str) -> None:
        seen.append(f"{city} started")
        if len(seen) == 2:
            both_started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            seen.append(f"{city} cancelled")
            raise

    async def source() -> AsyncIterator[StreamEvent]:
        yield WEATHER
        yield ToolCall(1, "call_B", "get_weather", {"city": "Oslo"})
        await anyio.sleep_forever()  # the model is still streaming

    outcome: list[object] = []

    async def caller() -> None:
        outcome.append(await streamkit.run_tools(source(), {"get_weather": wait_forever}))

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as group:
            group.start_soon(caller)
            await waited(both_started, "both tools to start")
            group.cancel_scope.cancel()
    assert sorted(seen) == ["Oslo cancelled", "Oslo started", "Paris cancelled", "Paris started"]
    assert outcome == []


async def test_a_stream_that_fails_cancels_the_tools_and_raises_its_own_error_with_the_results_made() -> None:
    """A real Anthropic stream that reports an error mid-way: the first call's tool is running
    when the error comes and is cancelled; the call the error cut never runs."""
    seen: list[str] = []
    started = anyio.Event()

    async def get_weather(city: str) -> str:
        seen.append(city)
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            seen.append(f"{city} cancelled")
            raise
        return "never"

    send, receive = anyio.create_memory_object_stream[bytes](100)
    data = sse("error_midstream")

    async def model() -> None:
        async with send:
            head = data.index(b"event: content_block_start", data.index(b'"content_block_stop"'))
            await send.send(data[:head])
            await waited(started, "the first tool to start")
            await send.send(data[head:])

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as group:
            group.start_soon(model)
            with pytest.raises(ProviderError, match="overloaded_error: Overloaded") as info:
                await streamkit.run_tools(streamkit.aiter_events(receive, "anthropic"), {"get_weather": get_weather})
    assert seen == ["Oslo", "Oslo cancelled"]  # the cut call ("Ber...") never ran
    [stopped] = info.value.tool_results  # type: ignore[attr-defined]
    assert (stopped.call.input, stopped.outcome, stopped.error) == ({"city": "Oslo"}, "cancelled", CANCELLED)
    assert [call.raw for call in info.value.unfinished] == ['{"city": "Ber']
    assert info.value.__notes__[-1] == (
        "streamkit.run_tools: the tools still running were cancelled; 0 result(s) made, 1 call(s) cancelled or not run"
    )


async def test_a_truncated_call_never_runs_and_the_model_is_told_it_was_cut_off() -> None:
    ran: list[dict[str, Any]] = []

    def record(**kwargs: Any) -> str:
        ran.append(kwargs)
        return "ok"

    events = streamkit.aiter_events([sse("max_tokens_truncated")], "anthropic")
    results = await streamkit.run_tools(events, {"get_weather": record, "write_file": record})
    assert ran == [{"city": "Paris"}]
    assert [r.is_error for r in results] == [False, True]
    assert anthropic.tool_results_message(results)[0]["content"][1] == {
        "type": "tool_result",
        "tool_use_id": "toolu_B",
        "content": '{"ok":false,"errors":[{"kind":"truncated","message":"' + TRUNCATED_MESSAGE + '"}]}',
        "is_error": True,
    }


async def test_a_repeated_call_id_runs_once_and_has_one_result() -> None:
    ran: list[str] = []

    async def get_weather(city: str) -> str:
        ran.append(city)
        return city

    again = ToolCall(3, "call_A", "get_weather", {"city": "Paris"})
    no_id = [ToolCall(0, None, "get_weather", {"city": "Rome"}), ToolCall(1, None, "get_weather", {"city": "Rome"})]
    results = await streamkit.run_tools([WEATHER, again, WEATHER, *no_id], {"get_weather": get_weather})
    assert ran == ["Paris", "Rome", "Rome"]  # calls without ids are told apart by their slot
    assert [r.call for r in results] == [WEATHER, *no_id]


async def test_an_unknown_tool_and_a_tool_that_raises_are_error_results() -> None:
    def get_weather(city: str) -> str:
        raise LookupError(f"no weather for {city}")

    boom = ValueError()

    async def get_stock(ticker: str) -> str:
        raise boom

    calls = [WEATHER, STOCK, ToolCall(2, "call_C", "send_mail", {}), ToolCall(3, "call_D", "get_stock", {"x": 1})]
    results = await streamkit.run_tools(calls, {"get_weather": get_weather, "get_stock": get_stock})
    # The words a Toolset uses for a tool not offered:
    unknown = 'no tool named "send_mail" was offered; the offered tools are: get_weather, get_stock'
    assert results == [
        ToolResult(WEATHER, error=tool_error("LookupError: no weather for Paris")),
        ToolResult(STOCK, error=tool_error("ValueError")),
        ToolResult(calls[2], error={"ok": False, "errors": [{"kind": "unknown_tool", "message": unknown}]}),
        ToolResult(
            calls[3],
            error=tool_error(
                "TypeError: test_an_unknown_tool_and_a_tool_that_raises_are_error_results."
                "<locals>.get_stock() got an unexpected keyword argument 'x'"
            ),
        ),
    ]
    assert isinstance(results[0].exception, LookupError)
    assert results[1].exception is boom


async def test_pass_call_hands_the_tool_the_call_itself() -> None:
    async def echo(call: ToolCall) -> str:
        return f"{call.id}:{call.name}:{call.input}"

    class Counter:  # a callable object whose __call__ is async is awaited too
        async def __call__(self, call: ToolCall) -> int:
            return call.index

    results = await streamkit.run_tools([WEATHER, STOCK], {"get_weather": echo, "get_stock": Counter()}, pass_call=True)
    assert [r.output for r in results] == ["call_A:get_weather:{'city': 'Paris'}", 1]


async def test_bad_arguments_and_items_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="concurrency must be a whole number of at least 1, got 0"):
        await streamkit.run_tools([], {}, concurrency=0)
    with pytest.raises(UsageError, match="concurrency must be a whole number of at least 1, got True"):
        await streamkit.run_tools([], {}, concurrency=True)
    with pytest.raises(UsageError, match=r"tools\['f'\] must be a function, under its tool's name, got int"):
        await streamkit.run_tools([], {"f": 1})  # type: ignore[dict-item]
    with pytest.raises(UsageError, match="tools must be a mapping of tool name to function, got list"):
        await streamkit.run_tools([], [print])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="pass_call must be True or False, got 1"):
        await streamkit.run_tools([], {}, pass_call=1)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="events must be an async iterable of streamkit events or calls, got int"):
        await streamkit.run_tools(3, {})  # type: ignore[arg-type]

    closed: list[bool] = []

    async def source() -> AsyncIterator[StreamEvent]:
        try:
            yield TextDelta("hi")
            yield {"name": "get_weather"}  # type: ignore[misc]
            yield WEATHER
        finally:
            closed.append(True)

    with pytest.raises(UsageError, match=r"events\[1\] is not a streamkit event or call: dict") as info:
        await streamkit.run_tools(source(), {"get_weather": print})
    assert closed == [True]  # the source was closed, not left to the collector
    assert info.value.tool_results == ()  # type: ignore[attr-defined]
    assert await streamkit.run_tools([], {}) == []


# -- every call ends with exactly one outcome ------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # trio cancels only through its scopes
async def test_a_tools_own_cancelled_error_is_its_failure_and_the_others_go_on() -> None:
    """The tool awaited a future that another task cancelled: that tool failed; run_tools was not
    cancelled, so the stream is read to its end and the other call runs."""
    import asyncio

    async def get_weather(city: str) -> str:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        future.cancel()  # what another task does to something the tool waits on
        return await future

    async def get_stock(ticker: str) -> str:
        return "182.5"

    results = await streamkit.run_tools([WEATHER, STOCK], {"get_weather": get_weather, "get_stock": get_stock})
    assert [(r.name, r.outcome, r.error or r.output) for r in results] == [
        ("get_weather", "failed", tool_error("CancelledError")),
        ("get_stock", "ok", "182.5"),
    ]
    assert isinstance(results[0].exception, asyncio.CancelledError)


async def test_an_exception_whose_text_cannot_be_read_is_still_one_error_result() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    async def get_weather(city: str) -> str:
        raise Unprintable

    [result] = await streamkit.run_tools([WEATHER], {"get_weather": get_weather})
    assert (result.outcome, result.error) == (
        "failed",
        tool_error("Unprintable (its text could not be read: RuntimeError)"),
    )
    assert isinstance(result.exception, Unprintable)


async def test_when_the_stream_fails_a_started_tool_is_cancelled_and_a_queued_one_not_run() -> None:
    started = anyio.Event()

    async def get_weather(city: str) -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    async def source() -> AsyncIterator[StreamEvent]:
        yield WEATHER
        yield STOCK  # waits for the one slot concurrency=1 allows
        await waited(started, "the first tool to start")
        raise ProviderError(type="overloaded_error", message="Overloaded")

    with anyio.fail_after(GUARD), pytest.raises(ProviderError) as info:
        await streamkit.run_tools(source(), {"get_weather": get_weather, "get_stock": print}, concurrency=1)
    assert [(r.name, r.outcome, r.error) for r in info.value.tool_results] == [  # type: ignore[attr-defined]
        ("get_weather", "cancelled", CANCELLED),
        ("get_stock", "not_run", NOT_RUN),
    ]


async def test_every_outcome_has_its_name() -> None:
    async def get_weather(city: str) -> str:
        raise LookupError(city)

    results = await streamkit.run_tools(
        [WEATHER, STOCK, CUT, ToolCall(3, "call_D", "send_mail", {})],
        {"get_weather": get_weather, "get_stock": lambda ticker: ticker},
    )
    assert [r.outcome for r in results] == ["failed", "ok", "refused", "refused"]
    assert streamkit.ToolResult(WEATHER, error=CANCELLED).outcome == "cancelled"


# -- tools that must not start early ---------------------------------------------------------------


@pytest.mark.parametrize("early", [False, {"get_stock"}])
async def test_a_tool_held_from_early_start_runs_only_once_the_stream_has_ended(early: bool | set[str]) -> None:
    log: list[str] = []

    async def get_weather(city: str) -> str:
        log.append("get_weather ran")
        return "21C"

    async def get_stock(ticker: str) -> str:
        log.append("get_stock ran")
        return "182.5"

    async def source() -> AsyncIterator[StreamEvent]:
        yield WEATHER
        yield STOCK
        await anyio.lowlevel.checkpoint()  # a started tool runs here
        log.append("the stream ended")
        yield ResponseEnd("tool_calls")

    tools = {"get_weather": get_weather, "get_stock": get_stock}
    results = await streamkit.run_tools(source(), tools, early=early)
    if early is False:
        assert log == ["the stream ended", "get_weather ran", "get_stock ran"]
    else:
        assert log == ["get_stock ran", "the stream ended", "get_weather ran"]
    assert [r.output for r in results] == ["21C", "182.5"]


async def test_a_held_tool_never_runs_when_the_stream_fails() -> None:
    ran: list[str] = []

    async def source() -> AsyncIterator[StreamEvent]:
        yield WEATHER
        raise ProviderError(type="overloaded_error", message="Overloaded")

    with pytest.raises(ProviderError) as info:
        await streamkit.run_tools(source(), {"get_weather": ran.append}, early=False)
    assert ran == []
    assert [(r.name, r.outcome, r.error) for r in info.value.tool_results] == [  # type: ignore[attr-defined]
        ("get_weather", "not_run", NOT_RUN)
    ]


@pytest.mark.parametrize("early", ["get_weather", 1, [1]])
async def test_early_must_be_a_flag_or_tool_names(early: object) -> None:
    with pytest.raises(UsageError, match="early must be True, False or a collection of tool names"):
        await streamkit.run_tools([], {}, early=early)  # type: ignore[arg-type]


# -- what a tool raises that is not its failure, and cancellation ---------------------------------


class Stop(BaseException):
    """A BaseException of the application's own (as KeyboardInterrupt or pytest's Failed are)."""


def stopping(kind: str) -> BaseException:
    if kind == "pytest.fail":
        try:
            pytest.fail("the tool's own check failed")
        except pytest.fail.Exception as exc:
            return exc
    return {"KeyboardInterrupt": KeyboardInterrupt("stop"), "Stop": Stop("stop")}[kind]


@pytest.mark.parametrize("threaded", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("kind", ["Stop", "pytest.fail", "KeyboardInterrupt"])
async def test_a_base_exception_from_a_tool_reaches_the_caller_as_itself_with_every_result(
    kind: str, threaded: bool
) -> None:
    """One tool returned, one raises a BaseException, one is still running: the caller gets that
    very exception, unwrapped, with every call's one outcome on its ``tool_results``."""
    raised = stopping(kind)
    weather_done = anyio.Event()
    waiting = anyio.Event()
    send = ToolCall(2, "call_C", "send_mail", {"to": "ann"})

    async def get_weather(city: str) -> str:
        weather_done.set()
        return f"21C in {city}"

    def get_stock(ticker: str) -> str:  # a sync tool: it raises in its worker thread
        raise raised

    async def get_stock_async(ticker: str) -> str:
        raise raised

    async def send_mail(to: str) -> str:
        waiting.set()
        await anyio.sleep_forever()
        return "never"

    async def source() -> AsyncIterator[StreamEvent]:
        yield WEATHER
        yield send
        await waited(weather_done, "get_weather to return")
        await waited(waiting, "send_mail to start")
        yield STOCK
        await anyio.sleep_forever()  # the model is still streaming

    tools = {
        "get_weather": get_weather,
        "get_stock": get_stock if threaded else get_stock_async,
        "send_mail": send_mail,
    }
    with anyio.fail_after(GUARD), pytest.raises(type(raised)) as info:
        await streamkit.run_tools(source(), tools)
    assert info.value is raised
    why = f"get_stock (call call_B) raised {type(raised).__name__}"
    message = f"the tool was started, then cancelled when {why}: it may have had effects"
    stopped = {"ok": False, "errors": [{"kind": "tool_cancelled", "message": message}]}
    assert info.value.tool_results == (  # type: ignore[attr-defined]
        ToolResult(WEATHER, "21C in Paris"),
        ToolResult(send, error=stopped),
        ToolResult(STOCK, error=tool_error(f"{type(raised).__name__}: {raised}"), exception=raised),
    )
    assert info.value.tool_results[2].exception is raised  # type: ignore[attr-defined]
    assert info.value.__notes__[-1] == (
        f"streamkit.run_tools: {why}; the tools still running were cancelled; 2 result(s) made, "
        "1 call(s) cancelled or not run"
    )


async def test_a_cancelled_caller_gets_control_back_while_a_sync_tool_still_runs() -> None:
    """A sync tool's thread cannot be stopped, but the caller does not wait for it: run_tools
    returns to its cancelled caller while the tool is still blocked (it is released only after)."""
    entered, leave, finished = threading.Event(), threading.Event(), threading.Event()

    def write_file(path: str) -> str:
        entered.set()
        leave.wait(GUARD)
        finished.set()
        return f"wrote {path}"

    async def source() -> AsyncIterator[StreamEvent]:
        yield ToolCall(0, "call_A", "write_file", {"path": "notes.txt"})
        await anyio.sleep_forever()  # the model is still streaming

    outcome: list[object] = []

    async def caller() -> None:
        outcome.append(await streamkit.run_tools(source(), {"write_file": write_file}))

    try:
        with anyio.fail_after(GUARD):
            async with anyio.create_task_group() as group:
                group.start_soon(caller)
                await anyio.to_thread.run_sync(entered.wait, GUARD)
                group.cancel_scope.cancel()
            assert (outcome, finished.is_set()) == ([], False)  # back while the tool still runs
    finally:
        leave.set()
    await anyio.to_thread.run_sync(finished.wait, GUARD)


async def test_a_sync_tool_running_when_the_stream_fails_is_left_to_its_thread() -> None:
    """The stream's error comes at once: the sync tool, still blocked in its thread, is not
    waited for, and its call is marked cancelled, told apart as still running."""
    entered, leave, finished = threading.Event(), threading.Event(), threading.Event()

    def write_file(path: str) -> str:
        entered.set()
        leave.wait(GUARD)
        finished.set()
        return f"wrote {path}"

    call = ToolCall(0, "call_A", "write_file", {"path": "notes.txt"})

    async def source() -> AsyncIterator[StreamEvent]:
        yield call
        await anyio.to_thread.run_sync(entered.wait, GUARD)
        raise ProviderError(type="overloaded_error", message="Overloaded")

    try:
        with anyio.fail_after(GUARD), pytest.raises(ProviderError) as info:
            await streamkit.run_tools(source(), {"write_file": write_file})
        assert not finished.is_set()
    finally:
        leave.set()
    await anyio.to_thread.run_sync(finished.wait, GUARD)
    message = (
        "the tool was started in a worker thread, which cannot be stopped, and was left running when the "
        "stream failed: it may have had effects, and may still have them"
    )
    assert info.value.tool_results == (  # type: ignore[attr-defined]
        ToolResult(call, error={"ok": False, "errors": [{"kind": "tool_cancelled", "message": message}]}),
    )
    assert info.value.tool_results[0].outcome == "cancelled"  # type: ignore[attr-defined]


async def test_a_base_exception_from_the_stream_reaches_the_caller_as_itself() -> None:
    raised = Stop("the source stopped")
    started = anyio.Event()

    async def get_weather(city: str) -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    async def source() -> AsyncIterator[StreamEvent]:
        yield WEATHER
        await waited(started, "the tool to start")
        raise raised

    with anyio.fail_after(GUARD), pytest.raises(Stop) as info:
        await streamkit.run_tools(source(), {"get_weather": get_weather})
    assert info.value is raised
    assert info.value.tool_results == (ToolResult(WEATHER, error=CANCELLED),)  # type: ignore[attr-defined]


async def test_a_tool_output_json_cannot_carry_is_its_failure_naming_the_tool_the_call_and_the_type() -> None:
    class Forecast:  # an object of the application's own
        pass

    def get_weather(city: str) -> set[str]:
        return {"sun", "rain"}

    async def get_stock(ticker: str) -> dict[str, object]:
        return {"ticker": ticker, "history": Forecast()}

    results = await streamkit.run_tools([WEATHER, STOCK], {"get_weather": get_weather, "get_stock": get_stock})
    advice = (
        "which JSON cannot carry: a tool returns a string, or JSON values (dict, list, str, int, float, bool, None)"
    )
    assert [(r.outcome, r.error) for r in results] == [
        ("failed", tool_error(f"the output of get_weather (call call_A) is of type set, {advice}")),
        (
            "failed",
            tool_error(f"the output of get_stock (call call_B) holds a value of type Forecast at $.history, {advice}"),
        ),
    ]
    assert all(isinstance(r.exception, UsageError) for r in results)
    for adapter in streamkit.ADAPTERS.values():  # every adapter writes them as the error results they are
        assert adapter.tool_results_message(results)
    assert anthropic.tool_results_message(results)[0]["content"][0]["is_error"] is True
