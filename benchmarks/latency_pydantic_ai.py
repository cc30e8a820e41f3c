"""pydantic-ai's own agent loop on the latency benchmark's turn, with streamkit's capability.

``run`` is a ``benchmarks.latency.Way``: an ``Agent`` on ``AnthropicModel(...)`` with the
``StartToolsEarly`` capability (which wraps the model as ``wrap`` does) sends the request to the
benchmark's server, reads the streamed turn, and runs ``get_weather`` once per call, each started
when its call ends. The run is stopped when the tools have run (the next request would ask for
the final answer). pydantic-ai runs on asyncio; its HTTP client is an
httpx2 one of its own, so the ``httpx`` client the other ways share is not used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import httpx2
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from streamkit import ToolCall, ToolResult
from streamkit.integrations.pydantic_ai import StartToolsEarly
from tests.models import ANTHROPIC

__all__ = ("run",)


async def run(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """One turn through pydantic-ai's agent loop: the tools' results and when the stream ended."""
    outputs: dict[str, Any] = {}
    async with httpx2.AsyncClient(timeout=30) as http:
        provider = AnthropicProvider(api_key="test-key", base_url=url.removesuffix("/v1/messages"), http_client=http)
        model = AnthropicModel(ANTHROPIC, provider=provider)
        agent: Agent[None, str] = Agent(model, capabilities=[StartToolsEarly()])

        @agent.tool
        async def get_weather(ctx: RunContext[None], location: str, unit: str, include_forecast: bool) -> Any:
            output = await tools["get_weather"](location, unit, include_forecast)
            outputs[ctx.tool_call_id or ""] = output
            return output

        ended = 0.0
        response: ModelResponse | None = None
        async with agent.iter("Weather in Paris, Tokyo and New York?") as running:
            async for node in running:
                if Agent.is_call_tools_node(node):  # the model's response has been read whole
                    ended, response = clock(), node.model_response
                elif response is not None:  # the tools have run: the next request is not measured
                    break
    assert response is not None
    calls = [(index, part) for index, part in enumerate(response.parts) if isinstance(part, ToolCallPart)]
    return [
        ToolResult(ToolCall(index, part.tool_call_id, part.tool_name, part.args_as_dict()), outputs[part.tool_call_id])
        for index, part in calls
    ], ended
