"""OpenAI Chat Completions: calls and results as chat messages.

The assistant message carries ``tool_calls`` whose ``function.arguments`` is a JSON string,
serialized here once; each result is a ``role: tool`` message naming ``tool_call_id``. A
``tool`` message carries text, so a result's images follow the turn's tool messages in one user
message, as a user's images are written (``ShownAfter`` says why).
Shapes: https://platform.openai.com/docs/guides/function-calling
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._turn_types import Thinking, Turn
from ..._types import CallRef
from ...adapters._base import Call, Message, ShownAfter, call_id, chat_message, function_calls, text_writers
from ...adapters._history import TurnMessages, plain_turn
from .request import user

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message", "turn_messages")


def assistant_message(calls: Iterable[Call], *, text: str | None = None) -> list[Message]:
    """The assistant message that records ``calls`` (and its ``text``) in the history."""
    return chat_message(calls, text, text, function_calls)


def _entry(call: Call | CallRef, text: str) -> Message:
    return {"role": "tool", "tool_call_id": call_id(call), "content": text}


tool_results_message, tool_result_message, error_result_message = text_writers(_entry, shown=ShownAfter(user, call_id))


def turn_messages(turn: Turn) -> TurnMessages:
    """The assistant message that records a whole ``Turn``: text, calls and, for a turn that
    made a call, its ``reasoning_content``: the ``Thinking`` text joined, of a turn decoded from
    this provider, or the unsigned reasoning of another's (a client's turn carrying what an
    OpenAI-compatible upstream gave, ``UNSIGNED`` read back).

    DeepSeek's thinking mode requires the ``reasoning_content`` of a tool-calling turn to be sent
    back with it (https://api-docs.deepseek.com/guides/thinking_mode); a turn without calls does
    not need it, and it is then listed on ``dropped``. State from other providers is dropped.
    """
    native = turn.provider == "openai_chat" if isinstance(turn, Turn) else False
    thoughts = [item for item in turn.items if isinstance(item, Thinking) and (native or item.signature is None)]
    out = plain_turn(turn, assistant_message, kept=lambda item: item in thoughts)
    if thoughts and out and turn.calls:
        out[0]["reasoning_content"] = "".join(item.text for item in thoughts)
    elif thoughts:
        out.dropped += tuple(thoughts)
    return out
