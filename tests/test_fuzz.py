"""Fuzzing every framer and decoder: random and damaged input, any chunking.

The promises checked on every example: the only exceptions that escape are streamkit's own
(``StreamkitError`` subclasses) and render a message; every unfinished call is an
``InvalidToolCall`` marked truncated; work is bounded (an example that runs for seconds is a
hang); damage never changes what was delivered before it. The tests iterate over whatever
exists: every slug in ``DECODERS``, every framer in ``_FRAMERS``, every fixture in
``fixtures/``, every wire shape in ``tests/wire.py``.

Budget: the Hypothesis profile (``tests/conftest.py``) sets the examples of one property; a
property run once per provider or once per fixture shares them out (``PER_PROVIDER``,
``PER_FIXTURE``), so CI time stays flat as providers and fixtures are added.
``HYPOTHESIS_PROFILE=fuzz`` runs many more examples for a long local run.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import signal
import typing
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamkit import (
    DECODERS,
    Assembler,
    InvalidToolCall,
    LimitExceededError,
    ProviderError,
    ProviderProtocolError,
    ResponseEnd,
    StreamError,
    StreamEvent,
    StreamkitError,
    ToolCall,
)
from streamkit._accumulator import Accumulator
from streamkit._assembler import _FRAMERS
from streamkit._cli import _dumps, to_json_line
from streamkit._events import (
    AnomalyNoted,
    ArgumentsDelta,
    ArgumentsFinal,
    ArgumentsRepeated,
    ArgumentsValue,
    CallEnded,
    CallOpened,
    CallReceived,
    ErrorReceived,
    Event,
    Frame,
    RawCall,
    ResponseEnded,
    StopReceived,
    TextReceived,
    UsageReceived,
)
from streamkit._limits import Limits
from streamkit._types import Call

from .helpers import Fixture, fixtures, split_at
from .helpers import slug as as_slug
from .wire import WIRES, OpenAIChatWire, call, run

ALL = fixtures()
IDS = [f.case for f in ALL]
_EXAMPLES = settings().max_examples  # the loaded profile's
#: A per-provider property gets about two providers' worth of examples in all.
PER_PROVIDER = settings(max_examples=max(10, _EXAMPLES * 2 // len(DECODERS)))
#: A per-fixture property gets about eight fixtures' worth of examples in all.
PER_FIXTURE = settings(max_examples=max(5, _EXAMPLES * 8 // max(1, len(ALL))))
Outcome = tuple[list[StreamEvent], StreamkitError | None]


class Hang(BaseException):
    """Raised by the alarm: an example ran far longer than any input of its size needs."""


@contextmanager
def bounded(seconds: float = 10.0) -> Iterator[None]:
    if not hasattr(signal, "setitimer"):  # no interval timer on this platform: no guard
        yield
        return

    def alarm(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no result after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_VALUES = typing.get_args(StreamEvent)  # every kind of value the pipeline may yield


def check_error(error: StreamkitError) -> None:
    assert str(error)  # renders, and says something
    if isinstance(error, StreamError):
        for unfinished in error.unfinished:
            assert isinstance(unfinished, InvalidToolCall) and unfinished.truncated


def drive(chunks: Iterable[bytes], provider: str) -> Outcome:
    """The pipeline's values and its error; any exception that is not a ``StreamError`` escapes."""
    items, error = run(chunks, provider)
    assert all(isinstance(item, _VALUES) for item in items)
    if error is not None:
        check_error(error)
    return items, error


def same(a: Outcome, b: Outcome) -> bool:
    def key(error: StreamkitError | None) -> object:
        if error is None:
            return None
        return type(error), str(error), getattr(error, "unfinished", ())

    return a[0] == b[0] and key(a[1]) == key(b[1])


def frames_of(fixture: Fixture) -> list[Frame]:
    framer = _FRAMERS[DECODERS[fixture.provider].framing]()
    try:
        return framer.feed(fixture.path.read_bytes()) + framer.flush()
    except StreamkitError:
        return []


def payloads() -> Iterator[Any]:
    for fixture in ALL:
        for frame in frames_of(fixture):
            try:
                yield json.loads(frame.data)
            except ValueError:
                continue


def _walk(value: Any) -> Iterator[Any]:
    yield value
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        yield from _walk(child)


# The vocabulary of the fixtures, so that random payloads reach past each decoder's dispatch.
KEYS = sorted({key for p in payloads() for node in _walk(p) if isinstance(node, dict) for key in node}) or ["type"]
TYPES = sorted({node["type"] for p in payloads() for node in _walk(p) if isinstance(node, dict) and "type" in node})
EVENTS = sorted({frame.event for f in ALL for frame in frames_of(f) if frame.event})

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from([*TYPES, "", "[DONE]", "{", '{"a": 1}', "tool_calls", "length"])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=8,
)
PAYLOAD = st.builds(
    lambda kind, rest: {"type": kind, **rest} if kind is not None else rest,
    st.none() | st.sampled_from(TYPES or ["x"]),
    st.dictionaries(st.sampled_from(KEYS), JSON, max_size=5),
)
CUTS = st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=24)


def dump(value: Any) -> str:
    return json.dumps(value, allow_nan=False)


# -- the accumulator's rules, over any sequence of events -----------------------------------------

_INDEX = st.integers(min_value=0, max_value=3)
_CHOICE = st.integers(min_value=0, max_value=1)
_IDS = st.none() | st.sampled_from(["a", "b", "c", ""])
_NAMES = st.none() | st.sampled_from(["f", "g"])
_FRAGMENTS = st.sampled_from(["{", "}", '"a"', ":", "1", "", '{"a":1}'])
ACCUMULATOR_EVENTS = st.one_of(
    st.builds(CallOpened, _INDEX, _IDS, _NAMES, _CHOICE),
    st.builds(ArgumentsDelta, _INDEX, _FRAGMENTS, _CHOICE),
    st.builds(ArgumentsRepeated, _INDEX, _FRAGMENTS, _CHOICE),
    st.builds(ArgumentsValue, _INDEX, st.none() | st.just({"a": 1}) | st.just([1]), _CHOICE),
    st.builds(CallEnded, _INDEX, _CHOICE),
    st.builds(ArgumentsFinal, _INDEX, st.none() | _FRAGMENTS, _CHOICE),
    st.builds(CallReceived, _INDEX, _IDS, _NAMES, st.none() | st.just({}) | st.just("{}"), _CHOICE),
    st.builds(AnomalyNoted, _INDEX, st.sampled_from(["index_reused", "id_repeated"]), _CHOICE),
    st.builds(StopReceived, st.none() | st.sampled_from(["stop", "length"]), st.booleans(), _CHOICE),
    st.builds(TextReceived, st.text(max_size=3), _CHOICE),
    st.builds(UsageReceived, st.just({"output_tokens": 1})),
    st.builds(ResponseEnded),
    st.builds(ErrorReceived, st.none() | st.just("overloaded"), st.just("Overloaded")),
)


@given(events=st.lists(ACCUMULATOR_EVENTS, max_size=30))
def test_the_accumulator_delivers_each_call_at_most_once_whatever_the_order(events: list[Event]) -> None:
    accumulator = Accumulator("fuzz", Limits(max_open_calls=3, max_calls=6, max_argument_bytes=12))
    delivered: list[RawCall] = []
    try:
        for event in events:
            out = accumulator.feed(event)
            assert all(type(item) in (RawCall, TextReceived, ResponseEnded) for item in out)
            delivered += [item for item in out if type(item) is RawCall]
            if accumulator.finished:
                break  # the pipeline reads nothing after the end-of-stream marker
    except (ProviderProtocolError, ProviderError, LimitExceededError) as error:
        assert str(error)
    keys = [(raw.choice, raw.index) for raw in delivered]
    ids = [(raw.choice, raw.id) for raw in delivered if raw.id]  # an id is unique within its choice
    assert len(keys) == len(set(keys)) and len(ids) == len(set(ids))
    assert len(delivered) <= 6
    for raw in delivered:
        assert raw.arguments is None or isinstance(raw.arguments, str | dict | list)
        assert not isinstance(raw.arguments, str) or len(raw.arguments) <= 12
    # The calls still open come out once more, cut off, and never one already delivered.
    drained = accumulator.drain_open()
    assert all(raw.truncated for raw in drained)
    assert not {(raw.choice, raw.index) for raw in drained} & set(keys)


# -- random input --------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", sorted(_FRAMERS))
@given(data=st.binary(max_size=3000), cuts=CUTS)
def test_framers_take_random_bytes(framing: str, data: bytes, cuts: list[int]) -> None:
    framer = _FRAMERS[framing]()
    got: list[Frame] = []
    with bounded():
        try:
            for chunk in split_at(data, cuts):
                got += framer.feed(chunk)
            got += framer.flush()
        except StreamkitError as error:
            check_error(error)
    assert all(type(frame) is Frame and isinstance(frame.data, str) for frame in got)
    assert sum(len(frame.data) for frame in got) <= len(data)


_LINES = st.lists(
    st.tuples(
        st.sampled_from(["data: ", "data:", "data", ": ", "event: ", "id: ", "", "\ufeff", "x"]),
        st.text(max_size=40) | st.sampled_from(['{"a": 1}', "[DONE]", "é😀", "\u2028"]),
        st.sampled_from(["\n", "\r\n", "\r", "\n\n", ""]),
    ),
    max_size=12,
).map(lambda lines: "".join(a + b + c for a, b, c in lines).encode())
FRAMER_INPUT = _LINES | _LINES.map(lambda data: data[: len(data) // 2] + b"\xff" + data[len(data) // 2 :])


@pytest.mark.parametrize("framing", sorted(_FRAMERS))
@given(data=FRAMER_INPUT, limit=st.integers(min_value=1, max_value=120), cuts=CUTS)
def test_framers_decide_the_same_at_any_chunking_also_at_their_limit(
    framing: str, data: bytes, limit: int, cuts: list[int]
) -> None:
    def frames(chunks: list[bytes]) -> tuple[list[Frame], object]:
        framer = _FRAMERS[framing](max_event_bytes=limit)
        got: list[Frame] = []
        try:
            for chunk in chunks:
                got += framer.feed(chunk)
            got += framer.flush()
        except StreamkitError as error:
            return got, (type(error), str(error))
        return got, None

    with bounded():
        whole = frames([data])
        assert frames(split_at(data, cuts)) == whole
        assert frames([data[i : i + 1] for i in range(len(data))]) == whole


@pytest.mark.parametrize("slug", sorted(DECODERS))
@PER_PROVIDER
@given(data=st.binary(max_size=3000), cuts=CUTS)
def test_every_provider_takes_random_bytes(slug: str, data: bytes, cuts: list[int]) -> None:
    with bounded():
        drive(split_at(data, cuts), slug)


DECODER_OPTIONS = [
    pytest.param(slug, early_close, id=f"{slug}{'-early_close' if early_close else ''}")
    for slug in sorted(DECODERS)
    for early_close in ((False, True) if DECODERS[slug].supports_early_close else (False,))
]


@pytest.mark.parametrize(("slug", "early_close"), DECODER_OPTIONS)
@PER_PROVIDER
@given(events=st.lists(st.tuples(st.none() | st.sampled_from(EVENTS or ["x"]), PAYLOAD | JSON), max_size=10))
def test_every_decoder_takes_random_payloads(
    slug: str, early_close: bool, events: list[tuple[str | None, Any]]
) -> None:
    assembler = Assembler(as_slug(slug), early_close=early_close)
    with bounded():
        try:
            for event, payload in events:
                assembler.feed_frame(Frame(event, payload if isinstance(payload, str) else dump(payload)))
            assembler.flush()
        except StreamkitError as error:
            check_error(error)


@pytest.mark.parametrize("slug", sorted(s for s in DECODERS if DECODERS[s].framing == "sse"))
@PER_PROVIDER
@given(
    events=st.lists(st.tuples(st.none() | st.sampled_from(EVENTS or ["x"]), PAYLOAD), max_size=10),
    cuts=CUTS,
)
def test_every_sse_provider_takes_random_events_at_any_chunking(
    slug: str, events: list[tuple[str | None, Any]], cuts: list[int]
) -> None:
    wire = "".join((f"event: {e}\n" if e else "") + f"data: {dump(p)}\n\n" for e, p in events).encode()
    with bounded():
        whole = drive([wire], slug)
        assert same(drive(split_at(wire, cuts), slug), whole)


# -- damaged fixtures ----------------------------------------------------------------------------


def damage(data: bytes, draw: st.DataObject) -> bytes:
    out = bytearray(data)
    for _ in range(draw.draw(st.integers(min_value=1, max_value=4))):
        op = draw.draw(st.sampled_from(["drop", "duplicate", "flip", "insert", "truncate", "line_ends"]))
        i = draw.draw(st.integers(min_value=0, max_value=len(out)))
        j = draw.draw(st.integers(min_value=i, max_value=min(len(out), i + 80)))
        if op == "drop":
            del out[i:j]
        elif op == "duplicate":
            out[i:i] = out[i:j]
        elif op == "flip" and out:
            out[min(i, len(out) - 1)] ^= draw.draw(st.integers(min_value=1, max_value=255))
        elif op == "insert":
            out[i:i] = draw.draw(st.binary(min_size=1, max_size=8))
        elif op == "truncate":
            del out[i:]
        elif op == "line_ends":  # LF to CRLF or CR (or back) in a stretch: a server's other habit
            new = draw.draw(st.sampled_from([b"\r\n", b"\r", b"\n"]))
            out[i:j] = bytes(out[i:j]).replace(b"\r\n", b"\n").replace(b"\n", new)
    return bytes(out)


@pytest.mark.parametrize("fixture", ALL, ids=IDS)
@PER_FIXTURE
@given(draw=st.data(), cuts=CUTS)
def test_damaged_fixture_bytes_give_only_typed_errors(fixture: Fixture, draw: st.DataObject, cuts: list[int]) -> None:
    data = damage(fixture.path.read_bytes(), draw)
    with bounded():
        whole = drive([data], fixture.provider)
        assert same(drive(split_at(data, cuts), fixture.provider), whole)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for position, child in enumerate(value):
            yield from _paths(child, (*path, position))


def _mutate(value: Any, draw: st.DataObject) -> Any:
    """Replace or delete one node of a decoded payload: wrong types, missing keys, odd values."""
    path = draw.draw(st.sampled_from(list(_paths(value))))
    if not path:
        return draw.draw(JSON)
    value = json.loads(json.dumps(value))
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    if isinstance(parent, dict) and draw.draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw.draw(JSON)
    return value


@pytest.mark.parametrize("fixture", ALL, ids=IDS)
@PER_FIXTURE
@given(draw=st.data())
def test_damaged_fixture_payloads_give_only_typed_errors(fixture: Fixture, draw: st.DataObject) -> None:
    frames = frames_of(fixture)
    if not frames:
        return
    chosen = set(draw.draw(st.lists(st.integers(min_value=0, max_value=len(frames) - 1), min_size=1, max_size=3)))
    early_close = DECODERS[fixture.provider].supports_early_close and draw.draw(st.booleans())
    assembler = Assembler(fixture.provider, early_close=early_close)
    with bounded():
        try:
            for number, frame in enumerate(frames):
                if number in chosen:
                    try:
                        frame = Frame(frame.event, dump(_mutate(json.loads(frame.data), draw)))
                    except ValueError:
                        frame = Frame(frame.event, frame.data[: draw.draw(st.integers(0, len(frame.data)))])
                assembler.feed_frame(frame)
            assembler.flush()
        except StreamkitError as error:
            check_error(error)


#: A frame no provider sends: every decoder must ignore it or name it in a typed error.
_UNKNOWN_FRAMES = [
    Frame("x_unknown", '{"type": "x_unknown", "x": 1}'),
    Frame(None, '{"type": "x_unknown"}'),
    Frame("x_unknown", "[]"),
]


@pytest.mark.parametrize("fixture", ALL, ids=IDS)
@PER_FIXTURE
@given(draw=st.data())
def test_repeated_reordered_dropped_and_unknown_events_give_only_typed_errors(
    fixture: Fixture, draw: st.DataObject
) -> None:
    """Whole events damaged: one repeated, two swapped, one dropped, an unknown one put in."""
    frames = frames_of(fixture)
    if not frames:
        return
    for _ in range(draw.draw(st.integers(min_value=1, max_value=3))):
        i = draw.draw(st.integers(min_value=0, max_value=len(frames) - 1))
        j = draw.draw(st.integers(min_value=0, max_value=len(frames) - 1))
        op = draw.draw(st.sampled_from(["repeat", "swap", "drop", "unknown"]))
        if op == "repeat":
            frames.insert(j, frames[i])
        elif op == "swap":
            frames[i], frames[j] = frames[j], frames[i]
        elif op == "drop" and len(frames) > 1:
            del frames[i]
        elif op == "unknown":
            frames.insert(i, draw.draw(st.sampled_from(_UNKNOWN_FRAMES)))
    early_close = DECODERS[fixture.provider].supports_early_close and draw.draw(st.booleans())
    assembler = Assembler(fixture.provider, early_close=early_close)
    with bounded():
        try:
            for frame in frames:
                assert all(isinstance(item, _VALUES) for item in assembler.feed_frame(frame))
            assembler.flush()
        except StreamkitError as error:
            check_error(error)


def cut_points(data: bytes) -> list[int]:
    if len(data) <= 1024:
        return list(range(len(data) + 1))
    near_line_ends = {cut for i, byte in enumerate(data) if byte in b"\r\n" for cut in (i, i + 1, i + 2)}
    spread = range(0, len(data), len(data) // 200)
    return sorted(cut for cut in {*near_line_ends, *spread, len(data)} if cut <= len(data))


def calls_streamed_by(data: bytes, cuts: list[int], provider: str) -> dict[int, list[Call]]:
    """The calls one assembler has delivered once the bytes up to each cut have arrived."""
    assembler = Assembler(as_slug(provider))
    delivered: list[Call] = []
    out: dict[int, list[Call]] = {}
    at = 0
    for cut in cuts:
        with contextlib.suppress(StreamError):  # later cuts keep what was delivered before the error
            delivered += [i for i in assembler.feed(data[at:cut]) if isinstance(i, Call)]
        at = max(at, cut)
        out[cut] = list(delivered)
    return out


@pytest.mark.parametrize("fixture", ALL, ids=IDS)
def test_a_stream_cut_anywhere_keeps_what_was_complete(fixture: Fixture) -> None:
    """Every prefix of the bytes (up to 1 KiB; beyond, every cut next to a line end and 200 more).

    A prefix decodes either to the full run's calls and text (it holds the end marker) or to an
    error; the values delivered before the error are exactly the first values of the full run,
    and every unfinished call is one the full run has, cut off, with the raw text received so
    far. No prefix ever loses a call without an error, with one exception that cannot be told
    apart: OpenAI-compatible servers that send no ``[DONE]`` end the response with the bytes
    once every choice has finished, so a prefix that ends between two events just then is
    that end, and holds the first values of the full run.
    """
    data = fixture.path.read_bytes()
    full, full_error = drive([data], fixture.provider)
    later_calls = [item for item in full if isinstance(item, Call)]
    if isinstance(full_error, StreamError):
        later_calls += full_error.unfinished
    cuts = cut_points(data)
    streamed = calls_streamed_by(data, cuts, fixture.provider)
    with bounded(60):
        for cut in cuts:
            items, error = drive([data[:cut]], fixture.provider)
            # Nothing lost: every call the stream had delivered by this byte is delivered.
            calls = [item for item in items if isinstance(item, Call)]
            assert calls[: len(streamed[cut])] == streamed[cut], cut
            if error is None:
                assert full_error is None, cut
                got = [i for i in items if type(i) is not ResponseEnd]
                whole = [i for i in full if type(i) is not ResponseEnd]
                if got != whole and fixture.provider in ("openai_chat", "mistral"):
                    assert data[:cut].endswith((b"\n\n", b"\r\n\r\n")) and got == whole[: len(got)], cut
                    continue
                assert got == whole, cut
                continue
            assert isinstance(error, StreamError), cut
            assert items == full[: len(items)], cut
            for unfinished in error.unfinished:
                # By its key, and by its id where it has one: a key may start again as a new call.
                match = [
                    c
                    for c in later_calls
                    if (c.choice, c.index) == (unfinished.choice, unfinished.index) and unfinished.id in (None, c.id)
                ]
                assert match, (cut, unfinished)
                assert unfinished.id in (None, match[-1].id) and unfinished.name in (None, match[-1].name), cut
                if isinstance(match[-1], InvalidToolCall):
                    # Text fragments: the text so far. Arguments built as a value (Vertex's
                    # partialArgs): the object so far, as JSON.
                    assert match[-1].raw.startswith(unfinished.raw) or _is_json(unfinished.raw), cut


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _ends_before_eof(fixture: Fixture) -> bool:
    assembler = Assembler(fixture.provider)
    try:
        assembler.feed(fixture.path.read_bytes())
    except StreamkitError:
        return False
    return assembler.finished


ENDED = [f for f in ALL if _ends_before_eof(f)]


@pytest.mark.parametrize("fixture", ENDED, ids=[f.case for f in ENDED])
@PER_FIXTURE
@given(
    garbage=st.binary(min_size=1, max_size=300)
    | st.sampled_from([b"\xff\xfe\n\n", b"data: {\n\n", b"data: [DONE]\n\n", b"x" * 5000, b"\r\n" * 50]),
    cuts=CUTS,
)
def test_garbage_after_the_end_marker_is_never_read(fixture: Fixture, garbage: bytes, cuts: list[int]) -> None:
    data = fixture.path.read_bytes()
    expected = drive([data], fixture.provider)
    with bounded():
        assert same(drive(split_at(data + garbage, cuts), fixture.provider), expected)
        assembler = Assembler(fixture.provider, max_event_bytes=len(data))  # garbage past the limit
        out = assembler.feed(data + garbage) + assembler.flush()
    assert out == expected[0]


def test_every_provider_has_fixtures_and_every_fixture_a_provider() -> None:
    assert {f.provider for f in ALL} == set(DECODERS)


# -- random arguments, random fragments ----------------------------------------------------------

_TEXT = st.text(max_size=10) | st.sampled_from(["\u2028", "\x00", '"\\', "😀", "é\u0085", "</script>"])
_NUMBERS = (
    st.integers()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.1, -0.0, 5e-324, 1.7976931348623157e308, 2**64, -(2**63) - 1, 10**30])
)
ARGUMENTS = st.dictionaries(
    _TEXT,
    st.recursive(
        st.none() | st.booleans() | _NUMBERS | _TEXT,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
        max_leaves=16,
    ),
    max_size=6,
)


@pytest.mark.parametrize("slug", sorted(WIRES))
@given(value=ARGUMENTS, draw=st.data())
def test_random_arguments_in_random_fragments_come_back_equal(slug: str, value: Any, draw: st.DataObject) -> None:
    text = json.dumps(
        value,
        ensure_ascii=draw.draw(st.booleans()),
        indent=draw.draw(st.sampled_from([None, 1])),
        separators=draw.draw(st.sampled_from([(",", ":"), (", ", ": ")])),
    )
    points = sorted({0, len(text), *draw.draw(st.lists(st.integers(0, len(text)), max_size=16))})
    fragments = [text[a:b] for a, b in itertools.pairwise(points)]
    wire = WIRES[slug]
    stream = wire.begin() + call(wire, 0, "call_1", "tool", fragments) + wire.finish()
    items, error = drive(split_at(stream, draw.draw(CUTS)), slug)
    assert error is None
    assert items[0] == ToolCall(0, "call_1", "tool", value)
    line = to_json_line(items[0])
    assert line is not None
    assert json.loads(_dumps(line)) == {"type": "tool_call", "index": 0, "id": "call_1", "name": "tool", "input": value}


# -- what the fuzzing found, kept as regressions -----------------------------------------------


@pytest.mark.parametrize(
    ("slug", "payload", "message"),
    [
        # A "type" that is not a string was looked up in the dispatch table: TypeError.
        ("anthropic", {"type": []}, "anthropic: "),
        # A finish_reason that is not a string was looked up in a frozenset: TypeError.
        (
            "openai_chat",
            {"choices": [{"index": 0, "delta": {}, "finish_reason": []}]},
            "openai_chat: $.choices[0].finish_reason must be a string, got list",
        ),
    ],
)
def test_odd_types_in_known_fields_are_protocol_errors(slug: str, payload: Any, message: str) -> None:
    from streamkit import ProviderProtocolError

    with pytest.raises(ProviderProtocolError) as info:
        Assembler(as_slug(slug)).feed_frame(Frame(None, dump(payload)))
    assert str(info.value).startswith(message)
    assert "type" in str(info.value) if slug == "anthropic" else str(info.value) == message


def test_a_groq_usage_holder_that_is_not_an_object_is_ignored() -> None:
    # Found while writing the payload fuzzer: a non-object x_groq raised AttributeError.
    out = Assembler("openai_chat").feed_frame(Frame(None, dump({"choices": [], "x_groq": "x"})))
    assert out == []


def test_a_vertex_path_with_an_index_of_thousands_of_digits_is_a_protocol_error() -> None:
    # int() refuses more than 4,300 digits with a ValueError; no array is that long anyway.
    piece = {"jsonPath": "$.a[" + "1" * 5000 + "]", "stringValue": "x"}
    part = {"functionCall": {"name": "f", "partialArgs": [piece], "willContinue": False}}
    chunk = {"candidates": [{"index": 0, "content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}]}
    with pytest.raises(ProviderProtocolError, match="an array index of 5000 digits"):
        Assembler("gemini").feed_frame(Frame(None, dump(chunk)))


def test_a_text_line_with_a_lone_surrogate_is_a_framing_error_after_the_calls_before_it() -> None:
    from streamkit import FramingError, iter_events

    wire = WIRES["anthropic"]
    head = wire.begin() + call(wire, 0, "c0", "f", ['{"a": 1}']) + wire.start(1, "c1", "f") + wire.fragment(1, "{")
    got: list[StreamEvent] = []
    with pytest.raises(FramingError, match=r"'\\ud800', a lone surrogate") as info:
        for item in iter_events([*head.decode().splitlines(keepends=True), "data: \ud800\n"], "anthropic"):
            got.append(item)  # noqa: PERF402 - what came before the error is kept
    assert got == [ToolCall(0, "c0", "f", {"a": 1})]
    assert [(c.index, c.raw) for c in info.value.unfinished] == [(1, "{")]


@pytest.mark.parametrize("data", ["data: {}\n\n", 12, None, ["data: x"]])
def test_feed_takes_bytes_only(data: Any) -> None:
    from streamkit import UsageError

    with pytest.raises(UsageError, match=f"Assembler.feed takes bytes, got {type(data).__name__}"):
        Assembler("openai_chat").feed(data)


def test_feed_takes_a_bytearray_as_bytes() -> None:
    wire = OpenAIChatWire()
    data = wire.begin() + call(wire, 0, "c0", "f", ['{"a": 1}']) + wire.finish()
    assert Assembler("openai_chat").feed(bytearray(data)) == Assembler("openai_chat").feed(data)  # type: ignore[arg-type]


# -- the normalizer against a strict reference parser ----------------------------------------------

_JSON_SPACE = " \t\n\r"


def reference(text: str) -> tuple[bool, Any]:
    """The rules, written plainly with the standard library: (valid, value)."""
    if not text.strip(_JSON_SPACE):
        return True, {}

    def reject(name: str) -> Any:
        raise ValueError(name)

    try:
        value = json.loads(text, parse_constant=reject)
    except (ValueError, RecursionError):
        return False, None
    for node in _walk(value):
        strings = [node] if isinstance(node, str) else list(node) if isinstance(node, dict) else []
        for string in strings:
            try:
                string.encode()
            except UnicodeEncodeError:
                return False, None
        if isinstance(node, float) and node in (float("inf"), float("-inf")):
            return False, None
    if value is None:
        return True, {}
    return isinstance(value, dict), value


_EDITS = st.sampled_from([*'{}[],:"\\ 0123456789eE.-+ntfrulsa', "\t", "\x0b", "\xa0", "\u2028", "\ud800", "é"])


@given(value=ARGUMENTS, draw=st.data())
def test_the_normalizer_agrees_with_a_strict_reference_parser(value: Any, draw: st.DataObject) -> None:
    from streamkit._normalize import parse_arguments

    text = json.dumps(value, ensure_ascii=draw.draw(st.booleans()), indent=draw.draw(st.sampled_from([None, 1])))
    for _ in range(draw.draw(st.integers(min_value=0, max_value=3))):
        at = draw.draw(st.integers(min_value=0, max_value=len(text)))
        edit = draw.draw(st.sampled_from(["insert", "delete", "replace"]))
        char = draw.draw(_EDITS)
        if edit == "insert":
            text = text[:at] + char + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + char + text[at + 1 :]
    valid, expected = reference(text)
    parsed, issue, _ = parse_arguments(text)
    if valid:
        assert issue is None and parsed == expected, text
    else:
        assert parsed is None and issue is not None, text
        assert issue.kind in ("invalid_json", "concatenated_json", "not_an_object", "too_deep")


_PATH = ("message", "tool_calls", None, "function", "arguments")


@given(
    calls=st.lists(st.dictionaries(st.sampled_from(["arguments", "name", "x"]), JSON, max_size=3), max_size=4),
    around=st.dictionaries(st.sampled_from(["arguments", "function", "tool_calls", "y"]), JSON, max_size=3),
    draw=st.data(),
)
def test_the_structure_scan_finds_exactly_the_values_on_a_path(
    calls: list[dict[str, Any]], around: dict[str, Any], draw: st.DataObject
) -> None:
    """What the decoders set aside when an event holds a value no reader takes: the scan must
    find each value on the path, whole, and nothing else, however the JSON is laid out."""
    from streamkit._json import value_spans

    document = {**around, "message": {**around, "tool_calls": [{**around, "function": call} for call in calls]}}
    text = json.dumps(document, ensure_ascii=draw.draw(st.booleans()), indent=draw.draw(st.sampled_from([None, 0, 2])))
    expected = [call["arguments"] for call in calls if "arguments" in call and not isinstance(call["arguments"], str)]
    spans = value_spans(text, (_PATH,))
    assert spans is not None
    assert [json.loads(text[start:end]) for start, end, _ in spans] == expected


@pytest.mark.parametrize("text", ["", " \t\r\n", "\x0b", "\xa0", "\u2028", " \x0c "])
def test_only_json_whitespace_counts_as_no_arguments(text: str) -> None:
    # Found while writing the reference: any Unicode space (a vertical tab, a no-break
    # space) was read as "no arguments" and became {}; only JSON's four spaces mean that.
    from streamkit._normalize import parse_arguments

    parsed, issue, _ = parse_arguments(text)
    valid, expected = reference(text)
    assert (parsed, issue is None) == ((expected, True) if valid else (None, False))
    assert valid == (not text.strip(_JSON_SPACE))


def test_a_call_id_that_arrives_late_must_still_be_unique() -> None:
    # Found by the accumulator property: an id given to an open call after its start was not
    # checked, so two calls came out with the same id (a tool run twice, its results mixed).
    accumulator = Accumulator("fuzz")
    accumulator.feed(CallOpened(0, None, "f"))
    accumulator.feed(CallOpened(1, "b", "g"))
    with pytest.raises(ProviderProtocolError) as info:
        accumulator.feed(CallOpened(0, "b", None))
    assert str(info.value) == "fuzz, event 'CallOpened', call index 0: call id 'b' was already used at index 1"
    # The same through OpenAI Chat, where the id of call 0 comes on a later fragment.
    wire = OpenAIChatWire()
    late = wire.chunk({"tool_calls": [{"index": 0, "id": "b", "function": {"arguments": "{}"}}]})
    entry = {"index": 0, "function": {"name": "f", "arguments": ""}}
    data = wire.begin() + wire.chunk({"tool_calls": [entry]}) + wire.start(1, "b", "g") + late + wire.finish()
    items, error = run([data], "openai_chat")
    assert isinstance(error, ProviderProtocolError)
    assert str(error) == "openai_chat, event 'CallOpened', call index 0: call id 'b' was already used at index 1"
    assert items == []
