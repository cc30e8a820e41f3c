"""The iterators over a response or any other source: ``iter_events`` and its kin.

They accept an ``httpx.Response`` or ``httpx2.Response`` opened with ``client.stream(...)``
beside every source the pipeline takes. A response is checked and its body read by
``_response``; the errors raised while its body is decoded are scrubbed of its request's
secrets (``_redact``), and the pipeline adds the calls still open when reading fails.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, cast

from . import _observe, _pipeline
from ._assembler import StreamOptions
from ._errors import StreamkitError
from ._libraries import response_library
from ._types import Call, Provider
from .providers import Decoder

if TYPE_CHECKING:
    from ._response import Response
    from ._turn_types import StreamEvent, Turn

__all__ = (
    "acollect_turn",
    "aiter_events",
    "aiter_tool_calls",
    "collect_turn",
    "iter_events",
    "iter_tool_calls",
)


def _opened(source: Any, provider: str | Decoder, *, sync: bool) -> tuple[Any, list[str]]:
    """What the pipeline reads from ``source``, and the secrets its errors are scrubbed of.

    A response gives its body's bytes, checked first, and its request's secrets; any other
    source is read as it is, with none.
    """
    if response_library(source) is None:
        return source, []
    from . import _redact, _response  # a response's machinery, loaded by the first response

    read = _response.read_body if sync else _response.aread_body
    try:
        secrets = _redact.secrets(source.request)
    except RuntimeError:  # a response built by hand, without a request: no secrets either
        secrets = []
    return read(source, _response.decoder_of(provider), None, checked=False), secrets


T = TypeVar("T")


def _made(make: Callable[[], T], source: Any, secrets: list[str]) -> T:
    """``make()``, whose stream telemetry then knows as the answer to ``source``'s request."""
    if _observe.watcher() is None or response_library(source) is None:
        return make()
    try:
        request = source.request
    except RuntimeError:  # a response built by hand, without a request
        return make()
    return _observe.within(_observe.Request.of(request, secrets), make)


def _iterated(
    pipe: Callable[..., Iterator[T]], source: Any, provider: Provider | Decoder, options: StreamOptions
) -> Iterator[T]:
    """``pipe`` over what ``source`` opens to: the sync iterators differ only in the pipeline's."""
    items, secrets = _opened(source, provider, sync=True)
    out = _made(lambda: pipe(items, provider, **options), source, secrets)
    if not secrets:
        return out
    from . import _redact

    return _redact.scrubbed(out, secrets)


def _aiterated(
    pipe: Callable[..., AsyncIterator[T]], source: Any, provider: Provider | Decoder, options: StreamOptions
) -> AsyncIterator[T]:
    """The async twin of ``_iterated``: the pipeline's async iterators are async generators."""
    items, secrets = _opened(source, provider, sync=False)
    out = cast(AsyncGenerator[T, None], _made(lambda: pipe(items, provider, **options), source, secrets))
    if not secrets:
        return out
    from . import _redact

    return _redact.ascrubbed(out, secrets)


def _scrub_error(error: StreamkitError, secrets: list[str]) -> None:
    if secrets:
        from . import _redact

        _redact.scrub_error(error, secrets)


def iter_events(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Iterator[StreamEvent]:
    """Yield text deltas, each call the moment it completes, and last the ``ResponseEnd``.

    ``source`` is an ``httpx.Response`` or ``httpx2.Response`` opened with ``client.stream(...)``,
    or any iterable of bytes chunks, text lines, SSE events, dicts or SDK event objects.
    """
    return _iterated(_pipeline.iter_events, source, provider, options)


def aiter_events(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> AsyncIterator[StreamEvent]:
    """The async twin of ``iter_events``; ``source`` may be async or plain."""
    return _aiterated(_pipeline.aiter_events, source, provider, options)


def iter_tool_calls(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Iterator[Call]:
    """Yield each call, valid or not, the moment its end marker arrives."""
    return _iterated(_pipeline.iter_tool_calls, source, provider, options)


def aiter_tool_calls(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> AsyncIterator[Call]:
    """The async twin of ``iter_tool_calls``."""
    return _aiterated(_pipeline.aiter_tool_calls, source, provider, options)


def collect_turn(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Turn:
    """Read a whole response and return its ``Turn``: text, reasoning, server tools and calls."""
    items, secrets = _opened(source, provider, sync=True)
    try:
        return _made(lambda: _pipeline.collect_turn(items, provider, **options), source, secrets)
    except StreamkitError as exc:
        _scrub_error(exc, secrets)
        raise


async def acollect_turn(
    source: _pipeline.Source | Response, provider: Provider | Decoder, **options: Unpack[StreamOptions]
) -> Turn:
    """The async twin of ``collect_turn``."""
    items, secrets = _opened(source, provider, sync=False)
    try:
        return await _pipeline.acollect_turn(items, provider, **options)
    except StreamkitError as exc:
        _scrub_error(exc, secrets)
        raise
