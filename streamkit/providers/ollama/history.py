"""Ollama ``/api/chat``: calls in the assistant message, results as ``role: tool`` messages.

Ollama takes ``function.arguments`` as an object, and a tool message names its tool with
``tool_name``. An id is written only when the call has one. A result's images follow the
turn's tool messages in one user message, its ``images`` as a user's are written (an image by
URL refused), the calls named in its text.
Shapes: https://docs.ollama.com/capabilities/tool-calling
"""

from __future__ import annotations

from collections.abc import Iterable

from ..._turn_types import Turn
from ..._types import CallRef
from ...adapters._base import Call, Message, ShownAfter, chat_message, input_object, name_of, text_writers
from ...adapters._history import TurnMessages, plain_turn
from .request import user

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message", "turn_messages")


def assistant_message(calls: Iterable[Call], *, text: str | None = None) -> list[Message]:
    """The assistant message that records ``calls`` (and its ``text``) in the history."""
    return chat_message(calls, text, text or "", lambda checked: [_call(call) for call in checked])


def _call(call: Call) -> Message:
    entry: Message = {"function": {"name": name_of(call), "arguments": input_object(call)}}
    if call.id:
        entry = {"id": call.id, **entry}
    return entry


def _entry(call: Call | CallRef, text: str) -> Message:
    return {"role": "tool", "tool_name": name_of(call), "content": text}


tool_results_message, tool_result_message, error_result_message = text_writers(_entry, shown=ShownAfter(user))


def turn_messages(turn: Turn) -> TurnMessages:
    """The history entries that record a whole ``Turn``: its text and calls, as
    ``assistant_message`` writes them. This provider takes back no reasoning or signatures, so
    any such item is listed on the result's ``dropped``."""
    return plain_turn(turn, assistant_message)
