"""OpenAI Chat Completions, written from values: the answer a Chat client reads, whatever the
upstream spoke.

Every value is one chunk of its choice (each choice written, ``n > 1`` kept apart): text as
``delta.content``, reasoning (a ``Thinking``'s text, a Responses reasoning item's summary) as
``delta.reasoning_content`` as DeepSeek and the OpenAI-compatible servers write it, and a
``ToolCall`` as one chunk holding the whole call (``delta.tool_calls``: its ``index``, numbered
from 0 within its choice, its id, name and arguments). A choice's first chunk carries
``role: assistant``. The end is a chunk per choice with its ``finish_reason``, a usage chunk
(``choices: []``, as with ``stream_options.include_usage``) when the upstream gave usage, and
``data: [DONE]``. An ``InvalidToolCall`` or a custom tool's call is never written; other values
have no place here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._turn_types import carrying
from ..._types import ResponseEnd, TextDelta, TokenUsage, ToolCall
from .._body import listed, text
from .._encoder import dumps, sse, sse_json
from .._writer import Model, Writer, reasoning_text, stop_reason
from . import FACTS
from .decode import OpenAIChatDecoder

__all__ = ("OpenAIChatWriter", "model_entry", "model_list", "read_models")


@dataclass
class _Choice:
    """What one choice's message holds so far."""

    text: str = ""
    reasoning: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)


class OpenAIModels:
    """OpenAI's platform lists its models alike for Chat and Responses clients."""

    @classmethod
    def model_info(cls, model: Model) -> dict[str, Any]:
        return model_entry(model)

    @classmethod
    def model_list(cls, models: Sequence[Model]) -> dict[str, Any]:
        return model_list(models)

    @classmethod
    def read_models(cls, body: object) -> list[Model]:
        return read_models(body)


class OpenAIChatWriter(OpenAIModels, Writer):
    facts = FACTS
    id_prefix = "chatcmpl-"
    choices = True

    def begin(self) -> None:
        self._choices: dict[int, _Choice] = {}
        self._opened: set[int] = set()  # the choices whose first chunk (with the role) is written

    def start(self) -> list[bytes]:
        self._choice(0)
        return [self._chunk(0, {"content": ""})]

    def write(self, value: object) -> list[bytes]:
        choice: int = getattr(value, "choice", 0)
        if isinstance(value, TextDelta):
            self._choice(choice).text += value.text
            return [self._chunk(choice, {"content": value.text})]
        if isinstance(value, ToolCall):
            calls = self._choice(choice).calls
            function = {"name": value.name, "arguments": dumps(value.input)}
            ident = carrying(value.id or self.minted("call_", self._calls), value.state)
            call = {"id": ident, "type": "function", "function": function}
            calls.append(call)
            self._calls += 1
            return [self._chunk(choice, {"tool_calls": [{"index": len(calls) - 1, **call}]})]
        text = reasoning_text(value)
        if text:
            self._choice(choice).reasoning += text
            return [self._chunk(choice, {"reasoning_content": text})]
        return []

    def end(self, end: ResponseEnd) -> list[bytes]:
        self._end = end
        out = [self._chunk(number, {}, self._finish(number)) for number in sorted(self._choices)]
        if end.tokens is not None:
            usage = {**self._base(), "choices": [], "usage": _usage(end.tokens)}
            out.append(sse_json(None, usage))
        return [*out, sse(None, OpenAIChatDecoder.done or "")]

    def final(self) -> dict[str, Any]:
        choices = [
            {"index": number, "message": _message(choice), "logprobs": None, "finish_reason": self._finish(number)}
            for number, choice in sorted(self._choices.items())
        ]
        tokens = None if self._end is None else self._end.tokens
        usage = {} if tokens is None else {"usage": _usage(tokens)}
        return {**self._base("chat.completion"), "choices": choices, **usage}

    def _choice(self, number: int) -> _Choice:
        return self._choices.setdefault(number, _Choice())

    def _finish(self, number: int) -> str:
        finish = "other" if self._end is None else self._end.finish
        return stop_reason(self.facts, finish, bool(self._choice(number).calls))

    def _base(self, kind: str = "chat.completion.chunk") -> dict[str, Any]:
        return {"id": self.response_id, "object": kind, "created": self.created, "model": self.model}

    def _chunk(self, number: int, delta: dict[str, Any], finish: str | None = None) -> bytes:
        """One chunk of choice ``number``; its first carries the role."""
        if number not in self._opened:
            self._opened.add(number)
            delta = {"role": "assistant", **delta}
        choice = {"index": number, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse_json(None, {**self._base(), "choices": [choice]})


def model_entry(model: Model) -> dict[str, Any]:
    """One model as OpenAI's platform lists it (Chat's and Responses' alike): who owns it, or
    ``system``, its owner on OpenAI's own, when none was given."""
    return {"id": model.id, "object": "model", "created": model.created, "owned_by": model.owner or "system"}


def model_list(models: Sequence[Model]) -> dict[str, Any]:
    return {"object": "list", "data": [model_entry(model) for model in models]}


def read_models(body: object) -> list[Model]:
    """``data``'s models; ``created`` and ``owned_by`` kept where they have their types."""
    entries = listed(body.get("data")) if isinstance(body, dict) else []
    return [
        Model(ident, _seconds(entry.get("created")), owner=text(entry, "owned_by"))
        for entry in entries
        if (ident := text(entry, "id")) is not None
    ]


def _seconds(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _message(choice: _Choice) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": choice.text or None, "refusal": None}
    if choice.reasoning:
        message["reasoning_content"] = choice.reasoning
    if choice.calls:
        message["tool_calls"] = choice.calls
    return message


def _usage(tokens: TokenUsage) -> dict[str, Any]:
    prompt, completion = tokens.input_tokens or 0, tokens.output_tokens or 0
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if tokens.cache_read_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": tokens.cache_read_tokens}
    if tokens.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": tokens.reasoning_tokens}
    return usage
