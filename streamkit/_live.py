"""``streamkit live`` and ``streamkit record``: send a real request, print what ``replay`` prints.

``live --provider SLUG --url URL --body request.json`` (or ``--body '{...}'``, inline) posts the
JSON body with the API key from the provider's usual environment variable, in the header that
provider expects, and prints one JSON line per call and the ``end`` line, exactly as ``replay``
does for a transcript, with the same exit statuses (an HTTP or connection failure is a failed
stream: exit 1). ``record ... -o FILE`` does the same and saves the response body's bytes, as
received (after any Content-Encoding is undone), so that ``streamkit replay FILE`` reads the
same stream again.

The transcript is written to a temporary file beside ``FILE`` and renamed onto it only when the
stream decoded to its end, so a refused request, a stream cut midway or an interrupt leaves
the old file as it was. A destination that is a symbolic link (or anything but a regular file)
is refused before the request is sent; the rename replaces a directory entry and never writes
through a link, even one that appears while the stream runs. On a terminal, a progress line on
stderr counts the bytes, events and calls so far; piped, stderr stays quiet.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import stat
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import IO, Any

import httpx

from ._client import stream
from ._errors import StreamError, TransportError, UsageError
from ._limits import DEFAULT_LIMITS, Limits
from ._turn_types import StreamEvent
from ._types import Call
from .providers import DECODERS, FACTS, decoder_for
from .providers._facts import Facts

__all__ = ("AUTH", "COMMANDS", "Progress", "add_commands", "read_bytes", "run", "say")

COMMANDS = ("live", "record")
EXIT_OK, EXIT_STREAM_ERROR, EXIT_USAGE = 0, 1, 2


class Auth:
    """Where a provider's API key comes from and the header that carries it: both its facts'."""

    def __init__(self, facts: Facts) -> None:
        assert facts.auth_header is not None, facts.slug  # a provider that takes a key
        self.variables = facts.key_variables
        self.header = facts.auth_header
        self.template = facts.auth_value
        self.extra = facts.request_headers
        self.key_from = facts.key_from
        self.optional = facts.key_optional


#: The providers that take a key (Ollama's only when set: a local server takes none); Bedrock
#: needs AWS SigV4 signing, which is boto3's job.
AUTH: Mapping[str, Auth] = {slug: Auth(facts) for slug, facts in FACTS.items() if facts.auth_header is not None}

DEFAULT_TIMEOUT = 600.0  # seconds between two reads: a model may think for minutes


def add_commands(commands: Any) -> list[argparse.ArgumentParser]:
    """Add ``live`` and ``record`` to the command line's subparsers; return their parsers."""
    providers = ", ".join(slug for slug in sorted(DECODERS) if not FACTS[slug].signed)
    parsers = []
    for name, text in (
        ("live", "send a request and print its calls as they complete"),
        ("record", "send a request, print its calls, and save the response as a transcript"),
    ):
        command = commands.add_parser(
            name,
            help=text,
            description=text,
            epilog=_keys_epilog(),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_argument("--provider", required=True, help=f"one of: {providers}")
        command.add_argument("--url", required=True, help="the streaming endpoint")
        command.add_argument(
            "--body",
            required=True,
            help="the request's JSON body: inline ('{\"model\": ...}'), a file's path, or - for standard input",
        )
        command.add_argument(
            "--header", action="append", default=[], metavar="'NAME: VALUE'", help="an extra request header"
        )
        command.add_argument(
            "--timeout",
            type=_seconds,
            default=DEFAULT_TIMEOUT,
            help=f"seconds to wait for data (default {DEFAULT_TIMEOUT:g})",
        )
        if name == "record":
            command.add_argument(
                "-o", "--output", required=True, help="the transcript file, replaced only when the stream ends well"
            )
        parsers.append(command)
    return parsers


def _keys_epilog() -> str:
    """The API-key variables, one line per header, from ``AUTH``: help and code never differ."""
    lines = ["API keys, read from the environment (--header NAME: VALUE overrides):"]
    for slug in sorted(DECODERS):
        auth = AUTH.get(slug)
        if FACTS[slug].signed:
            lines.append(f"  {slug}: needs AWS SigV4 signing; record it through boto3 instead")
        elif auth is None:
            lines.append(f"  {slug}: no key")
        else:
            when = " when set (a local server takes none)" if auth.optional else ""
            lines.append(
                f"  {slug}: {' or '.join(auth.variables)}, sent as {auth.header}: {auth.template.format('KEY')}{when}"
            )
    return "\n".join(lines)


#: The longest --timeout accepted: the socket layer cannot wait past about 2**31 seconds.
MAX_TIMEOUT = 1_000_000.0


def _seconds(text: str) -> float:
    """A --timeout value: a number of seconds above 0 (0 would fail every read at once)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_TIMEOUT:  # also refuses nan
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds above 0 and at most {MAX_TIMEOUT:.0f}, got {text!r}"
        )
    return value


def _headers(provider: str, extra: list[str], environ: Mapping[str, str]) -> dict[str, str]:
    if FACTS[provider].signed:
        raise UsageError(f"{provider} requests need AWS SigV4 signing: record the stream with boto3 instead")
    headers: dict[str, str] = {}
    for number, item in enumerate(extra, 1):
        name, colon, value = item.partition(":")
        if not colon or not name.strip():
            # The value is not shown: it may be a key.
            raise UsageError(f"--header number {number} must be 'NAME: VALUE'")
        headers[name.strip()] = value.strip()
    given = {name.lower() for name in headers}
    auth = AUTH.get(provider)
    if auth is None:
        return headers
    headers.update({name: value for name, value in auth.extra.items() if name.lower() not in given})
    if auth.header.lower() in given:
        return headers
    key = auth.key_from(environ)
    if key is None and auth.optional:
        return headers
    if key is None:
        raise UsageError(f"set {' or '.join(auth.variables)} to the {provider} API key (or pass --header)")
    headers[auth.header] = auth.template.format(key)
    return headers


def read_bytes(path: str, what: str, stdin: IO[bytes] | None = None) -> bytes:
    """The bytes of the file at ``path`` (``-``: ``stdin``, when one is given), for each command's
    file options; one that cannot be read is the user's error, named as ``what``."""
    try:
        if path == "-" and stdin is not None:
            return stdin.read()
        with open(path, "rb") as file:
            return file.read()
    except OSError as exc:
        raise UsageError(f"cannot read {what}: {exc.strerror}") from None


def _body(path: str, stdin: IO[bytes]) -> Any:
    """The body from ``--body``: inline JSON when it starts as an object or an array does (no
    file's path starts with ``{`` or ``[`` in practice), else a path, or ``-``."""
    if path.lstrip().startswith(("{", "[")):
        try:
            return json.loads(path)
        except ValueError as exc:
            raise UsageError(f"the inline --body is not JSON: {exc}") from None
    data = read_bytes(path, path, stdin)
    try:
        return json.loads(data)
    except ValueError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from None


#: A header name: an HTTP token (RFC 9110, section 5.6.2).
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: A header value httpx can send: visible ASCII, spaces and tabs.
_VALUE = re.compile(r"[\t\x20-\x7e]*")


def _check_headers(headers: Mapping[str, str]) -> None:
    """Refuse what httpx would fail to encode; the value is never shown: it may be a key."""
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise UsageError(f"the header name {name!r} is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~)")
        if not _VALUE.fullmatch(value):
            raise UsageError(f"the value of the header {name!r} holds a character that is not printable ASCII")


class _RecordError(Exception):
    """The transcript could not be written: a usage error (exit 2), whatever the stream did."""


class _Transcript:
    """The ``-o`` file: written beside its destination, renamed onto it only on success."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            mode = None
        except OSError as exc:
            raise _RecordError(f"cannot write {path}: {exc.strerror}") from None
        if mode is not None and stat.S_ISLNK(mode):
            raise _RecordError(f"{path} is a symbolic link: name the file itself")
        if mode is not None and not stat.S_ISREG(mode):
            raise _RecordError(f"{path} is not a regular file")
        directory, name = os.path.split(os.path.abspath(path))
        try:
            handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=directory)
        except OSError as exc:
            raise _RecordError(f"cannot write {path}: {exc.strerror}") from None
        self._temporary: str | None = temporary
        self._file: IO[bytes] | None = os.fdopen(handle, "wb")
        # mkstemp creates the file for its owner only: keep the old file's mode, or the umask's.
        os.fchmod(handle, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())

    def __call__(self, chunk: bytes) -> None:
        try:
            assert self._file is not None
            self._file.write(chunk)
            self._file.flush()  # a full disk stops the stream now, not at the end
        except OSError as exc:
            raise _RecordError(f"cannot write {self.path}: {exc.strerror}") from None

    def commit(self) -> None:
        """The stream ended well: the transcript replaces the file at ``path`` (never a link's target)."""
        assert self._file is not None and self._temporary is not None
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            os.replace(self._temporary, self.path)
        except OSError as exc:
            raise _RecordError(f"cannot write {self.path}: {exc.strerror}") from None
        self._temporary = None

    def discard(self) -> None:
        """Remove the temporary file, unless ``commit`` renamed it."""
        if self._file is not None:
            with contextlib.suppress(OSError):  # what could not be written is thrown away
                self._file.close()
            self._file = None
        if self._temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._temporary)
            self._temporary = None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class Progress:
    """The progress line of ``live`` and ``record``, on stderr when it is a terminal.

    It is redrawn at most every ``interval`` seconds, cleared before each line is printed on
    stdout (which may be the same terminal) and at the end, so that it never stays.
    """

    def __init__(
        self,
        err: Any,
        *,
        enabled: bool | None = None,
        interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._err = err
        self.enabled = _is_terminal(err) if enabled is None else enabled
        self._interval = interval
        self._clock = clock
        self._drawn_at = -math.inf
        self._shown = False
        self.bytes = self.events = self.calls = 0

    def received(self, chunk: bytes) -> None:
        self.bytes += len(chunk)
        self._draw()

    def event(self, item: StreamEvent) -> None:
        self.events += 1
        if isinstance(item, Call):
            self.calls += 1
        self._draw()

    def clear(self) -> None:
        if self._shown:
            self._write("\r\x1b[K")
            self._shown = False

    def line(self) -> str:
        return f"streamkit: {self.bytes:,} bytes, {self.events:,} events, {self.calls:,} calls"

    def _draw(self) -> None:
        if not self.enabled:
            return
        now = self._clock()
        if now - self._drawn_at < self._interval:
            return
        self._drawn_at = now
        self._write(f"\r{self.line()}\x1b[K")
        self._shown = True

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._err.write(text)
            self._err.flush()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def run(
    args: argparse.Namespace,
    emit: Callable[[StreamEvent], None],
    err: Any,
    stdin: IO[bytes],
    environ: Mapping[str, str] = os.environ,
    *,
    limits: Limits = DEFAULT_LIMITS,
    progress: Progress | None = None,
) -> int:
    """Run ``live`` or ``record``; ``emit`` prints one value as ``replay`` does."""
    try:
        decoder_for(args.provider)
        headers = _headers(args.provider, args.header, environ)
        _check_headers(headers)
        body = _body(args.body, stdin)
        transcript = _Transcript(args.output) if args.command == "record" else None
    except (UsageError, _RecordError) as exc:
        say(err, f"streamkit: error: {exc}")
        return EXIT_USAGE
    progress = progress or Progress(err)
    try:
        code = _send(args, headers, body, emit, err, limits, progress, transcript)
        if code == EXIT_OK and transcript is not None:
            transcript.commit()
        return code
    except _RecordError as exc:
        progress.clear()
        say(err, f"streamkit: error: {exc}")
        return EXIT_USAGE
    finally:
        progress.clear()
        if transcript is not None:
            transcript.discard()


def _send(
    args: argparse.Namespace,
    headers: dict[str, str],
    body: Any,
    emit: Callable[[StreamEvent], None],
    err: Any,
    limits: Limits,
    progress: Progress,
    transcript: _Transcript | None,
) -> int:
    def tee(chunk: bytes) -> None:
        if transcript is not None:
            transcript(chunk)
        progress.received(chunk)

    def show(item: StreamEvent) -> None:
        progress.clear()  # stdout may be the same terminal
        try:
            emit(item)
        except BrokenPipeError:  # the reader of the lines left: ``live`` is done, ``record`` saves on
            if transcript is None:
                raise
        progress.event(item)

    timeout = httpx.Timeout(args.timeout, connect=min(args.timeout, 30.0))
    try:
        with (
            httpx.Client(timeout=timeout) as client,
            stream(client, args.provider, args.url, json=body, headers=headers, tee=tee, limits=limits) as events,
        ):
            for item in events:
                show(item)
    except (StreamError, TransportError) as exc:
        progress.clear()
        with contextlib.suppress(BrokenPipeError):  # the reader left: the status still says failed
            for call in exc.unfinished:
                emit(call)
        say(err, f"streamkit: error: {exc}")
        return EXIT_STREAM_ERROR
    except UsageError as exc:  # a URL httpx cannot send to
        progress.clear()
        say(err, f"streamkit: error: {exc}")
        return EXIT_USAGE
    return EXIT_OK


def say(err: Any, line: str) -> None:
    """One line on stderr; a stderr that cannot be written to is no reason for a traceback."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=err, flush=True)
