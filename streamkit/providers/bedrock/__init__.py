"""Amazon Bedrock ConverseStream: ``decode`` reads its stream and ``history`` writes its history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._facts import Facts
from ..anthropic import FACTS as ANTHROPIC

if TYPE_CHECKING:
    from .decode import BedrockDecoder

__all__ = ("FACTS", "BedrockDecoder")


FACTS = Facts(
    "bedrock",
    finish_reasons={
        **ANTHROPIC.finish_reasons,  # Claude's, through Converse
        "guardrail_intervened": "content_filter",
        "content_filtered": "content_filter",
        "malformed_model_output": "error",
        "malformed_tool_use": "error",
    },
    signed=True,
    telemetry_name="aws.bedrock",
    sdk_packages=("botocore", "aiobotocore"),
)


def __getattr__(name: str) -> Any:
    """The decoder's names, loaded on first use: writing this provider's history loads no decoder."""
    if name in __all__:
        from . import decode

        return getattr(decode, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
