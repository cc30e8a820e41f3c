"""``python -m benchmarks.profile [STRATEGY] [WIRE] [SIZE] [FRAGMENT]``: where one strategy spends its time.

Profiles one run of a strategy on one generated case with pyinstrument (the ``bench`` extra),
or with the standard library's cProfile when pyinstrument is missing, and prints the report.
With ``--turns N``, it profiles ``iter_tool_calls`` over N fresh realistic turns instead
(``benchmarks.turns``: SIZE bytes of arguments in each of ``--calls`` calls, one SSE event per
read), where the fixed cost of a turn (its boundary events, its templates) shows.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import sys
from collections.abc import Callable, Sequence
from typing import cast

import streamkit
from streamkit import Provider

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
    args = parser.parse_args(argv)
    if args.turns:
        _report(_turns(args.wire, args.size, args.calls, args.turns))
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
