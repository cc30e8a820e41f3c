"""An OpenAI Responses request read into streamkit's terms, for an upstream of another format.

``instructions`` and every ``developer`` or ``system`` message (Codex sends no ``instructions``:
its system prompt is the first ``developer`` item) become the system text, in order. ``input``
is a string (one user message) or items: a user message is a ``User``; assistant messages,
``reasoning`` items and ``function_call`` items in a row are one assistant ``Turn`` (arguments
that are not a JSON object make an ``InvalidToolCall``, which the upstream's history writes as
it came); ``function_call_output`` items in a row are one ``Results``, each matched to its call's
name by ``call_id``. Content is text (``input_text``, ``output_text``), and in a user message or
a call's output images too (``input_image``: a base64 ``data:`` URL or a URL, its ``detail``
left out and named); an image by ``file_id`` (a file only OpenAI's servers hold), a file, or
an item of a kind streamkit does not carry is a ``RequestError`` naming where it is.

Tools: ``function`` tools go on as they came (their ``strict`` is not carried: streamkit checks
every call against its schema). A tool another format cannot declare is left out and named: a
tool OpenAI's servers run (``web_search``, ``file_search``…), a ``custom`` (free-text) tool, and
a ``namespace`` with its functions. Not flattened: Codex runs a namespaced function only when the
call names its namespace (``"namespace"`` on the ``function_call`` item), which a call from
another format never does, so a flattened function would be offered and then refused by the
client ("unsupported call").

What the proxy, stateless, cannot do is a ``RequestError`` (``previous_response_id``,
``conversation``, ``background``); what asks nothing of the upstream's answer is left out and
named (``store``, ``include``, ``prompt_cache_key``, ``client_metadata``, ``metadata``,
``reasoning``, ``text.verbosity``…); ``text.format`` is carried as Chat's ``response_format``,
and ``parallel_tool_calls`` only when false (true is every API's default, and Codex sends it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._json import loads_exact
from ..._turn_types import UNSIGNED, Image, Parts, ReasoningItem, Results, Thinking, Turn, User, carried
from ..._types import ArgumentIssue, CallRef, CustomToolCall, InvalidToolCall, TextDelta, ToolCall
from .._request import Asked, Fields, RequestError, alike, image_at, kind_of, left_detail, read_choice, read_parts
from .request import SETTINGS

if TYPE_CHECKING:
    from ..._turn_types import Entry, Outcome, Part, TurnItem

__all__ = ("read",)

#: The request's fields: read below or by the writer of the request's stream, left out, or
#: refused where they need state the proxy does not keep.
_BODY = Fields(
    {"model", "instructions", "input", "tools", "tool_choice", "max_output_tokens", "stream", "text"},
    settings=SETTINGS,
    dropped={
        "store": "whether OpenAI keeps the response; the proxy keeps nothing",
        "include": "extra output such as encrypted reasoning, which the upstream does not give",
        **alike("prompt_cache_key"),
        "client_metadata": "the client's own ids",
        "metadata": "ids kept with a stored response",
        "reasoning": "but its effort: a summary of it, which the upstream's answer does not hold",
        **alike("service_tier", "user", "safety_identifier"),
        "truncation": "how OpenAI's servers shorten a conversation too long for the model",
    },
    refused={
        "previous_response_id": "the proxy keeps no responses: send the whole conversation as input",
        "conversation": "the proxy keeps no conversations: send the whole conversation as input",
        "background": "the proxy answers while connected and keeps no responses to poll",
    },
)
#: A function tool's fields.
_FUNCTION = Fields({"type", "name", "description", "parameters"}, dropped=alike("strict"))
#: The content parts read as text: what a user sends, and what the model answered.
_TEXT_PARTS = {"input_text", "output_text"}
#: The items of an assistant turn besides its messages, and the items of the results after it.
_TURN_ITEMS = {"function_call", "custom_tool_call", "reasoning"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output"}


def read(body: Mapping[str, Any]) -> Asked:
    """``body``, a Responses request, in streamkit's terms; a field it cannot carry is a ``RequestError``."""
    model, dropped = _BODY.model(body)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise RequestError("instructions", f"a string, not {type(instructions).__name__}")
    entries, system, details = _entries(body.get("input"))
    tools, left_out = _tools(body.get("tools"))
    settings = _BODY.settings_in(body)
    if settings.get("parallel_tool_calls") is True:  # every API's default: asks nothing of one without the setting
        del settings["parallel_tool_calls"]
    text, verbosity = _text(body.get("text"))
    limit = body.get("max_output_tokens")
    return Asked(
        model,
        "\n\n".join(part for part in (instructions, *system) if part) or None,
        tuple(entries),
        tools,
        limit if isinstance(limit, int) else None,
        settings | text,
        read_choice(body.get("tool_choice"), _chosen),
        body.get("stream") is True,
        (*dropped, *details, *verbosity, *left_out),
    )


def _tools(tools: Any) -> tuple[tuple[Any, ...], list[str]]:
    """The function tools, and what was left out of the rest, each named with why."""
    if tools is None:
        return (), []
    if not isinstance(tools, list):
        raise RequestError("tools", "a list of tools is required")
    kept: list[Any] = []
    left: list[str] = []
    for position, tool in enumerate(tools):
        where = f"tools[{position}]"
        kind = tool.get("type") if isinstance(tool, Mapping) else None
        if not isinstance(tool, Mapping) or not isinstance(kind, str):
            raise RequestError(where, "a tool is an object with a type")
        if kind == "function":
            kept.append(tool)
            left += _FUNCTION.check(tool, where)
        else:
            left.append(f"{where} {_named(tool)}({_why(kind)})")
    return tuple(kept), left


def _named(tool: Mapping[str, Any]) -> str:
    name = tool.get("name")
    return f"{name!r} " if isinstance(name, str) else ""


def _why(kind: str) -> str:
    if kind == "namespace":
        return "a namespace: the client runs its functions only for a call that names it, which the upstream's cannot"
    if kind == "custom":
        return "a custom tool takes free text, which the upstream's function tools cannot"
    return f"{kind}, a tool OpenAI's servers run, which the upstream cannot"


def _text(text: Any) -> tuple[dict[str, Any], list[str]]:
    """``text.format`` as Chat's ``response_format``, and ``text.verbosity`` named as left out."""
    if text is None:
        return {}, []
    if not isinstance(text, Mapping):
        raise RequestError("text", f"an object, not {type(text).__name__}")
    unknown = sorted(set(text) - {"format", "verbosity"})
    if unknown:
        raise RequestError(f"text.{unknown[0]}", "streamkit does not carry this field to another format")
    left = ["text.verbosity (a length hint)"] if "verbosity" in text else []
    given = text.get("format")
    kind = given.get("type") if isinstance(given, Mapping) else None
    if given is None or kind == "text":
        return {}, left
    if kind == "json_object":
        return {"response_format": {"type": "json_object"}}, left
    if kind == "json_schema" and isinstance(given, Mapping):
        schema = {key: given[key] for key in ("name", "description", "schema", "strict") if key in given}
        return {"response_format": {"type": "json_schema", "json_schema": schema}}, left
    raise RequestError("text.format", f"{given!r:.80} is not a text, json_object or json_schema format")


def _chosen(choice: Mapping[str, Any]) -> Any:
    """The tool a choice object names (``{"type": "function", "name": …}``)."""
    return choice.get("name") if choice.get("type") == "function" else None


class _Reading:
    """The input items in order: the entries they make, and the system text found among them."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.system: list[str] = []
        self.names: dict[str, str] = {}  # each call's name by its call_id, for the results after it
        self.dropped: list[str] = []  # the images' details, named as left out
        self._turn: list[TurnItem] = []
        self._results: list[Outcome] = []

    def item(self, item: Any, where: str) -> None:
        if not isinstance(item, Mapping):
            raise RequestError(where, f"an input item is an object, not {type(item).__name__}")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            self._message(item, where)
        elif kind in _TURN_ITEMS:
            self._flush_results()
            self._turn.append(self._turn_item(kind, item, where))
        elif kind in _OUTPUTS:
            self._flush_turn()
            self._results.append(self._result(item, where))
        else:
            raise RequestError(where, f"a {kind!r} item, which streamkit does not carry to another format yet")

    def done(self) -> None:
        self._flush_turn()
        self._flush_results()

    def _message(self, item: Mapping[str, Any], where: str) -> None:
        role = item.get("role")
        if role == "user":
            self.done()
            self.entries.append(User(self._parts(item.get("content"), f"{where}.content")))
            return
        text = _content(item.get("content"), f"{where}.content")
        if role in ("developer", "system"):
            self.system.append(text)
        elif role == "assistant":
            self._flush_results()
            self._turn.append(TextDelta(text))
        else:
            raise RequestError(
                f"{where}.role", f"{role!r}; a message is the user's, the assistant's or the developer's"
            )

    def _turn_item(self, kind: str, item: Mapping[str, Any], where: str) -> TurnItem:
        if kind == "reasoning":
            if item.get("encrypted_content") == UNSIGNED:  # reasoning streamkit gave the client unsigned
                return Thinking(_summary_text(item))
            return ReasoningItem(dict(item))
        ident, name, call_id = item.get("id"), item.get("name"), item.get("call_id")
        text = item.get("input" if kind == "custom_tool_call" else "arguments")
        if not isinstance(name, str) or not name or not isinstance(call_id, str) or not isinstance(text, str):
            raise RequestError(where, f"a {kind} item has a name, a call_id and its input as a string")
        self.names[call_id] = name
        index = sum(1 for part in self._turn if not isinstance(part, TextDelta | ReasoningItem))
        state = {"id": ident} if isinstance(ident, str) else {}
        given, carried_state = carried(call_id)  # the upstream's own id, and the state carried in it
        state = {**state, **carried_state}
        if kind == "custom_tool_call":
            return CustomToolCall(index, given, name, text, state=state)
        return _call(index, given, name, text, state)

    def _result(self, item: Mapping[str, Any], where: str) -> Outcome:
        call_id = item.get("call_id")
        name = self.names.get(call_id) if isinstance(call_id, str) else None
        if name is None:
            raise RequestError(f"{where}.call_id", f"{call_id!r} answers no call before it")
        return (CallRef(carried(call_id)[0], name), self._parts(item.get("output"), f"{where}.output"))

    def _parts(self, content: Any, where: str) -> str | Parts:
        """A user message's or an output's text as ``_content`` reads it; with an ``input_image``
        part, its text and images in order."""
        if not isinstance(content, list):
            return _content(content, where)
        return read_parts(content, where, self._part)

    def _part(self, part: Any, where: str) -> Part:
        kind = kind_of(part)
        if kind == "input_image":
            image = _image(part, where)
            self.dropped += left_detail(part, where)
            return image
        if kind in _TEXT_PARTS:
            return str(part.get("text") or "")
        raise RequestError(where, f"a {kind!r} part, where streamkit carries text and images")

    def _flush_turn(self) -> None:
        if self._turn:
            self.entries.append(Turn("openai_responses", tuple(self._turn)))
            self._turn = []

    def _flush_results(self) -> None:
        if self._results:
            self.entries.append(Results(tuple(self._results)))
            self._results = []


def _image(part: Mapping[str, Any], where: str) -> Image:
    if part.get("file_id") is not None:
        raise RequestError(f"{where}.file_id", "an image by file id, a file only OpenAI's servers hold")
    return image_at(part.get("image_url"), f"{where}.image_url")


def _entries(given: Any) -> tuple[list[Entry], list[str], list[str]]:
    """The conversation's entries, the text of the developer and system messages among them, and
    the images' details, named as left out."""
    if isinstance(given, str):
        return [User(given)], [], []
    if not isinstance(given, list):
        raise RequestError("input", "a string or a list of input items is required")
    reading = _Reading()
    for position, item in enumerate(given):
        reading.item(item, f"input[{position}]")
    reading.done()
    return reading.entries, reading.system, reading.dropped


def _call(index: int, call_id: str, name: str, arguments: str, state: Mapping[str, str]) -> ToolCall | InvalidToolCall:
    """A ``function_call`` item's call: its arguments read as a JSON object, or the invalid call."""
    try:
        value = loads_exact(arguments)
    except (ValueError, RecursionError) as exc:
        issue = ArgumentIssue("invalid_json", f"the arguments are not JSON: {exc}")
        return InvalidToolCall(index, call_id, name, arguments, (issue,), state=state)
    if not isinstance(value, dict):
        issue = ArgumentIssue("not_an_object", f"the arguments are JSON but not an object: {type(value).__name__}")
        return InvalidToolCall(index, call_id, name, arguments, (issue,), state=state)
    return ToolCall(index, call_id, name, value, state=state)


def _content(content: Any, where: str) -> str:
    """A message's content (a string, or parts) as its text; a part that is not text is refused."""
    if isinstance(content, str):
        return content
    if not isinstance(content, Sequence) or isinstance(content, bytes):
        raise RequestError(where, "a string or a list of content parts")
    texts: list[str] = []
    for number, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
        if kind not in _TEXT_PARTS:
            raise RequestError(f"{where}[{number}]", f"a {kind!r} part, where streamkit carries text")
        texts.append(str(part.get("text") or ""))
    return "\n\n".join(texts)


def _summary_text(item: Mapping[str, Any]) -> str:
    """A reasoning item's summary, its parts' texts joined."""
    parts = item.get("summary")
    return "".join(str(part.get("text") or "") for part in parts or () if isinstance(part, Mapping))
