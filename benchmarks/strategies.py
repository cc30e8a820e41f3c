"""The strategies compared, each turning one generated response into its calls' argument objects.

``Strategy.prepare(case)`` does the untimed set-up (cutting the bytes into network-sized
chunks, or building an SDK's event objects) and returns the timed run, which returns the
arguments of every call in order, so every strategy is checked against the generated objects
before it is timed.

The peers are fed objects built in advance (``ChatCompletionChunk``, ``RawMessageStreamEvent``,
``AIMessageChunk``): their SSE decoding, JSON parsing and object construction are not timed,
which favours them. Their final arguments are read as the SDK leaves them: parsed here with
orjson for OpenAI (its state parses only strict tools), the last partial parse for Anthropic,
``tool_calls[].args`` for LangChain.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

import streamkit

from .inputs import Case

__all__ = ("CHUNK_BYTES", "STRATEGIES", "Strategy", "chunked", "floor")

#: The size of the reads the streaming strategies are fed (a typical socket read).
CHUNK_BYTES = 16 * 1024

Run = Callable[[], list[Any]]


@dataclass(frozen=True)
class Strategy:
    name: str
    description: str
    prepare: Callable[[Case], Run]
    requires: tuple[str, ...] = ()  # importable modules it needs
    wires: tuple[str, ...] = ("openai_chat", "anthropic")
    always_up_to: int = 0  # run at sizes up to this even when predicted slow (a target needs them)

    def missing(self) -> list[str]:
        return [module for module in self.requires if importlib.util.find_spec(module) is None]


def chunked(data: bytes, size: int = CHUNK_BYTES) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)]


# -- the floor: the least work that gets the calls out of the bytes ---------------------------


def floor(data: bytes, wire: str) -> list[Any]:
    """Split on blank lines, orjson each event, append fragments, one join and parse per call."""
    parts: dict[int, list[str]] = {}
    if wire == "openai_chat":
        for block in data.split(b"\n\n"):
            if not block or block == b"data: [DONE]":
                continue
            for choice in orjson.loads(block[6:])["choices"]:
                for entry in choice["delta"].get("tool_calls") or ():
                    parts.setdefault(entry["index"], []).append(entry["function"]["arguments"])
    else:
        for block in data.split(b"\n\n"):
            if not block:
                continue
            event = orjson.loads(block[block.index(b"data: ") + 6 :])
            if event["type"] == "content_block_delta":
                parts.setdefault(event["index"], []).append(event["delta"]["partial_json"])
    return [orjson.loads("".join(parts[index])) for index in sorted(parts)]


def _floor(case: Case) -> Run:
    data, wire = case.data, case.wire
    return lambda: floor(data, wire)


# -- streamkit ------------------------------------------------------------------------------


def _deferred(case: Case) -> Run:
    chunks, wire = chunked(case.data), case.wire

    def run() -> list[Any]:
        return [call.input for call in streamkit.iter_tool_calls(chunks, wire)]

    return run


def _early(**options: Any) -> Callable[[Case], Run]:
    def prepare(case: Case) -> Run:
        chunks, wire = chunked(case.data), case.wire

        def run() -> list[Any]:
            events = streamkit.iter_events(chunks, wire, previews=True, **options)
            return [item.input for item in events if isinstance(item, streamkit.ToolCall)]

        return run

    return prepare


# -- httpx-sse's decoder + a deferred loop ---------------------------------------------------


def _httpx_sse(case: Case) -> Run:
    import httpx
    from httpx_sse import EventSource

    chunks, wire = chunked(case.data), case.wire

    def run() -> list[Any]:
        response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=iter(chunks))
        parts: dict[int, list[str]] = {}
        for sse in EventSource(response).iter_sse():
            if sse.data == "[DONE]":
                continue
            event = orjson.loads(sse.data)
            if wire == "openai_chat":
                for choice in event["choices"]:
                    for entry in choice["delta"].get("tool_calls") or ():
                        parts.setdefault(entry["index"], []).append(entry["function"]["arguments"])
            elif event["type"] == "content_block_delta":
                parts.setdefault(event["index"], []).append(event["delta"]["partial_json"])
        return [orjson.loads("".join(parts[index])) for index in sorted(parts)]

    return run


# -- the peers, fed pre-built objects --------------------------------------------------------


def _payloads(case: Case) -> Iterator[Any]:
    for block in case.data.split(b"\n\n"):
        if block and block != b"data: [DONE]":
            yield orjson.loads(block[block.index(b"data: ") + 6 :])


def _openai_state(case: Case) -> Run:
    from openai._models import construct_type
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    chunks = [construct_type(type_=ChatCompletionChunk, value=payload) for payload in _payloads(case)]

    def run() -> list[Any]:
        state: Any = ChatCompletionStreamState()
        for chunk in chunks:
            state.handle_chunk(chunk)
        message = state.get_final_completion().choices[0].message
        return [orjson.loads(call.function.arguments) for call in message.tool_calls]

    return run


def _anthropic_accumulator(case: Case) -> Run:
    from anthropic._models import construct_type
    from anthropic.lib.streaming._messages import accumulate_event
    from anthropic.types import RawMessageStreamEvent

    events = [
        construct_type(type_=RawMessageStreamEvent, value=payload)
        for payload in _payloads(case)
        if payload.get("type") != "ping"  # the SDK drops pings before the accumulator
    ]

    def run() -> list[Any]:
        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for event in events:
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
        return [block.input for block in snapshot.content if block.type == "tool_use"]

    return run


def _langchain(case: Case) -> Run:
    from langchain_core.messages import AIMessageChunk

    chunks: list[Any] = []
    piece: Any  # a ToolCallChunk, built from the wire as LangChain's partner packages build it
    for payload in _payloads(case):
        if case.wire == "openai_chat":
            for choice in payload["choices"]:
                for entry in choice["delta"].get("tool_calls") or ():
                    function = entry.get("function") or {}
                    piece = {"name": function.get("name"), "args": function.get("arguments"), "id": entry.get("id")}
                    piece["index"] = entry["index"]
                    chunks.append(AIMessageChunk(content="", tool_call_chunks=[piece]))
        elif payload["type"] == "content_block_start" and payload["content_block"]["type"] == "tool_use":
            block = payload["content_block"]
            piece = {"name": block["name"], "args": "", "id": block["id"], "index": payload["index"]}
            chunks.append(AIMessageChunk(content="", tool_call_chunks=[piece]))
        elif payload["type"] == "content_block_delta":
            piece = {"name": None, "args": payload["delta"]["partial_json"], "id": None, "index": payload["index"]}
            chunks.append(AIMessageChunk(content="", tool_call_chunks=[piece]))

    def run() -> list[Any]:
        message = chunks[0]
        for chunk in chunks[1:]:
            message = message + chunk
        return [call["args"] for call in message.tool_calls]

    return run


STRATEGIES: tuple[Strategy, ...] = (
    Strategy("floor", "split on blank lines, orjson per event, one join + parse per call", _floor),
    Strategy("deferred", "streamkit.iter_tool_calls (parse once, at the end marker)", _deferred),
    Strategy(
        "early/every",
        "streamkit previews=True: a partial parse on every fragment",
        _early(),
    ),
    Strategy(
        "early/4KiB",
        "streamkit previews=True, preview_every=4096 characters",
        _early(preview_every=4096),
    ),
    Strategy(
        "early/x1.25",
        "streamkit previews=True, preview_growth=1.25 (geometric)",
        _early(preview_growth=1.25),
    ),
    Strategy("httpx-sse", "httpx-sse EventSource + a deferred loop", _httpx_sse, requires=("httpx", "httpx_sse")),
    Strategy(
        "openai-sdk",
        "openai ChatCompletionStreamState (pre-built chunks)",
        _openai_state,
        requires=("openai",),
        wires=("openai_chat",),
        always_up_to=128 * 1024,
    ),
    Strategy(
        "anthropic-sdk",
        "anthropic accumulate_event (pre-built events)",
        _anthropic_accumulator,
        requires=("anthropic",),
        wires=("anthropic",),
        always_up_to=128 * 1024,
    ),
    Strategy(
        "langchain",
        "langchain-core AIMessageChunk + merging (pre-built chunks)",
        _langchain,
        requires=("langchain_core",),
    ),
)
