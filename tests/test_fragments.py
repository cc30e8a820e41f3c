"""``fragments=True``: each call's opening and raw argument pieces, for UIs that stream tool inputs.

The calls themselves are unchanged, and the pieces of a call, joined, are exactly the text it
was parsed from, for every provider and however the bytes were cut.
"""

from __future__ import annotations

from typing import Unpack

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamkit import (
    ArgumentsFragment,
    ArgumentsPreview,
    CallStarted,
    CallState,
    InvalidToolCall,
    StreamError,
    StreamEvent,
    StreamOptions,
    TextDelta,
    ToolCall,
    collect_turn,
    iter_events,
)
from streamkit._normalize import parse_arguments
from streamkit._types import Call, CustomToolCall

from .helpers import FIXTURES, Fixture, fixtures, one_byte, split_at

CALLS = (ToolCall, CustomToolCall, InvalidToolCall)


def values(fixture: Fixture, chunks: list[bytes] | None = None, **options: Unpack[StreamOptions]) -> list[StreamEvent]:
    out: list[StreamEvent] = []
    try:
        out.extend(iter_events(chunks or [fixture.path.read_bytes()], fixture.provider, **options))
    except StreamError as exc:
        out.extend(exc.unfinished)
    return out


@pytest.mark.parametrize("fixture", fixtures(), ids=lambda f: f.case)
def test_fragments_add_events_and_change_nothing_else(fixture: Fixture) -> None:
    plain = values(fixture)
    rich = values(fixture, fragments=True)
    assert [item for item in rich if not isinstance(item, CallStarted | ArgumentsFragment)] == plain


@pytest.mark.parametrize("fixture", fixtures(), ids=lambda f: f.case)
def test_each_call_opens_once_before_its_fragments_which_join_to_its_text(fixture: Fixture) -> None:
    opened: dict[tuple[int, int], CallStarted] = {}
    pieces: dict[tuple[int, int], list[str]] = {}
    for item in values(fixture, fragments=True):
        if isinstance(item, CallStarted):
            key = (item.choice, item.index)
            assert key not in opened
            opened[key] = item
            pieces[key] = []
        elif isinstance(item, ArgumentsFragment):
            pieces[item.choice, item.index].append(item.text)
        elif isinstance(item, CALLS):
            key = (item.choice, item.index)
            start = opened.pop(key)
            assert start.id in (None, item.id)
            assert start.name in (None, item.name)
            joined = "".join(pieces.pop(key))
            if joined:  # text arguments: the pieces are exactly the text the call was read from
                if isinstance(item, InvalidToolCall):
                    assert joined == item.raw
                elif isinstance(item, CustomToolCall):
                    assert joined == item.input
                else:
                    assert parse_arguments(joined)[0] == item.input
    assert not opened  # every call that opened was delivered, valid or not


def test_anthropic_call_opens_then_streams_its_pieces_then_ends() -> None:
    data = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    rich = [item for item in iter_events([data], "anthropic", fragments=True) if not isinstance(item, TextDelta)]
    assert rich[:8] == [
        CallStarted(1, "toolu_A", "get_weather"),
        ArgumentsFragment(1, '{"city": "Pa'),
        ArgumentsFragment(1, 'ris", "unit'),
        ArgumentsFragment(1, 's": "c"}'),
        ToolCall(1, "toolu_A", "get_weather", {"city": "Paris", "units": "c"}),
        CallStarted(2, "toolu_B", "get_stock"),
        ArgumentsFragment(2, '{"ticker": "AAPL"}'),
        ToolCall(2, "toolu_B", "get_stock", {"ticker": "AAPL"}),
    ]


def test_a_whole_call_opens_and_ends_with_no_fragment() -> None:
    data = (FIXTURES / "gemini" / "text_then_two_calls.sse").read_bytes()
    rich = [item for item in iter_events([data], "gemini", fragments=True) if isinstance(item, CallStarted | Call)]
    assert [type(item).__name__ for item in rich] == ["CallStarted", "ToolCall", "CallStarted", "ToolCall"]
    assert rich[:2] == [
        CallStarted(0, None, "get_weather"),
        ToolCall(0, None, "get_weather", {"city": "Paris"}, state={"thoughtSignature": "EqUCAbcd1234"}),
    ]


def test_a_truncated_call_gives_its_pieces_and_then_the_invalid_call() -> None:
    data = (FIXTURES / "openai_responses" / "incomplete_truncated.sse").read_bytes()
    rich = list(iter_events([data], "openai_responses", fragments=True))
    assert rich[:4] == [
        CallStarted(0, "call_A", "write_file"),
        CallState(0, "id", "fc_A"),
        ArgumentsFragment(0, '{"path":"a.txt",'),
        ArgumentsFragment(0, '"text":"lorem ip'),
    ]
    assert isinstance(rich[4], InvalidToolCall)
    assert rich[4].truncated


def test_fragments_and_previews_together() -> None:
    data = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    rich = [
        type(item).__name__
        for item in iter_events([data], "anthropic", fragments=True, previews=True)
        if not isinstance(item, TextDelta)
    ]
    assert rich[:4] == ["CallStarted", "ArgumentsFragment", "ArgumentsPreview", "ArgumentsFragment"]


def test_a_turn_leaves_out_progress_events() -> None:
    data = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    assert collect_turn([data], "anthropic", fragments=True, previews=True) == collect_turn([data], "anthropic")


def test_progress_events_have_short_reprs() -> None:
    assert repr(ArgumentsFragment(0, "x" * 100)) == f"ArgumentsFragment(index=0, text='{'x' * 37}...')"
    assert repr(CallStarted(1, "a", "f")) == "CallStarted(index=1, id='a', name='f', choice=0)"
    assert isinstance(ArgumentsPreview(0, None, None, {}), ArgumentsPreview)


FRAGMENTED = [f for f in fixtures() if f.path.suffix == ".sse"]


@given(fixture=st.sampled_from(FRAGMENTED), cuts=st.lists(st.integers(0, 4096), max_size=8))
def test_the_joined_pieces_do_not_depend_on_how_the_bytes_were_cut(fixture: Fixture, cuts: list[int]) -> None:
    data = fixture.path.read_bytes()

    def joined(chunks: list[bytes]) -> dict[tuple[int, int], str]:
        out: dict[tuple[int, int], str] = {}
        for item in values(fixture, chunks, fragments=True):
            if isinstance(item, ArgumentsFragment):
                out[item.choice, item.index] = out.get((item.choice, item.index), "") + item.text
        return out

    assert joined(split_at(data, cuts)) == joined([data]) == joined(list(one_byte(data)))


#: The index each provider's text carries in a recorded stream: its content block or output item.
TEXT_INDEXES: dict[str, list[int | None]] = {
    "anthropic/thinking_then_call": [2],  # the text block after the thinking block and a call
    "anthropic/text_then_two_calls": [0, 0],
    "bedrock/reasoning_then_tool_use": [1],  # after the reasoning block
    "bedrock/text_then_two_calls": [0, 0],
    "cohere/text_then_two_calls": [None, None],  # Cohere's tool plan has no index
    "openai_responses/reasoning_then_call": [1, 1],  # the message item after the reasoning item
    "openai_responses/text_then_two_calls": [1],
    "gemini/text_then_two_calls": [None, None],
    "mistral/text_then_two_calls": [None],
    "ollama/text_then_two_calls": [None, None],
    "openai_chat/text_then_two_calls": [None],
}


def test_every_provider_has_a_text_index_row() -> None:
    assert {case.split("/")[0] for case in TEXT_INDEXES} == {fixture.provider for fixture in fixtures()}


@pytest.mark.parametrize("case", sorted(TEXT_INDEXES))
def test_text_carries_its_block_or_item_index(case: str) -> None:
    (fixture,) = [fixture for fixture in fixtures() if fixture.case == case]
    texts = [item for item in values(fixture) if isinstance(item, TextDelta)]
    assert [text.index for text in texts] == TEXT_INDEXES[case]
    turn = collect_turn([fixture.path.read_bytes()], fixture.provider)
    joined = [item for item in turn.items if isinstance(item, TextDelta)]
    assert {text.index for text in joined} == set(TEXT_INDEXES[case])  # each stream's text shares one index


def test_a_joined_text_keeps_an_index_only_when_its_pieces_share_it() -> None:
    from streamkit import Turn

    events = [TextDelta("a", index=0), TextDelta("b", index=0), TextDelta("c", index=1)]
    assert Turn.from_events(events, "anthropic").items == (TextDelta("abc"),)
    assert Turn.from_events(events[:2], "anthropic").items == (TextDelta("ab", index=0),)
