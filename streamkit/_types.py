"""Values that leave the library: completed calls, invalid calls, text and the end of a response.

Every value is frozen and slotted, and its repr is short enough for a log line: argument
objects and raw text are cut, never printed whole.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, TypeAlias

__all__ = (
    "ISSUE_KINDS",
    "ArgumentIssue",
    "ArgumentsPreview",
    "InvalidToolCall",
    "JSONObject",
    "ResponseEnd",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
)

JSONObject: TypeAlias = dict[str, Any]
"""A parsed JSON object: the ``input`` of a call."""

#: The fixed vocabulary of ``ArgumentIssue.kind``. Kinds are added, never renamed.
ISSUE_KINDS = (
    "invalid_json",  # the arguments are not JSON (position given)
    "not_an_object",  # valid JSON, but an array or a scalar
    "concatenated_json",  # one JSON object followed by more text: calls glued together
    "truncated",  # the output limit or the end of the stream cut the call
    "missing_name",  # the provider never named the tool
    "schema",  # the input does not match the tool's JSON Schema
    "unknown_tool",  # the model called a tool that was not offered
    "arguments_mismatch",  # the provider's final arguments text differs from the streamed fragments
    "malformed_call",  # the provider itself reported the call as malformed (its message is the raw text)
    "too_deep",  # arrays and objects nested deeper than Limits.max_depth
)

_REPR_LIMIT = 60


def _cut(text: str, limit: int = _REPR_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


@dataclass(frozen=True, slots=True)
class ArgumentIssue:
    """One thing wrong with a call's arguments, in a form a model can act on.

    Attributes:
        kind: one of ``ISSUE_KINDS``.
        message: a sentence for a person or a model.
        path: the JSON path of the offending value (``$.items[2].qty``), where known.
        position: the character offset in the raw text where parsing failed, where known.
    """

    kind: str
    message: str
    _: KW_ONLY
    path: str | None = None
    position: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used by ``streamkit replay`` and by error messages to the model."""
        out: dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.path is not None:
            out["path"] = self.path
        if self.position is not None:
            out["position"] = self.position
        return out


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A completed tool call whose ``input`` was parsed strictly from complete arguments.

    Attributes:
        index: the provider's slot for the call (a content-block index for Anthropic, the
            tool-call index within its choice for OpenAI Chat).
        id: the provider's call id; ``None`` when the provider gives none.
        name: the tool's name.
        input: the arguments, always a JSON object.
        choice: the choice the call belongs to (OpenAI Chat with ``n > 1``), else 0.
        anomalies: the reconciliation rules that fired for this call (see the README).
    """

    index: int
    id: str | None
    name: str
    input: JSONObject
    _: KW_ONLY
    choice: int = 0
    anomalies: tuple[str, ...] = ()

    def __repr__(self) -> str:
        args = _cut(repr(self.input))
        return f"ToolCall(index={self.index}, id={self.id!r}, name={self.name!r}, input={args})"


@dataclass(frozen=True, slots=True)
class InvalidToolCall:
    """A call that cannot be executed: its raw text and every issue found with it.

    Attributes:
        index: as for ``ToolCall``.
        id: the provider's call id, where known.
        name: the tool's name, where known.
        raw: the argument text exactly as received (an object is shown as compact JSON).
        errors: every issue found, never empty.
        choice: as for ``ToolCall``.
        anomalies: as for ``ToolCall``.
        input: the parsed arguments when they were a JSON object that failed a later check
            (its tool's schema, or a tool that was not offered); ``None`` when they never
            parsed. ``raw`` is then that object as compact JSON.
    """

    index: int
    id: str | None
    name: str | None
    raw: str
    errors: tuple[ArgumentIssue, ...]
    _: KW_ONLY
    choice: int = 0
    anomalies: tuple[str, ...] = ()
    input: JSONObject | None = None

    def __repr__(self) -> str:
        kinds = ",".join(issue.kind for issue in self.errors)
        return (
            f"InvalidToolCall(index={self.index}, id={self.id!r}, name={self.name!r}, "
            f"errors=[{kinds}], raw={_cut(self.raw, 40)!r})"
        )

    @property
    def truncated(self) -> bool:
        """True when the call was cut off rather than malformed."""
        return any(issue.kind == "truncated" for issue in self.errors)


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the assistant's text, in arrival order."""

    text: str
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"TextDelta({_cut(self.text)!r})"


@dataclass(frozen=True, slots=True)
class ResponseEnd:
    """The response ended normally: the last event of a stream.

    Attributes:
        stop_reason: the provider's own stop or finish reason, unchanged (``tool_use``,
            ``tool_calls``, ``max_tokens``, ``length``…); ``None`` when it gave none.
        usage: the provider's usage object as sent (merged when it came in pieces).
    """

    stop_reason: str | None
    usage: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ArgumentsPreview:
    """What a call's arguments show so far, while they stream (only with ``previews=True``).

    A preview never is a call: the call comes later, as a ``ToolCall`` or ``InvalidToolCall``
    parsed strictly from its complete text. Every value in ``partial`` is final except the
    string being received, which is a prefix of its final value; a key whose value has not
    started, or a number not yet followed by a delimiter, is left out.

    Attributes:
        index: as for ``ToolCall``.
        id: the provider's call id, where known yet.
        name: the tool's name, where known yet.
        partial: the value so far (a dict for well-formed arguments).
        choice: as for ``ToolCall``.
    """

    index: int
    id: str | None
    name: str | None
    partial: Any
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"ArgumentsPreview(index={self.index}, name={self.name!r}, partial={_cut(repr(self.partial))})"


StreamEvent: TypeAlias = TextDelta | ToolCall | InvalidToolCall | ResponseEnd | ArgumentsPreview
"""What the rich iterators yield."""
