"""How a provider's error objects read: the one reader for every place that meets one.

The decoders (an error event or chunk in the stream), the response check (a refused request's
body), the SDK-exception mapping (the body an SDK exception carries) and the encoders all read
an error object here, so a type and a message are found the same way wherever it came, and
``ProviderError.retryable``, which reads the type, agrees with itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .._events import ErrorReceived
from .._values import value

__all__ = ("ErrorShape",)


@value
class ErrorShape:
    """A provider's error object: where a body holds it, and the fields that name its type and
    give its message, each in the order they are looked for.

    ``keys`` are the body's keys that may hold the object; a body with none of them is the
    object itself. A string where the object should be is the message. A type field that names
    the type is taken before one that only numbers it.
    """

    keys: tuple[str, ...] = ("error",)
    type_fields: tuple[str, ...] = ("type",)
    message_fields: tuple[str, ...] = ("message",)

    def read(self, error: Any) -> tuple[str | None, str | None]:
        """An error object's type and message, where it has them (a non-text value as JSON text)."""
        if isinstance(error, str):
            return None, error or None
        if not isinstance(error, dict):
            return None, None
        return _kind(error, self.type_fields), _first(error, self.message_fields)

    def received(self, error: Any, default: str | None = None) -> ErrorReceived:
        """The event for an error object in the stream; without a message, ``default``, else
        the object itself as JSON text, so that nothing it said is lost."""
        kind, message = self.read(error)
        return ErrorReceived(kind, message or default or _json(error))

    def in_body(self, body: Any) -> tuple[str | None, str | None]:
        """An error body's type and message: the object's, its message else the body's own.

        Gemini answers a request that is not streamed with the body in a one-item list.
        """
        if isinstance(body, list) and body and isinstance(body[0], dict):
            body = body[0]
        if not isinstance(body, dict):
            return None, None
        error = next((body[key] for key in self.keys if key in body), body)
        kind, message = self.read(error)
        if message is None and isinstance(error, dict):
            message = _first(body, self.message_fields)
        return kind, message

    def then(self, other: ErrorShape) -> ErrorShape:
        """This shape's keys and fields first, then ``other``'s not already named."""
        return ErrorShape(
            _merged((self.keys, other.keys)),
            _merged((self.type_fields, other.type_fields)),
            _merged((self.message_fields, other.message_fields)),
        )


def _merged(groups: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for group in groups for name in group))


def _first(obj: dict[str, Any], fields: tuple[str, ...]) -> str | None:
    """The first of ``fields`` that ``obj`` gives a value, as text."""
    value = next((obj[name] for name in fields if obj.get(name)), None)
    return None if value is None else value if isinstance(value, str) else _json(value)


def _kind(obj: dict[str, Any], fields: tuple[str, ...]) -> str | None:
    """The error's type: the first field that names one, else the first value (Gemini's numeric
    ``code`` where no ``status`` came), so a name is never lost to a number before it."""
    return next((obj[name] for name in fields if isinstance(obj.get(name), str) and obj[name]), None) or _first(
        obj, fields
    )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
