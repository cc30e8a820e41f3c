"""A Mistral request: Chat Completions with the limit as ``max_tokens``; its stream reports
usage unasked, and it refuses ``stream_options``. An image is an ``image_url`` part as in OpenAI
Chat (https://docs.mistral.ai/capabilities/vision/)."""

from __future__ import annotations

from .._request import chat_choice, chat_completions, chat_user, no_effort, same_names

__all__ = ("MERGE_ROLES", "SETTINGS", "body", "choice", "effort", "user")

MERGE_ROLES = False
SETTINGS = same_names("temperature", "top_p", "stop", "tool_choice", "parallel_tool_calls", "response_format")
effort = no_effort
body = chat_completions("max_tokens", usage=False)
user = chat_user
choice = chat_choice
