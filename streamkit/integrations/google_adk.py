"""Google ADK: ``StreamkitLlm``, an ADK ``BaseLlm`` whose streamed responses streamkit decodes.

The model sends the request itself (the shared request builder, then ``streamkit.astream``) to
Anthropic, Gemini, OpenAI Chat, OpenAI Responses or Mistral, and hands ADK one final
``LlmResponse`` per turn holding each call whole (text streams as it comes with ``stream=True``).

The whole ``streamkit.Turn`` (thinking and its signatures, Gemini's thought signatures, invalid
calls with their issues) rides in the first visible part's ``part_metadata``, which ADK keeps in
its session: the next request sends the turn back exactly. A Gemini call's signature is also on
its part's ``thought_signature``, where ADK's own code looks for it.

ADK has no place for a call that cannot run; its own path for a call it cannot match is the
unknown-tool answer, after which it asks the model again. So an invalid call (cut off by the
output limit, invalid JSON, a schema failure) is a ``function_call`` named after its tool with
`` (not run)`` added, a name no tool can have: ADK runs nothing for it, answers it, and asks the
model again; the next request carries streamkit's error for it, whatever ADK answered.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field, PrivateAttr

from .._client import astream
from .._errors import UsageError
from .._turn_types import Thinking, Turn, TurnItem
from .._types import Finish, InvalidToolCall, Requested, TextDelta, ToolCall
from ..adapters._base import call_id, error_payload
from ._chat import Entry, History, Tool, User, build, offered
from ._clients import DEFAULT_TIMEOUT, Clients, HoldsClients
from ._ending import acut_at_end
from ._turn_json import turn_from_json, turn_json
from ._turns import Read, Reader, Usage, read

__all__ = ("NOT_RUN", "TURN_KEY", "StreamkitLlm", "turn_of")

#: The key of a part's ``part_metadata`` that holds the streamkit ``Turn``, as JSON.
TURN_KEY = "streamkit_turn"
#: Added to an invalid call's tool name: no tool has a name with a space, so ADK never runs it.
NOT_RUN = " (not run)"
#: How streamkit's errors name the framework.
FRAMEWORK = "Google ADK"

_FINISH: dict[Finish, types.FinishReason] = {
    "stop": types.FinishReason.STOP,
    "tool_calls": types.FinishReason.STOP,
    "length": types.FinishReason.MAX_TOKENS,
    "content_filter": types.FinishReason.SAFETY,
    "error": types.FinishReason.OTHER,
    "other": types.FinishReason.OTHER,
}


class StreamkitLlm(HoldsClients, BaseLlm):
    """An ADK model for one provider's API, its streams decoded by streamkit.

    Give it to ``LlmAgent(model=...)``; run the agent with a ``Runner`` as usual, streaming
    (``RunConfig(streaming_mode=StreamingMode.SSE)``) or not. Each call reaches ADK whole, once,
    with its input parsed strictly; a call that cannot run never does, and the model is told.

    Attributes:
        provider, model: a provider streamkit writes requests for (its folder has a ``request``
            stage; another is a ``UsageError`` naming them), and its model's name.
        api_key, base_url: by default from the variables its own SDK reads (``GEMINI_API_KEY``,
            ``OPENAI_BASE_URL``…).
        max_tokens: the output limit sent with each request (else the agent's
            ``generate_content_config.max_output_tokens``).
        extra: more fields for the request body (``temperature``, ``thinking``…), as the
            provider names them.
        http_async_client: the ``httpx`` (or ``httpx2``) ``AsyncClient`` to send with; by
            default the model makes one per event loop, with ``timeout``, and closes it in ``aclose()``.
        validate_calls: check each call's input against its tool's JSON Schema; a call that
            fails is not run, and the model is told the schema errors.
    """

    provider: Requested
    api_key: str | None = Field(default=None, repr=False)
    base_url: str | None = None
    max_tokens: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    http_async_client: Any = Field(default=None, exclude=True)
    timeout: float = DEFAULT_TIMEOUT
    validate_calls: bool = True
    _clients: Clients | None = PrivateAttr(default=None)

    @classmethod
    def supported_models(cls) -> list[str]:
        """None by name: the model needs its provider, so it is given as an object."""
        return []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """One model turn: with ``stream``, its text as it comes (``partial``), then the whole turn."""
        tools = _tools(llm_request.config)
        entries = _entries_of(llm_request.contents, self.provider)
        config = llm_request.config
        request = build(
            self.provider,
            self.model,
            entries,
            system=_system(config.system_instruction) if config is not None else None,
            tools=tools,
            base_url=self.base_url,
            api_key=self.api_key,
            max_tokens=self.max_tokens or (config.max_output_tokens if config is not None else None),
            extra=self.extra,
        )
        options: dict[str, Any] = {"url": request.url, "json": request.body, "headers": request.headers}
        if self.validate_calls and tools:
            options["tools"] = offered(tools)
        reader = Reader(self.provider, FRAMEWORK)
        async with astream(self._http().async_(), self.provider, **options) as stream_events:
            async for event in acut_at_end(stream_events):
                reader.feed(event)
                if stream and isinstance(event, TextDelta) and event.text:
                    yield LlmResponse(
                        content=types.Content(role="model", parts=[types.Part(text=event.text)]), partial=True
                    )
        yield _response(reader.read(), self.model)

    def _http(self) -> Clients:
        if self._clients is None:
            self._clients = Clients(None, self.http_async_client, timeout=self.timeout)
        return self._clients


# -- a streamkit turn -> ADK's response ------------------------------------------------------------


def _response(done: Read, model: str) -> LlmResponse:
    turn = done.turn
    parts = [part for item in turn.items for part in _parts(item, turn)]
    visible = next((part for part in parts if not part.thought), None)
    if visible is not None:
        visible.part_metadata = {**(visible.part_metadata or {}), TURN_KEY: turn_json(turn)}
    return LlmResponse(
        model_version=model,
        content=types.Content(role="model", parts=parts) if parts else None,
        partial=False,
        turn_complete=True,
        finish_reason=_FINISH[turn.finish] if turn.finish is not None else None,
        usage_metadata=_usage(done.usage),
    )


def _parts(item: TurnItem, turn: Turn) -> list[types.Part]:
    if isinstance(item, TextDelta):
        return [types.Part(text=item.text)] if item.text else []
    if isinstance(item, Thinking):
        return [types.Part(text=item.text, thought=True)] if item.text else []
    if isinstance(item, ToolCall):
        signature = turn.call_state(item).get("thoughtSignature")
        call = types.FunctionCall(id=call_id(item), name=item.name, args=dict(item.input))
        return [types.Part(function_call=call, thought_signature=base64.b64decode(signature) if signature else None)]
    if isinstance(item, InvalidToolCall):
        not_run = types.FunctionCall(id=call_id(item), name=_not_run(item), args=_not_run_args(item))
        return [types.Part(function_call=not_run)]
    return []  # provider state: it goes back from the stored turn


def _not_run(call: InvalidToolCall) -> str:
    return (call.name or "unnamed") + NOT_RUN


def _not_run_args(call: InvalidToolCall) -> dict[str, Any]:
    """An invalid call's arguments as ADK is shown them: streamkit's errors, and the raw text."""
    return {"errors": error_payload(call)["errors"], "raw": call.raw}


def _usage(usage: Usage | None) -> types.GenerateContentResponseUsageMetadata | None:
    if usage is None:
        return None
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=usage.input,
        candidates_token_count=usage.output,
        cached_content_token_count=usage.cache_read,
        thoughts_token_count=usage.reasoning,
        total_token_count=usage.total,
    )


def turn_of(content: types.Content) -> Turn | None:
    """The streamkit ``Turn`` a model ``Content`` from ``StreamkitLlm`` carries; ``None`` for any other."""
    for part in content.parts or ():
        stored = (part.part_metadata or {}).get(TURN_KEY)
        if stored is not None:
            return turn_from_json(stored, f"part_metadata[{TURN_KEY!r}]")
    return None


# -- ADK's request -> request entries --------------------------------------------------------------


def _tools(config: types.GenerateContentConfig | None) -> list[Tool]:
    """The function declarations ADK offers, with their JSON Schema (ADK writes
    ``parameters_json_schema``; a declaration with Gemini's ``Schema`` is converted)."""
    out: list[Tool] = []
    for tool in (config.tools if config is not None else None) or ():
        if not isinstance(tool, types.Tool):
            raise UsageError(f"only function tools can be offered through streamkit, not {type(tool).__name__}")
        for declaration in tool.function_declarations or ():
            if declaration.parameters_json_schema is not None:
                schema = dict(declaration.parameters_json_schema)
            elif declaration.parameters is not None:
                schema = declaration.parameters.json_schema.model_dump(mode="json", exclude_none=True, by_alias=True)
            else:
                schema = {"type": "object", "properties": {}}
            out.append(Tool(declaration.name or "", declaration.description or "", schema))
    return out


def _system(instruction: types.ContentUnion | None) -> str | None:
    if instruction is None:
        return None
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return _text(instruction.parts or [], "the system instruction")
    if isinstance(instruction, types.Part):
        return _text([instruction], "the system instruction")
    if isinstance(instruction, list):
        return "".join(_system(entry) or "" for entry in instruction)
    raise UsageError(f"the system instruction must be text, not {type(instruction).__name__}")


def _text(parts: Sequence[types.Part], where: str) -> str:
    texts: list[str] = []
    for part in parts:
        if part.text is None:
            raise UsageError(f"{where}: only text can be sent through streamkit, not {_kind(part)}")
        texts.append(part.text)
    return "".join(texts)


def _kind(part: types.Part) -> str:
    fields = [name for name, value in part if value is not None]
    return f"a part with {', '.join(fields) or 'nothing'}"


def _entries_of(contents: Sequence[types.Content], provider: str) -> list[Entry]:
    """The history entries for ADK's ``contents``.

    A model content this model made goes back as its stored ``Turn``, whole; any other as its
    text and calls. Function responses become ``Results``, an invalid call's always being
    streamkit's error for it (it never ran, whatever ADK answered).
    """
    history = History()
    for position, content in enumerate(contents):
        where = f"contents[{position}]"
        if content.role == "model":
            history.add(_turn(content, provider, where))
            continue
        for part in content.parts or ():
            if part.function_response is not None:
                response = part.function_response
                result = response.response or {}
                history.result(response.id, response.name or "", result, set(result) == {"error"})
            elif part.text and not part.thought:
                history.add(User(part.text))
            elif not part.thought and part.text is None:
                raise UsageError(f"{where}: only text and function responses can be sent, not {_kind(part)}")
    return history.done()


def _turn(content: types.Content, provider: str, where: str) -> Turn:
    """The stored turn while the content still shows it; a content edited since (a callback
    that rewrote arguments), or one another model made, goes back as it now reads."""
    stored = turn_of(content)
    parts = content.parts or []
    text = "".join(part.text or "" for part in parts if not part.thought)
    shown = [
        (part.function_call.id, part.function_call.name, part.function_call.args or {})
        for part in parts
        if part.function_call is not None
    ]
    if stored is not None and stored.text == text and _shown(stored) == shown:
        return stored
    items: list[TurnItem] = [TextDelta(text)] if text else []
    for index, (ident, name, args) in enumerate(shown):
        if name is None or name.endswith(NOT_RUN):
            raise UsageError(f"{where}: a call that did not run was edited; it cannot be sent back")
        items.append(ToolCall(index, ident, name, args))
    return Turn(provider, tuple(items))


def _shown(turn: Turn) -> list[tuple[str | None, str | None, Mapping[str, Any]]]:
    out: list[tuple[str | None, str | None, Mapping[str, Any]]] = []
    for call in read(turn, FRAMEWORK).calls:
        if isinstance(call, ToolCall):
            out.append((call_id(call), call.name, call.input))
        else:
            out.append((call_id(call), _not_run(call), _not_run_args(call)))
    return out
