"""``python -m benchmarks.profile [STRATEGY] [WIRE] [SIZE] [FRAGMENT]``: where one strategy spends its time.

Profiles one run of a strategy on one generated case with pyinstrument (the ``bench`` extra),
or with the standard library's cProfile when pyinstrument is missing, and prints the report.
With ``--turns N``, it profiles ``iter_tool_calls`` over N fresh realistic turns instead
(``benchmarks.turns``: SIZE bytes of arguments in each of ``--calls`` calls, one SSE event per
read), where the fixed cost of a turn (its boundary events, its templates) shows. With
``--count-calls`` and ``--turns``, it counts instead the Python calls each read of one fresh turn makes in
``Assembler.feed``, by the kind of event: what a boundary event costs beside a hot read.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import itertools
import pstats
import sys
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any, cast

import orjson

import streamkit
from streamkit import Assembler, Provider

from .inputs import WIRES, make_case
from .strategies import STRATEGIES
from .turns import make_turn, reads


def main(argv: Sequence[str] | None = None) -> int:
    names = [strategy.name for strategy in STRATEGIES]
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__)
    parser.add_argument("strategy", nargs="?", default="deferred", choices=names)
    parser.add_argument("wire", nargs="?", default="anthropic", choices=WIRES)
    parser.add_argument("size", nargs="?", type=int, default=128 * 1024, help="argument bytes per call")
    parser.add_argument("fragment", nargs="?", type=int, default=4, help="characters per fragment")
    parser.add_argument("--calls", type=int, default=1)
    parser.add_argument("--turns", type=int, default=0, help="profile this many fresh realistic turns instead")
    parser.add_argument("--count-calls", action="store_true", help="with --turns: the Python calls of each read")
    args = parser.parse_args(argv)
    if args.turns:
        run = _turns(args.wire, args.size, args.calls, args.turns)  # warms up too
        if args.count_calls:
            _count_calls(args.wire, args.size, args.calls)
        else:
            _report(run)
        return 0
    strategy = next(s for s in STRATEGIES if s.name == args.strategy)
    missing = strategy.missing()
    if missing or args.wire not in strategy.wires:
        why = f"needs {', '.join(missing)}" if missing else f"does not read {args.wire}"
        print(f"cannot profile {strategy.name}: it {why}", file=sys.stderr)
        return 2
    case = make_case(args.wire, args.size, args.fragment, args.calls)
    run = strategy.prepare(case)
    run()  # warm up: imports and caches
    _report(run)
    return 0


def _turns(wire: str, size: int, calls: int, count: int) -> Callable[[], object]:
    """A run over ``count`` fresh turns, one event per read, after one more turn read to warm up."""
    if wire not in ("openai_chat", "anthropic"):
        raise SystemExit(f"realistic turns are written for openai_chat and anthropic, not {wire}")
    batches = [reads(make_turn(wire, size, calls), 1) for _ in range(count + 1)]
    list(streamkit.iter_tool_calls(batches.pop(), cast(Provider, wire)))  # warm up: imports and caches
    return lambda: [list(streamkit.iter_tool_calls(chunks, cast(Provider, wire))) for chunks in batches]


def _count_calls(wire: str, size: int, calls: int) -> None:
    """Print the Python calls each read of one fresh turn makes in ``Assembler.feed`` (one event
    per read), runs of equal rows folded into one."""
    assembler = Assembler(cast(Provider, wire))
    counted = 0

    def count(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal counted
        counted += event == "call"

    rows: list[tuple[int, str]] = []
    for chunk in reads(make_turn(wire, size, calls), 1):
        counted = 0
        sys.setprofile(count)
        assembler.feed(chunk)
        sys.setprofile(None)
        rows.append((counted, _kind(chunk)))
    print("reads  calls each  event")
    for (calls_each, kind), run in itertools.groupby(rows):
        print(f"{len(list(run)):5d}  {calls_each:10d}  {kind}")
    print(f"{len(rows):5d}  {sum(row[0] for row in rows) / len(rows):10.1f}  (mean)")


def _kind(chunk: bytes) -> str:
    """An event's kind: Anthropic's ``type`` (and its delta's), OpenAI Chat's delta keys."""
    data = chunk[chunk.index(b"data: ") + 6 :].strip()
    if data == b"[DONE]":
        return "[DONE]"
    payload = orjson.loads(data)
    if "type" in payload:
        delta = payload.get("delta") or {}
        return " ".join(filter(None, (payload["type"], delta.get("type"))))
    choice = (payload.get("choices") or [{}])[0]
    keys = [*(choice.get("delta") or {}), *(["finish_reason"] if choice.get("finish_reason") else [])]
    return "chunk: " + (", ".join(keys) or "usage")


def _report(run: Callable[[], object]) -> None:
    if importlib.util.find_spec("pyinstrument") is not None:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0002)
        profiler.start()
        run()
        profiler.stop()
        print(profiler.output_text(unicode=True, color=False, show_all=False))
    else:
        print("pyinstrument is not installed (pip install -e '.[bench]'): cProfile instead", file=sys.stderr)
        profile = cProfile.Profile()
        profile.runcall(run)
        pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    sys.exit(main())
