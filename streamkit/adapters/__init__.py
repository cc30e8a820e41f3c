"""Exit adapters: a call and its result written in each provider's own history shape.

Every module here has the same five functions:

- ``assistant_message(calls, *, text=None)``: the history entries that record the calls;
- ``tool_results_message(outcomes)``: the entries that carry a turn's results, where each
  outcome is a ``(ToolCall, result)`` pair, an ``InvalidToolCall`` or a ``ToolResult`` (what
  ``run_tools`` returns; a failed one is written as that provider's error result);
- ``tool_result_message(call, result)`` and ``error_result_message(invalid_call)``: the same
  for one outcome;
- ``turn_messages(turn)``: the entries that record a whole ``streamkit.Turn`` (reasoning,
  signatures, server-side tools, text and calls, in order); the list's ``dropped`` names what
  could not be carried (another provider's state).

Each returns a list, to add to the history with ``history += ...``. ``ADAPTERS`` maps each
provider slug to its module; it is read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType, ModuleType

from . import anthropic, bedrock, cohere, gemini, mistral, ollama, openai_chat, openai_responses

__all__ = (
    "ADAPTERS",
    "anthropic",
    "bedrock",
    "cohere",
    "gemini",
    "mistral",
    "ollama",
    "openai_chat",
    "openai_responses",
)

ADAPTERS: Mapping[str, ModuleType] = MappingProxyType(
    {
        "anthropic": anthropic,
        "bedrock": bedrock,
        "cohere": cohere,
        "gemini": gemini,
        "mistral": mistral,
        "ollama": ollama,
        "openai_chat": openai_chat,
        "openai_responses": openai_responses,
    }
)
