"""Re-emitting a streamed response in its own provider's format, canonical: what the transports
(``integrations/_shell``, pydantic-ai's wrapper, the boto3 hook) and the proxy (``serve``) stand on.

Bytes of one response go in; out come the same provider's bytes in which every tool call is
written once, whole, at its end marker, with a distinct index, its id, name and arguments. The
frames are cut by streamkit's framers and fed to the pipeline (``Assembler``), which says which
calls each frame completed and whether each is valid; the provider's encoder
(``providers/<slug>/reemit.py``) then writes those calls and the frame itself with its call fragments taken out.

Every other frame is written back as it came (its ``event:`` and ``data:``, not its comments or
``id:`` lines): the pipeline keeps no response id, model name, sequence number or usage field
it does not need, and re-encoding the response from the values would lose them, so only the
call events are replaced. What an SDK reads besides the calls (text and reasoning as they
arrive, signatures, opaque items, stop reason, usage) is therefore exactly what the provider sent.

Invalid calls never reach an SDK as calls (cut off, not JSON, failing its schema, an unknown
tool): what a bad call becomes is the session's policy (``_policy.BadCalls``), decided in one
place (``Session._left``). On ``tell`` (the transports' and the proxy's default) it is left out
of the re-emitted stream, with the frames of its block, and reported through ``on_call`` and on
the response (``INVALID_CALLS``); at the response's end the end is held and ``again`` is the
request to send next, with the turn and each call's result appended: the driver sends it and
the answer is read as the rest of the same response (``resume``), at most ``rounds`` times. On
``raise`` the first bad call ends the body (``withheld``); on ``pass`` (pydantic-ai's, whose
wrapper turns each into a retry) it is written: a cut call with its raw text and without its
end, an invalid call with its raw text. When the provider reports an error in the stream, the
calls completed before it are written, then those it cut (raw, unended), then the error frame
as it came, and the rest of the stream passes through untouched: the SDK raises its own
exception. When the stream cannot be decoded (a protocol error, a limit passed), the calls
completed before it are written and the body then fails, as a connection cut in the middle
does; the transport shell raises its library's ``RemoteProtocolError`` with the streamkit error
as its cause. The frame that failed is not written (nor a call it completed): nothing streamkit
could not read reaches the SDK. A body that ends cleanly inside a call is told as a cut
(``tell``), passed on cut (``pass``), or fails (no request held, ``raise``).

The body is read after its ``Content-Encoding`` is undone, by the HTTP library's own decoders
(gzip, deflate; brotli and zstd where installed): the re-emitted body is plain, and its headers
say so. An encoding the library cannot undo is a ``TransportError`` before any byte is read. A
2xx body whose content type is not a stream's (``text/plain``, ``application/octet-stream``,
none) is re-emitted when its first bytes are the provider's framing, and passed through as it
came otherwise; a JSON body (an answer not streamed) always passes through.

The tools calls are checked against are a request's own (``request_toolset``: the proxy's reader
of a parsed request, ``read_request``: the transports' reading of its body), unless the transport was
given some.

Nothing here does IO or imports an HTTP library: ``Session`` is sans-IO, and ``reemit`` and
``areemit`` drive it over the chunks of a response body for the transport shells; the proxy
drives a ``Session`` itself.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Mapping,
    Sequence,
)
from typing import Any, Protocol

import orjson

from .. import _observe
from .._assembler import Assembler
from .._detect import HEAD_BYTES, detect_provider
from .._errors import IncompleteStreamError, ProviderError, StreamError, StreamkitError, TransportError, UsageError
from .._events import Frame
from .._limits import DEFAULT_LIMITS, Limits
from .._ndjson import NDJSONDecoder
from .._sse import SSEDecoder
from .._turn_types import StreamEvent, Turn
from .._types import PROVIDERS, CallStarted, InvalidToolCall, Provider
from .._validate import Toolset, as_toolset
from ..providers import ENCODERS, FACTS
from ..providers._encoder import Call
from ._policy import PENDING, BadCalls, InvalidCallsError, asked_again, bad_calls

__all__ = (
    "INVALID_CALLS",
    "PENDING",
    "AsyncResend",
    "BadCalls",
    "ContentDecoder",
    "Decoding",
    "OnCall",
    "Options",
    "Resend",
    "Session",
    "areemit",
    "content_decoding",
    "is_stream",
    "kept_headers",
    "path_provider",
    "read_request",
    "reemit",
    "request_toolset",
    "resent",
)

#: ``on_call(call)``: a plain function, or (for the async transports) a coroutine function.
OnCall = Callable[[Call], Any]

#: The content types of a stream to re-emit, one per framing an encoder writes (not plain JSON).
_STREAM_TYPES = (SSEDecoder.content_type, NDJSONDecoder.content_type)
#: The key of a re-emitted response's ``extensions`` that lists the calls left out of its body.
INVALID_CALLS = "streamkit_invalid_calls"
#: How an SSE stream's first line begins: one of its fields, or a comment.
_SSE_STARTS = (b"data:", b"event:", b"id:", b"retry:", b":")


class ContentDecoder(Protocol):
    """An HTTP library's decoder of one ``Content-Encoding``: httpx's return bytes, httpx2's yield them."""

    def decode(self, data: bytes) -> bytes | Iterable[bytes]: ...

    def flush(self) -> bytes | Iterable[bytes]: ...


def path_provider(path: str) -> str | None:
    """The provider whose API has this request path (its facts' ``paths.end``), if any: what
    names the provider when the stream's first events do not."""
    return next((slug for slug, end in _path_ends() if path.endswith(end)), None)


@functools.cache
def _path_ends() -> tuple[tuple[str, str], ...]:
    return tuple((slug, facts.paths.end) for slug, facts in FACTS.items() if facts.paths.end)


def _reemittable(name: str | None) -> Provider | None:
    """``name`` as the slug of a provider the transports re-emit, else ``None``."""
    return next((slug for slug in PROVIDERS if slug == name and slug in ENCODERS), None)


#: The headers a re-emitted body makes wrong: its length, and the encoding streamkit undid.
_STALE_HEADERS = frozenset({b"content-length", b"content-encoding"})


def kept_headers(raw: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """A re-emitted response's headers: the same, less its ``Content-Length`` and ``Content-Encoding``."""
    return [(name, value) for name, value in raw if name.lower() not in _STALE_HEADERS]


def resent(headers: Iterable[tuple[bytes, bytes]], asked: Mapping[str, Any]) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The headers and body of a request sent again with ``asked`` as its body (the model asked
    again): its own headers but its length, which the new body's sets."""
    kept = [(name, value) for name, value in headers if name.lower() != b"content-length"]
    return kept, orjson.dumps(asked)


def request_toolset(request: Mapping[str, Any]) -> Toolset | None:
    """The tools a request offers (its ``tools``), ``None`` when it offers none: how the proxy and
    the transports read them. Compiled once per distinct list (an agent sends the same list each
    turn); a list streamkit cannot read raises ``UsageError``."""
    tools = request.get("tools")
    if tools is None or tools == []:
        return None
    return _compiled(orjson.dumps(tools, option=orjson.OPT_SORT_KEYS))


@functools.lru_cache(maxsize=256)
def _compiled(tools: bytes) -> Toolset:
    return Toolset(orjson.loads(tools))


def read_request(body: bytes) -> dict[str, Any] | None:
    """A request body's JSON object; ``None`` when it is none."""
    try:
        request = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return request if isinstance(request, dict) else None


class Decoding:
    """A body's ``Content-Encoding`` undone: each coding in turn, the last applied first."""

    def __init__(self, decoders: Sequence[ContentDecoder]) -> None:
        self._decoders = list(reversed(decoders))

    def decode(self, data: bytes) -> bytes:
        for decoder in self._decoders:
            data = _bytes(decoder.decode(data))
        return data

    def flush(self) -> bytes:
        data = b""
        for decoder in self._decoders:
            data = _bytes(decoder.decode(data)) + _bytes(decoder.flush())
        return data


def is_stream(content_type: str) -> bool:
    """Whether a body of ``content_type`` is a stream the encoders write (SSE, NDJSON)."""
    kind = content_type.lower()
    return any(name in kind for name in _STREAM_TYPES)


def _bytes(out: bytes | Iterable[bytes]) -> bytes:
    return out if isinstance(out, bytes) else b"".join(out)


def content_decoding(encoding: str, decoders: Mapping[str, Callable[[], ContentDecoder]] | None) -> Decoding | None:
    """The decoding of a body sent with this ``Content-Encoding``, by the library's ``decoders``.

    ``None`` for a plain body. An encoding the library has no decoder for (``br`` without
    brotli installed) raises ``TransportError`` naming it: its bytes are not the stream's.
    """
    names = [name.strip().lower() for name in encoding.split(",")]
    names = [name for name in names if name not in ("", "identity")]
    if not names:
        return None
    known = decoders or {}
    unknown = [name for name in names if name not in known]
    if unknown:
        can = ", ".join(sorted(name for name in known if name != "identity")) or "none"
        hint = " (install brotli)" if "br" in unknown else ""
        raise TransportError(
            f"streamkit cannot read a body with Content-Encoding {', '.join(unknown)}{hint}; "
            f"the HTTP library decodes: {can}"
        )
    return Decoding([known[name]() for name in names])


class Options:
    """A transport's options, checked once, when it is made."""

    def __init__(
        self,
        provider: Provider | None,
        tools: Toolset | Iterable[Any] | Mapping[str, Any] | None,
        on_call: OnCall | None,
        limits: Limits | None,
        *,
        asynchronous: bool,
        invalid: BadCalls | str | None = None,
    ) -> None:
        if provider is not None and provider not in ENCODERS:
            known = ", ".join(sorted(ENCODERS))
            raise UsageError(f"the transport cannot re-emit provider {provider!r}; it can: {known}")
        if limits is not None and not isinstance(limits, Limits):
            raise UsageError(f"limits must be a streamkit.Limits, got {type(limits).__name__}")
        if on_call is not None and not callable(on_call):
            raise UsageError(f"on_call must be callable, got {type(on_call).__name__}")
        if on_call is not None and not asynchronous and inspect.iscoroutinefunction(on_call):
            raise UsageError("on_call is a coroutine function: use AsyncTransport, or a plain function")
        self.provider = provider
        self.bad = None if invalid is None else bad_calls(invalid, Session.bad_calls)
        self.toolset = None if tools is None else as_toolset(tools)
        self.on_call = on_call
        self.limits = DEFAULT_LIMITS if limits is None else limits

    def session(
        self,
        path: str,
        status: int,
        headers: Mapping[str, str],
        decoders: Mapping[str, Callable[[], ContentDecoder]] | None = None,
        *,
        made: type[Session] | None = None,
        request: _observe.Request | None = None,
        offered: Toolset | None = None,
        asked: Mapping[str, Any] | None = None,
    ) -> Session | None:
        """A session for a response to re-emit, or ``None`` for one to pass through untouched.

        A successful body is re-emitted unless it is JSON (an answer not streamed); one whose
        content type is not a stream's is sniffed first (``Session``). Its ``Content-Encoding``
        is undone by ``decoders``, the library's (``content_decoding``). ``made`` is a
        ``Session`` subclass to make, which may keep invalid calls (``keep_invalid``). ``request``
        is what telemetry records of the request the body answers (its server, its secrets).
        Calls are checked against the tools given when the options were made, else against
        ``offered``, the request's own (``request_toolset``). ``asked`` is the request itself, for
        a driver that can send it again with a bad call answered (the policy's ``tell``).
        """
        kind = headers.get("content-type", "").lower()
        streamed = is_stream(kind)
        if not 200 <= status < 300 or (not streamed and "json" in kind):
            return None
        decoding = content_decoding(headers.get("content-encoding", ""), decoders)
        made = Session if made is None else made
        toolset = offered if self.toolset is None else self.toolset
        return made(
            self.provider,
            path,
            toolset,
            self.limits,
            sniff=not streamed,
            decoding=decoding,
            request=request,
            bad=self.bad,
            asked=asked,
        )


class Session:
    """One response: bytes in (``feed``, ``flush``), the re-emitted bytes out.

    Without a provider, the first bytes are held until ``detect_provider`` names one (as
    ``streamkit replay --provider auto`` does), or ``HEAD_BYTES`` were read; then the request
    path decides; a stream neither names is passed through untouched. With ``sniff`` (a body
    whose content type does not say it is a stream), the first bytes are held until they show
    whether they are the provider's framing (an SSE field, or for NDJSON a JSON line that
    ``detect_provider`` names): if not, the body passes through as it came.

    ``decoding`` undoes the body's ``Content-Encoding`` before anything else. ``bad`` is the
    policy for a bad call (the class's ``bad_calls`` when none is given) and ``asked`` the
    request the body answers, which ``tell`` sends again with the turn appended (``again``).

    On ``raise`` (and on ``tell`` past its rounds, or where the response cannot go on), the first
    frame that completes an invalid call (or cuts one, with the provider's error) ends the body:
    neither it nor anything after it is written, and its invalid calls are kept in ``withheld``
    for the driver to report (``serve`` writes the client's own error event; the transports fail
    the body with ``refused``), so nothing the provider sent after the bad call (a stop reason,
    ``[DONE]``) can reach the client before the report.

    Attributes:
        calls: the calls completed since the driver last took them, for ``on_call``.
        left_out: every invalid call left out of the body so far, in order.
        failure: the error that ended the body, once there is one (nothing is re-emitted after).
        withheld: the invalid calls that ended the body, on ``raise``.
        again: the request to send next, on ``tell``, once the response's end was held.
        started: with ``opened``, the calls opened since the driver last took them (to time them).

    ``early_close`` is the ``Assembler``'s: an OpenAI Chat call ends when the next call of its
    choice starts, rather than at the finish reason. ``request`` names, for telemetry, the
    request the body answers; ``close`` ends the stream's span however the body ended.
    """

    #: What a bad call becomes when the session is given no policy (``_policy``).
    bad_calls: BadCalls = BadCalls()

    def __init__(
        self,
        provider: Provider | None,
        path: str,
        toolset: Toolset | None,
        limits: Limits,
        *,
        sniff: bool = False,
        decoding: Decoding | None = None,
        bad: BadCalls | None = None,
        asked: Mapping[str, Any] | None = None,
        opened: bool = False,
        early_close: bool = False,
        request: _observe.Request | None = None,
    ) -> None:
        self._path = path
        self._request = request
        self._early_close = early_close
        self.policy = self.bad_calls if bad is None else bad
        self.keep_invalid = self.policy.action == "pass"
        self._withhold = self.policy.action == "raise"
        self._asked = asked if self.policy.action == "tell" else None
        self._values: list[StreamEvent] = []  # with ``asked``: this response's values, for its turn
        self._bad: list[InvalidToolCall] = []  # the bad calls of this response
        self._ended = False  # its end was read and not written: the rest of it is read only
        self.again: dict[str, Any] | None = None
        self.rounds = 0
        self._opened = opened
        self._toolset = toolset
        self._limits = limits
        self._given = provider
        self._sniff = sniff
        self._decoding = decoding
        self._head = bytearray()
        self._decided = False
        self.provider: Provider | None = None
        self._passing = False  # no provider: the bytes go through untouched
        self._after_error = False  # the provider reported an error: the rest goes through as it came
        self.calls: list[Call] = []
        self.left_out: list[InvalidToolCall] = []
        self.failure: StreamError | None = None
        self.withheld: tuple[InvalidToolCall, ...] = ()
        self.started: list[CallStarted] = []
        if provider is not None and not sniff:
            self._start(provider)

    @property
    def stopped(self) -> bool:
        """Whether the body has ended early: a failure, or a withheld call."""
        return self.failure is not None or bool(self.withheld)

    @property
    def provider_error(self) -> bool:
        """Whether the provider reported an error in the stream (what follows it may echo a key)."""
        return self._after_error

    @property
    def finished(self) -> bool:
        """Whether the provider's end-of-stream marker was read: what comes after it is only the body's close."""
        return self.provider is not None and self._assembler.finished

    def close(self) -> None:
        """The reader is done with the body, read or not: a telemetry span still open ends."""
        if self.provider is not None:
            self._assembler.close()

    def resume(self, decoding: Decoding | None) -> None:
        """The answer to ``again`` comes next (its ``Content-Encoding`` undone by ``decoding``):
        it is read and written as the rest of this response."""
        assert self.provider is not None and self.again is not None
        self._assembler.close()
        self.again, self._decoding = None, decoding
        self.rounds += 1
        self._values, self._bad, self._ended = [], [], False
        self._read(self.provider)
        self._encoder.resume()

    def fail(self, error: TransportError) -> None:
        """The body could not be read to its end (the connection failed): a telemetry span still
        open ends failed with ``error``, the calls still open as cut ones."""
        if self.provider is not None and not self.stopped:
            self._assembler.noted(error)

    def feed(self, chunk: bytes) -> bytes:
        if self.stopped:
            return b""
        return self._feed(chunk if self._decoding is None else self._decoding.decode(chunk))

    def _feed(self, chunk: bytes, *, final: bool = False) -> bytes:
        if not self._decided:
            self._head += chunk
            if not self._decide(final):
                return b""
            chunk, self._head = bytes(self._head), bytearray()
        if self._passing:
            return chunk
        try:
            frames = self._framer.feed(chunk)
        except StreamError as exc:
            self.failure = exc
            return b""
        return self._frames(frames)

    def flush(self) -> bytes:
        """The end of the body: what is left to write (``failure`` is set if the stream was cut)."""
        if self.stopped:
            return b""
        out = self._feed(b"" if self._decoding is None else self._decoding.flush(), final=True)
        if self._passing or self.stopped:
            return out
        try:
            frames = self._framer.flush()
        except StreamError as exc:
            self.failure = exc
            return out
        out += self._frames(frames)
        if self.stopped or self._after_error:
            return out
        if self._ended:  # what follows the end is the answer to ``again``
            return out
        try:
            values = self._assembler.flush()
        except IncompleteStreamError as exc:
            # a call was open when the body ended: it was cut, and nothing says so
            if exc.unfinished and not self._told_cut(exc.unfinished):
                passed = self._passed_cut(exc.unfinished)
                if passed is None:
                    self.failure = exc
                else:
                    out += passed
            return out
        except StreamError as exc:
            self.failure = exc
            return out
        calls = self._take(values)
        if self._withhold and self._withheld(calls):
            return out
        if calls:
            self.failure = IncompleteStreamError("calls completed after the last frame", provider=self.provider)
        return out

    def _decide(self, final: bool) -> bool:
        """Whether the bytes held so far say what the body is; if so, the session is started."""
        head = bytes(self._head)
        framing = _framing(head, final) if self._sniff else "sse"
        if framing is None:
            return False
        if self._sniff and self._given is not None:
            self._start(self._given if framing == ENCODERS[self._given].framing else None)
            return True
        if framing == "other":
            self._start(None)
            return True
        slug = detect_provider(head)
        if slug is None and len(head) < HEAD_BYTES and not final:
            return False
        # a sniffed JSON line is a stream only when detect_provider names it (Ollama's)
        self._start(slug if framing == "ndjson" else slug or path_provider(self._path))
        return True

    def _start(self, name: str | None) -> None:
        self._decided = True
        provider = _reemittable(name)
        if provider is None:
            self._passing = True
            return
        self._read(provider)
        self.provider = provider  # once there is an assembler to close
        self._encoder = ENCODERS[provider]()
        self._encoder.keep_invalid = self.keep_invalid
        if self.policy.action == "tell" and not self._encoder.continues:  # nothing to go on with: as ``raise``
            self._withhold = True

    def _read(self, provider: Provider) -> None:
        """A response of ``provider`` to read: its assembler and its framer."""
        make = functools.partial(
            Assembler,
            provider,
            limits=self._limits,
            tools=self._toolset,
            fragments=self._opened,
            early_close=self._early_close,
        )
        self._assembler = _observe.within(self._request, make)
        framing = ENCODERS[provider].framing
        framer = SSEDecoder if framing == "sse" else NDJSONDecoder
        self._framer = framer(max_event_bytes=self._limits.max_event_bytes)

    def ending(self, kind: str, message: str, code: str) -> bytes | None:
        """The error that ends the re-emitted stream, written after what was written (a format
        whose events are numbered numbers it on); None before the stream's format is known."""
        encoder = getattr(self, "_encoder", None)
        return None if encoder is None else encoder.ending(kind, message, code)

    def _frames(self, frames: list[Frame]) -> bytes:
        out: list[bytes] = []
        for frame in frames:
            if self._after_error:
                out.append(self._encoder.write(frame))
                continue
            if self._ended:
                self._read_after_end(frame)
                continue
            error: StreamError | None
            try:
                values = self._assembler.feed_frame(frame)
            except StreamError as exc:
                values, error = [], exc
            else:
                error = self._assembler.error
            if self._asked is not None:
                self._values += values
            calls = self._take(values)
            if isinstance(error, ProviderError):  # the calls it cut, as ``_left`` makes them
                calls += [self._left(call) for call in error.unfinished]
            if self._withhold and self._withheld(calls):
                break
            if error is None and self._bad and self.policy.action == "tell" and self._encoder.ends(frame):
                out += self._encoder.unended(frame, calls)  # the valid calls it completed, not its end
                if not self._ask_again():
                    self.withheld = tuple(self._bad)
                    break
                self._ended = True
                continue
            if error is None or isinstance(error, ProviderError):
                try:
                    out += self._encoder.frame(frame, calls)
                except StreamError as exc:
                    error = exc
            if isinstance(error, ProviderError):
                out.append(self._encoder.provider_error(str(error)))
                self._after_error = True
            elif error is not None:  # the frame is not written: nothing streamkit could not read goes on
                if error.provider is None:
                    error.provider = self.provider
                self.failure = error
                break
        return b"".join(out)

    def _take(self, values: Sequence[object]) -> list[Call]:
        """The calls ``values`` completed, for the encoder; ``on_call`` will see each as it came."""
        calls = [value for value in values if isinstance(value, Call)]
        self.calls += calls
        if self._opened:
            self.started += (value for value in values if isinstance(value, CallStarted))
        return [self._left(call) if isinstance(call, InvalidToolCall) else call for call in calls]

    def _left(self, call: InvalidToolCall) -> InvalidToolCall:
        """What a bad call (cut off, not JSON, failing its schema, naming a tool not offered)
        becomes in the body, as the policy says: the call returned is what the encoder is given.
        On ``pass`` the encoder writes its raw text (a cut call without its end); else it leaves
        it out, with its block, and ``left_out`` keeps it, so it is reported (``on_call``,
        ``INVALID_CALLS``) and never dropped unsaid. On ``tell`` the response's end then asks the
        model again (``_ask_again``); on ``raise`` the call ends the body (``withheld``)."""
        self._bad.append(call)
        if not self.keep_invalid:
            self.left_out.append(call)
        return call

    def _ask_again(self, more: Sequence[InvalidToolCall] = ()) -> bool:
        """Whether the model is asked again about this response's bad calls, and ``more`` besides
        (``again``, the request the driver sends next): not past the policy's rounds, nor where
        the response cannot go on (its format's encoder, a choice other than the first, no request held)."""
        if self._asked is None or self.rounds >= self.policy.rounds or not self._encoder.continues:
            return False
        values = [*self._values, *more]
        if any(getattr(value, "choice", 0) != 0 for value in values):
            return False
        assert self.provider is not None
        self.again = asked_again(self._asked, Turn.from_events(values, self.provider))
        return self.again is not None

    def _told_cut(self, unfinished: Sequence[InvalidToolCall]) -> bool:
        """Whether the calls a body ended inside (with no end from the provider) are told to the
        model as cut ones, the response going on with its answer (``tell``), rather than fail it;
        they are reported as bad calls only then (failing, the error holds them)."""
        if not self._ask_again(unfinished):
            return False
        self.calls += unfinished
        for call in unfinished:
            self._left(call)
        self._ended = True
        return True

    def _passed_cut(self, unfinished: Sequence[InvalidToolCall]) -> bytes | None:
        """On ``pass``, the calls a body ended inside, written as cut ones for the client to
        tell the model of (pydantic-ai's retry); ``None`` where the format cannot carry them."""
        if not self.keep_invalid:
            return None
        try:
            written = self._encoder.open_calls(unfinished)
        except NotImplementedError:
            return None
        self.calls += unfinished
        return b"".join(written)

    def _read_after_end(self, frame: Frame) -> None:
        """A frame after the end of a response the model is asked again in: read (its usage,
        its stop), not written; what streamkit cannot read there fails the body."""
        try:
            self._assembler.feed_frame(frame)
        except StreamError as exc:
            self.failure = exc

    @property
    def refused(self) -> InvalidCallsError | None:
        """The error naming the bad calls that ended the body (``withheld``), if any."""
        if not self.withheld:
            return None
        return InvalidCallsError(self.withheld, rounds=self.rounds or None)

    def _withheld(self, calls: list[Call]) -> bool:
        """Whether ``calls`` hold an invalid call, which then ends the body (``withhold``)."""
        self.withheld = tuple(call for call in calls if isinstance(call, InvalidToolCall))
        return bool(self.withheld)


def _framing(head: bytes, final: bool) -> str | None:
    """How a body that begins with ``head`` is framed: "sse", "ndjson", "other"; ``None``: too soon to tell."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if any(text.startswith(start) for start in _SSE_STARTS):
        return "sse"
    if text.startswith(b"{"):
        return "ndjson"
    soon = not text or any(start.startswith(text) for start in _SSE_STARTS)
    return None if soon and not final else "other"


#: Sends ``again``, the request asking the model again, and gives its answer's body and the
#: decoding of its ``Content-Encoding``; an answer that is no stream raises a ``StreamkitError``.
Resend = Callable[[dict[str, Any]], tuple[Iterable[bytes], "Decoding | None"]]
AsyncResend = Callable[[dict[str, Any]], Awaitable[tuple[AsyncIterable[bytes], "Decoding | None"]]]


def reemit(
    chunks: Iterable[bytes],
    session: Session,
    on_call: OnCall | None,
    error: Callable[[str], Exception],
    resend: Resend | None = None,
) -> Generator[bytes, None, None]:
    """The re-emitted body: ``on_call`` sees each call before the bytes that hold it are yielded.
    A response the model is asked again in (``Session.again``) goes on with the answer ``resend`` gets."""
    answer: Iterable[bytes] | None = chunks
    while answer is not None:
        iterator = iter(answer)
        try:
            for chunk in iterator:
                out = session.feed(chunk)
                _report(session, on_call)
                if out:
                    yield out
                _check(session, error)
        finally:  # the inner body's own generator, closed however this one ends
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
        out = session.flush()
        _report(session, on_call)
        if out:
            yield out
        answer = _next_answer(session, error, resend)


async def areemit(
    chunks: AsyncIterable[bytes],
    session: Session,
    on_call: OnCall | None,
    error: Callable[[str], Exception],
    resend: AsyncResend | None = None,
) -> AsyncGenerator[bytes, None]:
    """The async twin of ``reemit``; an ``on_call`` that returns an awaitable is awaited."""
    answer: AsyncIterable[bytes] | None = chunks
    while answer is not None:
        iterator = aiter(answer)
        try:
            async for chunk in iterator:
                out = session.feed(chunk)
                await _areport(session, on_call)
                if out:
                    yield out
                _check(session, error)
        finally:  # as above: trio warns about an async generator left unfinished
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()
        out = session.flush()
        await _areport(session, on_call)
        if out:
            yield out
        answer = await _anext_answer(session, error, resend)


def _next_answer(session: Session, error: Callable[[str], Exception], resend: Resend | None) -> Iterable[bytes] | None:
    """Once a body ends unfailed: the answer to the request asking the model again, its
    decoding given to the session; ``None`` when nothing asks again (the body ends)."""
    _check(session, error)
    if session.again is None or resend is None:
        return None
    try:
        chunks, decoding = resend(session.again)
    except StreamkitError as exc:
        raise _stopped(error, exc) from exc
    session.resume(decoding)
    return chunks


async def _anext_answer(
    session: Session, error: Callable[[str], Exception], resend: AsyncResend | None
) -> AsyncIterable[bytes] | None:
    """The async twin of ``_next_answer``."""
    _check(session, error)
    if session.again is None or resend is None:
        return None
    try:
        chunks, decoding = await resend(session.again)
    except StreamkitError as exc:
        raise _stopped(error, exc) from exc
    session.resume(decoding)
    return chunks


def _report(session: Session, on_call: OnCall | None) -> None:
    calls, session.calls = session.calls, []
    if on_call is not None:
        for call in calls:
            on_call(call)


async def _areport(session: Session, on_call: OnCall | None) -> None:
    calls, session.calls = session.calls, []
    if on_call is not None:
        for call in calls:
            result = on_call(call)
            if inspect.isawaitable(result):
                await result


def _check(session: Session, error: Callable[[str], Exception]) -> None:
    cause = session.failure or session.refused
    if cause is not None:
        raise _stopped(error, cause) from cause


def _stopped(error: Callable[[str], Exception], cause: StreamkitError) -> Exception:
    """The HTTP library's error (``error``) for a body streamkit stopped because of ``cause``."""
    return error(f"streamkit stopped the stream: {cause}")
