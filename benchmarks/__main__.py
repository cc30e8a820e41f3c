"""``python -m benchmarks [--quick]``: run the suite, print the tables, write JSON and a plot."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import math
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import measure
from .measure import QUICK, Config, Progress, Timing
from .strategies import CHUNK_BYTES, STRATEGIES, Strategy

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "cpu": cpu,
        "platform": platform.platform(),
    }


def versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for name in ("streamkit", "orjson", "httpx-sse", "openai", "anthropic", "langchain-core", "jiter", "matplotlib"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    return f"{size // 1048576} MiB" if size >= 1048576 else f"{size // 1024} KiB"


def _num(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def ratios(rows: list[Timing]) -> dict[tuple[str, int, int, int, str], float]:
    """(wire, size, fragment, calls, strategy) -> time / the floor's time."""
    floors = {(r.wire, r.size, r.fragment, r.calls): r.seconds for r in rows if r.strategy == "floor"}
    out = {}
    for r in rows:
        base = floors.get((r.wire, r.size, r.fragment, r.calls))
        if r.seconds and base:
            out[(r.wire, r.size, r.fragment, r.calls, r.strategy)] = r.seconds / base
    return out


def exponents(rows: list[Timing]) -> list[dict[str, Any]]:
    """Growth exponent from the smallest to the largest size measured (1 linear, 2 quadratic)."""
    groups: dict[tuple[str, int, int, str], list[Timing]] = {}
    for r in rows:
        if r.seconds:
            groups.setdefault((r.wire, r.fragment, r.calls, r.strategy), []).append(r)
    out = []
    for (wire, fragment, calls, strategy), group in groups.items():
        group.sort(key=lambda r: r.size)
        low, high = group[0], group[-1]
        if high.size == low.size or not low.seconds or not high.seconds:
            continue
        exponent = math.log(high.seconds / low.seconds) / math.log(high.argument_bytes / low.argument_bytes)
        out.append(
            {
                "wire": wire,
                "fragment": fragment,
                "calls": calls,
                "strategy": strategy,
                "from": low.size,
                "to": high.size,
                "exponent": exponent,
            }
        )
    return out


def table(headers: Sequence[str], body: list[list[str]]) -> str:
    widths = [max(len(h), *(len(row[i]) for row in body)) if body else len(h) for i, h in enumerate(headers)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in body]
    return "\n".join(lines)


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The project's performance targets, as measured ratios (reported, never asserted)."""
    rows = [Timing(**{k: v for k, v in r.items() if k in Timing.__dataclass_fields__}) for r in results["timings"]]
    by = {(r.wire, r.size, r.fragment, r.calls, r.strategy): r for r in rows}
    floor_ratio = ratios(rows)
    out: list[dict[str, Any]] = []
    for wire in ("openai_chat", "anthropic"):
        for size in (16 * 1024, 128 * 1024):
            value = floor_ratio.get((wire, size, 4, 1, "deferred"))
            out.append(_target(f"deferred / floor, {wire} {_size(size)} (frag 4)", value, "<=", 1.5))
    for e in results["exponents"]:
        if e["strategy"] == "deferred" and e["fragment"] == 4 and e["calls"] == 1:
            label = f"deferred growth exponent, {e['wire']} {_size(e['from'])}->{_size(e['to'])}"
            out.append(_target(label, e["exponent"], "<=", 1.05))
    for wire, peer in (("openai_chat", "openai-sdk"), ("anthropic", "anthropic-sdk")):
        mine, theirs = by.get((wire, 131072, 4, 1, "deferred")), by.get((wire, 131072, 4, 1, peer))
        speedup = theirs.seconds / mine.seconds if mine and theirs and mine.seconds and theirs.seconds else None
        out.append(_target(f"{peer} / deferred, {wire} 128 KiB (frag 4)", speedup, ">=", 40))
    for m in results["inflight"]:
        if m["strategy"] == "deferred":
            label = f"memory held by an in-flight call / its argument bytes, {m['wire']} {_size(m['size'])}"
            out.append(_target(label, m["held_ratio"], "<=", 2.0))
            label = f"peak memory of its stream / its argument bytes, {m['wire']} {_size(m['size'])}"
            out.append(_target(label, m["peak_ratio"], "<=", 2.0))
    for c in results["concurrency"]:
        label = f"{c['streams']} concurrent streams ({c['wire']}), aggregate events per CPU second"
        out.append(_target(label, c["events_per_cpu_s"], ">=", 150_000))
    return out


def _target(label: str, value: float | None, op: str, bound: float) -> dict[str, Any]:
    met = None if value is None else (value <= bound if op == "<=" else value >= bound)
    return {"target": label, "value": value, "bound": f"{op} {bound:g}", "met": met}


def skipped_lines(timings: list[Timing]) -> list[str]:
    """One line per strategy skipped at a size, or per case when the whole case was too big."""
    lines: list[str] = []
    whole: dict[str, str] = {}
    for t in timings:
        if not t.skipped:
            continue
        case = f"{t.wire} {_size(t.size)} f{t.fragment} c{t.calls}"
        if t.skipped.startswith("about "):  # the case itself was not generated
            whole.setdefault(case, t.skipped)
        else:
            lines.append(f"{t.strategy} at {case}: {t.skipped}")
    return [f"every strategy at {case}: {reason}" for case, reason in whole.items()] + lines


def report(results: dict[str, Any]) -> str:
    rows = [Timing(**{k: v for k, v in r.items() if k in Timing.__dataclass_fields__}) for r in results["timings"]]
    floor_ratio = ratios(rows)
    parts = []
    body = []
    for r in rows:
        if r.skipped:
            continue
        case = f"{r.wire} {_size(r.size)} f{r.fragment} c{r.calls}"
        ratio = floor_ratio.get((r.wire, r.size, r.fragment, r.calls, r.strategy))
        ms = r.seconds * 1000 if r.seconds else None
        mevents = r.events_per_s / 1e6 if r.events_per_s else None
        body.append([case, r.strategy, _num(ms, 3), _num(r.mb_per_s), _num(mevents, 3), _num(ratio)])
    headers = ["case (size per call, fragment chars, calls)", "strategy", "ms/stream", "MB/s", "Mevents/s", "x floor"]
    parts.append("## Time per stream (median)\n\n" + table(headers, body))
    body = [
        [
            f"{e['wire']} f{e['fragment']} c{e['calls']}",
            e["strategy"],
            f"{_size(e['from'])}->{_size(e['to'])}",
            f"{e['exponent']:.2f}",
        ]
        for e in results["exponents"]
    ]
    parts.append(
        "## Growth exponent (1 = linear, 2 = quadratic)\n\n" + table(["case", "strategy", "sizes", "exp"], body)
    )
    body = [
        [
            f"{m['wire']} {_size(m['size'])} f{m['fragment']}",
            m["strategy"],
            f"{m['peak_bytes'] / 1024:,.0f}",
            f"{m['peak_ratio']:.2f}",
            f"{m['held_ratio']:.2f}",
            f"{m['delay_seconds'] * 1000:.3f}",
        ]
        for m in results["inflight"]
    ]
    headers = ["one call in flight", "strategy", "peak KiB", "peak/args", "held/args", "end->call ms"]
    parts.append("## Memory per in-flight call and end-marker-to-delivery delay\n\n" + table(headers, body))
    body = [
        [
            c["wire"],
            f"{c['streams']} x {_size(c['size'])} f{c['fragment']}, {c['chunk']} B reads",
            f"{c['seconds']:.2f}",
            f"{c['cpu_seconds']:.2f}",
            f"{c['events_per_s']:,.0f}",
            f"{c['events_per_cpu_s']:,.0f}",
            f"{c['p50_delay'] * 1000:.3f}",
            f"{c['p99_delay'] * 1000:.3f}",
        ]
        for c in results["concurrency"]
    ]
    headers = ["wire", "streams", "wall s", "CPU s", "events/wall s", "events/CPU s", "p50 delay ms", "p99 delay ms"]
    parts.append("## Concurrent streams on one event loop (in memory)\n\n" + table(headers, body))
    body = [
        [
            f"{r['wire']} {_size(r['size'])} f{r['fragment']}",
            f"{r['replay_seconds'] * 1000:.1f}",
            f"{r['plain_seconds'] * 1000:.1f}",
            f"{r['ratio']:.2f}",
            "-" if r["subprocess_seconds"] is None else f"{r['subprocess_seconds'] * 1000:.0f}",
        ]
        for r in results["replay"]
    ]
    headers = ["transcript", "replay ms (in-process)", "split+orjson ms", "ratio", "subprocess ms"]
    parts.append("## streamkit replay vs a plain split-and-parse loop\n\n" + table(headers, body))
    body = [
        [
            t["target"],
            "-" if t["value"] is None else _num(t["value"]),
            t["bound"],
            {True: "met", False: "MISSED"}.get(t["met"], "n/a"),
        ]
        for t in results["targets"]
    ]
    parts.append("## Targets\n\n" + table(["target", "measured", "bound", ""], body))
    if results["skipped"]:
        parts.append("## Skipped\n\n" + "\n".join(f"- {line}" for line in results["skipped"]))
    return "\n\n".join(parts) + "\n"


#: The plot's legend: what each strategy is, for a reader who has not read strategies.py.
LEGEND = {
    "floor": "the floor: split, parse each call once, no checks",
    "deferred": "streamkit: each call parsed once, at its end",
    "early/every": "streamkit with previews on every fragment",
    "early/4KiB": "streamkit with a preview every 4 KiB",
    "early/x1.25": "streamkit with previews at 1.25x growth",
    "httpx-sse": "httpx-sse and a hand-written loop",
    "openai-sdk": "the openai SDK's accumulator",
    "anthropic-sdk": "the anthropic SDK's accumulator",
    "langchain": "LangChain's chunk merging",
}


def plot(results: dict[str, Any], path: Path) -> str | None:
    """Log-log time per stream against argument size, one line per strategy; None when done."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "the plot (needs matplotlib: pip install -e '.[bench]')"
    rows = [r for r in results["timings"] if r["seconds"] and r["calls"] == 1]
    fragment = 4 if any(r["fragment"] == 4 for r in rows) else min((r["fragment"] for r in rows), default=4)
    wires = [w for w in ("openai_chat", "anthropic") if any(r["wire"] == w for r in rows)]
    figure, axes = plt.subplots(1, max(len(wires), 1), figsize=(10, 4.2), sharey=True, squeeze=False)
    names = list(dict.fromkeys(r["strategy"] for r in rows))
    colors = {name: f"C{number % 10}" for number, name in enumerate(names)}
    for axis, wire in zip(axes[0], wires, strict=False):
        for strategy in names:
            points = sorted(
                (r["argument_bytes"], r["seconds"] * 1000)
                for r in rows
                if r["wire"] == wire and r["strategy"] == strategy and r["fragment"] == fragment
            )
            if points:
                style = "-" if strategy in ("floor", "deferred") else "--"
                axis.plot(
                    *zip(*points, strict=True),
                    style,
                    color=colors[strategy],
                    marker="o",
                    markersize=3,
                    linewidth=2.5 if strategy == "deferred" else 1.2,
                    label=LEGEND.get(strategy, strategy),
                )
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_title(f"{wire}, {fragment}-character fragments, 1 call")
        axis.set_xlabel("argument bytes")
        axis.grid(True, which="major", alpha=0.3)
        axis.legend(fontsize=7, loc="upper left")
    axes[0][0].set_ylabel("ms per stream (CPU)")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=72)
    plt.close(figure)
    return None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fragments of 4 characters, 1 call, fewer repeats")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"where results go (default {RESULTS})")
    parser.add_argument("--plot", type=Path, default=None, help="the PNG to write (default OUT/plot.png)")
    parser.add_argument("--strategies", nargs="+", default=None, help="only these strategies (the floor always runs)")
    parser.add_argument("--wires", nargs="+", default=None, choices=("openai_chat", "anthropic"))
    parser.add_argument("--sizes", nargs="+", type=int, default=None, help="argument sizes in bytes")
    parser.add_argument("--max-run", type=float, default=None, help="skip runs predicted to take longer (seconds)")
    parser.add_argument("--no-progress", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    config = QUICK if args.quick else Config()
    overrides: dict[str, Any] = {}
    if args.wires:
        overrides["wires"] = tuple(args.wires)
    if args.sizes:
        overrides["sizes"] = tuple(sorted(args.sizes))
    if args.max_run:
        overrides["max_run"] = args.max_run
    config = dataclasses.replace(config, **overrides)
    skipped: list[str] = []
    strategies: list[Strategy] = []
    for strategy in STRATEGIES:
        if args.strategies and strategy.name not in args.strategies and strategy.name != "floor":
            continue
        missing = strategy.missing()
        if missing:
            skipped.append(f"{strategy.name} (needs {', '.join(missing)}: pip install -e '.[bench]')")
        else:
            strategies.append(strategy)
    for line in skipped:
        print(f"skipping {line}", file=sys.stderr)

    cells = sum(
        len([s for s in strategies if wire in s.wires]) * len(config.sizes) for wire, _, _ in measure.case_grid(config)
    )
    extra = len(config.wires) * (len(config.inflight_sizes) * 2 + 2)
    progress = Progress(cells + extra, enabled=not args.no_progress)
    began = time.perf_counter()
    timings = measure.time_cases(config, strategies, progress)
    inflight = measure.measure_inflight(config, progress)
    concurrency = measure.measure_concurrency(config, progress)
    replay = measure.measure_replay(config, progress)
    progress.close()
    skipped += skipped_lines(timings)
    skipped.append("concurrency over loopback HTTP: not measured; the concurrency figures are in memory")
    results: dict[str, Any] = {
        "command": "python -m benchmarks" + (" --quick" if args.quick else ""),
        "argv": list(argv if argv is not None else sys.argv[1:]),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "seconds": None,
        "machine": machine(),
        "versions": versions(),
        "config": dataclasses.asdict(config) | {"chunk_bytes": CHUNK_BYTES},
        "strategies": {s.name: s.description for s in strategies},
        "timings": [t.to_dict() for t in timings],
        "inflight": [m.to_dict() for m in inflight],
        "concurrency": [c.to_dict() for c in concurrency],
        "replay": [r.to_dict() for r in replay],
        "skipped": skipped,
    }
    results["exponents"] = exponents(timings)
    results["targets"] = targets(results)
    results["seconds"] = round(time.perf_counter() - began, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = results["date"].replace(":", "").replace("-", "")
    for name in (f"results-{stamp}.json", "latest.json"):
        (args.out / name).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    missing_plot = plot(results, args.plot or args.out / "plot.png")
    if missing_plot:
        results["skipped"].append(missing_plot)
        print(f"skipping {missing_plot}", file=sys.stderr)
    text = report(results)
    (args.out / "latest.md").write_text(text, encoding="utf-8")
    print(text)
    print(f"{results['seconds']} s; results in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
