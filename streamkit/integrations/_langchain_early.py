"""``EarlyToolsMiddleware``: ``create_agent``'s tools started while ``StreamkitChatModel`` streams.

LangChain's agent runs its tools in the tool node, after the model node has returned the whole
message. This middleware wraps the model call: the model sees a starter in a context variable
and starts each tool the moment its call completes in the stream; when the stream has ended,
the middleware waits for those tools and returns their ``ToolMessage``s beside the
``AIMessage``, so the agent's own routing sends only the calls not answered yet to the tool
node, and no tool runs twice. Everything it started belongs to that one model call: a run
closed or cancelled mid-stream cancels its tools and waits for them, and nothing is kept
between calls, runs, tasks or threads (``_early.EarlyRuns``). Only for the async agent
(``ainvoke``/``astream``); the sync loop runs as before. Imported by
``streamkit.integrations.langchain`` only when the name is used: ``langchain.agents`` is slow to
import.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool

from .. import _observe
from .._errors import UsageError
from .._types import ToolCall
from ..adapters._base import call_id
from ._early import STARTER, EarlyRuns

__all__ = ("EarlyToolsMiddleware",)


class EarlyToolsMiddleware(AgentMiddleware):
    """Start each tool while the model still streams; its ``ToolMessage`` comes with the model's.

    Args:
        tools: the names of the tools that may start early; by default every tool the agent
            offers, except those that take injected arguments (state, store, runtime), which only
            the tool node can give. Leave out any tool that must wait for an approval
            (``HumanInTheLoopMiddleware``) or must not run before the model's turn is known to
            be whole: an early start does not wait for either.

    Only calls that ``StreamkitChatModel`` completed whole and valid start (an invalid or
    truncated call never runs); each runs once, and its result answers only the call that
    started it (same id, name and arguments). The model step ends when the stream has ended and
    the tools it started have returned; a tool that raises fails the agent run, as in the tool
    node. With a sync agent (``invoke``/``stream``) nothing starts early.
    """

    def __init__(self, tools: Iterable[str] | None = None) -> None:
        super().__init__()
        self.allowed = None if tools is None else frozenset(tools)

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
        tools = self.early(request.tools)
        runs: EarlyRuns[Any] = EarlyRuns()

        def start(call: ToolCall) -> None:
            tool = tools.get(call.name)
            if tool is not None:
                entry = {"type": "tool_call", "id": call_id(call), "name": call.name, "args": call.input}
                runs.start(call_id(call), (call.name, call.input), lambda: _observe.traced(call, tool.ainvoke(entry)))

        token = STARTER.set(start)
        try:
            response = await handler(request)
            if not isinstance(response, ModelResponse):
                return response
            answers = await _answers(response, runs)
            return ModelResponse(result=[*response.result, *answers], structured_response=response.structured_response)
        finally:
            STARTER.reset(token)
            await runs.close()  # what no call of the message asked for, or all of it when cut short

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        return handler(request)


async def _answers(response: ModelResponse[Any], runs: EarlyRuns[Any]) -> list[ToolMessage]:
    """The ``ToolMessage`` of each call of the response's message that a tool started early for."""
    message = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
    answers: list[ToolMessage] = []
    for call in message.tool_calls if message is not None else ():
        task = runs.take(call["id"] or "", (call["name"], call["args"]))
        if task is None:
            continue
        outcome = await task
        if not isinstance(outcome, ToolMessage):
            raise UsageError(
                f"the tool {call['name']!r} returned a {type(outcome).__name__}, not a ToolMessage: it cannot start "
                "early; leave it out of EarlyToolsMiddleware(tools=...)"
            )
        answers.append(outcome)
    return answers


def _plain(tool: BaseTool) -> bool:
    """Whether the tool takes only the model's arguments (no injected state, store or runtime)."""
    try:
        return set(tool.get_input_schema().model_fields) == set(tool.tool_call_schema.model_fields)  # type: ignore[union-attr]
    except Exception:
        return False
