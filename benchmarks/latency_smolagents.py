"""The latency benchmark's smolagents row: its own ``ToolCallingAgent`` over ``StreamkitModel``.

smolagents is synchronous: the agent runs in a worker thread, with a blocking client of its own,
and each of its tool threads runs the benchmark's async tool on the event loop. A step runs its
tools after the model's whole message (see docs/frameworks/smolagents.md); ``max_steps=1`` ends
the run after that step (smolagents then asks once more for a final answer, after the timing).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import anyio
import httpx
from smolagents import Tool, ToolCallingAgent
from smolagents.memory import ActionStep

from streamkit import ToolCall, ToolResult
from streamkit.integrations.smolagents import StreamkitModel
from tests.models import ANTHROPIC

__all__ = ("smolagents_agent",)


class _Weather(Tool):
    name = "get_weather"
    description = "The weather in a place."
    inputs = {  # noqa: RUF012  # smolagents reads them from the class
        "location": {"type": "string", "description": "where"},
        "unit": {"type": "string", "description": "celsius or fahrenheit"},
        "include_forecast": {"type": "boolean", "description": "with the forecast"},
    }
    output_type = "object"

    def __init__(self, run: Callable[..., Any], loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # smolagents' own is unannotated
        self.run, self.loop = run, loop

    def forward(self, location: str, unit: str, include_forecast: bool) -> Any:
        return asyncio.run_coroutine_threadsafe(self.run(location, unit, include_forecast), self.loop).result()


class _Timed(StreamkitModel):
    """A ``StreamkitModel`` that notes when its first response ended."""

    def __init__(self, clock: Callable[[], float], base_url: str, http: httpx.Client) -> None:
        super().__init__("anthropic", ANTHROPIC, base_url=base_url, api_key="k", http_client=http)
        self.clock = clock
        self.ended: list[float] = []

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        message = super().generate(*args, **kwargs)
        self.ended.append(self.clock())
        return message


async def smolagents_agent(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """``ToolCallingAgent.run`` on the turn, in a worker thread: the tools run after the message."""
    weather = _Weather(tools["get_weather"], asyncio.get_running_loop())
    with httpx.Client() as http:
        model = _Timed(clock, url.removesuffix("/v1/messages"), http)
        agent = ToolCallingAgent(tools=[weather], model=model, max_steps=1, verbosity_level=-1)
        await anyio.to_thread.run_sync(agent.run, "Weather in three cities")
    step = agent.memory.steps[1]
    assert isinstance(step, ActionStep) and step.model_output_message is not None
    calls = step.model_output_message.tool_calls or []
    results = [
        ToolResult(ToolCall(position, call.id, call.function.name, call.function.arguments), None)
        for position, call in enumerate(calls, 1)
    ]
    return results, model.ended[0]
