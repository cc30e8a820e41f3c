"""What the non-streamed body readers (each provider's ``body.py``) share: a field read only
when it has the type its format gives it, so a malformed body yields fewer calls, never an
exception."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from .._events import RawCall

__all__ = ("Body", "listed", "text")


class Body(Protocol):
    """What every ``body.py`` has: a whole body's calls, and its stop reason as given."""

    def calls(self, body: dict[str, Any]) -> Iterator[RawCall]: ...
    def stop_reason(self, body: dict[str, Any]) -> Any: ...


def listed(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def text(obj: Any, key: str) -> str | None:
    """The string at ``obj[key]``, or ``None`` when ``obj`` is no object or the value no string."""
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, str) else None
