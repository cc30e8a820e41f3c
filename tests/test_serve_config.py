"""``streamkit serve``'s config and command line, and the README's one command run as a newcomer runs it."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import pytest

import streamkit
from streamkit import Limits, UsageError
from streamkit.serve import Route, load_config, parse_config
from streamkit.serve._command import add_command, config_of

from .helpers import replay
from .models import ANTHROPIC, OPENAI

ROUTE = {"format": "openai_chat", "upstream": "http://127.0.0.1:11434/v1"}


def test_a_config_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "serve.toml"
    path.write_text(
        '[server]\nport = 9000\nproxy_key_env = "K"\nhost = "0.0.0.0"\ntelemetry = true\n'
        '[[route]]\nformat = "anthropic"\nupstream = "https://api.anthropic.com/v1/"\nmodels = ["claude-*"]\n'
        'key_env = "ANTHROPIC_API_KEY"\ninvalid = "pass"\ntimeout = 20\nemit = "fragments"\n'
        "[route.limits]\nmax_calls = 4\n"
    )
    config = load_config(str(path))
    assert (config.host, config.port, config.proxy_key_env, config.telemetry) == ("0.0.0.0", 9000, "K", True)
    assert config.routes == (
        Route(
            format="anthropic",
            upstream="https://api.anthropic.com/v1",
            models=("claude-*",),
            key_env="ANTHROPIC_API_KEY",
            invalid="pass",
            timeout=20.0,
            limits=Limits(max_calls=4),
            emit="fragments",
        ),
    )
    assert config.route("anthropic", ANTHROPIC) is config.routes[0]
    assert config.route("anthropic", OPENAI) is None
    assert parse_config(config.to_dict()) == config  # what the workers read back


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"route": [{**ROUTE, "format": "gemini"}]},
            "config: route 1: format must be one of openai_chat, openai_responses, anthropic, got 'gemini'",
        ),
        (
            {"route": [{**ROUTE, "upstream": "127.0.0.1:1"}]},
            "config: route 1: upstream must be an http:// or https:// URL, got '127.0.0.1:1'",
        ),
        (
            {"route": [{**ROUTE, "invalid": "drop"}]},
            "config: route 1: invalid must be one of tell, withhold, pass, got 'drop'",
        ),
        ({"route": [{**ROUTE, "timeout": 0}]}, "config: route 1: timeout must be positive, got 0.0"),
        (
            {"route": [{**ROUTE, "emit": "deltas"}]},
            "config: route 1: emit must be one of whole, fragments, got 'deltas'",
        ),
        (
            {"route": [{**ROUTE, "colour": 1}]},
            "config: route 1: unknown key 'colour'; the keys are: "
            "early_close, emit, format, invalid, key_env, limits, max_connections, models, pass_key, rounds, "
            "timeout, upstream, upstream_format",
        ),
        ({"route": [{**ROUTE, "limits": {"max_calls": 0}}]}, "Limits.max_calls must be a positive integer, got 0"),
        ({"server": {"port": "80"}, "route": [ROUTE]}, "config: port must be int, got '80'"),
        ({"route": []}, "config: no route: give at least one [[route]] (or --upstream FORMAT=URL)"),
        ({"server": {"head_timeout": 0}, "route": [ROUTE]}, "config: head_timeout must be positive, got 0.0"),
        (
            {"server": {"trusted_proxies": ["*"]}, "route": [ROUTE]},
            "config: trusted_proxies: '*' is not an IP address or network "
            "(a forwarded header is believed only from the proxies named)",
        ),
        (
            {"server": {"host": "0.0.0.0"}, "route": [ROUTE]},
            "config: listening on 0.0.0.0 needs a proxy key (proxy_key_env, --proxy-key-env): "
            "without one the proxy would be an open relay",
        ),
    ],
)
def test_a_bad_config_is_refused_with_where_and_why(data: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_config(data)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["serve"], "the flags: no route: give at least one [[route]] (or --upstream FORMAT=URL)"),
        (["serve", "--upstream", "openai_chat"], "--upstream takes FORMAT=VALUE, got 'openai_chat'"),
        (
            ["serve", "--upstream", "bedrock=http://x"],
            "--upstream: the format must be one of openai_chat, openai_responses, anthropic, gemini, mistral, ollama, "
            "got 'bedrock'",
        ),
        (
            ["serve", "--example", "--proxy-key-env", "STREAMKIT_TEST_UNSET"],
            "the proxy key variable STREAMKIT_TEST_UNSET is not set (or empty)",
        ),
        (
            [
                "serve",
                "--upstream",
                "openai_chat=http://x/v1",
                "--upstream-key-env",
                "openai_chat=STREAMKIT_TEST_UNSET",
            ],
            "the openai_chat route's key variable STREAMKIT_TEST_UNSET is not set (or empty)",
        ),
    ],
)
def test_serve_usage_errors_are_one_line_with_exit_2(args: list[str], message: str) -> None:
    result = replay(args)
    assert (result.code, result.stdout, result.stderr) == (2, "", f"streamkit: error: {message}\n")


def test_a_missing_key_with_workers_is_one_line_before_any_worker_starts(tmp_path: Path) -> None:
    """The docs' TOML with two workers and its key unset: the parent says so once and exits."""
    path = tmp_path / "serve.toml"
    path.write_text(
        '[server]\nworkers = 2\n[[route]]\nformat = "anthropic"\nupstream = "https://api.anthropic.com/v1"\n'
        'key_env = "STREAMKIT_TEST_UNSET"\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "streamkit", "serve", "--config", str(path), "--port", str(_free_port())],
        capture_output=True,
        text=True,
        timeout=60,
        env={key: value for key, value in os.environ.items() if key != "STREAMKIT_TEST_UNSET"},
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "streamkit: error: the anthropic route's key variable STREAMKIT_TEST_UNSET is not set (or empty)\n",
    )


def test_a_port_in_use_is_one_line_before_uvicorn_starts() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "streamkit", "serve", "--example", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"streamkit: error: cannot listen on 127.0.0.1:{port}: Address already in use "
        "(another server holds it: stop it, or pass --port)\n",
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_the_readme_command_serves_the_example_to_the_openai_sdk() -> None:
    """``streamkit serve --example``, then the openai SDK pointed at it, exactly as docs/serve.md shows."""
    pytest.importorskip("uvicorn")
    openai = pytest.importorskip("openai")
    port = _free_port()
    command = [sys.executable, "-m", "streamkit", "serve", "--example", "--port", str(port)]
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
        stream = client.chat.completions.create(
            model="example", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        printed = [
            (call.index, call.id, call.function.name, call.function.arguments)
            for chunk in stream
            for call in chunk.choices[0].delta.tool_calls or ()
        ]
        assert printed == [
            (0, "call_A", "get_weather", '{"city":"Paris"}'),
            (1, "call_B", "get_stock", '{"ticker":"AAPL"}'),
        ]
        # The SDK's default, a whole answer, reads the same two calls.
        whole = client.chat.completions.create(model="example", messages=[{"role": "user", "content": "hi"}])
        assert [(c.id, c.function.name, c.function.arguments) for c in whole.choices[0].message.tool_calls or ()] == [
            ("call_A", "get_weather", '{"city": "Paris"}'),  # a whole body keeps the upstream's own bytes
            ("call_B", "get_stock", '{"ticker": "AAPL"}'),
        ]
        with pytest.raises(openai.NotFoundError) as refused:  # the example serves its one model
            client.chat.completions.create(model="gpt-x", messages=[{"role": "user", "content": "hi"}])
        assert "no route serves model 'gpt-x'; the openai_chat routes serve 'example'" in str(refused.value)
        raw = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json={"model": "example", "messages": []})
        assert len(raw.headers.get_list("date")) == 1
    finally:
        server.send_signal(signal.SIGTERM)
        _, errors = server.communicate(timeout=20)
    assert server.returncode == -signal.SIGTERM  # uvicorn shuts down, then re-raises the signal it caught
    assert "Waiting for application shutdown.\n" in errors and "Finished server process" in errors
    assert errors.splitlines()[0] == (
        f"streamkit serve: the example answers at http://127.0.0.1:{port}/v1 (model 'example', any key); try: "
        f"curl -s http://127.0.0.1:{port}/v1/chat/completions -H 'content-type: application/json' "
        """-d '{"model": "example", "messages": [{"role": "user", "content": "Weather in Paris, and AAPL?"}]}'"""
    )
    logged = [json.loads(line) for line in errors.splitlines() if line.startswith("{")]
    proxied = next(line for line in logged if line["format"] == "openai_chat" and line.get("model") == "example")
    assert {key: proxied[key] for key in ("status", "upstream_status", "calls", "invalid", "outcome")} == {
        "status": 200,
        "upstream_status": 200,
        "calls": 2,
        "invalid": 0,
        "outcome": "ok",
    }


def test_the_emit_and_otel_flags_make_the_config() -> None:
    parser = argparse.ArgumentParser()
    add_command(parser.add_subparsers())
    args = parser.parse_args(
        ["serve", "--upstream", "anthropic=http://127.0.0.1:1/v1", "--emit", "fragments", "--otel"]
    )
    config = config_of(args, Limits())
    assert config.telemetry is True
    routes = [(route.format, route.emit) for route in config.routes]
    # a translated route writes calls whole
    assert routes == [("anthropic", "fragments"), ("openai_chat", "whole"), ("openai_responses", "whole")]


def test_the_deadline_and_bound_flags_make_the_config() -> None:
    parser = argparse.ArgumentParser()
    add_command(parser.add_subparsers())
    flags = ["--head-timeout", "5", "--body-timeout", "6", "--send-timeout", "7", "--keep-alive-timeout", "8"]
    flags += ["--max-head-bytes", "4096", "--max-concurrency", "100"]
    flags += ["--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "::1"]
    args = parser.parse_args(["serve", "--upstream", "anthropic=http://127.0.0.1:1/v1", *flags])
    config = config_of(args, Limits())
    assert (config.head_timeout, config.body_timeout, config.send_timeout, config.keep_alive_timeout) == (5, 6, 7, 8)
    assert (config.max_head_bytes, config.max_concurrency, config.trusted_proxies) == (4096, 100, ("10.0.0.0/8", "::1"))
    assert parse_config(config.to_dict()) == config  # what the workers read back


def test_otel_without_opentelemetry_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvicorn")
    monkeypatch.delattr(streamkit, "telemetry", raising=False)
    monkeypatch.setitem(sys.modules, "streamkit.telemetry", None)
    result = replay(["serve", "--example", "--otel"])
    assert (result.code, result.stderr) == (
        2,
        "streamkit: error: telemetry needs OpenTelemetry's API, which is not installed: "
        "pip install 'streamkit-toolcalls[otel]'\n",
    )


KEY_A, KEY_B = "sk-Ab3dE6gH9jK2mN5p", "sk-Qr8sT1uV4wX7yZ0c"


def test_proxy_keys_in_a_comma_list_are_trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMKIT_TEST_KEYS", f" {KEY_A} ,\t{KEY_B}\n, ")
    config = parse_config({"server": {"proxy_key_env": "STREAMKIT_TEST_KEYS"}, "route": [ROUTE]})
    assert config.proxy_keys() == (KEY_A, KEY_B)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            f"{KEY_A},sk-1234",
            "the proxy key variable STREAMKIT_TEST_KEYS holds a key of 7 characters; a proxy key needs at least 16 "
            "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')",
        ),
        (
            "correct horse battery staple",
            "the proxy key variable STREAMKIT_TEST_KEYS holds a key with a space or a character that is not "
            "printable ASCII, which no client can send as a bearer token "
            "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')",
        ),
    ],
)
def test_a_guessable_or_unsendable_proxy_key_stops_the_start_in_one_line(
    monkeypatch: pytest.MonkeyPatch, value: str, message: str
) -> None:
    monkeypatch.setenv("STREAMKIT_TEST_KEYS", value)
    with socket.create_server(("127.0.0.1", 0)) as taken:  # a start that got past the key would stop here
        port = str(taken.getsockname()[1])
        result = replay(["serve", "--example", "--proxy-key-env", "STREAMKIT_TEST_KEYS", "--port", port])
    assert (result.code, result.stdout, result.stderr) == (2, "", f"streamkit: error: {message}\n")
    assert "sk-1234" not in result.stderr  # the key itself is never shown


def test_the_docs_config_parses_and_states_the_defaults() -> None:
    """docs/serve.md's TOML is a config the proxy takes, and its server values are the defaults it states."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "serve.md").read_text()
    block = page.split("```toml\n", 1)[1].split("```", 1)[0]
    config = parse_config(tomllib.loads(block))
    defaults = parse_config({"route": [ROUTE]})
    for name in ("head_timeout", "body_timeout", "send_timeout", "keep_alive_timeout", "max_head_bytes"):
        assert getattr(config, name) == getattr(defaults, name), name
    assert (config.max_concurrency, config.trusted_proxies) == (None, ())


def test_one_upstream_serves_every_client_format_that_can_be_sent_to_it() -> None:
    """``--upstream openai_chat=URL``: Chat clients as they are, Messages clients (Claude Code)
    and Responses clients (Codex) translated, and the other way round; an upstream of a client's
    own format wins over translation."""
    parser = argparse.ArgumentParser()
    add_command(parser.add_subparsers())

    def routes(*flags: str) -> list[tuple[str, str | None]]:
        config = config_of(parser.parse_args(["serve", *flags]), Limits())
        return [(route.format, route.upstream_format) for route in config.routes]

    assert routes("--upstream", "openai_chat=http://127.0.0.1:1/v1") == [
        ("openai_chat", None),
        ("openai_responses", "openai_chat"),
        ("anthropic", "openai_chat"),
    ]
    both = routes("--upstream", "openai_chat=http://127.0.0.1:1/v1", "--upstream", "anthropic=http://127.0.0.1:2")
    assert both == [("openai_chat", None), ("anthropic", None), ("openai_responses", "openai_chat")]
    assert routes("--upstream", "anthropic=http://127.0.0.1:2/v1") == [
        ("anthropic", None),
        ("openai_chat", "anthropic"),
        ("openai_responses", "anthropic"),
    ]
    assert routes("--upstream", "gemini=http://127.0.0.1:1") == [
        ("openai_chat", "gemini"),
        ("openai_responses", "gemini"),
        ("anthropic", "gemini"),
    ]
    assert routes("--upstream", "ollama=http://127.0.0.1:11434") == [  # Ollama's native /api/chat
        ("openai_chat", "ollama"),
        ("openai_responses", "ollama"),
        ("anthropic", "ollama"),
    ]
    route = {"format": "anthropic", "upstream": "http://127.0.0.1:11434", "upstream_format": "ollama"}
    assert [(r.format, r.upstream_format) for r in parse_config({"route": [route]}).routes] == [("anthropic", "ollama")]
