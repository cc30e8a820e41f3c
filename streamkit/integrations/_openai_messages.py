"""OpenAI-format chat messages and tools (dicts, or pydantic models of them) as streamkit's
conversation: the shape LiteLLM, smolagents and agno hand a model, read once for all three by
the format's own request reader (``MESSAGES``: the one the proxy reads a Chat client with).

Each assistant message becomes the ``Turn`` it was made from (reasoning, text, then calls, a
call whose arguments are not an object an invalid call again, with the issue the stream's
reading names), consecutive ``tool`` messages one ``Results``; anything else is a
``UsageError`` naming the message and what was wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from .._errors import UsageError
from .._normalize import parse_arguments
from .._turn_types import Turn
from .._types import ArgumentIssue, InvalidToolCall, JSONObject
from ..providers import MESSAGES
from ..providers._request import RequestError
from ._chat import Entry

__all__ = ("Withheld", "conversation", "plain")

#: Finds the invalid call a call entry of an assistant message went out for, if any.
Withheld: TypeAlias = Callable[[Mapping[str, Any]], InvalidToolCall | None]


def conversation(
    provider: str,
    messages: Sequence[Any],
    stored: Callable[[Mapping[str, Any]], Turn | None] | None = None,
    withheld: Withheld | None = None,
) -> tuple[str | None, list[Entry]]:
    """A framework's OpenAI-format messages (dicts or pydantic models of them) read by the one
    reader of that format (``MESSAGES``, the proxy's too), each call's arguments read as a
    stream's are: the system text and the entries. See that reader for ``stored`` and ``withheld``."""
    [read] = MESSAGES.values()
    try:
        return read(provider, map(plain, messages), stored, withheld, _arguments)
    except RequestError as error:  # the framework's call, not a client's request: no field path
        raise UsageError(f"{error.where} {error.reason}") from None


def _arguments(arguments: Any) -> tuple[JSONObject | None, ArgumentIssue | None]:
    """A call's arguments read as a stream's are, with every issue that reading names."""
    parsed, issue, _ = parse_arguments(arguments)
    return parsed, issue


def plain(message: Any) -> dict[str, Any]:
    """A message as a dict: LiteLLM's ``Message`` and agno's are pydantic models."""
    if isinstance(message, Mapping):
        return dict(message)
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        dumped = dump()
        if isinstance(dumped, dict):
            return dumped
    raise UsageError(f"a message is a dict or a pydantic model of one, not {type(message).__name__}")
