"""The transports' shells, written once for both libraries: ``httpx`` and ``httpx2`` only name theirs.

httpx2 is httpx under another name, with the same classes; what differs is which module they
come from. So a shell knows its library only as the module its public subclass names in
``library``: the ``Response`` and the byte streams are made from that module at run time, and
this module imports no HTTP library (``import streamkit.integrations.httpx`` loads httpx alone).
The public subclass also subclasses its library's transport base and gives the shell its type
arguments, so a type checker sees the library's own types in every signature.

The re-emitting itself (``Session``, ``reemit``, ``areemit``) is in ``_reemit``. A body's
``Content-Encoding`` is undone there by the library's own decoders; one it has none for fails
the request with the library's ``DecodingError`` (cause: streamkit's ``TransportError``).
With telemetry on, the stream's span names the request's server, and closing a body, read or
not, ends it.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, AsyncIterable, Callable, Generator, Iterable, Mapping
from types import ModuleType
from typing import Any, ClassVar, Generic, TypeVar, cast

from .. import _libraries, _observe, _redact
from .._errors import TransportError, UsageError
from .._limits import Limits
from .._reemit import (
    INVALID_CALLS,
    AsyncResend,
    BadCalls,
    Decoding,
    OnCall,
    Options,
    Resend,
    Session,
    areemit,
    content_decoding,
    is_stream,
    kept_headers,
    read_request,
    reemit,
    request_toolset,
    resent,
)
from .._status import status_error
from .._types import InvalidToolCall, Provider
from .._validate import Toolset
from ..providers import DECODERS

__all__ = ("AsyncShell", "SyncShell", "invalid_calls", "session_for")

#: The most of a refusal's body an error quotes.
_EXCERPT = 64 * 1024

_Inner = TypeVar("_Inner")
_Request = TypeVar("_Request")
_Response = TypeVar("_Response")


class _Shell(Generic[_Inner, _Request, _Response]):
    """What both transports share: the options, the inner transport, the re-emitted response.

    Args:
        inner: the transport that sends the requests (default: the library's ``HTTPTransport()``
            or ``AsyncHTTPTransport()``); one of the other library's is a ``UsageError``, as is a
            request from the other library's client, at the first request, before it is sent.
        provider: the provider's slug; by default it is told from the stream and the request path.
        tools: the tools to check each call against (any format ``Toolset`` reads). By default
            each request's own ``tools`` are read from its body, as the proxy reads them; given
            here, they stand for every request's and no body is read. A request whose tools
            streamkit cannot read is a ``UsageError``, before it is sent.
        on_call: called with each ``ToolCall`` or ``InvalidToolCall`` the moment it completes, while
            the SDK is still reading the stream (the async transport awaits a coroutine function).
        limits: the ``streamkit.Limits`` one response may reach.
        invalid: what a bad call becomes (``BadCalls``, or its action's name). ``tell``, the
            default: it is left out of the stream, and at the response's end the transport asks
            the model again itself (the request with the turn and each call's result, the bad
            call's error), the answer going on in the same response; at most ``rounds`` times,
            then the body fails naming each bad call (``InvalidCallsError`` as the cause of the
            library's ``RemoteProtocolError``). ``raise`` fails the body at the first bad call;
            ``pass`` writes it, its raw text, for an SDK that checks calls itself.
    """

    #: The HTTP library's module, set by the public subclass.
    library: ModuleType
    _asynchronous: ClassVar[bool]

    def __init__(
        self,
        inner: _Inner | None = None,
        *,
        provider: Provider | None = None,
        tools: Toolset | Iterable[Any] | Mapping[str, Any] | None = None,
        on_call: OnCall | None = None,
        limits: Limits | None = None,
        invalid: BadCalls | str | None = None,
    ) -> None:
        options = Options(provider, tools, on_call, limits, asynchronous=self._asynchronous, invalid=invalid)
        self._options = options
        theirs = None if inner is None else _libraries.library(inner)
        if theirs is not None and theirs is not self.library:
            raise UsageError(
                f"{self._named(self.library)} sends through {self.library.__name__}, and the inner transport "
                f"given is {theirs.__name__}'s ({type(inner).__name__}): give it one of "
                f"{self.library.__name__}'s, or use {self._named(theirs)}"
            )
        self._inner: Any = self._default_inner() if inner is None else inner

    def _default_inner(self) -> Any:
        raise NotImplementedError

    def _named(self, library: ModuleType) -> str:
        """This transport's public name in ``library``'s integration module."""
        return f"streamkit.integrations.{library.__name__}.{'AsyncTransport' if self._asynchronous else 'Transport'}"

    def _check(self, request: Any) -> None:
        """A request from the other library's client fails here, as a ``UsageError`` naming the
        transport to use: past here it would fail in the client, on a response of the wrong kind."""
        if isinstance(request, self.library.Request):
            return
        theirs = _libraries.library(request)
        if theirs is None:
            given = f"a request of type {type(request).__name__}"
        else:
            given = f"a request from an {theirs.__name__} client: use {self._named(theirs)}"
        mine = self.library.__name__
        raise UsageError(f"{self._named(self.library)} is for {mine} clients, and it was given {given}")

    def _read(self, request: Any) -> tuple[Toolset | None, dict[str, Any] | None]:
        """The tools ``request`` offers, when the transport was given none (``Options.session``),
        and the request itself, to ask the model again with (none for a body streamed as sent)."""
        try:
            body = request.content
        except self.library.RequestNotRead:  # a body streamed as it is sent: none to read
            return None, None
        telling = (self._options.bad or Session.bad_calls).action == "tell"  # the session's default if none
        asked = read_request(body) if telling or b'"tools"' in body else None
        if self._options.toolset is not None or asked is None:
            return None, asked
        try:
            return request_toolset(asked), asked
        except UsageError as exc:
            raise UsageError(
                f"the request's tools: {exc}; give the transport tools=... in a form streamkit reads"
            ) from exc

    def _again(self, request: Any, asked: dict[str, Any]) -> Any:
        """``request`` sent again with ``asked`` as its body."""
        headers, body = resent(request.headers.raw, asked)
        return self.library.Request(request.method, request.url, headers=headers, content=body)

    def _answered(self, session: Session | None, again: Any, response: Any, body: bytes) -> Decoding | None:
        """How to read ``response``, the answer to ``again``: a stream's decoding. Any other
        answer fails the body: a refusal as the ``HTTPStatusError`` it is, ``body`` being its
        start, anything else a ``TransportError``."""
        if not response.is_success:
            assert session is not None and session.provider is not None  # it asks again once it reads a stream
            decoder = DECODERS[session.provider]
            raise status_error(response.status_code, body, decoder, headers=response.headers, request=again)
        kind = response.headers.get("content-type", "")
        if not is_stream(kind):
            raise TransportError(f"asked again about its bad calls, the API answered {kind or 'a body'}, not a stream")
        encoding = response.headers.get("content-encoding", "")
        return content_decoding(encoding, self.library._decoders.SUPPORTED_DECODERS)

    def _reemitted(
        self, session: Session | None, response: Any, body: type[_Body | _AsyncBody], resend: Any
    ) -> _Response:
        """``response`` itself to pass through, or a new one whose body is re-emitted, asking the
        model again through ``resend`` where the policy says to.

        The new one's ``extensions[INVALID_CALLS]`` is the session's list of the calls left out.
        """
        if session is None:
            return cast(_Response, response)
        library = self.library
        stream = body(response.stream, session, self._options.on_call, library.RemoteProtocolError, resend)
        reemitted = library.Response(
            response.status_code,
            headers=kept_headers(response.headers.raw),
            stream=stream,
            extensions={**response.extensions, INVALID_CALLS: session.left_out},
        )
        return cast(_Response, reemitted)


class SyncShell(_Shell[_Inner, _Request, _Response]):
    """The library's ``BaseTransport`` methods, for ``Transport``."""

    _asynchronous = False

    def _default_inner(self) -> Any:
        return self.library.HTTPTransport()

    def handle_request(self, request: _Request) -> _Response:
        self._check(request)
        offered, asked = self._read(request)
        response = self._inner.handle_request(request)
        try:
            session = session_for(self._options, self.library, request, response, offered=offered, asked=asked)
        except BaseException:
            response.close()
            raise
        resend = functools.partial(self._resend, request, session)
        return self._reemitted(session, response, _on(_Body, self.library.SyncByteStream), resend)

    def _resend(
        self, request: Any, session: Session | None, asked: dict[str, Any]
    ) -> tuple[Iterable[bytes], Decoding | None]:
        """``request`` sent again, ``asked`` its body: the answer's body, and its decoding."""
        again = self._again(request, asked)
        response = self._inner.handle_request(again)
        try:
            body = b"" if response.is_success else response.read()[:_EXCERPT]
            decoding = self._answered(session, again, response, body)
        except BaseException:
            response.close()
            raise
        return _closing(response), decoding

    def close(self) -> None:
        self._inner.close()


class AsyncShell(_Shell[_Inner, _Request, _Response]):
    """The library's ``AsyncBaseTransport`` methods, for ``AsyncTransport``."""

    _asynchronous = True

    def _default_inner(self) -> Any:
        return self.library.AsyncHTTPTransport()

    async def handle_async_request(self, request: _Request) -> _Response:
        self._check(request)
        offered, asked = self._read(request)
        response = await self._inner.handle_async_request(request)
        try:
            session = session_for(self._options, self.library, request, response, offered=offered, asked=asked)
        except BaseException:
            await response.aclose()
            raise
        resend = functools.partial(self._resend, request, session)
        return self._reemitted(session, response, _on(_AsyncBody, self.library.AsyncByteStream), resend)

    async def _resend(
        self, request: Any, session: Session | None, asked: dict[str, Any]
    ) -> tuple[AsyncIterable[bytes], Decoding | None]:
        """The async twin of ``SyncShell._resend``."""
        again = self._again(request, asked)
        response = await self._inner.handle_async_request(again)
        try:
            body = b"" if response.is_success else (await response.aread())[:_EXCERPT]
            decoding = self._answered(session, again, response, body)
        except BaseException:
            await response.aclose()
            raise
        return _aclosing(response), decoding

    async def aclose(self) -> None:
        await self._inner.aclose()


def session_for(
    options: Options,
    library: ModuleType,
    request: Any,
    response: Any,
    *,
    kind: type[Session] = Session,
    offered: Toolset | None = None,
    asked: dict[str, Any] | None = None,
) -> Session | None:
    """The session that re-emits ``response`` (``None``: it passes through), its encoding undone by
    ``library``'s decoders; an encoding they cannot undo raises the library's ``DecodingError``.
    ``offered``: the request's own tools, checked when ``options`` has none."""
    decoders = library._decoders.SUPPORTED_DECODERS
    answered = None if _observe.watcher() is None else _observe.Request.of(request, _redact.secrets(request))
    try:
        return options.session(
            request.url.path,
            response.status_code,
            response.headers,
            decoders,
            made=kind,
            request=answered,
            offered=offered,
            asked=asked,
        )
    except TransportError as exc:
        raise library.DecodingError(str(exc), request=request) from exc


def invalid_calls(response: Any) -> list[InvalidToolCall]:
    """The invalid calls the transport left out of ``response``'s body: those read so far, all of
    them once the body is read (the SDKs give the response as ``stream.response``)."""
    return list(response.extensions.get(INVALID_CALLS, ()))


_B = TypeVar("_B", bound="type[_Body | _AsyncBody]")


@functools.cache
def _on(body: _B, stream: type) -> _B:
    """``body`` made a subclass of the library's byte-stream class, which its ``Response`` requires."""
    return cast(_B, type(body.__name__, (body, stream), {"__module__": __name__}))


def _closing(response: Any) -> Generator[bytes, None, None]:
    """The body of an answer asked again, closed once read or left."""
    try:
        yield from response.stream
    finally:
        response.close()


async def _aclosing(response: Any) -> AsyncGenerator[bytes, None]:
    try:
        async for chunk in response.stream:
            yield chunk
    finally:
        await response.aclose()


class _Reemitted:
    """What a re-emitted body holds: the inner body, its session, and how to go on."""

    def __init__(
        self,
        inner: Any,
        session: Session,
        on_call: OnCall | None,
        error: Callable[[str], Exception],
        resend: Any = None,
    ) -> None:
        self._inner, self._session, self._on_call, self._error = inner, session, on_call, error
        self._resend = resend


class _Body(_Reemitted):
    """A re-emitted body, read with the library's sync client; closing it closes the inner body."""

    _resend: Resend | None
    _body: Generator[bytes, None, None] | None = None

    def __iter__(self) -> Generator[bytes, None, None]:
        self._body = reemit(self._inner, self._session, self._on_call, self._error, self._resend)
        return self._body

    def close(self) -> None:
        try:
            if self._body is not None:
                self._body.close()
            self._inner.close()
        finally:
            self._session.close()  # a body left unread, or read in part, still ends its span


class _AsyncBody(_Reemitted):
    """The async twin of ``_Body``."""

    _resend: AsyncResend | None
    _body: AsyncGenerator[bytes, None] | None = None

    def __aiter__(self) -> AsyncGenerator[bytes, None]:
        self._body = areemit(self._inner, self._session, self._on_call, self._error, self._resend)
        return self._body

    async def aclose(self) -> None:
        try:
            if self._body is not None:
                await self._body.aclose()
            await self._inner.aclose()
        finally:
            self._session.close()
