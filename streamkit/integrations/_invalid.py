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

from .._reemit._policy import InvalidCallsError, said
from .._types import InvalidToolCall

__all__ = ("InvalidCallsError", "said", "unparseable")


def unparseable(call: InvalidToolCall) -> str:
    """An invalid call's arguments for a framework that parses them itself: streamkit's message,
    then the raw text. It starts with a letter, so no JSON parser, strict or lenient, reads it as
    an object, and the framework's own path for arguments it cannot parse answers the model."""
    return f"invalid arguments ({said(call)}): {call.raw}"
