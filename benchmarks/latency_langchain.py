"""LangChain's own agent loop in the latency benchmark: ``create_agent`` over ``StreamkitChatModel``,
as LangChain runs the tools (after the model's message), and with ``EarlyToolsMiddleware``
(each tool started when its call ends). Each way runs one round of the agent on the benchmark's
turn and stops once the three tool results are in; the stream's end is when the model node
returned its message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from streamkit import ToolCall, ToolResult
from streamkit.integrations._chat import User, build
from streamkit.integrations.langchain import EarlyToolsMiddleware, StreamkitChatModel, turn_of
from tests.models import ANTHROPIC


def _base_url(url: str) -> str:
    """The ``base_url`` under which the model's Anthropic requests go to ``url``."""
    probe = urlsplit(build("anthropic", "m", [User("x")], base_url="http://probe").url).path
    return url.removesuffix(probe)


def _tools(tools: dict[str, Any]) -> list[BaseTool]:
    return [
        StructuredTool.from_function(coroutine=function, name=name, description=f"The benchmark's {name}.")
        for name, function in tools.items()
    ]


async def _agent(
    client: httpx.AsyncClient,
    url: str,
    tools: dict[str, Any],
    clock: Callable[[], float],
    middleware: list[AgentMiddleware[Any, Any, Any]],
) -> tuple[list[ToolResult], float]:
    model = StreamkitChatModel(provider="anthropic", model=ANTHROPIC, base_url=_base_url(url), http_async_client=client)
    agent = create_agent(model, tools=_tools(tools), middleware=middleware)
    calls: dict[str, ToolCall] = {}
    results: list[ToolResult] = []
    ended = 0.0
    state: Any = {"messages": [("user", "Weather in Paris, Tokyo and New York?")]}
    async for step in agent.astream(state, stream_mode="updates"):
        for message in step.get("model", {}).get("messages", []):
            if isinstance(message, AIMessage):
                ended = clock()
                turn = turn_of(message)
                assert turn is not None
                calls = {call.id or "": call for call in turn.calls if isinstance(call, ToolCall)}
        for update in step.values():  # the tool node's results, or early tools' in the model step
            messages = (update or {}).get("messages", [])
            results += [ToolResult(calls[m.tool_call_id], m.content) for m in messages if isinstance(m, ToolMessage)]
        if calls and len(results) == len(calls):
            break  # one round: the server would send the same turn again
    order = list(calls)
    return sorted(results, key=lambda result: order.index(result.id or "")), ended


async def after(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """LangChain's way: the tool node runs the tools once the model's message is whole."""
    return await _agent(client, url, tools, clock, [])


async def early(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """With ``EarlyToolsMiddleware``: each tool starts when its call ends in the stream, and the
    model step (whose end is timed) returns once those tools have."""
    return await _agent(client, url, tools, clock, [EarlyToolsMiddleware()])


WAYS = {"langchain create_agent": after, "langchain + early tools": early}
