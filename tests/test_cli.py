"""The ``streamkit replay`` contract: lines, exit statuses, stdin, usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
