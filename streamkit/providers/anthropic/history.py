"""Anthropic Messages: calls as ``tool_use`` blocks, results as ``tool_result`` blocks.

The assistant message holds the text block and one ``tool_use`` block per call, ``input`` an
object; all results of a turn go in one user message, an error with ``is_error: true``; a
result that holds an image is its text and ``image`` blocks.
Ids are kept to letters, digits, ``_`` and ``-``, as the API requires.
Shapes: https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
"""

from __future__ import annotations

from typing import Any

from ..._turn_types import Image, Parts, RedactedThinking, ServerToolResult, ServerToolUse, Thinking, Turn, TurnItem
from ..._types import CallRef, JSONObject
from ...adapters._base import Call, Message, Ran, block_message, dumps, result_text, result_writers, safe_id
from ...adapters._history import TurnMessages, block_turn
from .request import image

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message", "turn_messages")


def _text(text: str) -> Message:
    return {"type": "text", "text": text}


def _tool_use(ident: str, name: str, arguments: JSONObject) -> Message:
    return {"type": "tool_use", "id": ident, "name": name, "input": arguments}


assistant_message = block_message(_text, _tool_use)


def _result(call: Ran, result: Any) -> Message:
    content = [_part(part) for part in result.items] if isinstance(result, Parts) else result_text(result)
    return {"type": "tool_result", "tool_use_id": safe_id(call), "content": content}


def _part(part: str | Image) -> Message:
    """A block of a result that holds an image: its text, or the ``image`` block, as a user's."""
    return _text(part) if isinstance(part, str) else image(part)


def _error(call: Call | CallRef, payload: JSONObject) -> Message:
    return {
        "type": "tool_result",
        "tool_use_id": safe_id(call),
        "content": dumps(payload),
        "is_error": True,
    }


tool_results_message, tool_result_message, error_result_message = result_writers(
    _result, _error, into="content", images=True
)


def turn_messages(turn: Turn) -> TurnMessages:
    """The assistant message that records a whole ``Turn``, every block in the order it came.

    For a turn decoded from Anthropic: ``thinking`` blocks with their signature byte for byte,
    ``redacted_thinking`` with its ``data``, server tool blocks and their results as received,
    text, and ``tool_use`` blocks. The extended-thinking docs require the last assistant turn's
    thinking blocks to go back unmodified when tools are used
    (https://docs.claude.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks);
    a thinking block that never got its signature (cut off) cannot be sent and is dropped, as is
    every other provider's state.
    """
    return block_turn(turn, "anthropic", _text, _tool_use, _state)


def _state(item: TurnItem) -> Message | None:
    if isinstance(item, Thinking) and item.signature is not None:
        return {"type": "thinking", "thinking": item.text, "signature": item.signature}
    if isinstance(item, RedactedThinking):
        return {"type": "redacted_thinking", "data": item.data}
    if isinstance(item, ServerToolUse | ServerToolResult):
        return dict(item.block)
    return None
