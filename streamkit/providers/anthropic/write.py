"""Anthropic Messages, written from values: the answer an Anthropic client reads, whatever the
upstream spoke.

Blocks are numbered from 0 in the order they are written (the SDK appends each block and finds
it by that index). Text opens a ``text`` block, closed by the next block or the end; a
``ToolCall`` is one whole ``tool_use`` block (its start with ``input: {}``, one
``input_json_delta`` with all of its arguments, its stop). A ``Thinking`` is a ``thinking``
block, its signature as received; unsigned reasoning (an OpenAI-compatible ``reasoning_content``)
is signed ``UNSIGNED``, so that the client, which sends thinking back only signed, sends it back
and the next request carries it to the upstream (``asked`` reads it as unsigned again). A
Responses reasoning item is left out. A ``RedactedThinking`` is a ``redacted_thinking`` block.
An ``InvalidToolCall`` or a custom tool's call is never written; other values have no place
here. The usage is ``TokenUsage``'s, 0 where the upstream gave none (the format requires it),
with the cache reads apart from the input as Anthropic counts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._turn_types import UNSIGNED, RedactedThinking, Thinking, carrying
from ..._types import ResponseEnd, TextDelta, TokenUsage, ToolCall
from .._body import listed, text
from .._encoder import dumps, sse_json
from .._writer import Model, Writer, created_at, new_text, stop_reason, timestamp
from . import FACTS

__all__ = ("AnthropicWriter",)


class AnthropicWriter(Writer):
    facts = FACTS
    id_prefix = "msg_"

    @classmethod
    def model_info(cls, model: Model) -> dict[str, Any]:
        """A model as Anthropic's API describes it: its name for people its id when none was given."""
        name = model.name or model.id
        return {"type": "model", "id": model.id, "display_name": name, "created_at": created_at(model.created)}

    @classmethod
    def model_list(cls, models: Sequence[Model]) -> dict[str, Any]:
        """Every model on one page: ``has_more`` false, the page's first and last ids."""
        first, last = (models[0].id, models[-1].id) if models else (None, None)
        data = [cls.model_info(model) for model in models]
        return {"data": data, "has_more": False, "first_id": first, "last_id": last}

    @classmethod
    def read_models(cls, body: object) -> list[Model]:
        """``data``'s models, owned by Anthropic (as another format's list says of each)."""
        entries = listed(body.get("data")) if isinstance(body, dict) else []
        owner = FACTS.telemetry_name
        return [
            Model(ident, timestamp(entry.get("created_at")), text(entry, "display_name"), owner)
            for entry in entries
            if (ident := text(entry, "id")) is not None
        ]

    @classmethod
    def token_count(cls, tokens: int) -> dict[str, Any]:
        return {"input_tokens": tokens}

    def begin(self) -> None:
        self._content: list[dict[str, Any]] = []  # every block written, as the final message holds it

    def start(self) -> list[bytes]:
        message = {**self._message([], None), "usage": _usage(None)}
        return [sse_json("message_start", {"type": "message_start", "message": message})]

    def write(self, value: object) -> list[bytes]:
        if isinstance(value, TextDelta):
            return self._text_delta(value) if value.text else []
        if isinstance(value, ToolCall):
            ident = carrying(value.id or self.minted("toolu_", self._calls), value.state)
            block = {"type": "tool_use", "id": ident, "name": value.name}
            self._calls += 1
            delta = ("input_json_delta", "partial_json", dumps(value.input))
            return self._block(block | {"input": {}}, block | {"input": value.input}, delta)
        if isinstance(value, Thinking):
            signature = UNSIGNED if value.signature is None else value.signature
            deltas = (("thinking_delta", "thinking", value.text), ("signature_delta", "signature", signature))
            whole = {"type": "thinking", "thinking": value.text, "signature": signature}
            return self._block({"type": "thinking", "thinking": "", "signature": ""}, whole, *deltas)
        if isinstance(value, RedactedThinking):
            block = {"type": "redacted_thinking", "data": value.data}
            return self._block(block, block)
        return []

    def end(self, end: ResponseEnd) -> list[bytes]:
        self._end = end
        delta = {"stop_reason": self._stop_reason(), "stop_sequence": None}
        message_delta = {"type": "message_delta", "delta": delta, "usage": _usage(end.tokens)}
        return [
            *self._close(),
            sse_json("message_delta", message_delta),
            sse_json("message_stop", {"type": "message_stop"}),
        ]

    def final(self) -> dict[str, Any]:
        usage = _usage(None if self._end is None else self._end.tokens)
        return {**self._message(self._content, self._stop_reason()), "usage": usage}

    def _message(self, content: list[dict[str, Any]], reason: str | None) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": reason,
            "stop_sequence": None,
        }

    def _stop_reason(self) -> str:
        return stop_reason(self.facts, "other" if self._end is None else self._end.finish, self._calls > 0)

    def _text_delta(self, value: TextDelta) -> list[bytes]:
        out = []
        if new_text(self._text, value):
            out += self._close()
            out.append(self._start({"type": "text", "text": ""}))
        self._text = value
        self._content[-1]["text"] += value.text
        out.append(self._delta(("text_delta", "text", value.text)))
        return out

    def _block(self, block: dict[str, Any], whole: dict[str, Any], *deltas: tuple[str, str, str]) -> list[bytes]:
        """A whole block: its start, its deltas, its stop; ``whole`` is the block as the final
        message holds it."""
        out = [*self._close(), self._start(block), *(self._delta(delta) for delta in deltas), self._stop()]
        self._content[-1] = whole
        return out

    def _start(self, block: dict[str, Any]) -> bytes:
        self._content.append(dict(block))
        index = len(self._content) - 1
        return sse_json("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})

    def _delta(self, delta: tuple[str, str, str]) -> bytes:
        kind, key, text = delta
        payload = {"type": "content_block_delta", "index": len(self._content) - 1, "delta": {"type": kind, key: text}}
        return sse_json("content_block_delta", payload)

    def _stop(self) -> bytes:
        return sse_json("content_block_stop", {"type": "content_block_stop", "index": len(self._content) - 1})

    def _close(self) -> list[bytes]:
        """The open text block's stop, if one is open."""
        if self._text is None:
            return []
        self._text = None
        return [self._stop()]


def _usage(tokens: TokenUsage | None) -> dict[str, Any]:
    """Anthropic's usage: its ``input_tokens`` leave out the cache reads, counted apart."""
    tokens = tokens or TokenUsage()
    cached = tokens.cache_read_tokens
    usage: dict[str, Any] = {"input_tokens": (tokens.input_tokens or 0) - (cached or 0)}
    if cached is not None:
        usage["cache_read_input_tokens"] = cached
    return usage | {"output_tokens": tokens.output_tokens or 0}
