"""The HTTP clients a model sends with: the caller's, or its own, made once and kept.

LangChain's, openai-agents' and LiteLLM's models each send many requests (one per agent step);
a client made per request pays a new connection (and TLS handshake) every time. ``Clients``
makes one at the first request and keeps it for the model's life. An ``httpx.AsyncClient``'s
connections belong to the event loop that opened them, so a model used from a second loop
(two ``asyncio.run`` calls) gets a client of that loop's own. Closing runs under a cancel
shield, so a cancelled agent still releases its connections.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import anyio
import httpx

__all__ = ("DEFAULT_TIMEOUT", "Clients", "HoldsClients")

#: Seconds between two reads unless told otherwise: a model may think for minutes.
DEFAULT_TIMEOUT = 600.0


class Clients:
    """One model's HTTP clients. A client given is used as it is and never closed here."""

    def __init__(
        self, sync: Any = None, async_: Any = None, *, timeout: float | httpx.Timeout = DEFAULT_TIMEOUT
    ) -> None:
        self._given_sync = sync
        self._given_async = async_
        self._timeout = timeout
        self._sync: httpx.Client | None = None
        self._async: httpx.AsyncClient | None = None
        self._loop: object = None
        self._lock = threading.Lock()

    def sync(self) -> Any:
        """The client for a blocking request."""
        if self._given_sync is not None:
            return self._given_sync
        with self._lock:
            if self._sync is None:
                self._sync = httpx.Client(timeout=self._timeout)
            return self._sync

    def async_(self) -> Any:
        """The client for a request on the running event loop; a new one on another loop (the old
        one's connections belong to a loop that no longer runs, and are dropped)."""
        if self._given_async is not None:
            return self._given_async
        loop = _loop()
        with self._lock:
            if self._async is None or self._async.is_closed or self._loop is not loop:
                self._async, self._loop = httpx.AsyncClient(timeout=self._timeout), loop
            return self._async

    def close(self) -> None:
        """Close the blocking client made here (a given one stays open)."""
        with self._lock:
            made, self._sync = self._sync, None
        if made is not None:
            made.close()

    def __del__(self) -> None:
        # A model dropped unclosed: a blocking client closes here; an async one cannot (its
        # close must run on its loop), so a long-lived program closes its models.
        if self._sync is not None:
            self._sync.close()

    async def aclose(self) -> None:
        """Close the clients made here, the blocking one too; a cancellation does not interrupt it."""
        self.close()
        with self._lock:
            made, self._async = self._async, None
            mine = self._loop is _loop()
        if made is not None and mine:  # another loop's connections cannot be closed from here
            with anyio.CancelScope(shield=True):
                await made.aclose()


class HoldsClients:
    """``close()`` and ``aclose()`` for a model whose ``Clients`` it makes at its first request
    and keeps in ``_clients`` (a pydantic private attribute, ``None`` until then)."""

    _clients: Clients | None

    def close(self) -> None:
        """Close the blocking HTTP client the model made (the ones given stay open)."""
        if self._clients is not None:
            self._clients.close()

    async def aclose(self) -> None:
        """Close the HTTP clients the model made, even when cancelled (the ones given stay open)."""
        if self._clients is not None:
            await self._clients.aclose()


#: What stands for the running loop under trio: one trio run at a time per thread.
_TRIO = object()


def _loop() -> object:
    """What an async client's connections belong to: the running asyncio loop, or trio's run."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return _TRIO
