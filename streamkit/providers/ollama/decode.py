"""Ollama native chat stream (``POST /api/chat``), newline-delimited JSON.

Each line is one JSON object. Every entry of ``message.tool_calls`` is a whole call, with its
``function.arguments`` as an object, so it is delivered the moment its line is read. One line
often holds several calls, and a call may ride on the last line itself. Quirks:

- Every parallel call carries ``function.index`` 0, so calls are numbered by their position in
  the response (0, 1, 2... across all lines) and that index is never read.
- Ids (``call_`` and 8 characters) are sent by newer servers only; older ones send none.
- ``done: true`` ends the response. Its ``done_reason`` is the stop reason, ``stop`` even when
  tools were called; usage comes from its ``prompt_eval_count`` and ``eval_count``.
- A mid-stream error is a line ``{"error": "..."}``, sent with HTTP status 200.
- ``message.thinking`` is the model's reasoning, not text: it is ignored.
- A call cut by the output limit (``done_reason: "length"``) never arrives as a call: the
  server holds a call's text back until it parses whole, and sends what it held as
  ``content`` on the ``done`` line (``server/routes.go``, fixture ``length_limit``).

Docs: https://github.com/ollama/ollama/blob/main/docs/api.md (``Generate a chat completion``).
Ollama's OpenAI-compatible ``/v1/chat/completions`` is SSE: use ``openai_chat`` for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._events import CallReceived, Event, ResponseEnded, StopReceived, TextReceived, UsageReceived
from ..._types import TokenUsage
from .._base import Decoder, count, field, optional
from . import FACTS

__all__ = ("OllamaDecoder",)

#: The fields of the last line copied into the usage, under their own names.
_USAGE_FIELDS = ("prompt_eval_count", "eval_count")
_NOTHING: list[Event] = []


class OllamaDecoder(Decoder):
    slug = "ollama"
    framing = "ndjson"
    value_paths = (("message", "tool_calls", None, "function", "arguments"),)
    content_types = ("application/x-ndjson", "application/jsonl", "application/json")
    finish_reasons = FACTS.finish_reasons

    @classmethod
    def tokens(cls, usage: Mapping[str, Any]) -> TokenUsage:
        return TokenUsage(count(usage, "prompt_eval_count"), count(usage, "eval_count"), None, None)

    def __init__(self, *, early_close: bool = False) -> None:
        super().__init__(early_close=early_close)
        self._calls = 0  # calls seen so far: the next call's index

    def feed_payload(self, payload: Any, event: str | None = None) -> list[Event]:
        if not isinstance(payload, dict):
            raise self.error(f"a line must be a JSON object, got {type(payload).__name__}", event=event)
        error = payload.get("error")
        if error is not None:  # a string; an object from proxies in front of Ollama
            return [self.errors.received(error)]
        message = optional(payload, "message", dict, "$", self, event)
        out: list[Event] = []
        if message is not None:
            content = optional(message, "content", str, "$.message", self, event)
            if content:
                out.append(TextReceived(content))
            tool_calls = optional(message, "tool_calls", list, "$.message", self, event)
            for position, call in enumerate(tool_calls or ()):
                out.append(self._call(call, f"$.message.tool_calls[{position}]", event))
        if optional(payload, "done", bool, "$", self, event):
            out.append(StopReceived(optional(payload, "done_reason", str, "$", self, event), cut_open_calls=True))
            usage = {key: payload[key] for key in _USAGE_FIELDS if payload.get(key) is not None}
            if usage:
                out.append(UsageReceived(usage))
            out.append(ResponseEnded())
        return out or _NOTHING

    def _call(self, call: Any, where: str, event: str | None) -> CallReceived:
        if not isinstance(call, dict):
            raise self.error(f"{where} must be an object, got {type(call).__name__}", event=event)
        function = field(call, "function", dict, where, self, event)
        name = field(function, "name", str, f"{where}.function", self, event)
        call_id = optional(call, "id", str, where, self, event) or None  # "" is no id
        index = self._calls
        self._calls += 1
        # The arguments go to the normalizer exactly as sent: an object, or nothing for {}.
        return CallReceived(index, call_id, name, function.get("arguments"))


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
