"""The re-emitting core at the wire level: re-emitted bytes decode to the same calls, and again.

Every fixture of every provider the transports serve is re-emitted, then decoded again by
streamkit: the calls, text, stop reason and usage are those of the original stream, each call
now whole, and re-emitting the re-emitted bytes changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import subprocess
import sys
from contextlib import aclosing
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamkit
from streamkit import (
    CallState,
    InvalidToolCall,
    Limits,
    Provider,
    ResponseEnd,
    StreamError,
    TextDelta,
    ToolCall,
    UsageError,
)
from streamkit._detect import detect_provider
from streamkit._reemit import BadCalls, Options, Session, content_decoding, path_provider
from streamkit._types import Call, CustomToolCall
from streamkit.providers import ENCODERS

from .helpers import FIXTURES, Fixture, fixtures, slug, split_at
from .server import LoopbackServer, Reply, Turns

SERVED = [fixture for fixture in fixtures() if fixture.provider in ENCODERS]
IDS = [fixture.case for fixture in SERVED]


#: The model's answer when asked again about a bad call, over OpenAI Chat: the turn's end.
ANSWER = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'


class Keeping(Session):
    """The session pydantic-ai's wrapper uses: invalid calls written with their raw text."""

    bad_calls = BadCalls("pass")


def reemit(
    chunks: list[bytes], provider: Provider | None, path: str = "/", *, keep: bool = True
) -> tuple[bytes, list[Any], StreamError | None]:
    session = (Keeping if keep else Session)(provider, path, None, Limits())
    out = b"".join(session.feed(chunk) for chunk in chunks) + session.flush()
    return out, session.calls, session.failure


def decoded(data: bytes, provider: Provider) -> tuple[list[tuple[Any, ...]], str | None]:
    """What a stream means, chunk-free: its calls (no index, no anomalies), text, end; and its error.

    OpenAI Chat has no per-call end, so a call written whole before an error is still open at it:
    an open call whose text is a whole object counts as the call it makes, in either stream.
    """
    whole = provider in ("openai_chat", "mistral")
    out: list[tuple[Any, ...]] = []
    states: list[tuple[Any, ...]] = []  # a call's state may come before or after it: kept apart
    try:
        for event in streamkit.iter_events([data], provider):
            if isinstance(event, CallState):
                states.append(("state", event.choice, event.index, event.key, event.value))
            else:
                out.append(_meaning(event))
    except StreamError as exc:
        out += [_unfinished(call) if whole else _meaning(call) for call in exc.unfinished]
        return [*out, *sorted(states)], type(exc).__name__
    return [*out, *sorted(states)], None


def _meaning(event: object) -> tuple[Any, ...]:
    if isinstance(event, ToolCall | CustomToolCall):
        return ("call", event.choice, event.id, event.name, event.input)
    if isinstance(event, InvalidToolCall):
        return ("invalid", event.choice, event.id, event.name, event.raw, tuple(i.kind for i in event.errors))
    if isinstance(event, TextDelta):
        return ("text", event.choice, event.text)
    if isinstance(event, ResponseEnd):
        return ("end", event.stop_reason, event.usage)
    return (type(event).__name__,)


def _unfinished(call: InvalidToolCall) -> tuple[Any, ...]:
    """A call an error left open: the call its text makes when that is a whole object."""
    try:
        value = json.loads(call.raw)
    except ValueError:
        return _meaning(call)
    return ("call", call.choice, call.id, call.name, value) if isinstance(value, dict) else _meaning(call)


def _joined(meaning: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Neighbouring text pieces joined: re-emitting never moves text, but may cut it differently."""
    out: list[tuple[Any, ...]] = []
    for item in meaning:
        if item[0] == "text" and out and out[-1][0] == "text" and out[-1][1] == item[1]:
            out[-1] = ("text", item[1], out[-1][2] + item[2])
        else:
            out.append(item)
    return out


def _expected(fixture: Fixture, original: list[tuple[Any, ...]], failure: StreamError | None) -> list[tuple[Any, ...]]:
    """The original meaning, less what re-emitting leaves out on purpose."""
    kept = []
    for item in original:
        cut = item[0] == "invalid" and "truncated" in item[5]
        if cut and fixture.provider == "gemini":
            continue  # a streamed Gemini call cut off has no whole args to write: MAX_TOKENS says it
        if cut and failure is not None:
            continue  # cut with nothing from the provider saying so: the body fails there instead
        kept.append(item)
    return kept


@pytest.mark.parametrize("fixture", SERVED, ids=IDS)
def test_the_reemitted_stream_means_what_the_original_meant(fixture: Fixture) -> None:
    data = fixture.path.read_bytes()
    out, calls, failure = reemit([data], fixture.provider)
    original, error = decoded(data, fixture.provider)
    again, again_error = decoded(out, fixture.provider)
    wanted = _expected(fixture, original, failure)
    if failure is None and error == "IncompleteStreamError":
        # passed on (pydantic-ai's session): the calls the body ended inside, written raw, unended
        assert _joined([item for item in again if item[0] != "invalid"]) == _joined(
            [item for item in wanted if item[0] != "invalid"]
        )
        invalid = [item for item in again if item[0] == "invalid"]
        assert all(item in invalid for item in wanted if item[0] == "invalid")
    elif failure is None:
        assert _joined(again) == _joined(wanted)
        assert again_error == error
    else:  # the body fails where the original was cut: every call before it is there, whole
        assert error is not None
        assert _joined([item for item in again if item[0] != "end"]) == _joined(wanted)
    passed = failure is None and error == "IncompleteStreamError"  # the open calls reported as passed on
    reported = [call for call in calls if not (passed and isinstance(call, InvalidToolCall) and call.truncated)]
    assert [_meaning(call) for call in reported] == [_meaning(call) for call in _completed(data, fixture.provider)]


@pytest.mark.parametrize("fixture", SERVED, ids=IDS)
def test_the_transports_leave_every_invalid_call_out_and_the_rest_means_what_it_meant(fixture: Fixture) -> None:
    """Calls and text as before, less each invalid call and each call a stream error cut.

    A call's state (a Responses item id) goes with it, and the calls after it move down an
    index, so states are left out of the comparison. Gemini's ``MALFORMED_FUNCTION_CALL`` is a
    finish reason with no part: the report stays, with nothing to run. A session that holds no
    request cannot ask the model again: a response whose format would go on ends before its end
    (``withheld``), the driver failing it with the calls named.
    """
    data = fixture.path.read_bytes()
    session = Session(fixture.provider, "/", None, Limits())
    out = session.feed(data) + session.flush()
    original, error = decoded(data, fixture.provider)
    again, again_error = decoded(out, fixture.provider)
    dropped = [_meaning(call) for call in session.left_out] + [_unfinished(call) for call in session.left_out]
    wanted = [
        item
        for item in _expected(fixture, original, session.failure)
        if item[0] not in ("invalid", "state") and item not in dropped
    ]
    read = [item for item in again if item[0] != "state"]
    again = [_followed(item, wanted, fixture.provider) for item in read]
    stable = again == read  # a call _followed counts as complete is cut when its body is read again
    assert [item for item in again if item[0] == "invalid" and item[3] is not None] == []
    again = [item for item in again if item[0] != "invalid"]
    if session.failure is None and not session.withheld:
        assert _joined(again) == _joined(wanted)
        assert again_error == error
    else:
        assert _joined([item for item in again if item[0] != "end"]) == _joined(
            [item for item in wanted if item[0] != "end" or session.failure is not None]
        )
    invalid = [call for call in session.calls if isinstance(call, InvalidToolCall)]
    assert session.left_out[: len(invalid)] == invalid  # then those a stream error cut
    assert bool(session.withheld) == bool(ENCODERS[fixture.provider].continues and session.left_out and error is None)
    if error is None and stable and not session.withheld:
        assert reemit([out], fixture.provider, keep=False)[0] == out


def _followed(item: tuple[Any, ...], wanted: list[tuple[Any, ...]], provider: Provider) -> tuple[Any, ...]:
    """OpenAI Chat: a call that a later call followed is complete under a ``length`` cut. When the
    transport leaves that later (cut) call out, nothing follows the complete one in the body it
    writes, so decoded again it reads as cut: it counts as the call it was."""
    if provider in ("openai_chat", "mistral") and item[0] == "invalid" and item[5] == ("truncated",):
        for call in wanted:
            if call[0] == "call" and call[1:4] == item[1:4] and json.dumps(call[4], separators=(",", ":")) == item[4]:
                return call
    return item


def _completed(data: bytes, provider: Provider) -> list[Call]:
    """The calls the original stream completed, before any error."""
    out: list[Call] = []
    with contextlib.suppress(StreamError):
        out.extend(streamkit.iter_tool_calls([data], provider))
    return out


@pytest.mark.parametrize("fixture", SERVED, ids=IDS)
def test_reemitting_is_idempotent(fixture: Fixture) -> None:
    once, _, _ = reemit([fixture.path.read_bytes()], fixture.provider)
    twice, _, _ = reemit([once], fixture.provider)
    assert twice == once


@pytest.mark.parametrize("fixture", SERVED, ids=IDS)
def test_the_provider_is_told_from_the_stream(fixture: Fixture) -> None:
    data = fixture.path.read_bytes()
    if detect_provider(data) != fixture.provider:
        pytest.skip("a stream whose first events do not name its provider")
    assert reemit([data[:7], data[7:]], None)[0] == reemit([data], fixture.provider)[0]


@given(data=st.data())
def test_chunk_boundaries_never_change_the_bytes_and_reemitting_again_changes_nothing(data: st.DataObject) -> None:
    fixture = data.draw(st.sampled_from(SERVED))
    whole = fixture.path.read_bytes()
    once = reemit([whole], fixture.provider)[0]
    cuts = data.draw(st.lists(st.integers(0, len(whole)), max_size=12))
    assert reemit(split_at(whole, cuts), fixture.provider)[0] == once
    cuts = data.draw(st.lists(st.integers(0, len(once)), max_size=12))
    assert reemit(split_at(once, cuts), fixture.provider)[0] == once


def test_parallel_calls_at_index_zero_get_distinct_indices() -> None:
    data = (FIXTURES / "openai_chat" / "parallel_calls_all_index_zero.sse").read_bytes()
    out, _, _ = reemit([data], "openai_chat")
    lines = [line for line in out.decode().split("\n") if '"tool_calls":[' in line]
    assert lines == [
        'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,'
        '"delta":{"tool_calls":[{"index":0,"id":"call_A","type":"function","function":{"name":"get_weather",'
        '"arguments":"{\\"city\\":\\"Paris\\"}"}}]},"finish_reason":null}]}',
        'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,'
        '"delta":{"tool_calls":[{"index":1,"id":"call_B","type":"function","function":{"name":"get_stock",'
        '"arguments":"{\\"ticker\\":\\"AAPL\\"}"}}]},"finish_reason":null}]}',
    ]


def test_gemini_thought_signatures_stay_with_their_calls() -> None:
    data = (FIXTURES / "gemini" / "thought_signatures.sse").read_bytes()
    out, _, _ = reemit([data], "gemini")
    before, after = streamkit.collect_turn([data], "gemini"), streamkit.collect_turn([out], "gemini")
    assert after.items == before.items
    assert [after.call_state(call) for call in after.calls] == [before.call_state(call) for call in before.calls]
    assert any(before.call_state(call) for call in before.calls)


def test_vertex_streamed_arguments_become_one_whole_call() -> None:
    data = (FIXTURES / "gemini" / "vertex_streamed_arguments.sse").read_bytes()
    out, _, _ = reemit([data], "gemini")
    assert b"partialArgs" in data
    assert b"partialArgs" not in out and b"willContinue" not in out
    assert streamkit.collect_turn([out], "gemini").calls == streamkit.collect_turn([data], "gemini").calls


def test_a_truncated_call_keeps_the_providers_signal() -> None:
    cases = {
        "anthropic/max_tokens_truncated": (b'"stop_reason":"max_tokens"', b"content_block_stop"),
        "cohere/max_tokens_truncated": (b'"finish_reason":"MAX_TOKENS"', b"tool-call-end"),
        "openai_responses/incomplete_truncated": (b"response.incomplete", b"response.function_call_arguments.done"),
    }
    for case, (signal, end) in cases.items():
        provider = slug(case.split("/")[0])
        data = (FIXTURES / f"{case}.sse").read_bytes()
        out, calls, failure = reemit([data], provider)
        cut = [call for call in calls if isinstance(call, InvalidToolCall)]
        assert failure is None and cut and all(call.truncated for call in cut)
        assert signal in out
        assert out.count(end) == data.count(end)  # no end marker is invented for the cut call
        assert streamkit.collect_turn([out], provider).calls[-1] == cut[-1]


def test_a_call_cut_with_no_signal_fails_the_body_unless_it_is_passed_on() -> None:
    """Nothing asked again (no request held) and nothing passed on: the body fails. Passed on
    (``pass``, pydantic-ai's session), the open call is written raw, with no finish reason."""
    data = (FIXTURES / "openai_chat" / "no_done.sse").read_bytes()
    out, _, failure = reemit([data], "openai_chat", keep=False)
    assert isinstance(failure, streamkit.IncompleteStreamError)
    assert failure.unfinished and failure.unfinished[0].truncated
    assert b"tool_calls" not in out
    passed, _, failure = reemit([data], "openai_chat")
    assert failure is None
    items, error = decoded(passed, "openai_chat")
    assert error == "IncompleteStreamError" and b'"finish_reason":"' not in passed
    assert [item[:5] for item in items if item[0] == "invalid"] == [
        ("invalid", 0, "call_A", "get_weather", '{"city": "Li')
    ]


def test_a_stream_error_comes_after_the_completed_calls() -> None:
    data = (FIXTURES / "openai_chat" / "error_after_completed_call.sse").read_bytes()
    out, calls, failure = reemit([data], "openai_chat")
    assert failure is None
    text = out.decode()
    assert text.index('"id":"call_A"') < text.index('"error"')
    assert text.index('"id":"call_B"') < text.index('"error"')  # cut by the error: raw, as it came
    assert '"arguments":"{\\"ticker\\": \\"AA"' in text
    assert calls == [ToolCall(0, "call_A", "get_weather", {"city": "Paris"})]


def test_a_frame_streamkit_cannot_read_is_not_written() -> None:
    """The body fails at it, and nothing of it reaches the SDK: only what was read before."""
    first = b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    unread = b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"unread"}}\n\n'
    out, _, failure = reemit([first + unread + first], "openai_chat")
    assert isinstance(failure, streamkit.ProviderProtocolError)
    assert out == first


def test_a_stream_no_provider_names_passes_through_untouched() -> None:
    data = b'event: tick\ndata: {"n": 1}\n\n: comment\ndata: plain\n\n'
    assert reemit([data[:5], data[5:]], None, "/v1/events")[0] == data


def test_the_path_names_the_provider_when_the_stream_does_not() -> None:
    assert path_provider("/v1/chat/completions") == "openai_chat"
    assert path_provider("/v1beta/models/gemini-3.8-flash:streamGenerateContent") == "gemini"
    assert path_provider("/v1/messages") == "anthropic"
    assert path_provider("/v1/embeddings") is None
    pings = b'event: ping\ndata: {"type": "ping"}\n\n' * 3
    data = pings + (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    assert reemit([data], None, "/v1/messages")[0] == reemit([data], "anthropic")[0]


def test_options_are_checked_when_the_transport_is_made() -> None:
    with pytest.raises(UsageError, match="cannot re-emit provider 'bedrock'"):
        Options("bedrock", None, None, None, asynchronous=False)
    with pytest.raises(UsageError, match=r"limits must be a streamkit\.Limits"):
        Options(None, None, None, {"max_calls": 1}, asynchronous=False)  # type: ignore[arg-type]

    async def later(call: object) -> None:
        pass

    with pytest.raises(UsageError, match="use AsyncTransport"):
        Options(None, None, later, None, asynchronous=False)
    assert Options(None, None, later, None, asynchronous=True).on_call is later


def test_importing_streamkit_imports_no_integration() -> None:
    code = "import sys, streamkit; assert not {'httpx2', 'streamkit.integrations'} & set(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- the transports themselves, with no SDK above them --------------------------------------------


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_what_is_not_a_stream_passes_through_untouched(server: LoopbackServer, lib: str) -> None:
    library = pytest.importorskip(lib)
    integration = importlib.import_module(f"streamkit.integrations.{lib}")
    stream = (FIXTURES / "openai_chat" / "parallel_calls_all_index_zero.sse").read_bytes()
    page = b"<html><body>Service paused</body></html>"
    server.routes["/v1/models"] = Reply([b'{"data": []}'], content_type="application/json", chunked=False)
    server.routes["/v1/chat/completions"] = Reply([stream], status=500, reason="Server Error")
    server.routes["/v1/responses"] = Reply([page[:3], page[3:]], content_type="text/plain", gzip=True)
    with library.Client(transport=integration.Transport()) as client:
        plain = client.get(server.url("/v1/models"))
        assert (plain.content, plain.headers["content-length"]) == (b'{"data": []}', "12")
        assert client.post(server.url("/v1/chat/completions")).content == stream
        assert client.post(server.url("/v1/responses")).content == page  # not SSE: as it came, gzip undone


STREAM_BODIES: dict[str, dict[str, Any]] = {
    "gzip": {"gzip": True},
    "deflate": {"deflate": True},
    "text/plain": {"content_type": "text/plain; charset=utf-8"},
    "octet-stream": {"content_type": "application/octet-stream"},
    "no content type": {"content_type": None},
    "gzip text/plain": {"gzip": True, "content_type": "text/plain"},
}


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
@pytest.mark.parametrize("given", [None, "openai_chat"])
@pytest.mark.parametrize("body", list(STREAM_BODIES))
def test_a_compressed_or_mislabelled_stream_is_reemitted_plain(
    server: LoopbackServer, lib: str, given: Provider | None, body: str
) -> None:
    library = pytest.importorskip(lib)
    integration = importlib.import_module(f"streamkit.integrations.{lib}")
    stream = (FIXTURES / "openai_chat" / "parallel_calls_all_index_zero.sse").read_bytes()
    server.routes["/v1/chat/completions"] = Reply(split_at(stream, [3, 40, 41, 200]), **STREAM_BODIES[body])
    seen: list[Any] = []
    with library.Client(transport=integration.Transport(provider=given, on_call=seen.append)) as client:
        response = client.post(server.url("/v1/chat/completions"))
    assert "content-encoding" not in response.headers
    assert response.content == reemit([stream], "openai_chat")[0]
    assert [call.id for call in seen] == ["call_A", "call_B"]


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_an_encoding_the_library_cannot_undo_fails_the_request_naming_it(server: LoopbackServer, lib: str) -> None:
    library = pytest.importorskip(lib)
    integration = importlib.import_module(f"streamkit.integrations.{lib}")
    stream = (FIXTURES / "openai_chat" / "length_truncated.sse").read_bytes()
    server.routes["/v1/chat/completions"] = Reply([stream], headers=[("Content-Encoding", "gzip, x-squeeze")])
    with (
        library.Client(transport=integration.Transport()) as client,
        pytest.raises(library.DecodingError, match="Content-Encoding x-squeeze") as caught,
    ):
        client.post(server.url("/v1/chat/completions"))
    assert isinstance(caught.value.__cause__, streamkit.TransportError)
    assert "the HTTP library decodes: deflate, gzip" in str(caught.value)
    assert server.connections[-1].closed.wait(5)


def test_a_brotli_body_without_brotli_installed_says_to_install_it() -> None:
    with pytest.raises(streamkit.TransportError, match=r"Content-Encoding br \(install brotli\)"):
        content_decoding("br", {})
    assert content_decoding("identity", {}) is None and content_decoding("", None) is None


@given(data=st.data())
def test_sniffing_and_decoding_never_depend_on_where_the_body_is_cut(data: st.DataObject) -> None:
    import zlib

    fixture = data.draw(st.sampled_from(SERVED))
    whole = fixture.path.read_bytes()
    given = data.draw(st.sampled_from([None, fixture.provider]))
    packed = zlib.compress(whole)
    cuts = data.draw(st.lists(st.integers(0, len(packed)), max_size=12))
    options = Options(given, None, None, None, asynchronous=False)
    headers = {"content-type": "application/octet-stream", "content-encoding": "deflate"}
    session = options.session("/", 200, headers, {"deflate": lambda: _Zlib()})
    assert session is not None
    out = b"".join(session.feed(piece) for piece in split_at(packed, cuts)) + session.flush()
    plain = Options(given, None, None, None, asynchronous=False).session(
        "/", 200, {"content-type": "text/event-stream"}
    )
    assert plain is not None
    assert out == plain.feed(whole) + plain.flush()


class _Zlib:
    """A deflate decoder of the shape the HTTP libraries' have."""

    def __init__(self) -> None:
        import zlib

        self._inner = zlib.decompressobj()

    def decode(self, data: bytes) -> bytes:
        return self._inner.decompress(data)

    def flush(self) -> bytes:
        return self._inner.flush()


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_a_stream_is_reemitted_and_loses_its_content_length(server: LoopbackServer, lib: str) -> None:
    library = pytest.importorskip(lib)
    integration = importlib.import_module(f"streamkit.integrations.{lib}")
    stream = (FIXTURES / "openai_chat" / "parallel_calls_all_index_zero.sse").read_bytes()
    server.routes["/v1/chat/completions"] = Reply([stream], chunked=False)
    seen: list[Any] = []
    with library.Client(transport=integration.Transport(on_call=seen.append)) as client:
        response = client.post(server.url("/v1/chat/completions"))
    assert "content-length" not in response.headers
    assert response.content == reemit([stream], "openai_chat")[0]
    assert [call.id for call in seen] == ["call_A", "call_B"]

    async def read() -> bytes:
        async with library.AsyncClient(transport=integration.AsyncTransport(provider="openai_chat")) as client:
            return bytes((await client.post(server.url("/v1/chat/completions"))).content)

    assert asyncio.run(read()) == response.content


def test_a_cut_body_raises_each_librarys_own_protocol_error_with_the_cause(server: LoopbackServer) -> None:
    """Typed use of both libraries, an explicit inner transport: the error is the reading client's own."""
    import httpx
    import httpx2

    from streamkit.integrations import httpx as on_httpx
    from streamkit.integrations import httpx2 as on_httpx2

    server.routes["/v1/chat/completions"] = Reply([(FIXTURES / "openai_chat" / "no_done.sse").read_bytes()])
    url = server.url("/v1/chat/completions")
    with (
        httpx.Client(transport=on_httpx.Transport(httpx.HTTPTransport())) as client,
        pytest.raises(httpx.RemoteProtocolError, match="streamkit stopped the stream") as one,
    ):
        client.post(url)
    with (
        httpx2.Client(transport=on_httpx2.Transport(httpx2.HTTPTransport())) as client2,
        pytest.raises(httpx2.RemoteProtocolError, match="streamkit stopped the stream") as two,
    ):
        client2.post(url)

    async def post() -> None:
        async with httpx2.AsyncClient(transport=on_httpx2.AsyncTransport(httpx2.AsyncHTTPTransport())) as client:
            await client.post(url)

    with pytest.raises(httpx2.RemoteProtocolError) as three:
        asyncio.run(post())
    for error in (one.value, two.value, three.value):
        assert isinstance(error.__cause__, streamkit.IncompleteStreamError)
    assert not isinstance(two.value, httpx.RemoteProtocolError)


def test_tools_check_each_call_and_an_invalid_one_is_left_out_or_kept_raw() -> None:
    tools = {"get_weather": {"type": "object", "properties": {"city": {"type": "integer"}}}, "get_stock": {}}
    options = Options("openai_chat", tools, None, None, asynchronous=False)
    asked = {"model": "m", "messages": [{"role": "user", "content": "Paris?"}]}
    session = options.session("/v1/chat/completions", 200, {"content-type": "text/event-stream"}, asked=asked)
    assert session is not None
    data = (FIXTURES / "openai_chat" / "parallel_calls_all_index_zero.sse").read_bytes()
    out = session.feed(data) + session.flush()
    weather, stock = session.calls
    assert session.again is not None  # the model is asked again about the bad call; its answer ends the turn
    assert [entry["role"] for entry in session.again["messages"]] == ["user", "assistant", "tool", "tool"]
    session.resume(None)
    out += session.feed(ANSWER) + session.flush()
    assert isinstance(weather, InvalidToolCall) and [issue.kind for issue in weather.errors] == ["schema"]
    assert stock == ToolCall(1, "call_B", "get_stock", {"ticker": "AAPL"}, anomalies=("index_reused",))
    assert session.left_out == [weather]
    assert list(streamkit.iter_tool_calls([out], "openai_chat", tools=tools)) == [
        ToolCall(0, "call_B", "get_stock", {"ticker": "AAPL"})
    ]
    kept = Keeping("openai_chat", "/v1/chat/completions", options.toolset, options.limits)
    out = kept.feed(data) + kept.flush()
    again = next(streamkit.iter_tool_calls([out], "openai_chat", tools=tools))
    assert isinstance(again, InvalidToolCall) and again.raw == weather.raw


@pytest.mark.anyio
@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
async def test_the_async_transport_runs_under_both_backends(server: LoopbackServer, lib: str) -> None:
    library = pytest.importorskip(lib)
    integration = importlib.import_module(f"streamkit.integrations.{lib}")
    stream = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    server.routes["/v1/messages"] = Reply([stream])
    seen: list[Any] = []
    async with library.AsyncClient(transport=integration.AsyncTransport(on_call=seen.append)) as client:
        response = await client.post(server.url("/v1/messages"))
    assert response.content == reemit([stream], "anthropic")[0]
    assert [call.id for call in seen] == ["toolu_A", "toolu_B"]


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_a_body_closed_early_closes_the_connection_under_it(server: LoopbackServer, lib: str) -> None:
    library = pytest.importorskip(lib)
    integration = importlib.import_module(f"streamkit.integrations.{lib}")
    head = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()[:400]
    server.routes["/v1/messages"] = Reply([head], endless=lambda number: b'event: ping\ndata: {"type": "ping"}\n\n')

    async def read_a_little() -> None:
        async with (
            library.AsyncClient(transport=integration.AsyncTransport()) as client,
            client.stream("POST", server.url("/v1/messages")) as response,
            aclosing(response.aiter_raw()) as raw,
        ):
            async for _ in raw:
                break

    asyncio.run(read_a_little())
    with (
        library.Client(transport=integration.Transport()) as client,
        client.stream("POST", server.url("/v1/messages")) as response,
    ):
        next(response.iter_raw())
    assert all(connection.closed.wait(5) for connection in server.connections)
    assert len(server.connections) == 2


@pytest.mark.parametrize(("lib", "other"), [("httpx", "httpx2"), ("httpx2", "httpx")])
def test_an_inner_transport_of_the_other_library_is_refused_when_the_transport_is_made(lib: str, other: str) -> None:
    integration = importlib.import_module(f"streamkit.integrations.{lib}")
    library = importlib.import_module(other)
    with pytest.raises(UsageError) as sync:
        integration.Transport(library.HTTPTransport())
    assert str(sync.value) == (
        f"streamkit.integrations.{lib}.Transport sends through {lib}, and the inner transport given is "
        f"{other}'s (HTTPTransport): give it one of {lib}'s, or use streamkit.integrations.{other}.Transport"
    )
    with pytest.raises(UsageError, match=rf"or use streamkit\.integrations\.{other}\.AsyncTransport$"):
        integration.AsyncTransport(library.AsyncHTTPTransport())
    mine = importlib.import_module(lib)
    assert integration.Transport(mine.HTTPTransport())._inner is not None


#: The tools an OpenAI Chat request offers, as the SDK sends them.
OFFERED = [
    {
        "type": "function",
        "function": {"name": name, "parameters": {"type": "object", "properties": {key: {"type": "string"}}}},
    }
    for name, key in (("get_weather", "city"), ("get_stock", "ticker"))
]


def _kinds(calls: list[InvalidToolCall]) -> list[tuple[Any, ...]]:
    return [(call.id, *(issue.kind for issue in call.errors)) for call in calls]


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_the_transport_checks_the_calls_against_the_requests_own_tools_unless_given_some(
    server: LoopbackServer, lib: str
) -> None:
    library = pytest.importorskip(lib)
    integration = importlib.import_module(f"streamkit.integrations.{lib}")
    bad = Reply([(FIXTURES / "openai_chat/invalid_calls_then_a_valid_one.sse").read_bytes()])
    url = server.url("/v1/chat/completions")
    body = json.dumps({"model": "m", "stream": True, "messages": [], "tools": OFFERED}).encode()

    def left_out(transport: Any, **request: Any) -> list[tuple[Any, ...]]:
        server.routes = Turns("/v1/chat/completions", bad, Reply([ANSWER]))  # asked again: a plain end
        with library.Client(transport=transport) as client:
            return _kinds(integration.invalid_calls(client.post(url, **request)))

    assert left_out(integration.Transport(), content=body) == [
        ("call_1", "invalid_json"),
        ("call_3", "schema"),
        ("call_4", "unknown_tool"),
    ]
    # tools given to the transport stand for the request's, which are not read
    given: dict[str, Any] = {"get_weather": {}, "delete_everything": {}}
    assert left_out(integration.Transport(tools=given), content=body) == [
        ("call_1", "invalid_json"),
        ("call_2", "unknown_tool"),
    ]
    # no tools offered: nothing to check against
    plain = {"model": "m", "messages": [], "tools": []}
    assert left_out(integration.Transport(), json=plain) == [("call_1", "invalid_json")]
    # a body that is no JSON, one streamed as it is sent: nothing to check against, and no request
    # to ask the model again with: the body fails, naming the call
    for request in (
        {"content": b'"tools" ['},
        {"content": iter([body]), "headers": {"content-length": str(len(body))}},
    ):
        with pytest.raises(library.RemoteProtocolError, match=r"get_weather \(call_1\) was not run: the arguments"):
            left_out(integration.Transport(), **request)


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_a_request_whose_tools_cannot_be_read_is_refused_before_it_is_sent(server: LoopbackServer, lib: str) -> None:
    library = pytest.importorskip(lib)
    integration = importlib.import_module(f"streamkit.integrations.{lib}")
    with (
        library.Client(transport=integration.Transport()) as client,
        pytest.raises(UsageError) as raised,
    ):
        client.post(server.url("/v1/chat/completions"), json={"tools": [{"type": "function", "function": "f"}]})
    assert str(raised.value) == (
        "the request's tools: tools[0].function must be an object; "
        "give the transport tools=... in a form streamkit reads"
    )
    assert server.requests == []
