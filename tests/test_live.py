"""``streamkit live`` and ``streamkit record`` against the loopback server: replay's lines, for real."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import signal
import subprocess
from pathlib import Path

import pytest

from streamkit import ToolCall, UsageError
from streamkit._live import Progress, _headers

from .helpers import FIXTURES, Fixture, fixtures, plain_logger, replay
from .server import LoopbackServer, Reply, split_awkwardly
from .test_cli import anthropic_calls, cli

SSE_FIXTURES = [f for f in fixtures() if f.path.suffix == ".sse"]
KEY = "sk-live-test-9f8e7d6c5b4a"


@pytest.fixture
def body(tmp_path: Path) -> Path:
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}))
    return path


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("CO_API_KEY", KEY)
    monkeypatch.setenv("MISTRAL_API_KEY", KEY)


def live(server: LoopbackServer, provider: str, body: Path, *extra: str) -> list[str]:
    return ["live", "--provider", provider, "--url", server.url("/v1/stream"), "--body", str(body), *extra]


@pytest.mark.parametrize("fixture", SSE_FIXTURES, ids=lambda f: f.case)
def test_live_prints_what_replay_prints(server: LoopbackServer, body: Path, fixture: Fixture) -> None:
    server.routes["/v1/stream"] = Reply(split_awkwardly(fixture.path.read_bytes()))
    result = replay(live(server, fixture.provider, body))
    assert result.stdout == fixture.expected_stdout
    if fixture.expected_stderr is None:
        assert (result.code, result.stderr) == (0, "")
    else:
        assert (result.code, result.stderr) == (1, f"streamkit: error: {fixture.expected_stderr}\n")
    request = server.requests[0]
    assert (request.method, request.target) == ("POST", "/v1/stream")
    assert json.loads(request.body) == json.loads(body.read_text())
    assert request.headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    "name", ["anthropic/text_then_two_calls", "openai_chat/two_choices", "anthropic/text_only_crlf"]
)
def test_record_saves_a_transcript_replay_reads(server: LoopbackServer, body: Path, tmp_path: Path, name: str) -> None:
    provider, stem = name.split("/")
    wire = (FIXTURES / provider / f"{stem}.sse").read_bytes()
    server.routes["/v1/stream"] = Reply(split_awkwardly(wire), gzip=True)
    out = tmp_path / "recorded.sse"
    recorded = replay(["record", *live(server, provider, body)[1:], "-o", str(out)])
    assert recorded.code == 0 and recorded.stderr == ""
    assert out.read_bytes() == wire  # the body as sent, gzip undone
    again = replay(["replay", str(out), "--provider", provider])
    assert again.stdout == recorded.stdout == (FIXTURES / provider / f"{stem}.expected.jsonl").read_text()


def test_each_provider_gets_its_key_in_its_header(server: LoopbackServer, body: Path) -> None:
    server.routes["/v1/stream"] = Reply([(FIXTURES / "anthropic" / "no_arguments.sse").read_bytes()])
    assert replay(live(server, "anthropic", body)).code == 0
    server.routes["/v1/stream"] = Reply([(FIXTURES / "openai_chat" / "two_choices.sse").read_bytes()])
    assert replay(live(server, "openai_chat", body, "--header", "OpenAI-Organization: org-1")).code == 0
    anthropic, openai = (request.headers for request in server.requests)
    assert (anthropic["x-api-key"], anthropic["anthropic-version"]) == (KEY, "2023-06-01")
    assert "authorization" not in anthropic
    assert (openai["authorization"], openai["openai-organization"]) == (f"Bearer {KEY}", "org-1")
    assert "x-api-key" not in openai


def test_an_error_status_exits_1_without_the_key(server: LoopbackServer, body: Path, tmp_path: Path) -> None:
    error = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}}
    server.routes["/v1/stream"] = Reply([json.dumps(error).encode()], status=401, reason="Unauthorized")
    server.routes["/v1/stream"].content_type = "application/json"
    out = tmp_path / "never.sse"
    result = replay(["record", *live(server, "openai_chat", body)[1:], "-o", str(out)])
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        f"streamkit: error: HTTP 401 Unauthorized from POST {server.url('/v1/stream')}: "
        "invalid_request_error: Incorrect API key provided: [REDACTED]\n"
    )
    assert not out.exists()  # nothing was streamed, so nothing is recorded


def test_an_html_page_exits_1(server: LoopbackServer, body: Path) -> None:
    server.routes["/v1/stream"] = Reply([b"<html><body>Bad gateway</body></html>"], content_type="text/html")
    result = replay(live(server, "anthropic", body))
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr.startswith("streamkit: error: anthropic streams text/event-stream, but POST ")
    assert result.stderr.endswith("answered HTTP 200 with text/html: '<html><body>Bad gateway</body></html>'\n")


def test_a_dropped_connection_prints_the_calls_then_the_unfinished_one(server: LoopbackServer, body: Path) -> None:
    wire = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    server.routes["/v1/stream"] = Reply([wire[: wire.index(b"event: content_block_stop", wire.index(b"toolu_B"))]])
    server.routes["/v1/stream"].cut = True
    result = replay(live(server, "anthropic", body))
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(line["type"], line["id"]) for line in lines] == [
        ("tool_call", "toolu_A"),
        ("invalid_tool_call", "toolu_B"),
    ]
    assert lines[1]["raw"] == '{"ticker": "AAPL"}' and lines[1]["errors"][0]["kind"] == "truncated"
    assert result.code == 1 and result.stderr.count("\n") == 1
    assert "the connection closed before the response ended" in result.stderr


def test_a_refused_connection_exits_1(body: Path) -> None:
    stopped = LoopbackServer()
    stopped.close()
    result = replay(live(stopped, "anthropic", body))
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr.startswith(
        f"streamkit: error: sending POST {stopped.url('/v1/stream')}: the connection failed"
    )


def test_a_missing_key_is_a_usage_error(server: LoopbackServer, body: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    result = replay(live(server, "anthropic", body))
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == "streamkit: error: set ANTHROPIC_API_KEY to the anthropic API key (or pass --header)\n"
    assert server.requests == []


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot read {path}: No such file or directory"), ("{not json", "{path} is not JSON: ")],
)
def test_a_bad_body_is_a_usage_error(server: LoopbackServer, tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "body.json"
    if content is not None:
        path.write_text(content)
    result = replay(live(server, "anthropic", path))
    assert result.code == 2 and result.stderr.startswith("streamkit: error: " + message.format(path=path))
    assert server.requests == []


def test_a_body_from_stdin(server: LoopbackServer) -> None:
    server.routes["/v1/stream"] = Reply([(FIXTURES / "anthropic" / "no_arguments.sse").read_bytes()])
    result = replay(live(server, "anthropic", Path("-")), stdin=b'{"stream": true}')
    assert result.code == 0 and json.loads(server.requests[0].body) == {"stream": True}


def test_an_inline_body(server: LoopbackServer) -> None:
    server.routes["/v1/stream"] = Reply([(FIXTURES / "anthropic" / "no_arguments.sse").read_bytes()])
    result = replay(live(server, "anthropic", Path(' {"model": "m", "stream": true}')))
    assert result.code == 0 and json.loads(server.requests[0].body) == {"model": "m", "stream": True}


def test_an_inline_body_that_is_not_json_is_a_usage_error(server: LoopbackServer) -> None:
    result = replay(live(server, "anthropic", Path('{"model": ')))
    assert result.code == 2
    assert result.stderr.startswith("streamkit: error: the inline --body is not JSON: Expecting value")
    assert server.requests == []


def test_unknown_provider_and_bad_header_are_usage_errors(server: LoopbackServer, body: Path) -> None:
    result = replay(live(server, "nope", body))
    assert result.code == 2 and result.stderr.startswith("streamkit: error: unknown provider 'nope'")
    result = replay(live(server, "anthropic", body, "--header", f"Bearer {KEY}"))
    assert result.code == 2 and result.stderr == "streamkit: error: --header number 1 must be 'NAME: VALUE'\n"


def test_headers_per_provider() -> None:
    env = {"GEMINI_API_KEY": "g1", "GOOGLE_API_KEY": "g2", "CO_API_KEY": "c", "MISTRAL_API_KEY": "m"}
    assert _headers("gemini", [], env) == {"x-goog-api-key": "g1"}
    assert _headers("gemini", [], {"GOOGLE_API_KEY": "g2"}) == {"x-goog-api-key": "g2"}
    assert _headers("cohere", [], env) == {"Authorization": "Bearer c"}
    assert _headers("mistral", [], env) == {"Authorization": "Bearer m"}
    assert _headers("ollama", [], {}) == {}  # a local server takes no key
    assert _headers("ollama", [], {"OLLAMA_API_KEY": "o"}) == {"Authorization": "Bearer o"}  # ollama.com's
    assert _headers("openai_chat", ["authorization: Bearer x"], {}) == {"authorization": "Bearer x"}
    with pytest.raises(UsageError, match=r"^bedrock requests need AWS SigV4 signing"):
        _headers("bedrock", [], env)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("notaurl", "cannot send POST /notaurl: Request URL is missing an 'http://' or 'https://' protocol."),
        ("ftp://127.0.0.1/x", "cannot send POST ftp://127.0.0.1/x: Request URL has an unsupported protocol 'ftp://'."),
        ("http://127.0.0.1:port/", "invalid URL: Invalid port: 'port'"),
    ],
)
def test_a_url_httpx_cannot_send_to_is_a_usage_error(body: Path, url: str, message: str) -> None:
    result = replay(["live", "--provider", "anthropic", "--url", url, "--body", str(body)])
    assert (result.code, result.stdout, result.stderr) == (2, "", f"streamkit: error: {message}\n")


# -- options and headers: one line, exit 2, nothing sent --------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "abc", "1e12"])
def test_a_bad_timeout_is_a_usage_error(server: LoopbackServer, body: Path, value: str) -> None:
    result = replay(live(server, "anthropic", body, "--timeout", value))
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        f"streamkit: error: argument --timeout: must be a number of seconds above 0 and at most 1000000, "
        f"got {value!r} (see streamkit live --help)\n"
    )
    assert server.requests == []


def test_a_header_value_that_is_not_ascii_is_a_usage_error(
    server: LoopbackServer, body: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = replay(live(server, "anthropic", body, "--header", "X-Team: Zürich"))
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        "streamkit: error: the value of the header 'X-Team' holds a character that is not printable ASCII\n"
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ключ")  # a key from the environment: never shown either
    result = replay(live(server, "anthropic", body))
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        "streamkit: error: the value of the header 'x-api-key' holds a character that is not printable ASCII\n"
    )
    result = replay(live(server, "anthropic", body, "--header", "X Team: a"))
    assert result.stderr == (
        "streamkit: error: the header name 'X Team' is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~)\n"
    )
    assert server.requests == []


def test_live_help_offers_only_the_providers_it_can_send_to_and_names_their_keys() -> None:
    from streamkit._live import AUTH

    result = replay(["live", "--help"])
    assert result.code == 0
    text = " ".join(result.stdout.split())
    assert (
        "--provider PROVIDER one of: anthropic, cohere, gemini, mistral, ollama, openai_chat, openai_responses" in text
    )
    for slug, auth in AUTH.items():
        assert f"{slug}: {' or '.join(auth.variables)}, sent as {auth.header}:" in text
    assert "ollama: OLLAMA_API_KEY, sent as Authorization: Bearer KEY when set (a local server takes none)" in text
    assert "bedrock: needs AWS SigV4 signing; record it through boto3 instead" in text


def test_bedrock_is_refused_in_one_line(server: LoopbackServer, body: Path) -> None:
    result = replay(live(server, "bedrock", body))
    assert (result.code, result.stdout, result.stderr) == (
        2,
        "",
        "streamkit: error: bedrock requests need AWS SigV4 signing: record the stream with boto3 instead\n",
    )


def test_limit_options_bound_a_live_stream(server: LoopbackServer, body: Path) -> None:
    server.routes["/v1/stream"] = Reply([(FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()])
    result = replay(live(server, "anthropic", body, "--max-calls", "1"))
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["toolu_A"]
    assert (result.code, result.stderr) == (
        1,
        "streamkit: error: anthropic: call index 2: too many calls in one response: limit max_calls=1\n",
    )


# -- record -o: a new file only when the stream ended well ------------------------------------------


def record(server: LoopbackServer, body: Path, out: Path, provider: str = "anthropic") -> list[str]:
    return ["record", *live(server, provider, body)[1:], "-o", str(out)]


def test_record_replaces_the_file_only_when_the_stream_ends_well(
    server: LoopbackServer, body: Path, tmp_path: Path
) -> None:
    wire = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    out = tmp_path / "case.sse"
    out.write_bytes(b"the old transcript")
    out.chmod(0o640)
    server.routes["/v1/stream"] = Reply([wire[: wire.index(b"toolu_B")]], cut=True)
    cut = replay(record(server, body, out))
    assert cut.code == 1 and cut.stderr.count("\n") == 1
    assert out.read_bytes() == b"the old transcript"  # untouched, and no temporary file left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.sse", "request.json"]
    server.routes["/v1/stream"] = Reply(split_awkwardly(wire))
    whole = replay(record(server, body, out))
    assert (whole.code, whole.stderr) == (0, "")
    assert out.read_bytes() == wire
    assert (out.stat().st_mode & 0o777) == 0o640  # the old file's mode is kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.sse", "request.json"]


def test_record_refuses_a_symbolic_link_and_never_writes_through_it(
    server: LoopbackServer, body: Path, tmp_path: Path
) -> None:
    target = tmp_path / "precious.txt"
    target.write_bytes(b"keep me")
    link = tmp_path / "case.sse"
    link.symlink_to(target)
    server.routes["/v1/stream"] = Reply([(FIXTURES / "anthropic" / "no_arguments.sse").read_bytes()])
    result = replay(record(server, body, link))
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == f"streamkit: error: {link} is a symbolic link: name the file itself\n"
    assert target.read_bytes() == b"keep me" and link.is_symlink()
    assert server.requests == []  # refused before the request is sent


def test_record_into_a_directory_or_a_device_is_refused(server: LoopbackServer, body: Path, tmp_path: Path) -> None:
    for path, what in ((tmp_path, "is not a regular file"), (tmp_path / "no" / "x.sse", "No such file or directory")):
        result = replay(record(server, body, path))
        assert (result.code, result.stdout) == (2, "")
        message = f"{path} {what}" if what.startswith("is") else f"cannot write {path}: {what}"
        assert result.stderr == f"streamkit: error: {message}\n"
    assert server.requests == []


def test_a_link_put_in_place_while_recording_is_replaced_not_followed(
    server: LoopbackServer, body: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamkit import _live

    target = tmp_path / "precious.txt"
    target.write_bytes(b"keep me")
    out = tmp_path / "case.sse"
    wire = (FIXTURES / "anthropic" / "no_arguments.sse").read_bytes()
    server.routes["/v1/stream"] = Reply([wire])
    commit = _live._Transcript.commit

    def swap_then_commit(self: _live._Transcript) -> None:
        out.symlink_to(target)  # someone links the destination after the check
        commit(self)

    monkeypatch.setattr(_live._Transcript, "commit", swap_then_commit)
    assert replay(record(server, body, out)).code == 0
    assert target.read_bytes() == b"keep me"
    assert not out.is_symlink() and out.read_bytes() == wire


def test_a_transcript_that_cannot_be_written_is_one_line_and_exit_2(
    server: LoopbackServer, body: Path, tmp_path: Path
) -> None:
    """A file size limit makes the write fail as a full disk would (EFBIG rather than ENOSPC)."""
    import resource

    wire = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    server.routes["/v1/stream"] = Reply([wire[:300], wire[300:]], pauses={1: 0.05})
    out = tmp_path / "case.sse"
    out.write_bytes(b"old")

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))

    args = record(server, body, out)
    with cli(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=small_files, env=ENV) as proc:
        stdout, stderr = proc.communicate(timeout=60)
    assert (proc.returncode, stdout) == (2, b"")
    assert stderr == f"streamkit: error: cannot write {out}: File too large\n".encode()
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["case.sse", "request.json"]


# -- the real process: Ctrl-C, progress on a terminal -----------------------------------------------

ENV = {"ANTHROPIC_API_KEY": KEY, "OPENAI_API_KEY": KEY}


def test_ctrl_c_during_live_is_one_line_and_exit_130(server: LoopbackServer, body: Path) -> None:
    wire = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    first_call = wire.index(b"\n\n", wire.index(b"event: content_block_stop", wire.index(b"toolu_A"))) + 2
    server.routes["/v1/stream"] = Reply([wire[:first_call], wire[first_call:]], pauses={1: 3.0})
    with cli(*live(server, "anthropic", body), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert json.loads(proc.stdout.readline())["id"] == "toolu_A"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130
        assert proc.stderr.read() == b"streamkit: interrupted\n"


def test_progress_is_drawn_cleared_and_redrawn_around_each_line() -> None:
    err = io.StringIO()
    now = [0.0]
    progress = Progress(err, enabled=True, interval=1.0, clock=lambda: now[0])
    progress.received(b"x" * 1500)  # the first news is drawn at once
    progress.received(b"x" * 10)  # within the interval: not redrawn
    now[0] = 1.0
    progress.event(ToolCall(0, "c", "f", {}))
    progress.clear()
    progress.clear()  # nothing shown: nothing to clear
    assert err.getvalue() == (
        "\rstreamkit: 1,500 bytes, 0 events, 0 calls\x1b[K\rstreamkit: 1,510 bytes, 1 events, 1 calls\x1b[K\r\x1b[K"
    )
    quiet = io.StringIO()
    silent = Progress(quiet)  # not a terminal
    silent.received(b"x")
    silent.clear()
    assert quiet.getvalue() == "" and not silent.enabled


def test_progress_shows_on_a_terminal_and_never_stays(server: LoopbackServer, body: Path) -> None:
    import pty

    fixture = FIXTURES / "anthropic" / "text_then_two_calls.sse"
    server.routes["/v1/stream"] = Reply(split_awkwardly(fixture.read_bytes()))
    main_fd, terminal = pty.openpty()
    with cli(*live(server, "anthropic", body), stdout=subprocess.PIPE, stderr=terminal, env=ENV) as proc:
        os.close(terminal)
        stdout, _ = proc.communicate(timeout=60)
    shown = b""
    with contextlib.suppress(OSError):  # EIO once the child's side is closed
        while chunk := os.read(main_fd, 4096):
            shown += chunk
    os.close(main_fd)
    assert proc.returncode == 0
    assert stdout.decode() == fixture.with_name("text_then_two_calls.expected.jsonl").read_text()
    assert shown.startswith(b"\rstreamkit: ") and b" bytes, " in shown and b" calls\x1b[K" in shown
    assert shown.endswith(b"\r\x1b[K")  # cleared at the end: nothing stays on the terminal
    assert b"\n" not in shown


def test_no_progress_when_stderr_is_not_a_terminal(server: LoopbackServer, body: Path) -> None:
    server.routes["/v1/stream"] = Reply([(FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()])
    with cli(*live(server, "anthropic", body), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV) as proc:
        _, stderr = proc.communicate(timeout=60)
    assert (proc.returncode, stderr) == (0, b"")


def test_record_goes_on_saving_when_the_reader_of_its_lines_leaves(
    server: LoopbackServer, body: Path, tmp_path: Path
) -> None:
    wire = anthropic_calls(3000)
    server.routes["/v1/stream"] = Reply([wire[i : i + 4096] for i in range(0, len(wire), 4096)])
    out = tmp_path / "many.sse"
    args = [*record(server, body, out), "--max-calls", "3000"]
    with cli(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert json.loads(proc.stdout.readline())["id"] == "toolu_0"
        proc.stdout.close()  # `| head -1`
        assert proc.wait(60) == 0
        assert proc.stderr.read() == b""
    assert out.read_bytes() == wire


def test_live_ends_quietly_when_the_reader_of_its_lines_leaves(server: LoopbackServer, body: Path) -> None:
    wire = anthropic_calls(3000)
    server.routes["/v1/stream"] = Reply([wire[i : i + 4096] for i in range(0, len(wire), 4096)])
    with cli(
        *live(server, "anthropic", body), "--max-calls", "3000", stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert json.loads(proc.stdout.readline())["id"] == "toolu_0"
        proc.stdout.close()
        assert proc.wait(60) == 0
        assert proc.stderr.read() == b""


def test_an_error_event_that_echoes_the_key_shows_no_key(server: LoopbackServer, body: Path) -> None:
    echo = {"type": "error", "error": {"type": "authentication_error", "message": f"invalid x-api-key: {KEY}"}}
    server.routes["/v1/stream"] = Reply([b"event: error\ndata: " + json.dumps(echo).encode() + b"\n\n"])
    result = replay(live(server, "anthropic", body))
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        "streamkit: error: anthropic reported an error authentication_error: invalid x-api-key: [REDACTED]\n"
    )


def test_gemini_sends_its_key_in_a_header_and_no_log_record_shows_it(
    server: LoopbackServer, body: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, every level
    plain_logger("httpx", caplog, monkeypatch)
    server.routes["/v1/stream"] = Reply([(FIXTURES / "gemini" / "no_arguments.sse").read_bytes()])
    assert replay(live(server, "gemini", body)).code == 0
    url = server.url(f"/v1/stream?alt=sse&key={KEY}")  # a key the caller put in the URL
    assert replay(["live", "--provider", "gemini", "--url", url, "--body", str(body)]).code == 0
    header, query = server.requests
    assert (header.target, header.headers["x-goog-api-key"]) == ("/v1/stream", KEY)
    assert query.target == f"/v1/stream?alt=sse&key={KEY}"  # sent as given, and only sent
    messages = [record.getMessage() for record in caplog.records]
    assert f'HTTP Request: POST {server.url("/v1/stream?alt=sse&key=[REDACTED]")} "HTTP/1.1 200 OK"' in messages
    assert [message for message in messages if KEY[:8] in message or KEY[-8:] in message] == []
