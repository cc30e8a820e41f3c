"""streamkit as a LiteLLM provider: ``streamkit/<provider>/<model>``, every call whole.

::

    streamkit.integrations.litellm.register()
    response = await litellm.acompletion(model="streamkit/anthropic/claude-sonnet-5-5", messages=..., tools=...)

``register`` adds a ``CustomLLM`` to ``litellm.custom_provider_map`` under the name
``streamkit``. For a model ``streamkit/<provider>/<model>`` (``provider`` one of
``PROVIDERS``), it sends the request itself (``_chat.build`` from LiteLLM's OpenAI-format
messages and tools, ``streamkit.astream`` with LiteLLM's ``api_base`` and ``api_key``), so
every framework that runs on LiteLLM gets streamkit's calls:

- streamed, each call is one chunk holding its whole arguments, yielded the moment its end
  marker arrives, each at an ``index`` of its own (parallel calls the provider sent at one
  index, or without one, stay apart); never a fragment;
- an invalid call (cut off by the output limit, invalid JSON, not matching its tool's schema)
  never comes out in ``tool_calls``: it is withheld, and described, with the error streamkit
  tells a model (``error_payload``), under ``provider_specific_fields["streamkit_invalid_tool_calls"]``:
  streamed, all of them at once in ``choices[0].delta.provider_specific_fields`` of the chunk
  just before the finish, where ``litellm.stream_chunk_builder`` finds them (it keeps one value
  per key) and puts them on its message's; unstreamed, on ``choices[0].message``'s. ``invalid_calls``
  reads them from any of the three; a cut turn ends with ``finish_reason="length"``. ``assistant_turn``
  writes the messages that send such a turn back, each invalid call answered with its error;
- for the OpenAI Agents SDK's ``LitellmModel`` (its ``User-Agent``), which reads nothing but
  ``tool_calls``, an invalid call goes out among the calls instead, with arguments no JSON
  parser reads, so that the Agents SDK answers it and asks the model again; the next request
  sends it back as received, answered with streamkit's error (``Kept``);
- reasoning comes as ``reasoning_content`` and LiteLLM's ``thinking_blocks`` (Anthropic's
  with their signatures); an assistant message's ``thinking_blocks`` go back to the provider as
  received, and a Gemini call's signature rides on its ``provider_specific_fields["thought_signature"]``.

LiteLLM fetches its model cost map from the network when it is imported, unless
``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set first: set it (or ``LITELLM_OFFLINE_MODE=true``)
where there is no network.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator, Mapping, Sequence
from typing import Any, cast

import anyio
import httpx
import litellm
from litellm.constants import (
    DEFAULT_REASONING_EFFORT_HIGH_THINKING_BUDGET,
    DEFAULT_REASONING_EFFORT_LOW_THINKING_BUDGET,
    DEFAULT_REASONING_EFFORT_MEDIUM_THINKING_BUDGET,
)
from litellm.llms.custom_llm import CustomLLM
from litellm.types.utils import (
    Choices,
    Delta,
    Message,
    ModelResponse,
    ModelResponseStream,
    StreamingChoices,
    Usage,
)

from .._client import astream, stream
from .._errors import HTTPStatusError, TransportError, UsageError
from .._turn_types import RedactedThinking, StreamEvent, Thinking
from .._types import InvalidToolCall, Provider, ResponseEnd, TextDelta, ToolCall
from ..adapters._base import call_id, dumps, error_payload
from ..providers import REQUESTS
from ..providers._request import merged, settings
from ._chat import PROVIDERS, Request, build, read_tools
from ._clients import DEFAULT_TIMEOUT, Clients
from ._ending import acut_at_end, cut_at_end
from ._invalid import InvalidCallsError, unparseable
from ._openai_messages import conversation, plain
from ._turns import Reader, usage_as
from ._turns import Usage as Counts

__all__ = ("INVALID_CALLS", "NAME", "PROVIDERS", "StreamkitLLM", "assistant_turn", "invalid_calls", "register")

#: The provider name models are registered under: ``streamkit/<provider>/<model>``.
NAME = "streamkit"
#: The ``provider_specific_fields`` key under which withheld invalid calls are described.
INVALID_CALLS = "streamkit_invalid_tool_calls"
#: How streamkit's errors name the framework.
FRAMEWORK = "LiteLLM"

#: LiteLLM's own budgets for ``reasoning_effort`` on Anthropic models.
_THINKING_BUDGETS = {
    "low": DEFAULT_REASONING_EFFORT_LOW_THINKING_BUDGET,
    "medium": DEFAULT_REASONING_EFFORT_MEDIUM_THINKING_BUDGET,
    "high": DEFAULT_REASONING_EFFORT_HIGH_THINKING_BUDGET,
}
#: Parameters that change nothing here: the request always streams and asks for usage.
_SETTLED = frozenset({"stream", "stream_options"})
#: The first wait before a request is sent again, and the longest (seconds).
_FIRST_WAIT, _LONGEST_WAIT = 0.5, 8.0
#: The frameworks that take invalid calls their own way (``_Output``), by the start of the
#: ``User-Agent`` they send each request with: the OpenAI Agents SDK's ``LitellmModel``
#: (``Agents/Python <version>``) and DSPy (``DSPy/<version>``).
AGENTS_SDK, DSPY = "agents", "dspy"
_CALLERS = {"agents/python ": AGENTS_SDK, "dspy/": DSPY}
#: How many invalid calls a handler keeps, for the Agents SDK's next requests.
KEPT_CALLS = 256
#: OpenAI's finish reasons for streamkit's ``ResponseEnd.finish`` (an error or an unknown end is a stop).
_FINISHES = {"tool_calls": "tool_calls", "length": "length", "content_filter": "content_filter"}


def register() -> StreamkitLLM:
    """Make ``streamkit/<provider>/<model>`` a LiteLLM model; registering again changes nothing."""
    for item in litellm.custom_provider_map:
        handler = item["custom_handler"]
        if item["provider"] == NAME and isinstance(handler, StreamkitLLM):
            return handler
    made = StreamkitLLM()
    litellm.custom_provider_map.append({"provider": NAME, "custom_handler": made})
    return made


class _Call:
    """One LiteLLM call, read from the arguments LiteLLM gives a ``CustomLLM``: the provider, the
    request to send, the tools to validate against, and the client and timeout to send with."""

    def __init__(self, given: Mapping[str, Any], kept: Kept | None = None) -> None:
        provider, _, name = given["model"].partition("/")
        if provider not in PROVIDERS or not name:
            raise UsageError(
                f"a streamkit model is streamkit/<provider>/<model>, the provider one of {', '.join(PROVIDERS)}; "
                f"got streamkit/{given['model']}"
            )
        optional = given.get("optional_params") or {}
        params = {key: value for key, value in optional.items() if value is not None and key not in _SETTLED}
        tools = list(params.pop("tools", None) or ())
        retries = int(params.pop("max_retries", 0))
        limit = params.pop("max_completion_tokens", None)
        limit = params.pop("max_tokens", None) if limit is None else limit
        extra = _translated(provider, params)
        system, entries = conversation(provider, given["messages"], withheld=None if kept is None else kept.call_of)
        request = build(  # without api_key and api_base, the provider's own variables (its decoder's)
            provider,
            name,
            entries,
            system=system,
            tools=read_tools(tools),
            base_url=given.get("api_base") or None,
            api_key=given.get("api_key") or None,
            max_tokens=limit,
            extra=extra,
        )
        self.model = given["model"]
        self.provider = cast(Provider, provider)
        #: The framework that sent the request, when it takes invalid calls its own way (``_Output``).
        self.caller = _caller(given.get("headers"))
        self.request = Request(request.url, {**request.headers, **(given.get("headers") or {})}, request.body)
        self.tools = tools or None
        self.client = given.get("client")
        self.timeout = given.get("timeout")
        self.retries = retries


class Kept:
    """The invalid calls that went out among the calls (``_Output.invalid_as_calls``), by id, the
    latest ``KEPT_CALLS``: the history the Agents SDK sends back holds such a call as it went out,
    and its own words for it; the call goes back as received instead, answered by streamkit's
    error for it."""

    def __init__(self) -> None:
        self._calls: dict[str, InvalidToolCall] = {}
        self._lock = threading.Lock()

    def keep(self, output: _Output) -> None:
        if not output.invalid_as_calls:
            return
        with self._lock:
            for call in output.reader.calls:
                if isinstance(call, InvalidToolCall):
                    self._calls[call_id(call)] = call
            while len(self._calls) > KEPT_CALLS:
                del self._calls[next(iter(self._calls))]

    def call_of(self, entry: Mapping[str, Any]) -> InvalidToolCall | None:
        """The kept call ``entry`` (a call of an assistant message) went out for, while it reads as it went out."""
        with self._lock:
            call = self._calls.get(entry.get("id") or "")
        if call is None or _whole(call, 0)["function"] != entry.get("function"):
            return None
        return call


def _caller(headers: Any) -> str | None:
    """The framework that sent the request (``AGENTS_SDK``, ``DSPY``), by its ``User-Agent``; else ``None``."""
    if not isinstance(headers, Mapping):
        return None
    agent = next((value for key, value in headers.items() if str(key).lower() == "user-agent"), None)
    if not isinstance(agent, str):
        return None
    return next((name for start, name in _CALLERS.items() if agent.lower().startswith(start)), None)


def _translated(provider: str, params: dict[str, Any]) -> dict[str, Any]:
    """LiteLLM's parameters as fields of the provider's body (each provider's ``SETTINGS`` and
    ``effort``); ``extra_body`` merged last, as given."""
    extra_body = params.pop("extra_body", None) or {}
    wire = REQUESTS[provider]
    effort = None if "reasoning_effort" in wire.SETTINGS else params.pop("reasoning_effort", None)
    body, left = settings(wire, params)
    if effort is not None:
        written = wire.effort(effort, _THINKING_BUDGETS)
        if written is None:
            raise UsageError(
                f"streamkit/{provider} does not translate reasoning_effort={effort!r}; "
                "give the provider's own field in extra_body"
            )
        body = merged(body, written)
    if left:
        raise UsageError(
            f"streamkit/{provider} does not translate {', '.join(sorted(left))}; "
            "give the provider's own field in extra_body"
        )
    return merged(body, extra_body)


# -- streamkit's events out, LiteLLM's chunks and message ----------------------------------------


class _Output:
    """One response, as LiteLLM's deltas: each event the moment it comes, the end kept for last
    with the invalid calls (``invalid``), which go together on the last chunk.

    For the OpenAI Agents SDK's ``LitellmModel``, which reads nothing but ``tool_calls``, an
    invalid call goes out among the calls instead (``invalid_as_calls``), its arguments a text no
    JSON parser reads (streamkit's message, then the raw text): the Agents SDK's own path for a
    call it cannot parse answers it and asks the model again. For DSPy, which reads the text and
    the calls only and has no loop to tell the model, a turn whose calls were all invalid has as
    its text what ``InvalidCallsError`` says of them (``told``), so the error DSPy raises for a
    turn without its output names each call and why it did not come.
    """

    def __init__(self, provider: str, caller: str | None = None) -> None:
        self.reader = Reader(provider, FRAMEWORK)
        self.invalid_as_calls = caller == AGENTS_SDK
        self.told_in_text = caller == DSPY
        self.end: ResponseEnd | None = None
        self.invalid: list[dict[str, Any]] = []
        self.calls = 0  # the calls out in ``tool_calls`` so far: the next one's index

    def delta(self, event: StreamEvent) -> dict[str, Any] | None:
        self.reader.feed(event)
        if isinstance(event, TextDelta):
            return {"content": event.text} if event.text else None
        if isinstance(event, Thinking):
            block: dict[str, Any] = {"type": "thinking", "thinking": event.text}
            if event.signature is not None:
                block["signature"] = event.signature
            return {"reasoning_content": event.text, "thinking_blocks": [block]}
        if isinstance(event, RedactedThinking):
            return {"thinking_blocks": [{"type": "redacted_thinking", "data": event.data}]}
        if isinstance(event, ToolCall) or (isinstance(event, InvalidToolCall) and self.invalid_as_calls):
            self.calls += 1
            return {"tool_calls": [_whole(event, self.calls - 1)]}
        if isinstance(event, InvalidToolCall):
            described = {
                "id": call_id(event),
                "name": event.name,
                "arguments": event.raw,
                "error": error_payload(event),
                "position": self.reader.position,  # its place among all of the turn's calls
            }
            self.invalid.append(described)
        if isinstance(event, ResponseEnd):
            self.end = event
        return None  # state LiteLLM's messages have no place for

    @property
    def told(self) -> str | None:
        """The text that tells DSPy of a turn whose calls were all invalid (``told_in_text``)."""
        calls = self.reader.calls
        if not self.told_in_text or not calls or self.reader.valid:
            return None
        return str(InvalidCallsError([call for call in calls if isinstance(call, InvalidToolCall)]))

    @property
    def finish(self) -> str:
        finish = "stop" if self.end is None else _FINISHES.get(self.end.finish, "stop")
        return "stop" if finish == "tool_calls" and not self.calls else finish

    @property
    def usage(self) -> Usage | None:
        return usage_as(None if self.end is None else self.end.tokens, _litellm_usage)

    def chunks(self, event: StreamEvent) -> Iterator[ModelResponseStream]:
        """The chunks for ``event``: its delta, and at the end the usage, then the finish."""
        delta = self.delta(event)
        if delta is not None:
            yield self._chunk(Delta(**delta))
        if isinstance(event, ResponseEnd):
            usage = self.usage
            if self.told is not None:
                yield self._chunk(Delta(content=self.told))
            if self.invalid:  # on a chunk of their own: LiteLLM empties the finish chunk's delta
                yield self._chunk(Delta(provider_specific_fields={INVALID_CALLS: self.invalid}))
            if usage is not None:  # LiteLLM reads usage only from a chunk before the finish, of no choice
                yield ModelResponseStream(choices=[], usage=usage)
            yield self._chunk(Delta(), finish_reason=self.finish)

    def _chunk(
        self, delta: Delta, *, usage: Usage | None = None, finish_reason: str | None = None
    ) -> ModelResponseStream:
        choice = StreamingChoices(index=0, delta=delta, finish_reason=finish_reason)
        return ModelResponseStream(choices=[choice], usage=usage)


def _litellm_usage(counts: Counts) -> Usage:
    return Usage(
        prompt_tokens=counts.input,
        completion_tokens=counts.output,
        total_tokens=counts.total,
        reasoning_tokens=counts.reasoning,
    )


def _whole(call: ToolCall | InvalidToolCall, index: int) -> dict[str, Any]:
    arguments = dumps(call.input) if isinstance(call, ToolCall) else unparseable(call)
    entry: dict[str, Any] = {
        "index": index,
        "id": call_id(call),
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }
    signature = call.state.get("thoughtSignature")
    if signature is not None:
        entry["provider_specific_fields"] = {"thought_signature": signature}
    return entry


def _message(output: _Output, events: Sequence[StreamEvent], model_response: ModelResponse) -> ModelResponse:
    """The whole response, unstreamed: the deltas of every event joined into one message."""
    text: list[str] = []
    reasoning: list[str] = []
    blocks: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for event in events:
        delta = output.delta(event) or {}
        text.append(delta.get("content", ""))
        reasoning.append(delta.get("reasoning_content", ""))
        blocks.extend(delta.get("thinking_blocks", ()))
        calls.extend(
            {key: value for key, value in call.items() if key != "index"} for call in delta.get("tool_calls", ())
        )
    text.append(output.told or "")
    message = Message(
        content="".join(text) or None,
        tool_calls=calls or None,
        reasoning_content="".join(reasoning) or None,
        thinking_blocks=cast(Any, blocks) or None,  # LiteLLM types them as TypedDicts
        provider_specific_fields={INVALID_CALLS: output.invalid} if output.invalid else None,
    )
    model_response.choices = [Choices(finish_reason=output.finish, index=0, message=message)]
    usage = output.usage
    if usage is not None:
        model_response.usage = usage
    return model_response


# -- the next turn ------------------------------------------------------------------------------


def invalid_calls(message: Any) -> list[dict[str, Any]]:
    """The invalid calls withheld from a message (a LiteLLM ``Message``, its dict, or a streamed
    chunk's ``Delta``): each ``{"id", "name", "arguments", "error", "position"}``, in the order they ended."""
    fields = plain(message).get("provider_specific_fields") or {}
    return list(fields.get(INVALID_CALLS) or ())


def assistant_turn(message: Any) -> list[dict[str, Any]]:
    """The messages that send an assistant turn back: the assistant message with every call it
    made (each invalid one with its arguments as received), then a ``tool`` message answering each
    invalid call with streamkit's error, so the model is told and can try again. The results of
    the calls that ran follow them, as ``tool`` messages the caller appends.

    ``message`` is the response's message: ``litellm.stream_chunk_builder(chunks)``'s, or the
    unstreamed one.
    """
    given = plain(message)
    withheld = invalid_calls(given)
    fields = {
        key: value for key, value in (given.get("provider_specific_fields") or {}).items() if key != INVALID_CALLS
    }
    calls = list(given.get("tool_calls") or ())
    for call in withheld:  # each back in its place among the calls, as the model made them
        entry = {
            "id": call["id"],
            "type": "function",
            "function": {"name": call["name"], "arguments": call["arguments"]},
        }
        calls.insert(call.get("position", len(calls)), entry)
    kept = {key: value for key, value in given.items() if key not in ("provider_specific_fields", "function_call")}
    assistant = {**kept, "role": "assistant", "tool_calls": calls or None}
    if fields:
        assistant["provider_specific_fields"] = fields
    errors = [{"role": "tool", "tool_call_id": call["id"], "content": dumps(call["error"])} for call in withheld]
    return [assistant, *errors]


# -- the provider -------------------------------------------------------------------------------


def _given(call: _Call, kind: type[Any]) -> Any:
    """The caller's client of ``kind`` (given as it is, or held by LiteLLM's handler), if any."""
    given = getattr(call.client, "client", call.client)
    return given if isinstance(given, kind) else None


async def _aevents(call: _Call, http: httpx.AsyncClient) -> AsyncGenerator[StreamEvent, None]:
    request = call.request
    for attempt in range(call.retries + 1):
        started = False
        try:
            async with astream(
                http, call.provider, request.url, json=request.body, headers=request.headers, tools=call.tools
            ) as events:
                async for event in acut_at_end(events):
                    started = True
                    yield event
            return
        except TransportError as error:
            wait = _retry_wait(error, attempt, call.retries, started)
        await anyio.sleep(wait)


def _events(call: _Call, http: httpx.Client) -> Generator[StreamEvent, None, None]:
    request = call.request
    for attempt in range(call.retries + 1):
        started = False
        try:
            with stream(
                http, call.provider, request.url, json=request.body, headers=request.headers, tools=call.tools
            ) as events:
                for event in cut_at_end(events):
                    started = True
                    yield event
            return
        except TransportError as error:
            wait = _retry_wait(error, attempt, call.retries, started)
        time.sleep(wait)


def _retry_wait(error: TransportError, attempt: int, retries: int, started: bool) -> float:
    """The seconds to wait before sending again, or ``error`` raised: LiteLLM's ``max_retries``
    (``num_retries``) resends a request that failed before its response began, on a connection
    error or a status worth retrying (429, 5xx...), waiting what the server asked or 0.5 s,
    doubling."""
    retryable = not isinstance(error, HTTPStatusError) or error.retryable
    if started or attempt >= retries or not retryable:
        raise error
    asked = error.retry_after if isinstance(error, HTTPStatusError) else None
    return asked if asked is not None else min(_FIRST_WAIT * 2**attempt, _LONGEST_WAIT)


class StreamkitLLM(CustomLLM):
    """The ``CustomLLM`` behind ``streamkit/<provider>/<model>``: ``register()`` installs it.

    LiteLLM passes its arguments by name; each method reads the ones it needs (``_Call``).
    Streamed, it yields LiteLLM's own ``ModelResponseStream`` chunks, which LiteLLM's stream
    wrapper passes on as they are: unlike its ``GenericStreamingChunk``, they carry
    ``reasoning_content`` and ``thinking_blocks``.
    """

    def __init__(self) -> None:
        super().__init__()
        self._clients: dict[tuple[str, str], Clients] = {}
        self._lock = threading.Lock()
        self._kept = Kept()

    def completion(self, *args: Any, **kwargs: Any) -> ModelResponse:
        call = _Call(kwargs, self._kept)
        output = _Output(call.provider, call.caller)
        response = _message(output, list(_events(call, self._sync(call))), kwargs["model_response"])
        self._kept.keep(output)
        return response

    async def acompletion(self, *args: Any, **kwargs: Any) -> ModelResponse:
        call = _Call(kwargs, self._kept)
        output = _Output(call.provider, call.caller)
        events = [event async for event in _aevents(call, self._async(call))]
        response = _message(output, events, kwargs["model_response"])
        self._kept.keep(output)
        return response

    def streaming(self, *args: Any, **kwargs: Any) -> Iterator[ModelResponseStream]:
        call = _Call(kwargs, self._kept)
        output = _Output(call.provider, call.caller)
        with contextlib.closing(_events(call, self._sync(call))) as events:  # closed when a chunk fails, too
            for event in events:
                chunks = list(output.chunks(event))
                if isinstance(event, ResponseEnd):
                    self._kept.keep(output)  # before the last chunks: the next request may follow them
                yield from chunks

    async def astreaming(  # type: ignore[override]  # LiteLLM's own annotation says a coroutine
        self, *args: Any, **kwargs: Any
    ) -> AsyncIterator[ModelResponseStream]:
        call = _Call(kwargs, self._kept)
        output = _Output(call.provider, call.caller)
        async with contextlib.aclosing(_aevents(call, self._async(call))) as events:  # closed when a chunk fails
            async for event in events:
                chunks = list(output.chunks(event))
                if isinstance(event, ResponseEnd):
                    self._kept.keep(output)  # before the last chunks: the next request may follow them
                for chunk in chunks:
                    yield chunk

    async def aclose(self) -> None:
        """Close the clients made for the models, even when cancelled (a client given stays open)."""
        with self._lock:
            made, self._clients = list(self._clients.values()), {}
        for clients in made:
            await clients.aclose()

    def _sync(self, call: _Call) -> httpx.Client:
        given = _given(call, httpx.Client)
        return cast(httpx.Client, given if given is not None else self._of(call).sync())

    def _async(self, call: _Call) -> httpx.AsyncClient:
        given = _given(call, httpx.AsyncClient)
        return cast(httpx.AsyncClient, given if given is not None else self._of(call).async_())

    def _of(self, call: _Call) -> Clients:
        """The clients of ``call``'s model (one per timeout LiteLLM passes), made at its first call."""
        key = (call.model, repr(call.timeout))
        with self._lock:
            found = self._clients.get(key)
            if found is None:
                timeout = DEFAULT_TIMEOUT if call.timeout is None else call.timeout
                found = self._clients[key] = Clients(timeout=timeout)
            return found
