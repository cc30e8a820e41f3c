"""``EarlyToolsMiddleware``: ``create_agent``'s tools started while ``StreamkitChatModel`` streams.

LangChain's agent runs its tools in the tool node, after the model node has returned the whole
message. Its middleware can wrap both: around the model call this one lets the model start each
tool the moment its call completes in the stream (the model sees a ``Starter`` in a context
variable), and around each tool call it hands the tool node the started run's result, so no tool
runs twice. Only for the async agent (``ainvoke``/``astream``); the sync loop runs as before.
Imported by ``streamkit.integrations.langchain`` only when the name is used: ``langchain.agents``
is slow to import.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command

from .. import _observe
from .._types import ToolCall
from ..adapters._base import call_id
from .langchain import STARTER

__all__ = ("EarlyToolsMiddleware", "Starter")

ToolOutcome = ToolMessage | Command[Any]


class Starter:
    """What the model is given to start tools with, for one model call."""

    def __init__(self, tools: dict[str, BaseTool], started: dict[str, asyncio.Task[Any]]) -> None:
        self.tools = tools
        self.started = started
        self.mine: list[str] = []

    def start(self, call: ToolCall) -> None:
        """Start ``call``'s tool now, when the agent may run it early; once per call id."""
        tool = self.tools.get(call.name)
        key = call_id(call)
        if tool is None or key in self.started:
            return
        entry = {"type": "tool_call", "id": key, "name": call.name, "args": call.input}
        self.started[key] = asyncio.ensure_future(_observe.traced(call, tool.ainvoke(entry)))
        self.mine.append(key)

    def cancel(self) -> None:
        """The stream failed: stop the tools this model call started."""
        for key in self.mine:
            task = self.started.pop(key, None)
            if task is not None:
                task.cancel()


class EarlyToolsMiddleware(AgentMiddleware):
    """Start each tool while the model still streams; the tool node takes its result.

    Args:
        tools: the names of the tools that may start early; by default every tool the agent
            offers, except those that take injected arguments (state, store, runtime), which only
            the tool node can give. Leave out any tool that must wait for an approval
            (``HumanInTheLoopMiddleware``): an early start does not wait for it.

    Only calls that ``StreamkitChatModel`` completed whole and valid start (an invalid or
    truncated call never runs); each is run once, by its call id, and its result is what the
    tool node returns for it. With a sync agent (``invoke``/``stream``) nothing starts early.
    """

    def __init__(self, tools: Iterable[str] | None = None) -> None:
        super().__init__()
        self.allowed = None if tools is None else frozenset(tools)
        self.started: dict[str, asyncio.Task[Any]] = {}

    def early(self, offered: Iterable[BaseTool | dict[str, Any]]) -> dict[str, BaseTool]:
        """The offered tools that may start early."""
        out: dict[str, BaseTool] = {}
        for tool in offered:
            if not isinstance(tool, BaseTool):
                continue
            if (self.allowed is None and _plain(tool)) or (self.allowed is not None and tool.name in self.allowed):
                out[tool.name] = tool
        return out

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelResponse[Any]:
        starter = Starter(self.early(request.tools), self.started)
        token = STARTER.set(starter.start)
        try:
            return await handler(request)
        except BaseException:
            starter.cancel()
            raise
        finally:
            STARTER.reset(token)

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        return handler(request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[ToolOutcome]]
    ) -> ToolOutcome:
        task = self.started.pop(request.tool_call["id"] or "", None)
        if task is None:
            return await handler(request)
        result: ToolOutcome = await task
        return result

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolOutcome]
    ) -> ToolOutcome:
        return handler(request)


def _plain(tool: BaseTool) -> bool:
    """Whether the tool takes only the model's arguments (no injected state, store or runtime)."""
    try:
        return set(tool.get_input_schema().model_fields) == set(tool.tool_call_schema.model_fields)  # type: ignore[union-attr]
    except Exception:
        return False
