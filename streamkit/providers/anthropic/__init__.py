"""Anthropic Messages: ``decode`` reads its stream, ``history`` writes its history and ``reemit``
writes its stream back with each call whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._facts import Facts

if TYPE_CHECKING:
    from .decode import AnthropicDecoder, cached_apart

__all__ = ("FACTS", "AnthropicDecoder", "cached_apart")


FACTS = Facts(
    "anthropic",
    finish_reasons={
        "end_turn": "stop",
        "stop_sequence": "stop",
        "tool_use": "tool_calls",
        "max_tokens": "length",
        "model_context_window_exceeded": "length",
        "refusal": "content_filter",
        "pause_turn": "other",  # a server tool paused the turn: send it back to continue
    },
    base_url="https://api.anthropic.com",
    request_path="/v1/messages",
    path_end="/messages",
    auth_header="x-api-key",
    request_headers={"anthropic-version": "2023-06-01"},
    client_headers=("anthropic-version", "anthropic-beta"),
    key_variables=("ANTHROPIC_API_KEY",),
    base_url_variable="ANTHROPIC_BASE_URL",
    sdk_packages=("anthropic",),
)


def __getattr__(name: str) -> Any:
    """The decoder's names, loaded on first use: writing this provider's history loads no decoder."""
    if name in __all__:
        from . import decode

        return getattr(decode, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
