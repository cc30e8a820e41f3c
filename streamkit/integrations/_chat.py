"""One streaming request per provider, built from a conversation in streamkit's own terms.

The framework integrations that send their requests themselves (LangChain, the OpenAI Agents
SDK, LiteLLM) each translate their framework's messages into the entries below, once; this
module writes them in the provider's wire shape. History is written by the exit adapters
(``ADAPTERS[slug].turn_messages`` and ``tool_results_message``), so an assistant ``Turn``
decoded from the same provider goes back with its thinking signatures and reasoning items as
received, and a tool's result or an invalid call's error is worded as everywhere else.

How a request's body is laid out is each provider's ``request.py`` (``REQUESTS``); where it goes
is its facts' (``base_url``, as its official SDK has it, and ``request_path``). Keys and base
URLs not given come from the environment variables each provider's facts declare.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from .._errors import UsageError
from .._tooldefs import one_definition
from .._turn_types import Turn
from .._types import CallRef, InvalidToolCall, JSONObject, ToolCall
from ..adapters import ADAPTERS
from ..adapters._base import Message, Outcome, call_id
from ..providers import FACTS, REQUESTS
from ..providers._request import RequestWriter, merged
from ._turns import read

__all__ = (
    "PROVIDERS",
    "Entry",
    "History",
    "Prepared",
    "Request",
    "Results",
    "Sender",
    "Tool",
    "User",
    "build",
    "offered",
    "prepare",
    "read_tools",
)

#: What a tool declares when it takes no arguments.
NO_PARAMETERS: JSONObject = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class Tool:
    """A tool offered to the model: its name, what it does, and its arguments' JSON Schema."""

    name: str
    description: str = ""
    parameters: JSONObject = field(default_factory=lambda: dict(NO_PARAMETERS))


def offered(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """``tools`` as ``streamkit.astream(..., tools=...)`` takes them, to check each call against."""
    return [{"name": tool.name, "description": tool.description, "parameters": tool.parameters} for tool in tools]


def read_tools(tools: Sequence[Any]) -> list[Tool]:
    """Tool definitions as the request builders offer them, read by the one tool reader
    (``_tooldefs``: any format streamkit validates against), each with its description."""
    out: list[Tool] = []
    for position, tool in enumerate(tools):
        where = f"tools[{position}]"
        read = [(name, schema) for _, name, schema in one_definition(where, tool)]
        schemas = [(name, schema) for name, schema in read if isinstance(schema, dict)]
        if not read or len(schemas) < len(read):  # a provider's own tool, or a custom (free-text) one
            raise UsageError(f"{where} is not a function tool, the only kind offered here: {tool!r:.80}")
        out += [Tool(name, _description(tool, name), schema) for name, schema in schemas]
    return out


def _description(tool: Any, name: str) -> str:
    """The description beside a definition's name, at whichever level its format keeps it."""
    if not isinstance(tool, Mapping):
        return str(getattr(tool, "__doc__", None) or "")  # a pydantic model class
    levels = [tool, tool.get("function"), tool.get("toolSpec")]
    levels += tool.get("functionDeclarations") or tool.get("function_declarations") or []
    for level in levels:
        if isinstance(level, Mapping) and level.get("name") == name:
            return str(level.get("description") or "")
    return ""


@dataclass(frozen=True)
class User:
    """A user message of plain text."""

    text: str


@dataclass(frozen=True)
class Results:
    """A turn's tool results, as the adapters take them (``ToolResult``, ``(call, result)``…)."""

    outcomes: tuple[Outcome, ...]


Entry: TypeAlias = User | Turn | Results
"""One entry of the conversation: a user message, an assistant ``Turn``, or tool results."""


class History:
    """A conversation's entries, read from a framework's messages in order: neighbouring tool
    results make one ``Results``, and the result of an invalid call is always the call itself,
    so the model is told streamkit's error for it (it never ran), whatever the framework wrote."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self._pending: list[Outcome] = []
        self._calls: dict[str, ToolCall | InvalidToolCall] = {}

    def add(self, entry: User | Turn) -> None:
        """A user message or an assistant turn; a turn's calls are the ones later results answer."""
        self._flush()
        if isinstance(entry, Turn):
            self._calls = {call_id(call): call for call in read(entry, "this integration").calls}
        self.entries.append(entry)

    def result(self, ident: str | None, name: str, result: Any, is_error: bool = False) -> None:
        """The result the framework gives the call ``ident`` of the last turn."""
        call = self._calls.get(ident or "")
        if isinstance(call, InvalidToolCall):
            self._pending.append(call)
        else:
            self._pending.append((call if call is not None else CallRef(ident, name), result, is_error))

    def done(self) -> list[Entry]:
        """The entries, the last results included."""
        self._flush()
        return self.entries

    def _flush(self) -> None:
        if self._pending:
            self.entries.append(Results(tuple(self._pending)))
            self._pending = []


@dataclass(frozen=True)
class Request:
    """What to send: ``streamkit.astream(client, provider, url, json=body, headers=headers)``."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass(frozen=True)
class Prepared:
    """A built request, and the tool definitions its calls are validated against (``None``: the
    calls are not checked against a schema)."""

    request: Request
    tools: list[dict[str, Any]] | None = None

    @classmethod
    def of(cls, request: Request, tools: Sequence[Tool], validate: bool) -> Prepared:
        return cls(request, offered(tools) if validate and tools else None)

    def arguments(self) -> dict[str, Any]:
        """``streamkit.stream``'s and ``streamkit.astream``'s keyword arguments."""
        out: dict[str, Any] = {"url": self.request.url, "json": self.request.body, "headers": self.request.headers}
        if self.tools is not None:
            out["tools"] = self.tools
        return out


class Sender(Protocol):
    """What every sending integration's model declares under these names, for ``prepare``."""

    @property
    def base_url(self) -> str | None: ...

    @property
    def validate_calls(self) -> bool: ...


def prepare(
    sender: Sender,
    provider: str,
    model: str,
    conversation: tuple[str | None, Sequence[Entry]],
    tools: Sequence[Tool],
    api_key: str | None,
    max_tokens: int | None,
    extra: Mapping[str, Any],
) -> Prepared:
    """One model call's request, and what its calls are checked against: each integration reads
    its framework's messages and settings its own way, then they all send alike."""
    system, entries = conversation
    request = build(
        provider,
        model,
        entries,
        system=system,
        tools=tools,
        base_url=sender.base_url,
        api_key=api_key,
        max_tokens=max_tokens,
        extra=extra,
    )
    return Prepared.of(request, tools, sender.validate_calls)


def _headers(provider: str, key: str | None) -> dict[str, str]:
    """The headers the provider's requests always carry, and the key in its auth header if given."""
    facts = FACTS[provider]
    headers = dict(facts.request_headers)
    if key is not None:
        assert facts.auth_header is not None  # every provider here takes a key
        headers[facts.auth_header] = facts.auth_value.format(key)
    return headers


#: The providers a request can be built for: those whose folder writes one.
PROVIDERS: tuple[str, ...] = tuple(sorted(REQUESTS))


def build(
    provider: str,
    model: str,
    entries: Sequence[Entry],
    *,
    system: str | None = None,
    tools: Sequence[Tool] = (),
    base_url: str | None = None,
    api_key: str | None = None,
    max_tokens: int | None = None,
    extra: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] = os.environ,
) -> Request:
    """The streaming request that continues ``entries``; ``extra`` is merged into the body last
    (``{"thinking": {...}}``, ``{"temperature": 0}``…), so it can set anything the API takes; an
    object in both is merged key by key (a setting under ``generationConfig`` keeps the limit).

    A key or base URL not given is read from ``environ``, from the variables the provider's
    facts declare (``OPENAI_API_KEY``, ``GEMINI_API_KEY`` then ``GOOGLE_API_KEY``…): every
    integration that sends its own requests finds them the same way.
    """
    wire = REQUESTS.get(provider)
    if wire is None:
        raise UsageError(
            f"no request can be built for provider {provider!r}; the providers are: {', '.join(PROVIDERS)}"
        )
    history = [message for entry in entries for message in _messages(wire, provider, entry)]
    if wire.MERGE_ROLES:
        history = _merged(history)
    body = wire.body(model, history, system, tools, max_tokens)
    body = merged(body, extra or {})
    facts = FACTS[provider]
    assert facts.base_url is not None and facts.request_path is not None  # every provider a request is built for
    base = base_url or facts.base_url_from(environ) or facts.base_url
    key = api_key if api_key is not None else facts.key_from(environ)
    return Request(base.rstrip("/") + facts.request_path.format(model=model), _headers(provider, key), body)


def _messages(wire: RequestWriter, provider: str, entry: Entry) -> list[Message]:
    adapter = ADAPTERS[provider]
    if isinstance(entry, Turn):
        return adapter.turn_messages(entry)
    if isinstance(entry, Results):
        return adapter.tool_results_message(entry.outcomes)
    if isinstance(entry, User):
        return [wire.user(entry.text)]
    raise UsageError(f"a conversation entry is a User, a Turn or Results, not {type(entry).__name__}")


def _merged(history: list[Message]) -> list[Message]:
    """Consecutive messages of one role as one: a user's text after tool results, two turns' results."""
    out: list[Message] = []
    for message in history:
        parts = "parts" if "parts" in message else "content"
        if out and out[-1]["role"] == message["role"] and parts in out[-1]:
            out[-1] = {**out[-1], parts: [*out[-1][parts], *message[parts]]}
        else:
            out.append(message)
    return out
