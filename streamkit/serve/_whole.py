"""A response that was not streamed: its calls read from the whole body, and checked as a stream's are.

Each format's body lists its calls in one place (Chat's ``choices[].message.tool_calls``,
Responses' ``function_call`` and ``custom_tool_call`` items of ``output`` (a custom call's text
kept as text), Anthropic's ``tool_use`` blocks of
``content``); each is normalized by the pipeline's own normalizer (so its arguments are parsed
by the same strict rules) and checked against the request's tools. A body cut by the output
limit cuts calls as in a stream: Chat's ``finish_reason: "length"`` every call of its choice
(its calls end only at the finish reason), Responses' ``status: "incomplete"`` each item not
``completed``, Anthropic's ``stop_reason: "max_tokens"`` the last block (the only one still open).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .._ending import finish_of, tokens_of
from .._events import RawCall
from .._limits import Limits
from .._normalize import normalize
from .._types import TEXT_CALL, Call, ResponseEnd
from .._validate import Toolset
from ..providers import DECODERS

__all__ = ("whole_calls", "whole_end")


def whole_calls(fmt: str, body: Any, toolset: Toolset | None, limits: Limits) -> list[Call]:
    """The calls of a whole response body (a JSON value), each normalized and checked."""
    if not isinstance(body, dict):
        return []
    raws = {"openai_chat": _chat, "openai_responses": _responses, "anthropic": _anthropic}[fmt](body)
    calls = [normalize(raw, limits.max_depth) for raw in raws]
    return calls if toolset is None else [toolset.validate(call) for call in calls]


def whole_end(fmt: str, body: Any, calls: Sequence[Call]) -> ResponseEnd:
    """The end of a whole response body, as a stream's ``ResponseEnd`` says it (for telemetry):
    its stop reason, usage and token counts, by the format's decoder's own tables."""
    body = body if isinstance(body, dict) else {}
    if fmt == "openai_chat":
        first = next(iter(_list(body.get("choices"))), None)
        stop = first.get("finish_reason") if isinstance(first, dict) else None
    elif fmt == "openai_responses":
        details = body.get("incomplete_details")
        stop = details.get("reason") if isinstance(details, dict) else None
        stop = stop or body.get("status")
    else:
        stop = body.get("stop_reason")
    stop = stop if isinstance(stop, str) else None
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
    decoder = DECODERS[fmt]
    finish = finish_of(decoder.finish_reasons, stop, bool(calls))
    return ResponseEnd(stop, usage, finish=finish, tokens=tokens_of(decoder.tokens, usage))


def _chat(body: dict[str, Any]) -> Iterator[RawCall]:
    for number, choice in enumerate(_list(body.get("choices"))):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        cut = choice.get("finish_reason") == "length"
        for index, entry in enumerate(_list(message.get("tool_calls"))):
            function = entry.get("function") if isinstance(entry, dict) else None
            function = function if isinstance(function, dict) else {}
            where = choice.get("index", number)
            yield RawCall(
                index,
                _text(entry, "id"),
                _text(function, "name"),
                function.get("arguments"),
                choice=where if isinstance(where, int) else number,
                truncated=cut,
            )


def _responses(body: dict[str, Any]) -> Iterator[RawCall]:
    cut = body.get("status") == "incomplete"
    for index, item in enumerate(_list(body.get("output"))):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in ("function_call", TEXT_CALL[1]):
            open_ = item.get("status") == "incomplete" or (cut and item.get("status") != "completed")
            custom = kind == TEXT_CALL[1]
            text = item.get("input" if custom else "arguments")
            state = dict([TEXT_CALL]) if custom else {}
            yield RawCall(index, _text(item, "call_id"), _text(item, "name"), text, truncated=open_, state=state)


def _anthropic(body: dict[str, Any]) -> Iterator[RawCall]:
    blocks = _list(body.get("content"))
    cut = body.get("stop_reason") == "max_tokens"
    for index, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "tool_use":
            last = cut and index == len(blocks) - 1
            yield RawCall(index, _text(block, "id"), _text(block, "name"), block.get("input"), truncated=last)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(obj: Any, key: str) -> str | None:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, str) else None
