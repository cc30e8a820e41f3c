"""smolagents: ``StreamkitModel``, a ``Model`` whose streamed responses streamkit decodes.

The model sends the request itself (the shared request builder, then ``streamkit.stream``) and
hands smolagents each call whole. Two of smolagents' own paths would otherwise change a call:

- streamed, ``agglomerate_stream_deltas`` joins the deltas of each ``index`` into one call, so
  two parallel calls a provider sent at one index become one call with glued arguments; here
  every call is one delta holding its whole arguments, at an index of its own;
- a call cut off by the output limit, or with invalid JSON, would reach the tool with whatever
  ``parse_json_if_needed`` made of it. Here an invalid call never reaches smolagents as a call.
  A turn whose calls were all invalid hands smolagents no call: smolagents then asks the
  model's ``parse_tool_calls``, which raises ``InvalidCallsError``; smolagents records it as the
  step's error and tells the model on the next step, in streamkit's words. A turn with valid
  calls beside invalid ones hands smolagents the valid ones, which run; the model keeps the
  invalid ones by the valid calls' ids, and the next request adds what ``InvalidCallsError``
  says of them to the observation of those calls (a smolagents step has one error, and its
  tool outputs are lost when one of its calls fails, so they cannot go as calls).

Tools run after the model's whole message (smolagents' step runs them then), so calls are held
until the end of the stream, and text streams as it comes.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Any, cast

from smolagents.models import (
    ChatMessage,
    ChatMessageStreamDelta,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    ChatMessageToolCallStreamDelta,
    MessageRole,
    Model,
    get_clean_message_list,
    get_tool_json_schema,
    tool_role_conversions,
)
from smolagents.monitoring import TokenUsage as SmolUsage
from smolagents.tools import Tool as SmolTool

from .._client import stream
from .._errors import UsageError
from .._turn_types import StreamEvent, Turn
from .._types import InvalidToolCall, Provider, TextDelta
from ..adapters._base import call_id, dumps
from ..providers import REQUESTS
from ..providers._request import merged, settings
from ._chat import PROVIDERS, Prepared, prepare, read_tools
from ._clients import DEFAULT_TIMEOUT, Clients
from ._ending import cut_at_end
from ._invalid import InvalidCallsError
from ._openai_messages import conversation
from ._turns import Read, Reader, read

__all__ = ("InvalidCallsError", "StreamkitModel")

#: How streamkit's errors name the framework.
FRAMEWORK = "smolagents"
#: How many turns' invalid calls a model keeps, to tell the model of them beside the results.
KEPT_TURNS = 256


class StreamkitModel(Model):
    """A smolagents model for one provider's API, its streams decoded by streamkit.

    Works under ``ToolCallingAgent`` (``stream_outputs=True`` or not) and alone
    (``generate``, ``generate_stream``).

    Args:
        provider: ``"anthropic"``, ``"gemini"``, ``"mistral"``, ``"ollama"``, ``"openai_chat"``
            or ``"openai_responses"``.
        model_id: the provider's model name.
        base_url, api_key: by default the provider's usual variables (``ANTHROPIC_BASE_URL``,
            ``OPENAI_API_KEY``…), as every streamkit integration reads them.
        max_tokens: the output limit sent with each request.
        extra: more fields for the request body (``temperature``, ``thinking``…), as the
            provider names them.
        http_client: the ``httpx.Client`` to send with; by default one made at the first
            request, with ``timeout``, kept, and closed by ``close()``.
        validate_calls: check each call's input against its tool's JSON Schema.
    """

    def __init__(
        self,
        provider: str,
        model_id: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int | None = None,
        extra: dict[str, Any] | None = None,
        http_client: Any = None,
        timeout: float = DEFAULT_TIMEOUT,
        validate_calls: bool = True,
    ) -> None:
        if provider not in PROVIDERS:
            raise UsageError(f"provider={provider!r} is not one of {', '.join(PROVIDERS)}")
        super().__init__(model_id=model_id, flatten_messages_as_text=True)
        self.provider = cast(Provider, provider)
        self.base_url = base_url
        self.api_key = api_key
        self.max_tokens = max_tokens
        self.extra = dict(extra or {})
        self.validate_calls = validate_calls
        self._clients = Clients(http_client, timeout=timeout)
        self._streamed = threading.local()  # the last streamed turn, for parse_tool_calls
        self._withheld: dict[str, tuple[InvalidToolCall, ...]] = {}  # by each valid call's id of the turn
        self._lock = threading.Lock()

    def generate(
        self,
        messages: Sequence[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, str] | None = None,
        tools_to_call_from: list[SmolTool] | None = None,
        **kwargs: Any,
    ) -> ChatMessage:
        """The model's whole message; ``raw`` is the streamkit ``Turn``."""
        prepared = self._request(messages, stop_sequences, response_format, tools_to_call_from, kwargs)
        reader = Reader(self.provider, FRAMEWORK)
        for _ in self._events(prepared, reader):
            pass
        done = reader.read()
        self._keep(done)
        return _message(done)

    def generate_stream(
        self,
        messages: Sequence[ChatMessage | dict[str, Any]],
        stop_sequences: list[str] | None = None,
        response_format: dict[str, str] | None = None,
        tools_to_call_from: list[SmolTool] | None = None,
        **kwargs: Any,
    ) -> Generator[ChatMessageStreamDelta]:
        """Text as it comes; then each valid call as one delta at an index of its own, and the usage."""
        prepared = self._request(messages, stop_sequences, response_format, tools_to_call_from, kwargs)
        reader = Reader(self.provider, FRAMEWORK)
        for event in self._events(prepared, reader):
            if isinstance(event, TextDelta) and event.text:
                yield ChatMessageStreamDelta(content=event.text)
        done = reader.read()
        self._streamed.turn = done.turn
        self._keep(done)
        message = _message(done)
        for index, call in enumerate(message.tool_calls or ()):
            function = ChatMessageToolCallFunction(name=call.function.name, arguments=dumps(call.function.arguments))
            entry = ChatMessageToolCallStreamDelta(index=index, id=call.id, type="function", function=function)
            yield ChatMessageStreamDelta(tool_calls=[entry])
        if message.token_usage is not None:
            yield ChatMessageStreamDelta(token_usage=message.token_usage)

    def parse_tool_calls(self, message: ChatMessage) -> ChatMessage:
        """Raise ``InvalidCallsError`` for a turn whose calls were all invalid; otherwise smolagents'
        own reading of calls written as text."""
        turn = message.raw if isinstance(message.raw, Turn) else getattr(self._streamed, "turn", None)
        self._streamed.turn = None
        done = None if turn is None else read(turn, FRAMEWORK)
        if done is not None and done.invalid and not done.valid:
            raise InvalidCallsError(done.invalid)
        parsed: ChatMessage = super().parse_tool_calls(message)
        return parsed

    def close(self) -> None:
        """Close the HTTP client the model made (one given stays open)."""
        self._clients.close()

    def _keep(self, done: Read) -> None:
        """Keep the invalid calls of a turn that also had valid ones, by the valid calls' ids."""
        if not (done.invalid and done.valid):
            return
        with self._lock:
            for call in done.valid:
                self._withheld[call_id(call)] = done.invalid
            while len(self._withheld) > KEPT_TURNS:
                del self._withheld[next(iter(self._withheld))]

    def _told(self, messages: Sequence[ChatMessage | dict[str, Any]]) -> list[ChatMessage | dict[str, Any]]:
        """``messages`` with the observation of each turn that had invalid calls beside its valid
        ones telling of them, in ``InvalidCallsError``'s words (smolagents' memory is left as it is)."""
        out = list(messages)
        for position, message in enumerate(out[:-1]):
            if _role(message) != MessageRole.TOOL_CALL or _role(out[position + 1]) != MessageRole.TOOL_RESPONSE:
                continue
            with self._lock:
                kept = [self._withheld[ident] for ident in _called(_text(message), self._withheld)]
            invalid = {call_id(call): call for calls in kept if calls for call in calls}
            if invalid:
                told = f"{_text(out[position + 1])}\n{InvalidCallsError(list(invalid.values()))}"
                out[position + 1] = ChatMessage(
                    role=MessageRole.TOOL_RESPONSE, content=[{"type": "text", "text": told}]
                )
        return out

    def _events(self, prepared: Prepared, reader: Reader) -> Iterator[StreamEvent]:
        with stream(self._clients.sync(), self.provider, **prepared.arguments()) as events:
            for event in cut_at_end(events):
                reader.feed(event)
                yield event

    def _request(
        self,
        messages: Sequence[ChatMessage | dict[str, Any]],
        stop: list[str] | None,
        response_format: dict[str, str] | None,
        tools: list[SmolTool] | None,
        kwargs: dict[str, Any],
    ) -> Prepared:
        if response_format is not None:
            raise UsageError("response_format is not supported; pass the provider's field in extra=")
        given = get_clean_message_list(
            self._told(messages), role_conversions=tool_role_conversions, flatten_messages_as_text=True
        )
        talk = conversation(self.provider, given)
        offered = read_tools([get_tool_json_schema(tool) for tool in tools or ()])
        extra = {**self.extra, **kwargs}
        prepared = prepare(self, self.provider, str(self.model_id), talk, offered, self.api_key, self.max_tokens, extra)
        if stop and self.supports_stop_parameter:
            _add_stop(self.provider, prepared, stop)
        return prepared


def _add_stop(provider: str, prepared: Prepared, stop: list[str]) -> None:
    """smolagents' stop sequences in the provider's field (its ``SETTINGS``); the Responses API
    has none to take them."""
    fields, _ = settings(REQUESTS[provider], {"stop": stop})
    body = prepared.request.body
    for key, value in merged(body, fields).items():
        body[key] = value


def _role(message: ChatMessage | dict[str, Any]) -> Any:
    return message.get("role") if isinstance(message, dict) else message.role


def _text(message: ChatMessage | dict[str, Any]) -> str:
    """A message's text: smolagents writes its tool calls and observations as text parts."""
    content = message.get("content") if isinstance(message, dict) else message.content
    if isinstance(content, str) or content is None:
        return content or ""
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def _called(text: str, known: Iterable[str]) -> list[str]:
    """The ids among ``known`` that a smolagents ``Calling tools:`` message lists: it writes the
    ``str`` of each call's dict, so each id stands there as its ``repr`` (the text is never
    evaluated: the model wrote the arguments in it)."""
    return [ident for ident in known if f"'id': {ident!r}" in text]


def _message(done: Read) -> ChatMessage:
    """The turn as smolagents' message: its text and valid calls; no call at all when every call
    of the turn was invalid (``parse_tool_calls`` then raises)."""
    calls = [
        ChatMessageToolCall(
            function=ChatMessageToolCallFunction(name=call.name, arguments=dict(call.input)),
            id=call_id(call),
            type="function",
        )
        for call in done.valid
    ]
    usage = done.usage
    return ChatMessage(
        role=MessageRole.ASSISTANT,
        content=done.turn.text,
        tool_calls=calls or None,
        raw=done.turn,
        token_usage=None if usage is None else SmolUsage(input_tokens=usage.input, output_tokens=usage.output),
    )
