"""The measurements: timing side by side, memory, end-marker-to-delivery delay, concurrency, replay.

Timing: for each case every strategy is first run once and checked against the generated
arguments; then ``repeats`` samples of its CPU time are taken, the order of the
strategies reversed on every other repeat, each sample looping a strategy often enough to last
``min_sample`` seconds. The median sample is reported. The garbage collector stays on, as in
real use. A strategy whose run, predicted from its smaller sizes, would exceed ``max_run``
seconds is skipped and reported as such, so the quadratic peers cannot stall a run.
"""

from __future__ import annotations

import asyncio
import functools
import io
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

import streamkit
from streamkit._cli import main as cli_main

from .inputs import Case, make_case
from .strategies import Strategy, chunked

__all__ = (
    "QUICK",
    "Concurrency",
    "Config",
    "Inflight",
    "Progress",
    "Replay",
    "Timing",
    "case_grid",
    "measure_concurrency",
    "measure_inflight",
    "measure_replay",
    "time_cases",
)


#: The clock of the side-by-side timings and of the end-marker delay: the CPU time of this
#: process, so that other jobs on a shared machine do not inflate it (the strategies are
#: single-threaded, so on an idle machine it equals wall time). The concurrency run reports both
#: clocks, and its delays in wall time, since waiting on the loop is part of them.
_clock = time.process_time


@dataclass(frozen=True)
class Config:
    sizes: tuple[int, ...] = (1024, 16 * 1024, 128 * 1024, 1024 * 1024)
    fragments: tuple[int, ...] = (1, 4, 64)
    calls: tuple[int, ...] = (1, 4)
    wires: tuple[str, ...] = ("openai_chat", "anthropic")
    repeats: int = 5
    min_sample: float = 0.05  # seconds per timing sample
    cell_budget: float = 6.0  # seconds of samples per case and strategy, at most
    max_run: float = 10.0  # skip a run predicted to take longer
    max_events: int = 600_000  # skip (and say so) a case with more SSE events than this
    inflight_sizes: tuple[int, ...] = (16 * 1024, 128 * 1024, 1024 * 1024)
    inflight_repeats: int = 3
    streams: int = 1000
    stream_size: int = 4 * 1024
    stream_fragment: int = 4
    stream_chunk: int = 1024
    replay_size: int = 128 * 1024
    replay_repeats: int = 5
    seed: int = 2024


QUICK = Config(
    fragments=(4,),
    calls=(1,),
    repeats=3,
    min_sample=0.02,
    cell_budget=1.0,
    max_run=4.0,
    inflight_sizes=(128 * 1024,),
    stream_size=1024,
    replay_repeats=3,
)


class Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, total: int, *, enabled: bool = True) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.enabled = enabled
        self.started = time.perf_counter()

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        width = 24
        filled = width * min(self.done, self.total) // self.total
        elapsed = time.perf_counter() - self.started
        bar = "#" * filled + "." * (width - filled)
        line = f"\r[{bar}] {self.done}/{self.total} {elapsed:5.0f}s  {label}"
        sys.stderr.write(line[:110].ljust(110))
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


@dataclass
class Timing:
    wire: str
    size: int
    fragment: int
    calls: int
    strategy: str
    seconds: float | None  # median time per stream; None when skipped
    samples: list[float] = field(default_factory=list)
    argument_bytes: int = 0
    events: int = 0
    skipped: str | None = None

    @property
    def mb_per_s(self) -> float | None:
        return self.argument_bytes / self.seconds / 1e6 if self.seconds else None

    @property
    def events_per_s(self) -> float | None:
        return self.events / self.seconds if self.seconds else None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["mb_per_s"] = self.mb_per_s
        out["events_per_s"] = self.events_per_s
        return out


def _sample(run: Callable[[], object], number: int) -> float:
    start = _clock()
    for _ in range(number):
        run()
    return (_clock() - start) / number


def _predict(history: list[tuple[int, float]], size: int) -> float | None:
    """A run's time at ``size`` from the same strategy's smaller sizes (exponent 1.5 when unknown)."""
    if not history:
        return None
    (s1, t1) = history[-1]
    exponent = 1.5
    if len(history) >= 2:
        (s0, t0) = history[-2]
        exponent = max(1.0, math.log(t1 / t0) / math.log(s1 / s0))
    return float(t1 * (size / s1) ** exponent)


def case_grid(config: Config) -> Iterator[tuple[str, int, int]]:
    for wire in config.wires:
        for fragment in config.fragments:
            for calls in config.calls:
                yield wire, fragment, calls


def time_cases(config: Config, strategies: list[Strategy], progress: Progress) -> list[Timing]:
    rows: list[Timing] = []
    for wire, fragment, calls in case_grid(config):
        active = [s for s in strategies if wire in s.wires]
        history: dict[str, list[tuple[int, float]]] = {s.name: [] for s in active}
        for size in config.sizes:
            events = calls * size // fragment  # about: a character is one byte or more
            if events > config.max_events:
                for strategy in active:
                    progress.step(f"{wire} {size} frag={fragment} calls={calls} {strategy.name}")
                    reason = f"about {events:,} SSE events (over max_events {config.max_events:,})"
                    rows.append(Timing(wire, size, fragment, calls, strategy.name, None, skipped=reason))
                continue
            case = make_case(wire, size, fragment, calls, seed=config.seed)
            rows += _time_case(case, active, history, config, progress)
    return rows


def _time_case(
    case: Case,
    strategies: list[Strategy],
    history: dict[str, list[tuple[int, float]]],
    config: Config,
    progress: Progress,
) -> list[Timing]:
    expected = list(case.arguments)
    runs: dict[str, Callable[[], list[Any]]] = {}
    numbers: dict[str, int] = {}
    rows: dict[str, Timing] = {}
    for strategy in strategies:
        row = Timing(
            case.wire, case.size, case.fragment, case.calls, strategy.name, None, [], case.argument_bytes, case.events
        )
        rows[strategy.name] = row
        progress.step(f"{case.label} {strategy.name}")
        predicted = _predict(history[strategy.name], case.size)
        if predicted is not None and predicted > config.max_run and case.size > strategy.always_up_to:
            row.skipped = f"predicted {predicted:.0f} s per run (over --max-run {config.max_run:g} s)"
            continue
        run = strategy.prepare(case)
        first = _clock()
        got = run()
        first = _clock() - first
        if got != expected:
            raise AssertionError(f"{strategy.name} decoded {case.label} wrongly")
        runs[strategy.name] = run
        numbers[strategy.name] = max(1, math.ceil(config.min_sample / first))
        if first * config.repeats > config.cell_budget:  # a slow run: fewer samples
            row.samples.append(first)
    for repeat in range(config.repeats):
        order = list(runs) if repeat % 2 == 0 else list(reversed(runs))
        for name in order:
            row = rows[name]
            if row.samples and len(row.samples) * row.samples[0] >= config.cell_budget:
                continue
            row.samples.append(_sample(runs[name], numbers[name]))
    for name, row in rows.items():
        if row.samples:
            row.seconds = statistics.median(row.samples)
            history[name].append((case.size, row.seconds))
    return list(rows.values())


# -- memory per in-flight call, and the delay from end marker to delivery ---------------------


@dataclass
class Inflight:
    wire: str
    size: int
    fragment: int
    strategy: str
    argument_bytes: int
    peak_bytes: int  # the library's peak allocation while the call streams (tracemalloc)
    held_bytes: int  # what it still holds just before the end marker
    delay_seconds: float  # CPU time from the end-marker event's bytes arriving to the call's delivery

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["peak_ratio"] = self.peak_bytes / self.argument_bytes
        out["held_ratio"] = self.held_bytes / self.argument_bytes
        return out


_INFLIGHT_OPTIONS: dict[str, dict[str, Any]] = {
    "deferred": {},
    "early/x1.25": {"previews": True, "preview_growth": 1.25},
}


def measure_inflight(config: Config, progress: Progress, fragment: int = 4) -> list[Inflight]:
    """One call streaming: memory before its end marker, and the time its end marker takes."""
    rows = []
    for wire in config.wires:
        for size in config.inflight_sizes:
            case = make_case(wire, size, fragment, 1, seed=config.seed)
            start, end = case.end_spans[0]
            before, marker = chunked(case.data[:start]), case.data[start:end]
            for name, options in _INFLIGHT_OPTIONS.items():
                progress.step(f"in flight: {case.label} {name}")
                peak = held = 0
                delays = []
                for repeat in range(config.inflight_repeats):
                    assembler = streamkit.Assembler(case.wire, **options)
                    if repeat == 0:
                        tracemalloc.start()
                    for chunk in before:
                        assembler.feed(chunk)
                    if repeat == 0:
                        held, peak = tracemalloc.get_traced_memory()
                        tracemalloc.stop()
                    began = _clock()
                    out = assembler.feed(marker)
                    delays.append(_clock() - began)
                    calls = [item for item in out if isinstance(item, streamkit.ToolCall)]
                    if [call.input for call in calls] != list(case.arguments):
                        raise AssertionError(f"{name} did not deliver {case.label} at its end marker")
                rows.append(
                    Inflight(wire, size, fragment, name, case.argument_bytes, peak, held, statistics.median(delays))
                )
    return rows


# -- many streams on one event loop ----------------------------------------------------------


@dataclass
class Concurrency:
    wire: str
    streams: int
    size: int
    fragment: int
    chunk: int
    events: int
    seconds: float  # wall clock
    cpu_seconds: float  # this process's CPU time over the same run
    events_per_s: float  # per wall-clock second
    events_per_cpu_s: float  # per CPU second: what the loop sustains when it has the core to itself
    p50_delay: float
    p99_delay: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def measure_concurrency(config: Config, progress: Progress) -> list[Concurrency]:
    """``streams`` streams at once on one asyncio loop, fed from memory in ``stream_chunk`` reads.

    Each source yields to the loop before every read, so the streams interleave as sockets
    would. The delay is from the read holding a call's end marker to the call reaching its
    consumer.
    """
    return [_concurrency(config, wire, progress) for wire in config.wires]


def _concurrency(config: Config, wire: str, progress: Progress) -> Concurrency:
    progress.step(f"concurrency: {config.streams} streams {wire}")
    case = make_case(wire, config.stream_size, config.stream_fragment, 1, seed=config.seed)
    chunks = chunked(case.data, config.stream_chunk)
    end = case.end_spans[0][1]
    marker_chunk = (end - 1) // config.stream_chunk
    delays: list[float] = []

    async def one() -> None:
        marked = [0.0]

        async def source() -> Any:
            for number, chunk in enumerate(chunks):
                await asyncio.sleep(0)
                if number == marker_chunk:
                    marked[0] = time.perf_counter()
                yield chunk

        got = 0
        async for call in streamkit.aiter_tool_calls(source(), case.wire):
            delays.append(time.perf_counter() - marked[0])
            got += isinstance(call, streamkit.ToolCall)
        if got != 1:
            raise AssertionError("a concurrent stream lost its call")

    async def all_streams() -> float:
        began = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(config.streams)))
        return time.perf_counter() - began

    cpu = _clock()
    seconds = asyncio.run(all_streams())
    cpu = _clock() - cpu
    delays.sort()
    events = case.events * config.streams
    return Concurrency(
        wire,
        config.streams,
        config.stream_size,
        config.stream_fragment,
        config.stream_chunk,
        events,
        seconds,
        cpu,
        events / seconds,
        events / cpu,
        delays[len(delays) // 2],
        delays[min(len(delays) - 1, math.ceil(len(delays) * 0.99) - 1)],
    )


# -- streamkit replay against a plain split-and-parse loop -----------------------------------


@dataclass
class Replay:
    wire: str
    size: int
    fragment: int
    events: int
    replay_seconds: float  # in-process: streamkit._cli.main, as the command runs it
    plain_seconds: float  # read the file, split on blank lines, orjson every event
    subprocess_seconds: float | None  # `python -m streamkit replay`, interpreter start included

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ratio"] = self.replay_seconds / self.plain_seconds
        return out


def _plain(path: Path) -> int:
    count = 0
    for block in path.read_bytes().split(b"\n\n"):
        if block:
            data = block[block.index(b"data: ") + 6 :]
            if data != b"[DONE]":
                orjson.loads(data)
                count += 1
    return count


def _replay_in_process(path: Path, wire: str) -> bytes:
    out = io.BytesIO()
    stdout, wrapper = sys.stdout, io.TextIOWrapper(out, encoding="utf-8")
    sys.stdout = wrapper
    try:
        code = cli_main(["replay", str(path), "--provider", wire])
        wrapper.flush()
    finally:
        sys.stdout = stdout
        wrapper.detach()
    if code != 0:
        raise AssertionError(f"streamkit replay exited {code}")
    return out.getvalue()


def measure_replay(config: Config, progress: Progress, fragment: int = 4) -> list[Replay]:
    rows = []
    for wire in config.wires:
        progress.step(f"replay: {wire}")
        case = make_case(wire, config.replay_size, fragment, 1, seed=config.seed)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"{wire}.sse"
            path.write_bytes(case.data)
            lines = _replay_in_process(path, wire).splitlines()
            if orjson.loads(lines[0])["input"] != case.arguments[0]:
                raise AssertionError("streamkit replay printed other arguments")
            replay: list[float] = []
            plain: list[float] = []
            for repeat in range(config.replay_repeats):
                pair: list[tuple[list[float], Callable[[], object]]] = [
                    (replay, functools.partial(_replay_in_process, path, wire)),
                    (plain, functools.partial(_plain, path)),
                ]
                for samples, run in pair if repeat % 2 == 0 else reversed(pair):
                    samples.append(_sample(run, 1))
            began = time.perf_counter()
            env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
            command = [sys.executable, "-m", "streamkit", "replay", str(path), "--provider", wire]
            done = subprocess.run(command, capture_output=True, env=env, check=False)
            elapsed = time.perf_counter() - began if done.returncode == 0 else None
        rows.append(
            Replay(
                wire,
                config.replay_size,
                fragment,
                case.events,
                statistics.median(replay),
                statistics.median(plain),
                elapsed,
            )
        )
    return rows
