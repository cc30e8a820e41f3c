"""One response, read for a framework: what every framework integration takes from a stream.

The integrations that send their own requests (agno, CrewAI, Google ADK, LangChain, LiteLLM,
the OpenAI Agents SDK, smolagents) feed each event of a response through a ``Reader``, and
then map what it read to their framework's types. The rules they share are here, once:

1. **One choice.** The requests built here ask for one answer, and a framework's message holds
   one. A stream that holds another choice (``n`` above 1, Gemini's ``candidateCount``, set
   through ``extra``) raises ``UsageError`` at the first event of that choice: no answer is
   dropped, and none is merged into another, without a word.
2. **Function calls only.** The requests offer function tools only, and no framework here can
   run free text: a custom tool's call (``CustomToolCall``) raises ``UsageError``, never dropped.
3. **Each call whole, in order**, valid (``ToolCall``) or not (``InvalidToolCall``), at its
   position among the turn's calls: the index a framework keys calls by, distinct for each
   call (a provider's own may repeat).
4. **Usage**, whenever the provider sent token counts: input and output as numbers (0 for one
   it did not send: every framework's usage type holds numbers), their total, and the cache
   reads and reasoning tokens when it sent those (``None`` otherwise, for each framework to
   show in its own way).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from .._errors import UsageError
from .._turn_types import StreamEvent, Turn
from .._types import CustomToolCall, InvalidToolCall, TokenUsage, ToolCall

__all__ = ("Read", "Reader", "Usage", "read", "refuse_custom", "usage_as", "usage_of")

T = TypeVar("T")


@dataclass(frozen=True)
class Usage:
    """A turn's token counts, as a framework reports them (rule 4 above)."""

    input: int
    output: int
    cache_read: int | None = None
    reasoning: int | None = None

    @property
    def total(self) -> int:
        return self.input + self.output


def usage_of(tokens: TokenUsage | None) -> Usage | None:
    """The counts a framework reports for ``tokens``; ``None`` when the provider sent none."""
    if tokens is None:
        return None
    return Usage(tokens.input_tokens or 0, tokens.output_tokens or 0, tokens.cache_read_tokens, tokens.reasoning_tokens)


def usage_as(tokens: TokenUsage | None, make: Callable[[Usage], T]) -> T | None:
    """The framework's own usage value ``make`` builds from the counts of ``tokens``; ``None``
    when the provider sent none, as every framework here takes it."""
    counts = usage_of(tokens)
    return None if counts is None else make(counts)


@dataclass(frozen=True)
class Read:
    """A finished turn, read for a framework: the turn (its items are choice 0's), its calls."""

    turn: Turn
    calls: tuple[ToolCall | InvalidToolCall, ...]

    @property
    def valid(self) -> tuple[ToolCall, ...]:
        return tuple(call for call in self.calls if isinstance(call, ToolCall))

    @property
    def invalid(self) -> tuple[InvalidToolCall, ...]:
        return tuple(call for call in self.calls if isinstance(call, InvalidToolCall))

    @property
    def usage(self) -> Usage | None:
        return usage_of(self.turn.tokens)


def read(turn: Turn, framework: str) -> Read:
    """``turn``, made from a stream or stored, as ``framework`` takes it; raises as ``Reader.feed``
    does for another choice or a custom tool's call."""
    _one_choice(turn.choice, framework)
    for call in turn.calls:
        refuse_custom(call, framework)
    return Read(turn, tuple(call for call in turn.calls if isinstance(call, ToolCall | InvalidToolCall)))


class Reader:
    """One response's events, as ``framework`` takes them: each event checked as it comes, the
    calls in order, and at the end the turn."""

    def __init__(self, provider: str, framework: str) -> None:
        self.provider = provider
        self.framework = framework
        self.events: list[StreamEvent] = []
        #: The calls so far, in order: a call's position here is the index its framework gets.
        self.calls: list[ToolCall | InvalidToolCall] = []

    def feed(self, event: StreamEvent) -> None:
        """Keep ``event``; raise ``UsageError`` for one of another choice, or a custom tool's call."""
        _one_choice(getattr(event, "choice", 0), self.framework)
        refuse_custom(event, self.framework)
        self.events.append(event)
        if isinstance(event, ToolCall | InvalidToolCall):
            self.calls.append(event)

    @property
    def position(self) -> int:
        """The position of the last call fed among the turn's calls: the index its framework gets."""
        return len(self.calls) - 1

    @property
    def valid(self) -> list[ToolCall]:
        return [call for call in self.calls if isinstance(call, ToolCall)]

    def read(self) -> Read:
        """The turn the events fed so far make."""
        return Read(Turn.from_events(self.events, self.provider), tuple(self.calls))


def refuse_custom(event: object, framework: str) -> None:
    """Raise for a custom tool's call: the requests built here offer only function tools, and
    the framework has no way to run free text, so such a call is an error, never dropped."""
    if isinstance(event, CustomToolCall):
        raise UsageError(
            f"the model called {event.name!r} as a custom tool (free text, a custom_tool_call), which {framework} "
            "cannot run: offer it as a function tool, or read the stream with streamkit.iter_events"
        )


def _one_choice(choice: int, framework: str) -> None:
    if choice != 0:
        raise UsageError(
            f"{framework} takes one answer per request, and the response holds choice {choice}: "
            "ask for one (no n or candidateCount above 1)"
        )
