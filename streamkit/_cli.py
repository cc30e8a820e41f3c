"""The ``streamkit`` command line.

``streamkit replay FILE --provider SLUG`` prints one JSON object per line, in delivery order:
``tool_call`` and ``invalid_tool_call`` lines as calls complete, then an ``end`` line when the
stream ended normally. This output and the exit statuses are a public contract, extended and
never broken:

- 0: the stream decoded to its end;
- 1: the provider reported an error, or the stream failed or ended early (one line on stderr;
  the lines already printed stay, and the unfinished calls are printed as invalid calls);
- 2: usage errors (unknown provider, unreadable file, bad option, a provider ``auto`` cannot
  tell, bad ``--tools`` file).

``--provider auto`` names the provider from the stream's first events, and says which on stderr.
With ``--tools FILE`` (the tool definitions as sent to the provider, as JSON), each call is
checked against its tool's schema, and the errors show in the ``invalid_tool_call`` lines.
With ``--history``, a stream that ended normally gets one more line after the end line,
``{"type": "history", "provider": SLUG, "items": [...]}``: the turn written as that provider's
history entries by its adapter's ``turn_messages`` (reasoning, signatures and server tools
included), plus ``"dropped"`` (the kinds left out) when something could not be written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO

import orjson

from . import _live
from ._detect import detect_provider
from ._errors import StreamError, UsageError
from ._pipeline import iter_events
from ._types import InvalidToolCall, ResponseEnd, StreamEvent, ToolCall, Turn
from ._validate import Toolset
from .adapters import ADAPTERS
from .providers import DECODERS

__all__ = ("history_line", "main", "to_json_line")

EXIT_OK, EXIT_STREAM_ERROR, EXIT_USAGE = 0, 1, 2
AUTO = "auto"  # --provider auto: detect the provider from the first events


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


def _chunks(data: bytes, size: int | None) -> Iterator[bytes]:
    step = size or _READ_BYTES
    for start in range(0, len(data), step):
        yield data[start : start + step]


def _replay(args: argparse.Namespace, out: BinaryIO, err: Any) -> int:
    if args.provider not in DECODERS and args.provider != AUTO:
        known = ", ".join(sorted(DECODERS))
        print(f"streamkit: error: unknown provider {args.provider!r}; known providers: {known}", file=err)
        return EXIT_USAGE
    toolset = None
    if args.tools is not None:
        try:
            toolset = _load_tools(args.tools)
        except UsageError as exc:
            print(f"streamkit: error: {exc}", file=err)
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
        data = stream.read()
        provider = args.provider
        if provider == AUTO:
            detected = detect_provider(data)
            if detected is None:
                print("streamkit: error: cannot tell the provider from the first events; pass --provider", file=err)
                return EXIT_USAGE
            provider = detected
            print(f"streamkit: detected provider {provider}", file=err)
        seen: list[StreamEvent] = []
        try:
            for item in iter_events(_chunks(data, args.chunk_size), provider, tools=toolset):
                emit(item)
                if args.history:
                    seen.append(item)
        except StreamError as exc:
            for call in exc.unfinished:
                emit(call)
            print(f"streamkit: error: {exc}", file=err)
            return EXIT_STREAM_ERROR
        except UsageError as exc:
            print(f"streamkit: error: {exc}", file=err)
            return EXIT_USAGE
    if args.history:
        out.write(_dumps(history_line(Turn.from_events(seen, provider))) + b"\n")
        out.flush()
    return EXIT_OK


def history_line(turn: Turn) -> dict[str, Any]:
    """The ``--history`` line: the turn as its own provider's history entries."""
    written = ADAPTERS[turn.provider].turn_messages(turn)
    line: dict[str, Any] = {"type": "history", "provider": turn.provider, "items": list(written)}
    if written.dropped:
        line["dropped"] = [type(item).__name__ for item in written.dropped]
    return line


def _load_tools(path: str) -> Toolset:
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as exc:
        raise UsageError(f"cannot read the tools file {path}: {exc.strerror}") from None
    try:
        tools = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"the tools file {path} is not JSON: {exc.msg} at character {exc.pos}") from None
    try:
        return Toolset(tools)
    except UsageError as exc:
        raise UsageError(f"the tools file {path}: {exc}") from None


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
    replay.add_argument("--provider", required=True, help=f"one of: {', '.join(sorted(DECODERS))}, or auto")
    replay.add_argument("--chunk-size", type=_positive, default=None, help="feed the bytes in chunks of N")
    replay.add_argument("--tools", default=None, help="a JSON file of the tools sent: check each call against them")
    replay.add_argument(
        "--history", action="store_true", help="after the end line, print the turn as the provider's history entries"
    )
    _live.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command in _live.COMMANDS:
        return _live_command(args, sys.stdout.buffer, sys.stderr)
    return _replay(args, sys.stdout.buffer, sys.stderr)


def _live_command(args: argparse.Namespace, out: BinaryIO, err: Any) -> int:
    """``live`` and ``record``: the lines ``replay`` prints, for a request sent now."""

    def emit(item: StreamEvent) -> None:
        line = to_json_line(item)
        if line is not None:
            out.write(_dumps(line) + b"\n")
            out.flush()

    return _live.run(args, emit, err, sys.stdin.buffer)
