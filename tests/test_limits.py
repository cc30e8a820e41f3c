"""Limits: each one holds exactly at its value, stops the stream one past it, and keeps memory bounded."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

import streamkit
from streamkit import (
    ArgumentIssue,
    Assembler,
    IncompleteStreamError,
    InvalidToolCall,
    LimitExceededError,
    Limits,
    ResponseEnd,
    ToolCall,
    UsageError,
)
from streamkit._assembler import _FRAMERS
from streamkit._events import Frame
from streamkit._limits import (
    DEFAULT_LIMITS,
    DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_CHOICES,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_OPEN_CALLS,
    DEFAULT_MAX_TURN_BYTES,
    event_tokens,
)
from streamkit._sse import SSEDecoder
from streamkit.providers import DECODERS

from .ceilings import CASES as CEILING_CASES
from .ceilings import EVENTSTREAM
from .ceilings import READS as CEILING_READS
from .helpers import slug
from .wire import WIRES, OpenAIChatWire, call, run

SLUGS = sorted(WIRES)


def test_defaults_are_the_documented_constants() -> None:
    assert Limits() == Limits(
        max_argument_bytes=DEFAULT_MAX_ARGUMENT_BYTES,
        max_open_calls=DEFAULT_MAX_OPEN_CALLS,
        max_calls=DEFAULT_MAX_CALLS,
        max_choices=DEFAULT_MAX_CHOICES,
        max_depth=DEFAULT_MAX_DEPTH,
        max_event_bytes=DEFAULT_MAX_EVENT_BYTES,
        max_turn_bytes=DEFAULT_MAX_TURN_BYTES,
    )
    assert (DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_OPEN_CALLS, DEFAULT_MAX_CALLS) == (8 << 20, 256, 1024)
    assert (DEFAULT_MAX_CHOICES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_EVENT_BYTES) == (128, 64, 16 << 20)
    assert DEFAULT_MAX_TURN_BYTES == 16 << 20


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_calls": 0}, "Limits.max_calls must be a positive integer, got 0"),
        ({"max_open_calls": -1}, "Limits.max_open_calls must be a positive integer, got -1"),
        ({"max_argument_bytes": 1.5}, "Limits.max_argument_bytes must be a positive integer, got 1.5"),
        ({"max_event_bytes": True}, "Limits.max_event_bytes must be a positive integer, got True"),
        ({"max_depth": 513}, "Limits.max_depth must be at most 512, got 513"),
        ({"max_turn_bytes": 0}, "Limits.max_turn_bytes must be a positive integer, got 0"),
    ],
)
def test_bad_limits_are_usage_errors_naming_the_field(options: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError) as info:
        Limits(**options)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_limits_must_be_a_limits_object() -> None:
    with pytest.raises(UsageError, match=r"limits must be a streamkit\.Limits, got dict"):
        Assembler("anthropic", limits={"max_calls": 1})  # type: ignore[arg-type]


# -- max_argument_bytes -------------------------------------------------------------------------


@pytest.mark.parametrize("slug", SLUGS)
def test_argument_bytes_hold_at_the_limit_and_stop_one_past_it(slug: str) -> None:
    wire = WIRES[slug]
    fragments = ['{"text": "', "x" * 20, '"}']  # 32 characters in all
    data = wire.begin() + call(wire, 0, "c0", "f", ["{}"]) + call(wire, 1, "c1", "g", fragments) + wire.finish()

    items, error = run([data], slug, limits=Limits(max_argument_bytes=32))
    assert error is None
    assert items[:2] == [ToolCall(0, "c0", "f", {}), ToolCall(1, "c1", "g", {"text": "x" * 20})]

    items, error = run([data], slug, limits=Limits(max_argument_bytes=31))
    assert isinstance(error, LimitExceededError)
    assert (error.limit, error.value, error.index, error.provider) == ("max_argument_bytes", 31, 1, slug)
    assert str(error) == f"{slug}: call index 1: the arguments grew to 32 characters: limit max_argument_bytes=31"
    # What was complete is delivered; what was not comes back with its raw text.
    delivered = [ToolCall(0, "c0", "f", {})] if wire.ends_each_call else []
    assert items == delivered
    raws = [(c.index, c.raw, c.truncated) for c in error.unfinished]
    cut = [(1, '{"text": "' + "x" * 20 + '"}', True)]
    assert raws == (cut if wire.ends_each_call else [(0, "{}", True), *cut])


def test_argument_bytes_count_every_fragment_once_also_when_resent() -> None:
    # OpenAI-compatible gateways re-send the whole arguments after the deltas: a copy that is
    # dropped as a repeat never counts, a fragment that is appended always does.
    wire = OpenAIChatWire()
    resent = wire.chunk({"tool_calls": [{"index": 0, "id": "c0", "function": {"name": "f", "arguments": '{"a":1}'}}]})
    data = wire.begin() + call(wire, 0, "c0", "f", ['{"a":', "1}"]) + resent + wire.finish()
    items, error = run([data], "openai_chat", limits=Limits(max_argument_bytes=7))
    assert error is None
    assert items[0] == ToolCall(0, "c0", "f", {"a": 1}, anomalies=("id_repeated", "name_repeated", "arguments_resent"))


def test_the_hot_read_stops_at_the_argument_limit_as_the_general_path_does() -> None:
    # Read one event a read, the call's fragments go through the hot read, which leaves the
    # limit to the call: the fragment past it gives the error that one read of it all gives.
    wire = OpenAIChatWire()
    data = wire.begin() + call(wire, 0, "c0", "f", ['{"text": "', *"x" * 40, '"}']) + wire.finish()
    events = [piece + b"\n\n" for piece in data.split(b"\n\n") if piece]
    assembler = Assembler("openai_chat", limits=Limits(max_argument_bytes=30))
    hot = 0
    with pytest.raises(LimitExceededError) as raised:
        for event in events:
            hot += assembler.hot is not None
            assembler.feed(event)
    assert hot > 10
    _, whole = run([data], "openai_chat", limits=Limits(max_argument_bytes=30))
    assert isinstance(whole, LimitExceededError)
    assert (str(raised.value), vars(raised.value)) == (str(whole), vars(whole))
    assert str(whole) == "openai_chat: call index 0: the arguments grew to 31 characters: limit max_argument_bytes=30"


# -- max_open_calls and max_calls ------------------------------------------------------------------


@pytest.mark.parametrize("slug", SLUGS)
def test_open_calls_hold_at_the_limit_and_stop_one_past_it(slug: str) -> None:
    wire = WIRES[slug]
    # Three calls open at once: all started before any ends.
    starts = b"".join(wire.start(i, f"c{i}", "f") for i in range(3))
    ends = b"".join(wire.fragment(i, "{}") + wire.end_call(i) for i in range(3))
    data = wire.begin() + starts + ends + wire.finish()

    items, error = run([data], slug, limits=Limits(max_open_calls=3))
    assert error is None
    assert items[:3] == [ToolCall(i, f"c{i}", "f", {}) for i in range(3)]

    items, error = run([data], slug, limits=Limits(max_open_calls=2))
    assert isinstance(error, LimitExceededError)
    assert (error.limit, error.value, error.index) == ("max_open_calls", 2, 2)
    assert str(error) == f"{slug}: call index 2: too many calls open at once: limit max_open_calls=2"
    assert items == []
    assert [(c.index, c.raw, c.truncated) for c in error.unfinished] == [(0, "", True), (1, "", True)]


@pytest.mark.parametrize("slug", SLUGS)
def test_calls_per_response_hold_at_the_limit_and_stop_one_past_it(slug: str) -> None:
    wire = WIRES[slug]
    data = wire.begin() + b"".join(call(wire, i, f"c{i}", "f", [f'{{"n": {i}}}']) for i in range(3)) + wire.finish()

    items, error = run([data], slug, limits=Limits(max_calls=3))
    assert error is None
    assert items == [
        *(ToolCall(i, f"c{i}", "f", {"n": i}) for i in range(3)),
        ResponseEnd(wire.stop_reason, wire.usage),
    ]

    items, error = run([data], slug, limits=Limits(max_calls=2))
    assert isinstance(error, LimitExceededError)
    assert (error.limit, error.value, error.index) == ("max_calls", 2, 2)
    assert str(error) == f"{slug}: call index 2: too many calls in one response: limit max_calls=2"
    if wire.ends_each_call:
        assert items == [ToolCall(0, "c0", "f", {"n": 0}), ToolCall(1, "c1", "f", {"n": 1})]
        assert error.unfinished == ()
    else:
        assert items == []
        assert [(c.index, c.raw) for c in error.unfinished] == [(0, '{"n": 0}'), (1, '{"n": 1}')]


# -- max_choices ---------------------------------------------------------------------------------


def choice_chunk(choice: int, delta: dict[str, object], finish: str | None = None) -> bytes:
    payload = {"choices": [{"index": choice, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(payload)}\n\n".encode()


def test_choices_hold_at_the_limit_and_stop_one_past_it() -> None:
    entry = {"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}
    data = b"".join(
        choice_chunk(n, {"tool_calls": [{**entry, "id": f"c{n}"}]}) + choice_chunk(n, {}, "tool_calls")
        for n in range(3)
    )
    items, error = run([data + b"data: [DONE]\n\n"], "openai_chat", limits=Limits(max_choices=3))
    assert error is None
    assert items[:3] == [ToolCall(0, f"c{n}", "f", {}, choice=n) for n in range(3)]

    items, error = run([data], "openai_chat", limits=Limits(max_choices=2))
    assert isinstance(error, LimitExceededError)
    assert (error.limit, error.value, error.index) == ("max_choices", 2, 0)
    assert str(error) == "openai_chat: call index 0: too many choices (choice 2): limit max_choices=2"
    assert items == [ToolCall(0, "c0", "f", {}, choice=0), ToolCall(0, "c1", "f", {}, choice=1)]
    # Text alone opens a choice too (it must finish before the end), as a stop reason does.
    stops = b"".join(choice_chunk(n, {"content": "hi"}) + choice_chunk(n, {}, "stop") for n in range(3))
    _, error = run([stops], "openai_chat", limits=Limits(max_choices=2))
    assert isinstance(error, LimitExceededError)
    assert str(error) == "openai_chat: too many choices (choice 2): limit max_choices=2"
    texts = b"".join(choice_chunk(n, {"content": "hi"}) for n in range(300)) + b"data: [DONE]\n\n"
    items, error = run([texts], "openai_chat", limits=Limits(max_choices=2))
    assert isinstance(error, LimitExceededError) and len(items) == 2


# -- max_depth -----------------------------------------------------------------------------------


def nested(depth: int, leaf: str = "1") -> str:
    """An object ``depth`` levels deep: ``{"a": [[...leaf...]]}``."""
    return '{"a": ' + "[" * (depth - 1) + leaf + "]" * (depth - 1) + "}"


@pytest.mark.parametrize("slug", SLUGS)
def test_depth_holds_at_the_limit_and_is_too_deep_one_past_it(slug: str) -> None:
    wire = WIRES[slug]
    for depth, limit in ((5, 5), (6, 5)):
        text = nested(depth)
        data = wire.begin() + call(wire, 0, "c0", "f", [text[:7], text[7:]]) + wire.finish()
        items, error = run([data], slug, limits=Limits(max_depth=limit))
        assert error is None
        if depth <= limit:
            assert items[0] == ToolCall(0, "c0", "f", json.loads(text))
        else:
            issue = ArgumentIssue(
                "too_deep", "the arguments nest arrays and objects deeper than max_depth=5; send a flatter value"
            )
            assert items[0] == InvalidToolCall(0, "c0", "f", text, (issue,))


def test_depth_applies_to_arguments_sent_as_a_value() -> None:
    wire = OpenAIChatWire()
    value = json.loads(nested(4))
    entry = {"index": 0, "id": "c0", "function": {"name": "f", "arguments": value}}
    data = wire.begin() + wire.chunk({"tool_calls": [entry]}) + wire.finish()
    items, _ = run([data], "openai_chat", limits=Limits(max_depth=3))
    assert isinstance(items[0], InvalidToolCall)
    assert [e.kind for e in items[0].errors] == ["too_deep"]
    assert items[0].raw == json.dumps(value, separators=(",", ":"))
    items, _ = run([data], "openai_chat", limits=Limits(max_depth=4))
    assert items[0] == ToolCall(0, "c0", "f", value, anomalies=("arguments_object",))


@pytest.mark.parametrize("slug", SLUGS)
def test_deep_nesting_with_a_big_integer_is_too_deep_not_a_crash(slug: str) -> None:
    # Regression: orjson reads 1000 levels, then the exact re-read of the big integer by the
    # standard library recursed past Python's limit and a RecursionError escaped.
    wire = WIRES[slug]
    text = nested(1000, "123456789012345678901234567890")
    data = wire.begin() + call(wire, 0, "c0", "f", [text]) + wire.finish()
    items, error = run([data], slug)
    assert error is None
    assert isinstance(items[0], InvalidToolCall) and items[0].raw == text
    assert [e.kind for e in items[0].errors] == ["too_deep"]


def test_the_depth_ceiling_keeps_big_integers_exact() -> None:
    # At the highest max_depth allowed, the exact reader for big integers still reads every
    # level: the ceiling is where that holds.
    wire = WIRES["anthropic"]
    text = nested(512, "123456789012345678901234567890")
    data = wire.begin() + call(wire, 0, "c", "f", [text]) + wire.finish()
    items, error = run([data], "anthropic", limits=Limits(max_depth=512))
    assert error is None
    assert isinstance(items[0], ToolCall) and items[0].input == json.loads(text)
    items, _ = run([data], "anthropic", limits=Limits(max_depth=511))
    assert isinstance(items[0], InvalidToolCall) and [e.kind for e in items[0].errors] == ["too_deep"]


# -- max_event_bytes -------------------------------------------------------------------------------


def test_max_event_bytes_is_a_limit_and_a_shorthand() -> None:
    wire = WIRES["anthropic"]
    data = wire.begin() + call(wire, 0, "c", "f", ['{"a": "' + "x" * 200 + '"}']) + wire.finish()
    for options in ({"max_event_bytes": 200}, {"limits": Limits(max_event_bytes=200)}):
        _, error = run([data], "anthropic", **options)
        assert isinstance(error, LimitExceededError)
        assert (error.limit, error.value) == ("max_event_bytes", 200)
    items, error = run([data], "anthropic", limits=Limits(max_event_bytes=10), max_event_bytes=1000)
    assert error is None and items[0] == ToolCall(0, "c", "f", {"a": "x" * 200})


def test_bare_data_lines_count_toward_the_event_size() -> None:
    # Regression: a "data" line with no colon appended an empty line without counting it, so a
    # stream of them grew one event without bound.
    decoder = SSEDecoder(max_event_bytes=1000)
    with pytest.raises(LimitExceededError, match="an SSE event grew past the limit"):
        for _ in range(1001):
            decoder.feed(b"data\n")


def _ping(tokens: int, size: int) -> str:
    """An Anthropic ping event of ``size`` characters holding exactly ``tokens`` JSON tokens: 12
    around a string that takes up the room, then a list of zeros (one comma each after the first)."""
    zeros = ",".join(["0"] * (tokens - 11))
    head, tail = '{"type":"ping","p":[' + zeros + '],"s":"', '"}'
    return head + "x" * (size - len(head) - len(tail)) + tail


def test_an_event_may_hold_one_json_token_per_64_bytes_of_max_event_bytes() -> None:
    # Regression: an event within max_event_bytes was read whole whatever it held, and reading
    # JSON builds an object per value: "[],[],..." held 34 times its size, "{},{},..." 38 times.
    limits = Limits(max_event_bytes=1 << 20)
    assert event_tokens(limits.max_event_bytes) == 16384
    decoder = DECODERS["anthropic"]()
    decoder.limits = limits
    assert decoder.feed(Frame(None, _ping(16384, 40_000))) == []
    with pytest.raises(LimitExceededError) as info:
        decoder.feed(Frame(None, _ping(16385, 40_000)))
    assert (info.value.limit, info.value.value, info.value.provider) == ("max_event_bytes", 1 << 20, "anthropic")
    assert str(info.value) == (
        "anthropic: an event of 40000 characters holds more than 16384 JSON tokens (strings, brackets, commas,"
        " colons): one per 64 bytes of the limit: limit max_event_bytes=1048576"
    )


def test_an_event_no_longer_than_its_token_allowance_is_never_counted() -> None:
    # 4096 tokens whatever the limit: an event of at most that many characters holds no more.
    assert (event_tokens(1), event_tokens(256 * 1024), event_tokens(DEFAULT_MAX_EVENT_BYTES)) == (4096, 4096, 262144)
    decoder = DECODERS["anthropic"]()
    decoder.limits = Limits(max_event_bytes=1000)
    assert decoder.feed(Frame(None, '{"type":"ping","p":[' + "[]," * 1350 + "[]]}")) == []


@pytest.mark.parametrize("slug", sorted(DECODERS))
def test_every_decoder_refuses_an_event_of_more_json_tokens_than_max_event_bytes_allows(slug: str) -> None:
    decoder = DECODERS[slug]()
    decoder.limits = Limits(max_event_bytes=1 << 20)
    event = "messageStart" if slug == "bedrock" else None
    with pytest.raises(LimitExceededError) as info:
        decoder.feed(Frame(event, '{"pad":[' + "[]," * 9000 + "[]]}"))
    assert (info.value.limit, info.value.value, info.value.provider) == ("max_event_bytes", 1 << 20, slug)


def _gemini_call(args: str) -> bytes:
    candidate = '{"index":0,"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":' + args + "}}]}"
    return f'data: {{"candidates":[{candidate},"finishReason":"STOP"}}]}}\n\n'.encode()


@pytest.mark.parametrize("room", [30_000, 300_000])
def test_a_long_event_is_read_as_a_short_one_is(room: int) -> None:
    # An event longer than its token allowance (16384 characters at 1 MiB) is counted, then read
    # by orjson up to four allowances long, and beyond by the standard library's exact reader,
    # held to orjson's rules: the same values, big integers exact, the same refusals.
    args = '{"n":[1,-2.5,1e300,123456789012345678901234567890],"t":"\\u00e9\\ud83d\\ude00\\n",'
    args += '"o":{"k":null,"b":true},"s":"'
    data = _gemini_call(args + "x" * room + '"}')
    long_read, error = run([data], "gemini", max_event_bytes=1 << 20)
    assert error is None
    short_read, error = run([data], "gemini", max_event_bytes=1 << 25)  # allows 524288: not counted
    assert error is None
    assert long_read == short_read
    [call] = [item for item in long_read if isinstance(item, streamkit.ToolCall)]
    value = call.input
    assert value["n"] == [1, -2.5, 1e300, 123456789012345678901234567890] and value["t"] == "\u00e9\U0001f600\n"
    for bad in ('"\\ud800"', "NaN", "1e400", "[1,]"):
        # in a call's arguments: that call invalid, its text kept, whichever reader read the event
        args = '{"a":' + bad + ',"s":"' + "x" * room + '"}'
        items, error = run([_gemini_call(args)], "gemini", max_event_bytes=1 << 20)
        assert error is None, bad
        [invalid] = [item for item in items if isinstance(item, streamkit.InvalidToolCall)]
        assert (invalid.raw, [issue.kind for issue in invalid.errors]) == (args, ["invalid_json"]), bad
        # anywhere else: the event is not JSON
        outside = _gemini_call('{"s":"' + "x" * room + '"}').replace(
            b'"finishReason"', b'"bad":' + bad.encode() + b',"finishReason"'
        )
        _, error = run([outside], "gemini", max_event_bytes=1 << 20)
        assert isinstance(error, streamkit.ProviderProtocolError) and "event data is not JSON" in str(error), bad


def test_a_template_is_never_learned_from_a_payload_with_kilobytes_around_its_string() -> None:
    # Regression: the bytes after the string were compiled into the template's pattern and
    # cached: a chunk with 64 KiB after its text peaked at 107 times its size while learning,
    # and 20 times its size stayed held after the stream.
    wire = OpenAIChatWire()
    chunk = b'data: {"choices":[{"index":0,"delta":{"content":"ab"}}],"pad":"' + b"p " * 32768 + b'"}\n\n'
    reads = [wire.begin(), chunk, chunk, wire.finish()]
    tracemalloc.start()
    try:
        items, error = run(reads, "openai_chat")
        peak = tracemalloc.get_traced_memory()[1]
        texts = [item.text for item in items if isinstance(item, streamkit.TextDelta)]
        del items
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert error is None and texts == ["ab", "ab"]
    assert peak < 16 * len(chunk)  # orjson sets aside 12 times a payload it reads
    assert held < len(chunk) // 10


# -- memory stays bounded --------------------------------------------------------------------------

_LIMIT = 256 * 1024
_HUGE = 50 * 1024 * 1024  # far more than any limit: produced lazily, never held


class Meter:
    """A lazy byte source that counts what was taken from it."""

    def __init__(self, head: bytes, body: Iterator[bytes]) -> None:
        self.taken = 0
        self._parts = itertools.chain([head], body)

    def __iter__(self) -> Iterator[bytes]:
        for part in self._parts:
            self.taken += len(part)
            yield part


def endless(piece: bytes, total: int = _HUGE) -> Iterator[bytes]:
    for _ in range(total // len(piece)):
        yield piece


def peak_while(source: Meter, provider: str, **options: object) -> tuple[int, BaseException | None]:
    tracemalloc.start()
    try:
        _, error = run(source, provider, **options)
        return tracemalloc.get_traced_memory()[1], error
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("slug", SLUGS)
def test_endless_arguments_stop_early_with_bounded_memory(slug: str) -> None:
    wire = WIRES[slug]
    source = Meter(wire.begin() + wire.start(0, "c", "f"), endless(wire.fragment(0, "x" * 4096)))
    peak, error = peak_while(source, slug, limits=Limits(max_argument_bytes=_LIMIT))
    assert isinstance(error, LimitExceededError) and error.limit == "max_argument_bytes"
    assert source.taken < 2 * _LIMIT
    assert peak < 4 * _LIMIT
    assert len(error.unfinished[0].raw) == _LIMIT + 4096


@pytest.mark.parametrize("slug", SLUGS)
def test_endless_calls_stop_early_with_bounded_memory(slug: str) -> None:
    wire = WIRES[slug]
    calls = (call(wire, i, f"c{i}", "f", ["{}"]) for i in itertools.count())
    source = Meter(wire.begin(), calls)
    peak, error = peak_while(source, slug, limits=Limits(max_calls=500, max_open_calls=1000))
    assert isinstance(error, LimitExceededError) and (error.limit, error.index) == ("max_calls", 500)
    assert peak < 2 * 1024 * 1024


def test_endless_choices_stop_early_with_bounded_memory() -> None:
    # Regression: every new choice index left state behind in the OpenAI Chat decoder, even
    # with nothing in it, so a stream of distinct choices grew memory ten times faster than
    # the stream itself.
    empty = (choice_chunk(n, {"tool_calls": [{}]}) for n in range(20_000))
    source = Meter(b"", empty)
    peak, error = peak_while(source, "openai_chat")
    assert isinstance(error, IncompleteStreamError) and source.taken > 1_000_000
    assert peak < 256 * 1024
    stops = (choice_chunk(n, {}, "stop") for n in itertools.count())
    source = Meter(b"", stops)
    peak, error = peak_while(source, "openai_chat", limits=Limits(max_choices=100))
    assert isinstance(error, LimitExceededError) and error.limit == "max_choices"
    assert source.taken < 10_000
    assert peak < 256 * 1024


@pytest.mark.parametrize("framing", sorted(_FRAMERS))
@pytest.mark.parametrize("size", [4096, 3])
def test_every_framer_holds_at_most_max_event_bytes_of_a_frame_that_never_ends(framing: str, size: int) -> None:
    # Bytes with no line end or frame boundary, in large and in tiny chunks: the framer must
    # stop with a typed error before holding much more than the limit.
    make = _FRAMERS[framing]
    framer = make(max_event_bytes=_LIMIT)
    taken = 0
    tracemalloc.start()
    try:
        with pytest.raises(streamkit.StreamError):
            for chunk in endless(b"x" * size, 4 * _LIMIT):
                taken += len(chunk)
                framer.feed(chunk)
            framer.flush()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert taken <= _LIMIT + size
    assert peak < 2 * _LIMIT  # the held bytes, not a Python object per chunk


@pytest.mark.asyncio
async def test_the_async_iterators_take_the_same_limits() -> None:
    wire = WIRES["anthropic"]
    data = wire.begin() + call(wire, 0, "c0", "f", ["{}"]) + call(wire, 1, "c1", "f", ["{}"]) + wire.finish()
    got: list[object] = []
    with pytest.raises(LimitExceededError) as info:
        async for item in streamkit.aiter_tool_calls([data], "anthropic", limits=Limits(max_calls=1)):
            got.append(item)  # noqa: PERF401 - the calls before the error must be kept
    assert (info.value.limit, info.value.index) == ("max_calls", 1)
    assert got == [ToolCall(0, "c0", "f", {})]


@pytest.mark.parametrize("slug", SLUGS)
def test_the_default_limits_stop_a_50_mb_call(slug: str) -> None:
    wire = WIRES[slug]
    source = Meter(wire.begin() + wire.start(0, "c", "f"), endless(wire.fragment(0, "x" * 65536)))
    peak, error = peak_while(source, slug)
    assert isinstance(error, LimitExceededError)
    assert (error.limit, error.value) == ("max_argument_bytes", DEFAULT_MAX_ARGUMENT_BYTES)
    assert source.taken < DEFAULT_MAX_ARGUMENT_BYTES + 2 * 65536 + 1024
    assert peak < 3 * DEFAULT_MAX_ARGUMENT_BYTES


def test_the_default_limits_stop_a_50_mb_line() -> None:
    source = Meter(b"data: ", endless(b"x" * 65536))
    peak, error = peak_while(source, "anthropic")
    assert isinstance(error, LimitExceededError)
    assert (error.limit, error.value) == ("max_event_bytes", DEFAULT_MAX_EVENT_BYTES)
    assert source.taken < DEFAULT_MAX_EVENT_BYTES + 65536
    assert peak < 3 * DEFAULT_MAX_EVENT_BYTES


def test_a_frame_limit_error_is_the_same_however_the_bytes_are_chunked() -> None:
    data = b": keep-alive\n" + b"data: " + b"x" * 60 + b"\n" + b"data: " + b"y" * 60 + b"\ndata: " + b"z" * 200
    messages = set()
    for size in (1, 7, 64, len(data)):
        decoder = SSEDecoder(max_event_bytes=100)
        with pytest.raises(LimitExceededError) as info:
            for start in range(0, len(data), size):
                decoder.feed(data[start : start + size])
        messages.add(str(info.value))
    assert messages == {"an SSE event grew past the limit: limit max_event_bytes=100"}


# -- what a turn holds beside its calls --------------------------------------------------------------


def data(payload: object, event: str | None = None) -> bytes:
    return (f"event: {event}\n" if event else "").encode() + b"data: " + json.dumps(payload).encode() + b"\n\n"


def anthropic(block: Mapping[str, object] | None = None, index: int = 0) -> bytes:
    head = data({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}})
    return head + (data({"type": "content_block_start", "index": index, "content_block": block}) if block else b"")


def anthropic_delta(delta: dict[str, object], index: int = 0) -> bytes:
    return data({"type": "content_block_delta", "index": index, "delta": delta})


def gemini(*parts: dict[str, object], candidate: int = 0, **extra: object) -> bytes:
    return data({"candidates": [{"index": candidate, "content": {"role": "model", "parts": list(parts)}}], **extra})


def bedrock_reasoning() -> Meter:
    from .eventstream_encode import event

    piece = event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": _X}}})
    return Meter(event("messageStart", {"role": "assistant"}), endless(piece, _SOME))


_X = "x" * 4096
_SOME = 8 * 1024 * 1024  # enough input to pass every limit below many times over
_SERVER_TOOL = {"type": "server_tool_use", "id": "s", "name": "web_search"}
#: Streams that make streamkit hold turn state until the end: each must stop at max_turn_bytes.
TURN_STATE: dict[str, Callable[[], Meter]] = {
    "anthropic thinking text": lambda: Meter(
        anthropic({"type": "thinking", "thinking": ""}),
        endless(anthropic_delta({"type": "thinking_delta", "thinking": _X}), _SOME),
    ),
    "anthropic signature": lambda: Meter(
        anthropic({"type": "thinking", "thinking": ""}),
        endless(anthropic_delta({"type": "signature_delta", "signature": _X}), _SOME),
    ),
    "anthropic server tool input": lambda: Meter(
        anthropic(_SERVER_TOOL), endless(anthropic_delta({"type": "input_json_delta", "partial_json": _X}), _SOME)
    ),
    "anthropic thinking block keys": lambda: Meter(
        anthropic(),
        (
            data({"type": "content_block_start", "index": n, "content_block": {"type": "thinking", "thinking": ""}})
            + data({"type": "content_block_stop", "index": n})
            for n in range(_SOME // 200)
        ),
    ),
    "anthropic server tool starts": lambda: Meter(
        anthropic(),
        (
            data({"type": "content_block_start", "index": n, "content_block": {**_SERVER_TOOL, "p": _X}})
            for n in range(_SOME // 4096)
        ),
    ),
    "bedrock reasoningContent": bedrock_reasoning,
    "openai_chat reasoning_content": lambda: Meter(
        b"", endless(data({"choices": [{"index": 0, "delta": {"reasoning_content": _X}}]}), _SOME)
    ),
    "gemini thought text": lambda: Meter(b"", endless(gemini({"text": _X, "thought": True}), _SOME)),
    "gemini usage keys": lambda: Meter(
        b"", (gemini({"text": "a"}, usageMetadata={f"k{n}": _X}) for n in range(_SOME // 4096))
    ),
}
_PROVIDER = {"anthropic": "anthropic", "bedrock": "bedrock", "openai_chat": "openai_chat", "gemini": "gemini"}


def peak_of(source: Meter, provider: str, limits: Limits = DEFAULT_LIMITS) -> tuple[int, BaseException | None]:
    """The peak memory while the values are read and dropped (nothing kept but the error)."""
    tracemalloc.start()
    try:
        try:
            for _ in streamkit.iter_events(source, slug(provider), limits=limits):
                pass
        except streamkit.StreamError as exc:
            return tracemalloc.get_traced_memory()[1], exc
        return tracemalloc.get_traced_memory()[1], None
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("case", sorted(TURN_STATE))
def test_turn_state_stops_at_max_turn_bytes_with_bounded_memory(case: str) -> None:
    source = TURN_STATE[case]()
    peak, error = peak_of(source, _PROVIDER[case.split()[0]], limits=Limits(max_turn_bytes=_LIMIT))
    assert isinstance(error, LimitExceededError), error
    assert (error.limit, error.value) == ("max_turn_bytes", _LIMIT)
    assert str(error).startswith(f"{case.split()[0]}: the turn's state grew to ")
    assert source.taken < 2 * _LIMIT + 64 * 1024
    assert peak < 4 * _LIMIT


def test_turn_state_is_released_as_each_block_is_handed_out() -> None:
    # 100 thinking blocks of 10 KiB each, one after the other: 1 MB in all, but never more than
    # one block (and the keys) held at once, so a limit of 64 KiB is never reached.
    blocks = b"".join(
        data({"type": "content_block_start", "index": n, "content_block": {"type": "thinking", "thinking": ""}})
        + anthropic_delta({"type": "thinking_delta", "thinking": "y" * 10240}, n)
        + data({"type": "content_block_stop", "index": n})
        for n in range(100)
    )
    end = data({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}) + data({"type": "message_stop"})
    items, error = run([anthropic() + blocks + end], "anthropic", limits=Limits(max_turn_bytes=64 * 1024))
    assert error is None
    assert [len(item.text) for item in items if isinstance(item, streamkit.Thinking)] == [10240] * 100


def test_usage_replaced_by_later_values_counts_once() -> None:
    # Gemini repeats its usage in every chunk: what is held is the latest value of each key.
    chunks = [gemini({"text": "a"}, usageMetadata={"promptTokenCount": n, "note": "z" * 1000}) for n in range(500)]
    end = data({"candidates": [{"index": 0, "content": {"parts": []}, "finishReason": "STOP"}]})
    items, error = run([*chunks, end], "gemini", limits=Limits(max_turn_bytes=4096))
    assert error is None and items[-1] == ResponseEnd("STOP", {"promptTokenCount": 499, "note": "z" * 1000})


def test_gemini_streamed_string_pieces_count_against_max_argument_bytes() -> None:
    piece = {"jsonPath": "$.a", "stringValue": _X, "willContinue": True}
    head = gemini({"functionCall": {"name": "f", "partialArgs": [piece], "willContinue": True}})
    body = gemini({"functionCall": {"partialArgs": [piece], "willContinue": True}})
    source = Meter(head, endless(body, _SOME))
    peak, error = peak_of(source, "gemini", limits=Limits(max_argument_bytes=_LIMIT))
    assert isinstance(error, LimitExceededError) and (error.limit, error.index) == ("max_argument_bytes", 0)
    assert str(error).startswith("gemini: call index 0: the streamed arguments grew to ")
    assert source.taken < _LIMIT + 64 * 1024
    assert peak < 4 * _LIMIT


def test_gemini_streamed_pieces_hold_at_the_limit() -> None:
    pieces = [{"jsonPath": "$.a", "stringValue": "x" * 97, "willContinue": True}] * 9
    last = {"jsonPath": "$.a", "stringValue": "x" * 97}
    chunk = gemini({"functionCall": {"name": "f", "partialArgs": [*pieces, last]}}, candidate=0)
    end = data({"candidates": [{"index": 0, "content": {"parts": []}, "finishReason": "STOP"}]})
    items, error = run([chunk, end], "gemini", limits=Limits(max_argument_bytes=1000))  # 10 * (3 + 97)
    assert error is None and items[0] == ToolCall(0, None, "f", {"a": "x" * 970})
    _, error = run([chunk, end], "gemini", limits=Limits(max_argument_bytes=999))
    assert isinstance(error, LimitExceededError) and error.limit == "max_argument_bytes"


def test_gemini_candidates_with_only_text_count_against_max_choices() -> None:
    source = Meter(b"", (gemini({"text": "a"}, candidate=n) for n in range(_SOME // 64)))
    peak, error = peak_of(source, "gemini", limits=Limits(max_choices=100))
    assert isinstance(error, LimitExceededError) and (error.limit, error.value) == ("max_choices", 100)
    assert source.taken < 100_000
    assert peak < 256 * 1024


def test_a_responses_call_announced_again_and_again_holds_no_new_ids() -> None:
    # The decoder's lookup maps took every id of every announcement; the accumulator now also
    # refuses a changed item id, but the decoder holds nothing more whatever follows.
    from streamkit.providers import OpenAIResponsesDecoder

    decoder = OpenAIResponsesDecoder()
    for n in range(100):
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "f"}
        decoder.feed_payload({"type": "response.output_item.added", "output_index": 0, "item": item})
    assert (decoder._by_item, decoder._by_call) == ({"fc_0": 0}, {"call_0": 0})


# -- memory ceilings, measured in a fresh interpreter ------------------------------------------------

#: Ceilings, generous on purpose (the measured figures are in the notes printed by the test):
#: the peak as a multiple of a limit on bytes, and in bytes per unit of a limit on a count.
_BYTES_CEILING = 4.0
_PER_UNIT_CEILING = 2048
_COUNTS = {"max_open_calls", "max_calls", "max_choices"}


@pytest.fixture(scope="module")
def measured() -> dict[str, dict[str, object]]:
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-m", "tests.ceilings"], cwd=root, capture_output=True, text=True, timeout=150, check=True
    )
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    for row in rows:  # the figures, shown with pytest -s
        print(f"{row['case']}: {row.get('ratio', row.get('error'))}")  # noqa: T201
    return {row["case"]: row for row in rows}


@pytest.mark.parametrize("case", [*sorted(CEILING_CASES), EVENTSTREAM])
def test_each_limit_keeps_the_peak_memory_under_its_ceiling(
    measured: dict[str, dict[str, object]], case: str, record_property: Callable[[str, object], None]
) -> None:
    row = measured[case]
    record_property("peak_per_limit", row.get("ratio"))
    assert "error" not in row, row["error"]
    ceiling = _PER_UNIT_CEILING if row["limit"] in _COUNTS else _BYTES_CEILING
    assert isinstance(row["ratio"], float | int) and row["ratio"] < ceiling, row


#: Reading one event as long as ``max_event_bytes`` allows holds its bytes, its text and the text
#: of its strings, and the values of at most its token allowance; Python holds a string with text
#: beyond ASCII at up to 4 bytes a character.
_READ_CEILING = 4.5
_WIDE_READ_CEILING = 10.0


@pytest.mark.parametrize("case", sorted(CEILING_READS))
def test_reading_one_event_within_max_event_bytes_keeps_the_peak_memory_under_its_ceiling(
    measured: dict[str, dict[str, object]], case: str, record_property: Callable[[str, object], None]
) -> None:
    row = measured[case]
    record_property("peak_per_limit", row.get("ratio"))
    assert "error" not in row, row["error"]
    ceiling = _WIDE_READ_CEILING if "beyond ASCII" in case else _READ_CEILING
    assert isinstance(row["ratio"], float | int) and row["ratio"] < ceiling, row
