"""The latency benchmark's CrewAI row: a ``Crew`` of one agent over ``StreamkitLLM``, ``kickoff()``.

The crew runs in a worker thread, its model with a blocking client of its own; each tool, run in
CrewAI's thread pool, runs the benchmark's async tool on the event loop. CrewAI's executor runs
a turn's calls after the model's whole message, in parallel threads (see
docs/frameworks/crewai.md). Then it asks the model again: the timed model answers that request
itself, with no request sent, so one request is timed, as for the other rows.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from streamkit import ToolCall, ToolResult

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")  # offline: before CrewAI is imported
os.environ.setdefault("CREWAI_DISABLE_TRACKING", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import Agent, Crew, Task
from crewai.tools import BaseTool, tool
from pydantic import PrivateAttr

from streamkit.integrations.crewai import StreamkitLLM
from tests.models import ANTHROPIC

__all__ = ("crew",)

# CrewAI warns at every request that it estimates the input's tokens (one per four characters).
logging.getLogger("crewai.llms.base_llm").setLevel(logging.ERROR)


@dataclass
class _Watch:
    """When the model's first response ended, and the calls it gave CrewAI."""

    clock: Callable[[], float]
    ended: list[float] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)


class _Timed(StreamkitLLM):
    """A ``StreamkitLLM`` that notes when its first response ended and what it answered, and ends
    the task after the tools without a request."""

    _watch: _Watch = PrivateAttr(default_factory=lambda: _Watch(lambda: 0.0))

    def call(self, messages: str | list[Any], *args: Any, **kwargs: Any) -> Any:
        if self._watch.ended:  # the request after the tools: not timed
            return "Done."
        answer = super().call(messages, *args, **kwargs)
        self._watch.ended.append(self._watch.clock())
        self._watch.calls.extend(answer if isinstance(answer, list) else ())
        return answer


def _weather(run: Callable[..., Any], loop: asyncio.AbstractEventLoop, outputs: dict[str, Any]) -> BaseTool:
    def get_weather(location: str, unit: str, include_forecast: bool) -> Any:
        """The weather in a place."""
        outputs[location] = asyncio.run_coroutine_threadsafe(run(location, unit, include_forecast), loop).result()
        return outputs[location]

    return tool("get_weather")(get_weather)


async def crew(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """``Crew.kickoff`` on the turn, in a worker thread: CrewAI runs the tools after the message."""
    outputs: dict[str, Any] = {}
    weather = _weather(tools["get_weather"], asyncio.get_running_loop(), outputs)
    with httpx.Client() as http:
        base = url.removesuffix("/v1/messages")
        llm = _Timed(provider="anthropic", model=ANTHROPIC, base_url=base, api_key="k", http_client=http)
        llm._watch = _Watch(clock)
        agent = Agent(role="forecaster", goal="answer", backstory="a forecaster", llm=llm, tools=[weather], max_iter=2)
        task = Task(description="Weather in three cities", expected_output="the weather", agent=agent)
        await anyio.to_thread.run_sync(Crew(agents=[agent], tasks=[task]).kickoff)
    results = []
    for position, entry in enumerate(llm._watch.calls, 1):
        call = ToolCall(position, entry["id"], entry["function"]["name"], json.loads(entry["function"]["arguments"]))
        results.append(ToolResult(call, outputs[call.input["location"]]))  # a KeyError: the tool never ran
    return results, llm._watch.ended[0]
