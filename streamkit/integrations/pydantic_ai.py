"""pydantic-ai's models with streamkit reading their streams: ``wrap(model)``.

::

    agent = Agent(wrap(OpenAIChatModel("gpt-5.4")))

``wrap`` takes an ``OpenAIChatModel``, ``OpenAIResponsesModel``, ``AnthropicModel`` or
``GoogleModel`` and returns a ``StreamkitModel``, a pydantic-ai ``WrapperModel``. The request is
built and sent by the wrapped model, as always. Its streamed response is read by streamkit on
the way from the provider's HTTP client to the SDK: a response hook on that client (active only
inside the wrapper's own requests, so a client shared with other code is left alone) hands the
SDK the stream re-emitted by ``streamkit._reemit``, where each call is written once,
whole, at its end marker. The wrapped model's own ``StreamedResponse`` reads that stream, so text,
thinking and its signatures, ids and ``provider_details`` are exactly what pydantic-ai makes of
them, and the ``StreamkitStreamedResponse`` around it puts in each call as streamkit decoded it:

- a valid call is one ``ToolCallPart`` whose ``args`` is the dict streamkit parsed, given in a
  single ``PartStartEvent`` the moment its end marker is read;
- an invalid call (cut off by the output limit, malformed, not an object, ...) gets ``args`` that
  no tool's validator accepts, so pydantic-ai never runs it and answers it with a retry. The
  call's raw arguments and streamkit's own error (``{"ok": false, "errors": [...]}``, with
  "your arguments were cut off by the output limit" for a cut) are kept in the part's
  ``provider_details["streamkit"]``; the next request puts the raw arguments back in the call and
  sends streamkit's error as that call's retry result, in place of pydantic-ai's parse error.

``request`` (``Agent.run``) goes through the same streamed path, so it gets the same calls.
Schema validation stays pydantic-ai's: streamkit checks the arguments' JSON, pydantic the types.

``StartToolsEarly``, a pydantic-ai capability, wraps the model the same way and starts each tool
the moment its call completes, while the model is still streaming.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, cast

from pydantic_ai._run_context import RunContext, get_current_run_context
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    ThinkingPart,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from .. import _observe
from .._errors import ProviderProtocolError, UsageError
from .._limits import Limits
from .._reemit import BadCalls, Options, Session
from .._turn_types import Thinking
from .._types import InvalidToolCall, Provider, ToolCall
from ..adapters._base import error_payload
from ..providers import FACTS
from ..providers._encoder import Call
from ._early import EarlyRuns
from ._shell import _AsyncBody, _on, session_for

__all__ = ("StartToolsEarly", "StreamkitModel", "StreamkitStreamedResponse", "wrap")

#: This framework's name in the providers' facts (``model_classes``).
_FRAMEWORK = "pydantic_ai"
#: The wrapped model classes (matched by name along the model's class hierarchy, so that checking
#: a model imports no SDK it does not use) and the provider whose stream each reads: the
#: providers' facts.
_MODELS: tuple[tuple[str, Provider], ...] = tuple(
    (facts.model_classes[_FRAMEWORK], cast(Provider, slug))
    for slug, facts in FACTS.items()
    if _FRAMEWORK in facts.model_classes
)

#: The key of ``provider_details`` under which an invalid call keeps what the next request needs.
DETAILS_KEY = "streamkit"


def wrap(model: Model, *, limits: Limits | None = None) -> StreamkitModel:
    """``model`` with its streamed responses read by streamkit (see the module's docstring).

    Args:
        model: a pydantic-ai ``OpenAIChatModel``, ``OpenAIResponsesModel``, ``AnthropicModel`` or
            ``GoogleModel`` (or a subclass).
        limits: the ``streamkit.Limits`` one response may reach.
    """
    return StreamkitModel(model, limits=limits)


class StreamkitModel(WrapperModel):
    """A pydantic-ai model whose responses streamkit reads; made by ``wrap``."""

    def __init__(self, wrapped: Model, *, limits: Limits | None = None, early: StartToolsEarly | None = None) -> None:
        if not isinstance(wrapped, Model):
            raise UsageError(f"wrap() takes a pydantic-ai Model, got {type(wrapped).__name__}")
        self._options = Options(_provider_of(wrapped), None, None, limits, asynchronous=True)
        self._limits = limits
        self._early = early
        super().__init__(wrapped)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """The response, read from a streamed request: the same calls as ``request_stream`` gives."""
        async with self.request_stream(messages, model_settings, model_request_parameters) as response:
            async for _ in response:
                pass
        return response.get()

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        _listen(self.wrapped)
        tap = _Tap(self._options)
        async with AsyncExitStack() as stack:
            token = _TAP.set(tap)
            try:  # the hook acts only while the wrapped model sends the request and reads its first event
                opened = self.wrapped.request_stream(
                    _restored(messages), model_settings, model_request_parameters, run_context
                )
                inner = await stack.enter_async_context(opened)
            finally:
                _TAP.reset(token)
            if not tap.attached:  # no stream to read (a content filter's answer): as the model gave it
                yield inner
                return
            response = StreamkitStreamedResponse(model_request_parameters, inner, tap)
            context = run_context or get_current_run_context()  # ``request`` is given none
            if self._early is not None and context is not None:
                response._on_call = functools.partial(self._early.start, context)
            yield response


class _Session(Session):
    """A re-emitting session that passes invalid calls on (the wrapper turns each into a retry,
    which tells the model) and keeps the thinking blocks streamkit decoded."""

    bad_calls = BadCalls("pass")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.thinking: list[Thinking] = []

    def _take(self, values: Iterable[object]) -> list[Call]:
        values = list(values)
        self.thinking += [value for value in values if isinstance(value, Thinking)]
        return super()._take(values)


@dataclass
class _Tap:
    """One request's link between the HTTP response hook and the ``StreamkitStreamedResponse``."""

    options: Options
    session: _Session | None = None
    calls: list[ToolCall | InvalidToolCall] = field(default_factory=list)

    @property
    def attached(self) -> bool:
        return self.session is not None

    def attach(self, response: Any) -> None:
        """Give the SDK ``response``'s body re-emitted by streamkit, if it is a stream to read.

        The body is read with its ``Content-Encoding`` undone, so the headers lose it with the
        length; an encoding the library cannot undo raises its ``DecodingError``.
        """
        library = sys.modules[type(response).__module__.partition(".")[0]]
        session = session_for(self.options, library, response.request, response, kind=_Session)
        if session is None:
            return
        assert isinstance(session, _Session)
        self.session = session
        body = _on(_AsyncBody, library.AsyncByteStream)
        response.stream = body(response.stream, session, self.calls.append, library.RemoteProtocolError)
        for name in ("content-length", "content-encoding"):
            response.headers.pop(name, None)


_TAP: ContextVar[_Tap | None] = ContextVar("streamkit_pydantic_ai_tap", default=None)


async def _on_response(response: Any) -> None:
    tap = _TAP.get()
    if tap is not None and not tap.attached:
        tap.attach(response)


def _listen(model: Model) -> None:
    """Put the response hook on the HTTP client the model's SDK uses now (once per client)."""
    client = _http_client(model)
    hooks = client.event_hooks["response"]
    if _on_response not in hooks:
        hooks.append(_on_response)


def _http_client(model: Model) -> Any:
    sdk: Any = model.client  # type: ignore[attr-defined]
    client = getattr(sdk, "_client", None)  # openai's and anthropic's clients
    if client is None:  # google-genai's
        client = getattr(getattr(sdk, "_api_client", None), "_async_httpx_client", None)
    if client is None or not hasattr(client, "event_hooks"):
        raise UsageError(f"cannot find the httpx client of {type(model).__name__}'s SDK client")
    return client


def _provider_of(model: Model) -> Provider:
    for cls in type(model).__mro__:
        if cls.__module__.startswith("pydantic_ai.models"):
            slug = next((slug for name, slug in _MODELS if name == cls.__name__), None)
            if slug is not None:
                return slug
    known = ", ".join(name for name, _ in _MODELS)
    raise UsageError(f"wrap() takes one of pydantic-ai's {known}, got {type(model).__name__}")


@dataclass
class StreamkitStreamedResponse(StreamedResponse):
    """The wrapped model's ``StreamedResponse``, with each call as streamkit decoded it.

    Events other than a function call's pass through as the wrapped model made them. A call's
    own ``PartStartEvent`` and ``PartDeltaEvent``s are replaced by one ``PartStartEvent`` with
    the whole ``ToolCallPart``, given when the wrapped model starts reading the call, which is
    when streamkit has read its end (the re-emitted stream holds each call back until then).
    """

    _inner: StreamedResponse = field(repr=False)
    _tap: _Tap = field(repr=False)
    _taken: int = field(default=0, init=False, repr=False)
    _calls: dict[int, ToolCall | InvalidToolCall] = field(default_factory=dict, init=False, repr=False)
    _on_call: Callable[[ToolCallPart, ToolCall], None] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.canonical_system = self._inner.canonical_system
        self.__dict__["_parts_manager"] = _Parts(self)  # the base class reads the parts from it

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        async for event in self._inner._get_event_iterator():
            self._follow()
            if isinstance(event, PartStartEvent) and type(event.part) is ToolCallPart:
                call = self._take(event.part)
                self._calls[event.index] = call
                part = self._part(event.part, call)
                if self._on_call is not None and isinstance(call, ToolCall):
                    self._on_call(part, call)
                yield replace(event, part=part)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, ToolCallPartDelta):
                if event.index not in self._calls:
                    raise ProviderProtocolError(f"a call's arguments came before the call (part {event.index})")
            else:
                yield event
        self._follow()
        if self._taken != len(self._tap.calls):
            unread = [call.name for call in self._tap.calls[self._taken :]]
            raise ProviderProtocolError(f"{self._inner.model_name}: calls the model did not read: {unread}")

    def _take(self, part: ToolCallPart) -> ToolCall | InvalidToolCall:
        """The next call streamkit completed: the one the wrapped model is reading (they read in order)."""
        if self._taken >= len(self._tap.calls):
            raise ProviderProtocolError(f"the model read a call of {part.tool_name!r} that streamkit did not complete")
        call = self._tap.calls[self._taken]
        if (call.name or "") != part.tool_name:
            raise ProviderProtocolError(
                f"the model read a call of {part.tool_name!r} where streamkit has {call.name!r}"
            )
        self._taken += 1
        return call

    def _part(self, part: ToolCallPart, call: ToolCall | InvalidToolCall) -> ToolCallPart:
        """``part`` (as the wrapped model read it) with the arguments streamkit gives it."""
        if isinstance(call, ToolCall):
            return replace(part, args=dict(call.input))
        errors = error_payload(call)
        first = cast(list[dict[str, Any]], errors["errors"])[0]
        kept = {
            "args": part.args,
            "provider_name": part.provider_name,
            "provider_details": part.provider_details,
            "result": errors,
        }
        return replace(
            part,
            args=f"(not run: {first['message']})",  # never JSON, so no tool's validator accepts it
            provider_name=part.provider_name or self._inner.provider_name,
            provider_details={**(part.provider_details or {}), DETAILS_KEY: kept},
        )

    def _follow(self) -> None:
        """Take over what the wrapped response has learnt so far (ids, usage, finish reason, ...)."""
        inner = self._inner
        self.provider_response_id = inner.provider_response_id
        self.provider_details = inner.provider_details
        self.finish_reason = inner.finish_reason
        self.metadata = inner.metadata
        if inner.state != "complete":
            self.state = inner.state
        self._usage = inner._usage
        self._usage_received = inner._usage_received

    def parts(self) -> list[ModelResponsePart]:
        """The wrapped response's parts, each call (and Anthropic's signatures) as streamkit decoded it."""
        parts = list(self._inner._parts_manager.get_parts())
        for index, call in self._calls.items():
            part = parts[index]
            if isinstance(part, ToolCallPart):
                parts[index] = self._part(part, call)
        session = self._tap.session
        if session is not None and session.provider is not None and FACTS[session.provider].signature_deltas:
            _signed(parts, session.thinking, self._inner.provider_name)
        return parts

    async def close_stream(self) -> None:
        await self._inner.close_stream()

    def get_stream_cancel_errors(self) -> tuple[type[BaseException], ...]:
        return self._inner.get_stream_cancel_errors()

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def provider_name(self) -> str | None:
        return self._inner.provider_name

    @property
    def provider_url(self) -> str | None:
        return self._inner.provider_url

    @property
    def timestamp(self) -> datetime:
        return self._inner.timestamp


class _Parts:
    """The parts manager the base class reads: the wrapped one's, with each call streamkit's."""

    def __init__(self, response: StreamkitStreamedResponse) -> None:
        self._response = response

    def get_parts(self) -> list[ModelResponsePart]:
        return self._response.parts()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._response._inner._parts_manager, name)


def _signed(parts: list[ModelResponsePart], thinking: list[Thinking], provider_name: str | None) -> None:
    """Each ``thinking`` block with its whole signature, where the provider sends it in deltas
    (Anthropic; ``provider_name`` is pydantic-ai's name for the response's provider).

    pydantic-ai (like the Anthropic SDK) keeps only the last ``signature_delta`` of a block;
    streamkit joins them all, as received. The thinking parts and streamkit's ``Thinking`` items
    are the same blocks in the same order (redacted blocks are neither).
    """
    blocks = iter(thinking)
    for index, part in enumerate(parts):
        if isinstance(part, ThinkingPart) and part.id != "redacted_thinking" and part.provider_name == provider_name:
            block = next(blocks, None)
            if block is not None and block.signature is not None and part.signature != block.signature:
                parts[index] = replace(part, signature=block.signature)


def _unkept(part: ToolCallPart) -> ToolCallPart:
    """An invalid call's part as the wrapped model read it, if streamkit marked it; else ``part``."""
    kept = (part.provider_details or {}).get(DETAILS_KEY)
    if not isinstance(kept, dict):
        return part
    return replace(
        part, args=kept["args"], provider_name=kept["provider_name"], provider_details=kept["provider_details"]
    )


def _restored(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """The history as the wrapped model is to send it: each invalid call with its raw arguments
    back, and its retry result streamkit's error instead of pydantic-ai's."""
    results: dict[str, Any] = {}
    out: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            parts = [_unkept(part) if isinstance(part, ToolCallPart) else part for part in message.parts]
            for part in message.parts:
                kept = (part.provider_details or {}).get(DETAILS_KEY) if isinstance(part, ToolCallPart) else None
                if isinstance(kept, dict) and isinstance(part, ToolCallPart):
                    results[part.tool_call_id] = kept["result"]
            changed = any(new is not old for new, old in zip(parts, message.parts, strict=True))
            out.append(replace(message, parts=parts) if changed else message)
        elif isinstance(message, ModelRequest) and results:
            request_parts = [_answered(part, results) for part in message.parts]
            changed = any(new is not old for new, old in zip(request_parts, message.parts, strict=True))
            out.append(replace(message, parts=request_parts) if changed else message)
        else:
            out.append(message)
    return out


def _answered(part: Any, results: dict[str, Any]) -> Any:
    if isinstance(part, ToolReturnPart) and part.outcome == "retried" and part.tool_call_id in results:
        return replace(part, content=results[part.tool_call_id])
    return part


#: Set inside an early tool run, so that ``StartToolsEarly.wrap_tool_execute`` lets it through.
_EARLY: ContextVar[bool] = ContextVar("streamkit_pydantic_ai_early", default=False)


@dataclass(init=False)
class StartToolsEarly(AbstractCapability[Any]):
    """A capability that starts each tool the moment its call completes, while the model streams.

    ::

        agent = Agent(AnthropicModel("claude-sonnet-5-5"), capabilities=[StartToolsEarly()])

    It wraps the agent's model as ``wrap`` does (``limits`` is passed on). When a valid call of a
    function tool ends in the stream, the tool is started at once through pydantic-ai's own
    ``ToolManager.handle_call`` (its validation, hooks and retries as usual); when pydantic-ai's
    graph later executes that call, ``wrap_tool_execute`` hands it the early run's result (or
    its exception) instead of running the tool again, so each call runs once. Tools that need
    approval or are deferred, ``sequential`` tools, output tools, and every tool of a run in
    sequential mode start as pydantic-ai starts them, after the response. An early run is handed
    only to the call that started it (same id, tool and arguments: a provider that reuses an id
    for another call gets a run of its own), and one that pydantic-ai never asks for (the run
    failed or stopped first) is cancelled, and waited for, when the run ends.
    """

    limits: Limits | None = None

    def __init__(self, *, limits: Limits | None = None) -> None:
        self.limits = limits
        self._runs: EarlyRuns[Any] = EarlyRuns()

    async def for_run(self, ctx: RunContext[Any]) -> StartToolsEarly:
        return StartToolsEarly(limits=self.limits)  # each run its own early runs

    def get_wrapper_model(self, model: Model) -> Model | None:
        limits = self.limits
        if isinstance(model, StreamkitModel):
            limits = model._limits if limits is None else limits
            model = model.wrapped
        return StreamkitModel(model, limits=limits, early=self)

    def start(self, ctx: RunContext[Any], part: ToolCallPart, call: ToolCall) -> None:
        """Start ``part``'s tool now, if pydantic-ai would run it in parallel with the others;
        with telemetry on, in an ``execute_tool`` span linked to ``call``, streamkit's own."""
        manager = ctx.tool_manager
        if manager is None or manager.tools is None:
            return
        tool = manager.tools.get(part.tool_name)
        if tool is None or not _starts_early(tool.tool_def) or manager.is_sequential(part):
            return
        if manager.get_parallel_execution_mode() != "parallel":
            return
        self._runs.start(part.tool_call_id, _same(part), lambda: _observe.traced(call, _run_early(manager, part)))

    async def wrap_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, handler: Any
    ) -> Any:
        task = None if _EARLY.get() else self._runs.take(call.tool_call_id, _same(call))
        if task is None:
            return await handler(args)
        return await task

    async def wrap_run(self, ctx: RunContext[Any], *, handler: Any) -> Any:
        try:
            return await handler()
        finally:
            await self._runs.close()


def _same(part: ToolCallPart) -> tuple[str, Any]:
    """What makes a call the one an early run was started for: its tool and its arguments (a
    provider may reuse an id within a run for another call)."""
    try:
        return part.tool_name, part.args_as_dict()
    except Exception:  # arguments that are not an object: compared as given
        return part.tool_name, part.args


def _starts_early(tool_def: ToolDefinition) -> bool:
    return tool_def.kind == "function" and not tool_def.defer


async def _run_early(manager: Any, part: ToolCallPart) -> Any:
    _EARLY.set(True)  # this task's own context
    return await manager.handle_call(part, wrap_validation_errors=False)
