"""Gemini's history, at its public path: written in ``providers/gemini/history.py``."""

from ..providers.gemini.history import (
    assistant_message,
    error_result_message,
    tool_result_message,
    tool_results_message,
    turn_messages,
)

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message", "turn_messages")
