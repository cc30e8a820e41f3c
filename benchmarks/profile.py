"""``python -m benchmarks.profile [STRATEGY] [WIRE] [SIZE] [FRAGMENT]``: where one strategy spends its time.

Profiles one run of a strategy on one generated case with pyinstrument (the ``bench`` extra),
or with the standard library's cProfile when pyinstrument is missing, and prints the report.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import sys
from collections.abc import Sequence

from .inputs import WIRES, make_case
from .strategies import STRATEGIES


def main(argv: Sequence[str] | None = None) -> int:
    names = [strategy.name for strategy in STRATEGIES]
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__)
    parser.add_argument("strategy", nargs="?", default="deferred", choices=names)
    parser.add_argument("wire", nargs="?", default="anthropic", choices=WIRES)
    parser.add_argument("size", nargs="?", type=int, default=128 * 1024, help="argument bytes per call")
    parser.add_argument("fragment", nargs="?", type=int, default=4, help="characters per fragment")
    parser.add_argument("--calls", type=int, default=1)
    args = parser.parse_args(argv)
    strategy = next(s for s in STRATEGIES if s.name == args.strategy)
    missing = strategy.missing()
    if missing or args.wire not in strategy.wires:
        why = f"needs {', '.join(missing)}" if missing else f"does not read {args.wire}"
        print(f"cannot profile {strategy.name}: it {why}", file=sys.stderr)
        return 2
    case = make_case(args.wire, args.size, args.fragment, args.calls)
    run = strategy.prepare(case)
    run()  # warm up: imports and caches
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
