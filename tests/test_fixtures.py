"""Every fixture replays to its expected output, whole, one byte at a time and at any chunking."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamkit import StreamError, iter_events
from streamkit._cli import to_json_line

from .helpers import Fixture, fixtures, one_byte, replay, slug, split_at

ALL = fixtures()


def _lines(chunks: list[bytes], provider: str) -> tuple[list[dict[str, object]], str | None]:
    lines = []
    error = None
    try:
        for item in iter_events(chunks, slug(provider)):
            line = to_json_line(item)
            if line is not None:
                lines.append(line)
    except StreamError as exc:
        lines.extend(line for call in exc.unfinished if (line := to_json_line(call)) is not None)
        error = str(exc)
    return lines, error


def _expected(fixture: Fixture) -> tuple[list[dict[str, object]], str | None]:
    import json

    return [json.loads(line) for line in fixture.expected_stdout.splitlines()], fixture.expected_stderr


def test_there_are_fixtures_for_each_core_provider() -> None:
    providers = {f.provider for f in ALL}
    assert {"anthropic", "openai_chat"} <= providers


@pytest.mark.parametrize("fixture", ALL, ids=[f.case for f in ALL])
def test_replay_whole(fixture: Fixture) -> None:
    result = replay(["replay", str(fixture.path), "--provider", fixture.provider])
    assert result.stdout == fixture.expected_stdout
    if fixture.expected_stderr is None:
        assert (result.code, result.stderr) == (0, "")
    else:
        assert result.code == 1
        assert result.stderr == f"streamkit: error: {fixture.expected_stderr}\n"


@pytest.mark.parametrize("fixture", ALL, ids=[f.case for f in ALL])
def test_replay_chunk_size_one(fixture: Fixture) -> None:
    result = replay(["replay", str(fixture.path), "--provider", fixture.provider, "--chunk-size", "1"])
    assert result.stdout == fixture.expected_stdout


WITH_HISTORY = [f for f in ALL if f.path.with_name(f.path.stem + ".history.jsonl").exists()]


@pytest.mark.parametrize("chunk_size", [None, "1"])
@pytest.mark.parametrize("fixture", WITH_HISTORY, ids=[f.case for f in WITH_HISTORY])
def test_replay_history(fixture: Fixture, chunk_size: str | None) -> None:
    """``--history`` prints the same lines, then the turn as the provider's history entries."""
    args = ["replay", str(fixture.path), "--provider", fixture.provider, "--history"]
    result = replay(args + (["--chunk-size", chunk_size] if chunk_size else []))
    expected = fixture.path.with_name(fixture.path.stem + ".history.jsonl").read_text(encoding="utf-8")
    assert result.stdout == expected
    assert result.stdout.startswith(fixture.expected_stdout)


@pytest.mark.parametrize("fixture", ALL, ids=[f.case for f in ALL])
def test_one_byte_at_a_time(fixture: Fixture) -> None:
    data = fixture.path.read_bytes()
    assert _lines(list(one_byte(data)), fixture.provider) == _expected(fixture)


@pytest.mark.parametrize("fixture", ALL, ids=[f.case for f in ALL])
@given(cuts=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=40))
def test_any_chunking(fixture: Fixture, cuts: list[int]) -> None:
    data = fixture.path.read_bytes()
    chunks = split_at(data, [c % (len(data) + 1) for c in cuts])
    assert b"".join(chunks) == data
    assert _lines(chunks, fixture.provider) == _expected(fixture)
