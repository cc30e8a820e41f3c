"""The same logical stream written in each provider's own wire shape, for tests that run per provider.

Each builder returns SSE bytes. ``ends_each_call`` says whether the provider has a per-call end
marker: without one (OpenAI Chat), a call is delivered only at the choice's finish.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from streamkit import StreamError, StreamEvent, iter_events

from .helpers import slug


def _sse(payload: object, event: str | None = None) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return ((f"event: {event}\n" if event else "") + f"data: {data}\n\n").encode()


class OpenAIChatWire:
    slug = "openai_chat"
    ends_each_call = False
    stop_reason = "tool_calls"
    usage: dict[str, int] | None = None

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _sse({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice]})

    def begin(self) -> bytes:
        return self.chunk({"role": "assistant", "content": ""})

    def text(self, text: str) -> bytes:
        return self.chunk({"content": text})

    def start(self, index: int, call_id: str, name: str) -> bytes:
        entry = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        return self.chunk({"tool_calls": [entry]})

    def fragment(self, index: int, text: str) -> bytes:
        return self.chunk({"tool_calls": [{"index": index, "function": {"arguments": text}}]})

    def end_call(self, index: int) -> bytes:
        return b""

    def finish(self) -> bytes:
        return self.chunk({}, self.stop_reason) + b"data: [DONE]\n\n"

    def error(self, kind: str, message: str) -> bytes:
        return _sse({"error": {"message": message, "type": kind}})


class AnthropicWire:
    slug = "anthropic"
    ends_each_call = True
    stop_reason = "tool_use"
    usage: dict[str, int] | None = {"input_tokens": 1, "output_tokens": 2}  # noqa: RUF012

    def begin(self) -> bytes:
        message = {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 1}}
        return _sse({"type": "message_start", "message": message}, "message_start")

    def text(self, text: str) -> bytes:
        delta = {"type": "content_block_delta", "index": 99, "delta": {"type": "text_delta", "text": text}}
        return _sse(delta, "content_block_delta")

    def start(self, index: int, call_id: str, name: str) -> bytes:
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        return _sse({"type": "content_block_start", "index": index, "content_block": block}, "content_block_start")

    def fragment(self, index: int, text: str) -> bytes:
        delta = {"type": "input_json_delta", "partial_json": text}
        return _sse({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")

    def end_call(self, index: int) -> bytes:
        return _sse({"type": "content_block_stop", "index": index}, "content_block_stop")

    def finish(self) -> bytes:
        delta = {"type": "message_delta", "delta": {"stop_reason": self.stop_reason}, "usage": {"output_tokens": 2}}
        return _sse(delta, "message_delta") + _sse({"type": "message_stop"}, "message_stop")

    def error(self, kind: str, message: str) -> bytes:
        return _sse({"type": "error", "error": {"type": kind, "message": message}}, "error")


Wire = OpenAIChatWire | AnthropicWire

#: Providers whose wire shape the tests can write; a provider added later joins by adding a builder.
WIRES: dict[str, Wire] = {wire.slug: wire for wire in (OpenAIChatWire(), AnthropicWire())}


def call(wire: Wire, index: int, call_id: str, name: str, fragments: Sequence[str]) -> bytes:
    """A whole call: its start, its argument fragments and (where the provider has one) its end."""
    return (
        wire.start(index, call_id, name) + b"".join(wire.fragment(index, f) for f in fragments) + wire.end_call(index)
    )


def run(chunks: Sequence[bytes] | Any, provider: str, **options: Any) -> tuple[list[StreamEvent], StreamError | None]:
    """Every value delivered, and the error that stopped the stream (its unfinished calls included)."""
    items: list[StreamEvent] = []
    try:
        for item in iter_events(chunks, slug(provider), **options):
            items.append(item)  # noqa: PERF402 - the values before an error must be kept
    except StreamError as exc:
        return items, exc
    return items, None
