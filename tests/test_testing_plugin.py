"""streamkit.testing: recorded files served re-chunked and faulted, through both transports and a
real loopback server, and the plugin itself run by pytest in a subprocess, as a user's suite."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamkit
from streamkit import HTTPStatusError, IncompleteStreamError, TransportError, UsageError
from streamkit.testing import (
    DEFAULT_CHUNKINGS,
    Chunking,
    Fault,
    Replay,
    chunking,
    cut_after_bytes,
    cut_after_events,
    drop_after_bytes,
    event_ends,
    stall,
    upstream_error,
)

from .helpers import FIXTURES, ROOT, WAIT_SECONDS

SSE = FIXTURES / "anthropic" / "text_then_two_calls.sse"
BODY = SSE.read_bytes()


def test_each_chunking_cuts_the_body_as_named() -> None:
    assert chunking("whole").split(b"abcdef") == [b"abcdef"]
    assert chunking("bytes").split(b"abc") == [b"a", b"b", b"c"]
    assert chunking(1) == chunking("bytes") == Chunking("fixed", 1)
    assert chunking(4).split(b"abcdefghij") == [b"abcd", b"efgh", b"ij"]
    assert chunking("fixed:4") == chunking(4)
    pieces = chunking("random:3").split(BODY)
    assert b"".join(pieces) == BODY and len(pieces) > 1
    assert pieces == chunking("random:3").split(BODY) != chunking("random:4").split(BODY)
    assert [str(chunking(spec)) for spec in DEFAULT_CHUNKINGS] == [
        "whole",
        "fixed:1",
        "fixed:7",
        "fixed:64",
        "random:0",
    ]


@pytest.mark.parametrize("spec", ["halves", 0, -3, "fixed:0", "random:x", True, 2.5])
def test_a_chunking_that_is_not_one_is_a_usage_error_naming_it(spec: object) -> None:
    with pytest.raises(UsageError, match=rf"streamkit chunking {spec!r} is not one of: 'whole', 'bytes'"):
        chunking(spec)


def test_events_end_where_each_kind_of_file_ends_its_events() -> None:
    ends = event_ends(BODY, ".sse")
    assert len(ends) == 18 and ends[-1] == len(BODY)
    assert BODY[: ends[0]] == BODY.split(b"\n\n")[0] + b"\n\n"
    crlf = (FIXTURES / "anthropic" / "text_only_crlf.sse").read_bytes()
    assert [crlf[end - 4 : end] for end in event_ends(crlf, ".sse")] == [b"\r\n\r\n"] * crlf.count(b"\r\n\r\n")
    ndjson = (FIXTURES / "ollama" / "length_limit.ndjson").read_bytes()
    assert len(event_ends(ndjson, ".ndjson")) == ndjson.count(b"\n")
    binary = (FIXTURES / "bedrock" / "text_then_two_calls.bin").read_bytes()
    ends = event_ends(binary, ".bin")
    assert ends[-1] == len(binary)
    assert all(int.from_bytes(binary[a : a + 4], "big") == b - a for a, b in zip([0, *ends], ends, strict=False))


def test_bad_faults_are_usage_errors_naming_the_value() -> None:
    with pytest.raises(UsageError, match="cut_after_bytes takes a whole number of at least 0, got -1"):
        cut_after_bytes(-1)
    with pytest.raises(UsageError, match="drop_after_bytes takes a whole number of at least 0, got True"):
        drop_after_bytes(True)
    with pytest.raises(UsageError, match="stall seconds must be a number from 0 to 3600, got -1"):
        stall(1, -1)
    with pytest.raises(UsageError, match="an HTTP error status from 400 to 599, got 200"):
        upstream_error(200)


ROUTER = FIXTURES / "openai_chat" / "openrouter_processing_comments.sse"


def test_comments_and_blocks_without_data_are_not_events() -> None:
    body = b": OPENROUTER PROCESSING\n\nevent: ping\n\ndata: 1\n\n: keep-alive\r\n\r\ndata\nid: 7\n\n: done\n\n"
    assert event_ends(body, ".sse") == [body.index(b": keep"), body.index(b": done")]
    assert event_ends(b"\xef\xbb\xbfdata: 1\n\n", ".sse") == [12]  # a leading BOM is no part of the field name
    assert event_ends(b'{"a":1}\n\n \t\r\n{"b":2}\n', ".ndjson") == [8, 21]  # blank lines are skipped
    data = ROUTER.read_bytes()
    assert len(event_ends(data, ".sse")) == data.count(b"\ndata: ") + data.startswith(b"data: ")


def test_cut_after_events_counts_only_the_events_a_client_gets() -> None:
    data = ROUTER.read_bytes()
    first = data.index(b"\n\n", data.index(b"data: ")) + 2  # after two comment blocks, the first event
    replay = Replay([ROUTER], chunking("whole"), cut_after_events(1))
    with httpx.Client(transport=replay.transport()) as client:
        assert client.post("https://x.test/").content == data[:first]


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (
            cut_after_events(18),
            "cut:events:18: text_then_two_calls.sse has 18 events, so the fault would never strike: "
            "it must come before the last event ends (n < 18)",
        ),
        (
            cut_after_events(19),
            "cut:events:19: text_then_two_calls.sse has 18 events, so the fault would never strike",
        ),
        (
            cut_after_bytes(2104),
            "cut:bytes:2104: text_then_two_calls.sse has 2104 bytes, its last event ending at byte 2104, so the "
            "fault would never strike: it must come before the last event ends (n < 2104)",
        ),
        (
            drop_after_bytes(2104),
            "drop:2104: text_then_two_calls.sse has 2104 bytes, its last event ending at byte 2104",
        ),
        (drop_after_bytes(10**6), "drop:1000000: text_then_two_calls.sse has 2104 bytes, its last event ending at"),
        (stall(2104, 1), "stall:2104:1s: text_then_two_calls.sse has 2104 bytes, its last event ending at byte 2104"),
    ],
)
def test_a_fault_that_would_leave_every_event_whole_is_a_usage_error_naming_it(fault: Fault, message: str) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        Replay([SSE], chunking("whole"), fault)


def test_a_fault_among_bytes_after_the_last_event_is_refused(tmp_path: Path) -> None:
    trailing = tmp_path / "trailing.sse"
    trailing.write_bytes(BODY + b": bye\n\n")
    with pytest.raises(UsageError, match=re.escape("has 2111 bytes, its last event ending at byte 2104")):
        Replay([trailing], chunking("whole"), cut_after_bytes(2105))
    comments = tmp_path / "comments.sse"
    comments.write_bytes(b": OPENROUTER PROCESSING\n\n")
    with pytest.raises(UsageError, match=re.escape("cut:events:0: comments.sse has 0 events, so the fault")):
        Replay([comments], chunking("whole"), cut_after_events(0))
    Replay([SSE], chunking("whole"), cut_after_bytes(2103))  # the last event's blank line cut: it never ends


@given(
    body=st.binary(max_size=600),
    spec=st.sampled_from(["whole", "bytes", "fixed:5", "fixed:64"])
    | st.integers(0, 99).map(lambda seed: f"random:{seed}"),
)
def test_every_chunking_gives_back_the_body_in_pieces_of_its_sizes(body: bytes, spec: str) -> None:
    how = chunking(spec)
    pieces = how.split(body)
    assert b"".join(pieces) == body
    if how.kind == "whole" or not body:
        assert pieces == [body]
    elif how.kind == "fixed":
        assert all(len(piece) == how.size for piece in pieces[:-1]) and 0 < len(pieces[-1]) <= how.size
    else:
        assert all(1 <= len(piece) <= 64 for piece in pieces)


def replay_of(*names: Path, how: str = "whole", fault: object = None) -> Replay:
    return Replay(list(names) or [SSE], chunking(how), fault)  # type: ignore[arg-type]


@pytest.mark.parametrize("how", DEFAULT_CHUNKINGS)
def test_the_httpx_transport_serves_the_reads_of_the_chunking(how: str) -> None:
    replay = replay_of(how=how)
    with (
        httpx.Client(transport=replay.transport()) as client,
        client.stream("POST", "https://api.anthropic.com/v1/messages", json={"model": "m"}) as response,
    ):
        assert response.headers["content-type"] == "text/event-stream"
        assert list(response.iter_raw()) == chunking(how).split(BODY)
    [request] = replay.requests
    assert (request.method, request.url, request.json()) == (
        "POST",
        "https://api.anthropic.com/v1/messages",
        {"model": "m"},
    )


@pytest.mark.anyio
async def test_the_httpx2_transport_serves_async_clients_too() -> None:
    replay = replay_of(how="fixed:7")
    async with (
        httpx2.AsyncClient(transport=replay.httpx2_transport()) as client,
        client.stream("POST", "https://api.anthropic.com/v1/messages", json={}) as response,
    ):
        calls = [call.name async for call in streamkit.aiter_tool_calls(response, "anthropic")]
    assert calls == ["get_weather", "get_stock"]


def test_files_are_served_one_per_request_and_a_request_past_them_is_told_so() -> None:
    second = FIXTURES / "anthropic" / "text_only_crlf.sse"
    replay = replay_of(SSE, second)
    with httpx.Client(transport=replay.transport()) as client:
        assert client.post("https://x.test/1").content == BODY
        assert client.post("https://x.test/2").content == second.read_bytes()
        third = client.post("https://x.test/3")
    assert third.status_code == 500
    assert third.json()["error"]["message"] == (
        "streamkit.testing: request 3 (POST https://x.test/3) has no recorded file: 2 given"
    )
    assert [request.url for request in replay.requests] == ["https://x.test/1", "https://x.test/2", "https://x.test/3"]


def test_a_fault_strikes_the_first_response_and_a_retry_gets_the_next_file_whole() -> None:
    replay = replay_of(SSE, SSE, fault=drop_after_bytes(100))
    with httpx.Client(transport=replay.transport()) as client:
        with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
            client.post("https://x.test/")
        assert client.post("https://x.test/").content == BODY


def test_the_loopback_server_serves_the_reads_and_keeps_the_requests() -> None:
    replay = replay_of(how="fixed:64")
    try:
        with (
            httpx.Client() as client,
            client.stream("POST", replay.url + "/v1/messages", json={"messages": [1]}) as response,
        ):
            names = [call.name for call in streamkit.iter_tool_calls(response, "anthropic")]
        assert names == ["get_weather", "get_stock"]
        assert replay.url.startswith("http://127.0.0.1:")
        [request] = replay.requests
        assert request.url == replay.url + "/v1/messages" and request.json() == {"messages": [1]}
    finally:
        replay.close()


def test_the_loopback_server_keeps_a_chunked_request_body() -> None:
    def body() -> Iterator[bytes]:  # no length: httpx sends it chunked
        yield b'{"messages": '
        yield b"[1, 2]}"

    replay = replay_of()
    try:
        with httpx.Client() as client:
            response = client.post(replay.url + "/v1/messages", content=body())
        assert (response.status_code, response.content) == (200, BODY)
        [request] = replay.requests
        assert request.headers["Transfer-Encoding"] == "chunked"
        assert (request.body, request.json()) == (b'{"messages": [1, 2]}', {"messages": [1, 2]})
    finally:
        replay.close()


def raw_exchange(url: str, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as it is, end the sending side, and read the whole answer: status, body."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=WAIT_SECONDS) as connection:
        connection.sendall(request)
        connection.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


HEAD = b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def test_a_chunked_body_with_extensions_and_trailers_is_read_whole() -> None:
    replay = replay_of()
    try:
        chunks = b'4;name=value\r\n{"a"\r\n3\r\n:1}\r\n0\r\nX-Checksum: 1\r\n\r\n'
        status, _ = raw_exchange(replay.url, HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunks)
        assert status == 200
        assert [request.json() for request in replay.requests] == [{"a": 1}]
    finally:
        replay.close()


CHUNKED = b"Transfer-Encoding: chunked"


@pytest.mark.parametrize(
    ("headers", "body", "status", "why"),
    [
        pytest.param(
            CHUNKED, b"zz\r\nab\r\n0\r\n\r\n", 400, "the chunk size line b'zz' is not a hexadecimal", id="size"
        ),
        pytest.param(CHUNKED, b"4\r\nabcdXY0\r\n\r\n", 400, "the chunk of 4 bytes is not followed by CRLF", id="CRLF"),
        pytest.param(CHUNKED, b"2\nab\r\n0\r\n\r\n", 400, "the line b'2\\n' ends without CR", id="LF"),
        pytest.param(CHUNKED, b"5\r\nab", 400, "the body ended inside a chunk of 5 bytes, after 2", id="cut chunk"),
        pytest.param(CHUNKED, b"2\r\nab\r\n", 400, "the body ended before its last chunk (size 0)", id="no last"),
        pytest.param(CHUNKED, b"0\r\nX-Checksum: 1\r\n", 400, "the body ended inside its trailer", id="trailer"),
        pytest.param(b"Transfer-Encoding: gzip, chunked", b"", 501, "'gzip, chunked' is not read here", id="gzip"),
        pytest.param(CHUNKED + b"\r\nContent-Length: 2", b"0\r\n\r\n", 400, "both transfer-encoding", id="both"),
        pytest.param(b"Content-Length: ten", b"", 400, "content-length 'ten' is not a whole number", id="length"),
        pytest.param(b"Content-Length: 10", b"ab", 400, "the body ended after 2 of its 10 bytes", id="short"),
    ],
)
def test_a_request_body_framed_wrongly_is_refused_and_not_kept(
    headers: bytes, body: bytes, status: int, why: str
) -> None:
    replay = replay_of()
    try:
        got, answer = raw_exchange(replay.url, HEAD + headers + b"\r\n\r\n" + body)
        assert got == status
        message = json.loads(answer)["error"]["message"]
        assert message.startswith("streamkit.testing: the body of POST /v1/messages cannot be read: ")
        assert why in message and message.endswith("; the request was not kept")
        assert replay.requests == []
    finally:
        replay.close()


@pytest.mark.parametrize("where", ["transport", "loopback"])
def test_each_fault_fails_the_stream_as_the_real_one_would(where: str) -> None:
    expected: list[tuple[object, type[Exception], str]] = [
        (cut_after_events(8), IncompleteStreamError, "the stream ended before the provider's end-of-stream marker"),
        (cut_after_bytes(700), IncompleteStreamError, "the stream ended before"),
        (drop_after_bytes(700), TransportError, "the connection closed before the response ended"),
        (upstream_error(529), HTTPStatusError, "HTTP 529 from POST .*: overloaded_error: Overloaded"),
    ]
    for fault, error, message in expected:
        replay = replay_of(how="fixed:16", fault=fault)
        transport = replay.transport() if where == "transport" else None
        url = "https://api.anthropic.com" if where == "transport" else replay.url
        try:
            with httpx.Client(transport=transport) as client, client.stream("POST", url + "/v1/messages") as response:
                calls = streamkit.iter_tool_calls(response, "anthropic")
                with pytest.raises(error, match=message) as caught:
                    list(calls)
        finally:
            replay.close()
        if fault == cut_after_events(8):  # toolu_A opened at event 7 and was cut off: its raw text is kept
            assert [call.id for call in caught.value.unfinished] == ["toolu_A"]  # type: ignore[attr-defined]


def test_a_stall_holds_the_rest_of_the_body_back_past_a_read_timeout() -> None:
    replay = replay_of(fault=stall(300, 2.0))
    try:
        with (
            httpx.Client(timeout=httpx.Timeout(5.0, read=0.2)) as client,
            client.stream("POST", replay.url + "/v1/messages") as response,
            pytest.raises(TransportError, match="ReadTimeout"),
        ):
            list(streamkit.iter_tool_calls(response, "anthropic"))
    finally:
        replay.close()
    replay = replay_of(how="bytes", fault=stall(300, 0))
    with httpx.Client(transport=replay.transport()) as client:
        assert client.post("https://x.test/").content == BODY  # a stall of 0 s loses nothing


PLUGIN_TEST = """
import httpx
import pytest
import streamkit
from streamkit.testing import cut_after_events, drop_after_bytes

FILE = {file!r}


@pytest.mark.streamkit_chunkings("whole", "bytes", 7, 64, "random:5")
def test_calls(recorded_stream, streamkit_chunking):
    replay = recorded_stream(FILE)
    with httpx.Client(transport=replay.transport()) as client, client.stream("POST", "https://a.test/") as response:
        assert [call.name for call in streamkit.iter_tool_calls(response, "anthropic")] == ["get_weather", "get_stock"]
    print("chunking", streamkit_chunking)


@pytest.mark.streamkit_faults(cut_after_events(8), drop_after_bytes(700))
def test_faults(recorded_stream):
    with httpx.Client() as client, client.stream("POST", recorded_stream(FILE).url) as response:
        with pytest.raises(streamkit.StreamkitError):
            list(streamkit.iter_tool_calls(response, "anthropic"))


def test_default(recorded_stream, streamkit_chunking, streamkit_fault):
    assert (str(streamkit_chunking), streamkit_fault) == ("whole", None)
"""


def run_pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_user.py").write_text(PLUGIN_TEST.format(file=str(SSE)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", *args, "test_user.py"]
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)


def test_the_plugin_runs_a_users_test_under_each_chunking_and_fault(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, "-p", "streamkit.testing")
    assert done.returncode == 0, done.stdout + done.stderr
    passed = sorted(line.split(" ", 1)[1] for line in done.stdout.splitlines() if line.startswith("PASSED "))
    assert passed == [
        "test_user.py::test_calls[fixed:1-no-fault]",
        "test_user.py::test_calls[fixed:64-no-fault]",
        "test_user.py::test_calls[fixed:7-no-fault]",
        "test_user.py::test_calls[random:5-no-fault]",
        "test_user.py::test_calls[whole-no-fault]",
        "test_user.py::test_default[whole-no-fault]",
        "test_user.py::test_faults[whole-cut:events:8]",
        "test_user.py::test_faults[whole-drop:700]",
    ]


def test_the_command_line_option_sets_the_chunkings_of_tests_without_a_marker(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, "-p", "streamkit.testing", "--streamkit-chunkings=3,random:1", "-k", "default")
    assert done.returncode == 1, done.stdout + done.stderr  # test_default insists on "whole"
    assert "2 failed" in done.stdout and "test_default[fixed:3-no-fault]" in done.stdout


def test_a_bad_chunking_on_the_command_line_is_an_error_naming_it(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, "-p", "streamkit.testing", "--streamkit-chunkings=halves")
    assert done.returncode != 0
    assert "streamkit chunking 'halves' is not one of" in done.stdout + done.stderr


def test_the_entry_point_names_the_plugin_module() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    assert declared == {"streamkit.testing": "streamkit.testing"}
    installed = [ep for ep in importlib.metadata.entry_points(group="pytest11") if ep.value == "streamkit.testing"]
    if not installed:
        pytest.skip("streamkit was installed before it declared its pytest11 entry point (pip install -e . again)")
    assert installed[0].name == "streamkit.testing"


def test_the_installed_entry_point_loads_the_plugin_without_p(tmp_path: Path) -> None:
    if not [ep for ep in importlib.metadata.entry_points(group="pytest11") if ep.value == "streamkit.testing"]:
        pytest.skip("streamkit was installed before it declared its pytest11 entry point (pip install -e . again)")
    done = run_pytest(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 passed" in done.stdout
