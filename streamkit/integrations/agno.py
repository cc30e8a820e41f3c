"""agno: ``StreamkitModel``, a ``Model`` whose streamed responses streamkit decodes.

The model sends the request itself (the shared request builder, then ``streamkit.stream`` or
``streamkit.astream``) and hands agno each call whole, as one tool call of its own: agno's base
model keeps the tool calls of a stream as they come (its OpenAI model joins them by ``index``,
taking a missing one as 0, which glues parallel calls together); here there is nothing to join.

An invalid call (cut off by the output limit, invalid JSON, failing its tool's schema, a tool
not offered) stays in the assistant message's ``tool_calls`` with its arguments as received,
so the history the provider gets back is the one it sent, and carries streamkit's error for it
under ``ERROR_KEY``. agno asks the model which calls to run (``get_function_calls_to_run``):
never such a call; it is answered with a tool message holding that error instead, the way agno
answers a call it cannot parse, and the model reads it on the next request. The valid calls of
the same turn run.

The whole ``streamkit.Turn`` (reasoning and its signatures, Gemini's thought signatures,
provider state) rides on the assistant message's ``provider_data``, and goes back to the
provider as received. Tools run after the model's whole message, as agno runs them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from agno.metrics import MessageMetrics
from agno.models.base import Model
from agno.models.message import Message
from agno.models.response import ModelResponse
from agno.tools.function import Function, FunctionCall

from .._client import astream, stream
from .._errors import UsageError
from .._turn_types import StreamEvent, Thinking, Turn
from .._types import InvalidToolCall, Provider, ResponseEnd, TextDelta, ToolCall
from ..adapters._base import call_id, dumps, error_payload
from ._chat import PROVIDERS, Prepared, prepare, read_tools
from ._clients import DEFAULT_TIMEOUT, Clients
from ._ending import acut_at_end, cut_at_end
from ._openai_messages import conversation
from ._turn_json import turn_from_json, turn_json
from ._turns import Read, Reader, Usage, read

__all__ = ("ERROR_KEY", "TURN_KEY", "StreamkitModel")

#: The key of an invalid call's entry in ``Message.tool_calls`` that holds streamkit's error for it.
ERROR_KEY = "streamkit_error"
#: The key of ``Message.provider_data`` that holds the streamkit ``Turn``, as JSON.
TURN_KEY = "streamkit_turn"
#: How streamkit's errors name the framework.
FRAMEWORK = "agno"


@dataclass
class StreamkitModel(Model):
    """An agno model for one provider's API, its streams decoded by streamkit.

    Works under ``Agent`` with tools, ``run``/``arun``, with ``stream=True`` or not.

    Attributes:
        id: the provider's model name.
        provider: ``"anthropic"``, ``"gemini"``, ``"mistral"``, ``"ollama"``, ``"openai_chat"``
            or ``"openai_responses"``.
        base_url, api_key: by default the provider's usual variables (``ANTHROPIC_BASE_URL``,
            ``OPENAI_API_KEY``…), as every streamkit integration reads them.
        max_tokens: the output limit sent with each request.
        extra: more fields for the request body (``temperature``, ``thinking``…), as the
            provider names them.
        http_client, http_async_client: the ``httpx`` ``Client`` and ``AsyncClient`` to send
            with; by default the model makes one at its first request, with ``timeout``, and
            keeps it.
        validate_calls: check each call's input against its tool's JSON Schema.
    """

    id: str = ""
    name: str | None = "streamkit"
    provider: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    max_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    http_client: Any = None
    http_async_client: Any = None
    timeout: float = DEFAULT_TIMEOUT
    validate_calls: bool = True

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise UsageError(f"provider={self.provider!r} is not one of {', '.join(PROVIDERS)}")
        if not self.id:
            raise UsageError("id, the provider's model name, is required")
        super().__post_init__()  # type: ignore[no-untyped-call]  # agno's own is unannotated
        self._clients = Clients(self.http_client, self.http_async_client, timeout=self.timeout)

    # -- agno's model interface -----------------------------------------------------------------

    def invoke(self, messages: list[Message], assistant_message: Message, **given: Any) -> ModelResponse:
        """The whole response, unstreamed."""
        call, reader = self._prepared(messages, given), self._reader()
        with stream(self._clients.sync(), self._slug, **call.arguments()) as events:
            for event in cut_at_end(events):
                reader.feed(event)
        return self._parse_provider_response(reader.read())

    async def ainvoke(self, messages: list[Message], assistant_message: Message, **given: Any) -> ModelResponse:
        call, reader = self._prepared(messages, given), self._reader()
        async with astream(self._clients.async_(), self._slug, **call.arguments()) as events:
            async for event in acut_at_end(events):
                reader.feed(event)
        return self._parse_provider_response(reader.read())

    def invoke_stream(
        self, messages: list[Message], assistant_message: Message, **given: Any
    ) -> Iterator[ModelResponse]:
        """Text and reasoning as they come, each call whole at its end marker, then the turn."""
        call, reader = self._prepared(messages, given), self._reader()
        with stream(self._clients.sync(), self._slug, **call.arguments()) as events:
            for event in cut_at_end(events):
                yield from self._deltas(event, reader)

    async def ainvoke_stream(
        self, messages: list[Message], assistant_message: Message, **given: Any
    ) -> AsyncIterator[ModelResponse]:
        call, reader = self._prepared(messages, given), self._reader()
        async with astream(self._clients.async_(), self._slug, **call.arguments()) as events:
            async for event in acut_at_end(events):
                for delta in self._deltas(event, reader):
                    yield delta

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        """A whole turn, read, as agno's response: text, reasoning, every call, the turn, the usage."""
        done = cast(Read, response)
        turn = done.turn
        parsed = ModelResponse(role="assistant", content=turn.text or None)
        reasoning = "".join(item.text for item in turn.items if isinstance(item, Thinking))
        parsed.reasoning_content = reasoning or None
        parsed.tool_calls = [_entry(call) for call in done.calls]
        parsed.provider_data = {TURN_KEY: turn_json(turn)}
        parsed.response_usage = _metrics(done.usage)
        return parsed

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        """One event, read already, as agno's delta: text, reasoning or one whole call (nothing
        else has a place)."""
        event = cast(StreamEvent, response)
        delta = ModelResponse(role="assistant")
        if isinstance(event, TextDelta):
            delta.content = event.text
        elif isinstance(event, Thinking):
            delta.reasoning_content = event.text
        elif isinstance(event, ToolCall | InvalidToolCall):
            delta.tool_calls = [_entry(event)]
        return delta

    def get_function_calls_to_run(
        self,
        assistant_message: Message,
        messages: list[Message],
        functions: dict[str, Function] | None = None,
    ) -> list[FunctionCall]:
        """agno's calls to run, without the invalid ones: each is answered with its error instead."""
        valid = []
        for entry in assistant_message.tool_calls or ():
            error = entry.get(ERROR_KEY)
            if error is None:
                valid.append(entry)
                continue
            answer = Message(
                role=self.tool_message_role,
                tool_call_id=entry.get("id"),
                tool_name=entry["function"]["name"],
                content=dumps(error),
                tool_call_error=True,
            )
            messages.append(answer)
        kept = assistant_message.model_copy(update={"tool_calls": valid or None})
        calls: list[FunctionCall] = super().get_function_calls_to_run(kept, messages, functions)
        return calls

    # -- requests -------------------------------------------------------------------------------

    @property
    def _slug(self) -> Provider:
        return cast(Provider, self.provider)

    def _reader(self) -> Reader:
        return Reader(self._slug, FRAMEWORK)

    def _prepared(self, messages: list[Message], given: Mapping[str, Any]) -> Prepared:
        if given.get("response_format") is not None:
            raise UsageError("response_format is not supported; pass the provider's field in extra=")
        if given.get("tool_choice") not in (None, "auto"):
            raise UsageError(
                f"tool_choice={given['tool_choice']!r} is not supported; pass the provider's field in extra="
            )
        for position, message in enumerate(messages):
            if message.images or message.audio or message.videos or message.files:
                raise UsageError(f"messages[{position}] carries media; streamkit sends text only")
        tools = read_tools(given.get("tools") or ())
        talk = conversation(self._slug, messages, _stored)
        return prepare(self, self._slug, self.id, talk, tools, self.api_key, self.max_tokens, self.extra)

    def _deltas(self, event: StreamEvent, reader: Reader) -> Iterator[ModelResponse]:
        reader.feed(event)
        if isinstance(event, ResponseEnd):  # the turn, for the next request, and the usage
            done = reader.read()
            yield ModelResponse(provider_data={TURN_KEY: turn_json(done.turn)}, response_usage=_metrics(done.usage))
            return
        delta = self._parse_provider_response_delta(event)
        if delta.content or delta.reasoning_content or delta.tool_calls:
            yield delta

    def close(self) -> None:
        """Close the blocking HTTP client the model made (one given stays open)."""
        self._clients.close()

    async def aclose(self) -> None:
        """Close the HTTP clients the model made, even when cancelled (the ones given stay open)."""
        await self._clients.aclose()


def _entry(call: ToolCall | InvalidToolCall) -> dict[str, Any]:
    """A call as agno's tool call: a valid one's input as JSON; an invalid one's arguments as
    received, with streamkit's error under ``ERROR_KEY``."""
    arguments = dumps(call.input) if isinstance(call, ToolCall) else call.raw
    entry: dict[str, Any] = {
        "id": call_id(call),
        "type": "function",
        "function": {"name": call.name or "", "arguments": arguments},
    }
    if isinstance(call, InvalidToolCall):
        entry[ERROR_KEY] = error_payload(call)
    return entry


def _stored(message: Mapping[str, Any]) -> Turn | None:
    """The turn an assistant message was made from, while its calls are still the turn's."""
    data = (message.get("provider_data") or {}).get(TURN_KEY)
    if data is None:
        return None
    turn = turn_from_json(data, f"provider_data[{TURN_KEY!r}]")
    ids = [call_id(call) for call in read(turn, FRAMEWORK).calls]
    return turn if ids == [entry.get("id") for entry in message.get("tool_calls") or ()] else None


def _metrics(usage: Usage | None) -> MessageMetrics | None:
    if usage is None:
        return None
    metrics = MessageMetrics()
    metrics.input_tokens = usage.input
    metrics.output_tokens = usage.output
    metrics.total_tokens = usage.total
    metrics.cache_read_tokens = usage.cache_read or 0
    metrics.reasoning_tokens = usage.reasoning or 0
    return metrics
