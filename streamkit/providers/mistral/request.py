"""A Mistral request: Chat Completions with the limit as ``max_tokens``; its stream reports
usage unasked, and it refuses ``stream_options``."""

from __future__ import annotations

from .._request import chat_completions, plain_user

__all__ = ("MERGE_ROLES", "body", "user")

MERGE_ROLES = False
body = chat_completions("max_tokens", usage=False)
user = plain_user
