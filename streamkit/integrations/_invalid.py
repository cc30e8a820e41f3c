"""What a framework without a place for invalid calls is told about them, worded once.

smolagents and agno hand a model's calls straight to their tools; an invalid call (cut off by
the output limit, invalid JSON, failing its tool's schema, a tool not offered) must never reach
them. Their integrations withhold such a call and tell the model through the framework's own
error path, in streamkit's words (``error_payload``): ``InvalidCallsError`` carries them.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import StreamkitError
from .._types import InvalidToolCall, ToolCall
from ..adapters._base import call_id, error_payload

__all__ = ("InvalidCallsError", "said")


def said(call: InvalidToolCall) -> str:
    """What the model is told about an invalid call: one sentence per issue."""
    return "; ".join(issue["message"] for issue in error_payload(call)["errors"])


class InvalidCallsError(StreamkitError):
    """A turn's calls were not run because some of them were invalid.

    ``invalid`` holds the invalid calls; ``withheld`` the valid calls of the same turn that were
    not run either (the framework runs a turn's calls together or not at all).
    """

    def __init__(self, invalid: Sequence[InvalidToolCall], withheld: Sequence[ToolCall] = ()) -> None:
        parts = [f"the tool call {call.name} ({call_id(call)}) was not run: {said(call)}" for call in invalid]
        if withheld:
            names = ", ".join(f"{call.name} ({call_id(call)})" for call in withheld)
            parts.append(f"so the other calls of that turn were not run either: {names}")
        super().__init__("; ".join(parts) + ". Send the calls again, each whole.")
        self.invalid = tuple(invalid)
        self.withheld = tuple(withheld)
