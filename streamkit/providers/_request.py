"""What every provider's ``request.py`` shares: the shape of a request body's writer, and the
pieces several formats lay out alike.

A ``request.py`` writes a streamed request's body from a history already in the provider's
wire shape (its ``history.py`` wrote it), the system text, the tools offered and an output
limit; it also writes a user's plain text as that provider's message, and says whether its API
wants consecutive messages of one role joined (``MERGE_ROLES``). Where the request goes and
how it is keyed are the provider's facts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from .._errors import UsageError
from .._turn_types import Entry, Image, Part, Parts
from .._types import JSONObject

__all__ = (
    "Asked",
    "LEFT_OUT_SETTINGS",
    "Body",
    "RequestError",
    "Message",
    "Place",
    "RequestWriter",
    "ToolSpec",
    "Written",
    "CHOICES",
    "chat_choice",
    "Fields",
    "alike",
    "read_choice",
    "openai_choice",
    "chat_completions",
    "chat_user",
    "function",
    "image_at",
    "left_detail",
    "merged",
    "no_effort",
    "plain_user",
    "same_names",
    "settings",
    "system_first",
)

Message: TypeAlias = dict[str, Any]


class ToolSpec(Protocol):
    """A tool offered to the model, as a request writer reads it."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> JSONObject: ...


Body: TypeAlias = Callable[[str, list[Message], "str | None", Sequence[ToolSpec], "int | None"], dict[str, Any]]
"""Lays a request's body out: model, history, system text, tools, output limit."""


#: An OpenAI Chat parameter's place in another body: the path of keys down to its field.
Place: TypeAlias = tuple[str, ...]
#: A setting a body holds otherwise than as a field of its own: the fields it writes from the
#: setting's value. A writer declares these in ``WRITTEN``, beside its ``SETTINGS``.
Written: TypeAlias = Callable[[Any], dict[str, Any]]


class RequestWriter(Protocol):
    """A provider's ``request`` module."""

    MERGE_ROLES: bool
    #: The settings, named as OpenAI Chat names them (``temperature``, ``stop``…), that its body
    #: takes, each at its place (``("generationConfig", "topP")``).
    SETTINGS: Mapping[str, Place]

    def effort(self, level: str, budgets: Mapping[str, int]) -> dict[str, Any] | None:
        """A reasoning effort (``low``…) as its body's fields, thinking budgets from ``budgets``
        where the API takes tokens; None where it has no such setting."""
        ...

    def body(
        self, model: str, history: list[Message], system: str | None, tools: Sequence[ToolSpec], limit: int | None
    ) -> dict[str, Any]: ...

    def user(self, content: str | Parts) -> Message:
        """A user's message: its text, or its text and images (a ``RequestError`` for an image
        the format cannot take)."""
        ...

    def choice(self, choice: str) -> dict[str, Any]:
        """A tool choice (``auto``, ``required``, ``none``, or one tool's name) as its body's
        fields; ``auto``, every API's default, as none."""
        ...


def same_names(*names: str) -> Mapping[str, Place]:
    """Settings its body takes under OpenAI Chat's own names, at the top."""
    return {name: (name,) for name in names}


def no_effort(level: str, budgets: Mapping[str, int]) -> dict[str, Any] | None:
    """For an API with no reasoning effort to set (or one that takes it as a setting)."""
    return None


#: Settings left out, and named, where the upstream's format has no place for them: what they
#: are, and why leaving them out asks the same. Any other setting without a place is refused.
LEFT_OUT_SETTINGS = {
    "reasoning_effort": "reasoning_effort (how long the model reasons: the upstream's format sets none, "
    "its model reasons as it is set to)",
}


#: Fields that several formats hold alike and every reader leaves out alike: why leaving each out
#: asks the same. A function's ``strict``: streamkit holds every call to its schema itself, and
#: tells the model a call that is not, so the answer's calls are held to it either way.
_ALIKE = {
    "cache_control": "a cache hint",
    "prompt_cache_key": "a cache hint",
    "service_tier": "a capacity hint",
    "user": "an end user's id for abuse reports",
    "safety_identifier": "an end user's id for abuse reports",
    "strict": "the upstream is not asked to hold the arguments to the schema: streamkit checks each call against it",
}


def alike(*names: str) -> dict[str, str]:
    """The fields ``names``, left out, each with the one reason every reader gives it."""
    return {name: _ALIKE[name] for name in names}


def settings(writer: RequestWriter, given: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``given`` settings (OpenAI Chat's names) as fields of the provider's body, and the names
    its body has no place for: what to do with those is the caller's (refuse, or leave out)."""
    fields: dict[str, Any] = {}
    left: list[str] = []
    written: Mapping[str, Written] = getattr(writer, "WRITTEN", {})
    for name, value in given.items():
        place = writer.SETTINGS.get(name)
        if place is not None:
            fields = merged(fields, _at(place, value))
        elif name in written:
            fields = merged(fields, written[name](value))
        else:
            left.append(name)
    return fields, left


def _at(place: Place, value: Any) -> dict[str, Any]:
    for key in reversed(place[1:]):
        value = {key: value}
    return {place[0]: value}


def merged(body: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``extra`` laid over ``body``; an object in both is merged key by key, so that a setting
    under ``generationConfig`` keeps the output limit already there."""
    out = dict(body)
    for key, value in extra.items():
        below = out.get(key)
        out[key] = merged(below, value) if isinstance(below, Mapping) and isinstance(value, Mapping) else value
    return out


def function(tool: ToolSpec) -> dict[str, Any]:
    """A tool as a function declaration: its name, description and JSON Schema parameters."""
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


def system_first(system: str | None, history: list[Message]) -> list[Message]:
    """The history behind a system message, for the formats that carry it as one."""
    return [{"role": "system", "content": system}, *history] if system is not None else history


def chat_completions(limit_key: str, *, usage: bool) -> Body:
    """The Chat Completions body, for each provider speaking it: they name the output limit
    differently, and not all of them report usage in the stream when asked."""

    def body(
        model: str, history: list[Message], system: str | None, tools: Sequence[ToolSpec], limit: int | None
    ) -> dict[str, Any]:
        written: dict[str, Any] = {"model": model, "messages": system_first(system, history), "stream": True}
        if usage:
            written["stream_options"] = {"include_usage": True}
        if tools:
            written["tools"] = [{"type": "function", "function": function(tool)} for tool in tools]
        if limit is not None:
            written[limit_key] = limit
        return written

    return body


#: The tool choices in streamkit's terms besides one tool's name: OpenAI's own words.
CHOICES = ("auto", "required", "none")


def read_choice(choice: Any, read: Callable[[Mapping[str, Any]], Any], words: Sequence[str] = CHOICES) -> str:
    """A request's tool choice in streamkit's terms: ``auto`` when none is given, one of the
    ``words`` the format takes as a string (OpenAI's ``CHOICES``; Anthropic's none), or what
    ``read`` makes of an object (one tool's name, or a choice the format names otherwise);
    anything else is a ``RequestError``."""
    if choice is None:
        return "auto"
    read_as = choice if choice in words else read(choice) if isinstance(choice, Mapping) else None
    if not isinstance(read_as, str):
        raise RequestError("tool_choice", f"{choice!r:.80} is not a tool choice streamkit carries to another format")
    return read_as


def openai_choice(named: Callable[[str], Any]) -> Callable[[str], dict[str, Any]]:
    """A tool choice as OpenAI's APIs take it: ``required``, ``none``, or one tool as ``named``
    writes it (Chat nests the name under ``function``, Responses does not)."""

    def choice(choice: str) -> dict[str, Any]:
        if choice == "auto":
            return {}
        return {"tool_choice": choice if choice in CHOICES else named(choice)}

    return choice


#: Chat Completions' tool choice.
chat_choice = openai_choice(lambda name: {"type": "function", "function": {"name": name}})


def plain_user(text: str) -> Message:
    """A user's text as the Chat-like formats carry it: one string content."""
    return {"role": "user", "content": text}


def chat_user(content: str | Parts) -> Message:
    """A user's message as Chat Completions carries it (OpenAI, Mistral): its text as one string,
    or text and ``image_url`` parts, an image's bytes as a ``data:`` URL."""
    if isinstance(content, str):
        return plain_user(content)
    return {"role": "user", "content": [_chat_part(part) for part in content.items]}


def _chat_part(part: str | Image) -> Message:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    return {"type": "image_url", "image_url": {"url": part.as_url}}


def read_parts(
    content: Sequence[Any], where: str, read: Callable[[Any, str], Part], joined: str = "\n\n"
) -> str | Parts:
    """A list of content parts, each read by ``read(part, where it is)``, as ``content_of`` has them."""
    return content_of([read(part, f"{where}[{number}]") for number, part in enumerate(content)], joined)


def content_of(parts: Sequence[Part], joined: str = "\n\n") -> str | Parts:
    """Parts read: their text as one string, as before images were carried; with an image,
    every part in order."""
    if any(isinstance(part, Image) for part in parts):
        return Parts(tuple(parts))
    return joined.join(part for part in parts if isinstance(part, str))


def kind_of(part: Any) -> str:
    """A content part's ``type``; for what is not an object, its Python type's name (to say what it is)."""
    return str(part.get("type")) if isinstance(part, Mapping) else type(part).__name__


#: A ``data:`` URL of base64 bytes: its media type, and the bytes as base64 text.
_DATA_URL = re.compile(r"data:([^;,]+);base64,(.*)\Z", re.DOTALL)


def image_at(url: Any, where: str) -> Image:
    """The image an OpenAI ``image_url`` names: the bytes of a base64 ``data:`` URL (kept as
    their text), or the URL itself; any other ``data:`` URL is a ``RequestError``."""
    if not isinstance(url, str) or not url:
        raise RequestError(where, "an image's URL is a string")
    if not url.startswith("data:"):
        return Image(None, url=url)
    found = _DATA_URL.match(url)
    if found is None:
        raise RequestError(where, f"{url:.40} is a data: URL that is not base64, which no other format takes")
    return Image(found[1], data=found[2])


def left_detail(image: Mapping[str, Any], where: str) -> list[str]:
    """An OpenAI image's ``detail``, named as left out unless it is ``auto`` (the default).

    ``detail`` says how much of an image's resolution OpenAI's servers pay tokens for (``low``:
    one 512-pixel tile); the image itself is the same. No other format has it: Anthropic and
    Gemini read every image at the size they fit it to, and the upstream is sent the same
    bytes. So it is a cost hint, left out and named, never a change to what is shown.
    """
    detail = image.get("detail")
    if detail in (None, "auto"):
        return []
    why = "a cost hint for OpenAI's servers; the upstream reads the image at its own resolution"
    return [f"{where}.detail ({detail!r}: {why})"]


class RequestError(UsageError):
    """A client's request streamkit cannot carry to an upstream as it was asked: ``where`` names
    the field (``messages[2].content[0]``), ``reason`` says what it is and why."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where, self.reason = where, reason


@dataclass(frozen=True)
class Asked:
    """A client's request read into streamkit's terms, to be written as another provider's.

    Attributes:
        model: the model asked for.
        system: the system text, its parts joined; ``None`` when there is none.
        entries: the conversation: user messages, assistant turns, tool results.
        tools: the tools offered, as the client wrote them (``read_tools`` reads any format).
        limit: the output limit asked for, if any.
        settings: the sampling settings under OpenAI Chat's names (``temperature``, ``stop``…).
        tool_choice: ``auto``, ``required``, ``none``, or the one tool's name.
        stream: whether the client asked for a stream.
        dropped: the fields read and left out, each named with why (a cache hint, metadata).
    """

    model: str
    system: str | None
    entries: tuple[Entry, ...]
    tools: tuple[Any, ...] = ()
    limit: int | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    tool_choice: str = "auto"
    stream: bool = False
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Fields:
    """What a reader knows of one object of a request (the body, a tool, a block): the fields it
    ``read``s; those it leaves out, ``dropped``, each with why leaving it out asks the same (a
    cache hint, an id for abuse reports), named where set; and those it ``refused``, each with why
    (it would change what the model is asked, or needs state the proxy does not keep), refused
    where set. Unset (absent, null, false, empty) asks nothing, as a client that writes every
    field sends it; any other field is a ``RequestError`` naming it."""

    read: Set[str] = frozenset()
    dropped: Mapping[str, str] = field(default_factory=dict)
    refused: Mapping[str, str] = field(default_factory=dict)
    #: A body's settings at their places (its request writer's ``SETTINGS``): read as its own
    #: fields (Anthropic's ``stop_sequences``), and given by ``settings_in``.
    settings: Mapping[str, Place] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "read", frozenset(self.read) | {place[0] for place in self.settings.values()})

    def settings_in(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The settings ``body`` holds at their places, under OpenAI Chat's names: the inverse of
        ``settings``. One stop sequence given as a string (OpenAI Chat takes either) is a list of
        it, the form every other format's stop sequences take."""
        found: dict[str, Any] = {}
        for name, place in self.settings.items():
            value: Any = body
            for key in place:
                value = value.get(key) if isinstance(value, Mapping) else None
            if value is not None:
                found[name] = [value] if name == "stop" and isinstance(value, str) else value
        return found

    def model(self, body: Mapping[str, Any]) -> tuple[str, list[str]]:
        """The model a request's ``body`` asks for, once every field of it is known, and its
        dropped fields named (``check``)."""
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise RequestError("model", "the model is missing")
        return model, self.check(body)

    def check(self, given: Mapping[str, Any], where: str = "") -> list[str]:
        """The fields of ``given``, at ``where`` (``tools[0]``; the body at ``""``), checked: a
        refused one set, or one unknown, is a ``RequestError``; the dropped ones set, named."""
        self.refuse(given, where)
        unknown = sorted(set(given) - self.read - set(self.dropped) - set(self.refused))
        if unknown:
            raise RequestError(_field(where, unknown[0]), "streamkit does not carry this field to another format")
        return self.named(given, where)

    def refuse(self, given: Mapping[str, Any], where: str) -> None:
        """A ``RequestError`` for the first refused field ``given`` sets, with its reason."""
        for name, why in self.refused.items():
            if _set(given.get(name)):
                raise RequestError(_field(where, name), why)

    def named(self, given: Mapping[str, Any], where: str) -> list[str]:
        """The dropped fields ``given`` sets, each named where it is with why it is left out
        (``tools[0].strict (...)``)."""
        return [f"{_field(where, name)} ({why})" for name, why in self.dropped.items() if _set(given.get(name))]


def _set(value: Any) -> bool:
    """Whether a field asks something: not absent, null, false or empty (0 is a value)."""
    return not (value is None or value is False or (isinstance(value, str | list | dict) and not value))


def _field(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name
