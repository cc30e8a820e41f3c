"""What every exit adapter shares: the one JSON-dumping function, ids, and the error payload.

Inside streamkit a call is ``{id, name, input}`` with ``input`` an object; it becomes a
provider's wire shape only here, at the exit. Arguments that a provider wants as a JSON string
(OpenAI Chat and Responses, Cohere, Mistral) are serialized by ``arguments_text``, once per
call and nowhere else; an invalid call's raw text is written back exactly as received.

A tool's output is written or refused in one place, ``output_json``: what ``dumps`` writes
(JSON's values, and what orjson writes of a tuple, a dataclass, a date, an enum or a UUID) is
taken, and every adapter is handed it as the plain JSON values that text reads back as
(``plain_output``), so a provider that takes an object (Gemini, Bedrock) gets the same value the
others get as text; anything else (a set, an object of the application's own) is a
``UsageError`` naming the tool, the call, the type and where in the output it is.

Ids: a provider may require an id form that another does not produce (Mistral: 9 letters and
digits; Anthropic and Bedrock: letters, digits, ``_`` and ``-``), and Gemini may give no id at
all. The mapping below is a pure function of the call, so a call and its result always get the
same id.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, Protocol, TypeAlias

import orjson

from .. import _inexact, _json
from .._errors import UsageError
from .._turn_types import Outcome, Part, Parts, Ran
from .._types import Call, CallRef, CustomToolCall, InvalidToolCall, JSONObject, ToolCall, ToolResult

__all__ = (
    "TRUNCATED_MESSAGE",
    "Call",
    "Message",
    "Outcome",
    "Ran",
    "ResultWriters",
    "ShownAfter",
    "arguments_text",
    "call_id",
    "chat_message",
    "check_calls",
    "check_outcomes",
    "dumps",
    "error_payload",
    "failure_payload",
    "function_calls",
    "input_object",
    "mistral_id",
    "name_of",
    "named",
    "one_result",
    "output_json",
    "plain_output",
    "result_text",
    "result_writers",
    "results",
    "text_and_calls",
    "text_writers",
    "safe_id",
)

Message: TypeAlias = dict[str, Any]
"""One entry of a provider's conversation history (a message, a content block, an item)."""

#: What a model is told about a call cut off by the output limit, instead of the parse error.
TRUNCATED_MESSAGE = "your arguments were cut off by the output limit; send less per call"

_ALPHABET = string.ascii_letters + string.digits
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}\Z")


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON text: the one place adapters serialize. Integers keep any size."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None).decode()
    except TypeError:  # an integer beyond 64 bits: the standard library writes it exactly
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys, default=_as_orjson)


def _as_orjson(value: Any) -> Any:
    """What orjson writes of a value the standard library does not know (a dataclass, a date)."""
    return orjson.loads(orjson.dumps(value))


#: What a message refusing an output tells the tool's author to return instead.
_RETURN_JSON = "a tool returns a string, or JSON values (dict, list, str, int, float, bool, None)"


def output_json(call: Call | CallRef, output: Any) -> str:
    """A tool's output as JSON text, or a ``UsageError`` naming the tool, the call, and the type
    (and where in the output it is) of what JSON cannot carry: the one place an output is judged."""
    try:
        return dumps(output)
    except (TypeError, ValueError, RecursionError) as exc:
        where = _unwritable(output, [], set())
        raise UsageError(f"the output of {named(call)} {where}, which JSON cannot carry: {_RETURN_JSON}") from exc


def plain_output(call: Call | CallRef, output: Any) -> Any:
    """A tool's output as every adapter writes it: a string as it is, anything else as the plain
    JSON values its ``output_json`` text reads back as (integers exact)."""
    if isinstance(output, str):
        return output
    text = output_json(call, output)
    try:
        plain = orjson.loads(text)
    except orjson.JSONDecodeError:  # an integer of 309 digits or more
        return _json.loads_exact(text)
    return _json.loads_exact(text) if _inexact.may_be_inexact(plain) else plain


def _unwritable(value: Any, path: list[Any], open_: set[int]) -> str:
    """Where in ``value`` the first thing ``dumps`` cannot write is, and what it is."""
    if id(value) in open_:
        return f"refers to itself at {_json.json_path(path)}"
    if isinstance(value, dict | list | tuple):
        open_.add(id(value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(value, dict) and not _writes({key: None}):
                return f"holds a dict key of type {type(key).__name__} at {_json.json_path(path)}"
            if not _writes(item):
                return _unwritable(item, [*path, key], open_)
        open_.discard(id(value))
    kind = type(value).__name__
    return f"is of type {kind}" if not path else f"holds a value of type {kind} at {_json.json_path(path)}"


def _writes(value: Any) -> bool:
    try:
        dumps(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


def arguments_text(call: Call) -> str:
    """The arguments as JSON text: ``input`` serialized, or an invalid call's raw text as
    received (a custom call's text is its own)."""
    if isinstance(call, ToolCall):
        return dumps(call.input)
    return call.input if isinstance(call, CustomToolCall) else call.raw


def input_object(call: Call) -> JSONObject:
    """The arguments as an object, for providers that take one (Anthropic, Gemini, Bedrock,
    Ollama). An invalid call whose arguments never parsed is written with ``{}``; its raw text
    goes back to the model in the error result."""
    if isinstance(call, CustomToolCall):
        raise UsageError(_ONLY_RESPONSES)
    return call.input if call.input is not None else {}


def name_of(call: Call | CallRef) -> str:
    """The tool's name; ``""`` for an invalid call the provider never named."""
    return call.name or ""


def named(call: Call | CallRef) -> str:
    """How a message names a call: its tool, and its id (its index when the provider gave none)."""
    if call.id:
        return f"{call.name} (call {call.id})"
    return call.name if isinstance(call, CallRef) else f"{call.name} (call at index {call.index})"


def result_text(result: Any) -> str:
    """A tool's result as text: a string as is, anything else as JSON."""
    return result if isinstance(result, str) else dumps(result)


def failure_payload(result: Any) -> JSONObject:
    """What the model is told about a tool that raised: ``{"ok": false, "errors": [{"kind":
    "tool_error", "message": ...}]}``, the shape of an invalid call's errors. ``result`` is the
    exception (its message is ``"Type: text"``), a message, or any JSON value (as JSON text)."""
    if isinstance(result, BaseException):
        text = str(result)
        message = f"{type(result).__name__}: {text}" if text else type(result).__name__
    else:
        message = result_text(result)
    return {"ok": False, "errors": [{"kind": "tool_error", "message": message}]}


def error_payload(call: InvalidToolCall) -> JSONObject:
    """``{"ok": false, "errors": [...]}``: what the model is told about an invalid call."""
    errors = []
    for issue in call.errors:
        entry = issue.to_dict()
        if issue.kind == "truncated":
            entry["message"] = TRUNCATED_MESSAGE
        errors.append(entry)
    return {"ok": False, "errors": errors}


def call_id(call: Call | CallRef) -> str:
    """The id adapters write for a call: its own, or for a call that has none (Gemini 2.5,
    Ollama) one derived from the call itself (``call_`` and 24 letters and digits), the same
    every time. A framework that needs an id for every call takes this one."""
    if call.id:
        return call.id
    if isinstance(call, CallRef):
        raise UsageError(f"the call of {call.name!r} has no id, and this provider needs one; pass the ToolCall")
    return "call_" + _digest(f"{call.choice}:{call.index}:{call.name}:{_fingerprint(call)}", 24)


def safe_id(call: Call | CallRef) -> str:
    """An id of letters, digits, ``_`` and ``-``, at most 64 long (Anthropic, Bedrock)."""
    given = call_id(call)
    if _SAFE_ID.match(given):
        return given
    return f"{_UNSAFE.sub('_', given)[:40]}_{_digest(given, 8)}"


def mistral_id(call: Call | CallRef) -> str:
    """An id of exactly 9 letters and digits, as Mistral requires."""
    given = call_id(call)
    return given if _MISTRAL_ID.match(given) else _digest(given, 9)


def _fingerprint(call: Call) -> str:
    return dumps(call.input, sort_keys=True) if isinstance(call, ToolCall) else arguments_text(call)


def _digest(text: str, length: int) -> str:
    number = int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big")
    out = []
    for _ in range(length):
        number, rest = divmod(number, len(_ALPHABET))
        out.append(_ALPHABET[rest])
    return "".join(out)


def function_calls(calls: Iterable[Call], id_of: Callable[[Call], str] = call_id) -> list[Message]:
    """OpenAI-style ``tool_calls`` entries (OpenAI Chat, Cohere, Mistral): ``function.arguments``
    is JSON text, serialized here once per call."""
    return [
        {"id": id_of(call), "type": "function", "function": {"name": name_of(call), "arguments": arguments_text(call)}}
        for call in calls
    ]


#: Why a ``CustomToolCall`` cannot be written by an adapter other than OpenAI Responses'.
_ONLY_RESPONSES = "a CustomToolCall (free text for a custom tool) is written only by the openai_responses adapter"


def check_calls(calls: Iterable[Any], text: str | None, *, custom: bool = False) -> list[Call]:
    """The calls as a list, each checked to be a call (a ``CustomToolCall`` only where the
    provider has custom tools: ``custom``); at least one call or some text."""
    out = list(calls)
    for position, call in enumerate(out):
        if isinstance(call, CustomToolCall) and not custom:
            raise UsageError(f"calls[{position}]: {_ONLY_RESPONSES}")
        if not isinstance(call, Call):
            raise UsageError(f"calls[{position}] must be a ToolCall or an InvalidToolCall, got {type(call).__name__}")
    if text is not None and not isinstance(text, str):
        raise UsageError(f"text must be a string or None, got {type(text).__name__}")
    if not out and not text:
        raise UsageError("an assistant message needs at least one call or some text")
    return out


def text_and_calls(
    calls: Iterable[Any],
    text: str | None,
    text_block: Callable[[str], Message],
    call_block: Callable[[Call], Message],
    *,
    custom: bool = False,
) -> list[Message]:
    """The checked calls as blocks, after the text's block when there is text: the order the
    providers whose turns are lists of blocks or items record them in (Anthropic, Bedrock,
    Gemini, OpenAI Responses)."""
    checked = check_calls(calls, text, custom=custom)
    blocks = [text_block(text)] if text else []
    blocks.extend(call_block(call) for call in checked)
    return blocks


class _AssistantMessage(Protocol):
    def __call__(self, calls: Iterable[Call], *, text: str | None = None) -> list[Message]: ...


#: A provider's block for a call, from its id (``safe_id``), its name and its input object.
CallBlock = Callable[[str, str, JSONObject], Message]


def block_of(call_block: CallBlock) -> Callable[[Call], Message]:
    """``call_block`` given a call: its id kept to what the API takes, its input an object."""
    return lambda call: call_block(safe_id(call), name_of(call), input_object(call))


def block_message(text_block: Callable[[str], Message], call_block: CallBlock) -> _AssistantMessage:
    """The ``assistant_message`` of a provider whose assistant turn is one message of blocks
    under ``content`` (Anthropic, Bedrock), made once here from its two block writers."""
    written = block_of(call_block)

    def assistant_message(calls: Iterable[Call], *, text: str | None = None) -> list[Message]:
        """The assistant message that records ``calls`` (and the ``text`` before them) in the history."""
        return [{"role": "assistant", "content": text_and_calls(calls, text, text_block, written)}]

    return assistant_message


def chat_message(
    calls: Iterable[Any], text: str | None, content: Any, tool_calls: Callable[[list[Call]], list[Message]]
) -> list[Message]:
    """The OpenAI-style assistant message (OpenAI Chat, Mistral, Ollama): ``content``, and
    ``tool_calls`` only when there are calls."""
    checked = check_calls(calls, text)
    message: Message = {"role": "assistant", "content": content}
    if checked:
        message["tool_calls"] = tool_calls(checked)
    return [message]


class ShownAfter(NamedTuple):
    """How a provider whose tool results carry text alone (OpenAI Chat, Ollama) shows a result's
    images: after the turn's tool messages, in one user message.

    OpenAI documents a ``tool`` message's content as text (a string, or ``text`` parts alone:
    https://platform.openai.com/docs/api-reference/chat/create, openai-python's
    ``ChatCompletionToolMessageParam``), and Ollama's tool messages follow it; a model of these
    formats is shown an image in a user message. The tool messages must come right after the
    assistant message whose calls they answer, so the images come after all of them: each
    result's tool message keeps its text and says how many images follow, and the user message
    introduces each call's images by its tool and id. The model sees the same bytes, told which
    call returned them; nothing is dropped. (Mistral's validator refuses a user message after a
    tool message: its results refuse images.)
    """

    #: The provider's user message for text and images (its request writer's ``user``).
    user: Callable[[Parts], Message]
    #: The id its tool messages name a call by (OpenAI Chat's ``call_id``); None: the call's own.
    id_of: Callable[[Call | CallRef], str] | None = None


def results(
    outcomes: Iterable[Any],
    written: Callable[[Ran, Any], Message],
    failed: Callable[[Call | CallRef, JSONObject], Message],
    *,
    images: bool | ShownAfter = False,
) -> list[Message]:
    """Each outcome written by ``written(call, result)`` or, for an invalid call, a tool that
    raised or a failed ``ToolResult``, by ``failed(call, payload)`` with the object the model is told.

    A result that holds an image (``Parts``) goes to ``written`` as it is where the provider's
    tool results carry images (``images=True``); where they carry text alone and a user message
    shows images (a ``ShownAfter``), ``written`` is given its text and a note, and the images
    follow all the results in one user message. Elsewhere it is a ``UsageError`` naming the
    call, as is an error result that holds one: an image is never dropped, nor written as JSON text.
    """
    out: list[Message] = []
    shown: list[tuple[Ran, Parts]] = []
    for item in check_outcomes(outcomes):
        item = _judged(item, images is not False)
        if isinstance(item, tuple) and isinstance(item[1], Parts):
            if isinstance(images, ShownAfter):
                shown.append((item[0], item[1]))
                out.append(written(item[0], _noted(item[1])))
            else:
                out.append(written(item[0], item[1]))
            continue
        if isinstance(item, InvalidToolCall):
            out.append(failed(item, error_payload(item)))
        elif isinstance(item, ToolResult):
            call = item.call
            if item.error is not None:
                out.append(failed(call, item.error))
            else:
                assert not isinstance(call, InvalidToolCall)  # a ToolResult of an invalid call has an error
                out.append(written(call, plain_output(call, item.output)))
        elif len(item) == 3 and item[2]:
            told = item[1] if isinstance(item[1], BaseException) else plain_output(item[0], item[1])
            out.append(failed(item[0], failure_payload(told)))
        else:
            out.append(written(item[0], plain_output(item[0], item[1])))
    if shown:
        assert isinstance(images, ShownAfter)  # only then are images kept back
        out.append(images.user(_showing(shown, images.id_of)))
    return out


def _images(count: int) -> str:
    return "1 image" if count == 1 else f"{count} images"


def _noted(parts: Parts) -> str:
    """A result's text, and how many of its images follow in the user message after the results."""
    count = len(parts.images)
    note = f"({_images(count)} {'follows' if count == 1 else 'follow'} in a user message)"
    return f"{parts.text}\n\n{note}" if parts.text else note


def _showing(shown: list[tuple[Ran, Parts]], id_of: Callable[[Call | CallRef], str] | None) -> Parts:
    """Each call's images, in call order, after a text naming the call (its tool, and its id as
    the tool messages name it)."""
    items: list[Part] = []
    for call, parts in shown:
        by = named(call) if id_of is None else f"{name_of(call)} (call {id_of(call)})"
        count = len(parts.images)
        items += [f"The {'image' if count == 1 else _images(count)} {by} returned:", *parts.images]
    return Parts(tuple(items))


def _judged(item: Outcome, images: bool) -> Outcome:
    """An outcome whose result is ``Parts``: text alone as its text; an image kept where the
    provider carries a result's images, refused elsewhere and in an error."""
    if isinstance(item, ToolResult) and item.error is None and isinstance(item.output, Parts):
        assert not isinstance(item.call, InvalidToolCall)  # a ToolResult of an invalid call has an error
        item = (item.call, item.output)
    if not isinstance(item, tuple) or not isinstance(item[1], Parts):
        return item
    call, parts = item[0], item[1]
    failed = len(item) == 3 and bool(item[2])
    if not parts.images:
        return (call, parts.text, failed)
    if failed:
        raise UsageError(f"the error result of {named(call)} holds an image; an error is told to the model as text")
    if not images:
        raise UsageError(f"the result of {named(call)} holds an image, which this provider's tool results cannot carry")
    return item


def check_outcomes(outcomes: Iterable[Any]) -> list[Outcome]:
    """The outcomes as a list, each a ``(call, result)`` pair, a ``(call, result, is_error)``
    triple (``call`` a ``ToolCall`` or a ``CallRef``), an ``InvalidToolCall`` or a ``ToolResult``."""
    out = list(outcomes)
    for position, item in enumerate(out):
        ok = isinstance(item, InvalidToolCall | ToolResult) or (
            isinstance(item, tuple)
            and len(item) in (2, 3)
            and isinstance(item[0], ToolCall | CustomToolCall | CallRef)
            and (len(item) == 2 or isinstance(item[2], bool))
        )
        if not ok:
            raise UsageError(
                f"outcomes[{position}] must be a (call, result) pair, a (call, result, is_error) triple, "
                f"an InvalidToolCall or a ToolResult, got {item!r:.80}"
            )
    if not out:
        raise UsageError("there are no results to write")
    return out


def one_result(call: Any, result: Any, is_error: Any) -> list[Outcome]:
    """The outcomes of ``tool_result_message(call, result, is_error=...)``, checked."""
    if not isinstance(is_error, bool):
        raise UsageError(f"is_error must be a bool, got {type(is_error).__name__}")
    if not isinstance(call, ToolCall | CustomToolCall | CallRef):
        raise UsageError(f"call must be a ToolCall, a CustomToolCall or a CallRef, got {type(call).__name__}")
    return [(call, result, is_error)]


class _ResultsMessage(Protocol):
    def __call__(self, outcomes: Iterable[Outcome]) -> list[Message]: ...


class _ResultMessage(Protocol):
    def __call__(self, call: Ran, result: Any, *, is_error: bool = False) -> list[Message]: ...


class _ErrorMessage(Protocol):
    def __call__(self, call: InvalidToolCall) -> list[Message]: ...


class ResultWriters(NamedTuple):
    """An adapter's three result functions, made once here from its two entry writers."""

    tool_results_message: _ResultsMessage
    tool_result_message: _ResultMessage
    error_result_message: _ErrorMessage


def result_writers(
    written: Callable[[Ran, Any], Message],
    failed: Callable[[Call | CallRef, JSONObject], Message],
    *,
    into: str | None = None,
    images: bool | ShownAfter = False,
) -> ResultWriters:
    """The result functions of an adapter whose entries ``written`` and ``failed`` write.

    ``into`` names the key of the one user message that holds all of a turn's results
    (Anthropic and Bedrock ``content``, Gemini ``parts``), as those APIs require; without it each
    result is its own history entry. ``images`` says ``written`` takes a result that holds an
    image (``Parts``), or how a user message after the results shows its images (``ShownAfter``).
    """
    assert not (into and isinstance(images, ShownAfter))  # results in a user message carry their images

    def tool_results_message(outcomes: Iterable[Outcome]) -> list[Message]:
        """The history entries carrying a turn's results, one per outcome in order (in one user
        message where the provider wants them together)."""
        entries = results(outcomes, written, failed, images=images)
        return [{"role": "user", into: entries}] if into else entries

    def tool_result_message(call: Ran, result: Any, *, is_error: bool = False) -> list[Message]:
        """The entries carrying one call's result (a string as is, anything else as JSON, or as
        the provider takes an object).

        ``call`` is the ``ToolCall`` or a ``CallRef`` (its id and name). ``is_error=True`` says
        the tool raised: ``result`` (a message, or the exception) is then written as this
        provider's error result, as an invalid call's errors are.
        """
        return tool_results_message(one_result(call, result, is_error))

    def error_result_message(call: InvalidToolCall) -> list[Message]:
        """The entries telling the model what was wrong with its call: ``{"ok": false, "errors": [...]}``."""
        return tool_results_message([call])

    return ResultWriters(tool_results_message, tool_result_message, error_result_message)


def text_writers(
    entry: Callable[[Call | CallRef, str], Message],
    parts: Callable[[Ran, Parts], Message] | None = None,
    *,
    shown: ShownAfter | None = None,
) -> ResultWriters:
    """The result functions of an adapter whose result and error entries differ only in their
    text, ``entry(call, text)``: a result as ``result_text`` writes it, an error as its payload's
    JSON text (OpenAI Chat and Responses, Cohere, Mistral, Ollama); a result that holds an image
    by ``parts``, where the provider's results carry images (OpenAI Responses), or its images in
    a user message after the results (``shown``: OpenAI Chat, Mistral, Ollama)."""

    def written(call: Ran, result: Any) -> Message:
        if isinstance(result, Parts):
            assert parts is not None  # only given where images are carried
            return parts(call, result)
        return entry(call, result_text(result))

    images = shown if shown is not None else parts is not None
    return result_writers(written, lambda call, payload: entry(call, dumps(payload)), images=images)
