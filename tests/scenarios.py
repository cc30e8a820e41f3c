"""The model turns every integration is tried on, written once in each provider's wire shape.

A scenario is the model's turns before its final answer ("done"), the tools that must run (with
their arguments), and what each request after a turn of calls must tell the model about each
call: the tool's result, or the kind of streamkit's error for it (``truncated``,
``invalid_json``, ``schema``). ``tests/test_integration_matrix.py`` runs the table under each
framework and provider; the framework pages state the same table for their users.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .models import ANTHROPIC
from .server import Reply
from .wire import AnthropicWire, OpenAIChatWire, Wire, call

Ran = list[tuple[str, dict[str, Any]]]
#: What one request after a turn of calls told the model: call id -> the result, or an error's kinds.
Told = dict[str, str]

#: The tools every agent under test offers, and what each returns.
RESULTS: dict[str, Callable[..., str]] = {
    "get_weather": lambda city: f"sunny in {city}",
    "get_stock": lambda ticker: f"{ticker}: 190",
}
CUT_REASON = {"openai_chat": "length", "anthropic": "max_tokens"}
FINAL_TEXT = "done"


def _sse(payload: object, event: str | None = None) -> bytes:
    return ((f"event: {event}\n" if event else "") + f"data: {json.dumps(payload)}\n\n").encode()


def _begin(wire: Wire) -> bytes:
    if isinstance(wire, OpenAIChatWire):
        return wire.begin()
    message: dict[str, Any] = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    message["model"] = ANTHROPIC
    message |= {"stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    return _sse({"type": "message_start", "message": message}, "message_start")


def _finish(wire: Wire, reason: str) -> bytes:
    ending = type(wire)()
    ending.stop_reason = reason
    return ending.finish()


def final(wire: Wire) -> bytes:
    """The model's last turn: the text ``done``, ended as a turn without calls ends."""
    if isinstance(wire, OpenAIChatWire):
        return wire.begin() + wire.text(FINAL_TEXT) + _finish(wire, "stop")
    block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": FINAL_TEXT}}
    return (
        _begin(wire)
        + _sse(block, "content_block_start")
        + _sse(delta, "content_block_delta")
        + wire.end_call(0)
        + _finish(wire, "end_turn")
    )


def _calls(wire: Wire, *calls: tuple[int, str, str, str]) -> bytes:
    """Whole calls, each ``(index, id, name, arguments)``, the arguments in two fragments."""
    return b"".join(call(wire, index, ident, name, [text[:5], text[5:]]) for index, ident, name, text in calls)


def _cut(wire: Wire, index: int, ident: str, name: str, text: str) -> bytes:
    """A call the output limit cut: its start and fragments, no end, the turn ended as cut."""
    return wire.start(index, ident, name) + wire.fragment(index, text) + _finish(wire, CUT_REASON[wire.slug])


PARIS = (0, "call_A", "get_weather", '{"city": "Paris"}')
RAN_PARIS = ("get_weather", {"city": "Paris"})
RAN_AAPL = ("get_stock", {"ticker": "AAPL"})


@dataclass(frozen=True)
class Scenario:
    """One row of the table; ``turns`` builds the model's turns before its final answer."""

    turns: Callable[[Wire], list[bytes]]
    ran: Ran
    told: list[Told]
    reply: Mapping[str, Any] = field(default_factory=dict)  # how the first turn is sent (``Reply``'s options)


SCENARIOS: dict[str, Scenario] = {
    "plain": Scenario(
        lambda w: [_begin(w) + _calls(w, PARIS) + w.finish()],
        [RAN_PARIS],
        [{"call_A": "sunny in Paris"}],
    ),
    # OpenAI Chat: both calls at index 0; Anthropic: the block index 0 reused after its stop.
    "two calls at index 0": Scenario(
        lambda w: [_begin(w) + _calls(w, PARIS, (0, "call_B", "get_stock", '{"ticker": "AAPL"}')) + w.finish()],
        [RAN_PARIS, RAN_AAPL],
        [{"call_A": "sunny in Paris", "call_B": "AAPL: 190"}],
    ),
    "cut": Scenario(
        lambda w: [_begin(w) + _cut(w, 0, "call_A", "get_weather", '{"city": "Par')],
        [],
        [{"call_A": "truncated"}],
    ),
    "complete then cut": Scenario(
        lambda w: [_begin(w) + _calls(w, PARIS) + _cut(w, 1, "call_B", "get_stock", '{"ticker": "AA')],
        [RAN_PARIS],
        [{"call_A": "sunny in Paris", "call_B": "truncated"}],
    ),
    "invalid JSON": Scenario(
        lambda w: [_begin(w) + _calls(w, (0, "call_A", "get_weather", '{"city": Paris}')) + w.finish()],
        [],
        [{"call_A": "invalid_json"}],
    ),
    "schema": Scenario(
        lambda w: [_begin(w) + _calls(w, (0, "call_A", "get_weather", '{"city": 7}')) + w.finish()],
        [],
        [{"call_A": "schema"}],
    ),
    "gzip": Scenario(
        lambda w: [_begin(w) + _calls(w, PARIS) + w.finish()],
        [RAN_PARIS],
        [{"call_A": "sunny in Paris"}],
        reply={"gzip": True},
    ),
    "multi-turn": Scenario(
        lambda w: [
            _begin(w) + _calls(w, PARIS) + w.finish(),
            _begin(w) + _calls(w, (0, "call_B", "get_stock", '{"ticker": "AAPL"}')) + w.finish(),
        ],
        [RAN_PARIS, RAN_AAPL],
        [{"call_A": "sunny in Paris"}, {"call_B": "AAPL: 190"}],
    ),
}
WIRES: dict[str, Wire] = {"openai_chat": OpenAIChatWire(), "anthropic": AnthropicWire()}


def replies(scenario: Scenario, provider: str) -> list[Reply]:
    """The replies of one run: the scenario's turns, then the final answer, one write per SSE event."""
    wire = WIRES[provider]
    bodies = [*scenario.turns(wire), final(wire)]
    return [Reply(_events(body), **(scenario.reply if n == 0 else {})) for n, body in enumerate(bodies)]


def _events(body: bytes) -> list[bytes]:
    return [event + b"\n\n" for event in body.split(b"\n\n") if event.strip()]


def told(body: Mapping[str, Any]) -> Told:
    """What a request tells the model of each call: its result, or the kinds of streamkit's errors."""
    results: Told = {}
    for message in body["messages"]:
        if message["role"] == "tool":
            results[message["tool_call_id"]] = _reading(message["content"])
        elif message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = _reading(block["content"])
    return results


def _reading(content: Any) -> str:
    if isinstance(content, list):
        content = "".join(block["text"] for block in content)
    try:
        value = json.loads(content)
    except ValueError:
        return str(content)
    if isinstance(value, dict) and value.keys() == {"error"}:
        value = value["error"]  # how pydantic-ai sends a retry to OpenAI Chat
    if isinstance(value, dict) and value.get("ok") is False:
        return ",".join(error["kind"] for error in value["errors"])
    return json.dumps(value, separators=(",", ":")) if isinstance(value, dict | list) else str(content)
