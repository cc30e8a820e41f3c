"""The hot path of each stage gives exactly what the general path gives.

The SSE framer hands the common event shape over as ``Payloads`` and the decoders read a
call's plain fragments through a learned byte template; the general path is the framer's
``Frame``s and each decoder's full reading of every payload. Every fixture, and fuzzed streams
of fragments with tricky tokens, give the same values and the same error either way, at reads
of 1, 7 and 64 bytes, 1 MiB and random splits, and one or three SSE events per read, where the
pipeline's hot read (``streamkit._hot``) takes a call's fragments in one stage crossing.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamkit import Limits, StreamError, TextDelta, ToolCall
from streamkit._assembler import Assembler
from streamkit._events import Frame, Payloads
from streamkit._hot import text_delta
from streamkit.providers import Decoder, OpenAIChatDecoder, _base

from .helpers import fixtures, split_at

ALL = fixtures()
SIZES = (1, 7, 64, 1 << 20)
Outcome = tuple[list[Any], tuple[str, str, dict[str, Any]] | None]


def run(data_chunks: list[bytes], provider: str, *, fast: bool, **options: Any) -> Outcome:
    """The values and the error (type, message, attributes) of one response."""
    assembler = Assembler(provider, **options)  # type: ignore[arg-type]  # a slug from the fixtures
    if not fast:
        assembler._read = assembler._framer.feed  # Frames only
        assembler._one = None  # a read of one event framed as any other
        setattr(assembler._decoder, "plain_fragments", False)  # noqa: B010  # every payload read whole
    out: list[Any] = []
    try:
        for chunk in data_chunks:
            out += assembler.feed(chunk)
            if assembler.finished:
                break
        out += assembler.flush()
    except StreamError as exc:
        return out, (type(exc).__name__, str(exc), dict(vars(exc)))
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
    decoder.read([Payloads(None, [chunk("x", "x"), chunk("y", "x"), chunk("x", "z")])], out)
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


@pytest.mark.parametrize("provider", ["openai_chat", "anthropic"])
def test_a_template_is_proved_by_one_probe_once_per_shape(provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Learning the call's template costs one probe (OpenAI's padding proved unread by the same
    # one); a second response of the same shape learns it with none, and reads the same.
    monkeypatch.setattr(_base, "_PROOFS", {})
    probes: list[tuple[int, int] | None] = []
    prove = Decoder._proves

    def counted(decoder: Decoder, *args: Any) -> bool:
        probes.append(args[-1])
        return prove(decoder, *args)

    monkeypatch.setattr(Decoder, "_proves", counted)
    arguments, data = _long_call(provider)
    first = same(data, provider, by_events(data, 1))
    assert len(probes) == 1
    assert (probes[0] is not None) is (provider == "openai_chat")  # OpenAI's obfuscation: a hole
    assert same(data, provider, by_events(data, 1)) == first
    assert len(probes) == 1
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
    # OpenAI Chat's prefix holds the response's id, so each response is a shape of its own: the
    # proofs kept never pass the bound, and a response after the cache was emptied reads the same.
    monkeypatch.setattr(_base, "_PROOFS", {})
    monkeypatch.setattr(_base, "_MAX_PROOFS", 3)
    for number in range(7):
        arguments, data = _long_call("openai_chat")
        data = data.replace(b'"chatcmpl-1"', f'"chatcmpl-{number}"'.encode())
        values, error = same(data, "openai_chat", by_events(data, 1))
        assert error is None
        assert isinstance(values[0], ToolCall)
        assert values[0].input == arguments
        assert 1 <= len(_base._PROOFS) <= 3


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
