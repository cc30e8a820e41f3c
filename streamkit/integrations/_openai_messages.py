"""OpenAI-format chat messages and tools (dicts, or pydantic models of them) as streamkit's
conversation: the shape LiteLLM, smolagents and agno hand a model, read once for all three.

Each assistant message becomes the ``Turn`` it was made from (reasoning, text, then calls, a
call whose arguments are not an object an invalid call again), consecutive ``tool`` messages
one ``Results``; anything else is a ``UsageError`` naming the message and what was wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

from .._errors import UsageError
from .._normalize import parse_arguments
from .._turn_types import RedactedThinking, Thinking, Turn, TurnItem
from .._types import CallRef, InvalidToolCall, TextDelta, ToolCall
from ..adapters._base import Outcome, call_id, dumps
from ._chat import Entry, Results, User

__all__ = ("Withheld", "conversation", "plain")

#: Finds the invalid call a call entry of an assistant message went out for, if any.
Withheld: TypeAlias = Callable[[Mapping[str, Any]], InvalidToolCall | None]


def conversation(
    provider: str,
    messages: Sequence[Any],
    stored: Callable[[Mapping[str, Any]], Turn | None] | None = None,
    withheld: Withheld | None = None,
) -> tuple[str | None, list[Entry]]:
    """The system text and the entries of an OpenAI-format conversation.

    Consecutive ``tool`` messages are one ``Results``; each result is matched to its call's name
    by ``tool_call_id``, as Gemini needs the name. ``stored`` finds the ``Turn`` an assistant
    message was made from, where the framework kept it (with its signatures, as received).
    ``withheld`` finds the invalid call a call entry of an assistant message went out for: the
    call goes back as received, and the result the framework wrote for it is replaced by the
    call itself, so the model is told streamkit's error for it (it never ran).
    """
    system: list[str] = []
    entries: list[Entry] = []
    results: list[Outcome] = []
    names: dict[str, str] = {}
    told: dict[str, InvalidToolCall] = {}
    for position, given in enumerate(messages):
        message = plain(given)
        role = message.get("role")
        if role != "tool" and results:
            entries.append(Results(tuple(results)))
            results = []
        if role in ("system", "developer"):
            system.append(_text(message.get("content"), position))
        elif role == "user":
            entries.append(User(_text(message.get("content"), position)))
        elif role == "assistant":
            turn = (stored and stored(message)) or _turn(provider, message, position, withheld)
            names.update({call.id: call.name for call in turn.calls if call.id and call.name})
            told = _withheld(message, withheld)
            if turn.items:
                entries.append(turn)
        elif role == "tool":
            found = told.get(message.get("tool_call_id") or "")
            results.append(found if found is not None else _result(message, names, position))
        else:
            raise UsageError(
                f"messages[{position}] has the role {role!r}; streamkit sends system, user, assistant, tool"
            )
    if results:
        entries.append(Results(tuple(results)))
    return ("\n\n".join(system) if system else None), entries


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


def _text(content: Any, position: int) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise UsageError(f"messages[{position}].content is {type(content).__name__}, not text")
    texts = []
    for number, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
        if kind != "text":
            raise UsageError(f"messages[{position}].content[{number}] is a {kind!r} part; streamkit sends text only")
        texts.append(str(part.get("text", "")))
    return "".join(texts)


def _withheld(message: Mapping[str, Any], withheld: Withheld | None) -> dict[str, InvalidToolCall]:
    """The invalid calls an assistant message's call entries went out for, by id."""
    found = (withheld(entry) for entry in message.get("tool_calls") or ()) if withheld is not None else ()
    return {call_id(call): call for call in found if call is not None}


def _turn(provider: str, message: Mapping[str, Any], position: int, withheld: Withheld | None = None) -> Turn:
    """An assistant message as the ``Turn`` it was made from: reasoning, text, then calls."""
    items: list[TurnItem] = []
    for block in message.get("thinking_blocks") or ():
        if block.get("type") == "thinking":
            items.append(Thinking(block.get("thinking") or "", block.get("signature")))
        elif block.get("type") == "redacted_thinking":
            items.append(RedactedThinking(block.get("data") or ""))
    if not items and message.get("reasoning_content"):
        items.append(Thinking(message["reasoning_content"]))
    text = _text(message.get("content"), position)
    if text:
        items.append(TextDelta(text))
    items.extend(_call(index, entry, withheld) for index, entry in enumerate(message.get("tool_calls") or ()))
    return Turn(provider, tuple(items))


def _call(index: int, entry: Mapping[str, Any], withheld: Withheld | None = None) -> ToolCall | InvalidToolCall:
    """A call of the history, parsed again: arguments that are not an object make an invalid
    call; an entry that went out for an invalid call is that call, as received."""
    found = withheld(entry) if withheld is not None else None
    if found is not None:
        return replace(found, index=index)
    function = entry.get("function") or {}
    fields = entry.get("provider_specific_fields") or function.get("provider_specific_fields") or {}
    signature = fields.get("thought_signature")
    state = {"thoughtSignature": signature} if isinstance(signature, str) else {}
    arguments = function.get("arguments")
    parsed, issue, _ = parse_arguments(arguments)
    if parsed is None:
        assert issue is not None
        raw = arguments if isinstance(arguments, str) else dumps(arguments)
        return InvalidToolCall(index, entry.get("id"), function.get("name"), raw, (issue,), state=state)
    return ToolCall(index, entry.get("id"), function.get("name") or "", parsed, state=state)


def _result(message: Mapping[str, Any], names: Mapping[str, str], position: int) -> Outcome:
    ident = message.get("tool_call_id")
    name = message.get("name") or names.get(ident or "")
    if not name:
        raise UsageError(f"messages[{position}] answers the call {ident!r}, which no assistant message before it made")
    return (CallRef(ident, name), _text(message.get("content"), position))
