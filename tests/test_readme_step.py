"""The documented tool-loop step (docs/validation.md) runs as written, for OpenAI Chat and for Anthropic."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from .helpers import FIXTURES, ROOT


def readme_step() -> Any:
    """The page's first example, which defines the tools, ``run`` and ``step``."""
    page = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL)[0]
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    return namespace["step"]


class Response:
    def __init__(self, data: bytes) -> None:
        self.data = data

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.data), 100):
            yield self.data[start : start + 100]


def take_step(provider: str) -> tuple[bool, list[dict[str, Any]]]:
    history: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris, and AAPL?"}]
    response = Response((FIXTURES / provider / "text_then_two_calls.sse").read_bytes())
    more = asyncio.run(readme_step()(history, response, provider))
    return more, history[1:]


def test_openai_chat_step() -> None:
    more, added = take_step("openai_chat")
    assert more is True
    assert added == [
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [
                {
                    "id": "call_A",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "call_B",
                    "type": "function",
                    "function": {"name": "get_stock", "arguments": '{"ticker":"AAPL"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_A", "content": '{"temp_c":21}'},
        {"role": "tool", "tool_call_id": "call_B", "content": "182.5"},
    ]


def test_anthropic_step_sends_the_schema_error_back() -> None:
    more, added = take_step("anthropic")
    assert more is True
    error = {
        "ok": False,
        "errors": [{"kind": "schema", "message": '"units" is not a property this tool accepts', "path": "$.units"}],
    }
    assert added == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking both."},
                {"type": "tool_use", "id": "toolu_A", "name": "get_weather", "input": {"city": "Paris", "units": "c"}},
                {"type": "tool_use", "id": "toolu_B", "name": "get_stock", "input": {"ticker": "AAPL"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_A",
                    "content": json.dumps(error, separators=(",", ":")),
                    "is_error": True,
                },
                {"type": "tool_result", "tool_use_id": "toolu_B", "content": "182.5"},
            ],
        },
    ]


def test_a_text_only_answer_ends_the_loop() -> None:
    history: list[dict[str, Any]] = []
    response = Response((FIXTURES / "anthropic" / "text_only_crlf.sse").read_bytes())
    assert asyncio.run(readme_step()(history, response, "anthropic")) is False
    assert len(history) == 1 and history[0]["role"] == "assistant"
    assert [block["type"] for block in history[0]["content"]] == ["text"]
