"""A pytest plugin that serves recorded streams to the code under test, re-chunked and faulted.

Installed with the ``testing`` extra, it registers itself (the ``pytest11`` entry point): the
``recorded_stream`` fixture serves files that ``streamkit record -o FILE`` wrote (``.sse``,
``.ndjson``, ``.bin``) as an httpx transport, an httpx2 transport or a URL of a real server on
127.0.0.1, one file per request in order, and keeps each request for assertions.

Each test that uses it runs once per chunking of ``@pytest.mark.streamkit_chunkings(...)``
(``"whole"``, ``1`` or ``"bytes"``, a size ``N``, ``"random:SEED"``) or of the command line's
``--streamkit-chunkings=whole,1,7``, and once per fault of ``@pytest.mark.streamkit_faults(...)``
(``None`` for none, ``cut_after_bytes(n)``, ``cut_after_events(n)``, ``stall(after, seconds)``,
``drop_after_bytes(n)``, ``upstream_error(status, body)``). ``streamkit_chunking`` and
``streamkit_fault`` are fixtures too, for a test to read which one it runs under.
"""

from __future__ import annotations

import json
import random
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import pytest

from ._errors import UsageError

__all__ = (
    "CONTENT_TYPES",
    "DEFAULT_CHUNKINGS",
    "Chunking",
    "Fault",
    "RecordedRequest",
    "Replay",
    "chunking",
    "cut_after_bytes",
    "cut_after_events",
    "drop_after_bytes",
    "event_ends",
    "stall",
    "upstream_error",
)

#: The content type each kind of recorded file is served with.
CONTENT_TYPES = {
    ".sse": "text/event-stream",
    ".ndjson": "application/x-ndjson",
    ".bin": "application/vnd.amazon.eventstream",
}

# -- chunkings ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunking:
    """How a body is cut into reads: ``whole``, ``size`` bytes each, or random sizes from ``seed``."""

    kind: Literal["whole", "fixed", "random"]
    size: int = 0
    seed: int = 0

    def __str__(self) -> str:
        if self.kind == "whole":
            return "whole"
        return f"fixed:{self.size}" if self.kind == "fixed" else f"random:{self.seed}"

    def split(self, body: bytes) -> list[bytes]:
        if self.kind == "whole" or not body:
            return [body]
        if self.kind == "fixed":
            return [body[i : i + self.size] for i in range(0, len(body), self.size)]
        rng = random.Random(self.seed)
        pieces, at = [], 0
        while at < len(body):
            step = rng.randint(1, 64)
            pieces.append(body[at : at + step])
            at += step
        return pieces


def chunking(spec: object) -> Chunking:
    """A ``Chunking`` from its spelling: ``"whole"``, ``"bytes"`` or ``1``, ``N`` or ``"fixed:N"``,
    ``"random:SEED"``."""
    if isinstance(spec, Chunking):
        return spec
    text = str(spec).strip()
    if text == "whole":
        return Chunking("whole")
    if text == "bytes":
        return Chunking("fixed", 1)
    kind, _, number = text.rpartition(":")
    if kind in ("", "fixed", "random") and number.isdigit() and not isinstance(spec, bool):
        value = int(number)
        if kind == "random":
            return Chunking("random", seed=value)
        if value >= 1:
            return Chunking("fixed", value)
    raise UsageError(
        f"streamkit chunking {spec!r} is not one of: 'whole', 'bytes', a size N >= 1, 'fixed:N', 'random:SEED'"
    )


#: Five chunkings that between them cut every boundary a decoder has: the whole body, one byte
#: at a time, two fixed sizes, and random sizes from a seed.
DEFAULT_CHUNKINGS = ("whole", "bytes", "fixed:7", "fixed:64", "random:0")

# -- faults ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """What goes wrong with each response: see the functions that make one."""

    kind: Literal["cut_bytes", "cut_events", "stall", "drop", "error"]
    at: int = 0
    seconds: float = 0.0
    status: int = 500
    body: bytes = b""

    def __str__(self) -> str:
        if self.kind == "error":
            return f"error:{self.status}"
        if self.kind == "stall":
            return f"stall:{self.at}:{self.seconds:g}s"
        return f"{self.kind.replace('_', ':')}:{self.at}"


def cut_after_bytes(n: int) -> Fault:
    """The body ends cleanly after ``n`` bytes: a stream cut short (``IncompleteStreamError``)."""
    return Fault("cut_bytes", _count(n, "cut_after_bytes"))


def cut_after_events(n: int) -> Fault:
    """The body ends cleanly after its ``n``-th event (an SSE event with data, a non-blank NDJSON
    line, an EventStream message; ``event_ends`` finds them)."""
    return Fault("cut_events", _count(n, "cut_after_events"))


def drop_after_bytes(n: int) -> Fault:
    """The connection drops after ``n`` bytes of the body: a failure to read (``TransportError``)."""
    return Fault("drop", _count(n, "drop_after_bytes"))


def stall(after_bytes: int, seconds: float) -> Fault:
    """The server goes quiet for ``seconds`` after ``after_bytes`` bytes, then sends the rest."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool) or not 0 <= seconds <= 3600:
        raise UsageError(f"stall seconds must be a number from 0 to 3600, got {seconds!r}")
    return Fault("stall", _count(after_bytes, "stall"), seconds=float(seconds))


def upstream_error(status: int = 529, body: bytes | str | dict[str, Any] | None = None) -> Fault:
    """The provider answers ``status`` with an error body instead of the stream (JSON by default)."""
    if isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599:
        raise UsageError(f"upstream_error status must be an HTTP error status from 400 to 599, got {status!r}")
    if body is None:
        body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    data = json.dumps(body).encode() if isinstance(body, dict) else body.encode() if isinstance(body, str) else body
    return Fault("error", status=status, body=data)


def _count(n: object, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise UsageError(f"{name} takes a whole number of at least 0, got {n!r}")
    return n


def event_ends(body: bytes, suffix: str) -> list[int]:
    """The offset just after each event of a recorded body that a client gets, by its file's kind.

    An SSE event is a block with a ``data`` field, ended by a blank line: a block of comments
    only (OpenRouter's ``: OPENROUTER PROCESSING``), or of other fields only, dispatches nothing
    (https://html.spec.whatwg.org/multipage/server-sent-events.html#dispatchMessage). An NDJSON
    event is a line that is not blank; an EventStream event, a message.
    """
    ends: list[int] = []
    if suffix == ".bin":  # EventStream: each message starts with its total length, 4 bytes big-endian
        at = 0
        while at + 4 <= len(body):
            at += int.from_bytes(body[at : at + 4], "big") or len(body)
            ends.append(min(at, len(body)))
        return ends
    if suffix == ".ndjson":
        line_start = 0
        for match in re.finditer(rb"\n", body):
            if body[line_start : match.start()].strip(b" \t\r"):
                ends.append(match.end())
            line_start = match.end()
        return ends
    line_start = 3 if body.startswith(_BOM) else 0
    has_data = False
    for match in _LINE_END.finditer(body):
        if match.start() == line_start:  # a blank line ends a block
            if has_data:
                ends.append(match.end())
            has_data = False
        elif _DATA_FIELD.match(body, line_start, match.start()):
            has_data = True
        line_start = match.end()
    return ends


_LINE_END = re.compile(rb"\r\n|\r|\n")
_DATA_FIELD = re.compile(rb"data(?::|$)")  # the field name, then a colon or the end of the line
_BOM = b"\xef\xbb\xbf"


# -- what one response sends ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """One response: its status, content type and the reads of its body, with the fault placed."""

    status: int
    content_type: str
    pieces: list[bytes]
    stall_before: int | None = None  # the piece before which the server goes quiet
    seconds: float = 0.0
    drop: bool = False  # the connection drops after the pieces


def _plan(body: bytes, suffix: str, how: Chunking, fault: Fault | None) -> _Plan:
    content_type = CONTENT_TYPES[suffix]
    if fault is None:
        return _Plan(200, content_type, how.split(body))
    if fault.kind == "error":
        return _Plan(fault.status, "application/json", [fault.body])
    at = _fault_offset(body, suffix, fault)
    if fault.kind == "stall":
        head, tail = how.split(body[:at]) if at else [], how.split(body[at:]) if at < len(body) else []
        return _Plan(200, content_type, [*head, *tail], stall_before=len(head), seconds=fault.seconds)
    return _Plan(200, content_type, how.split(body[:at]) if at else [], drop=fault.kind == "drop")


def _fault_offset(body: bytes, suffix: str, fault: Fault) -> int:
    """Where in ``body`` the fault strikes, in bytes."""
    if fault.kind != "cut_events":
        return fault.at
    return 0 if fault.at == 0 else event_ends(body, suffix)[fault.at - 1]


def check_fault(path: Path, fault: Fault | None) -> None:
    """A ``UsageError`` for a fault that would leave every event of ``path`` whole: the client would
    see the recording as it is, and a test under it would pass without testing anything."""
    if fault is None or fault.kind == "error":
        return
    body = path.read_bytes()
    ends = event_ends(body, path.suffix)
    if fault.kind == "cut_events":
        if fault.at >= len(ends):
            raise UsageError(
                f"{fault}: {path.name} has {len(ends)} events, so the fault would never strike: "
                f"it must come before the last event ends (n < {len(ends)})"
            )
        return
    last = ends[-1] if ends else 0
    if fault.at >= last:
        raise UsageError(
            f"{fault}: {path.name} has {len(body)} bytes, its last event ending at byte {last}, so the fault "
            f"would never strike: it must come before the last event ends (n < {last})"
        )


@dataclass(frozen=True)
class RecordedRequest:
    """A request the code under test sent: what it told the model."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Replay:
    """The recorded files of one test, served in order, one per request, and the requests made.

    The fault, if any, strikes the first response; the ones after it are served whole, so that
    a retry (or the next turn) sees a good stream. A request past the last file is answered
    ``500`` with a body that says so, and kept.
    """

    def __init__(self, files: Sequence[Path], how: Chunking, fault: Fault | None) -> None:
        if files:
            check_fault(files[0], fault)
        self.files = list(files)
        self.chunking = how
        self.fault = fault
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None

    def next_plan(self, request: RecordedRequest) -> _Plan:
        with self._lock:
            self.requests.append(request)
            number = len(self.requests)
        if number > len(self.files):
            message = f"streamkit.testing: request {number} ({request.method} {request.url}) has no recorded file"
            body = json.dumps({"error": {"type": "no_recording", "message": f"{message}: {len(self.files)} given"}})
            return _Plan(500, "application/json", [body.encode()])
        path = self.files[number - 1]
        fault = self.fault if number == 1 else None  # a retry, or the next turn, gets a good stream
        return _plan(path.read_bytes(), path.suffix, self.chunking, fault)

    def transport(self) -> Any:
        """An ``httpx`` transport (sync and async alike) to hand to a client, SDK or framework."""
        import httpx

        return _transport(httpx, self)

    def httpx2_transport(self) -> Any:
        """The same as an ``httpx2`` transport."""
        import httpx2

        return _transport(httpx2, self)

    @property
    def url(self) -> str:
        """The base URL of a real server on 127.0.0.1 serving the files (started on first use)."""
        if self._server is None:
            self._server = _Server(self)
        return self._server.url

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None


# -- the transports -------------------------------------------------------------------------------


#: What httpx says of a chunked body whose connection dropped: the transports say it too.
_DROPPED = "peer closed connection without sending complete message body (incomplete chunked read)"


def _transport(library: ModuleType, replay: Replay) -> Any:
    """A transport of ``library`` (httpx or httpx2: the same API) that answers from ``replay``."""

    def respond(request: Any, stream: Any) -> Any:
        plan = replay.next_plan(
            RecordedRequest(request.method, str(request.url), dict(request.headers), request.read())
        )
        headers = {"content-type": plan.content_type}
        return library.Response(plan.status, headers=headers, stream=stream(plan, request), request=request)

    def sync_stream(plan: _Plan, request: Any) -> Any:
        class Body(library.SyncByteStream):  # type: ignore[name-defined,misc]
            def __iter__(self) -> Iterator[bytes]:
                for number, piece in enumerate(plan.pieces):
                    if number == plan.stall_before:
                        time.sleep(plan.seconds)
                    yield piece
                if plan.drop:
                    raise library.RemoteProtocolError(_DROPPED, request=request)

        return Body()

    def async_stream(plan: _Plan, request: Any) -> Any:
        class Body(library.AsyncByteStream):  # type: ignore[name-defined,misc]
            async def __aiter__(self) -> AsyncIterator[bytes]:
                import anyio

                for number, piece in enumerate(plan.pieces):
                    if number == plan.stall_before:
                        await anyio.sleep(plan.seconds)
                    yield piece
                if plan.drop:
                    raise library.RemoteProtocolError(_DROPPED, request=request)

        return Body()

    class Transport(library.BaseTransport, library.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        def handle_request(self, request: Any) -> Any:
            return respond(request, sync_stream)

        async def handle_async_request(self, request: Any) -> Any:
            await request.aread()
            return respond(request, async_stream)

    return Transport()


# -- the loopback server --------------------------------------------------------------------------


class _Server:
    """A threaded HTTP/1.1 server on 127.0.0.1 that writes each response piece by piece, chunked."""

    def __init__(self, replay: Replay) -> None:
        handler = type("Handler", (_Handler,), {"replay": replay})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


#: The longest line of a chunked request body's framing (a chunk size, a trailer field).
_MAX_LINE = 64 * 1024


class _Unreadable(Exception):
    """A request body whose framing cannot be read: what is wrong, and the status that says so."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    replay: Replay

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # the test's output is the test's

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        try:
            body = self._body()
        except _Unreadable as exc:
            self._refuse(exc.status, f"the body of {self.command} {self.path} cannot be read: {exc}")
            return
        host = self.headers.get("host", "127.0.0.1")
        request = RecordedRequest(self.command, f"http://{host}{self.path}", dict(self.headers.items()), body)
        plan = self.replay.next_plan(request)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            self._write(plan)
        except (BrokenPipeError, ConnectionResetError):  # the client stopped reading: its test's business
            self.close_connection = True

    def _body(self) -> bytes:
        """The request's body, by its Content-Length or read chunk by chunk (RFC 9112 §7.1); framing
        that cannot be read whole is ``_Unreadable``, never a body guessed at."""
        encoding, length = self.headers.get("transfer-encoding"), self.headers.get("content-length")
        if encoding is not None and length is not None:
            raise _Unreadable("it has both transfer-encoding and content-length")
        if encoding is not None:
            if encoding.strip().lower() != "chunked":
                raise _Unreadable(f"transfer-encoding {encoding!r} is not read here, only 'chunked'", 501)
            return self._chunked()
        if length is None:
            return b""
        if not (length.strip().isascii() and length.strip().isdigit()):
            raise _Unreadable(f"content-length {length!r} is not a whole number")
        size = int(length)
        body = self.rfile.read(size)
        if len(body) < size:
            raise _Unreadable(f"the body ended after {len(body)} of its {size} bytes")
        return body

    def _chunked(self) -> bytes:
        body = bytearray()
        while True:
            line = self._line("before its last chunk (size 0)")
            size_text = line.split(b";", 1)[0].strip()  # a chunk extension (";name=value") means nothing here
            if not size_text or size_text.strip(b"0123456789abcdefABCDEF"):
                raise _Unreadable(f"the chunk size line {line!r} is not a hexadecimal number")
            size = int(size_text, 16)
            if size == 0:
                break
            chunk = self.rfile.read(size)
            if len(chunk) < size:
                raise _Unreadable(f"the body ended inside a chunk of {size} bytes, after {len(chunk)}")
            if self.rfile.read(2) != b"\r\n":
                raise _Unreadable(f"the chunk of {size} bytes is not followed by CRLF")
            body += chunk
        while self._line("inside its trailer"):  # trailer fields, up to the blank line
            pass
        return bytes(body)

    def _line(self, where: str) -> bytes:
        """One line of the chunked framing, without its CRLF."""
        line = self.rfile.readline(_MAX_LINE + 1)
        if not line.endswith(b"\r\n"):
            if len(line) > _MAX_LINE:
                raise _Unreadable(f"a line of its chunked framing is longer than {_MAX_LINE} bytes")
            raise _Unreadable(
                f"the body ended {where}" if not line.endswith(b"\n") else f"the line {line!r} ends without CR"
            )
        return line[:-2]

    def _refuse(self, status: int, message: str) -> None:
        """Answer a request whose body cannot be read, saying why, and keep nothing of it."""
        text = f"streamkit.testing: {message}; the request was not kept"
        body = json.dumps({"error": {"type": "unreadable_request", "message": text}}).encode()
        self.close_connection = True  # the framing is lost: nothing after it can be read
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _write(self, plan: _Plan) -> None:
        self.send_response(plan.status)
        self.send_header("content-type", plan.content_type)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for number, piece in enumerate(plan.pieces):
            if number == plan.stall_before:
                time.sleep(plan.seconds)
            if piece:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
        if plan.drop:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


# -- the plugin -----------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("streamkit")
    group.addoption(
        "--streamkit-chunkings",
        default=None,
        help="comma-separated chunkings every recorded_stream test runs under (whole, bytes, N, random:SEED)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "streamkit_chunkings(*chunkings): run the test under each chunking")
    config.addinivalue_line("markers", "streamkit_faults(*faults): run the test under each fault (None: none)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "streamkit_chunking" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("streamkit_chunkings")
        option = metafunc.config.getoption("--streamkit-chunkings")
        specs: Sequence[object] = ("whole",)
        if marker is not None:
            specs = marker.args or DEFAULT_CHUNKINGS
        elif option:
            specs = option.split(",")
        chunkings = [chunking(spec) for spec in specs]
        metafunc.parametrize("streamkit_chunking", chunkings, ids=[str(c) for c in chunkings])
    if "streamkit_fault" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("streamkit_faults")
        faults: Sequence[Fault | None] = marker.args if marker is not None else (None,)
        for fault in faults:
            if fault is not None and not isinstance(fault, Fault):
                raise UsageError(f"streamkit_faults takes Fault values or None, got {fault!r}")
        metafunc.parametrize("streamkit_fault", faults, ids=[str(fault or "no-fault") for fault in faults])


@pytest.fixture
def streamkit_chunking(request: pytest.FixtureRequest) -> Chunking:
    """The chunking this run of the test serves its recorded files with."""
    value: Chunking = request.param
    return value


@pytest.fixture
def streamkit_fault(request: pytest.FixtureRequest) -> Fault | None:
    """The fault this run of the test serves its recorded files with (``None``: none)."""
    value: Fault | None = request.param
    return value


@pytest.fixture
def recorded_stream(
    request: pytest.FixtureRequest, streamkit_chunking: Chunking, streamkit_fault: Fault | None
) -> Iterator[Callable[..., Replay]]:
    """``recorded_stream(*files)``: a ``Replay`` serving the files in order, one per request.

    A relative path is read from the test file's own directory, then from the current one.
    """
    made: list[Replay] = []

    def serve(*files: str | Path) -> Replay:
        if not files:
            raise UsageError("recorded_stream takes at least one recorded file")
        replay = Replay([_found(name, request.path.parent) for name in files], streamkit_chunking, streamkit_fault)
        made.append(replay)
        return replay

    yield serve
    for replay in made:
        replay.close()


def _found(name: str | Path, here: Path) -> Path:
    path = Path(name)
    for candidate in (path,) if path.is_absolute() else (here / path, Path.cwd() / path):
        if candidate.is_file():
            if candidate.suffix not in CONTENT_TYPES:
                kinds = ", ".join(CONTENT_TYPES)
                raise UsageError(f"recorded file {str(name)!r} is not one streamkit record writes ({kinds})")
            return candidate
    raise UsageError(f"recorded file {str(name)!r} not found (looked beside the test and in {Path.cwd()})")
