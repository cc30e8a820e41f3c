"""The async iterators over async and plain sources."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import streamkit
from streamkit import IncompleteStreamError, ToolCall

from .helpers import FIXTURES

DATA = (FIXTURES / "openai_chat" / "text_then_two_calls.sse").read_bytes()


async def drip(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


@pytest.mark.asyncio
async def test_aiter_tool_calls_over_an_async_source() -> None:
    got = [call async for call in streamkit.aiter_tool_calls(drip(DATA, 7), provider="openai_chat")]
    assert got == [
        ToolCall(0, "call_A", "get_weather", {"city": "Paris"}),
        ToolCall(1, "call_B", "get_stock", {"ticker": "AAPL"}),
    ]


@pytest.mark.asyncio
async def test_aiter_events_over_a_plain_source_matches_the_sync_twin() -> None:
    got = [item async for item in streamkit.aiter_events([DATA], "openai_chat")]
    assert got == list(streamkit.iter_events([DATA], "openai_chat"))


@pytest.mark.asyncio
async def test_calls_completed_before_a_cut_are_delivered_then_the_error() -> None:
    cut = DATA[: DATA.index(b'"call_B"')]
    got: list[object] = []
    with pytest.raises(IncompleteStreamError) as info:
        async for call in streamkit.aiter_tool_calls(drip(cut, 5), "openai_chat"):
            got.append(call)  # noqa: PERF401 - the calls before the error are the point
    assert got == []  # OpenAI Chat calls end at finish_reason: none had ended
    assert [c.raw for c in info.value.unfinished] == ['{"city": "Paris"}']


@pytest.mark.asyncio
async def test_source_items_must_be_of_a_known_kind() -> None:
    with pytest.raises(streamkit.UsageError, match=r"item 1 of the source is a builtins\.int: a source yields bytes"):
        async for _ in streamkit.aiter_events([7], "openai_chat"):
            pass
