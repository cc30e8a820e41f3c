"""What a framework is told about invalid calls, worded once.

An invalid call (cut off by the output limit, invalid JSON, failing its tool's schema, a tool
not offered) never reaches a framework's tools. Each integration tells the model through the
framework's own path for it, in streamkit's words (``error_payload``, one sentence per issue:
``said``): as arguments no JSON parser reads (``unparseable``: CrewAI, LangChain, the OpenAI
Agents SDK), as what an ``InvalidCallsError`` says of them (smolagents adds it to the
observation of the turn's valid calls, DSPy gets it as the text of a turn without valid calls),
or as an ``InvalidCallsError`` raised (smolagents for a step of invalid calls only; LangChain's
``AskAgainMiddleware`` when the model sends nothing else, turn after turn).
"""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import StreamkitError
from .._types import InvalidToolCall, ToolCall
from ..adapters._base import call_id, error_payload

__all__ = ("InvalidCallsError", "said", "unparseable")


def said(call: InvalidToolCall) -> str:
    """What the model is told about an invalid call: one sentence per issue."""
    return "; ".join(issue["message"] for issue in error_payload(call)["errors"])


def unparseable(call: InvalidToolCall) -> str:
    """An invalid call's arguments for a framework that parses them itself: streamkit's message,
    then the raw text. It starts with a letter, so no JSON parser, strict or lenient, reads it as
    an object, and the framework's own path for arguments it cannot parse answers the model."""
    return f"invalid arguments ({said(call)}): {call.raw}"


class InvalidCallsError(StreamkitError):
    """A turn's calls were not run because some of them were invalid.

    Attributes:
        invalid: the invalid calls, each with its issues.
        withheld: the valid calls of the same turn that were not run either (a framework that
            runs a turn's calls together or not at all).
        turns: how many turns in a row held invalid calls only, when that is why the run
            stopped (LangChain's ``AskAgainMiddleware``, after its ``retries``); else ``None``,
            and the message asks the model to send the calls again.
    """

    def __init__(
        self, invalid: Sequence[InvalidToolCall], withheld: Sequence[ToolCall] = (), *, turns: int | None = None
    ) -> None:
        parts = [f"the tool call {call.name} ({call_id(call)}) was not run: {said(call)}" for call in invalid]
        if withheld:
            names = ", ".join(f"{call.name} ({call_id(call)})" for call in withheld)
            parts.append(f"so the other calls of that turn were not run either: {names}")
        told = "; ".join(parts)
        if turns is None:
            message = f"{told}. Send the calls again, each whole."
        else:
            message = f"the model sent only invalid tool calls {turns} turns in a row; the last turn's: {told}."
        super().__init__(message)
        self.invalid = tuple(invalid)
        self.withheld = tuple(withheld)
        self.turns = turns
