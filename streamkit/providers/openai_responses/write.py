"""OpenAI Responses, written from values: the answer a Responses client reads, whatever the
upstream spoke.

Each value is one output item, numbered from 0 in the order written (``output_index``), every
event numbered on by ``sequence_number`` from ``response.created`` (0) and
``response.in_progress`` (1). Text opens a ``message`` item (its ``output_text`` part), closed by
the next item or the end; a ``ToolCall`` is one whole ``function_call`` item (added with
``arguments: ""``, one arguments delta, its ``done``, the item's ``done``), a ``CustomToolCall``
the same as a ``custom_tool_call`` item. A ``Thinking`` is a ``reasoning`` item whose summary is
its text (its signature, another provider's, is not written; reasoning that came unsigned has
``encrypted_content: UNSIGNED``, so that a client sending reasoning items back, as Codex does,
sends it back and the next request carries it to the upstream); a Responses reasoning item is
written as it came, its summary streamed. The end is ``response.completed`` with the whole
response (its output items and usage), or ``response.incomplete`` with its
``incomplete_details.reason`` (``max_output_tokens`` for the output limit). An
``InvalidToolCall`` is never written; other values have no place here.
"""

from __future__ import annotations

from typing import Any

from ..._turn_types import UNSIGNED, ReasoningItem, Thinking, carrying
from ..._types import TEXT_CALL, CustomToolCall, ResponseEnd, TextDelta, TokenUsage, ToolCall
from .._encoder import dumps, sse_json
from .._writer import Writer, new_text, stop_reason
from ..openai_chat.write import OpenAIModels
from . import FACTS

__all__ = ("OpenAIResponsesWriter",)


class OpenAIResponsesWriter(OpenAIModels, Writer):
    facts = FACTS
    id_prefix = "resp_"

    def begin(self) -> None:
        self._number = 0  # the next event's sequence_number
        self._output: list[dict[str, Any]] = []  # every item written, as the final response holds it

    def start(self) -> list[bytes]:
        response = self._response("in_progress", [])
        return [
            self._event("response.created", response=response),
            self._event("response.in_progress", response=response),
        ]

    def write(self, value: object) -> list[bytes]:
        if isinstance(value, TextDelta):
            return self._text_delta(value) if value.text else []
        if isinstance(value, ToolCall | CustomToolCall):
            return self._call(value)
        if isinstance(value, Thinking):
            item = {"id": self.minted("rs_", len(self._output)), "type": "reasoning", "summary": []}
            if value.signature is None:  # sent back by the client, read as unsigned reasoning again
                item["encrypted_content"] = UNSIGNED
            return self._reasoning(item, [value.text])
        if isinstance(value, ReasoningItem):
            summary = value.item.get("summary")
            texts = [str(part.get("text", "")) for part in summary or [] if isinstance(part, dict)]
            return self._reasoning({"id": self.minted("rs_", len(self._output)), **value.item}, texts)
        return []

    def end(self, end: ResponseEnd) -> list[bytes]:
        self._end = end
        out, final = self._close(), self.final()
        kind = "response.completed" if final["status"] == "completed" else "response.incomplete"
        return [*out, self._event(kind, response=final)]

    def final(self) -> dict[str, Any]:
        finish = "other" if self._end is None else self._end.finish
        reason = stop_reason(self.facts, finish, self._calls > 0)
        tokens = None if self._end is None else self._end.tokens
        if reason == stop_reason(self.facts, "stop", False):
            return self._response("completed", self._output, tokens)
        return self._response("incomplete", self._output, tokens) | {"incomplete_details": {"reason": reason}}

    def failed(self, kind: str, message: str, code: str) -> bytes | None:
        """``error`` and ``response.failed``, numbered on, as a same-format route ends: a client
        that waits for the response's terminal event (Codex) stops there instead of reading a
        dropped stream and sending the request again. Before anything is written, the plain
        ``error`` event."""
        if not self._started:
            return None
        failed = self._response("failed", []) | {"error": {"code": code, "message": message}}
        error = self._event("error", code=code, message=message, param=None)
        return error + self._event("response.failed", response=failed)

    def _response(self, status: str, output: list[dict[str, Any]], tokens: TokenUsage | None = None) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "metadata": {},
            "model": self.model,
            "output": list(output),
            "parallel_tool_calls": True,
            "temperature": None,
            "tool_choice": "auto",
            "tools": [],
            "top_p": None,
            "usage": None if tokens is None else _usage(tokens),
        }

    def _event(self, kind: str, **body: Any) -> bytes:
        number, self._number = self._number, self._number + 1
        return sse_json(kind, {"type": kind, "sequence_number": number, **body})

    def _text_delta(self, value: TextDelta) -> list[bytes]:
        out = []
        if new_text(self._text, value):
            out += self._close()
            index = len(self._output)
            item = {"id": self.minted("msg_", index), "type": "message", "status": "in_progress", "role": "assistant"}
            out.append(self._added({**item, "content": []}))
            self._output[-1] = {**item, "status": "completed", "content": [_text_part("")]}
            out.append(self._event("response.content_part.added", **self._where(), part=_text_part("")))
        self._text = value
        part = self._output[-1]["content"][0]
        part["text"] += value.text
        out.append(self._event("response.output_text.delta", **self._where(), delta=value.text, logprobs=[]))
        return out

    def _close(self) -> list[bytes]:
        """The open message's ends, if one is open."""
        if self._text is None:
            return []
        self._text = None
        item = self._output[-1]
        part = item["content"][0]
        return [
            self._event("response.output_text.done", **self._where(), text=part["text"], logprobs=[]),
            self._event("response.content_part.done", **self._where(), part=part),
            self._done(item),
        ]

    def _call(self, call: ToolCall | CustomToolCall) -> list[bytes]:
        text = dumps(call.input) if isinstance(call, ToolCall) else call.input
        custom = isinstance(call, CustomToolCall)
        kind, field, prefix = _CUSTOM if custom else _FUNCTION
        item_id = call.state.get("id") or self.minted("ctc_" if custom else "fc_", len(self._output))
        call_id = carrying(call.id or self.minted("call_", self._calls), call.state)
        self._calls += 1
        item = {"id": item_id, "type": kind, "status": "in_progress", field: "", "call_id": call_id, "name": call.name}
        out = [*self._close(), self._added(item)]
        done = {**item, "status": "completed", field: text}
        self._output[-1] = done
        named = {} if custom else {"name": call.name}
        out.append(self._event(f"{prefix}.delta", item_id=item_id, output_index=len(self._output) - 1, delta=text))
        out.append(
            self._event(f"{prefix}.done", item_id=item_id, output_index=len(self._output) - 1, **named, **{field: text})
        )
        return [*out, self._done(done)]

    def _reasoning(self, item: dict[str, Any], texts: list[str]) -> list[bytes]:
        """A reasoning item, its summary's texts streamed one part each."""
        out = [*self._close(), self._added({**item, "summary": []})]
        where = {"item_id": item["id"], "output_index": len(self._output) - 1}
        for number, text in enumerate(texts):
            part = {**where, "summary_index": number}
            out.append(self._event("response.reasoning_summary_part.added", **part, part=_summary("")))
            out.append(self._event("response.reasoning_summary_text.delta", **part, delta=text))
            out.append(self._event("response.reasoning_summary_text.done", **part, text=text))
            out.append(self._event("response.reasoning_summary_part.done", **part, part=_summary(text)))
        done = {**item, "summary": [_summary(text) for text in texts]}
        self._output[-1] = done
        return [*out, self._done(done)]

    def _added(self, item: dict[str, Any]) -> bytes:
        self._output.append(item)
        return self._event("response.output_item.added", output_index=len(self._output) - 1, item=item)

    def _done(self, item: dict[str, Any]) -> bytes:
        return self._event("response.output_item.done", output_index=len(self._output) - 1, item=item)

    def _where(self) -> dict[str, Any]:
        """Where the open message's text goes."""
        return {"item_id": self._output[-1]["id"], "output_index": len(self._output) - 1, "content_index": 0}


#: Each call item: its type, the field of its text, the prefix of its text's events.
_FUNCTION = ("function_call", "arguments", "response.function_call_arguments")
_CUSTOM = (TEXT_CALL[1], "input", "response.custom_tool_call_input")


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}


def _summary(text: str) -> dict[str, Any]:
    return {"type": "summary_text", "text": text}


def _usage(tokens: TokenUsage) -> dict[str, Any]:
    """Responses' usage; the details it requires are 0 where the upstream gave none."""
    given, made = tokens.input_tokens or 0, tokens.output_tokens or 0
    return {
        "input_tokens": given,
        "input_tokens_details": {"cached_tokens": tokens.cache_read_tokens or 0, "cache_write_tokens": 0},
        "output_tokens": made,
        "output_tokens_details": {"reasoning_tokens": tokens.reasoning_tokens or 0},
        "total_tokens": given + made,
    }
