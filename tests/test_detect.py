"""``--provider auto``: the provider named from the first events, or a usage error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamkit._detect import detect_provider

from .helpers import Fixture, fixtures, replay, sse
from .models import OPENAI

SSE_FIXTURES = [f for f in fixtures() if f.path.suffix == ".sse"]
OTHER_FIXTURES = [f for f in fixtures() if f.path.suffix != ".sse"]


@pytest.mark.parametrize("fixture", SSE_FIXTURES, ids=[f.case for f in SSE_FIXTURES])
def test_every_sse_fixture_is_detected_as_its_provider(fixture: Fixture) -> None:
    assert detect_provider(fixture.path.read_bytes()) == fixture.provider


@pytest.mark.parametrize("fixture", OTHER_FIXTURES, ids=[f.case for f in OTHER_FIXTURES])
def test_ndjson_and_event_stream_fixtures_are_detected(fixture: Fixture) -> None:
    assert detect_provider(fixture.path.read_bytes()) == fixture.provider


def test_an_ndjson_error_line_alone_does_not_tell() -> None:
    assert detect_provider(b'{"error": "model not found"}\n') is None


@pytest.mark.parametrize(
    ("data", "slug"),
    [
        (sse({"choices": [], "model": "mistral-large-latest"}), "mistral"),
        (sse({"choices": [], "model": "mistralai/Mixtral-8x7B"}), "mistral"),
        (sse({"choices": [], "model": OPENAI}), "openai_chat"),
        (b": keep-alive\n\ndata: [DONE]\n\n" + sse({"type": "ping"}), "anthropic"),
        (b"event: response.created\ndata: {}\n\n", "openai_responses"),
        (sse({"error": {"message": "x"}}, {"promptFeedback": {"blockReason": "SAFETY"}}), "gemini"),
        (sse({"type": "tool-plan-delta"}), "cohere"),
    ],
)
def test_shapes(data: bytes, slug: str) -> None:
    assert detect_provider(data) == slug


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"data: [DONE]\n\n",
        sse({"error": {"message": "x"}}),
        sse(*[{"x": n} for n in range(9)], {"choices": []}),
        b"data: \xff\n\n",
    ],
)
def test_undecided(data: bytes) -> None:
    assert detect_provider(data) is None


def test_replay_auto_says_which_provider_on_stderr() -> None:
    case = next(f for f in SSE_FIXTURES if f.case == "gemini/text_then_two_calls")
    result = replay(["replay", str(case.path), "--provider", "auto"])
    assert (result.code, result.stdout) == (0, case.expected_stdout)
    assert result.stderr == "streamkit: detected provider gemini\n"


def test_replay_auto_that_cannot_tell_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "unknown.sse"
    path.write_bytes(sse({"hello": "world"}))
    result = replay(["replay", str(path), "--provider", "auto"])
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == "streamkit: error: cannot tell the provider from the first events; pass --provider\n"


def test_replay_auto_keeps_exit_1_for_a_failed_stream() -> None:
    case = next(f for f in SSE_FIXTURES if f.case == "cohere/error_midstream")
    result = replay(["replay", str(case.path), "--provider", "auto"])
    assert result.code == 1 and [json.loads(line)["type"] for line in result.stdout.splitlines()] == [
        "invalid_tool_call"
    ]
    assert result.stderr == f"streamkit: detected provider cohere\nstreamkit: error: {case.expected_stderr}\n"
