"""``python -m benchmarks.imports [--repeat N]``: what importing streamkit costs a program.

Each statement runs in a fresh interpreter (``sys.executable -c ...``), ``--repeat`` times,
interleaved with ``python -c pass``; the best wall time of each is kept (the least disturbed by
the other processes on the machine), and the cost is the difference from ``pass``. Beside
``import streamkit`` itself: the vocabulary alone, the whole pipeline (what the first
``iter_tool_calls`` loads) and the HTTP edge (``astream``), so that a module's eager import
cannot hide behind a lazy one. The modules each statement loads are counted too.
``--against DIR`` times another checkout of streamkit (``PYTHONPATH=DIR``) in the same run,
interleaved, and prints the ratio of each cost.

Every module is loaded from its bytecode, as from an installed wheel (pip compiles it at
install): the interpreters share a bytecode cache in a temporary directory
(``PYTHONPYCACHEPREFIX``), filled by one untimed run of each statement. ``--from-source`` leaves
no bytecode to streamkit (``PYTHONDONTWRITEBYTECODE=1``, as a checkout without ``__pycache__``
is run here), so each run compiles its source while the installed libraries load theirs: what a
first run of a checkout costs, not what a user's program pays. httpx is timed as installed
here, and without its command line (``click``, ``rich`` and ``pygments``, which ``import httpx``
loads when they are installed): ``sys.modules["click"] = None`` makes it skip them, as an
environment without them would.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: What is timed: a label and the statement.
STATEMENTS = (
    ("python -c pass", "pass"),
    ("import httpx", "import httpx"),
    ("httpx, no CLI", "import sys; sys.modules['click'] = None; import httpx"),
    ("import streamkit", "import streamkit"),
    ("the vocabulary", "from streamkit import ToolCall, InvalidToolCall, Turn, StreamkitError, Limits"),
    ("the pipeline", "from streamkit import iter_tool_calls"),
    ("the HTTP edge", "from streamkit import astream, stream"),
)
#: The modules loaded beside the interpreter's own, printed by each statement.
_COUNT = "; import sys; print(len(sys.modules))"


def _env(tree: Path, cache: Path | None) -> dict[str, str]:
    """The environment that imports ``tree``'s streamkit (run there too: ``-c`` puts the cwd first),
    its bytecode kept in ``cache``, or none kept when ``cache`` is None."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def _child_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def best_times(
    trees: list[Path], repeat: int, cache: Path | None
) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """The best wall time and the best child CPU time (user and system) of each statement in each
    tree, in seconds, all interleaved, after one untimed run of each (which fills the bytecode
    cache). CPU time is what the interpreter itself spent, whatever else the machine ran."""
    best = [{label: float("inf") for label, _ in STATEMENTS} for _ in trees]
    cpu = [{label: float("inf") for label, _ in STATEMENTS} for _ in trees]
    for run in range(repeat + 1):
        for label, statement in STATEMENTS:
            for tree, times, cpus in zip(trees, best, cpu, strict=True):
                start, start_cpu = time.perf_counter(), _child_cpu()
                subprocess.run([sys.executable, "-c", statement], check=True, env=_env(tree, cache), cwd=tree)
                if run:
                    times[label] = min(times[label], time.perf_counter() - start)
                    cpus[label] = min(cpus[label], _child_cpu() - start_cpu)
    return best, cpu


def module_counts(tree: Path, cache: Path | None) -> dict[str, int]:
    out = {}
    for label, statement in STATEMENTS:
        code = statement + _COUNT
        env = _env(tree, cache)
        done = subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env, cwd=tree
        )
        out[label] = int(done.stdout)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.imports", description=__doc__)
    parser.add_argument("--repeat", type=int, default=20, help="fresh interpreters per statement (default 20)")
    parser.add_argument("--against", type=Path, help="another checkout of streamkit, timed in the same run")
    parser.add_argument("--from-source", action="store_true", help="no bytecode for streamkit: its source compiled")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parent.parent
    trees = [here] if args.against is None else [here, args.against.resolve()]
    with tempfile.TemporaryDirectory(prefix="streamkit-bytecode-") as directory:
        cache = None if args.from_source else Path(directory)
        runs, cpus = best_times(trees, args.repeat, cache)
        loaded = [module_counts(tree, cache) for tree in trees]
    where = "compiled from source" if args.from_source else "from bytecode"
    print(f"best of {args.repeat} fresh interpreters, Python {sys.version.split()[0]}, streamkit {where}")
    costs = []
    for tree, best, cpu, counts in zip(trees, runs, cpus, loaded, strict=True):
        floor, cpu_floor = best["python -c pass"], cpu["python -c pass"]
        costs.append({label: best[label] - floor for label, _ in STATEMENTS})
        print(f"\n{tree}\n{'statement':<18} {'wall':>9} {'over pass':>10} {'CPU over pass':>14} {'modules':>8}")
        for label, _ in STATEMENTS:
            over = "" if label == "python -c pass" else f"{costs[-1][label] * 1000:8.1f} ms"
            cpu_over = "" if label == "python -c pass" else f"{(cpu[label] - cpu_floor) * 1000:8.1f} ms"
            print(f"{label:<18} {best[label] * 1000:6.1f} ms {over:>10} {cpu_over:>14} {counts[label]:>8}")
        pipeline, httpx = cpu["the pipeline"] - cpu_floor, cpu["httpx, no CLI"] - cpu_floor
        print(f"the pipeline / httpx without its CLI, child CPU: {pipeline / httpx:.2f}")
    if len(costs) == 2:
        print(f"\ncost over pass, this tree / {trees[1]}")
        for label, _ in STATEMENTS[1:]:
            if costs[1][label] > 1e-3:  # a ratio of costs under a millisecond is noise
                print(f"{label:<18} {costs[0][label] / costs[1][label]:6.2f}")


if __name__ == "__main__":
    main()
