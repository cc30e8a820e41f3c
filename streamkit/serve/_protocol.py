"""uvicorn's HTTP/1.1 protocol (h11), with the deadlines it lacks on a client that stalls.

uvicorn bounds only the idle wait between two requests (``timeout_keep_alive``). A client that
opens a connection and sends half a head, or drips its body after the answer, or stops reading
a streamed answer, holds its socket (and, for the last, the upstream stream and its pooled
connection) for as long as it likes. This protocol adds, per connection:

- the head deadline (``head_timeout``): the whole request head must arrive within it, counted
  from the connection's start or from the first byte of the next request on a kept connection;
  else the connection is closed. A connection left waiting for a head with no timer of
  uvicorn's (after a body the answer did not wait for) gets the same deadline.
- the send deadline (``send_timeout``): once the socket's buffer is full (the transport paused
  the writer), the client must read something within it; else the connection is dropped
  (reset: what is buffered for a client that reads nothing is never sent). The app sees
  the client go (``http.disconnect``), so it cancels the upstream request and frees its
  connection; the scope's ``streamkit.send_timeout`` extension says why, for the log.
- a body still coming when the answer is complete (a refusal sent before the body was read)
  closes the connection: a client cannot keep it by dripping a body no one reads.
- a connection closed with an answer still unsent is dropped once its client reads nothing
  for ``send_timeout`` (a close waits for the buffer to be sent, for ever).

The app's own deadline bounds the body while the app reads it (``body_timeout``). The
settings are the ``Config``'s, found on the app the server runs (``App``, under any middleware).
"""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import Any

import h11
from uvicorn.config import Config as ServerConfig
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from ._config import Config
from ._proxy import SEND_TIMEOUT

__all__ = ("Protocol",)


class Protocol(H11Protocol):
    """uvicorn's h11 protocol with the head and send deadlines of the app's ``Config``."""

    def __init__(
        self,
        config: ServerConfig,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        settings = _settings_of(self.app)
        self._head_timeout = settings.head_timeout
        self._send_timeout = settings.send_timeout
        self._head_timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None
        self._unsent = 0  # bytes buffered for the client when the send deadline was set

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._await_head()

    def on_response_complete(self) -> None:
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            self.transport.close()  # the answer is out and the body is still coming: no one reads it
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._head_timer, self._send_timer):
            if timer is not None:
                timer.cancel()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._watch_send()

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def timeout_keep_alive_handler(self) -> None:
        super().timeout_keep_alive_handler()
        if self.transport.get_write_buffer_size():  # close() waits for the client to read it: let it, within limits
            self._watch_send()

    def _await_head(self) -> None:
        """Set the head deadline while a head is awaited and uvicorn's idle timer is not running."""
        waiting = self.conn.their_state is h11.IDLE and self.timeout_keep_alive_task is None
        if not waiting:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
        elif self._head_timer is None:
            self._head_timer = self.loop.call_later(self._head_timeout, self._head_timed_out)

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

    def _watch_send(self) -> None:
        if self._send_timer is not None:
            self._send_timer.cancel()
        self._unsent = self.transport.get_write_buffer_size()
        self._send_timer = self.loop.call_later(self._send_timeout, self._send_timed_out)

    def _send_timed_out(self) -> None:
        self._send_timer = None
        if self.transport.is_closing() and not self.transport.get_write_buffer_size():
            return
        if self.transport.get_write_buffer_size() < self._unsent:  # the client read some: slow, not gone
            self._watch_send()
            return
        if self.cycle is not None and not self.cycle.response_complete:
            self.scope.setdefault("extensions", {})[SEND_TIMEOUT] = {"seconds": self._send_timeout}
        sock = self.transport.get_extra_info("socket")
        if sock is not None:  # a reset: the kernel too drops what it holds for the client
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.transport.abort()


def _settings_of(app: Any) -> Config:
    """The ``Config`` of the ``App`` under the server's middleware (each keeps the next as ``app``)."""
    from ._app import App

    while not isinstance(app, App):
        inner = getattr(app, "app", None)
        if inner is None:
            raise TypeError(f"streamkit's protocol serves streamkit.serve.App, not {type(app).__name__}")
        app = inner
    return app.config
