"""``streamkit serve`` as a process: its metrics counted exactly, a graceful shutdown, and several workers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

pytest.importorskip("uvicorn")

from .server import LoopbackServer
from .serving import PROXY_KEY, TOOLS, keyed_proxy, reply, route

PATH = "/v1/chat/completions"
BODY = {"model": "m", "messages": [], "tools": TOOLS, "stream": True}
HEADERS = {"authorization": f"Bearer {PROXY_KEY}"}


def test_the_metrics_count_each_stream_call_and_issue(upstream: LoopbackServer) -> None:
    with keyed_proxy(upstream, route(upstream, invalid="withhold")) as served:
        for case in ("parallel_index_zero", "invalid_json", "cut_call"):
            upstream.routes[PATH] = reply("openai_chat", case)
            httpx.post(served.url + PATH, json=BODY, headers=HEADERS, timeout=10)
        text = httpx.get(served.url + "/metrics", timeout=10).text
    counted = [line for line in text.splitlines() if line.startswith("streamkit_serve_") and "_bucket" not in line]
    assert counted == [
        'streamkit_serve_streams_total{format="openai_chat",outcome="ok"} 1',
        'streamkit_serve_streams_total{format="openai_chat",outcome="withheld"} 2',
        'streamkit_serve_calls_total{format="openai_chat",outcome="valid"} 3',  # cut_call's followed call is whole
        'streamkit_serve_calls_total{format="openai_chat",outcome="withheld"} 2',
        'streamkit_serve_invalid_calls_total{format="openai_chat",kind="invalid_json"} 1',
        'streamkit_serve_invalid_calls_total{format="openai_chat",kind="truncated"} 1',
        f'streamkit_serve_call_seconds_sum{{format="openai_chat"}} {_sum(text)}',
        'streamkit_serve_call_seconds_count{format="openai_chat"} 5',
    ]


def _sum(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("streamkit_serve_call_seconds_sum")).split()[-1]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _started(url: str, process: subprocess.Popen[str]) -> bool:
    """Whether the server answers within 30 s; False as soon as it has exited."""
    deadline = time.monotonic() + 30
    while process.poll() is None:
        try:
            httpx.get(url + "/healthz", timeout=1)
            return True
        except httpx.TransportError:
            assert time.monotonic() < deadline, "the server did not answer within 30 s"
            time.sleep(0.1)
    return False


@contextmanager
def serving(*flags: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``streamkit serve FLAGS`` as its own process, until the test sends it SIGTERM (or it is killed)."""
    for _ in range(3):  # another program may take the free port between its pick and the bind
        port = _free_port()
        command = [sys.executable, "-m", "streamkit", "serve", "--port", str(port), *flags]
        environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=environment, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        if _started(url, process):
            break
        said = process.communicate(timeout=30)[1]
        assert "another server holds it" in said, f"the server did not start (exit {process.returncode}): {said}"
    else:
        raise AssertionError("three free ports were taken before the server could bind them")
    try:
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # the workers too: uvicorn's supervisor stops them
        try:
            process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # its own session: the server and its workers alone
            process.communicate()


def test_a_shutdown_lets_the_stream_in_flight_finish(upstream: LoopbackServer) -> None:
    upstream.routes[PATH] = reply("openai_chat", "long_text", delay=0.005)  # 1 s of text
    with serving("--upstream", f"openai_chat={upstream.url('/v1')}") as (url, process):
        received: list[bytes] = []

        def read() -> None:
            with httpx.stream("POST", url + PATH, json=BODY, timeout=30) as response:
                received.extend(response.iter_bytes())

        reader = threading.Thread(target=read)
        reader.start()
        deadline = time.monotonic() + 10
        while not received and time.monotonic() < deadline:
            time.sleep(0.01)
        process.send_signal(signal.SIGTERM)  # mid-stream
        reader.join(30)
        process.wait(30)
    body = b"".join(received)
    assert body.endswith(b"data: [DONE]\n\n")
    assert body.count(b'"content":"word') == 200  # every event, none cut by the shutdown


def test_two_workers_serve_the_example() -> None:
    with serving("--example", "--workers", "2") as (url, _):
        example = {"model": "example", "messages": [], "stream": True}
        bodies = [httpx.post(url + PATH, json=example, timeout=10).content for _ in range(4)]
    assert len(set(bodies)) == 1  # no state between requests: every worker writes the same stream
    assert b'"index":1,"id":"call_B"' in bodies[0]
