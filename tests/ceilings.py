"""Peak memory for each limit, measured in a fresh interpreter: ``python -m tests.ceilings``.

Each case feeds a stream that would grow without bound (lazily made, never held) to the
pipeline with one limit set, and records the tracemalloc peak until the ``LimitExceededError``;
the ``max_event_bytes`` cases "within the limit" feed one event no longer than the limit whose
JSON would build too much. For a limit on bytes the figure is the peak as a multiple of the
limit; for a limit on a count (calls, choices), the peak per unit of the limit, in bytes.
``READS`` are the reads of a response up to and with one event as long as ``max_event_bytes``
allows, fed to an ``Assembler`` (the call left open: its arguments are read at its end, within
``max_argument_bytes``): the peak as a multiple of that limit. One JSON line per case on stdout: ``{"case", "limit",
"value", "peak", "ratio"}``, or ``{"case", "error"}`` when the stream was not stopped by its
limit (or, for a read, when it was stopped). ``tests/test_limits.py`` runs it and holds each
ratio under a ceiling.
"""

from __future__ import annotations

import itertools
import json
import tracemalloc
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from streamkit import Assembler, LimitExceededError, Limits, Provider, StreamError, iter_events
from streamkit._assembler import _FRAMERS
from streamkit._limits import event_tokens
from streamkit.providers import DECODERS

from .eventstream_encode import encode_message

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


def _within(head: bytes, piece: bytes, tail: bytes, room: int = _BYTES - 64) -> bytes:
    """``head``, then ``piece`` as many times as fit in ``room`` bytes with ``tail`` after it:
    one JSON text, no longer than the limit with its framing, of a value every 2 or 3 bytes."""
    return head + piece * ((room - len(head) - len(tail)) // len(piece)) + tail


def _message(event_type: str, payload: bytes) -> bytes:
    headers = [(":event-type", 7, event_type), (":content-type", 7, "application/json"), (":message-type", 7, "event")]
    return encode_message(headers, payload)


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
    "max_event_bytes (SSE, an event of `[],[],…` within the limit)": (
        "anthropic",
        Limits(max_event_bytes=_BYTES),
        lambda: [_HEAD + _within(b'data: {"type":"ping","pad":[', b"[],", b"[]]}\n\n")],
    ),
    "max_event_bytes (SSE, an event of `{},{},…` within the limit)": (
        "openai_chat",
        Limits(max_event_bytes=_BYTES),
        lambda: [_within(b'data: {"choices":[],"pad":[', b"{},", b"{}]}\n\n")],
    ),
    "max_event_bytes (NDJSON, a line of `[],[],…` within the limit)": (
        "ollama",
        Limits(max_event_bytes=_BYTES),
        lambda: [_within(b'{"model":"m","done":false,"pad":[', b"[],", b"[]]}\n")],
    ),
    "max_event_bytes (event-stream, a message of `{},{},…` within the limit)": (
        "bedrock",
        Limits(max_event_bytes=_BYTES),
        lambda: [_message("messageStart", _within(b'{"role":"assistant","pad":[', b"{},", b"{}]}", _BYTES - 256))],
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

_START = _HEAD + _anthropic(_block_start(0, _TOOL))
_FRAGMENT = b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"'


def _deepest(size: int = _BYTES - 64) -> bytes:
    """An event of ``size`` bytes (one the decoder ignores) holding as many tokens as
    ``max_event_bytes`` allows, of the shape that costs the most per token (lists in lists), the
    rest of its bytes a string."""
    nest = b"[" * 500 + b"]" * 500
    lists = b",".join([nest] * ((event_tokens(_BYTES) - 16) // 501))
    head = b'data: {"type":"ping","pad":[' + lists + b'],"text":"'
    return head + b"x" * (size - len(head)) + b'"}\n\n'


#: case -> (provider, limits, the reads, made beforehand)
READS: dict[str, tuple[Provider, Limits, Callable[[], list[bytes]]]] = {
    "an argument string as long as max_event_bytes allows, in one event": (
        "anthropic",
        Limits(max_event_bytes=_BYTES),
        lambda: [_START, _within(_FRAGMENT, b"x", b'"}}\n\n')],
    ),
    "the same after small fragments (the hot read armed)": (
        "anthropic",
        Limits(max_event_bytes=_BYTES),
        lambda: [
            _START,
            *[_anthropic(_delta({"type": "input_json_delta", "partial_json": "ab"}))] * 8,
            _within(_FRAGMENT, b"x", b'"}}\n\n'),
        ],
    ),
    "the same argument string, ASCII with one emoji (text beyond ASCII)": (
        "anthropic",
        Limits(max_event_bytes=_BYTES),
        lambda: [_START, _within(_FRAGMENT + "\U0001f600".encode(), b"x", b'"}}\n\n')],
    ),
    "the most tokens an event may hold, of the costliest shape": (
        "anthropic",
        Limits(max_event_bytes=_BYTES),
        lambda: [_START, _deepest()],
    ),
    "the same in an event four token allowances long (read by orjson)": (
        "anthropic",
        Limits(max_event_bytes=_BYTES),
        lambda: [_START, _deepest(4 * event_tokens(_BYTES) - 8)],
    ),
}


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


def measure_read(case: str) -> dict[str, Any]:
    """The peak while the reads of a response, one event of them as long as ``max_event_bytes``
    allows, are fed, as a multiple of that limit."""
    provider, limits, make = READS[case]
    reads = make()
    assembler = Assembler(provider, limits=limits)
    tracemalloc.start()
    error: BaseException | None = None
    try:
        for read in reads:
            assembler.feed(read)
    except StreamError as exc:
        error = exc
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    if error is not None:
        raise AssertionError(f"{case}: the response was stopped: {error!r}")
    value = limits.max_event_bytes
    return {"case": case, "limit": "max_event_bytes", "value": value, "peak": peak, "ratio": round(peak / value, 2)}


def _row(case: str, error: BaseException | None, limit: str, value: int, peak: int) -> dict[str, Any]:
    if not isinstance(error, LimitExceededError) or error.limit != limit:
        raise AssertionError(f"{case}: expected LimitExceededError({limit}), got {error!r}")
    return {"case": case, "limit": limit, "value": value, "peak": peak, "ratio": round(peak / value, 2)}


def main() -> None:
    runs: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        *((case, lambda case=case: measure(case)) for case in CASES),
        (EVENTSTREAM, _eventstream),
        *((case, lambda case=case: measure_read(case)) for case in READS),
    ]
    for case, run in runs:
        try:
            row = run()
        except AssertionError as exc:
            row = {"case": case, "error": str(exc)}
        print(json.dumps(row), flush=True)  # noqa: T201 - the script's output is its table


if __name__ == "__main__":
    main()
