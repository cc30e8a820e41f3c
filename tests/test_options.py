"""Typed options: the provider is a ``Literal`` of the slugs, the options are spelled out, and a
typo is a type error and, at run time, a ``UsageError`` at the call, before anything is read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from typing import Any, ClassVar, get_args

import httpx
import pytest

import streamkit
from streamkit import DECODERS, Provider, StreamOptions, UsageError
from streamkit._events import Frame
from streamkit._types import PROVIDERS

ITERATORS: dict[str, Callable[..., Any]] = {
    "iter_events": streamkit.iter_events,
    "aiter_events": streamkit.aiter_events,
    "iter_tool_calls": streamkit.iter_tool_calls,
    "aiter_tool_calls": streamkit.aiter_tool_calls,
    "collect_turn": streamkit.collect_turn,
}


def unread() -> Iterator[bytes]:
    raise AssertionError("the source was read")
    yield b""  # pragma: no cover


def test_the_provider_type_names_every_decoder() -> None:
    assert set(get_args(Provider)) == set(PROVIDERS) == set(DECODERS)


def test_the_options_are_the_assemblers() -> None:
    import inspect

    parameters = inspect.signature(streamkit.Assembler).parameters
    assert set(StreamOptions.__annotations__) == set(parameters) - {"provider", "unknown"}


@pytest.mark.parametrize("name", ITERATORS)
def test_a_misspelt_option_is_a_usage_error_at_the_call(name: str) -> None:
    with pytest.raises(UsageError, match=r"unknown option preview; the options are: early_close, fragments, limits"):
        ITERATORS[name](unread(), "anthropic", preview=True)


@pytest.mark.parametrize("name", ITERATORS)
def test_an_unknown_provider_is_a_usage_error_at_the_call(name: str) -> None:
    with pytest.raises(UsageError, match="unknown provider 'antropic'"):
        ITERATORS[name](unread(), "antropic")


@pytest.mark.parametrize("name", ITERATORS)
def test_a_bad_option_value_is_a_usage_error_at_the_call(name: str) -> None:
    with pytest.raises(UsageError, match="preview_every and preview_growth need previews=True"):
        ITERATORS[name](unread(), "anthropic", preview_every=3)


@pytest.mark.asyncio
async def test_acollect_turn_checks_before_reading() -> None:
    with pytest.raises(UsageError, match="unknown options max_bytes, preview"):
        await streamkit.acollect_turn(unread(), "anthropic", preview=True, max_bytes=1)  # type: ignore[call-arg]


def test_an_httpx_response_is_not_read_when_an_option_is_misspelt() -> None:
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=unread())
    with pytest.raises(UsageError, match="unknown option tool"):
        streamkit.iter_events(response, "anthropic", tool=[])  # type: ignore[call-arg]
    assert not response.is_closed


@pytest.mark.asyncio
async def test_astream_refuses_a_misspelt_option_before_sending() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError("the request was sent")

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        with pytest.raises(UsageError, match="unknown option previws"):
            async with streamkit.astream(client, "anthropic", "http://127.0.0.1:9/v1/messages", previws=True):  # type: ignore[call-arg]
                pass


def test_typos_are_type_errors() -> None:
    """Each ignore below is checked by mypy (strict: an unused ignore is an error), so each line
    stays a type error; at run time each is a ``UsageError`` at the call."""
    with pytest.raises(UsageError):
        streamkit.iter_events(unread(), "anthropic", preview=True)  # type: ignore[call-arg]
    with pytest.raises(UsageError):
        streamkit.iter_tool_calls(unread(), "antropic")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        streamkit.Assembler("open_ai")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        streamkit.collect_turn(unread(), "gemini", fragments=True, limit=1)  # type: ignore[call-arg]


def test_a_misspelt_assembler_option_is_a_usage_error_as_for_the_iterators() -> None:
    with pytest.raises(UsageError, match=r"^unknown option earlyclose; the options are: early_close, fragments"):
        streamkit.Assembler("openai_chat", earlyclose=True)  # type: ignore[arg-type]


ACCEPTED = "an iterable of stream items (bytes chunks, text lines, SSE events, dicts or SDK event objects)"


async def agen() -> AsyncGenerator[bytes, None]:
    yield b""  # pragma: no cover


@pytest.mark.parametrize(
    ("source", "got"),
    [
        (None, "got None"),
        (42, "got int"),
        (
            "data: {}\n\n",
            "got a str: pass [text.encode()], or its lines with their ends (text.splitlines(keepends=True))",
        ),
        (b"data: {}\n\n", "got a bytes: pass [body], a list of chunks"),
        ({"type": "message_start"}, "got a dict: pass [payload], a list of payloads"),
    ],
)
@pytest.mark.parametrize("name", ["iter_events", "iter_tool_calls", "collect_turn"])
def test_a_source_that_is_no_stream_is_a_usage_error_at_the_call(name: str, source: object, got: str) -> None:
    with pytest.raises(UsageError) as info:
        ITERATORS[name](source, "anthropic")
    assert str(info.value) == f"{name} takes {ACCEPTED}, {got}"


def test_an_async_source_for_a_plain_iterator_names_the_async_one() -> None:
    source = agen()
    with pytest.raises(UsageError) as info:
        streamkit.iter_events(source, "anthropic")
    assert str(info.value) == (
        f"iter_events takes {ACCEPTED}, got async_generator; use aiter_events (or its kin) for an async source"
    )
    asyncio.run(source.aclose())


@pytest.mark.parametrize("name", ["aiter_events", "aiter_tool_calls"])
def test_an_async_iterator_refuses_none_at_the_call(name: str) -> None:
    with pytest.raises(UsageError) as info:
        ITERATORS[name](None, "anthropic")
    assert str(info.value) == f"{name} takes an async iterable or {ACCEPTED}, got None"


def test_the_callers_own_exception_passes_through_unchanged() -> None:
    mistake = KeyError("my_tool")

    def source() -> Iterator[bytes]:
        yield b"event: message_start\n"
        raise mistake

    with pytest.raises(KeyError) as info:
        list(streamkit.iter_events(source(), "anthropic"))
    assert info.value is mistake


@pytest.mark.asyncio
async def test_the_callers_own_exception_passes_through_an_async_source_unchanged() -> None:
    mistake = KeyError("my_tool")

    async def source() -> AsyncIterator[bytes]:
        yield b"event: message_start\n"
        raise mistake

    with pytest.raises(KeyError) as info:
        [item async for item in streamkit.aiter_events(source(), "anthropic")]
    assert info.value is mistake


def test_an_exception_that_carries_an_error_body_is_the_providers() -> None:
    class APIError(Exception):  # as an SDK's: the error body it was raised for
        body: ClassVar = {"error": {"type": "overloaded_error", "message": "Overloaded"}}

    def source() -> Iterator[bytes]:
        yield b"event: ping\n"
        raise APIError("Overloaded")

    with pytest.raises(streamkit.ProviderError) as info:
        list(streamkit.iter_events(source(), "anthropic"))
    assert str(info.value) == "anthropic reported an error overloaded_error: Overloaded"


@pytest.mark.parametrize("method", ["feed", "feed_frame", "feed_payload"])
def test_an_assembler_fed_after_flush_raises(method: str) -> None:
    assembler = streamkit.Assembler("anthropic")
    assembler.feed(b'event: message_stop\ndata: {"type": "message_stop"}\n\n')
    assert assembler.flush() == []
    argument: Any = {"feed": b"", "feed_frame": Frame(None, "{}"), "feed_payload": {}}[method]
    with pytest.raises(UsageError) as info:
        getattr(assembler, method)(argument)
    assert str(info.value) == (
        f"Assembler.{method} was called after flush(): the input already ended; one Assembler reads one"
        " response, so make a new one for the next"
    )
