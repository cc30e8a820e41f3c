"""Mistral chat: calls in the assistant message, results as ``role: tool`` messages.

As OpenAI Chat (``function.arguments`` a JSON string, serialized here once), except that
Mistral requires ids of exactly 9 letters and digits: any other id is mapped, the same way
for the call and its result. A tool message also names the tool. A result holding an image is
refused, naming the call: a tool message carries text, and Mistral's own validator refuses the
user message after it that OpenAI Chat shows images in ("Unexpected role 'user' after role
'tool'", mistral-common).
Shapes: https://docs.mistral.ai/capabilities/function_calling/
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._turn_types import Turn
from ..._types import CallRef
from ...adapters._base import (
    Call,
    Message,
    chat_message,
    function_calls,
    mistral_id,
    name_of,
    text_writers,
)
from ...adapters._history import TurnMessages, plain_turn

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message", "turn_messages")


def assistant_message(calls: Iterable[Call], *, text: str | None = None) -> list[Message]:
    """The assistant message that records ``calls`` (and its ``text``) in the history."""
    return chat_message(calls, text, text or "", lambda checked: function_calls(checked, mistral_id))


def _entry(call: Call | CallRef, text: str) -> Message:
    return {"role": "tool", "name": name_of(call), "tool_call_id": mistral_id(call), "content": text}


tool_results_message, tool_result_message, error_result_message = text_writers(_entry)


def turn_messages(turn: Turn) -> TurnMessages:
    """The history entries that record a whole ``Turn``: its text and calls, as
    ``assistant_message`` writes them. This provider takes back no reasoning or signatures, so
    any such item is listed on the result's ``dropped``."""
    return plain_turn(turn, assistant_message)
