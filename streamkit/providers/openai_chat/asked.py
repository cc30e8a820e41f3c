"""An OpenAI Chat Completions request read into streamkit's terms, for an upstream of another
format; and its messages read into a conversation, the one reading of the messages LiteLLM,
smolagents and agno hand a model as well (``conversation``).

System and developer messages become the system text; a user message its text (a string, or
text parts) and its images (``image_url`` parts: a base64 ``data:`` URL or a URL, their
``detail`` left out and named); an assistant message the ``Turn`` it records (reasoning, text, then calls, a call
whose arguments are not an object an invalid call); consecutive ``tool`` messages one
``Results``, each matched to its call's name by ``tool_call_id``. What another format cannot
carry (a file or audio part, ``n`` above 1, a field streamkit does not know) is a ``RequestError``
naming where it is, as is a message's own field the model would read (an author's ``name``, a
``refusal``, a legacy ``function_call``: refused here, while a framework's messages are read as
they come); what asks nothing of the answer (a user id, OpenAI's own storage, a function's
``strict``) is left out and named.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from ..._json import loads_exact
from ..._turn_types import Parts, RedactedThinking, Results, Thinking, Turn, User, carried
from ..._types import ArgumentIssue, CallRef, InvalidToolCall, JSONObject, TextDelta, ToolCall
from .._request import Asked, Fields, RequestError, alike, image_at, kind_of, left_detail, read_choice, read_parts
from . import FACTS
from .request import SETTINGS

if TYPE_CHECKING:
    from ..._turn_types import Entry, Outcome, Part, TurnItem

__all__ = ("Arguments", "Conversation", "Stored", "Withheld", "conversation", "object_arguments", "read")

#: Reads a call's arguments as a history holds them: the object, or the issue that makes the call invalid.
Arguments: TypeAlias = Callable[[Any], "tuple[JSONObject | None, ArgumentIssue | None]"]
#: Finds the ``Turn`` an assistant message was made from, where the caller kept it.
Stored: TypeAlias = Callable[[Mapping[str, Any]], "Turn | None"]
#: Finds the invalid call a call entry of an assistant message went out for, if any.
Withheld: TypeAlias = Callable[[Mapping[str, Any]], "InvalidToolCall | None"]


class Conversation(Protocol):
    """``conversation``'s signature, as the registry hands it out (``MESSAGES``)."""

    def __call__(
        self,
        provider: str,
        messages: Iterable[Mapping[str, Any]],
        stored: Stored | None = None,
        withheld: Withheld | None = None,
        arguments: Arguments | None = None,
    ) -> tuple[str | None, list[Entry]]: ...


#: The request's fields: read below or by the writer of the request's stream (which writes the
#: usage at the end whenever the upstream reports it, as ``stream_options`` asks), or left out.
_BODY = Fields(
    {"model", "messages", "tools", "max_completion_tokens", "max_tokens", "stream", "stream_options", "n"},
    settings=SETTINGS,
    dropped={
        **alike("user", "safety_identifier"),
        "metadata": "tags for completions OpenAI stores",
        "store": "whether OpenAI stores the completion",
        **alike("prompt_cache_key", "service_tier"),
        # false is carried: the upstream sets it, or refuses it
        "parallel_tool_calls": "true: every model's default",
    },
)
#: A function tool's fields, and its function's.
_TOOL = Fields({"type", "function"})
_FUNCTION = Fields({"name", "description", "parameters"}, dropped=alike("strict"))
#: ``stream_options``' fields (the usage is written whenever the upstream reports it).
_STREAM = Fields(
    {"include_usage"}, dropped={"include_obfuscation": "padding in OpenAI's stream events, not part of the answer"}
)
#: A message's own fields beside its role and content that the model would read, refused where
#: set (a tool message's ``name`` is its call's, and read).
_AUTHOR = "the name of the message's author, which the upstream's messages cannot hold"
_MESSAGE = Fields(
    refused={
        "name": _AUTHOR,
        "refusal": "the assistant's refusal, which streamkit does not carry: give it as the content",
        "audio": "an earlier answer's audio, kept by OpenAI's servers",
        "function_call": "a call in the form before tool_calls, which streamkit does not read: give it as tool_calls",
    }
)
_JSON_SPACE = " \t\n\r"


def read(body: Mapping[str, Any]) -> Asked:
    """``body``, a Chat Completions request, in streamkit's terms; a field it cannot carry is a ``RequestError``."""
    model, dropped = _BODY.model(body)
    if body.get("n") not in (None, 1):
        raise RequestError("n", f"{body['n']!r} choices; streamkit carries one to another format")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise RequestError("messages", "a list of messages is required")
    _message_fields(messages)
    hints = _tool_fields(body.get("tools")) + _stream_fields(body.get("stream_options"))
    system, entries = conversation(FACTS.slug, messages)
    settings = _BODY.settings_in(body)
    settings.pop("user", None)
    choice = settings.pop("tool_choice", None)
    if settings.get("parallel_tool_calls") is True:
        del settings["parallel_tool_calls"]
    left = dropped + _details(messages) + hints
    limit = body.get("max_completion_tokens")
    limit = body.get("max_tokens") if limit is None else limit
    return Asked(
        model,
        system,
        tuple(entries),
        tuple(body.get("tools") or ()),
        limit if isinstance(limit, int) else None,
        settings,
        read_choice(choice, _chosen),
        body.get("stream") is True,
        tuple(left),
    )


def _tool_fields(tools: Any) -> list[str]:
    """Each function tool checked to its last field: what is left out of it, named. Another
    kind of tool is ``read_tools``' to refuse."""
    found: list[str] = []
    for position, tool in enumerate(tools if isinstance(tools, list) else ()):
        function = tool.get("function") if isinstance(tool, Mapping) and tool.get("type") == "function" else None
        if isinstance(function, Mapping):
            where = f"tools[{position}]"
            _TOOL.check(tool, where)
            found += _FUNCTION.check(function, f"{where}.function")
    return found


def _stream_fields(options: Any) -> list[str]:
    return _STREAM.check(options, "stream_options") if isinstance(options, Mapping) else []


def _message_fields(messages: list[Any]) -> None:
    """A message's own fields the model would read, and a call of the history that is not a
    function's, refused by name. Here, not in ``conversation``: a framework's messages are the
    framework's to shape."""
    for position, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") == "tool":
            continue
        where = f"messages[{position}]"
        _MESSAGE.refuse(message, where)
        calls = message.get("tool_calls")
        for number, call in enumerate(calls if isinstance(calls, list) else ()):
            kind = call.get("type", "function") if isinstance(call, Mapping) else "function"
            if kind != "function":
                raise RequestError(
                    f"{where}.tool_calls[{number}].type", f"a {kind!r} call; streamkit carries function calls"
                )


def _chosen(choice: Mapping[str, Any]) -> Any:
    """The tool a choice object names (``{"type": "function", "function": {"name": …}}``)."""
    function = choice.get("function") if choice.get("type") == "function" else None
    return function.get("name") if isinstance(function, Mapping) else None


def conversation(
    provider: str,
    messages: Iterable[Mapping[str, Any]],
    stored: Stored | None = None,
    withheld: Withheld | None = None,
    arguments: Arguments | None = None,
) -> tuple[str | None, list[Entry]]:
    """The system text and the entries of OpenAI-format ``messages``, the turns ``provider``'s.

    Consecutive ``tool`` messages are one ``Results``; each result is matched to its call's name
    by ``tool_call_id``, as Gemini needs the name. ``stored`` finds the ``Turn`` an assistant
    message was made from, where the caller kept it (with its signatures, as received).
    ``withheld`` finds the invalid call a call entry of an assistant message went out for: the
    call goes back as received, and the result written for it is replaced by the call itself, so
    the model is told streamkit's error for it (it never ran). ``arguments`` reads a call's
    arguments (``object_arguments`` unless given).
    """
    system: list[str] = []
    entries: list[Entry] = []
    results: list[Outcome] = []
    names: dict[str, str] = {}
    told: dict[str, InvalidToolCall] = {}
    for position, message in enumerate(messages):
        where = f"messages[{position}]"
        if not isinstance(message, Mapping):
            raise RequestError(where, f"is {type(message).__name__}, not a message object")
        role = message.get("role")
        if role != "tool" and results:
            entries.append(Results(tuple(results)))
            results = []
        if role in ("system", "developer"):
            system.append(_text(message.get("content"), where))
        elif role == "user":
            entries.append(User(_user(message.get("content"), where)))
        elif role == "assistant":
            turn = (stored and stored(message)) or _turn(provider, message, where, withheld, arguments)
            names.update({call.id: call.name for call in turn.calls if call.id and call.name})
            told = _withheld(message, withheld)
            if turn.items:
                entries.append(turn)
        elif role == "tool":
            found = told.get(message.get("tool_call_id") or "")
            results.append(found if found is not None else _result(message, names, where))
        else:
            raise RequestError(where, f"has the role {role!r}; streamkit sends system, user, assistant, tool")
    if results:
        entries.append(Results(tuple(results)))
    return ("\n\n".join(system) if system else None), entries


def _text(content: Any, where: str) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise RequestError(f"{where}.content", f"is {type(content).__name__}, not text")
    texts = []
    for number, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
        if kind != "text":
            raise RequestError(f"{where}.content[{number}]", f"is a {kind!r} part; streamkit sends text only")
        texts.append(str(part.get("text", "")))
    return "".join(texts)


def _user(content: Any, where: str) -> str | Parts:
    """A user message's text as ``_text`` reads it; with an ``image_url`` part, its text and
    images in order."""
    if not isinstance(content, list):
        return _text(content, where)
    return read_parts(content, f"{where}.content", _user_part, joined="")


def _user_part(part: Any, where: str) -> Part:
    kind = kind_of(part)
    if kind == "text":
        return str(part.get("text", ""))
    if kind == "image_url":
        image = part.get("image_url")
        return image_at(image.get("url") if isinstance(image, Mapping) else image, f"{where}.image_url")
    raise RequestError(where, f"is a {kind!r} part; streamkit sends text and images")


def _details(messages: list[Any]) -> list[str]:
    """The ``detail`` of every image of the user messages, named as left out (``left_detail``)."""
    found: list[str] = []
    for position, message in enumerate(messages):
        content = message.get("content") if isinstance(message, Mapping) and message.get("role") == "user" else None
        for number, part in enumerate(content if isinstance(content, list) else ()):
            image = part.get("image_url") if isinstance(part, Mapping) else None
            if isinstance(image, Mapping):
                found += left_detail(image, f"messages[{position}].content[{number}].image_url")
    return found


def _withheld(message: Mapping[str, Any], withheld: Withheld | None) -> dict[str, InvalidToolCall]:
    """The invalid calls an assistant message's call entries went out for, by their entries' ids."""
    if withheld is None:
        return {}
    found = ((entry.get("id"), withheld(entry)) for entry in message.get("tool_calls") or ())
    return {ident: call for ident, call in found if call is not None and isinstance(ident, str)}


def _turn(
    provider: str, message: Mapping[str, Any], where: str, withheld: Withheld | None, arguments: Arguments | None
) -> Turn:
    """An assistant message as the ``Turn`` it was made from: reasoning, text, then calls."""
    items: list[TurnItem] = []
    for block in message.get("thinking_blocks") or ():  # LiteLLM's, with their signatures
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "thinking":
            items.append(Thinking(block.get("thinking") or "", block.get("signature")))
        elif block.get("type") == "redacted_thinking":
            items.append(RedactedThinking(block.get("data") or ""))
    reasoning = message.get("reasoning_content")
    if not items and reasoning and isinstance(reasoning, str):
        items.append(Thinking(reasoning))
    text = _text(message.get("content"), where)
    if text:
        items.append(TextDelta(text))
    calls = message.get("tool_calls") or ()
    if not isinstance(calls, list | tuple):
        raise RequestError(f"{where}.tool_calls", f"is {type(calls).__name__}, not a list of calls")
    for index, entry in enumerate(calls):
        if not isinstance(entry, Mapping):
            raise RequestError(f"{where}.tool_calls[{index}]", f"is {type(entry).__name__}, not a call object")
        items.append(_call(index, entry, f"{where}.tool_calls[{index}]", withheld, arguments or object_arguments))
    return Turn(provider, tuple(items))


def _call(
    index: int, entry: Mapping[str, Any], where: str, withheld: Withheld | None, arguments: Arguments
) -> ToolCall | InvalidToolCall:
    """A call of the history, read again: arguments that are not an object make an invalid
    call; an entry that went out for an invalid call is that call, as received."""
    found = withheld(entry) if withheld is not None else None
    if found is not None:
        return replace(found, index=index)
    function = entry.get("function") or {}
    if not isinstance(function, Mapping):
        raise RequestError(f"{where}.function", f"is {type(function).__name__}, not an object")
    fields = entry.get("provider_specific_fields") or function.get("provider_specific_fields") or {}
    signature = fields.get("thought_signature") if isinstance(fields, Mapping) else None  # LiteLLM's, for Gemini
    ident, state = carried(entry.get("id"))
    if isinstance(signature, str):
        state["thoughtSignature"] = signature
    given = function.get("arguments")
    parsed, issue = arguments(given)
    if parsed is None:
        assert issue is not None
        raw = (
            given
            if isinstance(given, str)
            else json.dumps(given, ensure_ascii=False, separators=(",", ":"), default=repr)
        )
        return InvalidToolCall(index, ident, function.get("name"), raw, (issue,), state=state)
    return ToolCall(index, ident, function.get("name") or "", parsed, state=state)


def object_arguments(arguments: Any) -> tuple[JSONObject | None, ArgumentIssue | None]:
    """A call's arguments as a client hands them back: an object, or its JSON text (none, blank
    or ``null`` is no arguments); anything else is the issue that makes the call invalid. The
    call went out whole once, so this reads strictly and reports plainly: the stream's own
    reading, with every issue it names, is ``_normalize``'s."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip(_JSON_SPACE)):
        return {}, None
    value = arguments
    if isinstance(arguments, str):
        try:
            value = loads_exact(arguments)
        except json.JSONDecodeError as error:
            return None, ArgumentIssue(
                "invalid_json", f"the arguments are not valid JSON: {error.msg}", position=error.pos
            )
        except (ValueError, RecursionError) as error:
            return None, ArgumentIssue("invalid_json", f"the arguments are not valid JSON: {error}")
        if value is None:
            return {}, None
    if isinstance(value, dict):
        return value, None
    return None, ArgumentIssue("not_an_object", f"the arguments are a {type(value).__name__}, not a JSON object")


def _result(message: Mapping[str, Any], names: Mapping[str, str], where: str) -> Outcome:
    ident, _ = carried(message.get("tool_call_id"))  # the names are the calls', by their own ids
    name = message.get("name") or names.get(ident or "")
    if not name:
        raise RequestError(
            f"{where}.tool_call_id", f"answers the call {ident!r}, which no assistant message before it made"
        )
    return (CallRef(ident, name), _text(message.get("content"), where))
