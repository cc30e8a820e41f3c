"""``python -m benchmarks.values``: what making one value class costs, by ``dataclass`` option.

A class of five fields (one with a default), as the vocabulary's are, made again and again by
``dataclass`` with each set of options, and by ``streamkit._values`` (``value``: frozen and
slotted, equality, hash and repr shared; ``event``: slotted, frozen for the type checker alone);
the best mean of 15 rounds of 40, all interleaved. ``dataclass`` compiles each generated method
with ``exec``: ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, and for a frozen class
``__setattr__`` and ``__delattr__``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from streamkit._values import event, value

OPTIONS: dict[str, dict[str, bool]] = {
    "frozen, slots (the vocabulary before)": {"frozen": True, "slots": True},
    "frozen": {"frozen": True},
    "slots": {"slots": True},
    "frozen, slots, repr=False": {"frozen": True, "slots": True, "repr": False},
    "frozen, slots, eq=False (no __eq__, no __hash__)": {"frozen": True, "slots": True, "eq": False},
    "frozen, slots, repr=False, eq=False": {"frozen": True, "slots": True, "repr": False, "eq": False},
    "slots, repr=False, eq=False": {"slots": True, "repr": False, "eq": False},
}


def _body() -> type:
    class Call:
        __annotations__ = {"index": "int", "id": "str", "name": "str", "input": "dict", "choice": "int"}
        choice = 0

    return Call


def _maker(options: dict[str, bool]) -> Callable[[], Any]:
    return lambda: dataclass(**options)(_body())


def _makers() -> dict[str, Callable[[], Any]]:
    makers = {name: _maker(options) for name, options in OPTIONS.items()}
    makers["streamkit._values.value"] = lambda: value(_body())
    makers["streamkit._values.event"] = lambda: event(_body())
    return makers


def main() -> None:
    makers = _makers()
    best = dict.fromkeys(makers, float("inf"))
    for _ in range(15):
        for name, make in makers.items():
            began = time.perf_counter()
            for _ in range(40):
                make()
            best[name] = min(best[name], (time.perf_counter() - began) / 40)
    print("| how the class is made | µs per class |\n|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds * 1e6:.0f} |")


if __name__ == "__main__":
    main()
