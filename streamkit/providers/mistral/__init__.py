"""Mistral: ``decode`` reads its stream and ``history`` writes its history (its stream is
written back by OpenAI Chat's ``reemit``: it speaks OpenAI Chat chunks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._facts import Facts
from ..openai_chat import FACTS as OPENAI_CHAT

if TYPE_CHECKING:
    from .decode import MistralDecoder

__all__ = ("FACTS", "MistralDecoder")


FACTS = Facts(
    "mistral",
    finish_reasons={**OPENAI_CHAT.finish_reasons, "model_length": "length"},
    base_url="https://api.mistral.ai/v1",
    request_path="/chat/completions",
    path_end=None,  # OpenAI Chat's path: a request's path does not tell them apart
    auth_header=OPENAI_CHAT.auth_header,
    auth_value=OPENAI_CHAT.auth_value,
    key_variables=("MISTRAL_API_KEY",),
    base_url_variable="MISTRAL_BASE_URL",
    telemetry_name="mistral_ai",
    sdk_packages=("mistralai",),
)


def __getattr__(name: str) -> Any:
    """The decoder's names, loaded on first use: writing this provider's history loads no decoder."""
    if name in __all__:
        from . import decode

        return getattr(decode, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
