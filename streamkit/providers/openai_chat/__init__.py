"""OpenAI Chat Completions: ``decode`` reads its stream, ``history`` writes its history and ``reemit``
writes its stream back with each call whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._facts import Facts

if TYPE_CHECKING:
    from .decode import OpenAIChatDecoder

__all__ = ("FACTS", "OpenAIChatDecoder")


FACTS = Facts(
    "openai_chat",
    finish_reasons={
        "stop": "stop",
        "tool_calls": "tool_calls",
        "function_call": "tool_calls",  # the deprecated single-function form
        "length": "length",
        "content_filter": "content_filter",
        "error": "error",  # OpenRouter and other gateways
        "insufficient_system_resource": "error",  # DeepSeek
    },
    base_url="https://api.openai.com/v1",
    request_path="/chat/completions",
    path_end="/chat/completions",
    auth_header="Authorization",
    auth_value="Bearer {}",
    client_headers=("openai-organization", "openai-project", "openai-beta"),
    key_variables=("OPENAI_API_KEY",),
    base_url_variable="OPENAI_BASE_URL",
    telemetry_name="openai",
    sdk_packages=("openai",),
)


def __getattr__(name: str) -> Any:
    """The decoder's names, loaded on first use: writing this provider's history loads no decoder."""
    if name in __all__:
        from . import decode

        return getattr(decode, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
