"""streamkit under the OpenAI Agents SDK: ``StreamkitModel`` and ``StreamkitModelProvider``.

openai-agents speaks the OpenAI Responses API: its history is Responses input items and a model
streams Responses events. ``StreamkitModel`` sends the request itself (``_chat.build``, then
``streamkit.astream``) to Anthropic, Gemini, OpenAI Chat, OpenAI Responses or Mistral, and turns
each streamkit value into Responses events the moment it completes: a call is a
``response.output_item.done`` with its arguments serialized once, the instant its own end
marker arrives.

Each output item carries the streamkit items it stands for in ``provider_data["streamkit"]``,
which openai-agents keeps in its history: the next request rebuilds the ``Turn`` from them, so
Anthropic thinking signatures, redacted thinking and Gemini thought signatures go back byte for
byte. A call that cannot run (``InvalidToolCall``: cut off, invalid JSON) is a ``function_call``
whose arguments no JSON parser reads (streamkit's message, then the raw text): openai-agents'
own path for a call it cannot parse answers it with an error and asks the model again, and the
next request carries streamkit's error for it, whatever openai-agents wrote. With
``on_cut="stop"`` a cut response ends with ``response.incomplete`` (reason
``max_output_tokens``) instead, on which openai-agents raises and nothing of that turn runs.

openai-agents runs tools only after the stream has ended; a ``Model`` cannot start them sooner
(docs/frameworks/openai_agents.md says which of its code was checked).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, TypedDict, Unpack, cast

import httpx
from agents import (
    AgentOutputSchemaBase,
    FunctionTool,
    Handoff,
    Model,
    ModelProvider,
    ModelResponse,
    ModelSettings,
    ModelTracing,
    Tool,
    Usage,
)
from agents.exceptions import ModelBehaviorError
from agents.items import TResponseInputItem, TResponseStreamEvent
from agents.models.fake_id import FAKE_RESPONSES_ID
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseOutputItem,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
    ResponseUsage,
)
from openai.types.responses.response import IncompleteDetails
from openai.types.responses.response_reasoning_item import Content, Summary
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from .._client import astream
from .._errors import UsageError
from .._normalize import parse_arguments
from .._turn_types import (
    MessageItem,
    ReasoningItem,
    RedactedThinking,
    StreamEvent,
    TextSignature,
    Thinking,
    Turn,
    TurnItem,
)
from .._types import (
    ArgumentsFragment,
    ArgumentsPreview,
    Call,
    CallStarted,
    InvalidToolCall,
    ResponseEnd,
    TextDelta,
    ToolCall,
)
from ..adapters._base import Outcome, call_id, dumps
from ..providers import FACTS, REQUESTS
from ..providers._request import merged
from ..providers._request import settings as written
from . import _chat
from ._clients import Clients
from ._ending import acut_at_end
from ._invalid import unparseable
from ._turn_json import item_from_json, item_json, item_kind
from ._turns import Reader, usage_as
from ._turns import Usage as Counts

__all__ = ("DATA_KEY", "StreamkitModel", "StreamkitModelProvider")

#: The key of ``provider_data`` under which an output item carries its streamkit items.
DATA_KEY = "streamkit"
#: How streamkit's errors name the framework.
FRAMEWORK = "the OpenAI Agents SDK integration"

_ON_CUT = ("stop", "tell")
#: The client a model makes itself waits this long for a read, and 10 s for a connection.
_TIMEOUT = httpx.Timeout(60.0, connect=10.0)
_PROGRESS = (ArgumentsPreview, CallStarted, ArgumentsFragment)


class StreamkitModel(Model):
    """An ``agents.Model`` whose requests streamkit sends and whose streams streamkit decodes.

    Args:
        provider: the slug of the API to call: ``anthropic``, ``gemini``, ``openai_chat``,
            ``openai_responses`` or ``mistral``.
        model: the provider's model name (``claude-sonnet-5-5``, ``gemini-3.8-flash``, ``gpt-5.4``).
        client: the ``httpx.AsyncClient`` to send with (its timeouts, proxies and pool); by
            default the model makes one and closes it in ``close()``.
        base_url: the API's base URL, as its official SDK takes it (OpenAI's with ``/v1``).
        api_key: sent the way the provider wants it (``x-api-key``, ``Authorization``…); by
            default the provider's usual variable (``OPENAI_API_KEY``…), as its decoder declares it.
        max_tokens: the output limit, unless the agent's ``ModelSettings.max_tokens`` sets one.
        extra: merged into every request body last (``{"thinking": {...}}``, ``{"temperature": 0}``).
        on_cut: what a response cut off by the output limit becomes. ``"tell"`` (the default):
            it completes like any other; its whole calls run, and the cut call, like any
            invalid one, is a ``function_call`` openai-agents cannot parse, so it answers it
            with an error and asks the model again, and the next request carries streamkit's
            message for it ("cut off by the output limit"). ``"stop"``: it ends with
            ``response.incomplete``, on which openai-agents raises ``ModelBehaviorError`` and
            runs none of the turn's calls.
    """

    def __init__(
        self,
        provider: str,
        model: str,
        *,
        client: httpx.AsyncClient | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int | None = None,
        extra: Mapping[str, Any] | None = None,
        on_cut: str = "tell",
    ) -> None:
        if on_cut not in _ON_CUT:
            raise UsageError(f"on_cut must be one of {', '.join(_ON_CUT)}, got {on_cut!r}")
        if provider not in _chat.PROVIDERS:
            raise UsageError(f"StreamkitModel sends to {', '.join(_chat.PROVIDERS)}, not {provider!r}")
        if not isinstance(model, str) or not model:
            raise UsageError(f"model must be the provider's model name, got {model!r}")
        if client is not None and not isinstance(client, httpx.AsyncClient):
            raise UsageError(f"client must be an httpx.AsyncClient, got {type(client).__name__}")
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.max_tokens = max_tokens
        self.extra = dict(extra or {})
        self.on_cut = on_cut
        self._clients = Clients(async_=client, timeout=_TIMEOUT)

    def __repr__(self) -> str:
        return f"StreamkitModel(provider={self.provider!r}, model={self.model!r})"

    async def close(self) -> None:
        """Close the HTTP client the model made itself, even when cancelled (one given stays open)."""
        await self._clients.aclose()

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        """The whole response, read from the same stream (``stream_response``'s arguments, as
        ``agents.Model`` passes them); a cut raises as ``Runner.run_streamed`` does."""
        final: Response | None = None
        async for event in self.stream_response(*args, **kwargs):
            if isinstance(event, ResponseCompletedEvent | ResponseIncompleteEvent):
                final = event.response
        assert final is not None  # the stream always ends with one of the two
        if final.status == "incomplete":
            raise ModelBehaviorError(_cut_message(final))
        return ModelResponse(output=list(final.output), usage=_agents_usage(final.usage), response_id=None)

    async def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002  # the name agents.Model gives it
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any | None,
    ) -> AsyncIterator[TResponseStreamEvent]:
        """Responses events, each as soon as the streamkit value it stands for is complete."""
        if previous_response_id is not None or conversation_id is not None or prompt is not None:
            raise UsageError(
                "StreamkitModel keeps the conversation itself: no previous_response_id, conversation or prompt"
            )
        _check_output(output_schema)
        offered = [*tools, *handoffs]
        request = self.request(system_instructions, input, model_settings, offered)
        writer = _Writer(self.provider, self.model, tell=self.on_cut == "tell")
        yield writer.created()
        async with astream(
            self._clients.async_(),
            cast(Any, self.provider),
            request.url,
            json=request.body,
            headers=request.headers,
            tools=_chat.offered([_tool(tool) for tool in offered]) or None,  # a schema failure is streamkit's error
        ) as events:
            async for event in acut_at_end(events):
                for out in writer.feed(event):
                    yield out
        for out in writer.end():
            yield out

    def request(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002
        model_settings: ModelSettings,
        tools: Sequence[Tool | Handoff],
    ) -> _chat.Request:
        """The HTTP request for one model call: openai-agents' input items as streamkit entries."""
        system, entries = _Reader(self.provider).read(input)
        instructions = "\n\n".join(part for part in (system_instructions, *system) if part) or None
        limit = model_settings.max_tokens if model_settings.max_tokens is not None else self.max_tokens
        extra = merged(merged(_sampling(self.provider, model_settings), model_settings.extra_body or {}), self.extra)
        return _chat.build(
            self.provider,
            self.model,
            entries,
            system=instructions,
            tools=[_tool(tool) for tool in tools],
            base_url=self.base_url,
            api_key=self.api_key,
            max_tokens=limit,
            extra=extra,
        )


class ModelOptions(TypedDict, total=False):
    """What a ``StreamkitModel`` takes beside its provider, model and client: ``StreamkitModel``
    says what each is."""

    base_url: str | None
    api_key: str | None
    max_tokens: int | None
    extra: Mapping[str, Any] | None
    on_cut: str


class StreamkitModelProvider(ModelProvider):
    """An ``agents.ModelProvider`` that gives a ``StreamkitModel`` for every model name.

    ``RunConfig(model_provider=StreamkitModelProvider("anthropic", api_key=...))`` runs every
    agent of a run through streamkit; an agent's ``model`` string is the provider's model name
    (``default_model`` when the agent names none). The other arguments are ``StreamkitModel``'s,
    and one HTTP client is shared by the provider's models.
    """

    def __init__(
        self,
        provider: str,
        *,
        default_model: str | None = None,
        client: httpx.AsyncClient | None = None,
        **options: Unpack[ModelOptions],
    ) -> None:
        if provider not in _chat.PROVIDERS:
            raise UsageError(f"StreamkitModelProvider sends to {', '.join(_chat.PROVIDERS)}, not {provider!r}")
        known = ModelOptions.__annotations__
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise UsageError(f"StreamkitModelProvider takes no {unknown[0]!r} (its options: {', '.join(known)})")
        self.provider = provider
        self.default_model = default_model
        self._options = options
        self._clients = Clients(async_=client, timeout=_TIMEOUT)
        self._models: dict[str, StreamkitModel] = {}

    def get_model(self, model_name: str | None) -> Model:
        name = model_name or self.default_model
        if not name:
            raise UsageError("the agent names no model, and the StreamkitModelProvider has no default_model")
        if name not in self._models:
            made = StreamkitModel(self.provider, name, **self._options)
            made._clients = self._clients  # one client for all the provider's models
            self._models[name] = made
        return self._models[name]

    async def aclose(self) -> None:
        """Close the HTTP client the provider made itself, even when cancelled."""
        await self._clients.aclose()
        self._models.clear()


# -- openai-agents' input items -> streamkit entries ------------------------------------------


def _tool(tool: Tool | Handoff) -> _chat.Tool:
    """A function tool, or a handoff (a tool to the model), as ``_chat`` offers it."""
    if isinstance(tool, FunctionTool):
        return _chat.Tool(tool.name, tool.description, tool.params_json_schema)
    if isinstance(tool, Handoff):
        return _chat.Tool(tool.tool_name, tool.tool_description, tool.input_json_schema)
    raise UsageError(f"StreamkitModel offers function tools and handoffs, not {type(tool).__name__} ({tool.name!r})")


def _check_output(output_schema: AgentOutputSchemaBase | None) -> None:
    if output_schema is not None and not output_schema.is_plain_text():
        raise UsageError("StreamkitModel sends no structured-output schema: give the agent a plain-text output_type")


def _sampling(provider: str, settings: ModelSettings) -> dict[str, Any]:
    """``temperature`` and ``top_p``, where each API takes them (its ``SETTINGS``)."""
    given = {"temperature": settings.temperature, "top_p": settings.top_p}
    fields, _ = written(REQUESTS[provider], {key: value for key, value in given.items() if value is not None})
    return fields


def _plain(item: Any, position: int) -> dict[str, Any]:
    if isinstance(item, Mapping):
        return dict(item)
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return cast(dict[str, Any], dump(exclude_unset=True))
    raise UsageError(f"input[{position}] is not a Responses input item: {type(item).__name__}")


def _text_of(content: Any, position: int, kinds: tuple[str, ...]) -> str:
    """A message's text: a string, or its text parts joined; other parts are refused."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise UsageError(f"input[{position}] has content of type {type(content).__name__}, not text")
    texts: list[str] = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind not in kinds:
            raise UsageError(f"input[{position}] has a {kind!r} part: StreamkitModel sends text only")
        texts.append(part["text"] if kind != "refusal" else part["refusal"])
    return "".join(texts)


class _Reader:
    """openai-agents' history as ``_chat`` entries: user messages, assistant ``Turn``s, results.

    Neighbouring assistant items (reasoning, a message, function calls) make one ``Turn``. An
    item stamped by a ``StreamkitModel`` for the same provider gives back its streamkit items
    exactly; any other gives its text and calls (another provider's reasoning cannot be sent).
    Results follow their turn's calls in call order, an invalid call answered with streamkit's
    error for it.
    """

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.system: list[str] = []
        self.entries: list[_chat.Entry] = []
        self.turn: list[TurnItem] = []
        self.calls: dict[str, ToolCall | InvalidToolCall] = {}  # every call so far, by the id openai-agents knows
        self.last: tuple[Call, ...] = ()  # the calls of the last turn
        self.outputs: dict[str, Any] = {}  # call id -> output, for the results being gathered

    def read(self, items: str | list[TResponseInputItem]) -> tuple[list[str], list[_chat.Entry]]:
        if isinstance(items, str):
            return [], [_chat.User(items)]
        for position, raw in enumerate(items):
            item = _plain(raw, position)
            kind = item.get("type", "message" if "role" in item else None)
            if kind == "function_call_output":
                self._end_turn()
                self.outputs[self._call_id(item, position)] = item.get("output")
                continue
            self._end_results()
            if kind == "message" and item.get("role") in ("user", "system", "developer"):
                self._end_turn()
                text = _text_of(item.get("content"), position, ("input_text", "output_text", "text"))
                if item["role"] == "user":
                    self.entries.append(_chat.User(text))
                else:
                    self.system.append(text)
            elif kind in ("message", "function_call", "reasoning"):
                self.turn += self._items(item, kind, position)
            else:
                raise UsageError(
                    f"input[{position}] is a {kind!r} item: StreamkitModel reads messages, function calls, "
                    "their outputs and reasoning"
                )
        self._end_turn()
        self._end_results()
        return self.system, self.entries

    def _items(self, item: dict[str, Any], kind: str, position: int) -> list[TurnItem]:
        stamp = (item.get("provider_data") or {}).get(DATA_KEY)
        if isinstance(stamp, Mapping) and stamp.get("provider") == self.provider:
            items = [_decode(entry, item, position) for entry in stamp.get("items", ())]
        elif kind == "message":
            text = _text_of(item.get("content"), position, ("output_text", "refusal"))
            items = [TextDelta(text)] if text else []
        elif kind == "function_call":
            items = [_foreign_call(item, position, len(self.turn))]
        elif FACTS[self.provider].reasoning_items and item.get("encrypted_content"):
            # the API's own reasoning item, from another model of openai-agents on the same API
            items = [ReasoningItem({key: value for key, value in item.items() if key != "provider_data"})]
        else:
            items = []  # another provider's reasoning: no API can read it but that one
        if kind == "function_call" and items and isinstance(items[-1], ToolCall | InvalidToolCall):
            self.calls[str(item.get("call_id"))] = items[-1]  # the item's own call comes last
        for entry in items:
            if isinstance(entry, InvalidToolCall):
                self.calls[_invalid_key(entry)] = entry
        return items

    def _call_id(self, item: dict[str, Any], position: int) -> str:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or call_id not in self.calls:
            raise UsageError(
                f"input[{position}] is the output of call {call_id!r}, which no function_call before it made"
            )
        return call_id

    def _end_turn(self) -> None:
        if not self.turn:
            return
        turn = Turn(self.provider, tuple(self.turn))
        self.entries.append(turn)
        self.last = turn.calls
        self.turn = []

    def _end_results(self) -> None:
        """The results gathered, in the order of the last turn's calls, then any others."""
        invalid = [call for call in self.last if isinstance(call, InvalidToolCall)]
        if not self.outputs and not invalid:
            return
        order = {id(call): n for n, call in enumerate(self.last)}
        outcomes: list[tuple[int, Outcome]] = [(order[id(call)], call) for call in invalid]
        for ident, output in self.outputs.items():
            call = self.calls[ident]
            if isinstance(call, InvalidToolCall):
                continue  # an invalid call is answered with streamkit's error, whatever was sent
            outcomes.append((order.get(id(call), len(order)), (call, _output_text(output))))
        outcomes.sort(key=lambda pair: pair[0])
        self.entries.append(_chat.Results(tuple(outcome for _, outcome in outcomes)))
        self.outputs = {}
        self.last = ()


def _invalid_key(call: InvalidToolCall) -> str:
    return f"streamkit-invalid:{call.choice}:{call.index}"


def _output_text(output: Any) -> Any:
    """A tool output as openai-agents gives it: a string, or a list of text parts."""
    if isinstance(output, list):
        return "".join(part.get("text", "") for part in output if isinstance(part, Mapping))
    return output


def _foreign_call(item: dict[str, Any], position: int, index: int) -> ToolCall | InvalidToolCall:
    """A ``function_call`` that no StreamkitModel of this provider made: its name and arguments."""
    name, call_id, arguments = item.get("name"), item.get("call_id"), item.get("arguments")
    if not isinstance(name, str) or not isinstance(call_id, str):
        raise UsageError(f"input[{position}] is a function_call without a name or a call_id")
    parsed, issue, _ = parse_arguments(arguments)
    if parsed is None:
        assert issue is not None
        return InvalidToolCall(index, call_id, name, str(arguments), (issue,))
    return ToolCall(index, call_id, name, parsed)


# -- streamkit items <-> provider_data ---------------------------------------------------------


def _encode(item: TurnItem) -> dict[str, Any]:
    """An item as JSON-ready data; a valid call's input is left out (its ``arguments`` hold it)."""
    data = item_json(item)
    if isinstance(item, ToolCall):
        del data["input"]
    return data


def _decode(entry: Any, item: dict[str, Any], position: int) -> TurnItem:
    if item_kind(entry) == ToolCall.__name__:
        parsed, issue, _ = parse_arguments(item.get("arguments"))
        if parsed is None:
            raise UsageError(f"input[{position}] has arguments that are not a JSON object: {issue}")
        entry = {**entry, "input": parsed}
    return item_from_json(entry, f"input[{position}]")


# -- streamkit values -> Responses events ------------------------------------------------------


class _Writer:
    """streamkit values in, Responses stream events out, each item done as soon as it is whole.

    Text opens a message item that stays open while text (and a Gemini text signature) comes;
    reasoning and calls are whole when streamkit hands them out, and go out at once. State that
    belongs to what follows (a call's ``CallState``) waits for it; an invalid call and state
    left at the end ride on the next item, or on a last reasoning item of their own.
    """

    def __init__(self, provider: str, model: str, *, tell: bool) -> None:
        self.provider = provider
        self.tell = tell  # a cut turn with whole calls completes (on_cut="tell")
        self.reader = Reader(provider, FRAMEWORK)  # its calls: the function calls handed out
        self.sequence = 0
        self.output: list[ResponseOutputItem] = []
        self.pending: list[TurnItem] = []
        self.text: list[TurnItem] | None = None  # the open message's items
        self.cut = False
        self.end_event: ResponseEnd | None = None
        self.response = Response(
            id=FAKE_RESPONSES_ID,
            created_at=time.time(),
            model=model,
            object="response",
            output=[],
            tool_choice="auto",
            tools=[],
            parallel_tool_calls=True,
            status="in_progress",
        )

    def _next(self) -> int:
        self.sequence += 1
        return self.sequence - 1

    def created(self) -> ResponseCreatedEvent:
        return ResponseCreatedEvent(response=self.response, sequence_number=self._next(), type="response.created")

    def feed(self, event: StreamEvent) -> list[TResponseStreamEvent]:
        self.reader.feed(event)
        if isinstance(event, _PROGRESS):
            return []
        if isinstance(event, ResponseEnd):
            self.end_event = event
            return []
        if isinstance(event, TextDelta):
            return self._text(event)
        if isinstance(event, TextSignature | MessageItem) and self.text is not None:
            self.text.append(event)
            return []
        out = self._close_text()
        if isinstance(event, ToolCall):
            out += self._call(event)
        elif isinstance(event, Thinking | RedactedThinking | ReasoningItem):
            out += self._reasoning([*self._take(), event])
        elif isinstance(event, InvalidToolCall):
            self.cut = self.cut or event.truncated
            out += self._call(event)
        else:
            self.pending.append(event)
        return out

    def end(self) -> list[TResponseStreamEvent]:
        out = self._close_text()
        if self.pending:
            out += self._reasoning(self._take())
        end = self.end_event
        cut = (self.cut or (end is not None and end.finish == "length")) and not (self.tell and self.reader.calls)
        self.response = self.response.model_copy(
            update={
                "output": list(self.output),
                "status": "incomplete" if cut else "completed",
                "usage": usage_as(None if end is None else end.tokens, _response_usage),
            }
        )
        if cut:
            self.response.incomplete_details = IncompleteDetails(reason="max_output_tokens")
            out.append(
                ResponseIncompleteEvent(
                    response=self.response, sequence_number=self._next(), type="response.incomplete"
                )
            )
        else:
            out.append(
                ResponseCompletedEvent(response=self.response, sequence_number=self._next(), type="response.completed")
            )
        return out

    def _take(self) -> list[TurnItem]:
        taken, self.pending = self.pending, []
        return taken

    def _stamp(self, items: Iterable[TurnItem]) -> dict[str, Any]:
        return {DATA_KEY: {"provider": self.provider, "items": [_encode(item) for item in items]}}

    def _added(self, item: ResponseOutputItem) -> ResponseOutputItemAddedEvent:
        return ResponseOutputItemAddedEvent(
            item=item, output_index=len(self.output), sequence_number=self._next(), type="response.output_item.added"
        )

    def _done(self, item: ResponseOutputItem) -> ResponseOutputItemDoneEvent:
        self.output.append(item)
        return ResponseOutputItemDoneEvent(
            item=item, output_index=len(self.output) - 1, sequence_number=self._next(), type="response.output_item.done"
        )

    def _text(self, delta: TextDelta) -> list[TResponseStreamEvent]:
        out: list[TResponseStreamEvent] = []
        if self.text is None:
            self.text = self._take()
            opened = ResponseOutputMessage(
                id=FAKE_RESPONSES_ID, content=[], role="assistant", type="message", status="in_progress"
            )
            out.append(self._added(opened))
            part = ResponseOutputText(text="", type="output_text", annotations=[], logprobs=[])
            out.append(
                ResponseContentPartAddedEvent(
                    content_index=0,
                    item_id=FAKE_RESPONSES_ID,
                    output_index=len(self.output),
                    part=part,
                    sequence_number=self._next(),
                    type="response.content_part.added",
                )
            )
        self.text.append(delta)
        out.append(
            ResponseTextDeltaEvent(
                content_index=0,
                delta=delta.text,
                item_id=FAKE_RESPONSES_ID,
                logprobs=[],
                output_index=len(self.output),
                sequence_number=self._next(),
                type="response.output_text.delta",
            )
        )
        return out

    def _close_text(self) -> list[TResponseStreamEvent]:
        if self.text is None:
            return []
        items, self.text = self.text, None
        text = "".join(item.text for item in items if isinstance(item, TextDelta))
        part = ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])
        message = ResponseOutputMessage(
            id=FAKE_RESPONSES_ID, content=[part], role="assistant", type="message", status="completed"
        )
        message.provider_data = self._stamp(items)  # openai's models keep extra fields
        where = {"content_index": 0, "item_id": FAKE_RESPONSES_ID, "output_index": len(self.output)}
        return [
            ResponseTextDoneEvent(
                **where, logprobs=[], text=text, sequence_number=self._next(), type="response.output_text.done"
            ),
            ResponseContentPartDoneEvent(
                **where, part=part, sequence_number=self._next(), type="response.content_part.done"
            ),
            self._done(message),
        ]

    def _call(self, call: ToolCall | InvalidToolCall) -> list[TResponseStreamEvent]:
        """A ``function_call`` item. A valid call's arguments are its input, serialized once; an
        invalid call's are a text no JSON parser reads (streamkit's message, then the raw text),
        so openai-agents refuses to run it and tells the model, asking again."""
        arguments = dumps(call.input) if isinstance(call, ToolCall) else unparseable(call)
        item = ResponseFunctionToolCall(
            id=FAKE_RESPONSES_ID,
            call_id=call_id(call),
            name=call.name,
            arguments=arguments,
            type="function_call",
            status="completed",
        )
        item.provider_data = self._stamp([*self._take(), call])
        return [
            self._added(item),
            ResponseFunctionCallArgumentsDoneEvent(
                arguments=arguments,
                item_id=FAKE_RESPONSES_ID,
                output_index=len(self.output),
                sequence_number=self._next(),
                type="response.function_call_arguments.done",
            ),
            self._done(item),
        ]

    def _reasoning(self, items: list[TurnItem]) -> list[TResponseStreamEvent]:
        """A reasoning item: the thinking text, and its signature (or redacted data) as
        ``encrypted_content``, where openai-agents' own converters look for it."""
        last = items[-1]
        content: list[Content] = []
        summary: list[Summary] = []
        secret: str | None = None
        if isinstance(last, Thinking):
            content = [Content(text=last.text, type="reasoning_text")] if last.text else []
            secret = last.signature
        elif isinstance(last, RedactedThinking):
            secret = last.data
        elif isinstance(last, ReasoningItem):
            summary = [
                Summary(text=part.get("text", ""), type="summary_text") for part in last.item.get("summary") or ()
            ]
            secret = last.encrypted_content
        item = ResponseReasoningItem(
            id=FAKE_RESPONSES_ID,
            summary=summary,
            content=content,
            encrypted_content=secret,
            type="reasoning",
            status="completed",
        )
        item.provider_data = self._stamp(items)
        return [self._added(item), self._done(item)]


def _response_usage(counts: Counts) -> ResponseUsage:
    return ResponseUsage(
        input_tokens=counts.input,
        output_tokens=counts.output,
        total_tokens=counts.total,
        input_tokens_details=InputTokensDetails(cached_tokens=counts.cache_read or 0, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=counts.reasoning or 0),
    )


def _agents_usage(usage: ResponseUsage | None) -> Usage:
    if usage is None:
        return Usage(requests=1)
    return Usage(
        requests=1,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        input_tokens_details=usage.input_tokens_details,
        output_tokens_details=usage.output_tokens_details,
    )


def _cut_message(response: Response) -> str:
    """What ``get_response`` raises on a cut, in the words openai-agents uses for a streamed one."""
    names = [
        entry["name"]
        for item in response.output
        for entry in ((getattr(item, "provider_data", None) or {}).get(DATA_KEY) or {}).get("items", ())
        if item_kind(entry) == InvalidToolCall.__name__ and entry.get("name")
    ]
    cut = f"; the call to {', '.join(names)} was cut off and did not run" if names else ""
    return f"Responses stream ended with terminal event `response.incomplete`: the output limit was reached{cut}."
