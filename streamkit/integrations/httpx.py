"""An httpx transport that hands the SDK above it every tool call whole: ``Transport``, ``AsyncTransport``.

::

    client = openai.AsyncOpenAI(http_client=httpx.AsyncClient(transport=AsyncTransport()))

Requests and non-streamed responses pass through untouched; a streamed response in a
provider's format is decoded by streamkit and re-emitted in the same format, each call once,
whole, at its end marker (see ``streamkit.integrations._reemit``). The arguments
(``inner``, ``provider``, ``tools``, ``on_call``, ``limits``) are described in
``streamkit.integrations._shell``, which both this module and its twin for the other library use.
"""

from __future__ import annotations

import httpx

from ._shell import AsyncShell, SyncShell

__all__ = ("AsyncTransport", "Transport")


class Transport(SyncShell[httpx.BaseTransport, httpx.Request, httpx.Response], httpx.BaseTransport):
    library = httpx


class AsyncTransport(AsyncShell[httpx.AsyncBaseTransport, httpx.Request, httpx.Response], httpx.AsyncBaseTransport):
    library = httpx
