"""The latency benchmark's agno row: agno's own ``Agent.arun`` over ``StreamkitModel``.

agno runs a turn's tools after the model's whole message (see docs/frameworks/agno.md), so this
row shows what an application on agno waits for, beside ``run_tools``. Each tool stops the run
once it has run (``stop_after_tool_call``), so one request is timed, as for the other rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from agno.agent import Agent
from agno.models.message import Message
from agno.models.response import ModelResponse
from agno.tools import tool

from streamkit import ToolCall, ToolResult
from streamkit.integrations.agno import StreamkitModel
from tests.models import ANTHROPIC

__all__ = ("agno_agent",)


@dataclass
class _Timed(StreamkitModel):
    """A ``StreamkitModel`` that notes when its response ended."""

    clock: Callable[[], float] = field(default=lambda: 0.0)
    ended: list[float] = field(default_factory=list)

    async def ainvoke(self, messages: list[Message], assistant_message: Message, **given: Any) -> ModelResponse:
        response = await super().ainvoke(messages, assistant_message, **given)
        self.ended.append(self.clock())
        return response


async def agno_agent(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """``Agent.arun`` on the turn: agno runs the tools after the whole message."""
    ended: list[float] = []
    base = url.removesuffix("/v1/messages")
    model = _Timed(id=ANTHROPIC, provider="anthropic", base_url=base, api_key="k", http_async_client=client)
    model.clock, model.ended = clock, ended
    functions = [tool(name=name, stop_after_tool_call=True)(function) for name, function in tools.items()]
    agent = Agent(model=model, tools=functions, telemetry=False)
    output = await agent.arun("Weather in three cities")
    results = [
        ToolResult(ToolCall(position, run.tool_call_id, run.tool_name or "", run.tool_args or {}), run.result)
        for position, run in enumerate(output.tools or (), 1)
    ]
    return results, ended[0]
