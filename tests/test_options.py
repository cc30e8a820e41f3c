"""Typed options: the provider is a ``Literal`` of the slugs, the options are spelled out, and a
typo is a type error and, at run time, a ``UsageError`` at the call, before anything is read."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, get_args

import httpx
import pytest

import streamkit
from streamkit import DECODERS, Provider, StreamOptions, UsageError
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
    assert set(StreamOptions.__annotations__) == set(parameters) - {"provider"}


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
