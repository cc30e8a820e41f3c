"""The HTTP edge against a real HTTP server on 127.0.0.1, with httpx and httpx2, under asyncio and trio."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest

import streamkit
from streamkit import (
    HTTPStatusError,
    Provider,
    ResponseEnd,
    StreamError,
    StreamEvent,
    ToolCall,
    TransportError,
    UsageError,
)
from streamkit._cli import _dumps, to_json_line
from streamkit._redact import EXCERPT_CHARS, MIN_RUN
from streamkit._response import ERROR_BODY_LIMIT

from .helpers import FIXTURES, Fixture, fixtures, one_byte, plain_logger, slug, waited
from .models import OPENAI as OPENAI_MODEL
from .server import LoopbackServer, Reply, split_awkwardly

pytestmark = pytest.mark.anyio

SSE_FIXTURES = [f for f in fixtures() if f.path.suffix == ".sse"]
ANTHROPIC = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
OPENAI = (FIXTURES / "openai_chat" / "text_then_two_calls.sse").read_bytes()
ANTHROPIC_CALLS = [
    ToolCall(1, "toolu_A", "get_weather", {"city": "Paris", "units": "c"}),
    ToolCall(2, "toolu_B", "get_stock", {"ticker": "AAPL"}),
]
SECRET = "sk-test-0123456789abcdef"


class Printed:
    """What ``streamkit replay`` would print for a stream: its lines, and the error message."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.error: str | None = None

    def add(self, item: StreamEvent) -> None:
        line = to_json_line(item)
        if line is not None:
            self.lines.append(_dumps(line).decode())

    def fail(self, exc: StreamError) -> None:
        for call in exc.unfinished:
            self.add(call)
        self.error = str(exc)

    def matches(self, fixture: Fixture) -> None:
        assert "".join(line + "\n" for line in self.lines) == fixture.expected_stdout
        assert self.error == fixture.expected_stderr


async def printed(client: Any, url: str, provider: str) -> Printed:
    out = Printed()
    try:
        async with streamkit.astream(client, slug(provider), url, json={"stream": True}) as events:
            async for item in events:
                out.add(item)
    except StreamError as exc:
        out.fail(exc)
    return out


SPLITS: dict[str, Callable[[bytes], list[bytes]]] = {
    "awkward": split_awkwardly,
    "one_byte": lambda data: list(one_byte(data)),
}


@pytest.mark.parametrize("split", sorted(SPLITS))
@pytest.mark.parametrize("fixture", SSE_FIXTURES, ids=lambda f: f.case)
async def test_every_fixture_over_http(http: ModuleType, server: LoopbackServer, fixture: Fixture, split: str) -> None:
    server.routes["/v1/stream"] = Reply(SPLITS[split](fixture.path.read_bytes()))
    async with http.AsyncClient() as client:
        result = await printed(client, server.url("/v1/stream"), fixture.provider)
    result.matches(fixture)
    assert server.requests[0].method == "POST" and json.loads(server.requests[0].body) == {"stream": True}


async def test_gzip_body_and_its_tee(http: ModuleType, server: LoopbackServer) -> None:
    server.routes["/gz"] = Reply([ANTHROPIC], gzip=True, gzip_piece=5)
    seen: list[bytes] = []
    url = server.url("/gz")
    async with http.AsyncClient() as client, streamkit.astream(client, "anthropic", url, tee=seen.append) as events:
        got = [call async for call in events.tool_calls()]
    assert got == ANTHROPIC_CALLS
    assert b"".join(seen) == ANTHROPIC  # the body as sent, gzip undone


async def test_a_slow_drip_delivers_each_call_before_the_body_ends(http: ModuleType, server: LoopbackServer) -> None:
    server.routes["/drip"] = Reply([ANTHROPIC[i : i + 64] for i in range(0, len(ANTHROPIC), 64)], delay=0.01)
    arrivals: list[float] = []
    async with http.AsyncClient() as client, streamkit.astream(client, "anthropic", server.url("/drip")) as events:
        async for call in events.tool_calls():
            assert isinstance(call, ToolCall)
            arrivals.append(time.monotonic())
        finished = server.connections[0].last_write
    assert len(arrivals) == 2
    assert arrivals[0] < finished  # the first call came while the server was still writing


def cut_inside(data: bytes, marker: bytes) -> bytes:
    return data[: data.index(marker) + len(marker)]


@pytest.mark.parametrize("mid_chunk", [False, True], ids=["between_chunks", "inside_a_chunk"])
@pytest.mark.parametrize(
    ("where", "body", "raw"),
    [
        # Between two events while call B is open: its fragments so far are its raw text.
        ("mid_call", cut_inside(ANTHROPIC, b'"partial_json":"{\\"ticker\\": \\"AAPL\\"}"}}\n\n'), '{"ticker": "AAPL"}'),
        # In the middle of an event's data line: the half event is never decoded.
        ("mid_event", cut_inside(ANTHROPIC, b'"partial_json":"{\\"tick'), ""),
    ],
)
async def test_a_dropped_connection_after_delivered_calls(
    http: ModuleType, server: LoopbackServer, where: str, body: bytes, raw: str, mid_chunk: bool
) -> None:
    server.routes["/cut"] = Reply([body[:500], body[500:]], cut=True, cut_mid_chunk=mid_chunk)
    got: list[object] = []
    async with http.AsyncClient() as client:
        with pytest.raises(TransportError) as info:
            async with streamkit.astream(client, "anthropic", server.url("/cut")) as events:
                async for call in events.tool_calls():
                    got.append(call)  # noqa: PERF401 - the calls before the error are the point
    assert got == ANTHROPIC_CALLS[:1]
    error = info.value
    assert type(error) is TransportError and isinstance(error.__cause__, http.RemoteProtocolError)
    assert str(error).startswith(
        f"reading the response of POST {server.url('/cut')}: the connection closed before the response ended"
    )
    assert error.provider == "anthropic"
    assert [(c.index, c.id, c.name, c.raw, c.truncated) for c in error.unfinished] == [
        (2, "toolu_B", "get_stock", raw, True)
    ]


ERROR_BODIES = [
    # (provider, status, body, error_type, error_message)
    (
        "openai_chat",
        429,
        {"error": {"message": "Rate limit reached for gpt-5.4", "type": "rate_limit_exceeded", "param": None}},
        "rate_limit_exceeded",
        "Rate limit reached for gpt-5.4",
    ),
    (
        "anthropic",
        529,
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        "overloaded_error",
        "Overloaded",
    ),
    (
        "anthropic",
        500,
        {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
        "api_error",
        "Internal server error",
    ),
    (
        "openai_chat",
        429,
        [{"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}}],
        "RESOURCE_EXHAUSTED",
        "Resource has been exhausted",
    ),
    ("openai_chat", 500, {"error": "model 'x' not found"}, None, "model 'x' not found"),
]


@pytest.mark.parametrize(("provider", "status", "body", "kind", "message"), ERROR_BODIES)
async def test_error_statuses_carry_the_providers_error(
    http: ModuleType, server: LoopbackServer, provider: str, status: int, body: object, kind: str | None, message: str
) -> None:
    error_body = json.dumps(body).encode()
    server.routes["/err"] = Reply([error_body], status=status, reason="Err", content_type="application/json")
    async with http.AsyncClient() as client:
        with pytest.raises(HTTPStatusError) as info:
            async with streamkit.astream(client, slug(provider), server.url("/err")):
                raise AssertionError("an error status never opens the stream")
    error = info.value
    assert (error.status_code, error.error_type, error.error_message) == (status, kind, message)
    detail = f"{kind}: {message}" if kind else message
    assert str(error) == f"HTTP {status} Err from POST {server.url('/err')}: {detail}"
    assert error.body_excerpt == json.dumps(body)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ([("Retry-After", "7")], 7.0),
        ([("retry-after-ms", "1500"), ("Retry-After", "2")], 1.5),
        ([("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")], 0.0),  # a date already past
        ([("Retry-After", "soon")], None),
        ([], None),
    ],
)
async def test_a_refusal_says_whether_and_when_to_retry(
    http: ModuleType, server: LoopbackServer, headers: list[tuple[str, str]], seconds: float | None
) -> None:
    body = b'{"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}'
    server.routes["/r"] = Reply(
        [body],
        status=429,
        reason="Too Many Requests",
        content_type="application/json",
        headers=[("X-Request-Id", "req_42"), *headers],
    )
    server.routes["/bad"] = Reply([b"{}"], status=400, reason="Bad Request", content_type="application/json")
    async with http.AsyncClient() as client:
        with pytest.raises(HTTPStatusError) as info:
            async with streamkit.astream(client, "anthropic", server.url("/r")):
                pass
        with pytest.raises(HTTPStatusError) as bad:
            async with streamkit.astream(client, "anthropic", server.url("/bad")):
                pass
    error = info.value
    assert (error.status_code, error.retryable, error.retry_after) == (429, True, seconds)
    assert (error.headers["x-request-id"], error.headers["X-Request-Id"]) == ("req_42", "req_42")
    assert (bad.value.retryable, bad.value.retry_after, bad.value.headers["content-type"]) == (
        False,
        None,
        "application/json",
    )


async def test_an_html_page_with_200_is_a_transport_error(http: ModuleType, server: LoopbackServer) -> None:
    page = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    server.routes["/html"] = Reply([page], content_type="text/html; charset=utf-8")
    async with http.AsyncClient() as client:
        with pytest.raises(TransportError) as info:
            async with streamkit.astream(client, "anthropic", server.url("/html")):
                raise AssertionError("an HTML page never opens the stream")
    assert type(info.value) is TransportError
    assert str(info.value) == (
        f"anthropic streams text/event-stream, but POST {server.url('/html')} answered HTTP 200 with "
        f"text/html; charset=utf-8: {page.decode()!r}"
    )


async def test_secrets_never_appear_in_errors_or_reprs(http: ModuleType, server: LoopbackServer) -> None:
    echo = {"error": {"type": "authentication_error", "message": f"Incorrect API key provided: {SECRET}"}}
    server.routes["/auth"] = Reply([json.dumps(echo).encode()], status=401, content_type="application/json")
    server.routes["/ok"] = Reply([ANTHROPIC[:900]], cut=True)
    headers = {"Authorization": f"Bearer {SECRET}", "x-api-key": SECRET, "x-goog-api-key": SECRET}
    async with http.AsyncClient() as client:
        with pytest.raises(HTTPStatusError) as status:
            async with streamkit.astream(client, "anthropic", server.url(f"/auth?key={SECRET}"), headers=headers):
                pass
        with pytest.raises(TransportError) as cut:
            async with streamkit.astream(client, "anthropic", server.url(f"/ok?alt=sse&key={SECRET}")) as events:
                shown = repr(events)
                async for _ in events:
                    pass
    port = server.port
    server.close()
    with pytest.raises(TransportError) as refused:
        async with http.AsyncClient() as client:
            url = f"http://user:{SECRET}@127.0.0.1:{port}/?key={SECRET}"
            async with streamkit.astream(client, "anthropic", url, headers=headers):
                pass
    assert server.requests[0].headers["x-api-key"] == SECRET  # it was sent, and only sent
    assert str(status.value) == (
        f"HTTP 401 OK from POST {server.url('/auth?key=[REDACTED]')}: "
        "authentication_error: Incorrect API key provided: [REDACTED]"
    )
    assert status.value.error_message == "Incorrect API key provided: [REDACTED]"
    assert SECRET not in status.value.body_excerpt and "[REDACTED]" in status.value.body_excerpt
    redacted = server.url("/ok?alt=sse&key=[REDACTED]")
    assert shown == f"<AsyncEventStream provider='anthropic' status=200 url='{redacted}'>"
    assert str(cut.value).startswith(f"reading the response of POST {redacted}: ")
    assert str(refused.value).startswith(
        f"sending POST http://user:[REDACTED]@127.0.0.1:{port}/?key=[REDACTED]: the connection failed (ConnectError: "
    )
    for error in (status.value, cut.value, refused.value):
        assert SECRET not in str(error) and SECRET not in repr(error)


def test_the_sync_event_stream_shows_the_head_and_a_redacted_url(http: ModuleType, server: LoopbackServer) -> None:
    server.routes["/ok"] = Reply([ANTHROPIC])
    with http.Client() as client, streamkit.stream(client, "anthropic", server.url(f"/ok?key={SECRET}")) as events:
        assert (events.provider, events.status_code) == ("anthropic", 200)
        assert events.headers["content-type"] == "text/event-stream"
        assert repr(events) == f"<EventStream provider='anthropic' status=200 url='{server.url('/ok?key=[REDACTED]')}'>"


@pytest.mark.parametrize(
    "start",
    [EXCERPT_CHARS - 16, EXCERPT_CHARS - 12, ERROR_BODY_LIMIT - 12, ERROR_BODY_LIMIT - 8],
    ids=["excerpt-16", "excerpt-12", "read_limit-12", "read_limit-8"],
)
async def test_a_key_cut_by_an_excerpt_or_the_read_limit_shows_no_run(
    http: ModuleType, server: LoopbackServer, start: int
) -> None:
    body = b"." * start + SECRET.encode() + b"." * 100
    server.routes["/e"] = Reply(drip(body, 4096), status=401, content_type="text/plain")
    async with http.AsyncClient() as client:
        with pytest.raises(HTTPStatusError) as info:
            async with streamkit.astream(client, "anthropic", server.url("/e"), headers={"x-api-key": SECRET}):
                pass
    error = info.value
    runs = {SECRET[i : i + MIN_RUN] for i in range(len(SECRET) - MIN_RUN + 1)}
    assert [run for run in runs for text in (str(error), repr(error), error.body_excerpt) if run in text] == []


ECHOING = {
    # An in-stream error that echoes the request's key, after a completed call.
    "anthropic": cut_inside(ANTHROPIC, b'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n')
    + b"event: error\n"
    + b'data: {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key: '
    + SECRET.encode()
    + b'"}}\n\n',
    "openai_chat": b'data: {"error": {"message": "Incorrect API key provided: '
    + SECRET.encode()
    + b'", "type": "invalid_request_error", "code": "invalid_api_key"}}\n\n',
}
ECHOED = {
    "anthropic": "anthropic reported an error authentication_error: invalid x-api-key: [REDACTED]",
    "openai_chat": "openai_chat reported an error invalid_request_error: Incorrect API key provided: [REDACTED]",
}


@pytest.mark.parametrize("provider", sorted(ECHOING))
async def test_an_error_in_the_stream_never_shows_the_key(
    http: ModuleType, server: LoopbackServer, provider: Provider
) -> None:
    server.routes["/s"] = Reply([ECHOING[provider]])
    headers = {"Authorization": f"Bearer {SECRET}", "x-api-key": SECRET}
    errors: list[StreamError] = []
    async with http.AsyncClient(headers=headers) as client:
        with pytest.raises(StreamError) as sent:
            async with streamkit.astream(client, provider, server.url("/s")) as events:
                async for _ in events:
                    pass
        errors.append(sent.value)
        async with client.stream("POST", server.url("/s")) as response:
            with pytest.raises(StreamError) as given:
                async for _ in streamkit.aiter_tool_calls(response, provider):
                    pass
        errors.append(given.value)
        async with client.stream("POST", server.url("/s")) as response:
            with pytest.raises(StreamError) as turn:
                await streamkit.acollect_turn(response, provider)
        errors.append(turn.value)

    def sync() -> None:
        with http.Client(headers=headers) as client:
            with pytest.raises(StreamError) as sent, streamkit.stream(client, provider, server.url("/s")) as events:
                list(events)
            errors.append(sent.value)
            with client.stream("POST", server.url("/s")) as response, pytest.raises(StreamError) as given:
                list(streamkit.iter_events(response, provider))
            errors.append(given.value)

    await anyio.to_thread.run_sync(sync)
    for error in errors:
        assert isinstance(error, streamkit.ProviderError)
        assert str(error) == ECHOED[provider]
        assert SECRET not in repr(error) and SECRET not in error.message
    assert server.requests[0].headers["x-api-key"] == SECRET


async def test_no_log_record_shows_a_credential(
    http: ModuleType, server: LoopbackServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, every level
    plain_logger(http.__name__, caplog, monkeypatch)
    server.routes["/s"] = Reply([ANTHROPIC])
    url = server.url(f"/s?alt=sse&key={SECRET}")
    async with http.AsyncClient() as client:
        async with streamkit.astream(client, "anthropic", url, headers={"x-api-key": SECRET}) as events:
            assert [call async for call in events.tool_calls()] == ANTHROPIC_CALLS
        sent = [record.getMessage() for record in caplog.records]
        caplog.clear()
        await client.get(server.url("/s?key=mine"))  # the caller's own request: logged as the library logs it
    assert f'HTTP Request: POST {server.url("/s?alt=sse&key=[REDACTED]")} "HTTP/1.1 200 OK"' in sent
    assert [message for message in sent if SECRET[:8] in message or SECRET[-8:] in message] == []
    assert f'HTTP Request: GET {server.url("/s?key=mine")} "HTTP/1.1 200 OK"' in caplog.messages


async def test_a_read_timeout_is_a_transport_error_after_the_delivered_calls(
    http: ModuleType, server: LoopbackServer
) -> None:
    second_call = ANTHROPIC.rindex(b"event: content_block_start")
    server.routes["/slow"] = Reply([ANTHROPIC[:second_call], ANTHROPIC[second_call:]], pauses={1: 0.5})
    got: list[object] = []
    async with http.AsyncClient(timeout=http.Timeout(5, read=0.1)) as client:
        with pytest.raises(TransportError, match=r": timed out \(ReadTimeout: \)$") as info:
            async with streamkit.astream(client, "anthropic", server.url("/slow")) as events:
                async for call in events.tool_calls():
                    got.append(call)  # noqa: PERF401
    assert got == ANTHROPIC_CALLS[:1]
    assert info.value.unfinished == ()  # the second call had not started


# -- cancellation, cleanup, backpressure -------------------------------------------------------


def drip(data: bytes, size: int = 50) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


async def assert_released(server: LoopbackServer, client: Any) -> None:
    """The first connection was closed, and the client's only pool slot is free again."""
    assert await anyio.to_thread.run_sync(server.connections[0].closed.wait, 5)
    server.routes["/again"] = Reply([ANTHROPIC])
    async with streamkit.astream(client, "anthropic", server.url("/again")) as events:
        assert [call async for call in events.tool_calls()] == ANTHROPIC_CALLS


def one_slot(http: ModuleType) -> Any:
    return http.AsyncClient(limits=http.Limits(max_connections=1), timeout=http.Timeout(5, pool=1))


async def test_breaking_out_releases_the_connection(http: ModuleType, server: LoopbackServer) -> None:
    server.routes["/s"] = Reply(drip(ANTHROPIC), delay=0.02)
    async with one_slot(http) as client:
        async with streamkit.astream(client, "anthropic", server.url("/s")) as events:
            async for call in events.tool_calls():
                assert call == ANTHROPIC_CALLS[0]
                break
        assert not server.connections[0].finished.is_set()
        await assert_released(server, client)


async def test_an_exception_in_the_consumer_releases_the_connection(http: ModuleType, server: LoopbackServer) -> None:
    server.routes["/s"] = Reply(drip(ANTHROPIC), delay=0.02)
    async with one_slot(http) as client:
        with pytest.raises(KeyError):
            async with streamkit.astream(client, "anthropic", server.url("/s")) as events:
                async for _ in events.tool_calls():
                    raise KeyError("the tool is unknown")
        await assert_released(server, client)


async def test_a_failing_tee_raises_its_own_exception_after_the_calls_before_it(
    http: ModuleType, server: LoopbackServer
) -> None:
    """The tee is the caller's code: its failure is not the stream's, so it comes out unchanged."""
    server.routes["/s"] = Reply(drip(ANTHROPIC), delay=0.02)
    first_call_ended = b'data: {"type":"content_block_stop","index":1}\n\n'
    seen: list[bytes] = []

    def tee(chunk: bytes) -> None:
        if first_call_ended in b"".join(seen):  # the read after the first call's end fails
            raise OSError(28, "No space left on device")
        seen.append(chunk)

    calls: list[object] = []
    async with one_slot(http) as client:
        with pytest.raises(OSError, match="No space left on device") as info:
            async with streamkit.astream(client, "anthropic", server.url("/s"), tee=tee) as events:
                async for call in events.tool_calls():
                    calls.append(call)  # noqa: PERF401 (one by one: those before the failure are checked)
        await assert_released(server, client)
    assert type(info.value) is OSError
    assert calls[:1] == ANTHROPIC_CALLS[:1] and calls == ANTHROPIC_CALLS[: len(calls)]


async def test_cancelling_releases_the_connection(http: ModuleType, server: LoopbackServer) -> None:
    server.routes["/s"] = Reply(drip(ANTHROPIC), delay=0.05)
    got: list[object] = []
    async with one_slot(http) as client:
        with anyio.move_on_after(0.3) as scope:
            async with streamkit.astream(client, "anthropic", server.url("/s")) as events:
                async for item in events:
                    got.append(item)  # noqa: PERF401
        assert scope.cancelled_caught and not any(isinstance(item, ResponseEnd) for item in got)
        await assert_released(server, client)


async def test_a_cancelled_task_in_a_task_group_releases_the_connection(
    http: ModuleType, server: LoopbackServer
) -> None:
    server.routes["/s"] = Reply(drip(ANTHROPIC), delay=0.05)
    started = anyio.Event()

    async def consume(client: Any) -> None:
        async with streamkit.astream(client, "anthropic", server.url("/s")) as events:
            started.set()
            async for _ in events:
                pass

    async with one_slot(http) as client:
        async with anyio.create_task_group() as group:
            group.start_soon(consume, client)
            await waited(started, "the stream to start")
            group.cancel_scope.cancel()
        await assert_released(server, client)


async def test_reading_only_as_fast_as_the_consumer(http: ModuleType, server: LoopbackServer) -> None:
    import socket

    def event(number: int) -> bytes:
        return b'event: ping\ndata: {"type": "ping", "pad": "' + b"x" * 4000 + b'"}\n\n'

    server.routes["/endless"] = Reply([ANTHROPIC[: ANTHROPIC.index(b"event: content_block_start", 900)]])
    server.routes["/endless"].endless = event
    server.routes["/endless"].send_buffer = 32 * 1024
    small = [(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)]
    transport = http.AsyncHTTPTransport(socket_options=small)
    url = server.url("/endless")
    async with http.AsyncClient(transport=transport) as client, streamkit.astream(client, "anthropic", url) as events:
        async for call in events.tool_calls():
            assert call == ANTHROPIC_CALLS[0]
            await anyio.sleep(0.5)  # a slow tool: the server must stall, not the memory grow
            written = server.connections[0].bytes_written
            break
    # About 210 KB here: two small socket buffers and httpcore's 64 KiB read, not the 64 MiB on offer.
    assert 100_000 < written < 512 * 1024
    assert await anyio.to_thread.run_sync(server.connections[0].closed.wait, 5)


# -- an httpx or httpx2 Response, httpx-sse events and the SDKs as sources -----------------------


async def test_an_open_httpx_response_is_a_source(http: ModuleType, server: LoopbackServer) -> None:
    server.routes["/r"] = Reply(drip(OPENAI))
    async with http.AsyncClient() as client, client.stream("POST", server.url("/r")) as response:
        got = [call async for call in streamkit.aiter_tool_calls(response, "openai_chat")]
    assert [(c.id, c.name) for c in got] == [("call_A", "get_weather"), ("call_B", "get_stock")]


async def test_an_httpx_response_with_an_error_status_raises_on_first_read(
    http: ModuleType, server: LoopbackServer
) -> None:
    body = {"error": {"message": "Bad key", "type": "invalid_request_error"}}
    server.routes["/r"] = Reply([json.dumps(body).encode()], status=401, content_type="application/json")
    async with http.AsyncClient() as client, client.stream("POST", server.url("/r")) as response:
        with pytest.raises(HTTPStatusError, match=r": invalid_request_error: Bad key$"):
            async for _ in streamkit.aiter_events(response, "openai_chat"):
                pass


# streamkit stops reading at the provider's end marker, which leaves httpx's nested async
# generators under httpx-sse unclosed: trio warns about them (encode/httpx#3593). astream()
# closes its own; with httpx-sse, asyncio only.
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_httpx_sse_events_are_a_source(server: LoopbackServer) -> None:
    from httpx_sse import aconnect_sse

    server.routes["/sse"] = Reply(split_awkwardly(ANTHROPIC))
    async with httpx.AsyncClient() as client, aconnect_sse(client, "GET", server.url("/sse")) as source:
        got = [call async for call in streamkit.aiter_tool_calls(source.aiter_sse(), "anthropic")]
    assert got == ANTHROPIC_CALLS


# Under trio the openai SDK itself leaves async generators unclosed at [DONE] (ResourceWarning),
# even when its stream is read to the end as here: asyncio only.
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_openai_sdk_stream_is_a_source(server: LoopbackServer) -> None:
    openai = pytest.importorskip("openai")
    server.routes["/v1/chat/completions"] = Reply(drip(OPENAI))
    client = openai.AsyncOpenAI(base_url=server.url("/v1"), api_key=SECRET, max_retries=0)
    async with client:
        sdk_stream = await client.chat.completions.create(model=OPENAI_MODEL, messages=[], stream=True)
        events = [item async for item in streamkit.aiter_events(sdk_stream, "openai_chat")]
    assert events[-3:] == [
        ToolCall(0, "call_A", "get_weather", {"city": "Paris"}),
        ToolCall(1, "call_B", "get_stock", {"ticker": "AAPL"}),
        ResponseEnd("tool_calls", {"prompt_tokens": 149, "completion_tokens": 60, "total_tokens": 209}),
    ]
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


async def test_the_anthropic_sdk_stream_is_a_source(server: LoopbackServer) -> None:
    anthropic = pytest.importorskip("anthropic")
    server.routes["/v1/messages"] = Reply(drip(ANTHROPIC))
    client = anthropic.AsyncAnthropic(base_url=server.url(""), api_key=SECRET, max_retries=0)
    async with client:
        sdk_stream = await client.messages.create(model="m", max_tokens=64, messages=[], stream=True)
        got = [call async for call in streamkit.aiter_tool_calls(sdk_stream, "anthropic")]
    assert got == ANTHROPIC_CALLS


# -- the sync twin ---------------------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # sync code: one run is enough
async def test_the_sync_twin(http: ModuleType, server: LoopbackServer) -> None:
    server.routes["/s"] = Reply(split_awkwardly(ANTHROPIC))
    server.routes["/e"] = Reply([b"{}"], status=503, reason="Service Unavailable", content_type="application/json")

    def run() -> list[Any]:
        with http.Client() as client:
            with streamkit.stream(client, "anthropic", server.url("/s"), json={}) as events:
                got: list[Any] = list(events.tool_calls())
            refused = pytest.raises(HTTPStatusError, match=r"^HTTP 503 Service Unavailable from POST .*/e: \{\}$")
            with refused, streamkit.stream(client, "anthropic", server.url("/e")):
                pass
            with client.stream("GET", server.url("/s")) as response:
                got += list(streamkit.iter_tool_calls(response, "anthropic"))
        return got

    assert await anyio.to_thread.run_sync(run) == ANTHROPIC_CALLS * 2


# -- which library: read from the object, the other one never imported ------------------------

USES_ONE_LIBRARY = """
import asyncio, sys
import {lib}
import streamkit

async def main():
    async with {lib}.AsyncClient() as client:
        async with streamkit.astream(client, "anthropic", sys.argv[1]) as events:
            calls = [call async for call in events.tool_calls()]
        async with client.stream("POST", sys.argv[1]) as response:
            calls += [call async for call in streamkit.aiter_tool_calls(response, "anthropic")]
    with {lib}.Client() as client, client.stream("POST", sys.argv[1]) as response:
        calls += list(streamkit.iter_tool_calls(response, "anthropic"))
    print(len(calls), sorted(m for m in ("httpx", "httpx2") if m in sys.modules))

asyncio.run(main())
"""


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # one subprocess run is enough
@pytest.mark.parametrize(("lib", "other"), [("httpx", "httpx2"), ("httpx2", "httpx")])
async def test_a_program_using_one_library_never_loads_the_other(server: LoopbackServer, lib: str, other: str) -> None:
    pytest.importorskip(lib)
    server.routes["/s"] = Reply(drip(ANTHROPIC))
    code = USES_ONE_LIBRARY.format(lib=lib)
    out = await anyio.run_process([sys.executable, "-c", code, server.url("/s")], check=True)
    assert out.stdout.decode() == f"6 ['{lib}']\n"


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_client_of_the_wrong_kind_is_a_usage_error(http: ModuleType) -> None:
    with http.Client() as client, pytest.raises(UsageError) as info:
        async with streamkit.astream(client, "anthropic", "http://127.0.0.1:9/"):
            pass
    assert str(info.value) == (
        f"astream needs an httpx.AsyncClient or an httpx2.AsyncClient, not {http.__name__}.Client "
        "(stream takes a Client)"
    )
    with pytest.raises(UsageError) as info, streamkit.stream(object(), "anthropic", "http://127.0.0.1:9/"):  # type: ignore[arg-type]
        pass
    assert str(info.value) == (
        "stream needs an httpx.Client or an httpx2.Client, not builtins.object (astream takes an AsyncClient)"
    )
