"""The ``streamkit`` command line.

``streamkit replay FILE --provider SLUG`` prints one JSON object per line, in delivery order:
``tool_call`` and ``invalid_tool_call`` lines as calls complete, then an ``end`` line when the
stream ended normally. This output and the exit statuses are a public contract, extended and
never broken:

- 0: the stream decoded to its end;
- 1: the provider reported an error, or the stream failed or ended early (one line on stderr;
  the lines already printed stay, and the unfinished calls are printed as invalid calls);
- 2: usage errors (unknown provider, unreadable file, bad option).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

import orjson

from ._errors import StreamError, UsageError
from ._pipeline import iter_events
from ._types import InvalidToolCall, ResponseEnd, StreamEvent, ToolCall
from .providers import DECODERS

__all__ = ("main", "to_json_line")

EXIT_OK, EXIT_STREAM_ERROR, EXIT_USAGE = 0, 1, 2


def to_json_line(item: StreamEvent) -> dict[str, Any] | None:
    """The replay line for a value, or ``None`` for values replay does not print (text)."""
    if isinstance(item, ToolCall):
        line: dict[str, Any] = {"type": "tool_call", "index": item.index, "id": item.id, "name": item.name}
        line["input"] = item.input
    elif isinstance(item, InvalidToolCall):
        line = {"type": "invalid_tool_call", "index": item.index, "id": item.id, "name": item.name}
        line["raw"] = item.raw
        line["errors"] = [issue.to_dict() for issue in item.errors]
    elif isinstance(item, ResponseEnd):
        return {"type": "end", "stop_reason": item.stop_reason, "usage": item.usage}
    else:
        return None
    if item.choice:
        line["choice"] = item.choice
    if item.anomalies:
        line["anomalies"] = list(item.anomalies)
    return line


# Characters that are valid raw inside a JSON string but that ``str.splitlines`` (and some
# JSON-lines readers) take for line ends: escaped, so that one line is always one object.
_LINE_BREAKERS = ((b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"), (b"\xc2\x85", b"\\u0085"))


def _dumps(line: dict[str, Any]) -> bytes:
    try:
        data = orjson.dumps(line)
    except TypeError:  # an integer beyond 64 bits: the standard library prints it exactly
        data = json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode()
    for raw, escaped in _LINE_BREAKERS:
        if raw in data:
            data = data.replace(raw, escaped)
    return data


#: Without --chunk-size the file is read in blocks of this size: the calls come out the same
#: (chunking never changes them), and the framer never decodes one huge region at once.
_READ_BYTES = 64 * 1024


def _chunks(stream: BinaryIO, size: int | None) -> Iterator[bytes]:
    if not size:
        yield from iter(lambda: stream.read(_READ_BYTES), b"")
        return
    data = stream.read()
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _replay(args: argparse.Namespace, out: BinaryIO, err: Any) -> int:
    if args.provider not in DECODERS:
        known = ", ".join(sorted(DECODERS))
        print(f"streamkit: error: unknown provider {args.provider!r}; known providers: {known}", file=err)
        return EXIT_USAGE
    try:
        stream: BinaryIO = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        print(f"streamkit: error: cannot read {args.file}: {exc.strerror}", file=err)
        return EXIT_USAGE

    def emit(item: StreamEvent) -> None:
        line = to_json_line(item)
        if line is not None:
            out.write(_dumps(line) + b"\n")
            out.flush()

    with stream:
        try:
            for item in iter_events(_chunks(stream, args.chunk_size), args.provider):
                emit(item)
        except StreamError as exc:
            for call in exc.unfinished:
                emit(call)
            print(f"streamkit: error: {exc}", file=err)
            return EXIT_STREAM_ERROR
        except UsageError as exc:
            print(f"streamkit: error: {exc}", file=err)
            return EXIT_USAGE
    return EXIT_OK


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="streamkit", description="Streamed LLM responses in, tool calls out.")
    commands = parser.add_subparsers(dest="command", required=True)
    replay = commands.add_parser("replay", help="decode a recorded wire transcript and print its calls")
    replay.add_argument("file", help="the transcript, or - for standard input")
    replay.add_argument("--provider", required=True, help=f"one of: {', '.join(sorted(DECODERS))}")
    replay.add_argument("--chunk-size", type=_positive, default=None, help="feed the bytes in chunks of N")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return _replay(args, sys.stdout.buffer, sys.stderr)
