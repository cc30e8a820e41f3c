"""End to end over loopback HTTP: an httpx client reading realistic turns, with and without streamkit.

``python -m benchmarks.targets --only end-to-end [--repeat N]`` prints the rows.

The server is the repository's loopback server (``tests/server.py``) run in a process of its own
(``python -m benchmarks.endtoend --serve``), so that only the client's CPU time is counted. Every
request gets a fresh turn (``benchmarks.turns``, made by the server from the serial in its path:
a new response id, time and call ids), written one SSE event per write, each write one chunk of
a chunked body; httpx hands each chunk over as one read (two, now and then, where a socket read
ended inside it, as on any network). The client measures its own CPU time
(``time.process_time``) request by request, the sides taking turns, each over its own batch of
fresh turns, and keeps the median of the runs:

- ``httpx + hand loop``: ``client.stream(...)`` and ``benchmarks.turns.HandLoop`` over
  ``iter_bytes()`` (``aiter_bytes()``), the floor;
- ``iter_tool_calls(response)``: the response itself handed to ``iter_tool_calls``
  (``aiter_tool_calls``), which checks it and reads ``iter_bytes()``;
- ``streamkit.stream``: streamkit's HTTP edge (``stream``/``astream`` with the same client),
  which sends the request, checks the answer and reads the body the same way;
- ``the same, body read to its end``: ``iter_tool_calls(response.iter_bytes())``, then the rest
  of the body read. The two above stop reading at the provider's end marker and close the
  response before its last chunk (the chunked body's end) is read, so httpx cannot give the
  connection back to its pool and the next request opens a new one; this side measures what
  that costs the client.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast

import httpx

import streamkit
from streamkit import Provider
from tests.server import LoopbackServer, Reply

from .turns import ahand_loop, hand_loop, make_turn

#: (label, bytes of arguments per call, calls, turns per batch)
TURNS = (("1 KiB x 2", 1024, 2, 20), ("4 KiB x 4", 4096, 4, 4))
WIRES = ("openai_chat", "anthropic")
BODY = {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
#: Serials of the turns the server makes: far from those this process's own turns use.
_FIRST_SERIAL = 1_000_000


class _TurnRoutes(dict[str, Reply]):
    """``/turn/{wire}/{size}/{calls}/{serial}``: that fresh turn, one event per write."""

    def get(self, key: str, default: Reply | None = None) -> Reply | None:  # type: ignore[override]
        _, kind, wire, size, calls, serial = key.split("/")
        if kind != "turn":
            return default
        turn = make_turn(wire, int(size), int(calls), serial=int(serial))
        return Reply(writes=list(turn.events))


def serve() -> None:
    """The server process: print the port, serve until stdin closes."""
    server = LoopbackServer()
    server.routes = _TurnRoutes()
    print(server.port, flush=True)
    sys.stdin.read()
    server.close()


@contextmanager
def _server() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.endtoend", "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        yield f"http://127.0.0.1:{int(process.stdout.readline())}/turn"
    finally:
        process.stdin.close()
        process.wait(10)


Reader = Callable[[httpx.Client, str, str], list[Any]]
AsyncReader = Callable[[httpx.AsyncClient, str, str], Awaitable[list[Any]]]


def _inputs(calls: Any) -> list[Any]:
    return [call.input for call in calls if isinstance(call, streamkit.ToolCall)]


def _hand(client: httpx.Client, url: str, wire: str) -> list[Any]:
    with client.stream("POST", url, json=BODY) as response:
        return hand_loop(response.iter_bytes(), wire)


def _iter(client: httpx.Client, url: str, wire: str) -> list[Any]:
    with client.stream("POST", url, json=BODY) as response:
        return _inputs(streamkit.iter_tool_calls(response, cast(Provider, wire)))


def _edge(client: httpx.Client, url: str, wire: str) -> list[Any]:
    with streamkit.stream(client, cast(Provider, wire), url, json=BODY) as events:
        return _inputs(events.tool_calls())


async def _ahand(client: httpx.AsyncClient, url: str, wire: str) -> list[Any]:
    async with client.stream("POST", url, json=BODY) as response:
        return await ahand_loop(response.aiter_bytes(), wire)


async def _aiter(client: httpx.AsyncClient, url: str, wire: str) -> list[Any]:
    async with client.stream("POST", url, json=BODY) as response:
        return _inputs([call async for call in streamkit.aiter_tool_calls(response, cast(Provider, wire))])


async def _aedge(client: httpx.AsyncClient, url: str, wire: str) -> list[Any]:
    async with streamkit.astream(client, cast(Provider, wire), url, json=BODY) as events:
        return _inputs([call async for call in events.tool_calls()])


def _drained(client: httpx.Client, url: str, wire: str) -> list[Any]:
    with client.stream("POST", url, json=BODY) as response:
        chunks = response.iter_bytes()
        calls = _inputs(streamkit.iter_tool_calls(chunks, cast(Provider, wire)))
        for _ in chunks:  # the body's end, after the end marker: the connection goes back to the pool
            pass
        return calls


class _Kept:
    """A body's chunks that the reader does not close when it stops, so the rest can be read."""

    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self.chunks = chunks

    def __aiter__(self) -> _Kept:
        return self

    async def __anext__(self) -> bytes:
        return await anext(self.chunks)


async def _adrained(client: httpx.AsyncClient, url: str, wire: str) -> list[Any]:
    async with client.stream("POST", url, json=BODY) as response:
        chunks = response.aiter_bytes()
        calls = [call async for call in streamkit.aiter_tool_calls(_Kept(chunks), cast(Provider, wire))]
        async for _ in chunks:  # as in _drained
            pass
        return _inputs(calls)


SIDES: tuple[tuple[str, Reader, AsyncReader], ...] = (
    ("httpx + hand loop", _hand, _ahand),
    ("iter_tool_calls(response)", _iter, _aiter),
    ("streamkit.stream", _edge, _aedge),
    ("the same, body read to its end", _drained, _adrained),
)


#: One turn to read: its URL, its wire, and the arguments of its calls.
Job = tuple[str, str, list[Any]]
#: A side run over a batch of turns: the arguments each gave.
Run = Callable[[list[Job]], list[list[Any]]]


class _Serials:
    """Fresh turns: each batch names turns no earlier one named, with what they hold."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.next = _FIRST_SERIAL

    def batch(self, wire: str, size: int, calls: int, count: int) -> list[Job]:
        out = []
        for serial in range(self.next, self.next + count):
            arguments = list(make_turn(wire, size, calls, serial=serial).arguments)
            out.append((f"{self.base}/{wire}/{size}/{calls}/{serial}", wire, arguments))
        self.next += count
        return out


def _timed(run: Run, batch: list[Job]) -> float:
    """CPU seconds per turn of ``run`` over ``batch``, checked against what the turns hold."""
    began = time.process_time()
    got = run(batch)
    spent = time.process_time() - began
    if got != [arguments for _, _, arguments in batch]:
        raise AssertionError("a reader lost or changed a call")
    return spent / len(batch)


def _rows(runs: list[Run], serials: _Serials, repeat: int) -> None:
    """One row per wire and turn: each side over its own fresh batch, the sides taking turns
    request by request (so a change in the machine's load falls on all of them), ``repeat`` times
    after one run that warms up (connections, imports); the medians, and each ÷ the first."""
    for wire in WIRES:
        for label, size, calls, count in TURNS:
            times: list[list[float]] = [[] for _ in runs]
            for number in range(repeat + 1):
                batches = [serials.batch(wire, size, calls, count) for _ in runs]
                spent = [0.0 for _ in runs]
                for at in range(count):
                    for side, (run, batch) in enumerate(zip(runs, batches, strict=True)):
                        spent[side] += _timed(run, batch[at : at + 1])
                if number:
                    for side, took in enumerate(spent):
                        times[side].append(took / count)
            floor, *others = (statistics.median(spent) for spent in times)
            cells = [f"{floor * 1e6:.0f}", *(f"{other * 1e6:.0f} ({other / floor:.2f})" for other in others)]
            print(f"| {wire} | {label} | {' | '.join(cells)} |", flush=True)


def _sync_run(client: httpx.Client, read: Reader) -> Run:
    return lambda batch: [read(client, url, wire) for url, wire, _ in batch]


def _async_run(loop: asyncio.AbstractEventLoop, client: httpx.AsyncClient, read: AsyncReader) -> Run:
    async def every(batch: list[Job]) -> list[list[Any]]:
        return [await read(client, url, wire) for url, wire, _ in batch]

    return lambda batch: loop.run_until_complete(every(batch))


def ratios(repeat: int) -> None:
    """The rows, sync then async: µs of client CPU per turn, and each streamkit side ÷ the floor."""
    header = " | ".join(name for name, _, _ in SIDES)
    print("## end to end over loopback HTTP with httpx, one SSE event per write (client CPU µs per turn, ÷ the floor)")
    with _server() as base, httpx.Client() as client:
        serials = _Serials(base)
        print(f"| wire | turn | {header} |")
        print("|---|---|---|---|---|---|")
        _rows([_sync_run(client, read) for _, read, _ in SIDES], serials, repeat)
        print(f"\n### the same with httpx.AsyncClient, one asyncio loop\n| wire | turn | {header} |")
        print("|---|---|---|---|---|---|")
        loop = asyncio.new_event_loop()
        aclient = httpx.AsyncClient()
        try:
            _rows([_async_run(loop, aclient, read) for _, _, read in SIDES], serials, repeat)
        finally:
            loop.run_until_complete(aclient.aclose())
            loop.close()
    print()


if __name__ == "__main__" and sys.argv[1:] == ["--serve"]:
    serve()
