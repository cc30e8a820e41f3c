"""The latency benchmark's LiteLLM row: an application's loop on ``litellm.acompletion`` over
``streamkit/anthropic/...``, starting each tool the moment its whole call arrives in a chunk.

LiteLLM runs no tools itself; this is the loop its users write. LiteLLM reads its bundled model
cost map here, so the benchmark runs offline.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import anyio
import httpx

from streamkit import ToolCall, ToolResult

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before LiteLLM is imported

import litellm

from streamkit.integrations import litellm as integration
from tests.models import ANTHROPIC

integration.register()
litellm.suppress_debug_info = True


async def litellm_early(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """Each tool started when LiteLLM yields its call, whole; the results in call order."""
    results: dict[int, ToolResult] = {}
    ended = 0.0

    async def run(position: int, call: ToolCall) -> None:
        results[position] = ToolResult(call, await tools[call.name](**call.input))

    async with anyio.create_task_group() as group:
        response = await litellm.acompletion(
            model=f"streamkit/anthropic/{ANTHROPIC}",
            messages=[{"role": "user", "content": "Weather in Paris, Tokyo and New York?"}],
            stream=True,
            api_base=url.removesuffix("/v1/messages"),
            api_key="k",
            client=client,
        )
        async for chunk in response:
            for entry in (chunk.choices[0].delta.tool_calls or ()) if chunk.choices else ():
                # The benchmark's calls are the turn's blocks 1 to 3 (block 0 is the text).
                call = ToolCall(entry.index + 1, entry.id, entry.function.name, json.loads(entry.function.arguments))
                group.start_soon(run, entry.index, call)
        ended = clock()
    return [results[position] for position in sorted(results)], ended
