"""``streamkit live`` and ``streamkit record`` against the loopback server: replay's lines, for real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamkit import UsageError
from streamkit._live import _headers

from .helpers import FIXTURES, Fixture, fixtures, replay
from .server import LoopbackServer, Reply, split_awkwardly

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
    assert _headers("ollama", [], {}) == {}
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
