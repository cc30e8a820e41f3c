"""Every provider decoder added here ships the same four fixtures, each showing what it should."""

from __future__ import annotations

import json

import pytest

from ..helpers import fixtures

SETS = {
    "openai_responses": "incomplete_truncated",
    "gemini": "max_tokens_truncated",
    "cohere": "max_tokens_truncated",
    "mistral": "length_truncated",
}


@pytest.mark.parametrize(("provider", "truncated"), SETS.items())
def test_the_four_cases(provider: str, truncated: str) -> None:
    cases = {f.path.stem: f for f in fixtures(provider)}
    lines = {name: [json.loads(line) for line in f.expected_stdout.splitlines()] for name, f in cases.items()}
    assert [line["type"] for line in lines["text_then_two_calls"]] == ["tool_call", "tool_call", "end"]
    no_arguments = [line["input"] for line in lines["no_arguments"] if line["type"] == "tool_call"]
    assert no_arguments[:2] == [{}, {}]
    error = cases["error_midstream"].expected_stderr
    assert error is not None and f"{provider} reported an error" in error
    assert cases[truncated].expected_stderr is None
    cut = [line for line in lines[truncated] if line["type"] == "invalid_tool_call"]
    assert [issue["kind"] for line in cut for issue in line["errors"]] == ["truncated"]
