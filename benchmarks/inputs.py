"""Seeded, generated inputs: one response with ``calls`` write_file-style tool calls, as SSE bytes.

Each call's arguments are a JSON object with a long ``content`` string (code-like lines with
non-ASCII letters, an emoji, quotes, backslashes, tabs and newlines, so the argument text holds
escapes) and a few small fields. The argument text is cut into fragments of ``fragment``
characters, and each fragment becomes one SSE event shaped exactly as the provider sends it:

- ``openai_chat``: data-only ``chat.completion.chunk`` events in compact JSON, with
  ``system_fingerprint``, ``logprobs: null``, ``finish_reason: null`` and the ``obfuscation``
  padding field the API adds by default; calls one after another (index 0, then 1...), then the
  ``finish_reason`` chunk, the usage chunk and ``data: [DONE]`` (the shape of the recorded
  openai-python fixtures in ``shared/real-streams``).
- ``anthropic``: ``event:`` + ``data:`` pairs: ``message_start``, a ``ping``, then per call
  ``content_block_start`` (with the placeholder ``input: {}``), an empty first
  ``input_json_delta``, the deltas and ``content_block_stop``; then ``message_delta`` and
  ``message_stop`` (the shape of the anthropic-sdk-python streaming fixtures).

Non-ASCII characters are sent raw (UTF-8), as both APIs do. Every strategy gets the same bytes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, cast

from streamkit import Provider
from tests.models import ANTHROPIC

__all__ = ("WIRES", "Case", "make_case", "make_arguments")

WIRES = ("openai_chat", "anthropic")

_WORDS = (
    "def",
    "return",
    "value",
    "stream",
    "déjà",
    "naïve",
    "Größe",
    "café",
    "数据",
    "ストリーム",
    "🚀",
    "for",
    "item",
    "in",
    "items",
    "if",
    "None",
    "self",
    "print",
)
_SNIPPETS = ('"quoted"', "back\\slash", "tab\there", "C:\\temp\\x", "{'k': [1, 2]}", "a\\nb")


def _content(rng: random.Random, size: int) -> str:
    """Code-like text of about ``size`` UTF-8 bytes once JSON-encoded."""
    lines: list[str] = []
    total = 0
    while total < size:
        indent = "    " * rng.randrange(4)
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(3, 10)))
        if rng.random() < 0.3:
            words += " " + rng.choice(_SNIPPETS)
        line = indent + words
        lines.append(line)
        total += len(json.dumps(line, ensure_ascii=False).encode()) - 2 + 2  # + the "\n" escape
    return "\n".join(lines)


def make_arguments(size: int, seed: int, number: int = 0) -> dict[str, Any]:
    """The arguments object of one call, its JSON text about ``size`` UTF-8 bytes long."""
    rng = random.Random(f"{seed}:{size}:{number}")
    small: dict[str, Any] = {
        "path": f"src/pkg/module_{number}_{rng.randrange(10**6)}.py",
        "mode": "overwrite",
        "create_dirs": True,
        "encoding": "utf-8",
        "line_count": 0,
    }
    overhead = len(json.dumps({**small, "content": ""}, ensure_ascii=False).encode())
    content = _content(rng, max(size - overhead, 0))
    # Trim to the size: drop whole characters from the end (never half an escape).
    text = json.dumps(content, ensure_ascii=False)
    while len(text.encode()) + overhead - 2 > size and content:
        excess = len(text.encode()) + overhead - 2 - size
        content = content[: -max(1, excess // 4)]
        text = json.dumps(content, ensure_ascii=False)
    small["line_count"] = content.count("\n") + 1
    return {"path": small.pop("path"), "content": content, **small}


@dataclass(frozen=True)
class Case:
    """One generated response: its bytes and what it must decode to."""

    wire: Provider
    size: int  # the nominal argument size of each call, in bytes
    fragment: int  # characters per argument fragment
    calls: int
    data: bytes
    arguments: tuple[dict[str, Any], ...]  # the objects each call must decode to
    texts: tuple[str, ...]  # each call's argument JSON text, as sent
    events: int  # SSE events in the response
    end_spans: tuple[tuple[int, int], ...]  # per call: the byte span of its end-marker event

    @property
    def argument_bytes(self) -> int:
        """UTF-8 bytes of argument text in the whole response."""
        return sum(len(text.encode()) for text in self.texts)

    @property
    def label(self) -> str:
        return f"{self.wire} {_size_label(self.size)} frag={self.fragment} calls={self.calls}"


def _size_label(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    return f"{size // 1048576} MiB" if size >= 1048576 else f"{size // 1024} KiB"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def make_case(wire: str, size: int, fragment: int, calls: int, *, seed: int = 2024) -> Case:
    """Build one response; the same arguments give the same bytes."""
    if wire not in WIRES:
        raise ValueError(f"unknown wire format {wire!r}; known: {', '.join(WIRES)}")
    if size < 1 or fragment < 1 or calls < 1:
        raise ValueError(f"size, fragment and calls must be positive, got {size}, {fragment}, {calls}")
    rng = random.Random(f"{seed}:{wire}:{size}:{fragment}:{calls}")
    arguments = tuple(make_arguments(size, seed, number) for number in range(calls))
    texts = tuple(json.dumps(args, ensure_ascii=False) for args in arguments)
    build = _openai_chat if wire == "openai_chat" else _anthropic
    events, end_events = build(texts, fragment, rng)
    data = bytearray()
    spans: list[tuple[int, int]] = []
    for event in events:
        start = len(data)
        data += event.encode()
        spans.append((start, len(data)))
    ends = tuple(spans[number] for number in end_events)
    return Case(cast(Provider, wire), size, fragment, calls, bytes(data), arguments, texts, len(events), ends)


def _fragments(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


def _openai_chat(texts: tuple[str, ...], fragment: int, rng: random.Random) -> tuple[list[str], list[int]]:
    head = (
        '{"id":"chatcmpl-BENCH7Q2x","object":"chat.completion.chunk","created":1764000000,'
        '"model":"gpt-5.4","service_tier":"default","system_fingerprint":"fp_b3f1157249",'
        '"choices":[{"index":0,"delta":'
    )
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        pad = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 12)))
        tail = f',"logprobs":null,"finish_reason":{_dumps(finish)}}}],"usage":null,"obfuscation":"{pad}"}}'
        return f"data: {head}{_dumps(delta)}{tail}\n\n"

    events = [chunk({"role": "assistant", "content": None, "refusal": None})]
    for index, text in enumerate(texts):
        call_id = f"call_{index}{rng.randrange(16**20):020x}"
        start = {"index": index, "id": call_id, "type": "function", "function": {"name": "write_file", "arguments": ""}}
        events.append(chunk({"tool_calls": [start]}))
        events.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _fragments(text, fragment)
        )
    events.append(chunk({}, "tool_calls"))
    finish = len(events) - 1  # finish_reason is every call's end marker
    usage = _dumps({"prompt_tokens": 412, "completion_tokens": 4096, "total_tokens": 4508})
    prefix = head[: head.index(',"choices"')]
    events.append(f'data: {prefix},"choices":[],"usage":{usage},"obfuscation":"x"}}\n\n')
    events.append("data: [DONE]\n\n")
    return events, [finish] * len(texts)


def _anthropic(texts: tuple[str, ...], fragment: int, rng: random.Random) -> tuple[list[str], list[int]]:
    def event(name: str, payload: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {_dumps(payload)}\n\n"

    message: dict[str, Any] = {
        "id": "msg_01BENCHxk3Lq9VnT4",
        "type": "message",
        "role": "assistant",
        "model": ANTHROPIC,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 412,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 1,
        },
    }
    events = [event("message_start", {"type": "message_start", "message": message})]
    events.append('event: ping\ndata: {"type": "ping"}\n\n')
    ends: list[int] = []
    for index, text in enumerate(texts):
        block = {"type": "tool_use", "id": f"toolu_01{rng.randrange(16**22):022x}", "name": "write_file", "input": {}}
        events.append(
            event("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
        )
        for piece in ["", *_fragments(text, fragment)]:
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append(event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        ends.append(len(events) - 1)
    stop: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}}
    events.append(event("message_delta", {**stop, "usage": {"output_tokens": 4096}}))
    events.append(event("message_stop", {"type": "message_stop"}))
    return events, ends
