"""OpenAI Responses: ``decode`` reads its stream, ``history`` writes its history and ``reemit``
writes its stream back with each call whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._facts import Facts

if TYPE_CHECKING:
    from .decode import OpenAIResponsesDecoder

__all__ = ("FACTS", "OpenAIResponsesDecoder")


FACTS = Facts(
    "openai_responses",
    finish_reasons={
        "completed": "stop",
        "max_output_tokens": "length",  # from incomplete_details.reason
        "content_filter": "content_filter",
        "incomplete": "other",  # incomplete with no reason given
    },
    base_url="https://api.openai.com/v1",
    request_path="/responses",
    path_end="/responses",
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
