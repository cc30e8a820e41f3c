"""OpenAI Chat's history, at its public path: written in ``providers/openai_chat/history.py``."""

from ..providers.openai_chat.history import (
    assistant_message,
    error_result_message,
    tool_result_message,
    tool_results_message,
    turn_messages,
)

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message", "turn_messages")
