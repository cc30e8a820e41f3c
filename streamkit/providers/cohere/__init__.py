"""Cohere Chat v2: ``decode`` reads its stream, ``history`` writes its history and ``reemit``
writes its stream back with each call whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._facts import Facts

if TYPE_CHECKING:
    from .decode import CohereDecoder

__all__ = ("FACTS", "CohereDecoder")


FACTS = Facts(
    "cohere",
    finish_reasons={
        "COMPLETE": "stop",
        "STOP_SEQUENCE": "stop",
        "TOOL_CALL": "tool_calls",
        "MAX_TOKENS": "length",
        "ERROR_LIMIT": "length",
        "ERROR_TOXIC": "content_filter",
    },
    path_end="/v2/chat",
    auth_header="Authorization",
    auth_value="Bearer {}",
    key_variables=("CO_API_KEY",),
    base_url_variable="CO_API_URL",
    sdk_packages=("cohere",),
)


def __getattr__(name: str) -> Any:
    """The decoder's names, loaded on first use: writing this provider's history loads no decoder."""
    if name in __all__:
        from . import decode

        return getattr(decode, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
