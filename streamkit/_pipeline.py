"""The drivers: ``Assembler`` run over a source, in the public iterators.

``iter_events``/``aiter_events`` drive an ``Assembler`` over any iterable of bytes, text lines,
SSE events, dicts or SDK event objects, ``iter_tool_calls``/``aiter_tool_calls`` keep only the
calls, and ``collect_turn``/``acollect_turn`` the whole ``Turn``. What the source's own iteration
raises is translated once, by ``streamkit._foreign.translated``.
"""

from __future__ import annotations

from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Iterable,
    Iterator,
    Mapping,
)
from typing import TYPE_CHECKING, Any, NoReturn, Unpack, cast

from . import _log
from ._assembler import Assembler, StreamOptions, check_options
from ._errors import (
    FramingError,
    UsageError,
)
from ._events import Frame
from ._hot import HotRead
from ._sources import Payload, SourceAdapter
from ._types import (
    Call,
    Provider,
)
from .providers import Decoder

if TYPE_CHECKING:  # the turn's values are loaded by the first turn collected
    from ._turn_types import StreamEvent, Turn

__all__ = (
    "Source",
    "aiter_events",
    "acollect_turn",
    "aiter_tool_calls",
    "collect_turn",
    "iter_events",
    "iter_tool_calls",
)


#: What ``iter_events`` and its kin accept: any iterable of the items ``_sources`` recognizes
#: (bytes, text lines, SSE events, dicts, SDK event objects).
Source = Iterable[Any] | AsyncIterable[Any]


def _feed(assembler: Assembler, adapter: SourceAdapter, item: Any) -> list[StreamEvent]:
    """What one source item completes: ``adapter.adapt(item)`` fed to the assembler, in one
    call per read. A text line that cannot be UTF-8 fails the stream as bad bytes do."""
    try:
        value = adapter.adapt(item)
    except UnicodeEncodeError as exc:
        shown = exc.object[exc.start : exc.end]
        error = FramingError(f"the source's text holds {shown!r}, a lone surrogate that no UTF-8 stream can carry")
        assembler.fail(error)
        raise error from None
    if type(value) is bytes:
        return assembler.feed(value)
    if isinstance(value, Payload):
        return assembler.feed_payload(value.payload, value.event)
    assert isinstance(value, Frame)
    return assembler.feed_frame(value)


_ACCEPTED = "an iterable of stream items (bytes chunks, text lines, SSE events, dicts or SDK event objects)"
#: Sources that are iterable yet no stream: read one character, byte or key at a time, each
#: would end in a misleading stream error.
_NOT_SOURCES = {
    str: "pass [text.encode()], or its lines with their ends (text.splitlines(keepends=True))",
    bytes: "pass [body], a list of chunks",
    bytearray: "pass [body], a list of chunks",
    memoryview: "pass [body], a list of chunks",
    dict: "pass [payload], a list of payloads",
}


def check_source(source: object, function: str, *, asynchronous: bool = False) -> None:
    """A ``UsageError`` naming what was passed as ``source`` and what ``function`` accepts."""
    accepted = f"an async iterable or {_ACCEPTED}" if asynchronous else _ACCEPTED
    got = type(source).__name__
    for kind, hint in _NOT_SOURCES.items():
        if isinstance(source, kind):
            raise UsageError(f"{function} takes {accepted}, got a {got}: {hint}")
    if isinstance(source, Iterable) or (asynchronous and isinstance(source, AsyncIterable)):
        return
    hint = "; use aiter_events (or its kin) for an async source" if isinstance(source, AsyncIterable) else ""
    raise UsageError(f"{function} takes {accepted}, got {'None' if source is None else got}{hint}")


def _assembler(provider: Provider | Decoder, options: Mapping[str, Any]) -> Assembler:
    check_options(options)
    return Assembler(provider, **options)


def iter_events(
    source: Iterable[Any], provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Iterator[StreamEvent]:
    """Yield text deltas, each call the moment it completes, and last the ``ResponseEnd``.

    ``source`` yields bytes, text lines, SSE events, dicts or SDK event objects (see
    ``streamkit._sources``). ``options`` are ``Assembler``'s; a bad provider or option raises
    ``UsageError`` here, at the call, before anything is read, as does a source that is not
    an iterable of stream items.
    """
    check_source(source, "iter_events")
    return _events_of(source, _assembler(provider, options))


def _events_of(source: Iterable[Any], assembler: Assembler, *, calls: bool = False) -> Iterator[StreamEvent]:
    """The events of ``source``; with ``calls``, only the calls: the stream's text is made into
    no ``TextDelta`` (``Assembler.calls_only``), and nothing but calls is handed on."""
    if calls:
        assembler.calls_only()
    adapter = SourceAdapter(assembler.provider, assembler.framing)
    items = iter(source)
    hot: HotRead | None = None
    raw = False  # a bytes source, once its first item said so
    passed = 0  # reads past ``adapt``: counted on the adapter before its next item
    try:
        while True:
            try:
                item = next(items)
            except StopIteration:
                break
            except Exception as exc:
                _reraise(exc, assembler)
            if raw and type(item) is bytes:  # a read of a bytes source: past ``adapt`` and ``feed``
                passed += 1
                if hot is not None:  # one frame for most reads: the hot read
                    taken = hot.take(item)
                    if taken is not None:
                        if not calls:  # text deltas: the hot read delivers no call
                            yield from taken
                        continue
                events = assembler.feed_general(item)  # the general path (the hot read, if any, turned it down)
            else:
                if passed:
                    adapter.count += passed
                    passed = 0
                events = _feed(assembler, adapter, item)
            if not calls:
                yield from events
            elif events:
                yield from _calls(events)
            if assembler.error is not None:
                raise assembler.error
            if assembler.finished:
                if adapter.drains_after_end:
                    _drain(items)
                break
            raw = adapter.kind == "bytes"  # any other source's items are adapted
            hot = assembler.hot if raw else None
        yield from _calls(assembler.flush()) if calls else assembler.flush()
        if assembler.error is not None:
            raise assembler.error
    finally:
        assembler.close()


def aiter_events(
    source: Source, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> AsyncIterator[StreamEvent]:
    """The async twin of ``iter_events``; ``source`` may be an async or a plain iterable."""
    check_source(source, "aiter_events", asynchronous=True)
    return _aevents_of(source, _assembler(provider, options))


async def _aevents_of(
    source: Source, assembler: Assembler, *, calls: bool = False
) -> AsyncGenerator[StreamEvent, None]:
    """The events of ``source``; with ``calls``, only the calls: one generator per stream,
    reading an async source directly, so a read crosses no other generator, and a read of bytes
    the hot read takes no other frame."""
    if calls:
        assembler.calls_only()
    adapter = SourceAdapter(assembler.provider, assembler.framing)
    hot: HotRead | None = None
    raw = False  # as in _events_of
    passed = 0
    try:
        items = _opened_items(source)
        try:
            while True:
                try:
                    item = await items.__anext__()
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    _reraise(exc, assembler)
                if raw and type(item) is bytes:  # as in _events_of
                    passed += 1
                    if hot is not None:
                        taken = hot.take(item)
                        if taken is not None:
                            if not calls:  # text deltas: the hot read delivers no call
                                for value in taken:
                                    yield value
                            continue
                    events = assembler.feed_general(item)
                else:
                    if passed:
                        adapter.count += passed
                        passed = 0
                    events = _feed(assembler, adapter, item)
                for value in events:
                    if not calls or isinstance(value, Call):
                        yield value
                if assembler.error is not None:
                    raise assembler.error
                if assembler.finished:
                    await _read_to_end(items, adapter)
                    break
                raw = adapter.kind == "bytes"
                hot = assembler.hot if raw else None
        finally:
            aclose = getattr(items, "aclose", None)
            if aclose is not None:
                await aclose()
        for value in assembler.flush():
            if not calls or isinstance(value, Call):
                yield value
        if assembler.error is not None:
            raise assembler.error
    finally:
        assembler.close()


def _reraise(exc: Exception, assembler: Assembler) -> NoReturn:
    """Raise, while the source's own exception ``exc`` is handled, what it raises in its place
    (``translated``): the caller's own exception is raised again as it is."""
    from ._foreign import translated  # loaded by the first source that raises

    error = translated(exc, assembler)
    if error is exc:
        raise  # the exception being handled: its traceback and context unchanged
    raise error from error.__cause__


def iter_tool_calls(
    source: Iterable[Any], provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Iterator[Call]:
    """Yield each call, valid or not, the moment its end marker arrives."""
    check_source(source, "iter_tool_calls")
    return cast(Iterator[Call], _events_of(source, _assembler(provider, options), calls=True))


def _calls(events: list[StreamEvent]) -> list[StreamEvent]:
    """The calls among ``events``."""
    return [item for item in events if isinstance(item, Call)]


def aiter_tool_calls(
    source: Source, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> AsyncIterator[Call]:
    """The async twin of ``iter_tool_calls``."""
    check_source(source, "aiter_tool_calls", asynchronous=True)
    calls = _aevents_of(source, _assembler(provider, options), calls=True)
    return cast(AsyncIterator[Call], calls)


def _drain(items: Iterator[Any]) -> None:
    """Read an SDK's stream to its end after the provider's end marker, as ``_read_to_end`` does."""
    try:
        for _ in items:
            pass
    except Exception as exc:  # after the end marker: nothing the source says changes the response
        _log.debug(__name__, "the source raised after the end of the response: %s", type(exc).__name__)


async def _read_to_end(items: AsyncIterator[Any], adapter: SourceAdapter) -> None:
    # An SDK's stream reads its body to the end after the provider's end marker, and ends;
    # reading it that far lets it close its response and its async generators (trio warns
    # about an async generator left unfinished).
    if adapter.drains_after_end:
        try:
            async for _ in items:
                pass
        except Exception as exc:  # as in _drain
            _log.debug(__name__, "the source raised after the end of the response: %s", type(exc).__name__)


def collect_turn(source: Iterable[Any], provider: Provider | Decoder, **options: Unpack[StreamOptions]) -> Turn:
    """Read a whole response and return its ``Turn``: text, reasoning, server tools and calls.

    A stream that fails raises, as ``iter_events`` does: a turn is only ever built whole.
    """
    from ._turn_types import Turn

    check_source(source, "collect_turn")
    slug = provider if isinstance(provider, str) else provider.slug
    return Turn.from_events(iter_events(source, provider, **options), slug)


async def acollect_turn(source: Source, provider: Provider | Decoder, **options: Unpack[StreamOptions]) -> Turn:
    """The async twin of ``collect_turn``."""
    from ._turn_types import Turn

    check_source(source, "acollect_turn", asynchronous=True)
    events = aiter_events(source, provider, **options)
    slug = provider if isinstance(provider, str) else provider.slug
    return Turn.from_events([item async for item in events], slug)


def _opened_items(source: Source) -> AsyncIterator[Any]:
    """An async source's own iterator (closed by the reader when it stops), or a plain one's
    items as an async generator. A failure to open it is raised by the first read, where
    the driver reports it as the source's own, as it does a failure to read."""
    if not isinstance(source, AsyncIterable):
        return _aiter(source)
    try:
        return aiter(source)
    except Exception as exc:
        return _raising(exc)


async def _aiter(source: Iterable[Any]) -> AsyncGenerator[Any, None]:
    for chunk in source:
        yield chunk


async def _raising(exc: Exception) -> AsyncGenerator[Any, None]:
    raise exc
    yield  # an async generator that fails on its first read
