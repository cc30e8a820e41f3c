"""A non-streamed Chat Completions body: its calls (``choices[].message.tool_calls``) and its
stop reason (the first choice's ``finish_reason``).

A choice whose finish reason cuts (``length``, ``content_filter``, ``error``…: ``FACTS.cutting``,
as in a stream) cuts every call of its choice: its calls end only at the finish reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..._events import RawCall
from .._body import listed, text
from . import FACTS

__all__ = ("calls", "stop_reason")


def calls(body: dict[str, Any]) -> Iterator[RawCall]:
    """Each call of each choice, as the accumulator would hand it over."""
    for number, choice in enumerate(listed(body.get("choices"))):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        cut = choice.get("finish_reason") in FACTS.cutting
        for index, entry in enumerate(listed(message.get("tool_calls"))):
            function = entry.get("function") if isinstance(entry, dict) else None
            function = function if isinstance(function, dict) else {}
            where = choice.get("index", number)
            yield RawCall(
                index,
                text(entry, "id"),
                text(function, "name"),
                function.get("arguments"),
                choice=where if isinstance(where, int) else number,
                truncated=cut,
            )


def stop_reason(body: dict[str, Any]) -> Any:
    """The first choice's ``finish_reason``, as given."""
    first = next(iter(listed(body.get("choices"))), None)
    return first.get("finish_reason") if isinstance(first, dict) else None
