"""The model turns every framework's agent loop is run on, per provider, and what each holds.

Each case is a recorded first turn (a fixture) with the calls it makes, valid and invalid; the
loopback server answers the next request with ``answer_turn``. Shared by the smolagents and agno
tests, whose frameworks differ in what they do with a turn that holds an invalid call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .helpers import FIXTURES
from .server import LoopbackServer, Reply, Turns
from .wire import WIRES, OpenAIChatWire, call

#: The path of each provider's endpoint, and the base URL its requests are built on.
PATHS = {"openai_chat": "/v1/chat/completions", "anthropic": "/v1/messages"}
BASES = {"openai_chat": "/v1", "anthropic": ""}


@dataclass(frozen=True)
class Case:
    provider: str
    first: bytes
    valid: tuple[tuple[str, str, dict[str, Any]], ...]  # (id, tool, arguments), in the order they ended
    invalid: tuple[tuple[str, str, str], ...] = ()  # (id, tool, kind of error)


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


#: The text of each plain turn.
PLAIN = "Hello ☃"


def plain(provider: str) -> bytes:
    """A turn of text alone (``PLAIN``), ending as the provider ends an answer."""
    if provider == "anthropic":
        return fixture("anthropic/text_only_crlf.sse")
    wire = OpenAIChatWire()
    return wire.begin() + wire.text(PLAIN) + wire.chunk({}, "stop") + b"data: [DONE]\n\n"


def calling(provider: str, ident: str, name: str, arguments: dict[str, Any]) -> bytes:
    """A turn of one whole call."""
    wire = WIRES[provider]
    return wire.begin() + call(wire, 0, ident, name, [json.dumps(arguments)]) + wire.finish()


WEATHER = ("get_weather", {"city": "Paris"})
CASES = {
    "openai_chat-two-at-index-0": Case(
        "openai_chat",
        fixture("openai_chat/parallel_calls_all_index_zero.sse"),
        (("call_A", *WEATHER), ("call_B", "get_stock", {"ticker": "AAPL"})),
    ),
    "openai_chat-no-index": Case(
        "openai_chat",
        fixture("openai_chat/index_missing.sse"),
        (("call_A", *WEATHER), ("call_B", "get_stock", {"ticker": "AAPL"})),
    ),
    "anthropic-two-at-index-0": Case(
        "anthropic",
        fixture("anthropic/gateway_block_index_reused.sse"),
        (("toolu_gw_7f1a", "read_file", {"path": "README.md"}), ("toolu_gw_9c2e", "read_file", {"path": "setup.cfg"})),
    ),
    "openai_chat-cut": Case(
        "openai_chat", fixture("openai_chat/length_truncated.sse"), (), (("call_A", "write_file", "truncated"),)
    ),
    "anthropic-cut": Case(
        "anthropic",
        fixture("anthropic/max_tokens_cut_after_a_whole_value.sse"),
        (),
        (("toolu_C", "get_weather", "truncated"),),
    ),
    "openai_chat-complete-then-cut": Case(
        "openai_chat",
        fixture("openai_chat/length_after_a_followed_call.sse"),
        (("call_St0ck1", "get_stock", {"ticker": "AAPL"}),),
        (("call_St0ck2", "get_stock", "truncated"),),
    ),
    "anthropic-complete-then-cut": Case(
        "anthropic",
        fixture("anthropic/max_tokens_truncated.sse"),
        (("toolu_A", *WEATHER),),
        (("toolu_B", "write_file", "truncated"),),
    ),
    "openai_chat-invalid-json-schema-unknown": Case(
        "openai_chat",
        fixture("openai_chat/invalid_calls_then_a_valid_one.sse"),
        (("call_2", "get_stock", {"ticker": "AAPL"}),),
        (
            ("call_1", "get_weather", "invalid_json"),
            ("call_3", "get_weather", "schema"),
            ("call_4", "delete_everything", "unknown_tool"),
        ),
    ),
    "anthropic-invalid-json-schema-unknown": Case(
        "anthropic",
        fixture("anthropic/invalid_calls_between_blocks.sse"),
        (("toolu_02", "get_stock", {"ticker": "AAPL"}),),
        (
            ("toolu_01", "get_weather", "invalid_json"),
            ("toolu_03", "get_weather", "schema"),
            ("toolu_04", "delete_everything", "unknown_tool"),
        ),
    ),
    "openai_chat-plain": Case("openai_chat", plain("openai_chat"), ()),
    "anthropic-plain": Case("anthropic", plain("anthropic"), ()),
}

#: A response of two choices (``n=2``), a call in each: no framework's message holds two answers.
TWO_CHOICES = Case("openai_chat", fixture("openai_chat/n2_same_call_id_per_choice.sse"), ())


def serve(server: LoopbackServer, case: Case, *after: bytes) -> str:
    """Answer the provider's path with the case's turn, then ``after`` in turn; the base URL."""
    server.routes = Turns(PATHS[case.provider], *(Reply([turn]) for turn in (case.first, *after)))
    return server.url(BASES[case.provider])


def sent(server: LoopbackServer, number: int) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(server.requests[number].body)
    return body


def last_user_text(body: dict[str, Any]) -> str:
    """The last user text of a request: OpenAI's last user message, or the last text block of
    Anthropic's (which joins consecutive user messages into one)."""
    user = [message for message in body["messages"] if message["role"] == "user"][-1]
    content = user["content"]
    if isinstance(content, str):
        return content
    texts: list[str] = [block["text"] for block in content if block.get("type") == "text"]
    return texts[-1]
