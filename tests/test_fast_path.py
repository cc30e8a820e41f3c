"""The hot path of each stage gives exactly what the general path gives.

The SSE framer hands the common event shape over as ``Payloads`` and the decoders read a
call's plain fragments through a learned byte template; the general path is the framer's
``Frame``s and each decoder's full reading of every payload. Every fixture, and fuzzed streams
of fragments with tricky tokens, give the same values and the same error either way, at reads
of 1, 7 and 64 bytes, 1 MiB and random splits, and one or three SSE events per read, where the
pipeline's hot read (``streamkit._hot``) takes a call's fragments in one stage crossing. Streams
generated in every SSE provider's shape, then damaged, give through every driver what the
general path gives (``general``: every fast path off).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamkit import (
    DECODERS,
    InvalidToolCall,
    Limits,
    StreamError,
    TextDelta,
    ToolCall,
    aiter_events,
    aiter_tool_calls,
    iter_events,
    iter_tool_calls,
)
from streamkit._assembler import Assembler
from streamkit._events import Frame, Payloads
from streamkit._hot import TemplateReader, _learn, text_delta
from streamkit._sources import _line as line_bytes
from streamkit._sse import SSEDecoder
from streamkit.providers import OpenAIChatDecoder

from .helpers import fixtures, slug, split_at
from .wire import OpenAIChatWire, call

ALL = fixtures()
SIZES = (1, 7, 64, 1 << 20)
Outcome = tuple[list[Any], tuple[str, str, dict[str, Any]] | None]


def general(assembler: Assembler) -> Assembler:
    """``assembler`` with every fast path off: the framer splits each read line by line and
    hands over ``Frame``s only, and the decoder reads every payload whole, so it learns no
    template and no hot read is ever armed."""
    framer = assembler._framer
    assembler._read = framer.feed  # Frames only
    assembler._one = None  # a read of one event framed as any other
    if isinstance(framer, SSEDecoder):
        setattr(framer, "_quick", lambda chunk, out: False)  # noqa: B010  # no region split at once
    setattr(assembler._decoder, "plain_fragments", False)  # noqa: B010  # every payload read whole
    setattr(assembler._decoder, "plain_text", False)  # noqa: B010
    return assembler


def error_of(exc: StreamError) -> tuple[str, str, dict[str, Any]]:
    """An error as compared: its type, its message and every attribute (the unfinished calls)."""
    return type(exc).__name__, str(exc), dict(vars(exc))


def run(data_chunks: list[bytes], provider: str, *, fast: bool, **options: Any) -> Outcome:
    """The values and the error (type, message, attributes) of one response."""
    assembler = Assembler(provider, **options)  # type: ignore[arg-type]  # a slug from the fixtures
    if not fast:
        general(assembler)
    out: list[Any] = []
    try:
        for chunk in data_chunks:
            out += assembler.feed(chunk)
            if assembler.finished:
                break
        out += assembler.flush()
    except StreamError as exc:
        return out, error_of(exc)
    return out, None


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)] or [b""]


def by_events(data: bytes, per: int) -> list[bytes]:
    """The bytes as a token-streaming server sends them: ``per`` SSE events a read."""
    events = [piece + b"\n\n" for piece in data.split(b"\n\n")]
    events[-1] = events[-1][:-2]
    reads = [b"".join(events[at : at + per]) for at in range(0, len(events), per)]
    return [read for read in reads if read] or [b""]


def same(data: bytes, provider: str, chunks: list[bytes], **options: Any) -> Outcome:
    fast = run(chunks, provider, fast=True, **options)
    assert fast == run(chunks, provider, fast=False, **options)
    return fast


@pytest.mark.parametrize("fixture", ALL, ids=[f.case for f in ALL])
@pytest.mark.parametrize("size", SIZES)
def test_every_fixture_is_the_same_on_both_paths(fixture: Any, size: int) -> None:
    data = fixture.path.read_bytes()
    same(data, fixture.provider, chunked(data, size))


@pytest.mark.parametrize("fixture", ALL, ids=[f.case for f in ALL])
@pytest.mark.parametrize("per", [1, 3])
def test_every_fixture_is_the_same_on_both_paths_events_per_read(fixture: Any, per: int) -> None:
    data = fixture.path.read_bytes()
    assert b"".join(by_events(data, per)) == data
    same(data, fixture.provider, by_events(data, per))


@given(st.sampled_from(ALL), st.lists(st.integers(0, 1 << 16), max_size=12))
def test_every_fixture_is_the_same_on_both_paths_at_random_splits(fixture: Any, cuts: list[int]) -> None:
    data = fixture.path.read_bytes()
    same(data, fixture.provider, split_at(data, [cut % (len(data) + 1) for cut in cuts]))


# -- fuzzed streams -------------------------------------------------------------------------

#: String tokens as they may appear on the wire, good and bad: escapes, an escaped quote, an
#: invalid escape, a lone surrogate, a token that closes early and opens another field.
TOKENS = (
    '"{\\"a\\": 1}"',
    '"\\u00e9\\n\\t"',
    '"caf\u00e9 \U0001f680"',
    '"\\ud83d\\ude80"',
    '"\\ud800"',
    '"\\x"',
    '"a\\"b"',
    '""',
    '"abc","index":1,"x":"y"',
    '"chatcmpl-1"',
    '"tool_calls"',
    '"error"',
    '"\\u0000streamkit probe\\u0000"',
)
plain = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=6)
written = plain.map(lambda text: orjson.dumps(text).decode())  # as the providers write it
texts = st.one_of(written, written, written, written, plain.map(json.dumps), st.sampled_from(TOKENS))
#: OpenAI's obfuscation padding: letters and digits of any length, none, or (rarely) a string
#: the template must not take for padding; an Anthropic fragment with a padding is named otherwise.
PLAIN_PADS = ["", "a", "Zq7", "x0x0x0x0x", "K", "pp", "abc123", None, None]
pads = st.sampled_from([*PLAIN_PADS, 'a"b', "a\\\\b", "a b", "\u00e9", "\x01", "\\x"])


def _openai_event(kind: str, token: str, wire: int, pad: str | None) -> str:
    head = '{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":'
    tail = ',"finish_reason":null}]' + ("" if pad is None else f',"obfuscation":"{pad}"') + "}"
    if kind == "fragment":
        return f'{head}{{"tool_calls":[{{"index":{wire},"function":{{"arguments":{token}}}}}]}}{tail}'
    if kind == "start":
        start = {"index": wire, "id": f"call_{wire}_{token[:3]}", "function": {"name": "f", "arguments": ""}}
        return head + json.dumps({"tool_calls": [start]}) + tail
    if kind == "reasoning":
        return f'{head}{{"reasoning_content":{token}}}{tail}'
    if kind == "text":
        return f'{head}{{"content":{token}}}{tail}'
    if kind == "finish":
        return head + '{},"finish_reason":"tool_calls"}]}'
    if kind == "done":
        return "[DONE]"
    return "{not json"


def _anthropic_event(kind: str, token: str, index: int, pad: str | None) -> str:
    if kind == "fragment":
        delta = f'{{"type":"input_json_delta","partial_json":{token}}}'
        name = "content_block_delta" if pad != "K" else "other"
        payload = f'{{"type":"content_block_delta","index":{index},"delta":{delta}}}'
        return f"event: {name}\ndata: {payload}"
    if kind == "start":
        block = {"type": "tool_use", "id": f"toolu_{index}", "name": "f", "input": {}}
        return "event: content_block_start\ndata: " + json.dumps(
            {"type": "content_block_start", "index": index, "content_block": block}
        )
    if kind == "reasoning":
        return f'data: {{"type":"content_block_delta","index":{index},"delta":{{"type":"text_delta","text":{token}}}}}'
    if kind == "text":
        return ': a comment\nevent: ping\ndata: {"type": "ping"}'
    if kind == "finish":
        return f'event: content_block_stop\ndata: {{"type":"content_block_stop","index":{index}}}'
    if kind == "done":
        return 'event: message_stop\ndata: {"type":"message_stop"}'
    return "data: {not json"


kinds = st.sampled_from(["fragment"] * 30 + ["start", "reasoning", "text", "finish", "done", "bad"])
indices = st.sampled_from([0] * 8 + [1])
events = st.lists(st.tuples(kinds, texts, indices, pads), min_size=4, max_size=60)


def _stream(provider: str, drawn: list[tuple[str, str, int, str | None]]) -> bytes:
    if provider in ("openai_chat", "mistral"):
        first = [_openai_event("start", '"x"', 0, None)]
        body = [_openai_event(*item) for item in drawn]
        return "".join(f"data: {line}\n\n" for line in first + body).encode()
    start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}'
    body = [_anthropic_event("start", "", 0, None), *(_anthropic_event(*item) for item in drawn)]
    return "".join(f"{block}\n\n" for block in [start, *body]).encode()


options = st.sampled_from(
    [
        {},
        {"limits": Limits(max_argument_bytes=40)},
        {"fragments": True},
        {"previews": True, "preview_every": 3},
        {"max_event_bytes": 120},
    ]
)
chunkings = st.one_of(
    st.sampled_from(SIZES), st.lists(st.integers(0, 4000), max_size=10), st.sampled_from(["1 event", "3 events"])
)


#: Where a stream is cut: nowhere, or at a byte (modulo its length, so any byte can be drawn).
cuts = st.one_of(st.none(), st.integers(0, 1 << 16))


@settings(max_examples=300)
@given(st.sampled_from(["openai_chat", "mistral", "anthropic"]), events, chunkings, options, cuts)
def test_fuzzed_streams_are_the_same_on_both_paths(
    provider: str,
    drawn: list[tuple[str, str, int, str | None]],
    chunking: int | list[int] | str,
    option: dict[str, Any],
    cut: int | None,
) -> None:
    data = _stream(provider, drawn)
    if cut is not None:  # a stream whose end is the end of its bytes, cut anywhere
        data = data[: cut % (len(data) + 1)]
    if isinstance(chunking, str):
        chunks = by_events(data, int(chunking[0]))
    else:
        chunks = chunked(data, chunking) if isinstance(chunking, int) else split_at(data, chunking)
    same(data, provider, chunks, **option)


# -- the hot path is taken --------------------------------------------------------------------


def _counted(stage: Any, method: str) -> list[int]:
    """Count the calls of ``stage.method`` from now on."""
    calls = [0]
    wrapped = getattr(stage, method)

    def counted(item: Any) -> Any:
        calls[0] += 1
        return wrapped(item)

    setattr(stage, method, counted)
    return calls


def _long_call(provider: str) -> tuple[dict[str, Any], bytes]:
    """A call of more than 200 fragments of 4 characters, with OpenAI's obfuscation padding
    changing on every chunk; its arguments and the response."""
    arguments = {"content": "".join(f"{n}é" for n in range(200))}
    text = json.dumps(arguments)
    pieces = [text[start : start + 4] for start in range(0, len(text), 4)]
    assert len(pieces) > 200
    padded = provider == "openai_chat"
    drawn: list[tuple[str, str, int, str | None]] = [
        ("fragment", json.dumps(piece), 0, "p" * (n % 7) if padded else None) for n, piece in enumerate(pieces)
    ]
    return arguments, _stream(provider, [*drawn, ("finish", "", 0, None), ("done", "", 0, None)])


@pytest.mark.parametrize("provider", ["openai_chat", "anthropic"])
def test_a_long_call_is_read_through_its_template(provider: str) -> None:
    # 200 fragments, with OpenAI's obfuscation padding changing on every chunk: the general path
    # reads the events around the call, the first fragment and the probes that prove its
    # template, and no other fragment.
    arguments, data = _long_call(provider)
    assembler = Assembler(provider)  # type: ignore[arg-type]  # one of the two slugs
    calls = _counted(assembler._decoder, "feed")
    values = assembler.feed(data) + assembler.flush()
    assert isinstance(values[0], ToolCall)
    assert values[0].input == arguments
    assert calls[0] <= 10


@pytest.mark.parametrize("provider", ["openai_chat", "anthropic"])
@pytest.mark.parametrize("reading", ["1 event", "3 events", "1 KiB"])
def test_a_long_call_is_read_hot(provider: str, reading: str) -> None:
    # Read as a token-streaming server sends it (or in reads of a fixed size, each ending inside
    # an event), a long call's fragments after the first few never reach the framer: the hot
    # read takes them in one crossing, holds the start of an event a read ends inside, and hands
    # the stages their bookkeeping (the framer's offset) when a read of another shape comes.
    arguments, data = _long_call(provider)
    assembler = Assembler(provider)  # type: ignore[arg-type]  # one of the two slugs
    general = _counted(assembler, "_read")
    reads = chunked(data, 1024) if reading == "1 KiB" else by_events(data, int(reading[0]))
    values: list[Any] = []
    for chunk in reads:
        values += assembler.feed(chunk)
    values += assembler.flush()
    assert values[0] == ToolCall(0, values[0].id, "f", arguments)
    assert len(reads) > {"1 event": 200, "3 events": 70, "1 KiB": 20}[reading]
    assert general[0] <= 10
    assert vars(assembler._framer)["_consumed"] == len(data)  # every byte counted, hot or not


def _tried(pattern: Any, tried: list[bytes]) -> Any:
    """``pattern``, noting each bytes it is tried on in ``tried``."""

    def match(data: bytes, *at: int) -> Any:
        tried.append(data)
        return pattern(data, *at)

    return match


def test_a_read_of_one_event_of_a_plain_shape_tries_no_pattern() -> None:
    # Anthropic's fragments hold no unread string: a read of one such event is read by its line
    # ends and one strict parse of its token, with no pattern tried.
    arguments, data = _long_call("anthropic")
    assembler = Assembler("anthropic")
    tried: list[bytes] = []
    patched: set[int] = set()
    values: list[Any] = []
    for chunk in by_events(data, 1):
        hot = assembler.hot
        if hot is not None and id(hot) not in patched:
            patched.add(id(hot))
            hot.match = _tried(hot.match, tried)
        values += assembler.feed(chunk)
    values += assembler.flush()
    assert values[0] == ToolCall(0, values[0].id, "f", arguments)
    assert patched
    assert tried == []


def test_a_template_never_takes_another_field_for_the_fragment() -> None:
    # The text of the first fragment is also the model's name, which comes later in the payload:
    # the template must still be the arguments' place, proved by the probe.
    decoder = OpenAIChatDecoder()
    start = {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f"}}]}}]}
    decoder.feed(Frame(None, json.dumps(start)))

    def chunk(arguments: str, model: str) -> bytes:
        entry = {"index": 0, "function": {"arguments": arguments}}
        return json.dumps({"choices": [{"delta": {"tool_calls": [entry]}}], "model": model}).encode()

    out: list[Any] = []
    TemplateReader(decoder).read([Payloads(None, [chunk("x", "x"), chunk("y", "x"), chunk("x", "z")])], out)
    texts = [text for event in out for text in getattr(event, "texts", [getattr(event, "text", None)])]
    assert texts == ["x", "y", "x"]


@pytest.mark.parametrize("read", [1, 7, 1 << 20])
def test_a_fragment_for_a_closed_block_is_an_error_after_the_template(read: int) -> None:
    def event(name: str, body: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps({'type': name, **body})}\n\n".encode()

    def delta(text: str) -> bytes:
        return event("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta", "partial_json": text}})

    start = {"index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}
    data = (
        event("content_block_start", start) + delta('{"a"') + delta(": 1}") + event("content_block_stop", {"index": 0})
    )
    data += delta("c")  # the template learned, the block closed: the table rejects it, on either path
    assembler = Assembler("anthropic")
    out: list[Any] = []
    with pytest.raises(StreamError, match="not allowed in state DELIVERED: the call was already delivered"):
        for at in range(0, len(data), read):
            out += assembler.feed(data[at : at + read])
        assembler.flush()  # an error after a delivered call is kept for the next call
    assert out == [ToolCall(0, "t", "f", {"a": 1})]


@pytest.mark.parametrize("provider", ["openai_chat", "anthropic"])
@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize("pad", ["Zq", "\x01", 'a"b', "\\x", "a b", None])
def test_each_token_and_padding_after_a_learned_template(provider: str, token: str, pad: str | None) -> None:
    drawn = [("fragment", '"ab"', 0, "x"), ("fragment", '"cd"', 0, "yy"), ("fragment", token, 0, pad)]
    drawn += [("fragment", '"ef"', 0, "z"), ("finish", "", 0, None), ("done", "", 0, None)]
    data = _stream(provider, drawn)
    for size in SIZES:
        same(data, provider, chunked(data, size))
    for per in (1, 3):  # a read that ends with the template's suffix: the hot read's common case
        same(data, provider, by_events(data, per))


@pytest.mark.parametrize("provider", ["openai_chat", "anthropic"])
def test_a_template_is_proved_by_one_probe_once_per_shape(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Learning the call's template costs one probe (OpenAI's padding proved unread by the same
    # one), once in the stream; a second response of the same shape proves it again, with its
    # own decoder: no proof is shared between streams.
    probes: list[tuple[int, int] | None] = []
    prove = TemplateReader._proves

    def counted(reader: TemplateReader, *args: Any) -> bool:
        probes.append(args[-1])
        return prove(reader, *args)

    monkeypatch.setattr(TemplateReader, "_proves", counted)
    arguments, data = _long_call(provider)
    first = run(by_events(data, 1), provider, fast=True)
    assert len(probes) == 1
    assert (probes[0] is not None) is (provider == "openai_chat")  # OpenAI's obfuscation: a hole
    assert run(by_events(data, 1), provider, fast=True) == first
    assert len(probes) == 2
    assert isinstance(first[0][0], ToolCall)
    assert first[0][0].input == arguments


def test_a_padding_the_decoder_reads_is_never_a_hole() -> None:
    # The last string of the chunk is "object", which an error chunk sets to "error": the probe's
    # padding is that value, so the template keeps the chunk's own "object" as fixed bytes, and a
    # chunk that says "error" is read by the general path, as the error it is, on both paths.
    def chunk(arguments: str, kind: str) -> str:
        entry = {"index": 0, "function": {"arguments": arguments}}
        return orjson.dumps({"choices": [{"delta": {"tool_calls": [entry]}}], "object": kind}).decode()

    start = {"index": 0, "id": "c", "function": {"name": "f", "arguments": ""}}
    lines = [orjson.dumps({"choices": [{"delta": {"tool_calls": [start]}}], "object": "chunk"}).decode()]
    lines += [chunk('{"a', "chunk"), chunk('": ', "chunk"), chunk("1", "error"), chunk("}", "chunk"), "[DONE]"]
    data = "".join(f"data: {line}\n\n" for line in lines).encode()
    for reads in (by_events(data, 1), by_events(data, 3), chunked(data, 1 << 20)):
        values, error = same(data, "openai_chat", reads)
        assert values == []
        assert error is not None
        assert error[0] == "ProviderError"


@pytest.mark.parametrize(("text", "choice", "index"), [("a", 0, None), ("déjà 数据", 2, 5), ("", 0, 0)])
def test_a_text_delta_made_from_its_slots_is_the_dataclass_value(text: str, choice: int, index: int | None) -> None:
    # The hot read and the composer set a TextDelta's slots directly: every field the class has
    # is set, so the value equals, hashes and prints as the one its __init__ makes.
    made = text_delta(text, choice, index)
    assert [field.name for field in dataclasses.fields(TextDelta)] == ["text", "choice", "index"]
    assert made == TextDelta(text, choice=choice, index=index)
    assert hash(made) == hash(TextDelta(text, choice=choice, index=index))
    assert repr(made) == repr(TextDelta(text, choice=choice, index=index))


def test_the_proofs_kept_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each call of a stream is a shape of its own (its index sits in the prefix): the proofs a
    # stream keeps never pass the bound, and the calls after they were forgotten read the same.
    monkeypatch.setattr(_learn, "_MAX_PROOFS", 3)
    wire = OpenAIChatWire()
    fragments = ['{"a": "', *"abcdefgh", '"}']
    data = wire.begin() + b"".join(call(wire, index, f"c{index}", "f", fragments) for index in range(7))
    data += wire.finish()
    assembler = Assembler("openai_chat")
    kept: list[int] = []
    values: list[Any] = []
    for read in by_events(data, 1):
        values += assembler.feed(read)
        kept.append(len(vars(assembler)["_reader"]._proofs))
    values += assembler.flush()
    assert [value.input for value in values if isinstance(value, ToolCall)] == [{"a": "abcdefgh"}] * 7
    assert max(kept) == 3
    assert same(data, "openai_chat", by_events(data, 1))[0] == values


#: A stream that ends where its bytes end (no ``[DONE]``), cut inside its last event, after text
#: that came after the finish: the hot read held the cut event's start.
_CUT_AFTER_FINISH = (
    b'data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":"b"}}]}\n\n'
    b'data: {"choi'
)


@pytest.mark.parametrize("provider", ["openai_chat", "mistral"])
@pytest.mark.parametrize("per", [1, 2, 3])
def test_a_last_event_cut_after_the_finish_is_an_incomplete_stream_on_both_paths(provider: str, per: int) -> None:
    # Regression: the bytes the hot read held went back through it and were lost to the framer,
    # so the cut read as a clean end (``ResponseEnd(stop)``) on the fast path only.
    for reads in (by_events(_CUT_AFTER_FINISH, per), chunked(_CUT_AFTER_FINISH, 5)):
        _, error = same(_CUT_AFTER_FINISH, provider, reads)
        assert error is not None and error[0] == "IncompleteStreamError", (provider, reads)


# -- a cut last event after the finish ------------------------------------------------------------

#: OpenAI Chat with no ``[DONE]``: the response ends with the bytes once its choice finished, so
#: a last event cut off is all that tells a clean end from a cut one. Text after the finish
#: proves a text template, and the hot read holds the start of the cut event.
FINISHED_THEN_TEXT = (
    b'data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":"b"}}]}\n\n'
)
CUT_EVENTS = {
    "text": b'data: {"choi',
    "a call's start": b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f"',
    "a whole line": b'data: {"choices":[{"index":0,"delta":{"content":"c"}}]}\n',
}


@pytest.mark.parametrize("provider", ["openai_chat", "mistral"])
@pytest.mark.parametrize("cut", list(CUT_EVENTS), ids=list(CUT_EVENTS))
def test_a_last_event_cut_after_text_past_the_finish_is_no_clean_end(provider: str, cut: str) -> None:
    # The hot read held the start of the cut event; at the end of input it went back to the
    # framer, and a hot read armed again took it away, so the framer saw a clean end. A call
    # whose start the cut event holds is never read (an SSE event cut off is dropped): the
    # error says the stream was cut, on either path.
    data = FINISHED_THEN_TEXT + CUT_EVENTS[cut]
    message = "the stream ended before the provider's end-of-stream marker"
    expected = (
        [TextDelta("a"), TextDelta("b")],
        (
            "IncompleteStreamError",
            f"{provider}: {message}",
            {"provider": provider, "message": message, "unfinished": ()},
        ),
    )
    for chunks in (*(chunked(data, size) for size in SIZES), by_events(data, 1)):
        assert same(data, provider, chunks) == expected
        for name, drive in DRIVERS.items():
            assert drive(chunks, provider, {}) == seen_by(name, expected), name


# -- generated streams through every driver ------------------------------------------------------
#
# Whole responses written in each SSE provider's wire shape (text and up to four calls in small
# fragments, unicode, usage, text after the finish, a second response on the same body), then
# formatted (CRLF, comments, a BOM) and damaged (events repeated, dropped or swapped; a byte
# flipped; cut inside an event, most often the last), read by every driver at several chunkings.
# Each must give exactly what one ``Assembler`` with every fast path off gives over the whole
# body at once: the same values, and the same error with the same attributes. Cut inside each of
# its events, the body gives the same on both paths too.


async def _trickle(chunks: Iterable[Any]) -> AsyncIterator[Any]:
    for chunk in chunks:
        await asyncio.sleep(0)
        yield chunk


def _caught(values: Iterable[Any]) -> Outcome:
    out: list[Any] = []
    try:
        for value in values:
            out.append(value)  # noqa: PERF402 - the values before an error are kept
    except StreamError as exc:
        return out, error_of(exc)
    return out, None


async def _acaught(values: AsyncIterator[Any]) -> Outcome:
    out: list[Any] = []
    try:
        async for value in values:
            out.append(value)  # noqa: PERF401 - the values before an error are kept
    except StreamError as exc:
        return out, error_of(exc)
    return out, None


Driver = Callable[[list[Any], str, dict[str, Any]], Outcome]


def _sync(function: Callable[..., Iterable[Any]]) -> Driver:
    return lambda chunks, provider, options: _caught(function(chunks, slug(provider), **options))


def _async(function: Callable[..., AsyncIterator[Any]], source: Callable[[list[Any]], Any]) -> Driver:
    return lambda chunks, provider, options: asyncio.run(_acaught(function(source(chunks), slug(provider), **options)))


#: Every driver over a source of bytes (the ``Assembler`` fed read by read is ``run``).
DRIVERS: dict[str, Driver] = {
    "iter_events": _sync(iter_events),
    "iter_tool_calls": _sync(iter_tool_calls),
    "aiter_events": _async(aiter_events, _trickle),
    "aiter_events over a plain iterable": _async(aiter_events, list),
    "aiter_tool_calls": _async(aiter_tool_calls, _trickle),
}
CALLS_ONLY = frozenset({"iter_tool_calls", "aiter_tool_calls"})


def seen_by(driver: str, outcome: Outcome) -> Outcome:
    """What ``driver`` gives of a stream that gives ``outcome``: only the calls, for the calls' drivers."""
    values, error = outcome
    if driver in CALLS_ONLY:
        values = [value for value in values if isinstance(value, ToolCall | InvalidToolCall)]
    return values, error


@dataclasses.dataclass(frozen=True)
class Said:
    """Pieces of the answer's text, each sent in an event of its own."""

    pieces: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Called:
    """A call: its arguments, and the fragments of their JSON text it is sent in."""

    arguments: dict[str, Any]
    fragments: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Script:
    """One response, as any provider writes it: its parts in order, the finish, usage, the end marker."""

    parts: tuple[Said | Called, ...]
    usage: bool
    finish: str  # "stop", "tool_calls" or "length", named as each provider names it
    ended: bool  # the provider's end marker is sent (Gemini: the finishReason)
    #: Text after the finish, where the end is the end of the bytes (OpenAI Chat, Gemini).
    late: tuple[str, ...]


#: Characters that stress the template and the framer: multi-byte ones split across reads, a
#: quote and a backslash escaped, line ends JSON escapes, U+2028 that ``str.splitlines`` cuts at.
PIECE = st.text(st.sampled_from([*"ab {", '"', "\\", "\n", "é", "数", "😀", "\u2028", "\x00"]), min_size=1, max_size=4)
VALUE = st.one_of(st.integers(-3, 9), st.sampled_from([2**64 - 1, 0.1, 1e300]), st.booleans(), st.none(), PIECE)
ARGUMENTS = st.dictionaries(st.sampled_from(["a", "city", "数"]), VALUE, max_size=3)


@st.composite
def _called(draw: st.DrawFn) -> Called:
    arguments = draw(ARGUMENTS)
    text = json.dumps(arguments, ensure_ascii=draw(st.booleans()))
    cuts = draw(st.lists(st.integers(1, len(text) - 1), max_size=5))
    bounds = [0, *sorted(set(cuts)), len(text)]
    return Called(arguments, tuple(text[start:end] for start, end in itertools.pairwise(bounds)))


@st.composite
def _script(draw: st.DrawFn) -> Script:
    said = st.builds(Said, st.lists(PIECE, min_size=1, max_size=4).map(tuple))
    parts = draw(st.lists(st.one_of(said, _called()), min_size=1, max_size=6))
    calls = [at for at, part in enumerate(parts) if isinstance(part, Called)]
    parts = [part for at, part in enumerate(parts) if at not in calls[4:]]  # at most four calls
    finish = draw(st.sampled_from(["stop", "tool_calls", "length"]))
    late = tuple(draw(st.lists(PIECE, min_size=draw(st.sampled_from([1, 0])), max_size=2)))
    ended = draw(st.sampled_from([False, True]))  # without its end marker, a body may end anywhere
    return Script(tuple(parts), draw(st.booleans()), finish, ended, late)


Dumps = Callable[[Any], str]


def _orjson(value: Any) -> str:
    return orjson.dumps(value).decode()  # as the providers write it: a template can be learned


#: JSON as the providers write it, and with spaces and escapes (no template learned).
DUMPS: list[Dumps] = [_orjson, _orjson, json.dumps]


def _named(name: str, body: dict[str, Any], dumps: Dumps) -> str:
    """An event named as its payload's type."""
    return f"event: {name}\ndata: " + dumps({"type": name, **body})


def _numbered(parts: tuple[Said | Called, ...]) -> Iterator[tuple[int, Said | Called]]:
    """Each part with its place among the parts of its kind: a call's index, a text block's."""
    seen = dict.fromkeys((Said, Called), 0)
    for part in parts:
        yield seen[type(part)], part
        seen[type(part)] += 1


def _openai_chat(script: Script, number: int, dumps: Dumps) -> list[str]:
    head = {"id": f"chatcmpl-{number}", "object": "chat.completion.chunk", "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        return "data: " + dumps({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    def call(index: int, function: dict[str, str], **start: str) -> str:
        return chunk({"tool_calls": [{"index": index, **start, "function": function}]})

    events = [chunk({"role": "assistant", "content": ""})]
    for index, part in _numbered(script.parts):
        if isinstance(part, Called):
            events.append(call(index, {"name": "f", "arguments": ""}, id=f"call_{number}_{index}", type="function"))
            events += [call(index, {"arguments": text}) for text in part.fragments]
        else:
            events += [chunk({"content": text}) for text in part.pieces]
    events.append(chunk({}, script.finish))
    events += [chunk({"content": text}) for text in script.late]
    if script.usage:
        usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
        events.append("data: " + dumps({**head, "choices": [], "usage": usage}))
    return [*events, "data: [DONE]"] if script.ended else events


def _anthropic(script: Script, number: int, dumps: Dumps) -> list[str]:
    message = {"id": f"msg_{number}", "type": "message", "role": "assistant", "content": []}
    events = [_named("message_start", {"message": {**message, "usage": {"input_tokens": 3}}}, dumps)]
    for block, part in enumerate(script.parts):
        if isinstance(part, Called):
            opened: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{number}_{block}", "name": "f", "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": text} for text in part.fragments]
        else:
            opened = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": text} for text in part.pieces]
        events.append(_named("content_block_start", {"index": block, "content_block": opened}, dumps))
        events += [_named("content_block_delta", {"index": block, "delta": delta}, dumps) for delta in deltas]
        events.append(_named("content_block_stop", {"index": block}, dumps))
    reason = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}[script.finish]
    usage = {"usage": {"output_tokens": 5}} if script.usage else {}
    events.append(_named("message_delta", {"delta": {"stop_reason": reason}, **usage}, dumps))
    return [*events, _named("message_stop", {}, dumps)] if script.ended else events


def _openai_responses(script: Script, number: int, dumps: Dumps) -> list[str]:
    numbers = itertools.count()

    def event(name: str, body: dict[str, Any]) -> str:
        return _named(name, {"sequence_number": next(numbers), **body}, dumps)

    response: dict[str, Any] = {"id": f"resp_{number}", "object": "response", "status": "in_progress", "usage": None}
    events = [event("response.created", {"response": response})]
    for at, part in enumerate(script.parts):
        if isinstance(part, Called):
            item: dict[str, Any] = {
                "id": f"fc_{number}_{at}",
                "type": "function_call",
                "call_id": f"c{at}",
                "name": "f",
            }
            place: dict[str, Any] = {"item_id": item["id"], "output_index": at}
            whole = "".join(part.fragments)
            events.append(event("response.output_item.added", {"output_index": at, "item": {**item, "arguments": ""}}))
            events += [event("response.function_call_arguments.delta", {**place, "delta": t}) for t in part.fragments]
            events.append(event("response.function_call_arguments.done", {**place, "name": "f", "arguments": whole}))
            item["arguments"] = whole
        else:
            item = {"id": f"msg_{number}_{at}", "type": "message", "role": "assistant", "content": []}
            place = {"item_id": item["id"], "output_index": at, "content_index": 0}
            events.append(event("response.output_item.added", {"output_index": at, "item": item}))
            events += [event("response.output_text.delta", {**place, "delta": text}) for text in part.pieces]
            events.append(event("response.output_text.done", {**place, "text": "".join(part.pieces)}))
        events.append(event("response.output_item.done", {"output_index": at, "item": item}))
    if not script.ended:
        return events
    status = "incomplete" if script.finish == "length" else "completed"
    final = {**response, "status": status, "incomplete_details": {"reason": "max_output_tokens"}}
    if status == "completed":
        final["incomplete_details"] = None
    if script.usage:
        final["usage"] = {"input_tokens": 3, "output_tokens": 5, "total_tokens": 8}
    return [*events, event(f"response.{status}", {"response": final})]


def _gemini(script: Script, number: int, dumps: Dumps) -> list[str]:
    def chunk(parts: list[dict[str, Any]], finish: str | None = None, usage: bool = False) -> str:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish is not None:
            candidate["finishReason"] = finish
        body: dict[str, Any] = {"candidates": [candidate], "responseId": f"r{number}"}
        if usage:
            body["usageMetadata"] = {"promptTokenCount": 3, "candidatesTokenCount": 5, "totalTokenCount": 8}
        return "data: " + dumps(body)

    events = []
    for part in script.parts:
        if isinstance(part, Called):
            events.append(chunk([{"functionCall": {"name": "f", "args": part.arguments}}]))  # a call comes whole
        else:
            events += [chunk([{"text": text}]) for text in part.pieces]
    if script.ended:
        reason = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS"}[script.finish]
        events.append(chunk([{"text": ""}], reason, script.usage))
    return events + [chunk([{"text": text}]) for text in script.late]


def _cohere(script: Script, number: int, dumps: Dumps) -> list[str]:
    message = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    events = [_named("message-start", {"id": f"m{number}", "delta": {"message": message}}, dumps)]
    for index, part in _numbered(script.parts):
        if isinstance(part, Called):
            kind, function = "tool-call", {"name": "f", "arguments": ""}
            opened: dict[str, Any] = {
                "tool_calls": {"id": f"call_{number}_{index}", "type": "function", "function": function}
            }
            deltas: list[dict[str, Any]] = [
                {"tool_calls": {"function": {"arguments": text}}} for text in part.fragments
            ]
        else:
            kind, opened = "content", {"content": {"type": "text", "text": ""}}
            deltas = [{"content": {"text": text}} for text in part.pieces]
        events.append(_named(f"{kind}-start", {"index": index, "delta": {"message": opened}}, dumps))
        events += [_named(f"{kind}-delta", {"index": index, "delta": {"message": delta}}, dumps) for delta in deltas]
        events.append(_named(f"{kind}-end", {"index": index}, dumps))
    if not script.ended:
        return events
    reason = {"stop": "COMPLETE", "tool_calls": "TOOL_CALL", "length": "MAX_TOKENS"}[script.finish]
    end: dict[str, Any] = {"finish_reason": reason}
    if script.usage:
        end["usage"] = {"billed_units": {"input_tokens": 3, "output_tokens": 5}}
    return [*events, _named("message-end", {"delta": end}, dumps)]


WRITERS: dict[str, Callable[[Script, int, Dumps], list[str]]] = {
    "openai_chat": _openai_chat,
    "mistral": _openai_chat,  # OpenAI Chat's shape, its end the end of the bytes when no [DONE] comes
    "anthropic": _anthropic,
    "openai_responses": _openai_responses,
    "gemini": _gemini,
    "cohere": _cohere,
}


#: The providers whose fast paths go furthest (a hot read) drawn most often.
PROVIDERS = ["openai_chat", "openai_chat", "mistral", "anthropic", "anthropic", "cohere", "openai_responses", "gemini"]


def _damaged_events(events: list[str], draw: st.DrawFn) -> list[str]:
    """Most often none, else one to three events repeated, dropped or swapped."""
    events = list(events)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2, 3]))):
        if not events:
            break
        at, to = draw(st.integers(0, len(events) - 1)), draw(st.integers(0, len(events) - 1))
        change = draw(st.sampled_from(["repeat", "drop", "swap"]))
        if change == "repeat":
            events.insert(to, events[at])
        elif change == "drop":
            del events[at]
        else:
            events[at], events[to] = events[to], events[at]
    return events


def _written(events: list[str], draw: st.DrawFn) -> bytes:
    """The events as bytes, with comments between events or inside one, CRLF line ends (all of
    them or a stretch), a BOM."""
    comments = draw(st.sets(st.integers(0, len(events)), max_size=3))
    inside = draw(st.sets(st.integers(0, len(events)), max_size=2))
    blocks = [(": ping\n" if at in inside else "") + event + "\n\n" for at, event in enumerate(events)]
    for at in sorted(comments, reverse=True):
        blocks.insert(at, ": keep-alive\n\n")
    text = ("\ufeff" if draw(st.booleans()) else "") + "".join(blocks)
    ends = draw(st.sampled_from(["lf", "lf", "crlf", "a stretch of crlf"]))
    if ends == "crlf":
        text = text.replace("\n", "\r\n")
    elif ends == "a stretch of crlf":
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, len(text)))
        text = text[:start] + text[start:end].replace("\n", "\r\n") + text[end:]
    return text.encode()


def _damaged_bytes(data: bytes, draw: st.DrawFn) -> bytes:
    """The bytes whole, cut inside any event or (most often) the last one, or with a byte
    flipped. (A cut at an event's end is an event dropped.)"""
    changes = ["cut in the last event", "none", "cut in an event", "cut in the last event", "none", "flip"]
    change = draw(st.sampled_from(changes))
    starts = event_starts(data)
    if change.startswith("cut in") and len(starts) > 1:
        at = starts[-2] if change == "cut in the last event" else draw(st.sampled_from(starts[:-1]))
        end = next(start for start in starts if start > at)
        return data[: draw(st.integers(at + 1, end - 1))]
    if change == "flip" and data:
        at = draw(st.integers(0, len(data) - 1))
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    return data


def event_starts(data: bytes) -> list[int]:
    """Where each event of ``data`` starts, and where the last one ends: after each blank line."""
    return [0, *(found.end() for found in re.finditer(rb"\r?\n\r?\n", data))]


@st.composite
def streams(draw: st.DrawFn) -> tuple[str, bytes]:
    """A provider, and a body of one or two of its responses, formatted and damaged."""
    provider = draw(st.sampled_from(PROVIDERS))
    dumps = draw(st.sampled_from(DUMPS))
    events = WRITERS[provider](draw(_script()), 1, dumps)
    if draw(st.booleans()):  # a second response on the same body
        events += WRITERS[provider](draw(_script()), 2, dumps)
    events = _damaged_events(events, draw)
    return provider, _damaged_bytes(_written(events, draw), draw)


STREAM_OPTIONS = [
    {},
    {"fragments": True},
    {"previews": True, "preview_every": 2},
    {"limits": Limits(max_argument_bytes=24)},
    {"max_event_bytes": 160},
    {"early_close": True},
]
#: Reads of a fixed size (1 byte splits every character), of one or three events, or anywhere.
READS = st.one_of(
    st.sampled_from([1, 2, 3, 7, 64, 1 << 20]),
    st.sampled_from(["1 event", "3 events"]),
    st.lists(st.integers(0, 4000), max_size=10),
)


def reads_of(data: bytes, reading: int | str | list[int]) -> list[bytes]:
    if isinstance(reading, str):
        return by_events(data, int(reading[0]))
    if isinstance(reading, int):
        return chunked(data, reading)
    return split_at(data, reading)


def lines_of(data: bytes) -> tuple[list[str], bytes] | None:
    """The body as text lines, their ends kept, and the bytes they stand for; None when the
    body is not UTF-8."""
    try:
        lines = data.decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        return None
    return lines, b"".join(map(line_bytes, lines))


@settings(max_examples=100, deadline=None)
@given(stream=streams(), readings=st.lists(READS, min_size=1, max_size=2), option=st.sampled_from(STREAM_OPTIONS))
def test_generated_streams_are_the_same_through_every_driver_on_both_paths(
    stream: tuple[str, bytes], readings: list[int | str | list[int]], option: dict[str, Any]
) -> None:
    provider, data = stream
    if "early_close" in option and not DECODERS[provider].supports_early_close:
        option = {}
    expected = run([data], provider, fast=False, **option)
    # The cheap reads first: a failing example is shrunk by running it again and again.
    assert run([data], provider, fast=True, **option) == expected, "an Assembler fed the whole body"
    for start, end in itertools.pairwise(event_starts(data)):  # each event cut in its middle, read at once
        cut = data[: (start + end) // 2]
        assert run([cut], provider, fast=True, **option) == run([cut], provider, fast=False, **option), cut
    for reading in readings:
        chunks = reads_of(data, reading)
        assert run(chunks, provider, fast=False, **option) == expected, "the general path, read by read"
        assert run(chunks, provider, fast=True, **option) == expected, "an Assembler fed read by read"
        for name, drive in DRIVERS.items():
            assert drive(chunks, provider, option) == seen_by(name, expected), name
    text = lines_of(data)
    if text is not None:  # text lines reach the hot read through Assembler.feed
        lines, same_bytes = text
        if same_bytes != data:  # a last line with no end is given one
            expected = run([same_bytes], provider, fast=False, **option)
        for name in ("iter_events", "aiter_events"):
            assert DRIVERS[name](lines, provider, option) == expected, f"{name} over text lines"
