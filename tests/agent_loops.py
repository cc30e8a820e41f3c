"""What the framework agent-loop tests share: the scenarios, the recorded tools, and what the
model was told, read back from the request the loopback server kept.

Each scenario is a recorded first turn of one provider; the agent runs the tools it asks for,
then the server answers the next request with a plain text turn, which ends the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .helpers import FIXTURES
from .server import LoopbackServer, Reply, Turns

#: Each provider's path on the loopback server, and its base URL's suffix there.
PATHS = {
    "anthropic": ("/v1/messages", ""),
    "openai_chat": ("/v1/chat/completions", "/v1"),
    "gemini": ("/v1beta/models/m:streamGenerateContent", ""),
}

_GEMINI_DONE = (
    b'data: {"candidates":[{"content":{"parts":[{"text":"done"}],"role":"model"},"finishReason":"STOP"}]}\n\n'
)
_CHAT_DONE = (
    b'data: {"id":"c2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
    b'"delta":{"role":"assistant","content":"done"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)
#: A plain text turn per provider: the model's answer once the tools ran.
DONE = {
    "anthropic": (FIXTURES / "anthropic/text_only_crlf.sse").read_bytes(),
    "openai_chat": _CHAT_DONE,
    "gemini": _GEMINI_DONE,
}
#: The text of each provider's plain turn.
DONE_TEXT = {"anthropic": "Hello ☃", "openai_chat": "done", "gemini": "done"}


@dataclass(frozen=True)
class Scenario:
    """A first turn, the tools that must run with their arguments, and what the model must be
    told of each call, in order: ``"ran"`` for a result, or the kind of the error it was sent."""

    provider: str
    fixture: str  # "" for the plain turn
    runs: list[tuple[str, dict[str, Any]]]
    told: list[str] = field(default_factory=list)

    @property
    def first(self) -> bytes:
        """The first turn's stream: the fixture's, or the plain turn for a scenario with none."""
        return (FIXTURES / self.fixture).read_bytes() if self.fixture else DONE[self.provider]


SCENARIOS = {
    "openai_chat-two-calls-at-index-0": Scenario(
        "openai_chat",
        "openai_chat/parallel_calls_all_index_zero.sse",
        [("get_weather", {"city": "Paris"}), ("get_stock", {"ticker": "AAPL"})],
        ["ran", "ran"],
    ),
    "openai_chat-cut": Scenario("openai_chat", "openai_chat/length_truncated.sse", [], ["truncated"]),
    "openai_chat-complete-then-cut": Scenario(
        "openai_chat",
        "openai_chat/length_after_a_followed_call.sse",
        [("get_stock", {"ticker": "AAPL"})],
        ["ran", "truncated"],
    ),
    "openai_chat-invalid-json-schema-unknown": Scenario(
        "openai_chat",
        "openai_chat/invalid_calls_then_a_valid_one.sse",
        [("get_stock", {"ticker": "AAPL"})],
        ["invalid_json", "ran", "schema", "unknown_tool"],
    ),
    "openai_chat-plain": Scenario("openai_chat", "", [], []),
    "anthropic-cut": Scenario("anthropic", "anthropic/max_tokens_cut_after_a_whole_value.sse", [], ["truncated"]),
    "anthropic-complete-then-cut": Scenario(
        "anthropic", "anthropic/max_tokens_truncated.sse", [("get_weather", {"city": "Paris"})], ["ran", "truncated"]
    ),
    "anthropic-invalid-json-schema-unknown": Scenario(
        "anthropic",
        "anthropic/invalid_calls_between_blocks.sse",
        [("get_stock", {"ticker": "AAPL"})],
        ["invalid_json", "ran", "schema", "unknown_tool"],
    ),
    "anthropic-plain": Scenario("anthropic", "", [], []),
}
#: Gemini's, for the frameworks that speak it.
GEMINI_SCENARIOS = {
    "gemini-two-calls-with-signatures": Scenario(
        "gemini",
        "gemini/thought_signatures.sse",
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
        ["ran", "ran"],
    ),
    "gemini-cut": Scenario("gemini", "gemini/max_tokens_truncated.sse", [], ["truncated"]),
    "gemini-plain": Scenario("gemini", "", [], []),
}


#: Bytes per write of a served stream: reads split inside events, names and arguments.
PIECE = 29


def pieces(data: bytes) -> Reply:
    return Reply([data[start : start + PIECE] for start in range(0, len(data), PIECE)])


def serve(server: LoopbackServer, scenario: Scenario) -> str:
    """Route the scenario's turns on ``server``, each written in small pieces; the base URL to give the model."""
    path, suffix = PATHS[scenario.provider]
    if scenario.told:
        server.routes = Turns(path, pieces(scenario.first), pieces(DONE[scenario.provider]))
    else:
        server.routes = {path: pieces(scenario.first)}
    return server.url(suffix)


class Tools:
    """The tools every scenario offers, recording each run with its arguments."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    def get_weather(self, city: str) -> str:
        """The weather in a city."""
        self.ran.append(("get_weather", {"city": city}))
        return f"sunny in {city}"

    def get_stock(self, ticker: str) -> str:
        """A stock's price."""
        self.ran.append(("get_stock", {"ticker": ticker}))
        return f"{ticker} at 182.5"

    def write_file(self, path: str, content: str) -> str:
        """Write a file."""
        self.ran.append(("write_file", {"path": path, "content": content}))
        return "written"


def request(server: LoopbackServer, number: int) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(server.requests[number].body)
    return body


def results(provider: str, body: dict[str, Any]) -> list[Any]:
    """The tool results the request sends back, in order, each as its content."""
    if provider == "anthropic":
        last = body["messages"][-1]["content"]
        return [block["content"] for block in last if block["type"] == "tool_result"]
    if provider == "openai_chat":
        tail: list[Any] = []
        for message in reversed(body["messages"]):
            if message["role"] != "tool":
                break
            tail.insert(0, message["content"])
        return tail
    parts = body["contents"][-1]["parts"]
    return [part["functionResponse"]["response"] for part in parts if "functionResponse" in part]


def told(content: Any) -> str:
    """``"ran"`` for a tool's result, or the error kinds of streamkit's payload (``{"ok": false, ...}``)."""
    payload = json.loads(content) if isinstance(content, str) and content.startswith("{") else content
    if isinstance(payload, dict) and set(payload) == {"error"}:  # Gemini's functionResponse
        payload = payload["error"]
    if isinstance(payload, dict) and payload.get("ok") is False:
        return ",".join(entry["kind"] for entry in payload["errors"])
    return "ran"
