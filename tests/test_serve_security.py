"""``streamkit serve`` against clients that stall, lie or probe: real uvicorn and raw sockets on 127.0.0.1.

Each deadline is set short in the test's config, and each wait for the proxy to act is bounded
(``WAIT``): a proxy that never acts fails the test rather than hanging it.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

from streamkit.serve import parse_config
from streamkit.serve._command import server_options
from streamkit.serve._protocol import Protocol

from .server import LoopbackServer, Reply
from .serving import PROXY_KEY, TOOLS, UPSTREAM_KEY, Proxy, events, keyed_proxy, reply, route

CHAT = "/v1/chat/completions"
MESSAGES = "/v1/messages"
KEYED = {"authorization": f"Bearer {PROXY_KEY}"}
BODY = {"model": "m", "messages": [], "tools": TOOLS, "stream": True}
#: The longest the test waits for the proxy to act on a deadline set far shorter.
WAIT = 20.0


def connect(served: Proxy, *, receive_buffer: int | None = None) -> socket.socket:
    sock = socket.socket()
    if receive_buffer is not None:  # before connect: the window the client offers stays small
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.settimeout(WAIT)
    sock.connect(("127.0.0.1", served.port))
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the proxy sends until it closes the connection (``WAIT`` at most between reads)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def head(path: str = CHAT, *, length: int = 0, headers: dict[str, str] | None = None) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "host: 127.0.0.1", "content-type: application/json"]
    lines += [f"{name}: {value}" for name, value in {**KEYED, **(headers or {})}.items()]
    lines.append(f"content-length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def metric(served: Proxy, line: str) -> bool:
    """Whether ``/metrics`` shows ``line``, polled until it does (the proxy counts after it closed upstream)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if line in httpx.get(served.url + "/metrics", timeout=WAIT).text.splitlines():
            return True
        time.sleep(0.05)
    return False


# -- (a) a request that never arrives whole -----------------------------------------------------


def test_a_head_not_sent_in_time_closes_the_connection(upstream: LoopbackServer) -> None:
    with keyed_proxy(upstream, route(upstream), head_timeout=0.3, keep_alive_timeout=60) as served:
        silent = connect(served)  # sends nothing at all
        partial = connect(served)
        partial.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # and never the blank line
        kept = connect(served)  # a whole request, then half of the next on the kept connection
        kept.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        answered = b""
        while not answered.endswith(b'{"status":"ok"}'):
            answered += kept.recv(65536)
        assert answered.startswith(b"HTTP/1.1 200 OK\r\n")
        kept.sendall(b"GET /healthz HTTP/1.1\r\n")
        for sock in (silent, partial, kept):
            with sock:
                assert read_until_closed(sock) == b""  # closed, with no answer to a request never made


def test_a_body_that_stops_coming_is_a_408_and_the_connection_closes(upstream: LoopbackServer) -> None:
    before = len(upstream.requests)
    with keyed_proxy(upstream, route(upstream), body_timeout=0.3) as served, connect(served) as sock:
        sock.sendall(head(length=100) + b'{"model": "m"')
        answer = read_until_closed(sock)
    status, _, body = answer.partition(b"\r\n\r\n")
    assert status.split(b"\r\n")[0] == b"HTTP/1.1 408 Request Timeout"
    assert b"connection: close" in status.lower()
    error = {
        "message": "no byte of the request body came for 0.3 s (body_timeout)",
        "type": "request_timeout",
        "param": None,
        "code": None,
    }
    assert json.loads(body) == {"error": error}
    assert len(upstream.requests) == before


def test_a_head_over_max_head_bytes_is_a_400(upstream: LoopbackServer) -> None:
    """A head still incomplete past the bound is refused: it is never held whole."""
    with keyed_proxy(upstream, route(upstream), max_head_bytes=1024) as served, connect(served) as sock:
        sock.sendall(head(headers={"x-padding": "p" * 2000}).removesuffix(b"\r\n\r\n"))
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert answer.endswith(b"\r\n\r\nInvalid HTTP request received.")


def test_the_server_settings_reach_uvicorn() -> None:
    config = parse_config(
        {
            "server": {"keep_alive_timeout": 7, "max_head_bytes": 4096, "max_concurrency": 64, "graceful_timeout": 9},
            "route": [{"format": "openai_chat", "upstream": "http://127.0.0.1:1/v1"}],
        }
    )
    assert server_options(config) == {
        "http": Protocol,
        "timeout_keep_alive": 7.0,
        "h11_max_incomplete_event_size": 4096,
        "limit_concurrency": 64,
        "proxy_headers": False,
        "forwarded_allow_ips": [],
        "timeout_graceful_shutdown": 9,
    }


# -- (b) a client that stops reading; a request that waits for a connection ---------------------

TEXT_CHUNK = (
    b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    b'"choices":[{"index":0,"delta":{"content":"' + b"x" * 16000 + b'"},"finish_reason":null}]}\n\n'
)


def test_a_client_that_stops_reading_is_dropped_and_its_upstream_connection_freed(upstream: LoopbackServer) -> None:
    """One pooled connection: the client that reads nothing loses it, and the next client gets it."""
    upstream.routes[CHAT] = Reply(writes=events("openai_chat", "long_text")[:1], endless=lambda n: TEXT_CHUNK)
    with keyed_proxy(upstream, route(upstream, max_connections=1, timeout=5), send_timeout=0.3) as served:
        before, asked = len(upstream.connections), len(upstream.requests)
        stalled = connect(served, receive_buffer=4096)
        body = json.dumps(BODY).encode()
        stalled.sendall(head(length=len(body)) + body)
        deadline = time.monotonic() + WAIT
        # the request read, not only the connection made: swapped sooner, the route would answer it
        while len(upstream.requests) == asked and time.monotonic() < deadline:
            time.sleep(0.01)
        upstream.routes[CHAT] = reply("openai_chat", "parallel_index_zero")  # what the next client gets
        assert upstream.connections[before].closed.wait(WAIT)  # the proxy gave the stream up
        with stalled:
            stalled.settimeout(WAIT)
            with pytest.raises(ConnectionResetError):  # dropped, its unread bytes with it
                while stalled.recv(1 << 20):
                    pass
        answer = httpx.post(served.url + CHAT, json=BODY, headers=KEYED, timeout=WAIT)
        assert (answer.status_code, answer.text.endswith("data: [DONE]\n\n")) == (200, True)
        assert metric(served, 'streamkit_serve_streams_total{format="openai_chat",outcome="client_stalled"} 1')


def test_a_request_that_waits_for_a_free_connection_is_a_503_that_says_so(upstream: LoopbackServer) -> None:
    holding = reply("openai_chat", "long_text", delay=0.05)
    holding.writes = holding.writes[:30]  # 1.5 s, a write every 50 ms: the one connection stays busy
    upstream.routes[CHAT] = holding
    with keyed_proxy(upstream, route(upstream, max_connections=1, timeout=0.5)) as served:
        before = len(upstream.requests)
        first = threading.Thread(
            target=lambda: httpx.post(served.url + CHAT, json=BODY, headers=KEYED, timeout=WAIT), daemon=True
        )
        first.start()
        deadline = time.monotonic() + WAIT
        while len(upstream.requests) == before and time.monotonic() < deadline:
            time.sleep(0.01)
        answer = httpx.post(served.url + CHAT, json=BODY, headers=KEYED, timeout=WAIT)
        first.join(WAIT)
    assert answer.status_code == 503
    assert answer.json()["error"] == {
        "message": "the proxy waited 0.5 s for a free connection to the upstream: "
        "all 1 of the route's connections (max_connections) were in use",
        "type": "overloaded_error",
        "param": None,
        "code": None,
    }


# -- (c) the key before anything else ------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b"not json", json.dumps({"model": "unrouted", "messages": []}).encode(), b"x" * 200],
    ids=["not-json", "unrouted-model", "too-large"],
)
def test_a_request_without_the_key_learns_nothing_but_401(upstream: LoopbackServer, body: bytes) -> None:
    """Not whether its body is JSON, which models are routed, nor how large a body may be."""
    with keyed_proxy(upstream, route(upstream, models=["llama*"]), max_request_bytes=100) as served:
        answer = httpx.post(served.url + CHAT, content=body, headers={"authorization": "Bearer sk-guessed"})
    assert (answer.status_code, answer.headers.get("connection")) == (401, "close")
    error = {"message": "a missing or wrong proxy key", "type": "authentication_error", "param": None, "code": None}
    assert answer.json() == {"error": error}


def test_a_pass_key_route_takes_the_proxy_key_only_in_its_own_header(upstream: LoopbackServer) -> None:
    """Its Authorization goes upstream: a proxy key there is refused, never forwarded."""
    before = len(upstream.requests)
    with keyed_proxy(upstream, route(upstream, pass_key=True)) as served:
        answer = httpx.post(served.url + CHAT, json=BODY, headers=KEYED, timeout=WAIT)
    assert answer.status_code == 401
    assert answer.json()["error"]["message"] == (
        "this route passes the client's own key on: the proxy key goes in x-streamkit-key"
    )
    assert len(upstream.requests) == before


# -- (d) nothing undecoded reaches the client ---------------------------------------------------


def test_a_frame_streamkit_cannot_read_is_not_passed_on(upstream: LoopbackServer) -> None:
    first = events("openai_chat", "long_text")[1]
    undecodable = b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"never shown"}}\n\n'
    upstream.routes[CHAT] = Reply(writes=[first, undecodable, *events("openai_chat", "long_text")[2:4]])
    with keyed_proxy(upstream, route(upstream)) as served:
        text = httpx.post(served.url + CHAT, json=BODY, headers=KEYED, timeout=WAIT).text
    sent = text.split("\n\n")[:-1]
    assert sent[0] + "\n\n" == first.decode()
    assert len(sent) == 2  # the frame, then streamkit's error, which names it (quoted, as text)
    error = json.loads(sent[1].removeprefix("data: "))["error"]
    assert (error["type"], error["code"]) == ("stream_error", "ProviderProtocolError")
    assert undecodable.decode() not in text


# -- (f) a client that leaves after the last event had it all --------------------------------------


def test_a_client_that_hangs_up_after_the_last_event_is_counted_complete(upstream: LoopbackServer) -> None:
    writes = events("openai_chat", "parallel_index_zero")
    # the upstream keeps the body open a while after its [DONE]: the client leaves in between
    upstream.routes[CHAT] = Reply(writes=[*writes, b": bye\n\n"], pauses={len(writes): 2.0})
    with keyed_proxy(upstream, route(upstream)) as served:
        with httpx.stream("POST", served.url + CHAT, json=BODY, headers=KEYED, timeout=WAIT) as response:
            seen = b""
            for chunk in response.iter_raw():
                seen += chunk
                if seen.endswith(b"data: [DONE]\n\n"):
                    break
        assert metric(served, 'streamkit_serve_streams_total{format="openai_chat",outcome="ok"} 1')
        assert "disconnected" not in httpx.get(served.url + "/metrics", timeout=WAIT).text


# -- (h) the query goes on ------------------------------------------------------------------------


def test_the_query_string_goes_to_the_upstream(upstream: LoopbackServer) -> None:
    upstream.routes[MESSAGES] = reply("anthropic", "two_calls")
    with keyed_proxy(upstream, route(upstream, "anthropic")) as served:
        answer = httpx.post(
            served.url + MESSAGES + "?beta=true", json={**BODY, "tools": []}, headers=KEYED, timeout=WAIT
        )
    assert answer.status_code == 200
    assert upstream.requests[-1].target == "/v1/messages?beta=true"


# -- (i) a proxy key made of words redacts nothing ------------------------------------------------


def test_a_proxy_key_of_ordinary_words_leaves_streamkits_messages_whole(upstream: LoopbackServer) -> None:
    """The proxy key never leaves the proxy, so nothing it could appear in is scrubbed of it."""
    wordy = "streamkit-withheld-an-invalid-tool-call"
    upstream.routes[CHAT] = reply("openai_chat", "invalid_json")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEST_WORDY_KEY", wordy)
        patch.setenv("TEST_UPSTREAM_KEY", UPSTREAM_KEY)
        running = Proxy({"server": {"proxy_key_env": "TEST_WORDY_KEY"}, "route": [route(upstream)]})
        try:
            text = httpx.post(running.url + CHAT, json=BODY, headers={"x-api-key": wordy}, timeout=WAIT).text
        finally:
            running.close()
    error = json.loads(text.split("\n\n")[-2].removeprefix("data: "))["error"]
    assert error["message"].startswith("streamkit withheld an invalid tool call: at index 0 (get_weather, id call_w)")


# -- (j) forwarded headers only from trusted proxies ----------------------------------------------


@contextmanager
def access_log() -> Iterator[list[dict[str, Any]]]:
    lines: list[dict[str, Any]] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(json.loads(record.getMessage()))

    logger = logging.getLogger("streamkit.serve.access")
    handler, level = Keep(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.mark.parametrize(("trusted", "client"), [([], "127.0.0.1"), (["127.0.0.0/8"], "203.0.113.9")])
def test_the_logged_client_comes_from_x_forwarded_for_only_from_a_trusted_proxy(
    upstream: LoopbackServer, trusted: list[str], client: str
) -> None:
    upstream.routes[CHAT] = reply("openai_chat", "parallel_index_zero")
    headers = {**KEYED, "x-forwarded-for": "203.0.113.9"}
    settings = {"trusted_proxies": trusted} if trusted else {}  # none: the default
    with access_log() as lines, keyed_proxy(upstream, route(upstream), **settings) as served:
        httpx.post(served.url + CHAT, json=BODY, headers=headers, timeout=WAIT)
    assert [line["client"] for line in lines] == [client]


# -- (l) no end of the upstream key leaves the proxy ----------------------------------------------


def test_an_upstream_error_echoing_the_keys_ends_masked_shows_neither(upstream: LoopbackServer) -> None:
    """OpenAI's echo of a wrong key: its first characters, a mask, its last ones."""
    shown = f"{UPSTREAM_KEY[:7]}{'*' * 12}{UPSTREAM_KEY[-5:]}"
    echoed = json.dumps(
        {"error": {"message": f"Incorrect API key provided: {shown}.", "type": "invalid_request_error"}}
    )
    upstream.routes[CHAT] = Reply([echoed.encode()], status=401, reason="Unauthorized", content_type="application/json")
    with keyed_proxy(upstream, route(upstream)) as served:
        answer = httpx.post(served.url + CHAT, json=BODY, headers=KEYED, timeout=WAIT)
    assert answer.status_code == 401
    assert answer.json()["error"]["message"] == f"Incorrect API key provided: [REDACTED]{'*' * 12}[REDACTED]."
