"""An httpx2 transport that hands the SDK above it every tool call whole: ``Transport``, ``AsyncTransport``.

::

    client = openai.AsyncOpenAI(http_client=httpx2.AsyncClient(transport=AsyncTransport()))

Requests and non-streamed responses pass through untouched; a streamed response in a
provider's format is decoded by streamkit and re-emitted in the same format, each call once,
whole, at its end marker (see ``streamkit._reemit``); an invalid call is left out,
and ``invalid_calls(response)`` lists it. The arguments
(``inner``, ``provider``, ``tools``, ``on_call``, ``limits``) are described in
``streamkit.integrations._shell``, which both this module and its twin for the other library use.
"""

from __future__ import annotations

import httpx2

from ._shell import AsyncShell, SyncShell, invalid_calls

__all__ = ("AsyncTransport", "Transport", "invalid_calls")


class Transport(SyncShell[httpx2.BaseTransport, httpx2.Request, httpx2.Response], httpx2.BaseTransport):
    library = httpx2


class AsyncTransport(AsyncShell[httpx2.AsyncBaseTransport, httpx2.Request, httpx2.Response], httpx2.AsyncBaseTransport):
    library = httpx2
