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

from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse, hook_config
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from .. import _observe
from .._errors import UsageError
from .._types import ToolCall
from ..adapters._base import call_id
from ._early import STARTER, EarlyRuns, in_thread
from ._invalid import InvalidCallsError
from .langchain import ASKS_AGAIN, invalid_calls_of

__all__ = ("AskAgainMiddleware", "EarlyToolsMiddleware")

#: How many turns in a row of invalid calls only the model is asked again for, by default.
DEFAULT_RETRIES = 2


class AskAgainMiddleware(AgentMiddleware):
    """Tell the model why its calls could not run, and ask it again, when none of them could.

    ``create_agent`` ends its loop on a message without a valid call, so a turn whose calls were
    all cut off by the output limit, invalid JSON, or failing their tool's schema would end the
    run with the model untold (without this middleware, ``StreamkitChatModel`` raises
    ``InvalidCallsError`` there instead). After such a turn this middleware answers each invalid call with
    an error ``ToolMessage`` (``StreamkitChatModel`` sends the model streamkit's own error for
    it: "cut off by the output limit", the JSON position, the schema's paths) and sends the agent
    back to the model; after ``retries`` such turns in a row it raises ``InvalidCallsError``. A
    turn with valid calls beside invalid ones needs nothing: the tools run and the next request
    carries the errors.
    """

    def __init__(self, retries: int = DEFAULT_RETRIES) -> None:
        super().__init__()
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise UsageError(f"retries must be a whole number of at least 0, got {retries!r}")
        self.retries = retries

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        token = ASKS_AGAIN.set(True)  # the model leaves a turn of invalid calls only to this middleware
        try:
            return handler(request)
        finally:
            ASKS_AGAIN.reset(token)

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]
    ) -> ModelResponse[Any]:
        token = ASKS_AGAIN.set(True)
        try:
            return await handler(request)
        finally:
            ASKS_AGAIN.reset(token)

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._again(state["messages"])

    @hook_config(can_jump_to=["model"])
    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._again(state["messages"])

    def _again(self, messages: list[BaseMessage]) -> dict[str, Any] | None:
        turns = _invalid_turns(messages)
        if not turns:
            return None
        last = messages[-1]
        assert isinstance(last, AIMessage)
        if turns > self.retries:
            raise InvalidCallsError(invalid_calls_of(last), turns=turns)
        answers = [
            ToolMessage(call.get("error") or call.get("args") or "", tool_call_id=call["id"] or "", status="error")
            for call in last.invalid_tool_calls
        ]
        return {"messages": answers, "jump_to": "model"}


def _invalid_turns(messages: list[BaseMessage]) -> int:
    """How many assistant turns in a row, up to the last message, had invalid calls only."""
    turns = 0
    for position, message in enumerate(reversed(messages)):
        if isinstance(message, ToolMessage) and position:
            continue  # the answers to an earlier such turn
        if not isinstance(message, AIMessage) or message.tool_calls or not message.invalid_tool_calls:
            break
        turns += 1
    return turns


class EarlyToolsMiddleware(AskAgainMiddleware):
    """Start each tool while the model still streams; its ``ToolMessage`` comes with the model's.

    Args:
        tools: the names of the tools that may start early; by default every tool the agent
            offers, except those that take injected arguments (state, store, runtime), which only
            the tool node can give. Leave out any tool that must wait for an approval
            (``HumanInTheLoopMiddleware``) or must not run before the model's turn is known to
            be whole: an early start does not wait for either.
        retries: as ``AskAgainMiddleware``'s, which this middleware is too.

    Only calls that ``StreamkitChatModel`` completed whole and valid start (an invalid or
    truncated call never runs); each runs once, and its result answers only the call that
    started it (same id, name and arguments). The model step ends when the stream has ended and
    the tools it started have returned; a tool that raises fails the agent run, as in the tool
    node. With a sync agent (``invoke``/``stream``) nothing starts early.
    """

    def __init__(self, tools: Iterable[str] | None = None, *, retries: int = DEFAULT_RETRIES) -> None:
        super().__init__(retries)
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
                runs.start(call_id(call), (call.name, call.input), lambda: _observe.traced(call, _run(tool, entry)))

        token = STARTER.set(start)
        asking = ASKS_AGAIN.set(True)
        try:
            response = await handler(request)
            if not isinstance(response, ModelResponse):
                return response
            answers = await _answers(response, runs)
            return ModelResponse(result=[*response.result, *answers], structured_response=response.structured_response)
        finally:
            ASKS_AGAIN.reset(asking)
            STARTER.reset(token)
            await runs.close()  # what no call of the message asked for, or all of it when cut short


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


def _run(tool: BaseTool, entry: dict[str, Any]) -> Coroutine[Any, Any, Any]:
    """The tool's run: its own async code, or its sync code in a worker thread. LangChain's
    ``ainvoke`` hands sync code to an executor that a cancellation leaves running; a thread cannot
    be stopped, so here a cancelled run waits for its thread to end, and closing the run that
    started it waits too: nothing of it goes on in the background."""
    if _async(tool):
        return tool.ainvoke(entry)
    return in_thread(tool.invoke, entry)


def _async(tool: BaseTool) -> bool:
    """Whether the tool has async code of its own (a coroutine, or its own ``_arun``)."""
    if isinstance(tool, StructuredTool):
        return tool.coroutine is not None
    return type(tool)._arun is not BaseTool._arun


def _plain(tool: BaseTool) -> bool:
    """Whether the tool takes only the model's arguments (no injected state, store or runtime)."""
    try:
        return set(tool.get_input_schema().model_fields) == set(tool.tool_call_schema.model_fields)  # type: ignore[union-attr]
    except Exception:
        return False
