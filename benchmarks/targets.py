"""``python -m benchmarks.targets [--repeat N] [--streams N]``: the speed targets, in one short run.

Every ratio is taken in one process, the two sides interleaved, each the median of ``--repeat``
runs of CPU time (``time.process_time``): the machine is shared, so only ratios taken side by
side are worth reading.

- deferred / floor: ``iter_tool_calls`` over the bytes in reads of 16 KiB and of 1 KiB against
  the hand-written floor (``strategies.floor``, handed the whole bytes), at 16 KiB, 128 KiB and
  1 MiB of arguments in 4-character fragments, and the growth exponent from 16 KiB to 1 MiB;
- the SDKs end to end from the same bytes (128 KiB, 16 KiB reads through an in-memory
  transport): ``chat.completions.stream`` to its final completion, ``messages.stream`` to its
  final message, against streamkit's ``iter_tool_calls`` over the same reads;
- 1,000 concurrent small streams (1 KiB of arguments, 1 KiB reads, one asyncio loop, every
  source yielding to the loop before each read): events per CPU second of ``aiter_tool_calls``
  against a hand-written loop in the same harness (split on blank lines, orjson per event, join,
  one parse at the end);
- memory held by one call in flight at 128 KiB (``tracemalloc``, just before its end marker);
- realistic turns (``benchmarks.turns``: ~40 text tokens, then 1 to 4 calls in 1-8-character
  fragments, a fresh response id every turn) at one event per read, three events per read and
  1 KiB reads, the hand-written loop given the same reads; the same at 1,000 concurrent streams
  at one event per read. These rows are where users are: the rows above hand the floor the whole
  buffer at once and reuse one response id, which hides the work every socket reader pays per
  read and the cost of learning a new response's byte shapes. Then the fixed cost per turn:
  streamkit's µs per turn minus the hand loop's, for a 100 B x 1 turn and a turn of no text and
  one ``{}`` call, one event per read;
- end to end over loopback HTTP (``benchmarks.endtoend``): an httpx client reading fresh realistic
  turns from a server in another process, one SSE event per write, the client's CPU time with
  ``client.stream`` and the hand loop over ``iter_bytes()`` against ``iter_tool_calls(response)``
  and ``streamkit.stream``, sync and async.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, cast

import orjson

import streamkit
from streamkit import Provider
from tests.models import ANTHROPIC, OPENAI

from . import endtoend
from .inputs import Case, make_case
from .strategies import chunked, floor
from .turns import Turn, ahand_loop, hand_loop, make_turn, reads

SIZES = (16 * 1024, 128 * 1024, 1024 * 1024)
READS = (16 * 1024, 1024)
WIRES = ("openai_chat", "anthropic")


def _median(run: Callable[[], object], other: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median CPU seconds of ``run`` and of ``other``, interleaved."""
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(repeat):
        for out, call in ((mine, run), (theirs, other)):
            began = time.process_time()
            call()
            out.append(time.process_time() - began)
    return statistics.median(mine), statistics.median(theirs)


def _deferred(case: Case, read: int) -> Callable[[], object]:
    chunks, wire = chunked(case.data, read), case.wire
    return lambda: [call.input for call in streamkit.iter_tool_calls(chunks, wire)]


def _floor(case: Case) -> Callable[[], object]:
    return lambda: floor(case.data, case.wire)


def floor_ratios(repeat: int) -> None:
    print("## deferred / floor (4-character fragments, one call)")
    print("| wire | arguments | reads | deferred ms | floor ms | ratio |")
    print("|---|---|---|---|---|---|")
    for wire in WIRES:
        times: dict[int, float] = {}
        for size in SIZES:
            case = make_case(wire, size, 4, 1)
            for read in READS:
                runs = repeat if size < SIZES[-1] else max(3, repeat // 2)
                mine, theirs = _median(_deferred(case, read), _floor(case), runs)
                if read == READS[0]:
                    times[size] = mine
                print(
                    f"| {wire} | {size // 1024} KiB | {read // 1024} KiB | {mine * 1e3:.1f} | {theirs * 1e3:.1f} | "
                    f"{mine / theirs:.2f} |",
                    flush=True,
                )
        slope = math.log(times[SIZES[-1]] / times[SIZES[0]]) / math.log(SIZES[-1] / SIZES[0])
        print(f"\ngrowth exponent, {wire}, 16 KiB -> 1 MiB (16 KiB reads): {slope:.2f}\n")


# -- the SDKs, end to end from the bytes ----------------------------------------------------


def _reads(data: bytes, size: int = 16 * 1024) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _openai_sdk(case: Case) -> Callable[[], object]:
    import httpx2
    import openai

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=_reads(case.data))

    http = httpx2.Client(transport=httpx2.MockTransport(answer))
    client = openai.OpenAI(base_url="http://bench.invalid/v1", api_key="sk-bench", http_client=http, max_retries=0)

    def run() -> object:
        with client.chat.completions.stream(model=OPENAI, messages=[]) as stream:
            completion = stream.get_final_completion()
        return [orjson.loads(call.function.arguments) for call in completion.choices[0].message.tool_calls or ()]

    return run


def _anthropic_sdk(case: Case) -> Callable[[], object]:
    import anthropic
    import httpx2

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=_reads(case.data))

    http: Any = httpx2.Client(transport=httpx2.MockTransport(answer))
    client = anthropic.Anthropic(base_url="http://bench.invalid", api_key="sk-bench", http_client=http, max_retries=0)

    def run() -> object:
        with client.messages.stream(model=ANTHROPIC, max_tokens=8192, messages=[]) as stream:
            message = stream.get_final_message()
        return [block.input for block in message.content if block.type == "tool_use"]

    return run


def sdk_ratios(repeat: int) -> None:
    print("## the SDKs end to end from the same bytes (128 KiB, 16 KiB reads)")
    print("| wire | SDK ms | streamkit ms | SDK / streamkit |")
    print("|---|---|---|---|")
    for wire, sdk in (("openai_chat", _openai_sdk), ("anthropic", _anthropic_sdk)):
        case = make_case(wire, 128 * 1024, 4, 1)
        run = sdk(case)
        mine = _deferred(case, 16 * 1024)
        assert run() == mine() == list(case.arguments), f"{wire}: the SDK and streamkit disagree"
        theirs, ours = _median(run, mine, max(3, repeat // 2))
        print(f"| {wire} | {theirs * 1e3:.1f} | {ours * 1e3:.1f} | {theirs / ours:.1f} |", flush=True)
    print()


# -- many small streams -----------------------------------------------------------------------


async def _hand_loop(source: AsyncIterator[bytes], wire: str) -> list[Any]:
    """The hand-written loop, read by read: complete events split off, orjson each, join, parse."""
    parts: dict[int, list[str]] = {}
    rest = b""
    async for chunk in source:
        rest += chunk
        cut = rest.rfind(b"\n\n") + 2
        if cut < 2:
            continue
        blocks, rest = rest[: cut - 2].split(b"\n\n"), rest[cut:]
        for block in blocks:
            if wire == "openai_chat":
                if block == b"data: [DONE]":
                    continue
                for choice in orjson.loads(block[6:])["choices"]:
                    for entry in choice["delta"].get("tool_calls") or ():
                        parts.setdefault(entry["index"], []).append(entry["function"]["arguments"])
            else:
                event = orjson.loads(block[block.index(b"data: ") + 6 :])
                if event["type"] == "content_block_delta":
                    parts.setdefault(event["index"], []).append(event["delta"]["partial_json"])
    return [orjson.loads("".join(parts[index])) for index in sorted(parts)]


async def _streamkit(source: AsyncIterator[bytes], wire: str) -> list[Any]:
    calls = [call async for call in streamkit.aiter_tool_calls(source, wire)]  # type: ignore[arg-type]
    return [call.input for call in calls if isinstance(call, streamkit.ToolCall)]


def _concurrent(case: Case, streams: int, reader: Callable[[AsyncIterator[bytes], str], Any]) -> float:
    chunks = chunked(case.data, 1024)

    async def source() -> AsyncIterator[bytes]:
        for chunk in chunks:
            await asyncio.sleep(0)
            yield chunk

    async def one() -> None:
        if await reader(source(), case.wire) != list(case.arguments):
            raise AssertionError("a concurrent stream lost its call")

    async def everything() -> None:
        await asyncio.gather(*(one() for _ in range(streams)))

    began = time.process_time()
    asyncio.run(everything())
    return case.events * streams / (time.process_time() - began)


def _medians(ours: Callable[[], float], theirs: Callable[[], float], repeat: int) -> tuple[float, float]:
    """The medians of ``repeat // 2`` (at least one) alternated runs of each side."""
    mine: list[float] = []
    other: list[float] = []
    for _ in range(max(1, repeat // 2)):
        mine.append(ours())
        other.append(theirs())
    return statistics.median(mine), statistics.median(other)


def concurrency_ratios(streams: int, repeat: int) -> None:
    print(f"## {streams} concurrent streams (1 KiB of arguments, 1 KiB reads), events per CPU second")
    print("| wire | streamkit | hand-written loop | loop / streamkit |")
    print("|---|---|---|---|")
    for wire in WIRES:
        case = make_case(wire, 1024, 4, 1)
        mine, loop = _medians(
            partial(_concurrent, case, streams, _streamkit), partial(_concurrent, case, streams, _hand_loop), repeat
        )
        print(f"| {wire} | {mine:,.0f} | {loop:,.0f} | {loop / mine:.2f} |", flush=True)
    print()


def memory() -> None:
    print("## memory held by one call in flight (128 KiB, 16 KiB reads, just before its end marker)")
    print("| wire | held KiB | held / argument bytes |")
    print("|---|---|---|")
    for wire in WIRES:
        case = make_case(wire, 128 * 1024, 4, 1)
        before = chunked(case.data[: case.end_spans[0][0]])
        assembler = streamkit.Assembler(case.wire)
        tracemalloc.start()
        for chunk in before:
            assembler.feed(chunk)
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"| {wire} | {held / 1024:.0f} | {held / case.argument_bytes:.2f} |")
    print()


# -- realistic turns, read as a network delivers them -----------------------------------------

#: (label, bytes of arguments per call, calls)
TURNS = (("100 B x 1", 100, 1), ("1 KiB x 2", 1024, 2), ("4 KiB x 4", 4096, 4), ("steady 128 KiB x 1", 128 * 1024, 1))
#: (label, events per read, bytes per read)
REGIMES = (("1 event", 1, None), ("3 events", 3, None), ("1 KiB", None, 1024))


def _streamkit_inputs(chunks: list[bytes], wire: str) -> list[Any]:
    calls = streamkit.iter_tool_calls(chunks, cast(Provider, wire))
    return [call.input for call in calls if isinstance(call, streamkit.ToolCall)]


def _fresh_reads(
    wire: str, size: int, calls: int, regime: tuple[int | None, int | None], batch: int, tokens: int = 40
) -> list[tuple[list[bytes], Turn]]:
    per_read, read = regime
    turns = (make_turn(wire, size, calls, tokens=tokens) for _ in range(batch))
    return [(reads(turn, per_read, read), turn) for turn in turns]


def _turn_case(
    wire: str, size: int, calls: int, regime: tuple[int | None, int | None], repeat: int, *, tokens: int = 40
) -> tuple[float, float]:
    """Median CPU seconds per turn of streamkit and of the hand loop, a fresh batch of turns for
    every run, both sides over the same reads of it."""
    batch = 1 if size > 8192 else 20
    first = _fresh_reads(wire, size, calls, regime, batch, tokens)
    ours = [_streamkit_inputs(chunks, wire) for chunks, _ in first]
    assert ours == [hand_loop(chunks, wire) for chunks, _ in first] == [list(t.arguments) for _, t in first]
    mine: list[float] = []
    other: list[float] = []
    for _ in range(repeat):
        pending = _fresh_reads(wire, size, calls, regime, batch, tokens)
        began = time.process_time()
        for chunks, _ in pending:
            _streamkit_inputs(chunks, wire)
        mine.append(time.process_time() - began)
        began = time.process_time()
        for chunks, _ in pending:
            hand_loop(chunks, wire)
        other.append(time.process_time() - began)
    return statistics.median(mine) / batch, statistics.median(other) / batch


def turn_ratios(repeat: int, plot: Path | None = None) -> None:
    """The table of realistic turns; progress on stderr, one line a row; the figure too with ``plot``."""
    print("## realistic turns, fresh response ids, the hand loop given the same reads (CPU per turn)")
    print("| wire | turn | reads | streamkit µs | hand loop µs | ratio |")
    print("|---|---|---|---|---|---|")
    rows: list[tuple[str, str, str, float]] = []
    total = len(WIRES) * len(TURNS) * len(REGIMES)
    began = time.monotonic()
    for wire in WIRES:
        for label, size, calls in TURNS:
            for regime, per_read, read in REGIMES:
                done = len(rows)
                left = f", about {(time.monotonic() - began) / done * (total - done):.0f} s left" if done else ""
                print(f"turns: {done + 1}/{total}, {wire} {label}, {regime} a read{left}", file=sys.stderr, flush=True)
                mine, other = _turn_case(wire, size, calls, (per_read, read), repeat)
                rows.append((wire, label, regime, mine / other))
                print(
                    f"| {wire} | {label} | {regime} | {mine * 1e6:.0f} | {other * 1e6:.0f} | {mine / other:.2f} |",
                    flush=True,
                )
    print()
    if plot is not None:
        plot_turns(rows, plot)
        print(f"the figure: {plot}", file=sys.stderr)
    fixed_costs(repeat)


#: The wires as the README's table names them.
WIRE_NAMES = {"openai_chat": "OpenAI Chat", "anthropic": "Anthropic"}


def plot_turns(rows: list[tuple[str, str, str, float]], path: Path) -> None:
    """streamkit's CPU per turn as a multiple of the hand loop's, one event a read: the README's table."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [row for row in rows if row[2] == REGIMES[0][0]]
    labels = [label for label, _, _ in TURNS]
    figure, axis = plt.subplots(figsize=(7.5, 3.6))
    width = 0.38
    for number, wire in enumerate(WIRES):
        ratios = [next(r[3] for r in shown if r[0] == wire and r[1] == label) for label in labels]
        places = [i + (number - 0.5) * width for i in range(len(labels))]
        bars = axis.bar(places, ratios, width, label=f"streamkit, {WIRE_NAMES[wire]}", color=f"C{number}")
        axis.bar_label(bars, labels=[f"{r:.2f}x" for r in ratios], fontsize=8, padding=2)
    axis.axhline(1.0, color="black", linewidth=1, linestyle="--", label="the hand-written loop (1x)")
    axis.set_xticks(range(len(labels)), labels)
    axis.set_ylabel("CPU per turn, x the hand loop")
    axis.set_title("A realistic turn read one SSE event at a time (lower is faster)", fontsize=10)
    axis.legend(fontsize=8, loc="upper right")
    axis.set_ylim(0, max(r[3] for r in shown) * 1.3)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=80)
    plt.close(figure)


def fixed_costs(repeat: int) -> None:
    """What a turn costs streamkit beyond the hand loop, whatever its size: µs per turn of
    streamkit minus the hand loop's, one event per read, for the smallest realistic turn and for
    a turn of nothing but its boundary events (no text, one call of ``{}``)."""
    print("## fixed cost per turn: streamkit µs - hand loop µs, one event per read")
    print("| wire | 100 B x 1 (40 text tokens) | no text, one {} call |")
    print("|---|---|---|")
    for wire in WIRES:
        costs = [_turn_case(wire, size, 1, (1, None), repeat, tokens=tokens) for size, tokens in ((100, 40), (0, 0))]
        print(f"| {wire} | " + " | ".join(f"{(mine - other) * 1e6:.0f}" for mine, other in costs) + " |", flush=True)
    print()


def _concurrent_turns(wire: str, streams: int, reader: Callable[[AsyncIterator[bytes], str], Any]) -> float:
    """CPU seconds of ``streams`` fresh 1 KiB x 2 turns read at once, one event per read."""
    turns = [make_turn(wire, 1024, 2) for _ in range(streams)]

    async def source(chunks: list[bytes]) -> AsyncIterator[bytes]:
        for chunk in chunks:
            await asyncio.sleep(0)
            yield chunk

    async def one(turn: Turn) -> None:
        if await reader(source(reads(turn, 1)), wire) != list(turn.arguments):
            raise AssertionError("a concurrent stream lost its call")

    async def everything() -> None:
        await asyncio.gather(*(one(turn) for turn in turns))

    began = time.process_time()
    asyncio.run(everything())
    return time.process_time() - began


def concurrent_turn_ratios(streams: int, repeat: int) -> None:
    print(f"## {streams} concurrent realistic turns (1 KiB x 2, one event per read), CPU seconds")
    print("| wire | streamkit s | hand loop s | ratio |")
    print("|---|---|---|---|")
    for wire in WIRES:
        mine, loop = _medians(
            partial(_concurrent_turns, wire, streams, _streamkit),
            partial(_concurrent_turns, wire, streams, ahand_loop),
            repeat,
        )
        print(f"| {wire} | {mine:.3f} | {loop:.3f} | {mine / loop:.2f} |", flush=True)
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure (median)")
    parser.add_argument("--streams", type=int, default=1000)
    parts_known = ("floor", "sdk", "concurrency", "memory", "turns", "concurrent-turns", "end-to-end")
    parser.add_argument("--only", nargs="*", choices=parts_known)
    parser.add_argument("--plot", type=Path, default=None, help="draw the turns' figure to this PNG (needs matplotlib)")
    args = parser.parse_args()
    parts = set(args.only or parts_known)
    if "floor" in parts:
        floor_ratios(args.repeat)
    if "sdk" in parts:
        sdk_ratios(args.repeat)
    if "concurrency" in parts:
        concurrency_ratios(args.streams, args.repeat)
    if "memory" in parts:
        memory()
    if "turns" in parts:
        turn_ratios(args.repeat, args.plot)
    if "concurrent-turns" in parts:
        concurrent_turn_ratios(args.streams, args.repeat)
    if "end-to-end" in parts:
        endtoend.ratios(args.repeat)


if __name__ == "__main__":
    main()
