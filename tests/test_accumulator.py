"""The accumulator's rules: one delivery per call, nothing appended where it does not belong."""

from __future__ import annotations

from typing import Any

import pytest

from streamkit import LimitExceededError, Limits, ProviderError, ProviderProtocolError
from streamkit._accumulator import CALL_EVENTS, STATES, TRANSITIONS, Accumulator
from streamkit._events import (
    AnomalyNoted,
    ArgumentsDelta,
    ArgumentsFinal,
    ArgumentsRepeated,
    ArgumentsValue,
    CallDetail,
    CallDisplaced,
    CallEnded,
    CallFollowed,
    CallOpened,
    CallReceived,
    ErrorReceived,
    Event,
    RawCall,
    ResponseEnded,
    StopReceived,
    TextReceived,
    UsageReceived,
)

from . import helpers


def run(*events: Event) -> list[object]:
    acc = Accumulator("test")
    out: list[object] = []
    for event in events:
        out += acc.feed(event)
    return out


def test_fragments_join_once_at_the_end_marker() -> None:
    acc = Accumulator("test")
    assert acc.feed(CallOpened(1, "c1", "f")) == ()
    assert acc.feed(ArgumentsDelta(1, '{"a"')) == ()
    assert acc.feed(ArgumentsDelta(1, ": 1}")) == ()
    assert list(acc.feed(CallEnded(1))) == [RawCall(1, "c1", "f", '{"a": 1}')]


def test_a_call_without_fragments_has_no_arguments() -> None:
    assert run(CallOpened(0, "c", "f"), CallEnded(0)) == [RawCall(0, "c", "f", None)]


def test_whole_call_is_delivered_at_once() -> None:
    assert run(CallReceived(2, "c", "f", {"x": 1})) == [RawCall(2, "c", "f", {"x": 1})]


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ([ArgumentsDelta(0, "{")], "never started"),
        ([CallEnded(0)], "never started"),
        ([CallOpened(0, "c", "f"), CallEnded(0), ArgumentsDelta(0, "}")], "already delivered"),
        ([CallReceived(0, "c", "f", {}), CallReceived(0, "d", "f", {})], "already delivered"),
        ([CallOpened(0, "c", "f"), CallOpened(0, "d", "f")], "call id changed from 'c' to 'd'"),
        ([CallOpened(0, "c", "f"), CallOpened(0, None, "g")], "tool name changed from 'f' to 'g'"),
        ([CallOpened(0, "c", "f"), CallEnded(0), CallOpened(1, "c", "f")], "call id 'c' was already used"),
        ([CallOpened(0, "c", "f"), ArgumentsValue(0, {}), ArgumentsDelta(0, "{}")], "after a whole arguments"),
        ([CallOpened(0, "c", "f"), ArgumentsDelta(0, "{}"), ArgumentsValue(0, {})], "after text fragments"),
        ([CallOpened(0, "c", "f"), ArgumentsValue(0, {"a": 1}), ArgumentsValue(0, {"a": 2})], "two different"),
    ],
)
def test_illegal_sequences_are_protocol_errors(events: list[Event], message: str) -> None:
    with pytest.raises(ProviderProtocolError, match=message) as info:
        run(*events)
    assert info.value.provider == "test"
    assert info.value.index is not None


def test_identity_is_set_once_never_concatenated() -> None:
    out = run(
        CallOpened(0, None, None),
        CallOpened(0, "c", "get_weather"),
        CallOpened(0, "c", "get_weather"),
        ArgumentsDelta(0, "{}"),
        CallEnded(0),
    )
    assert out == [RawCall(0, "c", "get_weather", "{}", anomalies=("id_repeated", "name_repeated"))]


def test_a_resent_copy_of_the_arguments_is_dropped_only_when_equal() -> None:
    resent = run(
        CallOpened(0, "c", "f"),
        ArgumentsDelta(0, '{"a":'),
        ArgumentsDelta(0, " 1}"),
        ArgumentsRepeated(0, '{"a": 1}'),
        CallEnded(0),
    )
    assert resent == [RawCall(0, "c", "f", '{"a": 1}', anomalies=("arguments_resent",))]
    tail = run(CallOpened(0, "c", "f"), ArgumentsDelta(0, '{"a":'), ArgumentsRepeated(0, " 1}"), CallEnded(0))
    assert tail == [RawCall(0, "c", "f", '{"a": 1}')]


def test_stop_closes_only_its_choice() -> None:
    out = run(
        CallOpened(0, "a", "f", 0),
        CallOpened(0, "b", "f", 1),
        ArgumentsDelta(0, "{}", 1),
        StopReceived("tool_calls", False, 1),
    )
    assert out == [RawCall(0, "b", "f", "{}", choice=1)]


def test_a_cutting_stop_marks_open_calls_truncated() -> None:
    out = run(CallOpened(0, "a", "f"), ArgumentsDelta(0, '{"x'), StopReceived("length", True))
    assert out == [RawCall(0, "a", "f", '{"x', truncated=True)]


def test_end_of_stream_closes_open_calls_as_truncated() -> None:
    acc = Accumulator("test")
    acc.feed(CallOpened(0, "a", "f"))
    acc.feed(UsageReceived({"in": 1}))
    acc.feed(UsageReceived({"out": 2}))
    assert list(acc.feed(ResponseEnded())) == [RawCall(0, "a", "f", None, truncated=True), ResponseEnded()]
    assert acc.finished and acc.usage == {"in": 1, "out": 2}


def test_error_event_raises_and_open_calls_can_be_drained() -> None:
    acc = Accumulator("test")
    acc.feed(CallOpened(0, "a", "f"))
    acc.feed(ArgumentsDelta(0, '{"q'))
    with pytest.raises(ProviderError) as info:
        acc.feed(ErrorReceived("overloaded_error", "Overloaded"))
    assert (info.value.type, info.value.message) == ("overloaded_error", "Overloaded")
    assert acc.drain_open() == [RawCall(0, "a", "f", '{"q', truncated=True)]


def test_anomaly_noted_before_start_lands_on_the_call() -> None:
    out = run(AnomalyNoted(4, "index_reused"), CallOpened(4, "a", "f"), CallEnded(4))
    assert out == [RawCall(4, "a", "f", None, anomalies=("index_reused",))]


def test_text_passes_through() -> None:
    assert run(TextReceived("hi", 1)) == [TextReceived("hi", 1)]


def test_cost_is_linear_in_fragments() -> None:
    acc = Accumulator("test")
    acc.feed(CallOpened(0, "a", "f"))
    for _ in range(100_000):
        acc.feed(ArgumentsDelta(0, "x"))
    (raw,) = acc.feed(CallEnded(0))
    assert isinstance(raw, RawCall) and raw.arguments == "x" * 100_000


def test_usage_is_merged_in_place_never_copied_per_event() -> None:
    # Copying the merged usage on every event cost the square of its size (8,000 chunks of
    # 1.3 MiB took 12 s). Counted, not timed: the keys of the merged dict are never listed again.
    class Counted(dict[str, int]):
        listed = 0

        def keys(self) -> Any:
            Counted.listed += 1
            return super().keys()

        def __iter__(self) -> Any:
            Counted.listed += 1
            return super().__iter__()

    acc = Accumulator("test")
    given = {"input": 1}
    acc.feed(UsageReceived(given))
    merged = acc.usage
    for n in range(1000):
        acc.feed(UsageReceived(Counted({f"k{n}": n})))
    assert acc.usage is merged and given == {"input": 1}  # one dict, never the event's own
    assert merged == {"input": 1, **{f"k{n}": n for n in range(1000)}}
    assert Counted.listed <= 1000  # each event's own keys, once


# -- the table, walked pair by pair ----------------------------------------------------------------

#: Events that bring call 0 into each state of the table.
_INTO: dict[str, list[Event]] = {
    "IDLE": [],
    "OPEN": [CallOpened(0, "c", "f")],
    "TEXT": [CallOpened(0, "c", "f"), ArgumentsDelta(0, '{"a"')],
    "VALUE": [CallOpened(0, "c", "f"), ArgumentsValue(0, {"a": 1})],
    "FOLLOWED": [CallOpened(0, "c", "f"), ArgumentsDelta(0, '{"a"'), CallFollowed(0)],
    "ENDED": [CallOpened(0, "c", "f"), ArgumentsDelta(0, '{"a"'), CallEnded(0)],  # then held (rule 11)
    "DELIVERED": [CallOpened(0, "c", "f"), CallEnded(0)],
}


def into(state: str) -> Accumulator:
    """An accumulator with call 0 in ``state``: for ENDED, its text stopping mid-JSON is handed
    back to wait for the stop reason, as the composer does."""
    acc = Accumulator("test")
    for event in _INTO[state]:
        out = acc.feed(event)
    if state == "ENDED":
        [raw] = out
        assert isinstance(raw, RawCall) and raw.stop_pending
        acc.hold(raw)
    return acc


#: One event of each type for call 0, consistent with the events above where it is legal.
_SAMPLES: dict[type, Event] = {
    CallOpened: CallOpened(0, "c", "f"),
    ArgumentsDelta: ArgumentsDelta(0, ": 1}"),
    ArgumentsRepeated: ArgumentsRepeated(0, ": 1}"),
    ArgumentsValue: ArgumentsValue(0, {"a": 1}),
    ArgumentsFinal: ArgumentsFinal(0, '{"a": 1}'),
    CallEnded: CallEnded(0),
    CallReceived: CallReceived(0, "c", "f", {"a": 1}),
    CallDetail: CallDetail(0, "id", "fc_1"),
    AnomalyNoted: AnomalyNoted(0, "id_repeated"),
    CallFollowed: CallFollowed(0),
    CallDisplaced: CallDisplaced(0),
}
#: Where a state takes an event only with other values: a delivered key starts again only as a
#: new call, with a new id (rule 10).
_SAMPLES_IN: dict[tuple[str, type], Event] = {
    ("DELIVERED", CallOpened): CallOpened(0, "c2", "f"),
    ("ENDED", CallOpened): CallOpened(0, "c2", "f"),
}


def test_the_table_names_every_state_and_only_call_events() -> None:
    assert set(TRANSITIONS) == set(STATES) == set(_INTO)
    assert set(_SAMPLES) == set(CALL_EVENTS)
    for row in TRANSITIONS.values():
        assert set(row) <= set(CALL_EVENTS) and set(row.values()) <= set(STATES)


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("kind", CALL_EVENTS, ids=lambda kind: kind.__name__)
def test_every_pair_is_the_tables_transition_or_the_typed_error_naming_both(state: str, kind: type) -> None:
    acc = into(state)
    assert acc.state_of(0) == state
    after = TRANSITIONS[state].get(kind)
    if after is None:
        with pytest.raises(ProviderProtocolError) as info:
            acc.feed(_SAMPLES[kind])
        error = info.value
        assert (error.provider, error.index, error.event, error.state) == ("test", 0, kind.__name__, state)
        assert str(error).startswith(f"test, event '{kind.__name__}', call index 0: not allowed in state {state}: ")
    else:
        acc.feed(_SAMPLES_IN.get((state, kind), _SAMPLES[kind]))
        assert acc.state_of(0) == after


def test_an_empty_fragment_carries_nothing_where_the_call_takes_fragments() -> None:
    acc = Accumulator("test", fragments=True)
    assert acc.feed(CallOpened(0, "c", "f")) == (CallOpened(0, "c", "f"),)
    assert acc.feed(ArgumentsDelta(0, "")) == ()  # not handed on as a fragment either
    assert acc.state_of(0) == "OPEN"
    assert list(acc.feed(CallEnded(0))) == [RawCall(0, "c", "f", None)]  # no text: no arguments
    with pytest.raises(ProviderProtocolError, match="not allowed in state DELIVERED"):
        acc.feed(ArgumentsDelta(0, ""))  # where the call takes none, refused as any fragment is


def test_a_repeated_end_marker_changes_nothing_and_is_listed_on_the_response() -> None:
    acc = Accumulator("test")
    acc.feed(CallOpened(0, "c", "f"))
    assert list(acc.feed(CallEnded(0))) == [RawCall(0, "c", "f", None)]
    assert list(acc.feed(CallEnded(0))) == []
    assert acc.anomalies == ["end_repeated"]


@pytest.mark.parametrize(
    ("events", "arguments", "anomalies"),
    [
        pytest.param([ArgumentsDelta(0, "{}"), ArgumentsFinal(0, "{}")], "{}", (), id="equal"),
        pytest.param(
            [ArgumentsDelta(0, "{}"), ArgumentsFinal(0, "{ }")], "{}", ("final_arguments_differ",), id="differ"
        ),
        pytest.param([ArgumentsFinal(0, '{"a": 1}')], '{"a": 1}', ("arguments_in_done",), id="in-done"),
        pytest.param([ArgumentsFinal(0, "")], None, (), id="empty-in-done"),
        pytest.param([ArgumentsDelta(0, "{}"), ArgumentsFinal(0, None)], "{}", (), id="no-final-text"),
        pytest.param([ArgumentsFinal(0, None)], None, (), id="nothing"),
    ],
)
def test_the_final_arguments_are_compared_at_the_calls_end(
    events: list[Event], arguments: str | None, anomalies: tuple[str, ...]
) -> None:
    out = run(CallOpened(0, "c", "f"), *events, ArgumentsFinal(0, "repeat"))  # the repeat changes nothing
    assert out == [RawCall(0, "c", "f", arguments, anomalies=anomalies)]


def test_the_final_text_of_a_call_without_fragments_is_a_fragment_and_counts_against_the_limit() -> None:
    acc = Accumulator("test", fragments=True)
    acc.feed(CallOpened(0, "c", "f"))
    out = list(acc.feed(ArgumentsFinal(0, "{}")))
    assert out == [ArgumentsDelta(0, "{}"), RawCall(0, "c", "f", "{}", anomalies=("arguments_in_done",))]
    small = Accumulator("test", Limits(max_argument_bytes=3))
    small.feed(CallOpened(0, "c", "f"))
    with pytest.raises(LimitExceededError, match="the arguments grew to 8 characters"):
        small.feed(ArgumentsFinal(0, '{"a": 1}'))


def test_a_plain_call_refuses_a_fragment_past_the_limit_itself() -> None:
    # The reader that feeds a call's fragments past the table (the hot read) never checks the
    # limit: the call refuses the fragment, with nothing changed, and the table then raises
    # with the text one at a time would have kept.
    acc = Accumulator("test", Limits(max_argument_bytes=5))
    acc.feed(CallOpened(0, "c", "f"))
    acc.feed(ArgumentsDelta(0, "ab"))
    call = acc.plain_call(0, 0)
    assert call is not None
    assert (call.add("cdef"), call.extend(["c", "def"])) == (False, False)
    assert (call.add("c"), call.extend(["d", "e"])) == (True, True)
    assert call.add("f") is False
    with pytest.raises(LimitExceededError, match="the arguments grew to 6 characters") as raised:
        acc.feed(ArgumentsDelta(0, "f"))
    assert raised.value.limit == "max_argument_bytes"
    assert acc.drain_open() == [RawCall(0, "c", "f", "abcdef", truncated=True)]


# -- decoders translate, the table judges ---------------------------------------------------------

_STRAY_FRAGMENTS = [
    pytest.param(
        "anthropic",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ""}},
        None,
        id="anthropic",
    ),
    pytest.param(
        "bedrock", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": ""}}}, "contentBlockDelta", id="bedrock"
    ),
    pytest.param(
        "openai_responses",
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": ""},
        None,
        id="openai_responses",
    ),
]


@pytest.mark.parametrize(("slug", "payload", "name"), _STRAY_FRAGMENTS)
def test_a_fragment_for_no_open_call_is_translated_and_the_table_rejects_it(
    slug: str, payload: dict[str, Any], name: str | None
) -> None:
    from streamkit import Assembler
    from streamkit.providers import DECODERS

    assert DECODERS[slug]().feed_payload(payload, name) == [ArgumentsDelta(0, "")]  # even an empty one
    with pytest.raises(ProviderProtocolError) as info:
        Assembler(helpers.slug(slug)).feed_payload(payload, name)
    assert (info.value.provider, info.value.event, info.value.state, info.value.index) == (
        slug,
        "ArgumentsDelta",
        "IDLE",
        0,
    )


def test_a_call_id_is_unique_within_its_choice_only() -> None:
    """``n > 1``: each choice is its own message, and OpenAI gives each choice's call one id."""
    out = run(CallOpened(0, "c", "f", 0), CallOpened(0, "c", "f", 1), StopReceived("tool_calls", False, 0))
    assert out == [RawCall(0, "c", "f", None, 0)]
    with pytest.raises(ProviderProtocolError, match=r"call id 'c' was already used at index 0"):
        run(CallOpened(0, "c", "f", 1), CallOpened(1, "c", "f", 1))


def test_a_whole_call_with_a_used_id_is_refused_naming_the_event_the_stream_sent() -> None:
    with pytest.raises(ProviderProtocolError) as info:
        run(CallReceived(0, "c", "f", {}), CallReceived(1, "c", "f", {}))
    assert str(info.value) == "test, event 'CallReceived', call index 1: call id 'c' was already used at index 0"


def test_a_choices_first_stop_reason_ends_it_and_later_ones_are_listed() -> None:
    acc = Accumulator("test")
    events: list[Event] = [
        CallOpened(0, "a", "f"),
        StopReceived("tool_calls", False),
        CallOpened(1, "b", "f"),
        StopReceived("stop", True),  # ends only the call opened since, as it says
        StopReceived("length", True),
        StopReceived("stop", False, 1),
    ]
    out = [item for event in events for item in acc.feed(event)]
    assert out == [RawCall(0, "a", "f", None), RawCall(1, "b", "f", None, truncated=True)]
    assert (acc.stop_reason, acc.anomalies) == ("tool_calls", ["stop_reason_repeated"])


@pytest.mark.parametrize("call_id", ["c", None], ids=["same-id", "no-id"])
def test_a_delivered_key_starts_again_only_as_a_new_call(call_id: str | None) -> None:
    with pytest.raises(ProviderProtocolError) as info:
        run(CallOpened(0, "c", "f"), CallEnded(0), CallOpened(0, call_id, "f"))
    assert str(info.value) == (
        "test, event 'CallOpened', call index 0: not allowed in state DELIVERED: the call was already delivered"
    )
    again = run(CallOpened(0, "c", "f"), CallEnded(0), CallOpened(0, "d", "g"), ArgumentsDelta(0, "{}"), CallEnded(0))
    assert again == [RawCall(0, "c", "f", None), RawCall(0, "d", "g", "{}", anomalies=("index_reused",))]


def test_a_key_started_again_still_counts_against_max_calls() -> None:
    acc = Accumulator("test", Limits(max_calls=2))
    events: list[Event] = [CallOpened(0, "a", "f"), CallEnded(0), CallOpened(0, "b", "f"), CallEnded(0)]
    for event in events:
        acc.feed(event)
    with pytest.raises(LimitExceededError, match="too many calls in one response"):
        acc.feed(CallOpened(0, "c", "f"))


def sequential(*events: Event, early_close: bool = False) -> list[object]:
    acc = Accumulator("test", sequential=True, early_close=early_close)
    return [item for event in events for item in acc.feed(event)]


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        pytest.param(
            ArgumentsDelta(1, '{"tick'),
            [RawCall(0, "a", "f", '{"x": 1}'), RawCall(1, "b", "f", '{"tick', truncated=True)],
            id="followed-is-complete",
        ),
        pytest.param(
            ArgumentsDelta(0, ', "y": 2}'),
            [
                RawCall(0, "a", "f", '{"x": 1}, "y": 2}', truncated=True, anomalies=("fragment_after_next_call",)),
                RawCall(1, "b", "f", None, truncated=True),
            ],
            id="order-broken-is-cut-again",
        ),
    ],
)
def test_a_cut_truncates_only_the_call_being_written(after: Event, expected: list[RawCall]) -> None:
    """Rule 9: a followed call is complete; text for it after that breaks the order."""
    out = sequential(
        CallOpened(0, "a", "f"),
        ArgumentsDelta(0, '{"x": 1}'),
        CallOpened(1, "b", "f"),
        after,
        StopReceived("length", True),
    )
    assert out == expected


def test_early_close_never_delivers_a_call_before_its_arguments() -> None:
    """Two calls opened before any arguments: the first is not closed by the second's start."""
    out = sequential(
        CallOpened(0, "a", "delete_files"),
        CallOpened(1, "b", "list_files"),
        ArgumentsDelta(0, '{"path": "/tmp/x"}'),
        ArgumentsDelta(1, "{}"),
        CallOpened(2, "c", "f"),
        ArgumentsDelta(2, "{}"),
        StopReceived("tool_calls", False),
        early_close=True,
    )
    assert out == [
        RawCall(0, "a", "delete_files", '{"path": "/tmp/x"}'),
        RawCall(1, "b", "list_files", "{}"),
        RawCall(2, "c", "f", "{}"),
    ]
    # Delivered at the next call's start, before the stop:
    early = sequential(CallOpened(0, "a", "f"), ArgumentsDelta(0, "{}"), CallOpened(1, "b", "g"), early_close=True)
    assert early == [RawCall(0, "a", "f", "{}")]


def test_a_call_waiting_for_its_stop_reason_is_never_lost_to_the_limit_a_new_call_on_its_key_passes() -> None:
    """Rule 11 and the limits: a new call on the key of a call that waits, refused by
    ``max_calls``, leaves the waiting call open, so that the error carries it."""
    acc = Accumulator("test", Limits(max_calls=1))
    acc.feed(CallOpened(0, "c1", "f"))
    acc.feed(ArgumentsDelta(0, '{"a": 1'))
    [raw] = acc.feed(CallEnded(0))
    assert isinstance(raw, RawCall) and raw.stop_pending
    acc.hold(raw)
    with pytest.raises(LimitExceededError, match="max_calls"):
        acc.feed(CallOpened(0, "c2", "g"))
    assert acc.state_of(0) == "ENDED"
    assert [(call.id, call.arguments, call.truncated) for call in acc.drain_open()] == [("c1", '{"a": 1', True)]


@pytest.mark.parametrize(("reason", "truncated"), [("max_tokens", True), ("end_turn", False)])
def test_a_waiting_call_is_cut_only_by_a_stop_reason_that_cuts(reason: str, truncated: bool) -> None:
    acc = Accumulator("test", cutting=frozenset({"max_tokens"}))
    acc.feed(CallOpened(0, "c1", "f"))
    acc.feed(ArgumentsDelta(0, '{"a": 1'))
    [raw] = acc.feed(CallEnded(0))
    assert isinstance(raw, RawCall)
    acc.hold(raw)
    assert acc.feed(CallEnded(0)) == ()  # a repeated end marker while it waits
    [out] = acc.feed(StopReceived(reason, cut_open_calls=True))
    assert isinstance(out, RawCall)
    assert (out.arguments, out.truncated, out.stop_pending) == ('{"a": 1', truncated, False)
    assert acc.anomalies == ["end_repeated"]


def test_a_call_ended_after_its_choices_stop_reason_or_by_following_never_waits() -> None:
    acc = Accumulator("test", sequential=True, early_close=True)
    acc.feed(CallOpened(0, "c1", "f"))
    acc.feed(ArgumentsDelta(0, '{"a": 1'))
    [followed] = acc.feed(CallOpened(1, "c2", "f"))  # early_close: delivered at the next call's start
    assert isinstance(followed, RawCall) and not followed.stop_pending
    acc = Accumulator("test")
    acc.feed(CallOpened(0, "c1", "f"))
    acc.feed(StopReceived("max_tokens", cut_open_calls=False))  # closes call 0; a later call of choice 0
    acc.feed(CallOpened(1, "c2", "f"))
    acc.feed(ArgumentsDelta(1, '{"a": 1'))
    [late] = acc.feed(CallEnded(1))
    assert isinstance(late, RawCall) and not late.stop_pending


class _Following(Accumulator):
    """Counts the calls a new call follows (rule 9), and how often the open calls are listed."""

    def __init__(self, *, early_close: bool) -> None:
        super().__init__("test", Limits(max_calls=1000, max_open_calls=1000), sequential=True, early_close=early_close)
        self.followed = 0
        self.listed = 0
        counter = self

        class Listed(dict[tuple[int, int], Any]):
            def __iter__(self) -> Any:
                counter.listed += 1
                return super().__iter__()

        self._open = Listed()

    def _call_event(self, event: Any) -> Any:
        if type(event) is CallFollowed:
            self.followed += 1
        return super()._call_event(event)


@pytest.mark.parametrize("early_close", [False, True])
def test_each_call_is_followed_once_never_once_per_later_call(early_close: bool) -> None:
    # Each new call followed every call still open in its choice: 8,000 calls took 12 s.
    # Counted, not timed: a call is followed once its arguments came, and then never again.
    acc = _Following(early_close=early_close)
    out: list[object] = []
    for index in range(500):
        out += acc.feed(CallOpened(index, f"c{index}", "f"))
        out += acc.feed(ArgumentsDelta(index, f'{{"i": {index}}}'))
    out += acc.feed(StopReceived("tool_calls", False))
    assert out == [RawCall(index, f"c{index}", "f", f'{{"i": {index}}}') for index in range(500)]
    assert acc.followed == 499
    assert acc.listed == 1  # by the stop alone


@pytest.mark.parametrize("early_close", [False, True])
def test_calls_that_wait_for_their_arguments_are_never_followed_again_and_again(early_close: bool) -> None:
    # A call opened without arguments is never complete by following: it is visited once its
    # arguments came, whatever the number of calls opened before that.
    acc = _Following(early_close=early_close)
    out: list[object] = []
    for index in range(500):
        out += acc.feed(CallOpened(index, f"c{index}", "f"))
    for index in range(500):
        out += acc.feed(ArgumentsDelta(index, "{}"))
    out += acc.feed(StopReceived("tool_calls", False))
    assert out == [RawCall(index, f"c{index}", "f", "{}") for index in range(500)]
    assert acc.followed == 0
    assert acc.listed == 1


def test_early_close_delivers_the_followed_calls_in_the_order_they_opened() -> None:
    """The arguments of the second call came first; the first call still goes out first."""
    out = sequential(
        CallOpened(0, "a", "f"),
        CallOpened(1, "b", "g"),
        ArgumentsDelta(1, "{}"),
        ArgumentsValue(0, {"x": 1}),
        CallOpened(2, "c", "h"),
        early_close=True,
    )
    assert out == [RawCall(0, "a", "f", {"x": 1}), RawCall(1, "b", "g", "{}")]
