"""The integrations' side of a request: a framework's messages read into streamkit's entries
(``History``), and one model call prepared from them (``prepare``). The entries are written as
a provider's request by ``_reemit._conversation``, which the proxy shares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .._reemit._conversation import PROVIDERS, Request, Tool, build, offered, read_tools
from .._turn_types import Entry, Outcome, Results, Turn, User
from .._types import CallRef, InvalidToolCall, ToolCall
from ..adapters._base import call_id
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
