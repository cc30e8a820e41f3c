"""A non-streamed Messages body: its calls (the ``tool_use`` blocks of ``content``) and its
stop reason (``stop_reason``).

A body whose stop reason cuts (``max_tokens``, ``model_context_window_exceeded``, ``refusal``:
``FACTS.cutting``, as in a stream) cuts its last block, the only one that can still be open: a
body does not say whether its text ended before the cut.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..._events import RawCall
from .._body import listed, text
from . import FACTS

__all__ = ("calls", "stop_reason")


def calls(body: dict[str, Any]) -> Iterator[RawCall]:
    """Each ``tool_use`` block, as the accumulator would hand it over."""
    blocks = listed(body.get("content"))
    cut = body.get("stop_reason") in FACTS.cutting
    for index, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "tool_use":
            last = cut and index == len(blocks) - 1
            yield RawCall(index, text(block, "id"), text(block, "name"), block.get("input"), truncated=last)


def stop_reason(body: dict[str, Any]) -> Any:
    """The body's ``stop_reason``, as given."""
    return body.get("stop_reason")
