"""Peak memory for each limit, measured in a fresh interpreter: ``python -m tests.ceilings``.

Each case feeds a stream that would grow without bound (lazily made, never held) to the
pipeline with one limit set, and records the tracemalloc peak until the ``LimitExceededError``.
For a limit on bytes the figure is the peak as a multiple of the limit; for a limit on a count
(calls, choices), the peak per unit of the limit, in bytes. One JSON line per case on stdout:
``{"case", "limit", "value", "peak", "ratio"}``, or ``{"case", "error"}`` when the stream was
not stopped by its limit. ``tests/test_limits.py`` runs it and holds each
ratio under a ceiling.
"""

from __future__ import annotations

import itertools
import json
import tracemalloc
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from streamkit import LimitExceededError, Limits, Provider, StreamError, iter_events
from streamkit._assembler import _FRAMERS
from streamkit.providers import DECODERS

_BYTES = 256 * 1024
_COUNT = 500
_X = "x" * 4096


def _data(payload: object) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _anthropic(*payloads: dict[str, Any]) -> bytes:
    return b"".join(_data(payload) for payload in payloads)


_HEAD = _anthropic({"type": "message_start", "message": {"id": "m", "usage": {}}})
_TOOL = {"type": "tool_use", "id": "t", "name": "f", "input": {}}


def _block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": 0, "delta": delta}


def _repeat(piece: bytes) -> Iterator[bytes]:
    return itertools.repeat(piece, 8 * _BYTES // len(piece))


def _gemini(*parts: dict[str, Any], candidate: int = 0) -> bytes:
    return _data({"candidates": [{"index": candidate, "content": {"role": "model", "parts": list(parts)}}]})


def _piece(first: bool) -> bytes:
    piece = {"jsonPath": "$.a", "stringValue": _X, "willContinue": True}
    call = {"partialArgs": [piece], "willContinue": True, **({"name": "f"} if first else {})}
    return _gemini({"functionCall": call})


def _chat_stop(choice: int) -> bytes:
    return _data({"choices": [{"index": choice, "delta": {}, "finish_reason": "stop"}]})


#: case -> (provider, limits, the endless source)
CASES: dict[str, tuple[Provider, Limits, Callable[[], Iterable[bytes]]]] = {
    "max_argument_bytes (Anthropic fragments)": (
        "anthropic",
        Limits(max_argument_bytes=_BYTES),
        lambda: itertools.chain(
            [_HEAD + _anthropic(_block_start(0, _TOOL))],
            _repeat(_anthropic(_delta({"type": "input_json_delta", "partial_json": _X}))),
        ),
    ),
    "max_argument_bytes (Vertex streamed pieces)": (
        "gemini",
        Limits(max_argument_bytes=_BYTES),
        lambda: itertools.chain([_piece(True)], _repeat(_piece(False))),
    ),
    "max_open_calls": (
        "anthropic",
        Limits(max_open_calls=_COUNT),
        lambda: itertools.chain(
            [_HEAD], (_anthropic(_block_start(n, {**_TOOL, "id": f"t{n}"})) for n in range(20 * _COUNT))
        ),
    ),
    "max_calls": (
        "anthropic",
        Limits(max_calls=_COUNT),
        lambda: itertools.chain(
            [_HEAD],
            (
                _anthropic(_block_start(n, {**_TOOL, "id": f"t{n}"}), {"type": "content_block_stop", "index": n})
                for n in range(20 * _COUNT)
            ),
        ),
    ),
    "max_choices": ("openai_chat", Limits(max_choices=_COUNT), lambda: map(_chat_stop, range(20 * _COUNT))),
    "max_choices (Gemini text-only candidates)": (
        "gemini",
        Limits(max_choices=_COUNT),
        lambda: (_gemini({"text": "a"}, candidate=n) for n in range(20 * _COUNT)),
    ),
    "max_event_bytes (SSE, one long line)": (
        "anthropic",
        Limits(max_event_bytes=_BYTES),
        lambda: itertools.chain([b"data: "], _repeat(b"x" * 8192)),
    ),
    "max_event_bytes (SSE, short data lines, 8 KiB reads)": (
        "anthropic",
        Limits(max_event_bytes=_BYTES),
        lambda: _repeat(b"data: ab\n" * 910),  # 8,190 bytes
    ),
    "max_event_bytes (SSE, short data lines, one read)": (
        "anthropic",
        Limits(max_event_bytes=_BYTES),
        lambda: [b"data: ab\n" * (_BYTES // 9 + 1000)],
    ),
    "max_event_bytes (NDJSON line)": (
        "ollama",
        Limits(max_event_bytes=_BYTES),
        lambda: itertools.chain([b'{"a": "'], _repeat(b"x" * 8192)),
    ),
    "max_turn_bytes (thinking text)": (
        "anthropic",
        Limits(max_turn_bytes=_BYTES),
        lambda: itertools.chain(
            [_HEAD + _anthropic(_block_start(0, {"type": "thinking", "thinking": ""}))],
            _repeat(_anthropic(_delta({"type": "thinking_delta", "thinking": _X}))),
        ),
    ),
    "max_turn_bytes (usage keys)": (
        "gemini",
        Limits(max_turn_bytes=_BYTES),
        lambda: (_data({"candidates": [{"index": 0}], "usageMetadata": {f"k{n}": n}}) for n in range(20 * _COUNT)),
    ),
}


EVENTSTREAM = "max_event_bytes (event-stream message)"


def _eventstream() -> dict[str, Any]:
    """The event-stream framer buffering one message as large as the limit, its bytes arriving
    in small reads: what it holds before the message is whole (and found to be bad)."""
    framer = _FRAMERS["eventstream"](max_event_bytes=_BYTES)
    head = _BYTES.to_bytes(4, "big") + (0).to_bytes(4, "big")
    prelude = head + zlib.crc32(head).to_bytes(4, "big")
    chunks = itertools.chain([prelude], _repeat(b"x" * 8192))
    tracemalloc.start()
    error: BaseException | None = None
    try:
        for chunk in chunks:
            framer.feed(chunk)
    except StreamError as exc:
        error = exc
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    if not isinstance(error, StreamError):
        raise AssertionError(f"the event-stream framer took endless bytes: {error!r}")
    return {
        "case": EVENTSTREAM,
        "limit": "max_event_bytes",
        "value": _BYTES,
        "peak": peak,
        "ratio": round(peak / _BYTES, 2),
    }


def measure(case: str) -> dict[str, Any]:
    provider, limits, make = CASES[case]
    source = make()  # a source made whole (one read) is the caller's, not counted
    # ``iter_events`` was imported above and the provider's decoder (imported on its first lookup)
    # is loaded here: the modules a first use loads are not counted either.
    DECODERS[provider]
    tracemalloc.start()
    error: BaseException | None = None
    try:
        for _ in iter_events(source, provider, limits=limits):
            pass
    except StreamError as exc:
        error = exc
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    limit = case.split()[0]
    return _row(case, error, limit, getattr(limits, limit), peak)


def _row(case: str, error: BaseException | None, limit: str, value: int, peak: int) -> dict[str, Any]:
    if not isinstance(error, LimitExceededError) or error.limit != limit:
        raise AssertionError(f"{case}: expected LimitExceededError({limit}), got {error!r}")
    return {"case": case, "limit": limit, "value": value, "peak": peak, "ratio": round(peak / value, 2)}


def main() -> None:
    for case, run in [*((case, lambda case=case: measure(case)) for case in CASES), (EVENTSTREAM, _eventstream)]:
        try:
            row = run()
        except AssertionError as exc:
            row = {"case": case, "error": str(exc)}
        print(json.dumps(row), flush=True)  # noqa: T201 - the script's output is its table


if __name__ == "__main__":
    main()
