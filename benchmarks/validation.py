"""Validation cost per call: ``python -m benchmarks.validation``.

Times ``Toolset.validate`` on a small call and on a call whose arguments are a 16 KiB object,
valid and invalid, and the one-off cost of compiling a tool set. Prints a Markdown table:
the best of 7 runs, per call. A valid call costs one ``is_valid`` pass; only an invalid one
pays for collecting every error with its path.
"""

from __future__ import annotations

import json
import platform
import timeit
from typing import Any

from streamkit import ToolCall, Toolset

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "units": {"type": "string", "enum": ["c", "f"]}},
    "required": ["city"],
}
ORDER = {
    "type": "object",
    "properties": {
        "customer": {"type": "string"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                    "qty": {"type": "integer", "minimum": 1},
                    "note": {"type": "string"},
                },
                "required": ["sku", "qty"],
            },
        },
    },
    "required": ["customer", "items"],
}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
    {"type": "function", "function": {"name": "place_order", "parameters": ORDER}},
]


def big_order() -> dict[str, Any]:
    """An order whose JSON is 16 KiB (16,384 bytes, give or take one item)."""
    items: list[dict[str, Any]] = []
    order = {"customer": "Ada Lovelace", "items": items}
    while len(json.dumps(order)) < 16 * 1024:
        n = len(items)
        items.append({"sku": f"ABC-{n % 10000:04d}", "qty": n % 7 + 1, "note": "gift wrap, leave at door"})
    return order


def per_call(function: Any, number: int) -> float:
    """The best of 7 runs, in microseconds per call."""
    return min(timeit.repeat(function, number=number, repeat=7)) / number * 1e6


def main() -> None:
    toolset = Toolset(TOOLS)
    small = ToolCall(0, "call_1", "get_weather", {"city": "Paris", "units": "c"})
    small_bad = ToolCall(0, "call_1", "get_weather", {"city": 7, "units": "k", "extra": True})
    order = big_order()
    large = ToolCall(1, "call_2", "place_order", order)
    broken = json.loads(json.dumps(order))
    broken["items"][3]["qty"] = 0
    broken["items"][40]["sku"] = "nope"
    large_bad = ToolCall(1, "call_2", "place_order", broken)
    size = len(json.dumps(order))
    # The pipeline hands the raw argument text along, kept on an invalid call as received.
    small_bad_raw, large_bad_raw = json.dumps(small_bad.input), json.dumps(broken)

    assert toolset.validate(small) is small and toolset.validate(large) is large
    assert len(toolset.validate(small_bad).errors) == 3  # type: ignore[union-attr]
    assert len(toolset.validate(large_bad).errors) == 2  # type: ignore[union-attr]

    rows = [
        ("small call, valid (2 properties)", per_call(lambda: toolset.validate(small), 200_000)),
        ("small call, 3 errors", per_call(lambda: toolset.validate(small_bad, raw=small_bad_raw), 50_000)),
        (
            f"16 KiB call, valid ({size:,} bytes, {len(order['items'])} items)",
            per_call(lambda: toolset.validate(large), 2_000),
        ),
        ("16 KiB call, 2 errors", per_call(lambda: toolset.validate(large_bad, raw=large_bad_raw), 2_000)),
        ("compiling the 2-tool set (once per tool set)", per_call(lambda: Toolset(TOOLS), 2_000)),
    ]
    rows.extend(_pure_python(small, large))
    print(f"Python {platform.python_version()}, jsonschema-rs {_version()}, {platform.machine()}")
    print()
    print("| case | µs per call |")
    print("| --- | ---: |")
    for label, micros in rows:
        print(f"| {label} | {micros:.2f} |")


def _pure_python(small: ToolCall, large: ToolCall) -> list[tuple[str, float]]:
    """The same valid calls with the pure-Python ``jsonschema``, when it is installed."""
    try:
        import jsonschema  # type: ignore[import-untyped]
    except ImportError:
        return []
    weather, order = jsonschema.Draft202012Validator(WEATHER), jsonschema.Draft202012Validator(ORDER)
    return [
        (
            "for comparison, pure-Python jsonschema: small call, valid",
            per_call(lambda: weather.is_valid(small.input), 20_000),
        ),
        (
            "for comparison, pure-Python jsonschema: 16 KiB call, valid",
            per_call(lambda: order.is_valid(large.input), 50),
        ),
    ]


def _version() -> str:
    from importlib.metadata import version

    return version("jsonschema-rs")


if __name__ == "__main__":
    main()
