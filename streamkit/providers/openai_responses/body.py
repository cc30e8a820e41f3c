"""A non-streamed Responses body: its calls (the ``function_call`` and ``custom_tool_call``
items of ``output``, a custom call's text kept as text) and its stop reason
(``incomplete_details.reason``, else ``status``).

A body cut by the output limit (``status: "incomplete"``) cuts each call item not
``completed``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..._events import RawCall
from ..._types import TEXT_CALL
from .._body import listed, text

__all__ = ("calls", "stop_reason")


def calls(body: dict[str, Any]) -> Iterator[RawCall]:
    """Each call item of ``output``, as the accumulator would hand it over."""
    cut = body.get("status") == "incomplete"
    for index, item in enumerate(listed(body.get("output"))):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in ("function_call", TEXT_CALL[1]):
            open_ = item.get("status") == "incomplete" or (cut and item.get("status") != "completed")
            custom = kind == TEXT_CALL[1]
            value = item.get("input" if custom else "arguments")
            state = dict([TEXT_CALL]) if custom else {}
            yield RawCall(index, text(item, "call_id"), text(item, "name"), value, truncated=open_, state=state)


def stop_reason(body: dict[str, Any]) -> Any:
    """Why the response is incomplete, else its status."""
    details = body.get("incomplete_details")
    stop = details.get("reason") if isinstance(details, dict) else None
    return stop or body.get("status")
