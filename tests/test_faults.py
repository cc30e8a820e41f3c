"""Faults, per provider: what was complete is delivered, what was not comes back with its raw text,
and the error says what happened.

Each stream below is built in every wire shape of ``tests/wire.py``: call 0 is complete
(``{"a": 1}``), call 1 is cut after ``{"b": ``. A provider without per-call end markers
(OpenAI Chat) delivers its calls only at the finish, so there every call open at a fault is
unfinished.
"""

from __future__ import annotations

import pytest

from streamkit import (
    ArgumentIssue,
    IncompleteStreamError,
    InvalidToolCall,
    ProviderError,
    ProviderProtocolError,
    ResponseEnd,
    StreamEvent,
    ToolCall,
)

from .helpers import FIXTURES, replay
from .wire import WIRES, Wire, call, run

SLUGS = sorted(WIRES)
TRUNCATED = ArgumentIssue(
    "truncated", "the arguments were cut off before the call ended (output limit reached or stream ended)"
)
CALL_0 = ToolCall(0, "c0", "f", {"a": 1})


def complete(wire: Wire) -> bytes:
    return call(wire, 0, "c0", "f", ['{"a": ', "1}"])


def cut_call(wire: Wire) -> bytes:
    return wire.start(1, "c1", "g") + wire.fragment(1, '{"b": ')


def unfinished(wire: Wire, *, second: bool) -> list[InvalidToolCall]:
    """The calls left open: call 0 too when the provider has no per-call end marker."""
    out = [] if wire.ends_each_call else [InvalidToolCall(0, "c0", "f", '{"a": 1}', (TRUNCATED,))]
    if second:
        out.append(InvalidToolCall(1, "c1", "g", '{"b": ', (TRUNCATED,)))
    return out


def delivered(wire: Wire) -> list[StreamEvent]:
    return [CALL_0] if wire.ends_each_call else []


def incomplete(slug: str, count: int) -> str:
    tail = f" ({count} call(s) unfinished)" if count else ""
    return f"{slug}: the stream ended before the provider's end-of-stream marker{tail}"


@pytest.mark.parametrize("slug", SLUGS)
def test_cut_in_the_middle_of_an_event(slug: str) -> None:
    wire = WIRES[slug]
    data = wire.begin() + complete(wire) + cut_call(wire) + wire.fragment(1, "2}")[:25]
    items, error = run([data], slug)
    assert items == delivered(wire)
    assert isinstance(error, IncompleteStreamError)
    assert list(error.unfinished) == unfinished(wire, second=True)
    assert str(error) == incomplete(slug, len(error.unfinished))


@pytest.mark.parametrize("slug", SLUGS)
def test_cut_in_the_middle_of_a_call(slug: str) -> None:
    wire = WIRES[slug]
    items, error = run([wire.begin() + complete(wire) + cut_call(wire)], slug)
    assert items == delivered(wire)
    assert isinstance(error, IncompleteStreamError)
    assert list(error.unfinished) == unfinished(wire, second=True)
    assert str(error) == incomplete(slug, len(error.unfinished))


@pytest.mark.parametrize("slug", SLUGS)
def test_cut_between_calls(slug: str) -> None:
    wire = WIRES[slug]
    items, error = run([wire.begin() + complete(wire)], slug)
    assert items == delivered(wire)
    assert isinstance(error, IncompleteStreamError)
    assert list(error.unfinished) == unfinished(wire, second=False)
    assert str(error) == incomplete(slug, len(error.unfinished))


@pytest.mark.parametrize("slug", SLUGS)
def test_an_empty_body_says_so(slug: str) -> None:
    items, error = run([b""], slug)
    assert items == []
    assert isinstance(error, IncompleteStreamError) and error.unfinished == ()
    assert str(error) == f"{slug}: the stream was empty: no bytes arrived"
    items, error = run([], slug)
    assert str(error) == f"{slug}: the stream was empty: no bytes arrived"
    # Bytes that carry no event are not an empty body: the usual message.
    items, error = run([b": keep-alive\n\n"], slug)
    assert str(error) == incomplete(slug, 0)


@pytest.mark.parametrize("slug", SLUGS)
def test_garbage_after_the_end_marker_is_ignored(slug: str) -> None:
    wire = WIRES[slug]
    garbage = b"\xff\xfe not utf-8\n\ndata: {broken\n\n" + b"x" * 100_000
    data = wire.begin() + complete(wire) + wire.finish() + garbage
    expected = [CALL_0, ResponseEnd(wire.stop_reason, wire.usage)]
    assert run([data], slug, max_event_bytes=50_000) == (expected, None)
    assert run([data[i : i + 1] for i in range(len(data))], slug) == (expected, None)


@pytest.mark.parametrize("slug", SLUGS)
@pytest.mark.parametrize("where", ["before", "between", "inside"])
def test_a_provider_error_before_between_and_inside_calls(slug: str, where: str) -> None:
    wire = WIRES[slug]
    error_event = wire.error("overloaded_error", "Overloaded")
    body = {
        "before": error_event,
        "between": complete(wire) + error_event,
        "inside": complete(wire) + cut_call(wire) + error_event,
    }[where]
    items, error = run([wire.begin() + body + complete(wire).replace(b"c0", b"c9")], slug)
    assert isinstance(error, ProviderError)
    assert (error.type, error.message, error.provider) == ("overloaded_error", "Overloaded", slug)
    assert str(error) == f"{slug} reported an error overloaded_error: Overloaded"
    if where == "before":
        assert (items, error.unfinished) == ([], ())
    else:
        assert items == delivered(wire)
        assert list(error.unfinished) == unfinished(wire, second=where == "inside")


@pytest.mark.parametrize("slug", SLUGS)
def test_repeated_end_markers_deliver_each_call_once(slug: str) -> None:
    wire = WIRES[slug]
    data = wire.begin() + complete(wire) + wire.end_call(0) + wire.finish() + wire.finish()
    anomalies = ("end_repeated",) if wire.end_call(0) else ()  # a per-call end marker again: listed
    assert run([data], slug) == ([CALL_0, ResponseEnd(wire.stop_reason, wire.usage, anomalies=anomalies)], None)


@pytest.mark.parametrize("slug", SLUGS)
def test_the_same_call_id_twice_is_a_protocol_error(slug: str) -> None:
    wire = WIRES[slug]
    data = wire.begin() + complete(wire) + call(wire, 1, "c0", "g", ["{}"]) + wire.finish()
    items, error = run([data], slug)
    assert isinstance(error, ProviderProtocolError)
    assert str(error) == f"{slug}, event 'CallOpened', call index 1: call id 'c0' was already used at index 0"
    assert items == delivered(wire)
    assert list(error.unfinished) == unfinished(wire, second=False)


def test_replay_prints_what_was_complete_then_the_unfinished_call_and_says_why(tmp_path: object) -> None:
    from pathlib import Path

    wire = WIRES["anthropic"]
    path = Path(str(tmp_path)) / "cut.sse"
    path.write_bytes(wire.begin() + complete(wire) + cut_call(wire))
    result = replay(["replay", str(path), "--provider", "anthropic"])
    assert result.code == 1
    assert result.stdout.splitlines() == [
        '{"type":"tool_call","index":0,"id":"c0","name":"f","input":{"a":1}}',
        '{"type":"invalid_tool_call","index":1,"id":"c1","name":"g","raw":"{\\"b\\": ","errors":[{"kind":"truncated",'
        '"message":"the arguments were cut off before the call ended (output limit reached or stream ended)"}]}',
    ]
    assert result.stderr == f"streamkit: error: {incomplete('anthropic', 1)}\n"


@pytest.mark.parametrize(("slug", "stem"), [("gemini", "text_then_two_calls"), ("openai_chat", "cerebras_no_done")])
def test_an_end_at_the_end_of_input_needs_bytes_that_end_between_events(slug: str, stem: str) -> None:
    # Gemini, and OpenAI-compatible servers with no [DONE], end where the bytes end once every
    # choice finished; an event cut off after that (its usage, say) is dropped, so not an end.
    data = (FIXTURES / slug / f"{stem}.sse").read_bytes()
    items, error = run([data], slug)
    assert error is None and isinstance(items[-1], ResponseEnd)
    for tail in (b'data: {"usageMetadata": {"promptTok', b"data: {}\n", b"\n: keep-alive"):
        cut, cut_error = run([data + tail], slug)
        assert isinstance(cut_error, IncompleteStreamError), tail
        assert cut == items[:-1]
    assert run([data + b": keep-alive\n\n"], slug) == (items, None)
