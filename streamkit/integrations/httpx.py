"""The twin of ``streamkit.integrations.httpx2`` for httpx's clients: the same ``Transport`` and
``AsyncTransport``, described there, each call handed to the SDK above it whole.

::

    client = openai.AsyncOpenAI(http_client=httpx.AsyncClient(transport=AsyncTransport()))
"""

from __future__ import annotations

import httpx

from ._shell import AsyncShell, SyncShell, invalid_calls

__all__ = ("AsyncTransport", "Transport", "invalid_calls")


class Transport(SyncShell[httpx.BaseTransport, httpx.Request, httpx.Response], httpx.BaseTransport):
    library = httpx


class AsyncTransport(AsyncShell[httpx.AsyncBaseTransport, httpx.Request, httpx.Response], httpx.AsyncBaseTransport):
    library = httpx
