"""LangChain: ``StreamkitChatModel``, a chat model whose streamed responses streamkit decodes.

The model sends the request itself (the shared request builder, then ``streamkit.astream`` or
``streamkit.stream``) and hands LangChain each call whole, at its own end marker. LangChain
merges streamed ``AIMessageChunk``s by joining their ``tool_call_chunks`` per ``index`` and
re-parsing the joined arguments with a lenient partial-JSON parser, so a call cut off by the
output limit would come out of the merge as a valid-looking call. Three rules keep merging
from changing any call:

1. each call, valid or not, is one ``tool_call_chunk`` of its own, under an index no other
   call of the response has (the provider's own index may repeat: parallel calls at index 0);
2. a valid call's ``args`` is its input as JSON text, which any parser reads back exactly;
3. an invalid call's ``args`` is a text no JSON parser, strict or lenient, reads as an object:
   streamkit's message for it, then its raw arguments. The merge sets ``error`` to ``None``;
   the message LangChain keeps is in ``args``, and ``invoke`` fills ``error`` too.

The whole ``streamkit.Turn`` (reasoning and its signatures, provider state, invalid calls with
their issues) goes into the message's ``additional_kwargs``, so the next request carries it back
exactly, and an invalid call is answered with streamkit's error payload, whatever ``ToolMessage``
the framework wrote for it. ``create_agent`` ends its loop on a message without a valid call, so
in its model node a turn whose calls were all invalid raises ``InvalidCallsError``, naming each
call and why, unless ``AskAgainMiddleware`` is there to tell the model and ask again. LangChain
runs tools only after the whole message: see the docs page.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_chunk_to_message,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, ensure_config
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, SecretStr

from .._client import astream, stream
from .._errors import UsageError
from .._turn_types import (
    StreamEvent,
    Thinking,
    Turn,
    TurnItem,
)
from .._types import ArgumentIssue, InvalidToolCall, Requested, TextDelta, ToolCall
from ..adapters._base import call_id, dumps
from ._chat import Entry, History, Prepared, User, prepare, read_tools
from ._early import STARTER
from ._ending import acut_at_end, cut_at_end
from ._fields import ClientFields
from ._invalid import InvalidCallsError, said, unparseable
from ._turn_json import turn_from_json, turn_json
from ._turns import Reader, Usage, read

if TYPE_CHECKING:
    from ._langchain_early import AskAgainMiddleware, EarlyToolsMiddleware

__all__ = (
    "TURN_KEY",
    "AskAgainMiddleware",
    "EarlyToolsMiddleware",
    "InvalidCallsError",
    "StreamkitChatModel",
    "turn_of",
)

#: The key of ``AIMessage.additional_kwargs`` that holds the streamkit ``Turn``, as JSON.
TURN_KEY = "streamkit_turn"
#: How streamkit's errors name the framework.
FRAMEWORK = "LangChain"
#: The name of ``create_agent``'s model node, as LangGraph gives it to the model's run.
AGENT_MODEL_NODE = "model"
#: Set by ``AskAgainMiddleware`` (and ``EarlyToolsMiddleware``) around ``create_agent``'s model
#: call: a turn of invalid calls only is told to the model there, not raised here.
ASKS_AGAIN: ContextVar[bool] = ContextVar("streamkit_asks_again", default=False)


class StreamkitChatModel(ClientFields, BaseChatModel):
    """A LangChain chat model for one provider's API, its streams decoded by streamkit.

    Works with ``bind_tools``, ``invoke``/``ainvoke``, ``stream``/``astream`` and
    ``langchain.agents.create_agent``. Each call reaches LangChain whole, once, with its input
    parsed strictly; a call cut off by the output limit (or with bad arguments) is only ever in
    ``invalid_tool_calls``, and never runs.

    Attributes:
        provider: ``"anthropic"``, ``"gemini"``, ``"mistral"``, ``"ollama"``, ``"openai_chat"``
            or ``"openai_responses"``.
        model: the provider's model name.
        api_key: the key; by default the provider's usual variable, as its decoder declares it (``ANTHROPIC_API_KEY``,
            ``OPENAI_API_KEY``, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``, ``MISTRAL_API_KEY``).
        base_url: the API's address; by default ``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``,
            ``GOOGLE_GEMINI_BASE_URL`` or ``MISTRAL_BASE_URL`` when set, else the provider's own.
        max_tokens: the output limit sent with each request.
        extra: more fields for the request body (``temperature``, ``thinking``…), as the
            provider names them; keyword arguments given to ``bind`` or ``invoke`` are added too.
        http_client, http_async_client: the ``httpx`` (or ``httpx2``) ``Client`` and
            ``AsyncClient`` to send with; by default the model makes one at its first request,
            with ``timeout``, keeps it, and closes it in ``close()`` / ``aclose()``.
        validate_calls: check each call's input against its tool's JSON Schema; a call that fails is
            an invalid call, answered with the schema errors.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    provider: Requested
    model: str
    api_key: SecretStr | None = None
    base_url: str | None = None
    max_tokens: int | None = None

    @property
    def _llm_type(self) -> str:
        return f"streamkit-{self.provider}"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"provider": self.provider, "model": self.model, "max_tokens": self.max_tokens, **self.extra}

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The model with ``tools`` offered on each request (any form LangChain converts)."""
        if tool_choice not in (None, "auto"):
            raise UsageError(f"tool_choice={tool_choice!r} is not supported; pass the provider's field in extra=")
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)

    # -- requests ------------------------------------------------------------------------------

    def _request(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]) -> Prepared:
        if stop:
            raise UsageError("stop sequences are not supported; pass the provider's field in extra=")
        kwargs = dict(kwargs)
        kwargs.pop("stream", None)
        tools = read_tools(kwargs.pop("tools", None) or ())
        talk = _entries_of(messages, self.provider)
        key = None if self.api_key is None else self.api_key.get_secret_value()
        return prepare(self, self.provider, self.model, talk, tools, key, self.max_tokens, {**self.extra, **kwargs})

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        prepared = self._request(messages, stop, kwargs)
        with stream(self._http().sync(), self.provider, **prepared.arguments()) as events:
            chunks = _Chunks(self, _untold())
            for event in cut_at_end(events):
                yield from chunks.feed(event)
        yield chunks.last()

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        prepared = self._request(messages, stop, kwargs)
        start = STARTER.get()
        async with astream(self._http().async_(), self.provider, **prepared.arguments()) as events:
            chunks = _Chunks(self, _untold())
            async for event in acut_at_end(events):
                out = chunks.feed(event)  # the event read first: only a call of the one choice starts
                if start is not None and isinstance(event, ToolCall):
                    start(event)
                for chunk in out:
                    yield chunk
        yield chunks.last()

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return _result(list(self._stream(messages, stop, None, **kwargs)))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return _result([chunk async for chunk in self._astream(messages, stop, None, **kwargs)])


# -- events -> chunks ----------------------------------------------------------------------------


def _untold() -> bool:
    """Whether this is ``create_agent``'s model call with no middleware to tell the model of a turn
    of invalid calls only: its loop would end on such a turn, the model untold. LangGraph names
    the node in the config of the run the model is called in (not on every path's run manager)."""
    node = (ensure_config().get("metadata") or {}).get("langgraph_node")
    return node == AGENT_MODEL_NODE and not ASKS_AGAIN.get()


class _Chunks:
    """One response's events as ``ChatGenerationChunk``s, in a shape LangChain's merging keeps.

    With ``refuse`` (``_untold``), a turn whose calls were all invalid raises ``InvalidCallsError``
    at its end: nothing else would tell the model, and the run would end without a word."""

    def __init__(self, model: StreamkitChatModel, refuse: bool = False) -> None:
        self.model = model
        self.refuse = refuse
        self.reader = Reader(model.provider, FRAMEWORK)

    def feed(self, event: StreamEvent) -> list[ChatGenerationChunk]:
        self.reader.feed(event)
        if isinstance(event, TextDelta) and event.text:
            return [ChatGenerationChunk(message=AIMessageChunk(content=event.text))]
        if isinstance(event, Thinking) and event.text:
            reasoning = {"reasoning_content": event.text}
            return [ChatGenerationChunk(message=AIMessageChunk(content="", additional_kwargs=reasoning))]
        if isinstance(event, ToolCall | InvalidToolCall):
            entry = tool_call_chunk(name=event.name, args=_args(event), id=call_id(event), index=self.reader.position)
            return [ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[entry]))]
        return []

    def last(self) -> ChatGenerationChunk:
        """The closing chunk: the turn, the stop reason and the token usage."""
        done = self.reader.read()
        if self.refuse and done.invalid and not done.valid:
            raise InvalidCallsError(done.invalid)
        turn = done.turn
        metadata = {"model_name": self.model.model, "stop_reason": turn.stop_reason, "finish_reason": turn.finish}
        message = AIMessageChunk(
            content="",
            additional_kwargs={TURN_KEY: turn_json(turn)},
            response_metadata=metadata,
            usage_metadata=_usage(done.usage),
            chunk_position="last",
        )
        return ChatGenerationChunk(message=message)


def _args(call: ToolCall | InvalidToolCall) -> str:
    """A call's ``args`` for LangChain: a valid call's input as JSON; for an invalid call, text
    that no JSON parser reads as an object (it starts with a letter), so that LangChain's lenient
    re-parse at each merge cannot make a valid call of it."""
    if isinstance(call, ToolCall):
        return dumps(call.input)
    return unparseable(call)


def _usage(counts: Usage | None) -> UsageMetadata | None:
    if counts is None:
        return None
    usage = UsageMetadata(input_tokens=counts.input, output_tokens=counts.output, total_tokens=counts.total)
    if counts.cache_read is not None:
        usage["input_token_details"] = {"cache_read": counts.cache_read}
    if counts.reasoning is not None:
        usage["output_token_details"] = {"reasoning": counts.reasoning}
    return usage


def _result(chunks: list[ChatGenerationChunk]) -> ChatResult:
    """The chunks merged as LangChain merges them, then each invalid call's ``error`` filled in
    (a merge sets it to ``None``; the message returned here is the model's own)."""
    first = chunks[0].message
    assert isinstance(first, AIMessageChunk)
    message = message_chunk_to_message(first + [chunk.message for chunk in chunks[1:]])  # one merge: linear
    assert isinstance(message, AIMessage)
    turn = turn_of(message)
    invalid = {call_id(call): call for call in read(turn, FRAMEWORK).invalid} if turn else {}
    for entry in message.invalid_tool_calls:
        call = invalid.get(entry["id"] or "")
        if call is not None:
            entry["error"] = said(call)
    return ChatResult(generations=[ChatGeneration(message=message)])


def turn_of(message: BaseMessage) -> Turn | None:
    """The streamkit ``Turn`` an ``AIMessage`` from ``StreamkitChatModel`` carries (its
    reasoning, signatures, and invalid calls with their issues); ``None`` for any other message."""
    stored = message.additional_kwargs.get(TURN_KEY) if isinstance(message, AIMessage) else None
    return None if stored is None else turn_from_json(stored, f"additional_kwargs[{TURN_KEY!r}]")


# -- LangChain messages -> request entries ---------------------------------------------------------


def _entries_of(messages: Sequence[BaseMessage], provider: str) -> tuple[str | None, list[Entry]]:
    """The system text and the history entries for ``messages``.

    An ``AIMessage`` this model made goes back as its stored ``Turn``, whole; any other one as
    its text and calls. Neighbouring ``ToolMessage``s make one ``Results``; the result of an
    invalid call is always streamkit's error payload for it (it never ran).
    """
    system: list[str] = []
    history = History()
    for position, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            if history.entries:
                raise UsageError(f"messages[{position}]: a SystemMessage must come before every other message")
            system.append(_text(message, position))
        elif isinstance(message, HumanMessage):
            history.add(User(_text(message, position)))
        elif isinstance(message, AIMessage):
            history.add(_turn(message, provider))
        elif isinstance(message, ToolMessage):
            result = message.content if isinstance(message.content, str) else _content(message.content)
            history.result(message.tool_call_id, message.name or "", result, message.status == "error")
        else:
            raise UsageError(f"messages[{position}]: a {type(message).__name__} cannot be sent; use the core messages")
    return ("\n\n".join(system) if system else None), history.done()


def _text(message: BaseMessage, position: int) -> str:
    if isinstance(message.content, str):
        return message.content
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, str):
            parts.append(block)
        elif block.get("type") == "text":
            parts.append(block["text"])
        else:
            raise UsageError(f"messages[{position}]: only text can be sent, not a {block.get('type')!r} block")
    return "".join(parts)


def _turn(message: AIMessage, provider: str) -> Turn:
    """The stored turn when the message still shows it; a message edited since (a middleware
    that rewrites arguments) goes back as it now reads, without the turn's opaque state."""
    stored = turn_of(message)
    text = message.text
    if stored is not None and _shows(message, stored, text):
        return stored
    items: list[TurnItem] = [TextDelta(text)] if text else []
    for index, call in enumerate(message.tool_calls):
        items.append(ToolCall(index, call["id"], call["name"], call["args"]))
    for index, bad in enumerate(message.invalid_tool_calls, start=len(items)):
        issue = ArgumentIssue("invalid_json", bad.get("error") or "the arguments are not a JSON object")
        items.append(InvalidToolCall(index, bad["id"], bad["name"], bad["args"] or "", (issue,)))
    return Turn(provider, tuple(items))


def invalid_calls_of(message: AIMessage) -> tuple[InvalidToolCall, ...]:
    """The invalid calls of ``message``: its stored turn's, with their issues, while it still shows
    them; else each of its ``invalid_tool_calls``, its error as the issue."""
    stored = turn_of(message)
    return read(_turn(message, "" if stored is None else stored.provider), FRAMEWORK).invalid


def _shows(message: AIMessage, turn: Turn, text: str) -> bool:
    done = read(turn, FRAMEWORK)
    valid = [(call_id(c), c.name, c.input) for c in done.valid]
    invalid = [call_id(c) for c in done.invalid]
    return (
        turn.text == text
        and valid == [(c["id"], c["name"], c["args"]) for c in message.tool_calls]
        and invalid == [c["id"] for c in message.invalid_tool_calls]
    )


def _content(content: list[str | dict[str, Any]]) -> Any:
    """A list content as its text when it is all text, else the list itself (sent as JSON)."""
    if all(isinstance(block, str) or block.get("type") == "text" for block in content):
        return "".join(block if isinstance(block, str) else block["text"] for block in content)
    return content


def __getattr__(name: str) -> Any:
    # ``langchain.agents`` takes seconds to import: only an agent that uses the middleware pays.
    if name in ("AskAgainMiddleware", "EarlyToolsMiddleware"):
        from . import _langchain_early

        return getattr(_langchain_early, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
