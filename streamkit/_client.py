"""Sending the request: ``astream`` and its sync twin ``stream``, with the caller's client.

The client is an httpx or an httpx2 one (``AsyncClient`` for ``astream``, ``Client`` for
``stream``); its library's errors are mapped to streamkit's the same way for both.

They send a request with the caller's client and yield the assembled stream; the response is
checked (``_response``) before its body is decoded. On exit the response is closed and its
connection released. Credentials never reach a message, a repr or a telemetry span: the values
of the auth headers, and ``key=`` and its kin in URLs, are redacted.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar, Unpack

from . import _observe, _pipeline, _redact
from ._assembler import StreamOptions, check_options
from ._errors import UsageError
from ._libraries import library
from ._response import Tee, acheck, aread_body, check, decoder_of, read_body, read_error
from ._types import Call, Provider
from .providers import Decoder

if TYPE_CHECKING:
    import httpx
    import httpx2

    from ._response import Request, Response
    from ._turn_types import StreamEvent

__all__ = ("AsyncEventStream", "EventStream", "astream", "stream")

T = TypeVar("T")


class _Opened:
    """What both event streams keep of their response: its head, and its URL redacted for the repr."""

    #: The twin's own readers: of the body, of its events, and of the secrets in their errors.
    _read: ClassVar[Callable[..., Any]]
    _events_of: ClassVar[Callable[..., Any]]
    _scrub: ClassVar[Callable[..., Any]]

    def __init__(
        self, response: Response, provider: Provider | Decoder, tee: Tee | None, options: StreamOptions
    ) -> None:
        self.provider = decoder_of(provider).slug
        self.status_code = response.status_code
        self.headers = response.headers
        self._response = response
        self._url = _redact.redact_url(response.request.url)
        body = type(self)._read(response, decoder_of(provider), tee, checked=True)
        self._events = _answering(response, lambda: type(self)._events_of(body, provider, **options), type(self)._scrub)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} provider={self.provider!r} status={self.status_code} url={self._url!r}>"


def _answering(response: Response, make: Callable[[], T], scrub: Callable[[T, list[str]], T]) -> T:
    """The events ``make()`` gives, as both event streams read them: stream telemetry knows them
    as the answer to ``response``'s request (its server, and the secrets scrubbed from what the
    span records), and ``scrub`` clears those secrets from the errors they raise (an in-stream
    error that echoes the key)."""
    secrets = _redact.secrets(response.request)
    events = _observe.within(_observe.Request.of(response.request, secrets), make)
    return scrub(events, secrets) if secrets else events


class AsyncEventStream(_Opened):
    """An open streamed response, as an async iterator of ``StreamEvent``s (read it once).

    ``tool_calls()`` keeps only the calls. ``status_code`` and ``headers`` are the response's.
    """

    _read = staticmethod(aread_body)
    _events_of = staticmethod(_pipeline.aiter_events)
    _scrub = staticmethod(_redact.ascrubbed)
    _events: AsyncGenerator[StreamEvent, None]

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self._events

    def tool_calls(self) -> AsyncIterator[Call]:
        """Only the calls, valid or not, each the moment it completes."""
        return _AsyncCalls(self._events)

    async def aclose(self) -> None:
        """Stop reading and close the response; the connection goes back to the client."""
        await self._events.aclose()
        await self._response.aclose()


class _AsyncCalls:
    # A plain iterator, not an async generator: breaking out of it leaves nothing unclosed.
    def __init__(self, events: AsyncIterator[StreamEvent]) -> None:
        self._events = events

    def __aiter__(self) -> _AsyncCalls:
        return self

    async def __anext__(self) -> Call:
        while True:
            item = await self._events.__anext__()
            if isinstance(item, Call):
                return item


class EventStream(_Opened):
    """The sync twin of ``AsyncEventStream``: an iterator of ``StreamEvent``s."""

    _read = staticmethod(read_body)
    _events_of = staticmethod(_pipeline.iter_events)
    _scrub = staticmethod(_redact.scrubbed)
    _events: Generator[StreamEvent, None, None]

    def __iter__(self) -> Iterator[StreamEvent]:
        return self._events

    def tool_calls(self) -> Iterator[Call]:
        """Only the calls, valid or not, each the moment it completes."""
        return (item for item in self._events if isinstance(item, Call))

    def close(self) -> None:
        """Stop reading and close the response; the connection goes back to the client."""
        self._events.close()
        self._response.close()


def _library(client: object, kind: str, caller: str, twin: str) -> ModuleType:
    """The library of ``client``, which must be its ``kind`` of client."""
    http = library(client)
    if http is None or not isinstance(client, getattr(http, kind)):
        name = f"{type(client).__module__}.{type(client).__qualname__}"
        raise UsageError(f"{caller} needs an httpx.{kind} or an httpx2.{kind}, not {name} ({twin})")
    return http


def _request(
    client: Any, kind: str, caller: str, twin: str, provider: Provider | Decoder, options: StreamOptions, **parts: Any
) -> _Sent:
    """What both twins do before sending: the client, the options and the provider checked, in
    that order, and the request built; a bad argument raises ``UsageError`` before anything is sent."""
    http = _library(client, kind, caller, twin)
    check_options(options)
    decoder = decoder_of(provider)
    try:
        request: Request = client.build_request(**parts)
    except http.InvalidURL as exc:
        raise UsageError(f"invalid URL: {exc}") from None
    return _Sent(http, decoder, request)


class _Sent(NamedTuple):
    """A request built by its client's library, ready to send."""

    http: ModuleType
    decoder: type[Decoder]
    request: Request


@contextmanager
def _sending(sent: _Sent) -> Iterator[None]:
    """The library's errors while a request is sent, as streamkit's: a bad scheme is the caller's.

    Meanwhile the library's log records are scrubbed of the request's secrets: httpx logs the
    URL of each request, ``key=`` and all.
    """
    http, _, request = sent
    try:
        with _redact.logging_scrubbed(http.__name__, _redact.secrets(request)):
            yield
    except http.UnsupportedProtocol as exc:
        raise UsageError(f"cannot send {_redact.where(request)}: {exc}") from None
    except http.HTTPError as exc:
        raise read_error(exc, request, during="sending") from exc


@asynccontextmanager
async def astream(
    client: httpx.AsyncClient | httpx2.AsyncClient,
    provider: Provider | Decoder,
    url: str | httpx.URL | httpx2.URL,
    *,
    method: str = "POST",
    json: Any = None,
    content: bytes | str | None = None,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    tee: Tee | None = None,
    **options: Unpack[StreamOptions],
) -> AsyncGenerator[AsyncEventStream, None]:
    """Send a request with ``client`` and yield its response as an ``AsyncEventStream``.

    Raises ``HTTPStatusError`` on entry for a non-2xx answer, ``TransportError`` when the
    connection fails or the answer is not a stream of the provider's format. On exit, however
    it happens (the end, ``break``, an exception, a cancellation), the response is closed and
    its connection released.

    Args:
        client: the caller's ``httpx.AsyncClient`` or ``httpx2.AsyncClient`` (its timeouts,
            proxies and pool apply).
        provider: a slug from ``streamkit.DECODERS``, or a decoder instance.
        url, method, json, content, headers, params: the request, as for httpx.
        tee: called with each body chunk (after any Content-Encoding is undone) before it is
            decoded; ``tee=file.write`` records a transcript ``streamkit replay`` can read.
        options: ``Assembler``'s (``StreamOptions``): ``early_close``, ``limits``, ``tools``,
            ``previews``, ``fragments``…; a name that is not one raises ``UsageError`` here,
            before the request is sent.
    """
    parts = {"method": method, "url": url, "json": json, "content": content, "headers": headers, "params": params}
    sent = _request(client, "AsyncClient", "astream", "stream takes a Client", provider, options, **parts)
    with _sending(sent):
        response: Response = await client.send(sent.request, stream=True)  # type: ignore[arg-type]
    events: AsyncEventStream | None = None
    try:
        await acheck(response, sent.decoder)
        events = AsyncEventStream(response, provider, tee, options)
        yield events
    finally:
        import anyio  # imported where it is used: the sync twin needs none

        with anyio.CancelScope(shield=True):
            if events is not None:
                await events.aclose()
            await response.aclose()


@contextmanager
def stream(
    client: httpx.Client | httpx2.Client,
    provider: Provider | Decoder,
    url: str | httpx.URL | httpx2.URL,
    *,
    method: str = "POST",
    json: Any = None,
    content: bytes | str | None = None,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    tee: Tee | None = None,
    **options: Unpack[StreamOptions],
) -> Generator[EventStream, None, None]:
    """The sync twin of ``astream``, with an ``httpx.Client`` or an ``httpx2.Client``."""
    parts = {"method": method, "url": url, "json": json, "content": content, "headers": headers, "params": params}
    sent = _request(client, "Client", "stream", "astream takes an AsyncClient", provider, options, **parts)
    with _sending(sent):
        response: Response = client.send(sent.request, stream=True)  # type: ignore[arg-type]
    events: EventStream | None = None
    try:
        check(response, sent.decoder)
        events = EventStream(response, provider, tee, options)
        yield events
    finally:
        if events is not None:
            events.close()
        response.close()
