"""A conversation in streamkit's terms written as one provider's streaming request.

The framework integrations that send their requests themselves (LangChain, the OpenAI Agents
SDK, LiteLLM…) read their framework's messages into entries (``User``, ``Turn``, ``Results``)
once, and the proxy reads a client's request into them to send it to an upstream of another
format; this module writes them in the provider's wire shape. History is written by the exit
adapters (``ADAPTERS[slug].turn_messages`` and ``tool_results_message``), so an assistant
``Turn`` decoded from the same provider goes back with its thinking signatures and reasoning
items as received, and a tool's result or an invalid call's error is worded as everywhere else.

How a request's body is laid out is each provider's ``request.py`` (``REQUESTS``); where it goes
is its facts' (``base_url``, as its official SDK has it, and ``paths.request``). Keys and base
URLs not given come from the environment variables each provider's facts declare.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._errors import UsageError
from .._tooldefs import one_definition
from .._turn_types import Entry, Results, Turn, User
from .._types import JSONObject
from ..adapters import ADAPTERS
from ..adapters._base import Message
from ..providers import FACTS, REQUESTS
from ..providers._request import RequestWriter, merged

__all__ = ("NO_PARAMETERS", "PROVIDERS", "Request", "Tool", "build", "offered", "read_tools")


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
class Request:
    """What to send: ``streamkit.astream(client, provider, url, json=body, headers=headers)``."""

    url: str
    headers: dict[str, str]
    body: dict[str, Any]


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
    assert facts.base_url is not None and facts.paths.request is not None  # every provider a request is built for
    base = base_url or facts.base_url_from(environ) or facts.base_url
    key = api_key if api_key is not None else facts.key_from(environ)
    return Request(base.rstrip("/") + facts.paths.request.format(model=model), _headers(provider, key), body)


def _messages(wire: RequestWriter, provider: str, entry: Entry) -> list[Message]:
    adapter = ADAPTERS[provider]
    if isinstance(entry, Turn):
        return adapter.turn_messages(entry)
    if isinstance(entry, Results):
        return adapter.tool_results_message(entry.outcomes)
    if isinstance(entry, User):
        return [wire.user(entry.content)]
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
