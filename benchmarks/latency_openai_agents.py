"""openai-agents' own ``Runner`` on the latency benchmark's turn, through ``StreamkitModel``.

The Runner runs the turn's tools once the model's stream has ended (see
docs/frameworks/openai_agents.md), so this row shows what an application on openai-agents waits
for, beside ``run_tools``. ``tool_use_behavior="stop_on_first_tool"`` ends the run once the
turn's tools have run, so one request is timed, as for the other rows.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from agents import Agent, RunConfig, Runner, ToolCallItem, ToolCallOutputItem, function_tool
from agents.items import TResponseStreamEvent

from streamkit import ToolCall, ToolResult
from streamkit.integrations.openai_agents import DATA_KEY, StreamkitModel
from tests.models import ANTHROPIC

__all__ = ("openai_agents",)


class _Timed(StreamkitModel):
    """A ``StreamkitModel`` that notes when its stream ended."""

    def __init__(self, clock: Callable[[], float], client: httpx.AsyncClient, base_url: str) -> None:
        super().__init__("anthropic", ANTHROPIC, client=client, base_url=base_url)
        self.clock = clock
        self.ended = 0.0

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        async for event in super().stream_response(*args, **kwargs):
            yield event
        self.ended = self.clock()


async def openai_agents(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """``Runner.run`` on the turn: the Runner runs the tools after the stream, all at once."""
    model = _Timed(clock, client, url.removesuffix("/v1/messages"))
    agent = Agent(
        name="bench",
        model=model,
        tools=[function_tool(tool, name_override=name) for name, tool in tools.items()],
        tool_use_behavior="stop_on_first_tool",
    )
    result = await Runner.run(agent, "Weather in three cities", run_config=RunConfig(tracing_disabled=True))
    calls = {_call(item).id: _call(item) for item in result.new_items if isinstance(item, ToolCallItem)}
    outputs = [item for item in result.new_items if isinstance(item, ToolCallOutputItem)]
    return [ToolResult(calls[str(item.call_id)], item.output) for item in outputs], model.ended


def _call(item: ToolCallItem) -> ToolCall:
    """The ``ToolCall`` a function call item stands for, its index from the item's streamkit data."""
    raw: Any = item.raw_item
    index = raw.provider_data[DATA_KEY]["items"][-1]["index"]
    return ToolCall(index, raw.call_id, raw.name, json.loads(raw.arguments))
