"""Google Gemini: ``decode`` reads its stream, ``history`` writes its history and ``reemit``
writes its stream back with each call whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._facts import Facts

if TYPE_CHECKING:
    from .decode import GeminiDecoder

__all__ = ("FACTS", "GeminiDecoder")


#: The reasons a candidate or a prompt was blocked by a filter.
_FILTERS = (
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
)


FACTS = Facts(
    "gemini",
    finish_reasons={
        "STOP": "stop",
        "MAX_TOKENS": "length",
        **dict.fromkeys(_FILTERS, "content_filter"),  # finishReason, and a prompt's blockReason
        "MALFORMED_FUNCTION_CALL": "error",
        "UNEXPECTED_TOOL_CALL": "error",
        "TOO_MANY_TOOL_CALLS": "error",
        "FINISH_REASON_UNSPECIFIED": "other",
        "BLOCKED_REASON_UNSPECIFIED": "other",
        "LANGUAGE": "other",
        "OTHER": "other",
    },
    base_url="https://generativelanguage.googleapis.com",
    request_path="/v1beta/models/{model}:streamGenerateContent?alt=sse",
    path_end=":streamGenerateContent",
    auth_header="x-goog-api-key",
    # google-genai falls back to GOOGLE_API_KEY when GEMINI_API_KEY is unset.
    key_variables=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    base_url_variable="GOOGLE_GEMINI_BASE_URL",
    telemetry_name="gcp.gemini",
    sdk_packages=("google",),
)


def __getattr__(name: str) -> Any:
    """The decoder's names, loaded on first use: writing this provider's history loads no decoder."""
    if name in __all__:
        from . import decode

        return getattr(decode, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
