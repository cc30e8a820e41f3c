"""The drivers: ``Assembler`` run over a source, in the public iterators.

``iter_events``/``aiter_events`` drive an ``Assembler`` over any iterable of bytes, text lines,
SSE events, dicts or SDK event objects, ``iter_tool_calls``/``aiter_tool_calls`` keep only the
calls, and ``collect_turn``/``acollect_turn`` the whole ``Turn``. What the source's own iteration
raises is translated once, by ``streamkit._foreign.translated``.
"""

from __future__ import annotations

import logging
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Iterable,
    Iterator,
    Mapping,
)
from typing import Any, Unpack, cast

from ._assembler import Assembler, StreamOptions, check_options
from ._errors import (
    FramingError,
    UsageError,
)
from ._events import Frame
from ._foreign import translated
from ._sources import Payload, SourceAdapter
from ._turn_types import StreamEvent, Turn
from ._types import (
    Call,
    Provider,
)
from .providers import Decoder

__all__ = (
    "Source",
    "aiter_events",
    "acollect_turn",
    "aiter_tool_calls",
    "collect_turn",
    "iter_events",
    "iter_tool_calls",
)

_log = logging.getLogger(__name__)

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
        assembler._fail(error)
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
    str: "pass its lines (text.splitlines(keepends=True)) or [text.encode()]",
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


def _events_of(source: Iterable[Any], assembler: Assembler) -> Iterator[StreamEvent]:
    adapter = SourceAdapter(assembler.provider, assembler.framing)
    items = iter(source)
    try:
        while (item := _next(items, assembler)) is not _END:
            yield from _feed(assembler, adapter, item)
            if assembler.error is not None:
                raise assembler.error
            if assembler.finished:
                if adapter.drains_after_end:
                    _drain(items)
                break
        yield from assembler.flush()
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
    reading an async source directly, so a read crosses no other generator."""
    adapter = SourceAdapter(assembler.provider, assembler.framing)
    try:
        items = _opened_items(source)
        try:
            while (item := await _anext(items, assembler)) is not _END:
                for value in _feed(assembler, adapter, item):
                    if not calls or isinstance(value, Call):
                        yield value
                if assembler.error is not None:
                    raise assembler.error
                if assembler.finished:
                    await _read_to_end(items, adapter)
                    break
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


#: What ``_next`` returns when the source is done.
_END: Any = object()


def _next(items: Iterator[Any], assembler: Assembler) -> Any:
    """The source's next item, or ``_END``; a failure of the source's own iteration translated."""
    try:
        return next(items, _END)
    except Exception as exc:
        error = translated(exc, assembler)
        if error is exc:
            raise
        raise error from error.__cause__


async def _anext(items: AsyncIterator[Any], assembler: Assembler) -> Any:
    try:
        return await anext(items, _END)
    except Exception as exc:
        error = translated(exc, assembler)
        if error is exc:
            raise
        raise error from error.__cause__


def iter_tool_calls(
    source: Iterable[Any], provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Iterator[Call]:
    """Yield each call, valid or not, the moment its end marker arrives."""
    check_source(source, "iter_tool_calls")
    return _calls_of(iter_events(source, provider, **options))


def _calls_of(events: Iterator[StreamEvent]) -> Iterator[Call]:
    for item in events:
        if isinstance(item, Call):
            yield item


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
        _log.debug("the source raised after the end of the response: %s", type(exc).__name__)


async def _read_to_end(items: AsyncIterator[Any], adapter: SourceAdapter) -> None:
    # An SDK's stream reads its body to the end after the provider's end marker, and ends;
    # reading it that far lets it close its response and its async generators (trio warns
    # about an async generator left unfinished).
    if adapter.drains_after_end:
        try:
            async for _ in items:
                pass
        except Exception as exc:  # as in _drain
            _log.debug("the source raised after the end of the response: %s", type(exc).__name__)


def collect_turn(source: Iterable[Any], provider: Provider | Decoder, **options: Unpack[StreamOptions]) -> Turn:
    """Read a whole response and return its ``Turn``: text, reasoning, server tools and calls.

    A stream that fails raises, as ``iter_events`` does: a turn is only ever built whole.
    """
    check_source(source, "collect_turn")
    slug = provider if isinstance(provider, str) else provider.slug
    return Turn.from_events(iter_events(source, provider, **options), slug)


async def acollect_turn(source: Source, provider: Provider | Decoder, **options: Unpack[StreamOptions]) -> Turn:
    """The async twin of ``collect_turn``."""
    check_source(source, "acollect_turn", asynchronous=True)
    events = aiter_events(source, provider, **options)
    slug = provider if isinstance(provider, str) else provider.slug
    return Turn.from_events([item async for item in events], slug)


def _opened_items(source: Source) -> AsyncIterator[Any]:
    """An async source's own iterator (closed by the reader when it stops), or a plain one's
    items as an async generator. A failure to open it is raised by the first read, where
    ``_anext`` reports it as the source's own, as it does a failure to read."""
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
