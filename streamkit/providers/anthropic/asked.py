"""An Anthropic Messages request read into streamkit's terms, for an upstream of another format.

``system`` (a string or text blocks, and any ``role: "system"`` message, which Claude Code puts
among the messages) becomes the system text; each user message its tool results (``tool_result``
blocks, matched to their calls' names by ``tool_use_id``) then its text; each assistant message
the ``Turn`` it records (thinking with its signature, text, ``tool_use`` calls). What no other
format carries is left out and named (``cache_control``, ``metadata``, Claude Code's
``context_management`` and ``output_config``, ``thinking``). A tool is read to its last field: its
hints (a cache breakpoint, ``strict``, eager input streaming) left out and named, a deferred tool
not offered and named, what changes what the model is offered (``input_examples``,
``allowed_callers``) refused; so is a block's ``citations``, and a key ``tool_choice`` does not
take. An ``image`` block (base64 or a
URL), in a user message or a tool's result, is carried as an ``Image``; what streamkit cannot
carry yet (a document, an image by file id, a server tool's block) is a ``RequestError`` naming
where it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._turn_types import UNSIGNED, Image, Parts, RedactedThinking, Results, Thinking, Turn, User, carried
from ..._types import CallRef, TextDelta, ToolCall
from .._request import Asked, Fields, RequestError, alike, content_of, read_choice, read_parts
from .request import SETTINGS

if TYPE_CHECKING:
    from ..._turn_types import Entry, Outcome, Part, TurnItem

__all__ = ("read",)

#: The request's fields: read below or by the writer of the request's stream, or left out.
_BODY = Fields(
    {"model", "system", "messages", "tools", "max_tokens", "tool_choice", "stream"},
    settings=SETTINGS,
    dropped={
        "metadata": "its user id, for abuse reports",
        "context_management": "how Anthropic's servers trim old tool results",
        "output_config": "an effort hint",
        "thinking": "the upstream model reasons as it is set to",
        **alike("service_tier"),
    },
)
_CHOICES = {"auto": "auto", "any": "required", "none": "none"}
_CHOICE = Fields({"type", "name", "disable_parallel_tool_use"})
#: The fields of a tool of the client's own (``type`` absent or ``custom``; another type is a
#: tool Anthropic defines, which ``read_tools`` refuses): those left out ask nothing of the
#: answer, those refused change what the model is offered.
_TOOL = Fields(
    {"type", "name", "description", "input_schema", "defer_loading"},
    dropped={
        **alike("cache_control", "strict"),
        "eager_input_streaming": "how the call's input is streamed, not what it is",
    },
    refused={
        "input_examples": "examples of the tool's input shown to the model, which the upstream's tool "
        "definitions cannot hold",
        "allowed_callers": "who may call the tool (Anthropic's code execution), which the upstream cannot set",
    },
)
#: Set on a tool, these ask what the API asks unset: read as unset.
_TOOL_DEFAULTS = {"allowed_callers": ["direct"]}
#: The fields any content block may hold beside its kind's own, checked on every block.
_BLOCK = Fields(
    dropped=alike("cache_control"),
    refused={"citations": "the places in documents the text cites, which the upstream's messages cannot hold"},
)


def read(body: Mapping[str, Any]) -> Asked:
    """``body``, a Messages request, in streamkit's terms; a field it cannot carry is a ``RequestError``."""
    model, dropped = _BODY.model(body)
    hints = _tool_fields(body.get("tools")) + _block_fields(body)
    system = _system(body.get("system"))
    entries, more = _entries(body.get("messages"))
    settings = _BODY.settings_in(body)
    settings.pop("thinking", None)
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping):
        _CHOICE.check(choice, "tool_choice")
        if choice.get("disable_parallel_tool_use") is True:
            settings["parallel_tool_calls"] = False  # carried where the upstream has the setting, else refused
    limit = body.get("max_tokens")
    return Asked(
        model,
        "\n\n".join(part for part in (system, *more) if part) or None,
        tuple(entries),
        _offered(body.get("tools")),
        limit if isinstance(limit, int) else None,
        settings,
        read_choice(choice, _choice, words=()),
        body.get("stream") is True,
        (*dropped, *hints),
    )


def _tool_fields(tools: Any) -> list[str]:
    """Each tool of the client's own checked to its last field: what is left out of it, named.
    A deferred tool (``defer_loading``) is named as not offered (``_offered``)."""
    found: list[str] = []
    for position, tool in enumerate(tools if isinstance(tools, list) else ()):
        if isinstance(tool, Mapping) and tool.get("type") in (None, "custom"):
            where = f"tools[{position}]"
            tool = {key: value for key, value in tool.items() if _TOOL_DEFAULTS.get(key) != value}
            found += _TOOL.check(tool, where)
            if _deferred(tool):
                found.append(f"{where} {tool.get('name')!r} ({_DEFERRED})")
    return found


#: Why a deferred tool is not offered.
_DEFERRED = (
    "defer_loading: Anthropic offers it only once its tool search finds it, and the upstream has no tool "
    "search: not offered"
)


def _deferred(tool: Any) -> bool:
    return isinstance(tool, Mapping) and tool.get("defer_loading") is True


def _offered(tools: Any) -> tuple[Any, ...]:
    """The tools the model is offered: all but the deferred ones (``_DEFERRED``)."""
    return tuple(tool for tool in tools or () if not _deferred(tool))


def _block_fields(body: Mapping[str, Any]) -> list[str]:
    """The fields every block of the system text and the messages may hold, checked: a cache
    breakpoint named where it is, a citation refused."""
    found = _fields_of(body.get("system"), "system")
    for position, message in enumerate(body.get("messages") or ()):
        if isinstance(message, Mapping):
            found += _fields_of(message.get("content"), f"messages[{position}].content")
    return found


def _fields_of(blocks: Any, where: str) -> list[str]:
    """``_block_fields`` for one list of blocks, and the blocks of each tool's result in it."""
    found: list[str] = []
    for number, block in enumerate(blocks if isinstance(blocks, list) else ()):
        if isinstance(block, Mapping):
            at = f"{where}[{number}]"
            _BLOCK.refuse(block, at)
            found += _BLOCK.named(block, at)
            if block.get("type") == "tool_result":
                found += _fields_of(block.get("content"), f"{at}.content")
    return found


def _system(system: Any) -> str:
    if system is None or isinstance(system, str):
        return system or ""
    if isinstance(system, list):
        return "\n\n".join(_text_block(block, f"system[{number}]") for number, block in enumerate(system))
    raise RequestError("system", f"a string or a list of text blocks, not {type(system).__name__}")


def _text_block(block: Any, where: str) -> str:
    if not isinstance(block, Mapping) or block.get("type") != "text":
        kind = block.get("type") if isinstance(block, Mapping) else type(block).__name__
        raise RequestError(where, f"a {kind!r} block, where streamkit carries text")
    return str(block.get("text") or "")


def _choice(choice: Mapping[str, Any]) -> Any:
    """A choice object in streamkit's terms: the tool it names, or its kind in OpenAI's words."""
    kind = choice.get("type")
    return choice.get("name") if kind == "tool" else _CHOICES.get(kind) if isinstance(kind, str) else None


def _entries(messages: Any) -> tuple[list[Entry], list[str]]:
    """The conversation's entries, and the text of any ``role: "system"`` message among them."""
    if not isinstance(messages, list):
        raise RequestError("messages", "a list of messages is required")
    entries: list[Entry] = []
    system: list[str] = []
    names: dict[str, str] = {}
    for position, message in enumerate(messages):
        where = f"messages[{position}]"
        if not isinstance(message, Mapping):
            raise RequestError(where, f"a message is an object, not {type(message).__name__}")
        role, content = message.get("role"), message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise RequestError(f"{where}.content", "a string or a list of blocks")
        if role == "system":
            system.append("\n\n".join(_text_block(block, f"{where}.content[{n}]") for n, block in enumerate(blocks)))
        elif role == "assistant":
            turn = _turn(blocks, where)
            names.update({call.id: call.name or "" for call in turn.calls if call.id})
            entries.append(turn)
        elif role == "user":
            entries += _user(blocks, where, names)
        else:
            raise RequestError(f"{where}.role", f"{role!r}; a message is the user's or the assistant's")
    return entries, system


def _turn(blocks: Sequence[Any], where: str) -> Turn:
    items: list[TurnItem] = []
    for number, block in enumerate(blocks):
        at = f"{where}.content[{number}]"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text":
            items.append(TextDelta(str(block.get("text") or "")))
        elif kind == "tool_use":
            items.append(_call(len([i for i in items if isinstance(i, ToolCall)]), block, at))
        elif kind == "thinking":
            signature = block.get("signature")
            items.append(Thinking(str(block.get("thinking") or ""), None if signature == UNSIGNED else signature))
        elif kind == "redacted_thinking":
            items.append(RedactedThinking(str(block.get("data") or "")))
        else:
            raise RequestError(at, f"a {kind!r} block, which streamkit does not carry to another format yet")
    return Turn("anthropic", tuple(items))


def _call(index: int, block: Mapping[str, Any], where: str) -> ToolCall:
    ident, name, arguments = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(name, str) or not isinstance(arguments, Mapping):
        raise RequestError(where, "a tool_use block has a name and an input object")
    given, state = carried(ident if isinstance(ident, str) else None)  # the upstream's own id, and its state
    return ToolCall(index, given, name, dict(arguments), state=state)


def _user(blocks: Sequence[Any], where: str, names: Mapping[str, str]) -> list[Entry]:
    """A user message: its tool results first (one ``Results``), then its text and images."""
    results: list[Outcome] = []
    parts: list[Part] = []
    for number, block in enumerate(blocks):
        at = f"{where}.content[{number}]"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "tool_result":
            results.append(_result(block, at, names))
        else:
            parts.append(_part(block, at))
    entries: list[Entry] = [Results(tuple(results))] if results else []
    content = content_of(parts)
    return [*entries, User(content)] if content or not entries else entries


def _part(block: Any, where: str) -> Part:
    """A text block's text, or an ``image`` block's ``Image``."""
    kind = block.get("type") if isinstance(block, Mapping) else type(block).__name__
    if kind == "image":
        return _image(block.get("source"), f"{where}.source")
    if kind != "text":
        raise RequestError(where, f"a {kind!r} block, where streamkit carries text and images")
    return str(block.get("text") or "")


def _image(source: Any, where: str) -> Image:
    kind = source.get("type") if isinstance(source, Mapping) else None
    if kind == "base64" and isinstance(source.get("media_type"), str) and isinstance(source.get("data"), str):
        return Image(source["media_type"], data=source["data"])
    if kind == "url" and isinstance(source.get("url"), str):
        return Image(None, url=source["url"])
    raise RequestError(where, f"a {kind!r} image source, where streamkit carries base64 data or a URL")


def _result(block: Mapping[str, Any], where: str, names: Mapping[str, str]) -> Outcome:
    ident, _ = carried(block.get("tool_use_id"))  # the names are the calls', by their own ids
    name = names.get(ident) if isinstance(ident, str) else None
    if name is None:
        raise RequestError(f"{where}.tool_use_id", f"{ident!r} answers no tool_use block before it")
    content = block.get("content")
    failed = block.get("is_error") is True
    if isinstance(content, list):
        content = read_parts(content, f"{where}.content", _part)
        if failed and isinstance(content, Parts):
            raise RequestError(f"{where}.content", "an error result holding an image; an error is told as text")
    elif content is not None and not isinstance(content, str):
        raise RequestError(f"{where}.content", "a string or content blocks")
    return (CallRef(str(ident), name), content or "", failed)
