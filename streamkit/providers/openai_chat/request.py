"""An OpenAI Chat Completions request: usage asked for in the stream, the limit as
``max_completion_tokens``."""

from __future__ import annotations

from .._request import chat_completions, plain_user

__all__ = ("MERGE_ROLES", "body", "user")

MERGE_ROLES = False
body = chat_completions("max_completion_tokens", usage=True)
user = plain_user
