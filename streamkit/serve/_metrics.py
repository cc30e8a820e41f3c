"""The proxy's counters, written in Prometheus' text format for ``GET /metrics``.

Counters are per process: with ``--workers N`` each worker counts its own streams, and a
scrape reaches one of them (run one worker per replica where the numbers must add up).
"""

from __future__ import annotations

from collections import Counter

__all__ = ("BUCKETS", "Metrics")

#: Upper bounds, in seconds, of the histogram of a call's time from its first byte to its end.
BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0)

_HELP = {
    "streamkit_serve_streams_total": ("counter", "Responses proxied, by format and outcome."),
    "streamkit_serve_calls_total": ("counter", "Tool calls completed, by format and outcome."),
    "streamkit_serve_invalid_calls_total": ("counter", "Invalid tool calls, by format and issue kind."),
    "streamkit_serve_upstream_errors_total": ("counter", "Upstream failures, by format and kind."),
    "streamkit_serve_asked_again_total": ("counter", "Times the model was asked again about a bad call, by format."),
    "streamkit_serve_call_seconds": ("histogram", "Time from a call's first byte in the response to its end marker."),
}


class Metrics:
    def __init__(self) -> None:
        self.counters: Counter[tuple[str, tuple[tuple[str, str], ...]]] = Counter()
        self._buckets: Counter[tuple[str, float]] = Counter()
        self._sums: dict[str, float] = {}
        self._counts: Counter[str] = Counter()

    def count(self, name: str, **labels: str) -> None:
        self.counters[name, tuple(sorted(labels.items()))] += 1

    def observe(self, fmt: str, seconds: float) -> None:
        for bound in BUCKETS:
            if seconds <= bound:
                self._buckets[fmt, bound] += 1
        self._sums[fmt] = self._sums.get(fmt, 0.0) + seconds
        self._counts[fmt] += 1

    def text(self) -> str:
        lines: list[str] = []
        for name, (kind, text) in _HELP.items():
            lines += (f"# HELP {name} {text}", f"# TYPE {name} {kind}")
            if kind == "histogram":
                lines += self._histogram(name)
                continue
            for (metric, labels), value in sorted(self.counters.items()):
                if metric == name:
                    lines.append(f"{name}{_labels(labels)} {value}")
        return "\n".join(lines) + "\n"

    def _histogram(self, name: str) -> list[str]:
        lines: list[str] = []
        for fmt in sorted(self._counts):
            lines += (f'{name}_bucket{{format="{fmt}",le="{bound}"}} {self._buckets[fmt, bound]}' for bound in BUCKETS)
            lines.append(f'{name}_bucket{{format="{fmt}",le="+Inf"}} {self._counts[fmt]}')
            lines.append(f'{name}_sum{{format="{fmt}"}} {self._sums[fmt]:.6f}')
            lines.append(f'{name}_count{{format="{fmt}"}} {self._counts[fmt]}')
        return lines


def _labels(labels: tuple[tuple[str, str], ...]) -> str:
    inner = ",".join(f'{key}="{_escape(value)}"' for key, value in labels)
    return f"{{{inner}}}" if inner else ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
