"""``python -m benchmarks.imports [--repeat N]``: what importing streamkit costs a program.

Each statement runs in a fresh interpreter (``sys.executable -c ...``), ``--repeat`` times,
interleaved with ``python -c pass``; the best wall time of each is kept (the least disturbed by
the other processes on the machine), and the cost is the difference from ``pass``. Beside
``import streamkit`` itself: the vocabulary alone, the whole pipeline (what the first
``iter_tool_calls`` loads) and the HTTP edge (``astream``), so that a module's eager import
cannot hide behind a lazy one. The modules each statement loads are counted too.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

#: What is timed: a label and the statement.
STATEMENTS = (
    ("python -c pass", "pass"),
    ("import streamkit", "import streamkit"),
    ("the vocabulary", "from streamkit import ToolCall, InvalidToolCall, Turn, StreamkitError, Limits"),
    ("the pipeline", "from streamkit import iter_tool_calls"),
    ("the HTTP edge", "from streamkit import astream, stream"),
)
#: The modules loaded beside the interpreter's own, printed by each statement.
_COUNT = "; import sys; print(len(sys.modules))"


def best_times(repeat: int) -> dict[str, float]:
    """The best wall time of each statement, in seconds, the statements interleaved."""
    best = {label: float("inf") for label, _ in STATEMENTS}
    for _ in range(repeat):
        for label, statement in STATEMENTS:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", statement], check=True)
            best[label] = min(best[label], time.perf_counter() - start)
    return best


def module_counts() -> dict[str, int]:
    out = {}
    for label, statement in STATEMENTS:
        done = subprocess.run([sys.executable, "-c", statement + _COUNT], check=True, capture_output=True, text=True)
        out[label] = int(done.stdout)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.imports", description=__doc__)
    parser.add_argument("--repeat", type=int, default=20, help="fresh interpreters per statement (default 20)")
    args = parser.parse_args(argv)
    best = best_times(args.repeat)
    counts = module_counts()
    floor = best["python -c pass"]
    print(f"best of {args.repeat} fresh interpreters, Python {sys.version.split()[0]}")
    print(f"{'statement':<18} {'wall':>9} {'over pass':>10} {'modules':>8}")
    for label, _ in STATEMENTS:
        over = "" if label == "python -c pass" else f"{(best[label] - floor) * 1000:8.1f} ms"
        print(f"{label:<18} {best[label] * 1000:6.1f} ms {over:>10} {counts[label]:>8}")


if __name__ == "__main__":
    main()
