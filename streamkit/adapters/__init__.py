"""Exit adapters: a call and its result written in each provider's own history shape.

Every module here has the same five functions:

- ``assistant_message(calls, *, text=None)``: the history entries that record the calls;
- ``tool_results_message(outcomes)``: the entries that carry a turn's results, where each
  outcome is a ``(call, result)`` pair, a ``(call, result, is_error)`` triple (``call`` a
  ``ToolCall``, or a ``CallRef`` of its id and name), an ``InvalidToolCall`` or a
  ``ToolResult`` (what ``run_tools`` returns; a failed one is written as that provider's error
  result);
- ``tool_result_message(call, result, *, is_error=False)`` and
  ``error_result_message(invalid_call)``: the same for one outcome;
- ``turn_messages(turn)``: the entries that record a whole ``streamkit.Turn`` (reasoning,
  signatures, server-side tools, text and calls, in order); the list's ``dropped`` names what
  could not be carried (another provider's state).

Each returns a list, to add to the history with ``history += ...``. ``ADAPTERS`` maps each
provider slug to its module, typed by the ``Adapter`` protocol those five functions make; it is
read-only, and loads a provider's module at its slug's first lookup. Each provider's functions
are written in its own folder (``providers/<slug>/history.py``); the modules here name them at
their public path. ``call_id(call)`` is the id the adapters write for a call, derived from the call when
the provider gave none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

from .._turn_types import Turn
from .._types import InvalidToolCall
from ..providers import HISTORIES
from ._base import Call, Message, Outcome, Ran, call_id
from ._history import TurnMessages

if TYPE_CHECKING:
    from . import anthropic, bedrock, cohere, gemini, mistral, ollama, openai_chat, openai_responses

__all__ = (
    "ADAPTERS",
    "Adapter",
    "call_id",
    "anthropic",
    "bedrock",
    "cohere",
    "gemini",
    "mistral",
    "ollama",
    "openai_chat",
    "openai_responses",
)


class Adapter(Protocol):
    """What every adapter module has: its five functions, as ``ADAPTERS[slug]`` is typed."""

    def assistant_message(self, calls: Iterable[Call], *, text: str | None = None) -> list[Message]: ...
    def tool_results_message(self, outcomes: Iterable[Outcome]) -> list[Message]: ...
    def tool_result_message(self, call: Ran, result: Any, *, is_error: bool = False) -> list[Message]: ...
    def error_result_message(self, call: InvalidToolCall) -> list[Message]: ...
    def turn_messages(self, turn: Turn) -> TurnMessages: ...


ADAPTERS: Mapping[str, Adapter] = cast("Mapping[str, Adapter]", HISTORIES)


def __getattr__(name: str) -> Any:
    """Each provider's module, loaded on first use (``streamkit.adapters.anthropic``)."""
    if name in ADAPTERS:
        return ADAPTERS[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
