"""What a bad call becomes on each path: one policy, in one home.

A bad call (cut off by the output limit, not JSON, failing its schema, naming a tool the request
did not offer) never reaches code that would run it. What happens instead is chosen from what
the path can do, by one of three actions:

- ``tell``: the model is told what was wrong. Where streamkit holds the request (the transports,
  the proxy), it answers the bad call upstream itself: the same request, with the turn so far and
  each call's result (a bad call's error, a valid call's "it stands") appended, and the response
  goes on with the model's new answer, so the client sees one turn whose calls are all valid and
  whose text is all the model wrote. At most ``rounds`` times a response; a response still
  holding a bad call after them ends as ``raise`` does.
- ``pass``: the call is handed on marked invalid (its raw text; a cut call without its end), to
  a client that checks calls and tells the model itself (pydantic-ai's retry).
- ``raise``: the response ends with one typed error naming each bad call and why
  (``InvalidCallsError``; in a stream, the format's own error event).

The words the model and the errors use are built here too (``said``), from the payload every
history writer sends back (``error_payload``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from .._errors import StreamkitError, UsageError
from .._turn_types import Outcome, Turn
from .._types import InvalidToolCall, ToolCall
from ..providers import FACTS, HISTORIES, REQUESTS

__all__ = (
    "ACTIONS",
    "PENDING",
    "Action",
    "BadCalls",
    "InvalidCallsError",
    "asked_again",
    "bad_calls",
    "said",
)

Action = Literal["tell", "pass", "raise"]
ACTIONS: tuple[str, ...] = get_args(Action)

#: What the model is told of a valid call of a turn it is asked again in: the call stands.
PENDING = "this call is valid and stands: it runs once your turn ends, and its result comes then; do not send it again"


@dataclass(frozen=True, slots=True)
class BadCalls:
    """What a path does with a bad call: ``action``, and for ``tell`` how many times a response
    may ask the model again (``rounds``) before it ends as ``raise`` does."""

    action: Action = "tell"
    rounds: int = 2

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise UsageError(f"the bad-call action must be one of {', '.join(ACTIONS)}, got {self.action!r}")
        if not isinstance(self.rounds, int) or isinstance(self.rounds, bool) or not 0 <= self.rounds <= 8:
            raise UsageError(f"the bad-call rounds must be an integer from 0 to 8, got {self.rounds!r}")


def bad_calls(value: BadCalls | str | None, default: BadCalls) -> BadCalls:
    """A path's option as a ``BadCalls``: one given, an action's name, or ``default``."""
    if value is None:
        return default
    if isinstance(value, BadCalls):
        return value
    if isinstance(value, str):
        return BadCalls(value)  # type: ignore[arg-type]  # checked there
    raise UsageError(f"invalid_calls must be one of {', '.join(ACTIONS)} or a BadCalls, got {type(value).__name__}")


def said(call: InvalidToolCall) -> str:
    """What the model is told about an invalid call: one sentence per issue."""
    from ..adapters._base import error_payload  # the history writers' words: loaded by the first bad call

    return "; ".join(issue["message"] for issue in error_payload(call)["errors"])


class InvalidCallsError(StreamkitError):
    """A turn's calls were not run because some of them were invalid.

    Attributes:
        invalid: the invalid calls, each with its issues.
        withheld: the valid calls of the same turn that were not run either (a framework that
            runs a turn's calls together or not at all).
        turns: how many turns in a row held invalid calls only, when that is why the run
            stopped (LangChain's ``AskAgainMiddleware``, after its ``retries``); else ``None``.
        rounds: how many times the model was asked again within one response (``tell`` on the
            transports and the proxy) before this; else ``None``. With neither, the message asks
            the model to send the calls again.
    """

    def __init__(
        self,
        invalid: Sequence[InvalidToolCall],
        withheld: Sequence[ToolCall] = (),
        *,
        turns: int | None = None,
        rounds: int | None = None,
    ) -> None:
        from ..adapters._base import call_id  # as in ``said``: not paid by a transport that meets no bad call

        parts = [f"the tool call {call.name} ({call_id(call)}) was not run: {said(call)}" for call in invalid]
        if withheld:
            names = ", ".join(f"{call.name} ({call_id(call)})" for call in withheld)
            parts.append(f"so the other calls of that turn were not run either: {names}")
        told = "; ".join(parts)
        if turns is not None:
            message = f"the model sent only invalid tool calls {turns} turns in a row; the last turn's: {told}."
        elif rounds is not None:
            message = f"the model was told of its invalid calls {rounds} times and sent invalid ones again: {told}."
        else:
            message = f"{told}. Send the calls again, each whole."
        super().__init__(message)
        self.invalid = tuple(invalid)
        self.withheld = tuple(withheld)
        self.turns = turns
        self.rounds = rounds


def asked_again(request: Mapping[str, Any], turn: Turn) -> dict[str, Any] | None:
    """``request`` asked again after ``turn``: its history followed by the turn and each call's
    result, a bad call's error (``error_payload``) and a valid call's ``PENDING``.

    A history given as one text (Responses' ``input: "..."``) is that text as the provider's
    user message. ``None`` where that cannot be written: a provider whose request has no history
    streamkit knows, a request without one, or a history writer that refuses the turn.
    """
    key = FACTS[turn.provider].history_key
    history = request.get(key) if key is not None else None
    if isinstance(history, str) and turn.provider in REQUESTS:
        history = [REQUESTS[turn.provider].user(history)]
    if key is None or not isinstance(history, list):
        return None
    writer = HISTORIES[turn.provider]
    outcomes: list[Outcome] = [call if isinstance(call, InvalidToolCall) else (call, PENDING) for call in turn.calls]
    try:
        written = [*writer.turn_messages(turn), *writer.tool_results_message(outcomes)]
    except UsageError:
        return None
    return {**request, key: [*history, *written]}
