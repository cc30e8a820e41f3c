"""AWS Bedrock Converse: calls as ``toolUse`` blocks, results as ``toolResult`` blocks.

The assistant message holds the text block and one ``toolUse`` block per call, ``input`` an
object; all results of a turn go in one user message (Converse requires roles to alternate).
A result that is an object is sent as a ``json`` block, anything else as ``text``; an error
as ``json`` with ``status: error``. Ids are kept to letters, digits, ``_`` and ``-``.
Shapes: https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html
"""

from __future__ import annotations

from typing import Any

from ..._turn_types import RedactedThinking, Thinking, Turn, TurnItem
from ..._types import CallRef, JSONObject
from ...adapters._base import Call, Message, Ran, block_message, result_text, result_writers, safe_id
from ...adapters._history import TurnMessages, block_turn

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message", "turn_messages")


def _text(text: str) -> Message:
    return {"text": text}


def _tool_use(ident: str, name: str, arguments: JSONObject) -> Message:
    return {"toolUse": {"toolUseId": ident, "name": name, "input": arguments}}


assistant_message = block_message(_text, _tool_use)


def _result(call: Ran, result: Any) -> Message:
    block = {"json": result} if isinstance(result, dict) else {"text": result_text(result)}
    return {"toolResult": {"toolUseId": safe_id(call), "content": [block]}}


def _error(call: Call | CallRef, payload: JSONObject) -> Message:
    return {"toolResult": {"toolUseId": safe_id(call), "content": [{"json": payload}], "status": "error"}}


tool_results_message, tool_result_message, error_result_message = result_writers(_result, _error, into="content")


def turn_messages(turn: Turn) -> TurnMessages:
    """The assistant message that records a whole ``Turn``, every block in the order it came.

    For a turn decoded from Bedrock: ``reasoningContent`` blocks first as they came
    (``reasoningText`` with its ``text`` and ``signature`` unchanged, or ``redactedContent`` as
    the base64 text the JSON body carried), then text and ``toolUse`` blocks. Bedrock asks for
    the reasoning blocks of a tool-using turn to be sent back
    (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ReasoningTextBlock.html,
    ``ReasoningContentBlock``). Other providers' state is dropped.
    """
    return block_turn(turn, "bedrock", _text, _tool_use, _state)


def _state(item: TurnItem) -> Message | None:
    if isinstance(item, Thinking):
        reasoning: Message = {"text": item.text}
        if item.signature is not None:
            reasoning["signature"] = item.signature
        return {"reasoningContent": {"reasoningText": reasoning}}
    if isinstance(item, RedactedThinking):
        return {"reasoningContent": {"redactedContent": item.data}}
    return None
