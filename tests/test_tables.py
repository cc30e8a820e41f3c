"""The two tables, walked as h2 and h11 walk their state machines: from any history, every
(state, event) pair either is the table's transition, or is refused with the typed error that
names the state and the event; a rule on values (an id that changes, a part a block has not)
refuses only with its own typed error. Never another exception, never a state the table does
not give.

Each table is walked twice: exhaustively over every sequence of a few events (which must reach
every pair of the table, or the walk proves nothing), and over longer random streams.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamkit import ProviderProtocolError
from streamkit._accumulator import CALL_EVENTS, DELIVERED, ENDED, OPEN, STATES, TRANSITIONS, Accumulator
from streamkit._events import (
    AnomalyNoted,
    ArgumentsDelta,
    ArgumentsFinal,
    ArgumentsRepeated,
    ArgumentsValue,
    BlockDelta,
    BlockEnded,
    BlockStarted,
    CallDetail,
    CallDisplaced,
    CallEnded,
    CallEvent,
    CallFollowed,
    CallOpened,
    CallReceived,
    RawCall,
    ResponseEnded,
    TurnEvent,
)
from streamkit._normalize import normalize, stops_mid_json
from streamkit._turn import BLOCK_EVENTS, TurnStage
from streamkit._turn import STATES as BLOCK_STATES
from streamkit._turn import TRANSITIONS as BLOCK_TRANSITIONS

Pair = tuple[str, type]

# -- a call's life ---------------------------------------------------------------------------------


def feed_call_events(events: Sequence[CallEvent], *, sequential: bool, early_close: bool, seen: set[Pair]) -> None:
    """Feed ``events`` until the first error, checking each against ``TRANSITIONS``."""
    acc = Accumulator("t", sequential=sequential, early_close=early_close)
    for event in events:
        index, choice = event.index, event.choice
        kind = type(event)
        before = acc.state_of(index, choice)
        after = TRANSITIONS[before].get(kind)
        seen.add((before, kind))
        try:
            out = acc.feed(event)
        except ProviderProtocolError as error:
            assert (error.provider, error.index, error.event) == ("t", index, kind.__name__), error
            if after is None:
                assert error.state == before
            else:  # a rule on values: rule 2 (identity), 8 (ids), 10 (a key again) or a second value
                assert error.state is None or (before, kind) in ((DELIVERED, CallOpened), (ENDED, CallOpened)), error
            return
        assert after is not None, f"{kind.__name__} in {before} was taken, but the table has no such pair"
        empty = isinstance(event, ArgumentsDelta | ArgumentsRepeated) and not event.text
        assert acc.state_of(index, choice) == (before if empty else after)  # rule 3: "" carries nothing
        held(acc, out)
    ended = acc.feed(ResponseEnded())  # the end of the stream leaves no call open
    assert ended[-1] == ResponseEnded()
    assert all(acc.state_of(index, choice) != OPEN for choice, index in itertools.product((0, 1), (0, 1)))


def held(acc: Accumulator, out: Sequence[object]) -> None:
    """What the composer does with the calls ``acc`` handed out: one whose end marker came before
    its stop reason, with text that stops mid-JSON, goes back to wait (rule 11)."""
    for raw in out:
        if isinstance(raw, RawCall) and raw.stop_pending and stops_mid_json(normalize(raw)):
            acc.hold(raw)
            assert acc.state_of(raw.index, raw.choice) == ENDED


#: The alphabet of the exhaustive walk: every call event, for call 0 and for a second call of its
#: choice (which follows it under the sequential order), with values that make each rule fire.
CALL_ALPHABET: list[CallEvent] = [
    CallOpened(0, "a", "f"),
    CallOpened(0, "b", "f"),
    CallOpened(1, "c", "g"),
    ArgumentsDelta(0, '{"x":'),
    ArgumentsDelta(0, ""),
    ArgumentsRepeated(0, '{"x":'),
    ArgumentsValue(0, {"x": 1}),
    ArgumentsFinal(0, '{"x": 1}'),
    CallEnded(0),
    CallReceived(0, "a", "f", {"x": 1}),
    CallDetail(0, "item", "fc_1"),
    AnomalyNoted(0, "id_repeated"),
    CallFollowed(0),
    CallDisplaced(0),
]


def test_every_short_stream_of_call_events_keeps_to_the_table() -> None:
    seen: set[Pair] = set()
    for length in range(1, 5):
        for events in itertools.product(CALL_ALPHABET, repeat=length):
            for sequential, early_close in ((False, False), (True, False), (True, True)):
                feed_call_events(events, sequential=sequential, early_close=early_close, seen=seen)
    assert seen == {(state, kind) for state in STATES for kind in CALL_EVENTS}  # every pair was tried


_INDEX = st.integers(0, 1)
_CHOICE = st.integers(0, 1)
_ID = st.sampled_from([None, "a", "b", "c"])
_NAME = st.sampled_from([None, "f", "g"])
_TEXT = st.sampled_from(["", '{"x":', " 1}", '{"x": 1}'])
_VALUE = st.sampled_from([{"x": 1}, {"y": 2}, None])
CALL_EVENT = st.one_of(
    st.builds(CallOpened, _INDEX, _ID, _NAME, _CHOICE),
    st.builds(ArgumentsDelta, _INDEX, _TEXT, _CHOICE),
    st.builds(ArgumentsRepeated, _INDEX, _TEXT, _CHOICE),
    st.builds(ArgumentsValue, _INDEX, _VALUE, _CHOICE),
    st.builds(ArgumentsFinal, _INDEX, st.one_of(st.none(), _TEXT), _CHOICE),
    st.builds(CallEnded, _INDEX, _CHOICE),
    st.builds(CallReceived, _INDEX, _ID, _NAME, _VALUE, _CHOICE),
    st.builds(CallDetail, _INDEX, st.just("item"), st.sampled_from(["fc_1", "fc_2"]), _CHOICE),
    st.builds(AnomalyNoted, _INDEX, st.just("id_repeated"), _CHOICE),
    st.builds(CallFollowed, _INDEX, _CHOICE),
    st.builds(CallDisplaced, _INDEX, _CHOICE),
)


@settings(max_examples=400)
@given(st.lists(CALL_EVENT, max_size=30), st.booleans(), st.booleans())
def test_any_stream_of_call_events_keeps_to_the_table(events: list[CallEvent], sequential: bool, early: bool) -> None:
    feed_call_events(events, sequential=sequential, early_close=sequential and early, seen=set())


# -- a block's life --------------------------------------------------------------------------------


def feed_block_events(events: Sequence[TurnEvent], seen: set[Pair]) -> None:
    """Feed ``events`` until the first error, checking each against the blocks' table."""
    stage = TurnStage("t")
    for event in events:
        assert isinstance(event, BlockStarted | BlockDelta | BlockEnded)
        kind = type(event)
        before = stage.state_of(event.index, event.choice)
        after = BLOCK_TRANSITIONS[before].get(kind)
        seen.add((before, kind))
        try:
            out = stage.feed(event)
        except ProviderProtocolError as error:
            assert (error.provider, error.index, error.event) == ("t", event.index, kind.__name__), error
            # a missing pair names the state; a rule on values (a part the block has not, an input
            # that is not JSON) names none
            assert error.state == (before if after is None else None), error
            return
        assert after is not None, f"{kind.__name__} in {before} was taken, but the table has no such pair"
        assert stage.state_of(event.index, event.choice) == after
        assert len(out) == (1 if (before, after) == ("OPEN", "DELIVERED") else 0)  # handed out at its end, once
    try:
        stage.close()
    except ProviderProtocolError as error:  # a server tool's input cut off: not JSON
        assert error.state is None and error.event == "BlockEnded"


BLOCK_ALPHABET: list[TurnEvent] = [
    BlockStarted(0, "thinking", {}),
    BlockStarted(0, "server_tool_use", {"id": "s", "name": "web_search"}),
    BlockStarted(0, "essay", {}),
    BlockDelta(0, "text", "hm"),
    BlockDelta(0, "signature", "c2ln"),
    BlockDelta(0, "input", "{}"),
    BlockDelta(0, "input", "{"),
    BlockEnded(0),
]


def test_every_short_stream_of_block_events_keeps_to_the_table() -> None:
    seen: set[Pair] = set()
    for length in range(1, 5):
        for events in itertools.product(BLOCK_ALPHABET, repeat=length):
            feed_block_events(events, seen)
    assert seen == {(state, kind) for state in BLOCK_STATES for kind in BLOCK_EVENTS}


BLOCK_EVENT = st.one_of(
    st.builds(BlockStarted, _INDEX, st.sampled_from(["thinking", "server_tool_use"]), st.just({}), _CHOICE),
    st.builds(BlockDelta, _INDEX, st.sampled_from(["text", "signature", "input"]), _TEXT, _CHOICE),
    st.builds(BlockEnded, _INDEX, _CHOICE),
)


@settings(max_examples=400)
@given(st.lists(BLOCK_EVENT, max_size=30))
def test_any_stream_of_block_events_keeps_to_the_table(events: list[TurnEvent]) -> None:
    feed_block_events(events, seen=set())


def test_a_pair_the_table_lacks_is_refused_even_where_a_handler_would_take_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk fails when the table and the handlers disagree: drop one pair from the table,
    and the event it allowed is refused with the error naming that state."""
    monkeypatch.setitem(TRANSITIONS, OPEN, {k: v for k, v in TRANSITIONS[OPEN].items() if k is not CallEnded})
    acc = Accumulator("t")
    acc.feed(CallOpened(0, "a", "f"))
    with pytest.raises(ProviderProtocolError) as info:
        acc.feed(CallEnded(0))
    assert (info.value.state, info.value.event) == (OPEN, "CallEnded")
