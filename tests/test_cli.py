"""The ``streamkit replay`` contract: lines, exit statuses, stdin, usage errors."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import signal
import struct
import subprocess
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from streamkit import Limits
from streamkit._cli import main

from .helpers import FIXTURES, ROOT, Fixture, fixtures, replay, sse

CASE = FIXTURES / "anthropic" / "text_then_two_calls.sse"


def test_stdin_gives_the_same_lines() -> None:
    from_file = replay(["replay", str(CASE), "--provider", "anthropic"])
    from_stdin = replay(["replay", "-", "--provider", "anthropic"], stdin=CASE.read_bytes())
    assert from_stdin == from_file
    assert [json.loads(line)["type"] for line in from_file.stdout.splitlines()] == ["tool_call", "tool_call", "end"]


def test_unknown_provider_is_a_usage_error() -> None:
    result = replay(["replay", str(CASE), "--provider", "nope"])
    assert result.code == 2 and result.stdout == ""
    assert result.stderr.startswith("streamkit: error: unknown provider 'nope'; known providers: anthropic,")


@pytest.mark.parametrize("wrong", ["gemini", "openai_chat", "mistral", "cohere"])
def test_a_recording_read_as_another_providers_says_whose_it_looks_like(wrong: str) -> None:
    result = replay(["replay", str(CASE), "--provider", wrong])
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        f"streamkit: error: {wrong}: the stream ended before the provider's end-of-stream marker (the input "
        f"looks like anthropic's stream, not {wrong}'s: pass --provider anthropic or --provider auto)\n"
    )


def test_a_stream_no_provider_is_told_from_points_to_auto(tmp_path: Path) -> None:
    odd = tmp_path / "odd.sse"
    odd.write_bytes(b": keep-alive\n\n" * 3)  # bytes, and never an event anyone would know
    result = replay(["replay", str(odd), "--provider", "anthropic"])
    assert result.code == 1
    assert result.stderr.endswith(
        "(is the input anthropic's stream? --provider auto tells the provider from the first events)\n"
    )


def test_unreadable_file_is_a_usage_error(tmp_path: Path) -> None:
    result = replay(["replay", str(tmp_path / "missing.sse"), "--provider", "anthropic"])
    assert result.code == 2 and "cannot read" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("value", ["0", "abc", "-3", "1.5"])
def test_bad_chunk_size_is_a_usage_error(value: str) -> None:
    result = replay(["replay", str(CASE), "--provider", "anthropic", "--chunk-size", value])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == (
        f"streamkit: error: argument --chunk-size: must be a whole number of at least 1, got {value!r} "
        "(see streamkit replay --help)\n"
    )


def test_a_stream_that_is_not_utf8_names_its_provider_and_shows_the_byte(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sse"
    bad.write_bytes(b'data: {"city": "Z\xfcrich"}\n\n')
    result = replay(["replay", str(bad), "--provider", "openai_chat"])
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        "streamkit: error: openai_chat: the stream is not valid UTF-8 at byte 17 "
        """near 'data: {"city": "Z<0xFC>rich'\n"""
    )


def test_installed_command_and_module_run() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "streamkit", "replay", str(CASE), "--provider", "anthropic"],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.decode() == CASE.with_name("text_then_two_calls.expected.jsonl").read_text()


TOOLS = [
    {"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "get_stock", "input_schema": {"type": "object", "properties": {"ticker": {"enum": ["MSFT"]}}}},
]


def test_tools_option_puts_schema_errors_on_the_lines(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    result = replay(["replay", str(CASE), "--provider", "anthropic", "--tools", str(tools)])
    assert result.code == 0 and result.stderr == ""
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {
            "type": "invalid_tool_call",
            "index": 1,
            "id": "toolu_A",
            "name": "get_weather",
            "raw": '{"city": "Paris", "units": "c"}',
            "errors": [{"kind": "schema", "message": '"units" is not a property this tool accepts', "path": "$.units"}],
        },
        {
            "type": "invalid_tool_call",
            "index": 2,
            "id": "toolu_B",
            "name": "get_stock",
            "raw": '{"ticker": "AAPL"}',
            "errors": [{"kind": "schema", "message": '"AAPL" is not one of "MSFT"', "path": "$.ticker"}],
        },
        {"type": "end", "stop_reason": "tool_use", "usage": {"input_tokens": 377, "output_tokens": 65}},
    ]


def test_matching_tools_leave_the_output_unchanged(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"get_weather": {"type": "object"}, "get_stock": {"type": "object"}}))
    with_tools = replay(["replay", str(CASE), "--provider", "anthropic", "--tools", str(tools)])
    assert with_tools == replay(["replay", str(CASE), "--provider", "anthropic"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the tools file"),
        ("[{", "is not JSON: "),
        ('[{"name": "f", "input_schema": {"type": 3}}]', "tools[0]: the schema of tool 'f' is not valid JSON Schema"),
        ('"get_weather"', "holds a string: it must be a list of tool definitions or an object mapping tool names"),
        ("null", "holds null: it must be a list of tool definitions or an object mapping tool names to schemas"),
        ("3", "holds a number: it must be"),
    ],
    ids=["missing", "not-json", "bad-schema", "not-a-list", "null", "number"],
)
def test_a_bad_tools_file_is_a_usage_error(tmp_path: Path, content: str | None, message: str) -> None:
    tools = tmp_path / "tools.json"
    if content is not None:
        tools.write_text(content)
    result = replay(["replay", str(CASE), "--provider", "anthropic", "--tools", str(tools)])
    assert result.code == 2 and result.stdout == ""
    assert result.stderr.startswith("streamkit: error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1


def test_history_is_printed_only_when_asked_and_only_for_a_whole_stream() -> None:
    import json

    from .helpers import FIXTURES, replay

    path = FIXTURES / "anthropic" / "thinking_then_call.sse"
    plain = replay(["replay", str(path), "--provider", "anthropic"])
    with_history = replay(["replay", str(path), "--provider", "anthropic", "--history"])
    assert with_history.stdout.startswith(plain.stdout)
    (extra,) = with_history.stdout[len(plain.stdout) :].splitlines()
    line = json.loads(extra)
    assert (line["type"], line["provider"], [m["role"] for m in line["items"]]) == (
        "history",
        "anthropic",
        ["assistant"],
    )
    assert "dropped" not in line
    failed = replay(
        ["replay", str(FIXTURES / "anthropic" / "error_midstream.sse"), "--provider", "anthropic", "--history"]
    )
    assert failed.code == 1
    assert '"type":"history"' not in failed.stdout


# -- usage errors: one line, the same from every command -------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["replay", str(CASE)], "the following arguments are required: --provider (see streamkit replay --help)"),
        (
            ["replay", str(CASE), "--provider", "anthropic", "--nope"],
            "unrecognized arguments: --nope (see streamkit --help)",
        ),
        (
            ["live", "--provider", "anthropic"],
            "the following arguments are required: --url, --body (see streamkit live --help)",
        ),
        (
            ["record", "--url", "u", "--body", "b", "--provider", "x"],
            "the following arguments are required: -o/--output (see streamkit record --help)",
        ),
        ([], "the following arguments are required: {replay,live,record,serve} (see streamkit --help)"),
        (
            ["play"],
            "argument {replay,live,record,serve}: invalid choice: 'play' (choose from 'replay', 'live', 'record', "
            "'serve') (see streamkit --help)",
        ),
    ],
    ids=["replay-missing", "unknown-option", "live-missing", "record-missing", "no-command", "bad-command"],
)
def test_usage_errors_are_one_line_with_exit_2(args: list[str], message: str) -> None:
    result = replay(args)
    assert (result.code, result.stdout, result.stderr) == (2, "", f"streamkit: error: {message}\n")


def test_version() -> None:
    import streamkit

    result = replay(["--version"])
    assert (result.code, result.stdout, result.stderr) == (0, f"streamkit {streamkit.__version__}\n", "")


# -- limits: one option per Limits field ----------------------------------------------------------


def anthropic_calls(count: int) -> bytes:
    """An Anthropic stream of ``count`` whole calls."""
    start = sse({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}}, named=True)
    calls = [
        sse(
            {"type": "content_block_start", "index": index,
             "content_block": {"type": "tool_use", "id": f"toolu_{index}", "name": "f", "input": {}}},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "input_json_delta", "partial_json": f'{{"n": {index}}}'}},
            {"type": "content_block_stop", "index": index},
            named=True,
        )
        for index in range(count)
    ]  # fmt: skip
    end = sse({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}, {"type": "message_stop"}, named=True)
    return start + b"".join(calls) + end


LIMIT_OPTIONS = ["--" + field.name.replace("_", "-") for field in dataclasses.fields(Limits)]


@pytest.mark.parametrize("command", ["replay", "live", "record"])
def test_every_limits_field_is_an_option_of_the_commands_that_decode(command: str) -> None:
    result = replay([command, "--help"])
    assert result.code == 0
    offered = {word for word in result.stdout.split() if word.startswith("--max-")}
    assert offered == set(LIMIT_OPTIONS)  # made from the dataclass: a new field is a new option


@pytest.mark.parametrize("option", LIMIT_OPTIONS)
def test_a_limit_option_takes_what_limits_takes(option: str) -> None:
    result = replay(["replay", str(CASE), "--provider", "anthropic", option, "0"])
    assert (result.code, result.stderr) == (
        2,
        f"streamkit: error: argument {option}: must be a whole number of at least 1, got '0' "
        "(see streamkit replay --help)\n",
    )


def test_max_depth_above_its_ceiling_is_refused_by_limits_itself() -> None:
    result = replay(["replay", str(CASE), "--provider", "anthropic", "--max-depth", "513"])
    assert (result.code, result.stderr) == (
        2,
        "streamkit: error: argument --max-depth: must be at most 512, got 513 (see streamkit replay --help)\n",
    )


def test_a_long_transcript_needs_a_higher_max_calls(tmp_path: Path) -> None:
    path = tmp_path / "many.sse"
    path.write_bytes(anthropic_calls(1100))
    stopped = replay(["replay", str(path), "--provider", "anthropic"])
    assert stopped.code == 1 and len(stopped.stdout.splitlines()) == 1024
    assert stopped.stderr == (
        "streamkit: error: anthropic: call index 1024: too many calls in one response: limit max_calls=1024\n"
    )
    whole = replay(["replay", str(path), "--provider", "anthropic", "--max-calls", "1100"])
    assert (whole.code, whole.stderr, len(whole.stdout.splitlines())) == (0, "", 1101)
    small = replay(["replay", str(path), "--provider", "anthropic", "--max-calls", "2", "--max-event-bytes", "4096"])
    assert small.code == 1 and small.stderr.endswith("limit max_calls=2\n")


# -- the real process: pipes, signals, a full disk -------------------------------------------------


def cli(*args: str, **popen: Any) -> subprocess.Popen[bytes]:
    """``python -m streamkit`` in a child process, importing this checkout, killed after a minute
    (so that a command that waits for input it should not need fails its test, never hangs it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **popen.pop("env", {})}
    then = popen.pop("preexec_fn", None)

    def child() -> None:
        # A job started in the background by a non-interactive shell (as CI may run the suite)
        # inherits SIGINT ignored, and Python then never raises KeyboardInterrupt: restore it.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if then is not None:
            then()

    proc = subprocess.Popen([sys.executable, "-m", "streamkit", *args], env=env, preexec_fn=child, **popen)
    watchdog = threading.Timer(60, proc.kill)
    watchdog.daemon = True
    watchdog.start()
    return proc


def test_a_reader_that_leaves_early_is_a_quiet_normal_end(tmp_path: Path) -> None:
    path = tmp_path / "many.sse"
    path.write_bytes(anthropic_calls(5000))  # about 500 KB of lines: far more than a pipe holds
    args = ["replay", str(path), "--provider", "anthropic", "--max-calls", "5000"]
    with cli(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        proc.stdout.close()  # what `| head -1` does
        assert proc.wait(60) == 0
        assert proc.stderr.read() == b""
    assert json.loads(first)["id"] == "toolu_0"


def test_a_reader_that_leaves_a_failing_stream_still_gets_exit_1(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    class Closed(io.BytesIO):
        def write(self, data: Any) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    wire = CASE.read_bytes()
    cut = tmp_path / "cut.sse"
    cut.write_bytes(wire[: wire.index(b"event: content_block_stop", wire.index(b"toolu_A"))])
    err = io.StringIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(Closed()))
    monkeypatch.setattr(sys, "stderr", err)
    # The first line written is the unfinished call, after the stream failed: the status says so.
    code = main(["replay", str(cut), "--provider", "anthropic"])
    assert (code, err.getvalue()) == (
        1,
        "streamkit: error: anthropic: the stream ended before the provider's end-of-stream marker "
        "(1 call(s) unfinished)\n",
    )


ARGS = ("replay", str(CASE), "--provider", "anthropic")


def test_a_full_disk_is_one_line_and_exit_2() -> None:
    with open("/dev/full", "wb") as full, cli(*ARGS, stdout=full, stderr=subprocess.PIPE) as proc:
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (
        2,
        b"streamkit: error: cannot write to standard output: No space left on device\n",
    )


PIPES: dict[str, Any] = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}


@pytest.mark.parametrize("provider", ["anthropic", "auto"])
def test_ctrl_c_while_reading_stdin_is_one_line_and_exit_130(provider: str) -> None:
    wire = CASE.read_bytes()
    first_call = wire.index(b"\n\n", wire.index(b"event: content_block_stop", wire.index(b"toolu_A"))) + 2
    with cli("replay", "-", "--provider", provider, **PIPES) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(wire[:first_call])  # the first call whole: printed while stdin stays open
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == "toolu_A"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130
        detected = b"streamkit: detected provider anthropic\n" if provider == "auto" else b""
        assert proc.stderr.read() == detected + b"streamkit: interrupted\n"


def test_endless_stdin_stops_at_the_limit() -> None:
    """Standard input is decoded as it comes: the limits bound the command as they bound the library."""
    wire = anthropic_calls(100)
    start = wire.index(b"event: content_block_start")
    head, calls = wire[:start], wire[start : wire.index(b"event: message_delta")]
    with cli("replay", "-", "--provider", "anthropic", "--max-calls", "3", **PIPES) as proc:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        stdin = proc.stdin

        def feed() -> None:
            with contextlib.suppress(OSError, ValueError):
                stdin.write(head)
                while True:  # never ends: the command must stop reading on its own
                    stdin.write(calls)

        threading.Thread(target=feed, daemon=True).start()
        out, err = proc.stdout.read(), proc.stderr.read()  # a command that read all of stdin never ends
        assert proc.wait(60) == 1
    assert err == b"streamkit: error: anthropic: call index 3: too many calls in one response: limit max_calls=3\n"
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["toolu_0", "toolu_1", "toolu_2"]


@pytest.mark.parametrize("fixture", fixtures(), ids=lambda f: f.case)
def test_stdin_in_small_chunks_prints_every_fixture_byte_for_byte(fixture: Fixture) -> None:
    args = ["replay", "-", "--provider", fixture.provider, "--chunk-size", "7"]
    result = replay(args, stdin=fixture.path.read_bytes())
    assert result.stdout == fixture.expected_stdout
    expected_err = "" if fixture.expected_stderr is None else f"streamkit: error: {fixture.expected_stderr}\n"
    assert (result.code, result.stderr) == (0 if fixture.expected_stderr is None else 1, expected_err)


def test_an_unexpected_exception_is_one_line_and_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a defect")

    monkeypatch.setattr("streamkit._cli.iter_events", broken)
    result = replay(["replay", str(CASE), "--provider", "anthropic"])
    assert (result.code, result.stdout, result.stderr) == (3, "", "streamkit: internal error: RuntimeError: a defect\n")


def test_closed_standard_streams_are_no_traceback() -> None:
    def close(fd: int) -> Callable[[], None]:
        return lambda: os.close(fd)

    with cli("replay", "-", "--provider", "anthropic", stderr=subprocess.PIPE, preexec_fn=close(0)) as proc:
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (1, b"streamkit: error: anthropic: the stream was empty: no bytes arrived\n")
    with cli(*ARGS, stderr=subprocess.PIPE, preexec_fn=close(1)) as proc:
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (0, b"")  # like a reader that left before the first line


@pytest.mark.parametrize(
    ("path", "first"),
    [
        (FIXTURES / "bedrock" / "text_then_two_calls.bin", 16),  # an event-stream prelude, no line end in it
        (CASE, CASE.read_bytes().index(b"\n\n") + 2),  # the first SSE event
    ],
    ids=["bedrock", "anthropic"],
)
def test_auto_reads_only_as_far_as_the_first_telling_bytes(path: Path, first: int) -> None:
    """A pipe that has sent only the first bytes is not waited on: the command decodes as they come."""
    from streamkit._cli import _detect

    def blocks() -> Iterator[bytes]:
        yield path.read_bytes()[:first]
        raise AssertionError("read past the bytes that tell the provider")

    slug, head = _detect(blocks())
    assert (slug, head) == (path.parent.name, path.read_bytes()[:first])


def test_a_damaged_event_stream_says_which_checksum_in_one_line(tmp_path: Path) -> None:
    data = bytearray((FIXTURES / "bedrock" / "text_then_two_calls.bin").read_bytes())
    data[3] ^= 0x01  # the first message's total length: its prelude no longer matches its CRC
    (stored,) = struct.unpack_from(">I", data, 8)
    path = tmp_path / "damaged.bin"
    path.write_bytes(data)
    result = replay(["replay", str(path), "--provider", "bedrock"])
    assert (result.code, result.stdout) == (1, "")
    assert result.stderr == (
        f"streamkit: error: bedrock: the prelude's checksum does not match its bytes "
        f"(CRC32 0x{stored:08x} stored, 0x{zlib.crc32(data[:8]):08x} computed), in the event-stream message at byte 0\n"
    )
