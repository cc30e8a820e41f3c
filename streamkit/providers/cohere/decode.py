"""Cohere v2 chat stream (``POST /v2/chat`` with ``stream: true``).

Each call is ``tool-call-start`` (id and name) → ``tool-call-delta`` (string fragments of the
arguments) → ``tool-call-end``, all carrying the call's ``index``; ``tool-call-end`` is the end
marker. A call with no deltas at all has no arguments (``{}``), and the arguments text ``null``
becomes ``{}`` noted as ``null_arguments`` (the normalizer's rule). ``message-end`` carries the
finish reason and usage and ends the stream; a call still open there was cut off. A
``message-end`` whose finish reason is ``ERROR`` or ``TIMEOUT``, or that carries ``delta.error``,
is a provider error. The tool plan (``tool-plan-delta``) is the text written before the calls,
so it is text, as ``content-delta`` text is. A ``data: [DONE]`` after ``message-end`` is never
read; one before it ends the stream with the open calls cut off.
Docs: https://docs.cohere.com/v2/docs/streaming, https://docs.cohere.com/docs/tool-use-streaming
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ... import _events as ev
from ..._types import TokenUsage
from .._base import ErrorShape, TypedEventDecoder, count, field, optional, usage_received
from . import FACTS

__all__ = ("CohereDecoder",)

_FAILED = frozenset({"ERROR", "TIMEOUT"})
#: Known events that carry nothing for calls: ignored, as unknown ones are.
_SKIPPED = ("message-start", "content-start", "content-end", "citation-start", "citation-end", "debug")
_NOTHING: list[ev.Event] = []


class CohereDecoder(TypedEventDecoder):
    slug = "cohere"
    done = "[DONE]"  # sent by some gateways after message-end
    errors = ErrorShape(keys=())
    finish_reasons = FACTS.finish_reasons
    event_types = frozenset(
        {
            "message-start",
            "content-start",
            "content-delta",
            "content-end",
            "tool-plan-delta",
            "tool-call-start",
            "tool-call-delta",
            "tool-call-end",
            "citation-start",
            "citation-end",
            "message-end",
        }
    )
    plain_fragments = True  # a tool-call-delta changes no state
    plain_text = True  # a content-delta of text changes no state

    @classmethod
    def tokens(cls, usage: Mapping[str, Any]) -> TokenUsage:
        """Counted under ``tokens``, else under ``billed_units``."""
        counted = "tokens" if isinstance(usage.get("tokens"), Mapping) else "billed_units"
        return TokenUsage(
            count(usage, counted, "input_tokens"),
            count(usage, counted, "output_tokens"),
            count(usage, "cached_tokens"),
            None,
        )

    def feed(self, frame: ev.Frame) -> list[ev.Event]:
        if frame.data == self.done:
            return [ev.ResponseEnded()]
        return super().feed(frame)

    def _call(self, payload: Any, event: str) -> dict[str, Any]:
        delta = field(payload, "delta", dict, "$", self, event)
        message = field(delta, "message", dict, "$.delta", self, event)
        return field(message, "tool_calls", dict, "$.delta.message", self, event)

    def _call_start(self, payload: Any, event: str) -> list[ev.Event]:
        index = field(payload, "index", int, "$", self, event)
        call = self._call(payload, event)
        function = field(call, "function", dict, "$.delta.message.tool_calls", self, event)
        out: list[ev.Event] = [
            ev.CallOpened(
                index,
                optional(call, "id", str, "$.delta.message.tool_calls", self, event),
                optional(function, "name", str, "$.delta.message.tool_calls.function", self, event),
            )
        ]
        arguments = optional(function, "arguments", str, "$.delta.message.tool_calls.function", self, event)
        if arguments:
            out.append(ev.ArgumentsDelta(index, arguments))
        return out

    def _call_delta(self, payload: Any, event: str) -> list[ev.Event]:
        index = field(payload, "index", int, "$", self, event)
        function = field(self._call(payload, event), "function", dict, "$.delta.message.tool_calls", self, event)
        text = field(function, "arguments", str, "$.delta.message.tool_calls.function", self, event)
        return [ev.ArgumentsDelta(index, text)] if text else _NOTHING

    def _call_end(self, payload: Any, event: str) -> list[ev.Event]:
        return [ev.CallEnded(field(payload, "index", int, "$", self, event))]

    def _plan_delta(self, payload: Any, event: str) -> list[ev.Event]:
        delta = field(payload, "delta", dict, "$", self, event)
        message = field(delta, "message", dict, "$.delta", self, event)
        text = field(message, "tool_plan", str, "$.delta.message", self, event)
        return [ev.TextReceived(text)] if text else _NOTHING

    def _content_delta(self, payload: Any, event: str) -> list[ev.Event]:
        delta = field(payload, "delta", dict, "$", self, event)
        message = field(delta, "message", dict, "$.delta", self, event)
        content = field(message, "content", dict, "$.delta.message", self, event)
        if "thinking" in content or content.get("type", "text") != "text":
            return _NOTHING  # thinking is not the answer; its deltas carry only a "thinking" key
        text = field(content, "text", str, "$.delta.message.content", self, event)
        return [ev.TextReceived(text, 0, optional(payload, "index", int, "$", self, event))] if text else _NOTHING

    def _message_end(self, payload: Any, event: str) -> list[ev.Event]:
        delta = optional(payload, "delta", dict, "$", self, event) or {}
        reason = optional(delta, "finish_reason", str, "$.delta", self, event)
        error = delta.get("error")
        if reason in _FAILED or error:
            return [ev.ErrorReceived(reason, self.errors.read(error)[1] or f"the response ended with {reason}")]
        out = usage_received(delta, "usage", "$.delta", self, event)
        # Calls end with their own tool-call-end: one still open here was cut off.
        out += [ev.StopReceived(reason, cut_open_calls=True), ev.ResponseEnded()]
        return out

    _HANDLERS: ClassVar[dict[str, Callable[[CohereDecoder, Any, str], list[ev.Event]]]] = {
        "tool-call-start": _call_start,
        "tool-call-delta": _call_delta,
        "tool-call-end": _call_end,
        "tool-plan-delta": _plan_delta,
        "content-delta": _content_delta,
        "message-end": _message_end,
    }
