"""A real HTTP/1.1 server on 127.0.0.1, for the transport tests.

It runs in threads with plain sockets, so it serves asyncio, trio and sync clients alike, and
writes its answers by hand: each write of a ``Reply`` is one chunk of a chunked body (or one
raw write without chunking), so the tests choose exactly where the client's reads may split,
how fast the bytes drip, and where the connection drops. It records every request and sees
when a client closes its connection.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    """What the server answers on one path.

    Args:
        writes: the body, one item per write (and per chunk when ``chunked``).
        status, reason, content_type, headers: the head.
        delay: seconds slept before each write.
        pauses: seconds slept before the write of that number (from 0), besides ``delay``.
        cut: drop the connection after the writes, without ending the body.
        cut_mid_chunk: with ``cut``, the last chunk's header promises 100 bytes more than follow.
        gzip: compress the joined body and write it in ``gzip_piece``-byte pieces.
        deflate: the same with ``Content-Encoding: deflate`` (zlib's format, as RFC 9110 says).
        endless: called for each write after ``writes``, until the client stops reading or
            ``endless_limit`` bytes were written (backpressure tests).
        send_buffer: the socket's send buffer size, to keep the kernel's buffering small.
    """

    writes: list[bytes] = field(default_factory=list)
    status: int = 200
    reason: str = "OK"
    content_type: str | None = "text/event-stream"
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunked: bool = True
    delay: float = 0.0
    pauses: dict[int, float] = field(default_factory=dict)
    cut: bool = False
    cut_mid_chunk: bool = False
    gzip: bool = False
    deflate: bool = False
    gzip_piece: int = 7
    endless: Callable[[int], bytes] | None = None
    endless_limit: int = 64 * 1024 * 1024
    send_buffer: int | None = None


class Turns(dict[str, Reply]):
    """Routes where one path answers its requests with ``replies`` in turn, the last one repeating:
    a model's turns, one per request of an agent loop."""

    def __init__(self, path: str, *replies: Reply) -> None:
        super().__init__({path: replies[-1]})
        self.path = path
        self.waiting = list(replies[:-1])

    def get(self, key: str, default: Reply | None = None) -> Reply | None:  # type: ignore[override]
        if key == self.path and self.waiting:
            return self.waiting.pop(0)
        return super().get(key, default)


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Connection:
    closed: threading.Event = field(default_factory=threading.Event)  # the client closed it
    bytes_written: int = 0
    last_write: float = 0.0
    finished: threading.Event = field(default_factory=threading.Event)  # a reply was fully written


class LoopbackServer:
    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.routes: dict[str, Reply] = {}
        self.requests: list[Request] = []
        self.connections: list[Connection] = []
        self._sockets: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._stopping = False
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self._stopping = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() on Linux
        self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        for thread in self._threads:
            thread.join(5)
        self._accepting.join(5)

    def _accept(self) -> None:
        while not self._stopping:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._sockets.append(sock)
            connection = Connection()
            self.connections.append(connection)
            thread = threading.Thread(target=self._serve, args=(sock, connection), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, sock: socket.socket, connection: Connection) -> None:
        buffered = b""
        try:
            while True:
                request, buffered = _read_request(sock, buffered)
                if request is None:
                    break
                self.requests.append(request)
                reply = self.routes.get(request.target.split("?")[0], Reply(status=404, reason="Not Found"))
                if not self._answer(sock, reply, connection):
                    break
        except OSError:
            pass
        finally:
            connection.closed.set()
            sock.close()

    def _answer(self, sock: socket.socket, reply: Reply, connection: Connection) -> bool:
        """Write one reply; False when the connection is done (cut, or the client went away)."""
        writes = reply.writes
        head = [f"HTTP/1.1 {reply.status} {reply.reason}"]
        if reply.content_type is not None:
            head.append(f"Content-Type: {reply.content_type}")
        head += [f"{name}: {value}" for name, value in reply.headers]
        if reply.gzip or reply.deflate:
            joined = b"".join(writes)
            body = gzip.compress(joined) if reply.gzip else zlib.compress(joined)
            writes = [body[i : i + reply.gzip_piece] for i in range(0, len(body), reply.gzip_piece)]
            head.append(f"Content-Encoding: {'gzip' if reply.gzip else 'deflate'}")
        if reply.chunked:
            head.append("Transfer-Encoding: chunked")
        elif not reply.cut and reply.endless is None:
            head.append(f"Content-Length: {sum(len(w) for w in writes)}")
        else:
            head.append("Connection: close")
        if reply.send_buffer is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, reply.send_buffer)
        try:
            self._send(sock, ("\r\n".join(head) + "\r\n\r\n").encode(), connection, framed=False)
            pieces = list(_pieces(writes, reply)) if reply.cut_mid_chunk else _pieces(writes, reply)
            if reply.cut_mid_chunk:
                *pieces, last = pieces
            for number, piece in enumerate(pieces):
                pause = reply.delay + reply.pauses.get(number, 0.0)
                if pause:
                    time.sleep(pause)
                self._send(sock, piece, connection, framed=reply.chunked)
            if reply.cut_mid_chunk:
                self._send(sock, b"%x\r\n%s" % (len(last) + 100, last), connection, framed=False)
            if reply.cut:
                return False
            if reply.chunked:
                self._send(sock, b"0\r\n\r\n", connection, framed=False)
        except OSError:
            return False
        connection.finished.set()
        return reply.chunked or reply.endless is None

    def _send(self, sock: socket.socket, data: bytes, connection: Connection, *, framed: bool) -> None:
        if not data:
            return
        if framed:
            data = b"%x\r\n%s\r\n" % (len(data), data)
        sock.sendall(data)
        connection.bytes_written += len(data)
        connection.last_write = time.monotonic()


def bodies(server: LoopbackServer, since: int = 0) -> list[dict[str, Any]]:
    """The JSON bodies the server got since request ``since``."""
    return [json.loads(request.body) for request in server.requests[since:]]


def _pieces(writes: list[bytes], reply: Reply) -> Iterator[bytes]:
    yield from writes
    if reply.endless is not None:
        number, total = 0, 0
        while total < reply.endless_limit:
            piece = reply.endless(number)
            number += 1
            total += len(piece)
            yield piece


def _read_request(sock: socket.socket, buffered: bytes) -> tuple[Request | None, bytes]:
    while b"\r\n\r\n" not in buffered:
        data = sock.recv(65536)
        if not data:
            return None, b""
        buffered += data
    head, _, rest = buffered.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        data = sock.recv(65536)
        if not data:
            return None, b""
        rest += data
    return Request(method, target, headers, rest[:length]), rest[length:]


def split_awkwardly(data: bytes) -> list[bytes]:
    """Cut inside every multi-byte UTF-8 character and between every CR and its LF."""
    cuts = [i for i in range(1, len(data)) if 0x80 <= data[i] <= 0xBF or data[i - 1 : i + 1] == b"\r\n"]
    return [data[a:b] for a, b in itertools.pairwise([0, *cuts, len(data)])]
