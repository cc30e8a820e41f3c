"""Anthropic Messages stream (``POST /v1/messages`` with ``stream: true``).

A ``tool_use`` block's ``content_block_stop`` is that call's end marker. The placeholder
``input: {}`` of ``content_block_start`` is ignored: the arguments are the joined
``input_json_delta`` fragments, and no fragment at all means ``{}``. A block cut by the output
limit never gets its stop; the ``message_delta`` that carries the stop reason closes it as
truncated. ``server_tool_use`` (and beta ``mcp_tool_use``) blocks are run by Anthropic, not by
the caller, so their input is never handed out as a call.

The turn's opaque state is carried beside the calls, to be sent back unchanged with the tool
results: ``thinking`` blocks (``thinking_delta`` text and ``signature_delta`` joined at the
block's stop), ``redacted_thinking`` blocks (``data`` as received), server tool blocks (their
``input_json_delta`` fragments joined and parsed at the stop) and their result blocks
(``*_tool_result``, whole in ``content_block_start``).
Docs: https://docs.claude.com/en/api/messages-streaming,
https://docs.claude.com/en/docs/build-with-claude/extended-thinking (preserving thinking blocks;
thinking with tool use: the last assistant turn's thinking blocks go back unmodified),
https://docs.claude.com/en/docs/agents-and-tools/tool-use/server-tools
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ... import _events as ev
from ..._types import TokenUsage
from .._base import TypedEventDecoder, count, field, optional, total, usage_received
from . import FACTS

__all__ = ("AnthropicDecoder", "cached_apart")

_SERVER_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})
_CALL, _SERVER, _THINKING = "call", "server", "thinking"  # the kinds of block that have a stop
_NOTHING: list[ev.Event] = []


def cached_apart(usage: Mapping[str, Any], given: str, output: str, read: str, written: str) -> TokenUsage:
    """Claude's usage, here and through Bedrock's Converse: cache reads and writes are counted
    apart from the input tokens, and added up here so that ``input_tokens`` counts them all."""
    cached = count(usage, read)
    return TokenUsage(total(count(usage, given), cached, count(usage, written)), count(usage, output), cached, None)


class AnthropicDecoder(TypedEventDecoder):
    slug = "anthropic"
    finish_reasons = FACTS.finish_reasons
    value_paths = (("content_block", "input"),)  # a gateway's whole input up front
    event_types = frozenset(
        {
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "ping",
        }
    )
    plain_fragments = True  # an input_json_delta for an open tool_use block changes no state
    plain_text = True  # a text_delta changes no state

    @classmethod
    def tokens(cls, usage: Mapping[str, Any]) -> TokenUsage:
        return cached_apart(
            usage, "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"
        )

    def __init__(self, *, early_close: bool = False) -> None:
        super().__init__(early_close=early_close)
        self._message_id: str | None = None
        #: The kind of each block started, by index: what its deltas and its stop translate to.
        #: Whether the block is open is the tables' to judge (the accumulator's, the turn stage's).
        self._kinds: dict[int, str] = {}

    def _message_start(self, payload: Any, event: str) -> list[ev.Event]:
        message = field(payload, "message", dict, "$", self, event)
        message_id = optional(message, "id", str, "$.message", self, event)
        if self._message_id is None:
            self._message_id = message_id
        elif message_id != self._message_id:
            # A proxy spliced two generations together (vercel/ai PR #18402): never merge them.
            raise self.error(f"a second message_start with another id ({message_id!r})", event=event)
        return usage_received(message, "usage", "$.message", self, event)

    # The handlers read the fields of a well-formed event directly, and hand any other value to
    # ``field``, which gives it back (an ``int`` subclass) or raises the error naming its path.

    def _indexed(self, payload: Any, key: str, event: str) -> tuple[int, dict[str, Any]]:
        """The block's ``index`` and the object at ``key``."""
        index, inner = payload.get("index"), payload.get(key)
        if type(index) is not int:
            index = field(payload, "index", int, "$", self, event)
        if type(inner) is not dict:
            inner = field(payload, key, dict, "$", self, event)
        return index, inner

    def _block_start(self, payload: Any, event: str) -> list[ev.Event]:
        index, block = self._indexed(payload, "content_block", event)
        kind = block.get("type")
        if type(kind) is not str:
            kind = field(block, "type", str, "$.content_block", self, event)
        self._kinds.pop(index, None)  # an index started again is the new block's
        if kind == "tool_use":
            self._kinds[index] = _CALL
            call_id, name = block.get("id"), block.get("name")
            if type(call_id) is not str:
                call_id = field(block, "id", str, "$.content_block", self, event)
            if type(name) is not str:
                name = field(block, "name", str, "$.content_block", self, event)
            out: list[ev.Event] = [ev.CallOpened(index, call_id, name)]
            placeholder = block.get("input")
            if placeholder:  # a gateway that sends the whole input up front, not as deltas
                out += [ev.ArgumentsValue(index, placeholder), ev.AnomalyNoted(index, "input_in_start")]
            return out
        if kind in _SERVER_BLOCKS:
            self._kinds[index] = _SERVER
            head = {key: value for key, value in block.items() if key != "input"}
            head["input"] = block.get("input", {})
            return [ev.BlockStarted(index, "server_tool_use", head)]
        if kind == "thinking":
            self._kinds[index] = _THINKING
            out = [ev.BlockStarted(index, "thinking", {})]
            # The start's own (normally empty) text and signature come first, as fragments.
            for part, key in (("text", "thinking"), ("signature", "signature")):
                given = optional(block, key, str, "$.content_block", self, event)
                if given:
                    out.append(ev.BlockDelta(index, part, given))
            return out
        if kind == "redacted_thinking":
            field(block, "data", str, "$.content_block", self, event)
            return [ev.BlockReceived("redacted_thinking", block)]
        if kind.endswith("_tool_result"):  # web_search_tool_result, mcp_tool_result…: whole here
            return [ev.BlockReceived("server_tool_result", block)]
        if kind == "text" and block.get("text"):
            return [ev.TextReceived(field(block, "text", str, "$.content_block", self, event), 0, index)]
        return _NOTHING

    def _delta(self, payload: Any, event: str) -> list[ev.Event]:
        index, delta = self._indexed(payload, "delta", event)
        kind = delta.get("type")
        if kind == "input_json_delta":
            text = field(delta, "partial_json", str, "$.delta", self, event)
            if self._kinds.get(index) == _SERVER:
                return [ev.BlockDelta(index, "input", text)]
            return [ev.ArgumentsDelta(index, text)]  # for no call's block: the accumulator's table rejects it
        if kind == "text_delta":
            return [ev.TextReceived(field(delta, "text", str, "$.delta", self, event), 0, index)]
        if kind == "thinking_delta":  # for a block that is no open thinking block, the turn stage rejects it
            return [ev.BlockDelta(index, "text", field(delta, "thinking", str, "$.delta", self, event))]
        if kind == "signature_delta":
            return [ev.BlockDelta(index, "signature", field(delta, "signature", str, "$.delta", self, event))]
        return _NOTHING  # citation deltas carry no call data

    def _block_stop(self, payload: Any, event: str) -> list[ev.Event]:
        index = payload.get("index")
        if type(index) is not int:
            index = field(payload, "index", int, "$", self, event)
        kind = self._kinds.get(index)
        if kind is None:
            return _NOTHING  # a text block's stop, or an unknown block's
        return [ev.CallEnded(index) if kind == _CALL else ev.BlockEnded(index)]

    def _message_delta(self, payload: Any, event: str) -> list[ev.Event]:
        delta = optional(payload, "delta", dict, "$", self, event) or {}
        out = usage_received(payload, "usage", "$", self, event)
        stop_reason = optional(delta, "stop_reason", str, "$.delta", self, event)
        if stop_reason is not None:
            # Calls here end with their own content_block_stop: one still open was cut off.
            out.append(ev.StopReceived(stop_reason, cut_open_calls=True))
        return out

    def _message_stop(self, payload: Any, event: str) -> list[ev.Event]:
        return [ev.ResponseEnded()]

    def _error(self, payload: Any, event: str) -> list[ev.Event]:
        return [self.errors.received(optional(payload, "error", dict, "$", self, event) or {})]

    _HANDLERS: ClassVar[dict[str, Callable[[AnthropicDecoder, Any, str], list[ev.Event]]]] = {
        "content_block_delta": _delta,  # by far the most common event
        "message_start": _message_start,
        "content_block_start": _block_start,
        "content_block_stop": _block_stop,
        "message_delta": _message_delta,
        "message_stop": _message_stop,
        "error": _error,
        # "ping" is a keep-alive: like any unknown event, it is ignored.
    }
