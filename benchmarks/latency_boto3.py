"""The latency benchmark's Bedrock rows: boto3's ``converse_stream``, read as Strands Agents and
pydantic-ai's Bedrock model read it (each call's input fragments joined and parsed at its block's
stop), with and without ``streamkit.integrations.boto3.install``.

boto3 is synchronous: each turn runs in a worker thread with a ``bedrock-runtime`` client of the
loopback server (fake credentials), and each tool, started from there, runs on the event loop.
The two early rows start a tool at its block's stop; the Strands-like one, as Strands does, runs
the tools after the whole message.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import anyio
import botocore.session
import httpx

from streamkit import ToolCall, ToolResult
from streamkit.integrations.boto3 import install
from tests.models import ANTHROPIC

__all__ = ("PATHS", "installed", "plain", "strands")

MODEL = ANTHROPIC
#: The server's Bedrock path: the turn in ConverseStream's form.
PATHS = {f"/model/{MODEL}/converse-stream": "bedrock"}
MESSAGES = [{"role": "user", "content": [{"text": "Weather in three cities"}]}]
_SCHEMA = {
    "type": "object",
    "properties": {"location": {"type": "string"}, "unit": {"type": "string"}, "include_forecast": {"type": "boolean"}},
    "required": ["location", "unit", "include_forecast"],
}
TOOLS = [
    {"toolSpec": {"name": "get_weather", "description": "The weather in a place.", "inputSchema": {"json": _SCHEMA}}}
]


@functools.cache
def _client(endpoint: str, hooked: bool) -> Any:
    """One client per server and kind, made at the untimed first turn."""
    client = botocore.session.get_session().create_client(  # the client boto3.client makes
        "bedrock-runtime",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="k",
        aws_secret_access_key="k",
    )
    if hooked:
        install(client, tools=TOOLS)
    return client


class _Reader:
    """A caller's loop over the events: a call's input fragments joined and parsed at its stop."""

    def __init__(self, start: Callable[[ToolCall], None] | None) -> None:
        self.start = start  # called at each call's stop, for the early rows
        self.open: dict[int, tuple[str, str, list[str]]] = {}
        self.calls: list[ToolCall] = []

    def read(self, event: dict[str, Any]) -> None:
        ((kind, body),) = event.items()
        index = body.get("contentBlockIndex")
        if kind == "contentBlockStart" and "toolUse" in body["start"]:
            use = body["start"]["toolUse"]
            self.open[index] = (use["toolUseId"], use["name"], [])
        elif kind == "contentBlockDelta" and index in self.open:
            self.open[index][2].append(body["delta"]["toolUse"]["input"])
        elif kind == "contentBlockStop" and index in self.open:
            ident, name, pieces = self.open.pop(index)
            self.calls.append(ToolCall(index, ident, name, json.loads("".join(pieces))))
            if self.start is not None:
                self.start(self.calls[-1])


def _converse(
    bedrock: Any, tools: dict[str, Any], loop: asyncio.AbstractEventLoop, clock: Callable[[], float], early: bool
) -> tuple[list[ToolResult], float]:
    """One turn, in the worker thread: the stream read, each tool started (early or after it)."""
    started: list[tuple[ToolCall, Future[Any]]] = []

    def start(call: ToolCall) -> None:
        started.append((call, asyncio.run_coroutine_threadsafe(tools[call.name](**call.input), loop)))

    reader = _Reader(start if early else None)
    response = bedrock.converse_stream(modelId=MODEL, messages=MESSAGES, toolConfig={"tools": TOOLS})
    for event in response["stream"]:
        reader.read(event)
    ended = clock()
    if not early:
        for call in reader.calls:
            start(call)
    return [ToolResult(call, future.result()) for call, future in started], ended


async def _turn(
    url: str, tools: dict[str, Any], clock: Callable[[], float], *, hooked: bool, early: bool
) -> tuple[list[ToolResult], float]:
    bedrock = _client(url.removesuffix("/v1/messages"), hooked)
    return await anyio.to_thread.run_sync(_converse, bedrock, tools, asyncio.get_running_loop(), clock, early)


async def plain(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """botocore's events as they are, each tool started at its block's stop."""
    return await _turn(url, tools, clock, hooked=False, early=True)


async def installed(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """``install()``'s events (each call whole at its stop), each tool started there."""
    return await _turn(url, tools, clock, hooked=True, early=True)


async def strands(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """``install()``'s events, the tools all started after the whole message, as Strands runs them."""
    return await _turn(url, tools, clock, hooked=True, early=False)
