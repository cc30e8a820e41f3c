"""Ollama: ``decode`` reads its stream, ``history`` writes its history and ``reemit``
writes its stream back with each call whole."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._facts import Facts

if TYPE_CHECKING:
    from .decode import OllamaDecoder

__all__ = ("FACTS", "OllamaDecoder")


FACTS = Facts(
    "ollama",
    finish_reasons={"stop": "stop", "length": "length", "load": "other", "unload": "other"},
    path_end="/api/chat",
    sdk_packages=("ollama",),  # the conventions list no name for it: its slug is its name
)


def __getattr__(name: str) -> Any:
    """The decoder's names, loaded on first use: writing this provider's history loads no decoder."""
    if name in __all__:
        from . import decode

        return getattr(decode, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
