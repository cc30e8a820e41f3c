"""CrewAI: ``StreamkitLLM``, a CrewAI ``BaseLLM`` whose streamed responses streamkit decodes.

The model sends the request itself (the shared request builder, then ``streamkit.stream`` or
``streamkit.astream``) to Anthropic, Gemini, OpenAI Chat, OpenAI Responses or Mistral. CrewAI's
agent executor calls a model that supports function calling with the tools in OpenAI's format
and no functions, and runs the tool calls the model returns as a list, each answered by a
``tool`` message; a text answer ends the task. So each turn's calls come back whole, as
OpenAI-style tool-call dicts, whether ``stream`` is on (its text and each whole call are also
emitted as CrewAI stream-chunk events) or off.

A call that cannot run (cut off by the output limit, invalid JSON, a schema failure, a tool not
offered) is returned with arguments no JSON parser reads (streamkit's message, then the raw
text): CrewAI's own path for arguments it cannot parse answers the call with an error and asks
the model again, and the next request carries streamkit's error for it, whatever CrewAI wrote.

CrewAI keeps the history as OpenAI Chat messages, which have no place for thinking signatures
or Gemini's thought signatures: the model keeps each turn it made, by its calls' ids, and sends
the stored turn back while the history still shows it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import orjson
from crewai.events.types.llm_events import LLMCallType
from crewai.llms.base_llm import BaseLLM, llm_call_context
from pydantic import PrivateAttr

from .._client import astream, stream
from .._errors import UsageError
from .._turn_types import StreamEvent, Turn, TurnItem
from .._types import ArgumentIssue, InvalidToolCall, Requested, TextDelta, ToolCall
from ..adapters._base import call_id, dumps
from ._chat import Entry, History, User, prepare, read_tools
from ._ending import acut_at_end, cut_at_end
from ._fields import ClientFields
from ._invalid import unparseable
from ._turns import Read, Reader, read

if TYPE_CHECKING:
    from crewai.agents.agent_builder.base_agent import BaseAgent
    from crewai.task import Task
    from pydantic import BaseModel

__all__ = ("StreamkitLLM",)

#: How many turns a model keeps for sending back (the oldest go first).
KEPT_TURNS = 256
#: How streamkit's errors name the framework.
FRAMEWORK = "CrewAI"


class StreamkitLLM(ClientFields, BaseLLM):
    """A CrewAI LLM for one provider's API, its streams decoded by streamkit.

    Give it to ``Agent(llm=...)``; a ``Crew`` runs as usual, ``stream=True`` or not. Each call
    reaches CrewAI whole, once, with its input parsed strictly; a call that cannot run never
    does, and the model is told.

    Attributes:
        provider: ``"anthropic"``, ``"gemini"``, ``"mistral"``, ``"ollama"``, ``"openai_chat"``
            or ``"openai_responses"``.
        model: the provider's model name.
        api_key, base_url: by default from the provider's usual variables (``ANTHROPIC_API_KEY``,
            ``OPENAI_BASE_URL``…), as its decoder declares them.
        max_tokens: the output limit sent with each request.
        extra: more fields for the request body (``thinking``…), as the provider names them;
            ``temperature`` and ``top_p`` are CrewAI's own fields, sent when set.
        http_client, http_async_client: the ``httpx`` (or ``httpx2``) clients to send with; by
            default the model makes one at its first request, with ``timeout``, keeps it, and
            closes it in ``close()`` / ``aclose()``.
        validate_calls: check each call's input against its tool's JSON Schema; a call that
            fails is not run, and the model is told the schema errors.
    """

    llm_type: str = "streamkit"
    provider: Requested  # type: ignore[assignment]
    _turns: dict[str, Turn] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def supports_function_calling(self) -> bool:
        """Yes: CrewAI then offers the tools natively and runs the calls this model returns."""
        return True

    def supports_stop_words(self) -> bool:
        """No: a stop sequence could cut a call; CrewAI's native tool path needs none."""
        return False

    def call(
        self,
        messages: str | list[Any],
        tools: list[dict[str, Any]] | None = None,
        callbacks: list[Any] | None = None,
        available_functions: dict[str, Any] | None = None,
        from_task: Task | None = None,
        from_agent: BaseAgent | None = None,
        response_model: type[BaseModel] | None = None,
    ) -> Any:
        """One model turn: its text, or its calls as OpenAI-style dicts for CrewAI to run."""
        with llm_call_context():
            call = _Call(self, messages, tools, from_task, from_agent)
            with call.failure_told(), stream(self._http().sync(), self.provider, **call.options) as events:
                for event in cut_at_end(events):
                    call.feed(event)
            return call.answer(response_model)

    async def acall(
        self,
        messages: str | list[Any],
        tools: list[dict[str, Any]] | None = None,
        callbacks: list[Any] | None = None,
        available_functions: dict[str, Any] | None = None,
        from_task: Task | None = None,
        from_agent: BaseAgent | None = None,
        response_model: type[BaseModel] | None = None,
    ) -> Any:
        """``call``, on the running event loop."""
        with llm_call_context():
            call = _Call(self, messages, tools, from_task, from_agent)
            with call.failure_told():
                async with astream(self._http().async_(), self.provider, **call.options) as events:
                    async for event in acut_at_end(events):
                        call.feed(event)
            return call.answer(response_model)

    def _keep(self, done: Read) -> None:
        with self._lock:
            for call in done.calls:
                self._turns[call_id(call)] = done.turn
            while len(self._turns) > KEPT_TURNS:
                del self._turns[next(iter(self._turns))]

    def _kept(self, ident: str) -> Turn | None:
        with self._lock:
            return self._turns.get(ident)


class _Call:
    """One call of the model: the request, the events as they come, and CrewAI's answer."""

    def __init__(
        self,
        llm: StreamkitLLM,
        messages: str | list[Any],
        tools: list[dict[str, Any]] | None,
        task: Task | None,
        agent: BaseAgent | None,
    ) -> None:
        self.llm, self.messages, self.task, self.agent = llm, messages, task, agent
        self.streaming = bool(llm._effective_stream())
        offered_tools = read_tools(tools or ())
        talk = _entries_of(llm._format_messages(messages), llm)
        sampling = {name: value for name in ("temperature", "top_p") if (value := getattr(llm, name)) is not None}
        limit = int(llm.max_tokens) if llm.max_tokens is not None else None
        extra = {**sampling, **llm.extra}
        self.options = prepare(llm, llm.provider, llm.model, talk, offered_tools, llm.api_key, limit, extra).arguments()
        self.reader = Reader(llm.provider, FRAMEWORK)
        llm._emit_call_started_event(messages=messages, tools=tools, from_task=task, from_agent=agent)

    @contextmanager
    def failure_told(self) -> Iterator[None]:
        """CrewAI's failure event for an error while the request is sent or its stream read (both
        twins'), then the error itself; one in ``answer`` is not the call's failure."""
        try:
            yield
        except Exception as exc:
            self.llm._emit_call_failed_event(str(exc), self.task, self.agent)
            raise

    def feed(self, event: StreamEvent) -> None:
        self.reader.feed(event)
        if not self.streaming:
            return
        if isinstance(event, TextDelta) and event.text:
            self.llm._emit_stream_chunk_event(event.text, self.task, self.agent, call_type=LLMCallType.LLM_CALL)
        elif isinstance(event, ToolCall | InvalidToolCall):  # whole: its arguments never an empty string
            entry = {**_openai_call(event), "index": self.reader.position}
            chunk = entry["function"]["arguments"]
            self.llm._emit_stream_chunk_event(chunk, self.task, self.agent, entry, LLMCallType.TOOL_CALL)

    def answer(self, response_model: type[BaseModel] | None) -> Any:
        """The turn's calls for CrewAI to run, or its text (parsed into ``response_model`` if given)."""
        done = self.reader.read()
        turn, usage = done.turn, done.usage
        if usage is not None:
            self.llm._track_token_usage_internal(
                {"prompt_tokens": usage.input, "completion_tokens": usage.output, "total_tokens": usage.total}
            )
        finish = turn.finish
        if done.calls:
            self.llm._keep(done)
            calls = [_openai_call(call) for call in done.calls]
            self.llm._emit_call_completed_event(
                calls, LLMCallType.TOOL_CALL, self.task, self.agent, self.messages, finish_reason=finish
            )
            return calls
        text = turn.text
        self.llm._emit_call_completed_event(
            text, LLMCallType.LLM_CALL, self.task, self.agent, self.messages, finish_reason=finish
        )
        return self.llm._validate_structured_output(text, response_model) if response_model is not None else text


def _openai_call(call: ToolCall | InvalidToolCall) -> dict[str, Any]:
    """A call as CrewAI's executor reads one: a valid call's input as JSON; an invalid one's
    arguments as text no JSON parser reads, so CrewAI answers it with an error instead of running it."""
    arguments = dumps(call.input) if isinstance(call, ToolCall) else unparseable(call)
    return {"id": call_id(call), "type": "function", "function": {"name": call.name or "", "arguments": arguments}}


# -- CrewAI's messages (OpenAI Chat's) -> request entries ------------------------------------------


def _entries_of(messages: Sequence[Mapping[str, Any]], llm: StreamkitLLM) -> tuple[str | None, list[Entry]]:
    """The system text and the history entries for CrewAI's ``messages``.

    An assistant message with calls this model made goes back as the stored ``Turn`` while the
    message still shows it; any other one as its text and calls. Neighbouring ``tool`` messages
    make one ``Results``; an invalid call's is always streamkit's error for it (it never ran).
    """
    system: list[str] = []
    history = History()
    for position, message in enumerate(messages):
        role = message.get("role")
        where = f"messages[{position}]"
        if role == "system":
            system.append(_text(message.get("content"), where))
        elif role == "user":
            history.add(User(_text(message.get("content"), where)))
        elif role == "assistant":
            history.add(_turn(message, llm, where))
        elif role == "tool":
            history.result(message.get("tool_call_id") or "", message.get("name") or "", message.get("content") or "")
        else:
            raise UsageError(f"{where}: a message of role {role!r} cannot be sent")
    return ("\n\n".join(system) if system else None), history.done()


def _text(content: Any, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        return "".join(part["text"] for part in content)
    raise UsageError(f"{where}: only text can be sent through streamkit, not {content!r:.80}")


def _turn(message: Mapping[str, Any], llm: StreamkitLLM, where: str) -> Turn:
    """The stored turn while the message still shows its calls (CrewAI's executor writes the
    assistant message of a tool turn without its text); else the message as it reads."""
    text = _text(message.get("content"), where)
    shown = [
        (entry.get("id") or "", entry["function"]["name"], entry["function"]["arguments"])
        for entry in message.get("tool_calls") or ()
    ]
    stored = llm._kept(shown[0][0]) if shown else None
    if stored is not None and text in ("", stored.text) and _shown(read(stored, FRAMEWORK).calls) == shown:
        return stored
    items: list[TurnItem] = [TextDelta(text)] if text else []
    for index, (ident, name, arguments) in enumerate(shown):
        items.append(_read_call(index, ident, name, arguments))
    return Turn(llm.provider, tuple(items))


def _shown(calls: Iterable[ToolCall | InvalidToolCall]) -> list[tuple[str, str, str]]:
    return [
        (entry["id"], entry["function"]["name"], entry["function"]["arguments"]) for entry in map(_openai_call, calls)
    ]


def _read_call(index: int, ident: str, name: str, arguments: Any) -> ToolCall | InvalidToolCall:
    """A call from a message streamkit did not keep: its arguments parsed as CrewAI's would be."""
    if isinstance(arguments, Mapping):
        return ToolCall(index, ident, name, dict(arguments))
    try:
        value = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        return ToolCall(index, ident, name, value)
    issue = ArgumentIssue("invalid_json", "the arguments are not a JSON object")
    return InvalidToolCall(index, ident, name, str(arguments), (issue,))
