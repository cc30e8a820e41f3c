"""``python -m benchmarks.telemetry [--repeat N]``: what OpenTelemetry costs a stream, off and on.

Two inputs, each read by ``iter_tool_calls`` from 1 KiB reads: 200 small streams of 8 calls
(256 bytes of arguments each, 4-character fragments), where the per-stream and per-call work
shows, and one call of 128 KiB, where the per-read work does. "off" is telemetry never enabled
in this process; "on" is ``streamkit.telemetry.enable`` with the SDK's tracer and meter
providers, spans exported to memory. Each figure is the median CPU time of ``--repeat`` runs, off
and on interleaved (each run after a ``gc.collect()``, so an "on" run's spans are not collected
during the next "off" run). ``--off`` times "off" alone, the figure to set beside another tree
(``PYTHONPATH=that/tree``, where without ``streamkit.telemetry`` only "off" is printed anyway);
``--calls`` counts the Python function calls of each input instead, off: a figure the load of a
shared machine cannot move.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable

import streamkit

from .inputs import make_case
from .strategies import chunked

READ = 1024


def _runs() -> dict[str, Callable[[], object]]:
    small = make_case("anthropic", 256, 4, 8)
    large = make_case("anthropic", 128 * 1024, 4, 1)
    small_chunks, large_chunks = chunked(small.data, READ), chunked(large.data, READ)

    def streams() -> object:
        return [len(list(streamkit.iter_tool_calls(small_chunks, "anthropic"))) for _ in range(200)]

    def one() -> object:
        return list(streamkit.iter_tool_calls(large_chunks, "anthropic"))

    return {"200 streams x 8 calls of 256 B": streams, "1 call of 128 KiB": one}


def _timed(run: Callable[[], object]) -> float:
    gc.collect()  # what an earlier run left (an "on" run's spans) is not collected during this one
    began = time.process_time()
    run()
    return time.process_time() - began


def _calls(run: Callable[[], object]) -> int:
    """The Python functions ``run`` calls: a count that, unlike time, the machine's load leaves alone."""
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        count += event == "call"

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return count


def count_calls() -> None:
    print("| input | Python calls |")
    print("|---|---|")
    for name, run in _runs().items():
        run()  # every lazy import and first-use cost paid before counting
        print(f"| {name} | {_calls(run):,} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--off", action="store_true", help="only off: the figure to set beside another tree's")
    parser.add_argument("--calls", action="store_true", help="count the Python calls of each input, off")
    args = parser.parse_args()
    if args.calls:
        count_calls()
        return
    repeat = args.repeat
    try:
        if args.off:
            raise ImportError("off only")
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from streamkit import telemetry
    except ImportError:
        telemetry = None  # type: ignore[assignment]
    print("| input | off ms | on ms | on / off |")
    print("|---|---|---|---|")
    for name, run in _runs().items():
        off: list[float] = []
        on: list[float] = []
        for _ in range(repeat):
            off.append(_timed(run))
            if telemetry is not None:
                exporter = InMemorySpanExporter()
                tracer = TracerProvider()
                tracer.add_span_processor(SimpleSpanProcessor(exporter))
                telemetry.enable(tracer, MeterProvider(metric_readers=[InMemoryMetricReader()]))
                on.append(_timed(run))
                telemetry.disable()
        low = statistics.median(off)
        if on:
            high = statistics.median(on)
            print(f"| {name} | {low * 1e3:.1f} | {high * 1e3:.1f} | {high / low:.2f} |", flush=True)
        else:
            print(f"| {name} | {low * 1e3:.1f} | - | - |", flush=True)


if __name__ == "__main__":
    main()
