"""The drivers hand each read of a bytes source to the hot read themselves, keeping every rule.

``iter_events`` and ``aiter_events`` (and their kin) give the hot read a bytes read before the
source adapter and ``Assembler.feed`` see it. What they give must be exactly what an
``Assembler`` fed the same reads gives, at any split; a read the hot read turns down goes to the
general path once; an item of another kind is still a usage error naming its number; and the
source's own exception still passes through unchanged, or is translated, as on the general path.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streamkit
from benchmarks.turns import Turn, make_turn, reads
from streamkit import InvalidToolCall, ToolCall, TransportError, UsageError
from streamkit._assembler import Assembler
from streamkit._pipeline import _aevents_of, _events_of

from .helpers import split_at

WIRES = ("openai_chat", "anthropic")


def fed(chunks: Iterable[bytes], wire: str) -> list[Any]:
    """What an ``Assembler`` fed ``chunks`` one by one gives: the reference."""
    assembler = Assembler(wire)  # type: ignore[arg-type]  # one of WIRES
    out: list[Any] = []
    for chunk in chunks:
        out += assembler.feed(chunk)
    return out + assembler.flush()


def counted(assembler: Assembler) -> list[int]:
    """Count the reads that reach the general path from now on."""
    calls = [0]
    general = assembler._general

    def counting(data: bytes) -> list[Any]:
        calls[0] += 1
        return general(data)

    assembler._general = counting  # type: ignore[method-assign]
    return calls


async def trickle(chunks: Iterable[Any]) -> AsyncIterator[Any]:
    for chunk in chunks:
        await asyncio.sleep(0)
        yield chunk


def driven(chunks: list[bytes], wire: str, *, asynchronous: bool, calls: bool = False) -> tuple[list[Any], int]:
    """What a driver gives over ``chunks``, and how many reads reached the general path."""
    assembler = Assembler(wire)  # type: ignore[arg-type]  # one of WIRES
    general = counted(assembler)
    if not asynchronous:
        return list(_events_of(chunks, assembler)), general[0]

    async def everything() -> list[Any]:
        return [value async for value in _aevents_of(trickle(chunks), assembler, calls=calls)]

    return asyncio.run(everything()), general[0]


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("asynchronous", [False, True])
@pytest.mark.parametrize("per_read", [1, 3])
def test_a_turn_read_by_the_drivers_is_what_the_assembler_gives(wire: str, asynchronous: bool, per_read: int) -> None:
    turn = make_turn(wire, 1024, 2)
    chunks = reads(turn, per_read)
    got, general = driven(chunks, wire, asynchronous=asynchronous)
    assert got == fed(chunks, wire)
    assert [value.input for value in got if isinstance(value, ToolCall)] == list(turn.arguments)
    # Of about 400 events, the boundary events, the first fragments and the probes: no more
    # than 20 reads reach the general path, each once.
    assert len(chunks) > 100
    assert general <= 20


@pytest.mark.parametrize("wire", WIRES)
def test_only_the_calls_come_out_of_the_calls_driver(wire: str) -> None:
    turn = make_turn(wire, 100, 3)
    got, _ = driven(reads(turn, 1), wire, asynchronous=True, calls=True)
    assert got == [value for value in fed(reads(turn, 1), wire) if isinstance(value, ToolCall | InvalidToolCall)]
    assert [value.input for value in got] == list(turn.arguments)


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("per_read", [1, 3])
def test_an_assembler_for_the_calls_alone_makes_no_text(wire: str, per_read: int) -> None:
    # The text is still read (the hot read and the general path alike), and no TextDelta made.
    turn = make_turn(wire, 100, 2)
    assembler = Assembler(wire)  # type: ignore[arg-type]  # one of WIRES
    assembler.calls_only()
    got: list[Any] = []
    for chunk in reads(turn, per_read):
        got += assembler.feed(chunk)
    got += assembler.flush()
    everything = fed(reads(turn, per_read), wire)
    assert got == [value for value in everything if not isinstance(value, streamkit.TextDelta)]
    assert len(everything) - len(got) >= 30
    assert list(streamkit.iter_tool_calls(reads(turn, per_read), wire)) == got[:-1]  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(
    wire=st.sampled_from(WIRES),
    cuts=st.lists(st.integers(min_value=1, max_value=6000), max_size=60),
    asynchronous=st.booleans(),
)
def test_any_split_gives_what_the_assembler_gives(wire: str, cuts: list[int], asynchronous: bool) -> None:
    turn = make_turn(wire, 100, 2, serial=3)
    chunks = split_at(turn.data, sorted({*cuts, *_event_ends(turn)}))
    got, _ = driven(chunks, wire, asynchronous=asynchronous)
    assert got == fed(chunks, wire)


def _event_ends(turn: Turn) -> Iterator[int]:
    """The offsets where the turn's events end: each event a read, unless a cut falls inside."""
    end = 0
    for event in turn.events:
        end += len(event)
        yield end


@pytest.mark.parametrize("asynchronous", [False, True])
def test_an_item_of_another_kind_after_hot_reads_is_named_by_its_number(asynchronous: bool) -> None:
    chunks: list[Any] = reads(make_turn("openai_chat", 1024, 1), 1)
    chunks.insert(200, "data: {}")
    with pytest.raises(UsageError, match=r"^item 201 of the source is text, but the source began with bytes: one"):
        driven(chunks, "openai_chat", asynchronous=asynchronous)


@pytest.mark.parametrize("asynchronous", [False, True])
def test_bytes_like_reads_after_hot_reads_are_bytes(asynchronous: bool) -> None:
    chunks = reads(make_turn("anthropic", 1024, 2), 1)
    mixed: list[Any] = [bytearray(chunk) if number % 5 == 0 else chunk for number, chunk in enumerate(chunks)]
    got, _ = driven(mixed, "anthropic", asynchronous=asynchronous)
    assert got == fed(chunks, "anthropic")


class Mine(Exception):
    """The caller's own exception, raised in its generator."""


def failing(chunks: list[bytes], at: int, exc: Exception) -> Iterator[bytes]:
    yield from chunks[:at]
    raise exc


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_callers_own_exception_mid_call_passes_through_unchanged(asynchronous: bool) -> None:
    chunks = reads(make_turn("openai_chat", 1024, 1), 1)
    mine = Mine("the caller's")
    source = failing(chunks, 200, mine)
    with pytest.raises(Mine) as info:
        if asynchronous:

            async def everything() -> list[Any]:
                return [value async for value in streamkit.aiter_events(trickle(source), "openai_chat")]

            asyncio.run(everything())
        else:
            list(streamkit.iter_events(source, "openai_chat"))
    assert info.value is mine
    assert mine.__cause__ is None
    assert mine.__context__ is None


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_failure_to_read_mid_call_is_translated_with_the_open_call(asynchronous: bool) -> None:
    chunks = reads(make_turn("anthropic", 1024, 1, serial=0), 1)
    inside = next(at for at, chunk in enumerate(chunks) if b"input_json_delta" in chunk) + 2  # the call open
    cause = httpx.ReadError("connection reset")
    source = failing(chunks, inside, cause)
    got: list[Any] = []
    with pytest.raises(TransportError) as info:
        if asynchronous:

            async def everything() -> None:
                got.extend([value async for value in streamkit.aiter_events(trickle(source), "anthropic")])

            asyncio.run(everything())
        else:
            got.extend(streamkit.iter_events(source, "anthropic"))
    assert str(info.value) == "reading the stream failed: ReadError: connection reset"
    assert info.value.__cause__ is cause
    assert [(call.index, call.name) for call in info.value.unfinished] == [(1, "append_note")]
