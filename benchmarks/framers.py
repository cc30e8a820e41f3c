"""Throughput of the NDJSON and AWS event-stream framers, alone and in the whole pipeline.

Run: ``python -m benchmarks.framers`` (botocore, from the ``test`` extra, adds its event-stream
parser for comparison). Streams: an Ollama response of 20,000 text lines then a call, and a
Bedrock response whose one call arrives in 20,000 two-character fragments; each fed whole, in
4 KiB reads and in 64-byte reads. The best of several runs is shown.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from streamkit import Provider, iter_events
from streamkit._awsstream import EventStreamDecoder
from streamkit._ndjson import NDJSONDecoder
from tests.eventstream_encode import event

N = 20_000


def _best(run: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def ollama_stream() -> bytes:
    lines = [{"model": "m", "message": {"role": "assistant", "content": f"tok{i} "}, "done": False} for i in range(N)]
    call = {"id": "call_1", "function": {"index": 0, "name": "f", "arguments": {"a": 1}}}
    lines.append({"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": [call]}, "done": False})
    lines.append({"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"})
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def bedrock_stream() -> bytes:
    def piece(text: str) -> bytes:
        body = {"contentBlockIndex": 0, "delta": {"toolUse": {"input": text}}, "p": "abcd"}
        return event("contentBlockDelta", body)

    start = {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t", "name": "f"}}}
    messages = [event("messageStart", {"role": "assistant"}), event("contentBlockStart", start), piece('{"s": "')]
    messages += [piece("xy")] * N
    messages += [piece('"}'), event("contentBlockStop", {"contentBlockIndex": 0})]
    messages += [event("messageStop", {"stopReason": "tool_use"}), event("metadata", {"usage": {"inputTokens": 1}})]
    return b"".join(messages)


def _framer(cls: type[NDJSONDecoder] | type[EventStreamDecoder], chunks: list[bytes]) -> Callable[[], object]:
    def run() -> object:
        decoder = cls()
        for chunk in chunks:
            decoder.feed(chunk)
        return decoder.flush()

    return run


def _pipeline(chunks: list[bytes], slug: Provider) -> Callable[[], object]:
    def run() -> object:
        return list(iter_events(chunks, slug))

    return run


def _botocore(chunks: list[bytes]) -> Callable[[], object] | None:
    try:
        from botocore.eventstream import EventStreamBuffer
    except ImportError:
        return None

    def run() -> object:
        buffer = EventStreamBuffer()
        for chunk in chunks:
            buffer.add_data(chunk)
            for _ in buffer:
                pass
        return buffer

    return run


def main() -> None:
    print(f"{'stream':<28} {'read size':>10} {'framer MB/s':>12} {'pipeline MB/s':>14} {'botocore MB/s':>14}")
    cases: tuple[tuple[Provider, type[NDJSONDecoder | EventStreamDecoder], bytes], ...] = (
        ("ollama", NDJSONDecoder, ollama_stream()),
        ("bedrock", EventStreamDecoder, bedrock_stream()),
    )
    for slug, cls, data in cases:
        for size in (len(data), 4096, 64):
            chunks = _chunks(data, size)
            mb = len(data) / 1e6
            framer = mb / _best(_framer(cls, chunks))
            pipeline = mb / _best(_pipeline(chunks, slug), 3)
            reference = _botocore(chunks) if slug == "bedrock" else None
            other = f"{mb / _best(reference, 2):14.1f}" if reference else f"{'':>14}"
            label = f"{slug} ({mb:.1f} MB)"
            read = "whole" if size == len(data) else str(size)
            print(f"{label:<28} {read:>10} {framer:12.1f} {pipeline:14.1f} {other}")


if __name__ == "__main__":
    main()
