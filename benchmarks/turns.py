"""Realistic turns, read the way a network delivers them: the regime users are in.

A turn is about 40 text tokens, then 1 to 4 calls whose arguments arrive in fragments of 1 to 8
characters, shaped as each provider sends them (OpenAI Chat's ``chat.completion.chunk`` with its
``obfuscation`` padding; Anthropic's ``event:`` + ``data:`` pairs). Every turn has a fresh
response id, ``created`` time and call ids, as every real response does, so nothing learned from
one response's exact bytes is reused for the next by accident (``re``'s pattern cache included).

The reads are one SSE event each (a token-streaming server flushes each event as it is made),
three events each, or 1 KiB; the hand-written loop is given the very same reads, so the work any
socket reader pays per read is paid by both sides.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import AsyncIterable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from tests.models import ANTHROPIC

__all__ = ("HandLoop", "Turn", "ahand_loop", "hand_loop", "make_turn", "reads")

_TOKENS = ("The", " weather", " in", " Paris", " is", " mild", ",", " let", " me", " check", " déjà", " 数据", ".")
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_serial = itertools.count()


@dataclass(frozen=True)
class Turn:
    """One generated response: its events (each one SSE event's bytes) and the calls it holds."""

    wire: str
    events: tuple[bytes, ...]
    arguments: tuple[dict[str, Any], ...]

    @property
    def data(self) -> bytes:
        return b"".join(self.events)


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _arguments(rng: random.Random, size: int, number: int) -> dict[str, Any]:
    if size == 0:
        return {}  # an empty call: a turn of nothing but its boundary events
    words = " ".join(rng.choice(_TOKENS).strip() or "x" for _ in range(max(1, size // 6)))
    body: dict[str, Any] = {"path": f"notes/{number}_{rng.randrange(10**6)}.md", "append": True, "text": ""}
    room = max(size - len(_dumps(body)), 1)
    body["text"] = words[:room]
    return body


def _fragments(rng: random.Random, text: str) -> list[str]:
    out: list[str] = []
    at = 0
    while at < len(text):
        step = rng.randint(1, 8)
        out.append(text[at : at + step])
        at += step
    return out


def make_turn(wire: str, size: int, calls: int, *, tokens: int = 40, seed: int = 7, serial: int | None = None) -> Turn:
    """A fresh turn: ``tokens`` text deltas, then ``calls`` calls of about ``size`` bytes each.
    ``serial`` names the turn, for two processes to make the same one; by default the next."""
    serial = next(_serial) if serial is None else serial
    rng = random.Random(f"{seed}:{wire}:{size}:{calls}:{serial}")
    arguments = tuple(_arguments(rng, size, number) for number in range(calls))
    texts = [rng.choice(_TOKENS) for _ in range(tokens)]
    build = _openai_chat if wire == "openai_chat" else _anthropic
    return Turn(wire, tuple(event.encode() for event in build(rng, serial, texts, arguments)), arguments)


def _openai_chat(rng: random.Random, serial: int, texts: list[str], arguments: tuple[dict[str, Any], ...]) -> list[str]:
    response = "".join(rng.choice(_ALPHABET) for _ in range(29))
    head = (
        f'{{"id":"chatcmpl-{response}","object":"chat.completion.chunk","created":{1764000000 + serial},'
        '"model":"gpt-5.4","service_tier":"default","system_fingerprint":"fp_b3f1157249",'
        '"choices":[{"index":0,"delta":'
    )

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        pad = "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(1, 12)))
        tail = f',"logprobs":null,"finish_reason":{_dumps(finish)}}}],"usage":null,"obfuscation":"{pad}"}}'
        return f"data: {head}{_dumps(delta)}{tail}\n\n"

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({"content": text}) for text in texts]
    for index, value in enumerate(arguments):
        call_id = "call_" + "".join(rng.choice(_ALPHABET) for _ in range(24))
        start = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": "append_note", "arguments": ""},
        }
        events.append(chunk({"tool_calls": [start]}))
        events += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in _fragments(rng, _dumps(value))
        ]
    events.append(chunk({}, "tool_calls"))
    usage = _dumps({"prompt_tokens": 412, "completion_tokens": 96, "total_tokens": 508})
    top = head[: head.index(',"choices"')]
    events.append(f'data: {top},"choices":[],"usage":{usage},"obfuscation":"x"}}\n\n')
    events.append("data: [DONE]\n\n")
    return events


def _anthropic(rng: random.Random, serial: int, texts: list[str], arguments: tuple[dict[str, Any], ...]) -> list[str]:
    def event(name: str, payload: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {_dumps(payload)}\n\n"

    message: dict[str, Any] = {
        "id": "msg_01" + "".join(rng.choice(_ALPHABET) for _ in range(22)),
        "type": "message",
        "role": "assistant",
        "model": ANTHROPIC,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 412, "output_tokens": 1},
    }
    events = [event("message_start", {"type": "message_start", "message": message})]
    text_block = {"type": "text", "text": ""}
    events.append(
        event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": text_block})
    )
    events.append('event: ping\ndata: {"type": "ping"}\n\n')
    for text in texts:
        delta = {"type": "text_delta", "text": text}
        events.append(event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}))
    events.append(event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    for index, value in enumerate(arguments, start=1):
        call_id = "toolu_01" + "".join(rng.choice(_ALPHABET) for _ in range(22))
        block: dict[str, Any] = {"type": "tool_use", "id": call_id, "name": "append_note", "input": {}}
        events.append(
            event("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
        )
        for piece in ["", *_fragments(rng, _dumps(value))]:
            delta = {"type": "input_json_delta", "partial_json": piece}
            events.append(event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}}
    events.append(event("message_delta", {**stop, "usage": {"output_tokens": 96}}))
    events.append(event("message_stop", {"type": "message_stop"}))
    return events


def reads(turn: Turn, per_read: int | None = 1, size: int | None = None) -> list[bytes]:
    """The turn's bytes as a socket would hand them over: ``per_read`` events a read, or ``size``
    bytes a read when ``per_read`` is None."""
    if per_read is not None:
        return [b"".join(turn.events[at : at + per_read]) for at in range(0, len(turn.events), per_read)]
    assert size is not None
    data = turn.data
    return [data[at : at + size] for at in range(0, len(data), size)]


def hand_loop(chunks: Iterable[bytes], wire: str) -> list[Any]:
    """The hand-written loop over the same reads: complete events split off, orjson each, text and
    fragments kept, each call's fragments joined and parsed once at its end marker."""
    loop = HandLoop(wire)
    out: list[Any] = []
    for chunk in chunks:
        out += loop.feed(chunk)
    return out


async def ahand_loop(chunks: AsyncIterable[bytes], wire: str) -> list[Any]:
    """``hand_loop`` over an async source, read by read."""
    loop = HandLoop(wire)
    out: list[Any] = []
    async for chunk in chunks:
        out += loop.feed(chunk)
    return out


class HandLoop:
    """The hand-written loop's state between reads."""

    def __init__(self, wire: str) -> None:
        self.rest = b""
        self.on_event: Callable[[bytes], Iterator[Any]] = (
            _HandOpenAI().event if wire == "openai_chat" else _HandAnthropic().event
        )

    def feed(self, chunk: bytes) -> list[Any]:
        rest = self.rest + chunk
        cut = rest.rfind(b"\n\n")
        if cut < 0:
            self.rest = rest
            return []
        blocks, self.rest = rest[:cut].split(b"\n\n"), rest[cut + 2 :]
        return [call for block in blocks for call in self.on_event(block)]


class _HandOpenAI:
    def __init__(self) -> None:
        self.parts: dict[int, list[str]] = {}
        self.text: list[str] = []

    def event(self, block: bytes) -> Iterator[Any]:
        if block == b"data: [DONE]":
            return
        for choice in orjson.loads(block[6:])["choices"]:
            delta = choice["delta"]
            if delta.get("content"):
                self.text.append(delta["content"])
            for entry in delta.get("tool_calls") or ():
                self.parts.setdefault(entry["index"], []).append(entry["function"]["arguments"])
            if choice.get("finish_reason"):
                for index in sorted(self.parts):
                    yield orjson.loads("".join(self.parts[index]))


class _HandAnthropic:
    def __init__(self) -> None:
        self.parts: dict[int, list[str]] = {}
        self.text: list[str] = []

    def event(self, block: bytes) -> Iterator[Any]:
        event = orjson.loads(block[block.index(b"data: ") + 6 :])
        kind = event["type"]
        if kind == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "text_delta":
                self.text.append(delta["text"])
            else:
                self.parts.setdefault(event["index"], []).append(delta["partial_json"])
        elif kind == "content_block_stop" and event["index"] in self.parts:
            yield orjson.loads("".join(self.parts.pop(event["index"])))
