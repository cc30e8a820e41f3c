"""The ``streamkit`` command line.

``streamkit replay FILE --provider SLUG`` prints one JSON object per line, in delivery order:
``tool_call`` and ``invalid_tool_call`` lines as calls complete, then an ``end`` line when the
stream ended normally. This output and the exit statuses are a public contract, extended and
never broken:

- 0: the stream decoded to its end, or the reader of stdout left (``| head -1``) while the
  stream was fine so far: a closed pipe is a normal end;
- 1: the provider reported an error, or the stream failed or ended early (one line on stderr;
  the lines already printed stay, and the unfinished calls are printed as invalid calls);
- 2: usage errors (unknown provider, unreadable file, bad option, a provider ``auto`` cannot
  tell, bad ``--tools`` file), and output that cannot be written (a full disk, the ``record``
  file): the command could not do what it was asked, whatever the stream held;
- 3: a defect in streamkit itself (an unexpected exception, named in one line);
- 130: interrupted (Ctrl-C).

Every failure is one line on stderr, ``streamkit: error: ...``; no traceback reaches the user.
Standard input is decoded as it arrives, so the limits (``--max-calls`` and one option for each
``Limits`` field) bound the command as they bound the library.

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
import contextlib
import dataclasses
import io
import itertools
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, BinaryIO, NoReturn

import orjson

from . import _live
from ._awsstream import PRELUDE_BYTES
from ._detect import HEAD_BYTES, detect_provider
from ._errors import IncompleteStreamError, StreamError, UsageError
from ._limits import Limits
from ._live import read_bytes, say
from ._pipeline import iter_events
from ._turn_types import StreamEvent, Turn
from ._types import CustomToolCall, InvalidToolCall, ResponseEnd, ToolCall, takes_text
from ._validate import Toolset
from .adapters import ADAPTERS
from .providers import DECODERS, decoder_for
from .serve import _command as serve_command

__all__ = ("history_line", "main", "to_json_line")

EXIT_OK, EXIT_STREAM_ERROR, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
AUTO = "auto"  # --provider auto: detect the provider from the first events


def to_json_line(item: StreamEvent) -> dict[str, Any] | None:
    """The replay line for a value, or ``None`` for values replay does not print (text)."""
    if isinstance(item, ToolCall | CustomToolCall):
        line: dict[str, Any] = {"type": "tool_call", "index": item.index, "id": item.id, "name": item.name}
        line["input"] = item.input
    elif isinstance(item, InvalidToolCall):
        line = {"type": "invalid_tool_call", "index": item.index, "id": item.id, "name": item.name}
        line["raw"] = item.raw
        line["errors"] = [issue.to_dict() for issue in item.errors]
    elif isinstance(item, ResponseEnd):
        end: dict[str, Any] = {"type": "end", "stop_reason": item.stop_reason, "usage": item.usage}
        if item.anomalies:
            end["anomalies"] = list(item.anomalies)
        return end
    else:
        return None
    if takes_text(item.state):  # a custom tool's call: its input (or raw) is free text, not JSON
        line["input_type"] = "text"
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


#: Blocks of at most this size are read from the file or standard input as they come: the
#: calls come out the same (chunking never changes them), nothing waits for the whole input,
#: and the limits bound what the command holds, as they bound the library.
_READ_BYTES = 64 * 1024


def _blocks(stream: BinaryIO, name: str) -> Iterator[bytes]:
    read = getattr(stream, "read1", stream.read)  # read1: what has arrived, without waiting for more
    while True:
        try:
            block = read(_READ_BYTES)
        except OSError as exc:
            raise UsageError(f"cannot read {name}: {exc.strerror}") from None
        if not block:
            return
        yield block


def _chunks(blocks: Iterable[bytes], size: int | None) -> Iterator[bytes]:
    """The blocks as they come, or cut and joined into chunks of exactly ``size`` bytes."""
    if size is None:
        yield from (block for block in blocks if block)
        return
    pending = bytearray()
    for block in blocks:
        pending += block
        whole = len(pending) - len(pending) % size
        for start in range(0, whole, size):
            yield bytes(pending[start : start + size])
        del pending[:whole]
    if pending:
        yield bytes(pending)


class _Head:
    """The blocks passed on as they come, the first ``HEAD_BYTES`` of them kept for a hint."""

    def __init__(self, blocks: Iterable[bytes]) -> None:
        self._blocks = blocks
        self.data = b""

    def __iter__(self) -> Iterator[bytes]:
        for block in self._blocks:
            if len(self.data) < HEAD_BYTES:
                self.data += block[: HEAD_BYTES - len(self.data)]
            yield block


def _provider_hint(head: bytes, provider: str, error: StreamError) -> str:
    """For a stream that gave nothing: whose stream it looks like, or how to find out."""
    detected = detect_provider(head)
    if detected is not None and detected != provider:
        return (
            f" (the input looks like {detected}'s stream, not {provider}'s:"
            f" pass --provider {detected} or --provider auto)"
        )
    if head.strip() and detected is None and isinstance(error, IncompleteStreamError):  # nothing known, to the end
        return f" (is the input {provider}'s stream? --provider auto tells the provider from the first events)"
    return ""


def _detect(blocks: Iterator[bytes]) -> tuple[str | None, bytes]:
    """The provider named by the first events, and the bytes read to tell (``HEAD_BYTES`` at most)."""
    head = b""
    for block in blocks:
        before, head = len(head), head + block
        # Looked at again when an event or a line may have ended, or an event-stream prelude arrived.
        if b"\n" in block or before < PRELUDE_BYTES <= len(head) or len(head) >= HEAD_BYTES:
            slug = detect_provider(head)
            if slug is not None or len(head) >= HEAD_BYTES:
                return slug, head
    return detect_provider(head), head


def _replay(args: argparse.Namespace, lines: _Lines, err: Any, limits: Limits) -> int:
    toolset = None
    try:
        if args.provider != AUTO:
            decoder_for(args.provider)
        if args.tools is not None:
            toolset = _load_tools(args.tools)
    except UsageError as exc:
        say(err, f"streamkit: error: {exc}")
        return EXIT_USAGE
    try:
        stream: BinaryIO = _stdin() if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        say(err, f"streamkit: error: cannot read {args.file}: {exc.strerror}")
        return EXIT_USAGE
    with stream:
        blocks = _blocks(stream, "standard input" if args.file == "-" else args.file)
        provider = args.provider
        if provider == AUTO:
            try:
                detected, head = _detect(blocks)
            except UsageError as exc:
                say(err, f"streamkit: error: {exc}")
                return EXIT_USAGE
            if detected is None:
                say(err, "streamkit: error: cannot tell the provider from the first events; pass --provider")
                return EXIT_USAGE
            provider = detected
            say(err, f"streamkit: detected provider {provider}")
            blocks = itertools.chain((head,), blocks)
        seen: list[StreamEvent] = []
        kept = _Head(blocks)
        emitted = 0
        try:
            for item in iter_events(_chunks(kept, args.chunk_size), provider, tools=toolset, limits=limits):
                lines.emit(item)
                emitted += 1
                if args.history:
                    seen.append(item)
        except StreamError as exc:
            with contextlib.suppress(BrokenPipeError):  # the reader left: the status still says failed
                for call in exc.unfinished:
                    lines.emit(call)
            hint = _provider_hint(kept.data, provider, exc) if not emitted and args.provider != AUTO else ""
            say(err, f"streamkit: error: {exc}{hint}")
            return EXIT_STREAM_ERROR
        except UsageError as exc:  # a tools file iter_events refused, or the input unreadable midway
            say(err, f"streamkit: error: {exc}")
            return EXIT_USAGE
    if args.history:
        lines.write(_dumps(history_line(Turn.from_events(seen, provider))) + b"\n")
    return EXIT_OK


def history_line(turn: Turn) -> dict[str, Any]:
    """The ``--history`` line: the turn as its own provider's history entries."""
    written = ADAPTERS[turn.provider].turn_messages(turn)
    line: dict[str, Any] = {"type": "history", "provider": turn.provider, "items": list(written)}
    if written.dropped:
        line["dropped"] = [type(item).__name__ for item in written.dropped]
    return line


def _load_tools(path: str) -> Toolset:
    data = read_bytes(path, f"the tools file {path}")
    try:
        tools = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"the tools file {path} is not JSON: {exc.msg} at character {exc.pos}") from None
    if not isinstance(tools, list | dict):
        raise UsageError(
            f"the tools file {path} holds {_json_kind(tools)}: it must be a list of tool definitions "
            "or an object mapping tool names to schemas"
        )
    try:
        return Toolset(tools)
    except UsageError as exc:
        raise UsageError(f"the tools file {path}: {exc}") from None


def _json_kind(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return orjson.dumps(value).decode()
    return {str: "a string", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return value


def _limit(name: str) -> Callable[[str], int]:
    """The type of ``--max-…``: a positive integer that ``Limits`` itself accepts for ``name``."""

    def parse(text: str) -> int:
        value = _positive(text)
        try:
            Limits(**{name: value})
        except UsageError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"Limits.{name} ")) from None
        return value

    return parse


def _add_limits(parser: argparse.ArgumentParser) -> None:
    """One option per ``Limits`` field, made from the dataclass: a new limit gets its option."""
    group = parser.add_argument_group("limits", "what one response may hold (see streamkit.Limits)")
    for field in dataclasses.fields(Limits):
        group.add_argument(
            "--" + field.name.replace("_", "-"),
            type=_limit(field.name),
            default=None,
            metavar="N",
            help=f"Limits.{field.name} (default {field.default})",
        )


def _limits(args: argparse.Namespace) -> Limits:
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(Limits) if getattr(args, f.name) is not None}
    return Limits(**given)


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, the same from every sub-command: ``streamkit: error: ...``."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"streamkit: error: {message} (see streamkit {self._command()}--help)\n")

    def _command(self) -> str:
        name = self.prog.removeprefix("streamkit").strip()
        return f"{name} " if name else ""


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="streamkit", description="Streamed LLM responses in, tool calls out.")
    parser.add_argument("--version", action="version", version=f"streamkit {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{replay,live,record,serve}")
    replay = commands.add_parser(
        "replay",
        help="decode a recorded wire transcript and print its calls",
        description="decode a recorded wire transcript and print its calls",
    )
    replay.add_argument("file", help="the transcript, or - for standard input")
    replay.add_argument("--provider", required=True, help=f"one of: {', '.join(sorted(DECODERS))}, or auto")
    replay.add_argument("--chunk-size", type=_positive, default=None, help="feed the bytes in chunks of N")
    replay.add_argument("--tools", default=None, help="a JSON file of the tools sent: check each call against them")
    replay.add_argument(
        "--history", action="store_true", help="after the end line, print the turn as the provider's history entries"
    )
    for command in (replay, *_live.add_commands(commands), serve_command.add_command(commands)):
        _add_limits(command)
    return parser


def _version() -> str:
    from . import __version__

    return __version__


class _Lines:
    """Standard output, one JSON line per value, flushed as it is written.

    A reader that went away (``| head -1``) raises ``BrokenPipeError`` once, which ends the
    command quietly (later lines go nowhere); any other write failure (a full disk) becomes
    ``_OutputError``.
    """

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._closed = False

    def emit(self, item: StreamEvent) -> None:
        line = to_json_line(item)
        if line is not None:
            self.write(_dumps(line) + b"\n")

    def write(self, data: bytes) -> None:
        if self._closed:  # the reader left; ``record`` goes on saving the transcript
            return
        try:
            self._out.write(data)
            self._out.flush()
        except BrokenPipeError:
            self._closed = True
            _discard_stdout()
            raise
        except OSError as exc:
            raise _OutputError(exc.strerror or str(exc)) from None


class _OutputError(Exception):
    """Standard output cannot be written to (a full disk): exit 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; every failure is one line on stderr and an exit status, never a traceback."""
    err = sys.stderr
    try:
        args = _parser().parse_args(argv)
        lines = _Lines(_stdout())
        if args.command in _live.COMMANDS:
            return _live.run(args, lines.emit, err, _stdin(), limits=_limits(args))
        if args.command == "serve":
            return serve_command.run(args, err, _limits(args))
        return _replay(args, lines, err, _limits(args))
    except KeyboardInterrupt:
        say(err, "streamkit: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader of stdout left: a normal end, for a stream fine so far
        _discard_stdout()
        return EXIT_OK
    except _OutputError as exc:
        _discard_stdout()
        say(err, f"streamkit: error: cannot write to standard output: {exc}")
        return EXIT_USAGE
    except Exception as exc:  # a defect in streamkit: still one line
        say(err, f"streamkit: internal error: {type(exc).__name__}: {exc}")
        return EXIT_INTERNAL


def _stdin() -> BinaryIO:
    """Standard input as bytes; a closed one (``<&-``) reads as empty, as ``/dev/null`` does."""
    stream = getattr(sys.stdin, "buffer", None)
    return io.BytesIO() if stream is None else stream


def _stdout() -> BinaryIO:
    """Standard output as bytes; a closed one (``>&-``) is a reader that left before the start."""
    stream = getattr(sys.stdout, "buffer", None)
    return open(os.devnull, "wb") if stream is None else stream


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit does not fail (and print) again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (tests): nothing is flushed at exit
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
