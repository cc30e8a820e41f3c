"""AWS Bedrock ConverseStream (``POST /model/{modelId}/converse-stream``).

The bytes are an AWS binary event stream (``streamkit._awsstream``); each frame's name is the
``:event-type`` and its data the JSON body. A tool call opens with ``contentBlockStart`` whose
``start.toolUse`` gives its ``toolUseId`` and ``name``, gets its arguments as string fragments
in ``contentBlockDelta`` ``delta.toolUse.input``, and ends at the ``contentBlockStop`` of its
``contentBlockIndex``: that is the call's end marker. ``messageStop`` carries the stop reason
and cuts off any call still open (``max_tokens``); ``metadata`` (the usage) comes after it and
ends the response. Quirks:

- Text blocks open with no ``contentBlockStart``, or with an empty ``start: {}`` (gateways):
  neither is a call.
- A ``toolUse`` start of ``type: "server_tool_use"`` and a ``toolResult`` block are a tool run
  by the provider, in the same stream: never handed out as calls.
- Every body carries a random-length ``p`` padding field, which is ignored.
- Exceptions (``throttlingException``, ``validationException``, ``modelStreamErrorException``…)
  arrive as ``exception:<type>`` frames and become a ``ProviderError`` with that type.
- A stream that ends after ``messageStop`` without ``metadata`` ended normally, with no usage.

Reasoning is carried beside the calls. ``delta.reasoningContent`` is a union of three shapes:
``text`` and ``signature`` fragments (strings), joined into one ``Thinking`` at the block's
``contentBlockStop``, and ``redactedContent``, a blob: base64 text in the JSON body, bytes in the
events boto3 parses (encoded back to the same base64 text), each a ``RedactedThinking``. They go
back as ``reasoningContent.reasoningText`` / ``redactedContent`` blocks, unchanged.
Docs: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningTextBlock.html,
https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningContentBlockDelta.html

boto3's ``converse_stream()`` yields the same events already decoded, as dicts with one key,
the event type (``{"contentBlockDelta": {...}}``). ``feed_payload(event_dict)`` takes them as
they are, so ``Assembler("bedrock").feed_payload(event)`` wraps a boto3 stream.
Docs: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ... import _events as ev
from ..._errors import ProviderProtocolError
from ..._types import TokenUsage
from .._base import Decoder, ErrorShape, field, optional, usage_received
from ..anthropic.decode import cached_apart
from . import FACTS

__all__ = ("BedrockDecoder",)

_CALL, _SERVER, _THINKING = "call", "server", "thinking"

_NOTHING: list[ev.Event] = []
#: Known events that carry no call data (the role); like unknown events, they are skipped.
_SKIPPED_EVENTS = frozenset({"messageStart"})
_EXCEPTION = "exception:"
_ERROR = "error:"


class BedrockDecoder(Decoder):
    slug = "bedrock"
    framing = "eventstream"
    content_types = ("application/vnd.amazon.eventstream",)
    errors = ErrorShape(keys=(), message_fields=("message", "Message"))  # "Message" in some services
    finish_reasons = FACTS.finish_reasons

    @classmethod
    def tokens(cls, usage: Mapping[str, Any]) -> TokenUsage:
        return cached_apart(usage, "inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")

    def __init__(self, *, early_close: bool = False) -> None:
        super().__init__(early_close=early_close)
        #: The kind of each block started, by contentBlockIndex: what its deltas and its stop
        #: translate to. Whether it is open is the tables' to judge; a block of a tool run by the
        #: provider, which no table tracks, is forgotten at its stop.
        self._kinds: dict[int, str] = {}
        self._stopped = False  # messageStop was read
        self._metadata_seen = False
        self._ended = False

    def feed(self, frame: ev.Frame) -> list[ev.Event]:
        name = frame.event or ""
        if name.startswith(_EXCEPTION):
            kind = name[len(_EXCEPTION) :]
            try:
                body = self.load(frame.data, name) if frame.data.strip() else {}
            except ProviderProtocolError:  # not JSON: the text itself is the message
                body = frame.data
            return [ev.ErrorReceived(kind, self.errors.read(body)[1] or kind)]  # the type is the frame's
        if name.startswith(_ERROR):
            kind = name[len(_ERROR) :]
            return [ev.ErrorReceived(kind, frame.data or kind)]
        return super().feed(frame)

    def feed_payload(self, payload: Any, event: str | None = None) -> list[ev.Event]:
        if event is None:  # boto3's shape: {"<event type>": body}
            if not isinstance(payload, dict) or len(payload) != 1 or not isinstance(next(iter(payload), ""), str):
                got = f"keys {list(payload)}" if isinstance(payload, dict) else type(payload).__name__
                raise self.error(f"an event must be an object with one key, the event type; got {got}")
            ((event, payload),) = payload.items()
        if not isinstance(payload, dict):
            raise self.error(f"the event body must be an object, got {type(payload).__name__}", event=event)
        if event == "contentBlockDelta":  # by far the most common event
            return self._delta(payload, event)
        handler = self._HANDLERS.get(event)
        if handler is not None:
            return handler(self, payload, event)
        if event in _SKIPPED_EVENTS:
            return _NOTHING
        if event.endswith("Exception"):  # boto3 names them by their type, without a prefix
            return [ev.ErrorReceived(event, self.errors.read(payload)[1] or event)]
        return _NOTHING  # unknown events: providers add them often

    def flush(self) -> list[ev.Event]:
        if self._stopped and not self._ended:
            self._ended = True
            return [ev.ResponseEnded()]  # no metadata after messageStop: the response is whole
        return _NOTHING

    def _block_start(self, payload: Any, event: str) -> list[ev.Event]:
        index = field(payload, "contentBlockIndex", int, "$", self, event)
        start = field(payload, "start", dict, "$", self, event)
        tool = optional(start, "toolUse", dict, "$.start", self, event)
        self._kinds.pop(index, None)  # an index started again is the new block's
        if tool is not None:
            if tool.get("type") == "server_tool_use":
                self._kinds[index] = _SERVER
                return _NOTHING
            self._kinds[index] = _CALL  # a second start of an open call: the accumulator judges it
            call_id = field(tool, "toolUseId", str, "$.start.toolUse", self, event)
            return [ev.CallOpened(index, call_id, field(tool, "name", str, "$.start.toolUse", self, event))]
        if "toolResult" in start:
            self._kinds[index] = _SERVER
        return _NOTHING  # a text block opened with `start: {}`, an image…

    def _delta(self, payload: Any, event: str) -> list[ev.Event]:
        index = field(payload, "contentBlockIndex", int, "$", self, event)
        delta = field(payload, "delta", dict, "$", self, event)
        tool = delta.get("toolUse")
        if tool is not None:
            fragment = field(tool, "input", str, "$.delta.toolUse", self, event)
            # For no call's block, the accumulator's table rejects the fragment.
            return _NOTHING if self._kinds.get(index) == _SERVER else [ev.ArgumentsDelta(index, fragment)]
        text = optional(delta, "text", str, "$.delta", self, event)
        if text:
            return [ev.TextReceived(text, 0, index)]
        reasoning = optional(delta, "reasoningContent", dict, "$.delta", self, event)
        if reasoning is not None:
            return self._reasoning(index, reasoning, event)
        return _NOTHING  # citations and server tool results carry no call data

    def _reasoning(self, index: int, reasoning: dict[str, Any], event: str) -> list[ev.Event]:
        where = "$.delta.reasoningContent"
        redacted = reasoning.get("redactedContent")
        if redacted is not None:
            return [ev.BlockReceived("redacted_thinking", {"data": self._blob(redacted, where, event)})]
        out: list[ev.Event] = []
        if index not in self._kinds:  # no start: the first reasoning delta opens the block
            self._kinds[index] = _THINKING
            out.append(ev.BlockStarted(index, "thinking", {}))
        for part, key in (("text", "text"), ("signature", "signature")):
            given = optional(reasoning, key, str, where, self, event)
            if given:
                out.append(ev.BlockDelta(index, part, given))
        return out

    def _blob(self, value: Any, where: str, event: str) -> str:
        """``redactedContent``, a blob, as the base64 text the JSON body carries: boto3 gives it
        decoded (bytes), and it is encoded back, the same text as on the wire."""
        if isinstance(value, bytes | bytearray):
            return base64.b64encode(value).decode("ascii")
        if not isinstance(value, str):
            raise self.error(
                f"{where}.redactedContent must be base64 text or bytes, got {type(value).__name__}", event=event
            )
        return value

    def _block_stop(self, payload: Any, event: str) -> list[ev.Event]:
        index = field(payload, "contentBlockIndex", int, "$", self, event)
        kind = self._kinds.get(index)
        if kind == _CALL:
            return [ev.CallEnded(index)]
        if kind == _THINKING:
            return [ev.BlockEnded(index)]
        self._kinds.pop(index, None)
        return _NOTHING

    def _message_stop(self, payload: Any, event: str) -> list[ev.Event]:
        reason = field(payload, "stopReason", str, "$", self, event)
        self._stopped = True
        # Calls end with their own contentBlockStop: one still open was cut off.
        if self._metadata_seen:  # a gateway that sends metadata first: nothing more will come
            self._ended = True
            return [ev.StopReceived(reason, cut_open_calls=True), ev.ResponseEnded()]
        return [ev.StopReceived(reason, cut_open_calls=True)]

    def _metadata(self, payload: Any, event: str) -> list[ev.Event]:
        out = usage_received(payload, "usage", "$", self, event)
        self._metadata_seen = True
        if self._stopped:
            self._ended = True
            out.append(ev.ResponseEnded())
        return out

    _HANDLERS: ClassVar[dict[str, Callable[[BedrockDecoder, Any, str], list[ev.Event]]]] = {
        "contentBlockStart": _block_start,
        "contentBlockStop": _block_stop,
        "messageStop": _message_stop,
        "metadata": _metadata,
    }
