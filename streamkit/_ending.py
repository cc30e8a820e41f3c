"""A response's end in one vocabulary for every provider: ``finish`` and ``TokenUsage``.

Each provider names its stop reasons and counts its tokens its own way; ``ResponseEnd`` keeps
those as received (``stop_reason``, ``usage``) and adds the same facts in a shared form:

- ``finish``: one of ``FINISHES``, from the provider's ``finish_reasons`` (its facts). A normal
  stop with at least one call delivered is ``tool_calls`` (Gemini, the Responses API and Ollama
  say only that they stopped), and a reason not in the table, or none, is ``other``: nothing is
  guessed from its spelling.
- ``TokenUsage``: input tokens counted whole (cached or not, written to the cache or not),
  output tokens counted whole (reasoning included), and the cached and reasoning parts of
  them, where the provider gives them. Each decoder's ``tokens`` reads its provider's usage
  object (a provider fact, declared in ``providers/<slug>/decode.py``); a usage object holding none
  of the counts it knows is no ``TokenUsage`` at all.

Docs: https://platform.openai.com/docs/api-reference/chat/object,
https://platform.openai.com/docs/api-reference/responses/object,
https://docs.anthropic.com/en/api/messages (``stop_reason``, ``usage``),
https://ai.google.dev/api/generate-content#FinishReason and ``UsageMetadata``,
https://docs.cohere.com/reference/chat-stream, https://docs.mistral.ai/api/,
https://docs.ollama.com/api/chat, and Bedrock's ``ConverseStream`` ``StopReason`` and ``TokenUsage``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._types import CUTTING_FINISHES, Finish, TokenUsage

__all__ = ("cutting_reasons", "finish_of", "tokens_of")

_STOP: Finish = "stop"
_CALLS: Finish = "tool_calls"
_OTHER: Finish = "other"


def finish_of(reasons: Mapping[str, Finish], stop_reason: str | None, called: bool) -> Finish:
    """The shared ``finish`` for a stop reason, by the provider's table (its decoder's
    ``finish_reasons``); ``called``: a call was delivered."""
    finish = reasons.get(stop_reason, _OTHER) if stop_reason is not None else _OTHER
    return _CALLS if finish == _STOP and called else finish


def cutting_reasons(reasons: Mapping[str, Finish]) -> frozenset[str]:
    """The provider's stop reasons (its decoder's ``finish_reasons``) that cut off a call being written."""
    return frozenset(reason for reason, finish in reasons.items() if finish in CUTTING_FINISHES)


def tokens_of(read: Callable[[Mapping[str, Any]], TokenUsage], usage: Mapping[str, Any] | None) -> TokenUsage | None:
    """The shared token counts in a provider's usage object, by its reader (its decoder's
    ``tokens``); ``None`` when it gave none, or none of the counts the reader knows."""
    if not usage:
        return None
    tokens = read(usage)
    return None if tokens == _NONE else tokens


_NONE = TokenUsage()
