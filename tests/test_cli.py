"""The ``streamkit replay`` contract: lines, exit statuses, stdin, usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import FIXTURES, replay

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


def test_unreadable_file_is_a_usage_error(tmp_path: Path) -> None:
    result = replay(["replay", str(tmp_path / "missing.sse"), "--provider", "anthropic"])
    assert result.code == 2 and "cannot read" in result.stderr and result.stdout == ""


def test_bad_chunk_size_is_a_usage_error() -> None:
    assert replay(["replay", str(CASE), "--provider", "anthropic", "--chunk-size", "0"]).code == 2


def test_framing_error_exits_1_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sse"
    bad.write_bytes(b"data: \xff\n\n")
    result = replay(["replay", str(bad), "--provider", "openai_chat"])
    assert result.code == 1
    assert result.stderr.count("\n") == 1 and "not valid UTF-8 at byte 6" in result.stderr


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
        ('"get_weather"', "tools must be a list of tool definitions or a mapping"),
    ],
    ids=["missing", "not-json", "bad-schema", "not-a-list"],
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
