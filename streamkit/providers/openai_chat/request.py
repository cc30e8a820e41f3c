"""An OpenAI Chat Completions request: usage asked for in the stream, the limit as
``max_completion_tokens``."""

from __future__ import annotations

from .._request import chat_choice, chat_completions, chat_user, no_effort, same_names

__all__ = ("MERGE_ROLES", "SETTINGS", "body", "choice", "effort", "user")

MERGE_ROLES = False
SETTINGS = same_names(
    "temperature",
    "top_p",
    "stop",
    "seed",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "reasoning_effort",  # a setting of its own here
    "frequency_penalty",
    "presence_penalty",
    "user",
)
effort = no_effort
body = chat_completions("max_completion_tokens", usage=True)
user = chat_user
choice = chat_choice
