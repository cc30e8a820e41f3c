"""A response's end in one vocabulary for every provider: ``finish`` and ``TokenUsage``.

Each provider names its stop reasons and counts its tokens its own way; ``ResponseEnd`` keeps
those as received (``stop_reason``, ``usage``) and adds the same facts in a shared form:

- ``finish``: one of ``FINISHES``, from the table below. A normal stop with at least one call
  delivered is ``tool_calls`` (Gemini, the Responses API and Ollama say only that they stopped),
  and a reason not in the table, or none, is ``other``: nothing is guessed from its spelling.
- ``TokenUsage``: input tokens counted whole (cached or not, written to the cache or not),
  output tokens counted whole (reasoning included), and the cached and reasoning parts of
  them, where the provider gives them. Anthropic and Bedrock count cache reads and writes apart
  from ``input_tokens``, and Gemini counts thoughts apart from ``candidatesTokenCount``: their
  parts are added up here, so that ``input_tokens`` means the same for every provider.

Docs: https://platform.openai.com/docs/api-reference/chat/object,
https://platform.openai.com/docs/api-reference/responses/object,
https://docs.anthropic.com/en/api/messages (``stop_reason``, ``usage``),
https://ai.google.dev/api/generate-content#FinishReason and ``UsageMetadata``,
https://docs.cohere.com/reference/chat-stream, https://docs.mistral.ai/api/,
https://docs.ollama.com/api/chat, and Bedrock's ``ConverseStream`` ``StopReason`` and ``TokenUsage``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._types import Finish, TokenUsage

__all__ = ("finish_of", "tokens_of")

_STOP: Finish = "stop"
_CALLS: Finish = "tool_calls"
_OTHER: Finish = "other"


def finish_of(reasons: Mapping[str, Finish], stop_reason: str | None, called: bool) -> Finish:
    """The shared ``finish`` for a stop reason, by the provider's table (its decoder's
    ``finish_reasons``); ``called``: a call was delivered."""
    finish = reasons.get(stop_reason, _OTHER) if stop_reason is not None else _OTHER
    return _CALLS if finish == _STOP and called else finish


def tokens_of(provider: str, usage: Mapping[str, Any] | None) -> TokenUsage | None:
    """The shared token counts in a provider's usage object; ``None`` when it gave none."""
    read = _READERS.get(provider)
    if not usage or read is None:
        return None
    tokens = read(usage)
    return None if tokens == _NONE else tokens


_NONE = TokenUsage()


def _int(usage: Mapping[str, Any], *path: str) -> int | None:
    value: Any = usage
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value if type(value) is int else None


def _sum(*values: int | None) -> int | None:
    given = [value for value in values if value is not None]
    return sum(given) if given else None


def _openai_chat(usage: Mapping[str, Any]) -> TokenUsage:
    cached = _int(usage, "prompt_tokens_details", "cached_tokens")
    return TokenUsage(
        _int(usage, "prompt_tokens"),
        _int(usage, "completion_tokens"),
        cached if cached is not None else _int(usage, "prompt_cache_hit_tokens"),  # DeepSeek
        _int(usage, "completion_tokens_details", "reasoning_tokens"),
    )


def _openai_responses(usage: Mapping[str, Any]) -> TokenUsage:
    return TokenUsage(
        _int(usage, "input_tokens"),
        _int(usage, "output_tokens"),
        _int(usage, "input_tokens_details", "cached_tokens"),
        _int(usage, "output_tokens_details", "reasoning_tokens"),
    )


def _anthropic(usage: Mapping[str, Any]) -> TokenUsage:
    read = _int(usage, "cache_read_input_tokens")
    written = _int(usage, "cache_creation_input_tokens")
    return TokenUsage(_sum(_int(usage, "input_tokens"), read, written), _int(usage, "output_tokens"), read, None)


def _bedrock(usage: Mapping[str, Any]) -> TokenUsage:
    read = _int(usage, "cacheReadInputTokens")
    written = _int(usage, "cacheWriteInputTokens")
    return TokenUsage(_sum(_int(usage, "inputTokens"), read, written), _int(usage, "outputTokens"), read, None)


def _gemini(usage: Mapping[str, Any]) -> TokenUsage:
    thoughts = _int(usage, "thoughtsTokenCount")
    return TokenUsage(
        _sum(_int(usage, "promptTokenCount"), _int(usage, "toolUsePromptTokenCount")),
        _sum(_int(usage, "candidatesTokenCount"), thoughts),
        _int(usage, "cachedContentTokenCount"),
        thoughts,
    )


def _cohere(usage: Mapping[str, Any]) -> TokenUsage:
    counted = "tokens" if isinstance(usage.get("tokens"), Mapping) else "billed_units"
    return TokenUsage(
        _int(usage, counted, "input_tokens"), _int(usage, counted, "output_tokens"), _int(usage, "cached_tokens"), None
    )


def _ollama(usage: Mapping[str, Any]) -> TokenUsage:
    return TokenUsage(_int(usage, "prompt_eval_count"), _int(usage, "eval_count"), None, None)


_READERS = {
    "openai_chat": _openai_chat,
    "mistral": _openai_chat,
    "openai_responses": _openai_responses,
    "anthropic": _anthropic,
    "bedrock": _bedrock,
    "gemini": _gemini,
    "cohere": _cohere,
    "ollama": _ollama,
}
