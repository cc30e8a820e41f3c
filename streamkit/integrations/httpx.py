"""An httpx transport that hands the SDK above it every tool call whole: ``Transport``, ``AsyncTransport``.

::

    client = openai.AsyncOpenAI(http_client=httpx.AsyncClient(transport=AsyncTransport()))

Requests and non-streamed responses pass through untouched; a streamed response in a
provider's format is decoded by streamkit and re-emitted in the same format, each call once,
whole, at its end marker (see ``streamkit.integrations._reemit``).

Args:
    inner: the transport that sends the requests (default: ``httpx.HTTPTransport()`` or
        ``httpx.AsyncHTTPTransport()``).
    provider: the provider's slug; by default it is told from the stream and the request path.
    tools: the tools sent to the provider, to check each call against its schema (``Toolset``).
    on_call: called with each ``ToolCall`` or ``InvalidToolCall`` the moment it completes, while
        the SDK is still reading the stream (the async transport awaits a coroutine function).
    limits: the ``streamkit.Limits`` one response may reach.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator, Iterable, Mapping
from typing import Any

import httpx

from .._limits import Limits
from .._types import Provider
from .._validate import Toolset
from ._reemit import OnCall, Options, Session, areemit, kept_headers, reemit

__all__ = ("AsyncTransport", "Transport")


class Transport(httpx.BaseTransport):
    def __init__(
        self,
        inner: httpx.BaseTransport | None = None,
        *,
        provider: Provider | None = None,
        tools: Toolset | Iterable[Any] | Mapping[str, Any] | None = None,
        on_call: OnCall | None = None,
        limits: Limits | None = None,
    ) -> None:
        self._options = Options(provider, tools, on_call, limits, asynchronous=False)
        self._inner = httpx.HTTPTransport() if inner is None else inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        session = self._options.session(request.url.path, response.status_code, response.headers)
        if session is None:
            return response
        body = _Body(response.stream, session, self._options.on_call)
        return httpx.Response(
            response.status_code,
            headers=kept_headers(response.headers.raw),
            stream=body,
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._inner.close()


class AsyncTransport(httpx.AsyncBaseTransport):
    def __init__(
        self,
        inner: httpx.AsyncBaseTransport | None = None,
        *,
        provider: Provider | None = None,
        tools: Toolset | Iterable[Any] | Mapping[str, Any] | None = None,
        on_call: OnCall | None = None,
        limits: Limits | None = None,
    ) -> None:
        self._options = Options(provider, tools, on_call, limits, asynchronous=True)
        self._inner = httpx.AsyncHTTPTransport() if inner is None else inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        session = self._options.session(request.url.path, response.status_code, response.headers)
        if session is None:
            return response
        body = _AsyncBody(response.stream, session, self._options.on_call)
        return httpx.Response(
            response.status_code,
            headers=kept_headers(response.headers.raw),
            stream=body,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Body(httpx.SyncByteStream):
    def __init__(self, inner: Any, session: Session, on_call: OnCall | None) -> None:
        self._inner, self._session, self._on_call = inner, session, on_call
        self._body: Generator[bytes, None, None] | None = None

    def __iter__(self) -> Generator[bytes, None, None]:
        self._body = reemit(self._inner, self._session, self._on_call, httpx.RemoteProtocolError)
        return self._body

    def close(self) -> None:
        if self._body is not None:
            self._body.close()
        self._inner.close()


class _AsyncBody(httpx.AsyncByteStream):
    def __init__(self, inner: Any, session: Session, on_call: OnCall | None) -> None:
        self._inner, self._session, self._on_call = inner, session, on_call
        self._body: AsyncGenerator[bytes, None] | None = None

    def __aiter__(self) -> AsyncGenerator[bytes, None]:
        self._body = areemit(self._inner, self._session, self._on_call, httpx.RemoteProtocolError)
        return self._body

    async def aclose(self) -> None:
        if self._body is not None:
            await self._body.aclose()
        await self._inner.aclose()
