"""The settings LangChain's and CrewAI's models share, declared once.

Both frameworks' models are pydantic models that send their own requests with the caller's
HTTP clients or the ones they make (``Clients``), so the same fields serve both.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from ._clients import DEFAULT_TIMEOUT, Clients, HoldsClients

__all__ = ("ClientFields",)


class ClientFields(HoldsClients, BaseModel):
    """The request body's extra fields, the HTTP clients and their timeout, and the call check."""

    extra: dict[str, Any] = Field(default_factory=dict)
    http_client: Any = Field(default=None, exclude=True)
    http_async_client: Any = Field(default=None, exclude=True)
    timeout: float = DEFAULT_TIMEOUT
    validate_calls: bool = True
    _clients: Clients | None = PrivateAttr(default=None)

    def _http(self) -> Clients:
        """The clients to send with, made at the first request and kept."""
        if self._clients is None:
            self._clients = Clients(self.http_client, self.http_async_client, timeout=self.timeout)
        return self._clients
