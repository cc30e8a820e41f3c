"""Values that leave the library: completed calls, invalid calls, text and the end of a response.

Every value is frozen and slotted, and its repr is short enough for a log line: argument
objects and raw text are cut, never printed whole. A turn's own values (its opaque state, the
``Turn``) and the unions that include them (``StreamEvent``) are in ``_turn_types``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, get_args

from ._errors import UsageError
from ._values import value

__all__ = (
    "CUTTING_FINISHES",
    "FINISHES",
    "TEXT_CALL",
    "ISSUE_KINDS",
    "ArgumentIssue",
    "ArgumentsFragment",
    "ArgumentsPreview",
    "Call",
    "CallRef",
    "CallStarted",
    "CallTimes",
    "CustomToolCall",
    "Finish",
    "InvalidToolCall",
    "JSONObject",
    "NO_STATE",
    "PROVIDERS",
    "Progress",
    "Provider",
    "Requested",
    "ResponseEnd",
    "TextDelta",
    "TokenUsage",
    "ToolCall",
    "ToolResult",
    "takes_text",
)

Provider: TypeAlias = Literal[
    "openai_chat", "openai_responses", "anthropic", "gemini", "cohere", "mistral", "ollama", "bedrock"
]
"""A provider's slug: the same in modules, fixtures, the command line and ``DECODERS``."""
PROVIDERS: tuple[Provider, ...] = get_args(Provider)
Requested: TypeAlias = Literal["anthropic", "gemini", "mistral", "ollama", "openai_chat", "openai_responses"]
"""A provider a streamed request can be written for (its folder has a ``request.py``): what the
integrations that send their own requests take."""

JSONObject: TypeAlias = dict[str, Any]
"""A parsed JSON object: the ``input`` of a call."""

#: The ``state`` of a call that carries no provider state: empty, and read-only.
NO_STATE: Mapping[str, str] = MappingProxyType({})

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
    "grammar",  # a custom tool's text does not match the grammar the tool declares
    "wrong_input_type",  # free text for a tool that takes JSON, or JSON for a custom tool
)

#: The ``state`` entry that marks a call whose input is free text: an OpenAI Responses
#: ``custom_tool_call`` item. The decoder sets it, the normalizer reads it, and the Responses
#: writers send it back as the item's ``type``.
TEXT_CALL = ("type", "custom_tool_call")


def takes_text(state: Mapping[str, str]) -> bool:
    """Whether a call with this ``state`` carries free text rather than JSON arguments."""
    return state.get(TEXT_CALL[0]) == TEXT_CALL[1]


_REPR_LIMIT = 60


def _cut(text: str, limit: int = _REPR_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _keys(state: Mapping[str, str]) -> str:
    """A call's state in its repr: the keys only, since the values are long opaque text."""
    return f", state=[{','.join(state)}]" if state else ""


@value
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


#: The ``metadata`` of a field that is about this run, not the call: left out of ``==`` and of
#: the JSON a turn is stored as, so a call read back equals the call that was stored.
TRANSIENT: Mapping[str, bool] = MappingProxyType({"transient": True})


@value
class CallTimes:
    """When a call's pieces arrived, in nanoseconds since the epoch (``time.time_ns()``), so
    a difference of two is a duration and each is an OpenTelemetry timestamp as it is.

    Only with ``times=True`` (or telemetry enabled); the calls of a stream read without it carry
    ``times=None``.

    Attributes:
        first_fragment: when the call opened: its first event (its id and name, or its first
            argument text) was read.
        end_marker: when its end marker (or the stop, or the end of the stream that cut it) was read.
        delivered: when it left the pipeline, parsed and checked against its tool's schema.
    """

    first_fragment: int
    end_marker: int
    delivered: int


@value
class _Completed:
    """What a completed call holds, whatever its input is: ``ToolCall``'s and ``CustomToolCall``'s
    fields, in their order, each class giving ``input`` its own type."""

    index: int
    id: str | None
    name: str
    input: Any
    _: KW_ONLY
    choice: int = 0
    anomalies: tuple[str, ...] = ()
    state: Mapping[str, str] = field(default_factory=dict)
    times: CallTimes | None = field(default=None, compare=False, metadata=TRANSIENT)

    def _shown(self, kind: str) -> str:
        """The repr of either call: its input cut, and its state's keys."""
        shown = _cut(repr(self.input))
        return f"{kind}(index={self.index}, id={self.id!r}, name={self.name!r}, input={shown}{_keys(self.state)})"


@value
class ToolCall(_Completed):
    """A completed tool call whose ``input`` was parsed strictly from complete arguments.

    Attributes:
        index: the provider's slot for the call (a content-block index for Anthropic, the
            tool-call index within its choice for OpenAI Chat).
        id: the provider's call id; ``None`` when the provider gives none.
        name: the tool's name.
        input: the arguments, always a JSON object.
        choice: the choice the call belongs to (OpenAI Chat with ``n > 1``), else 0.
        anomalies: the reconciliation rules that fired for this call (listed under "Anomalies" in docs/providers.md).
        state: the provider's opaque per-call state, to send back with the call unchanged:
            ``{"thoughtSignature": ...}`` for a Gemini call that carried one, ``{"id": "fc_..."}``
            for an OpenAI Responses ``function_call`` item; empty for every other call.
        times: when the call's first fragment, its end marker and its delivery came
            (``CallTimes``), with ``times=True``; else ``None``. Never compared, never stored.
    """

    input: JSONObject

    def __repr__(self) -> str:
        return self._shown("ToolCall")


@value
class CustomToolCall(_Completed):
    """A completed call to a custom tool (OpenAI Responses ``{"type": "custom"}``): its input is
    the model's free text (SQL, a patch, a grammar's sentence), never parsed as JSON.

    A value of its own rather than a ``ToolCall`` with a string ``input``: code that reads
    ``ToolCall.input`` as an object stays right, and mypy points at every place that handles
    calls without this case. Only a stream with ``custom_tool_call`` items gives one.

    Attributes:
        index, id, name, choice, anomalies, times: as for ``ToolCall``.
        input: the text, exactly as the model wrote it.
        state: as for ``ToolCall``; holds ``{"type": "custom_tool_call"}`` and the item ``id``.
    """

    input: str

    def __repr__(self) -> str:
        return self._shown("CustomToolCall")


@value
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
        state: as for ``ToolCall``.
        times: as for ``ToolCall``.
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
    state: Mapping[str, str] = field(default_factory=dict)
    times: CallTimes | None = field(default=None, compare=False, metadata=TRANSIENT)

    def __repr__(self) -> str:
        kinds = ",".join(issue.kind for issue in self.errors)
        return (
            f"InvalidToolCall(index={self.index}, id={self.id!r}, name={self.name!r}, "
            f"errors=[{kinds}], raw={_cut(self.raw, 40)!r}{_keys(self.state)})"
        )

    @property
    def truncated(self) -> bool:
        """True when the call was cut off rather than malformed."""
        return any(issue.kind == "truncated" for issue in self.errors)


Call: TypeAlias = ToolCall | CustomToolCall | InvalidToolCall
"""Every call a stream delivers: one to run with an object, one to run with text, or one to refuse."""


#: How a call run by ``run_tools`` can end: its ``ToolResult.outcome``.
OUTCOMES = ("ok", "failed", "refused", "cancelled", "not_run")
_OUTCOME_OF = {"tool_error": "failed", "tool_cancelled": "cancelled", "not_run": "not_run"}


@value
class ToolResult:
    """What running one call gave: its tool's output, or the error the model is told.

    ``streamkit.run_tools`` returns these, and every adapter's ``tool_results_message`` writes
    them, an error as that provider's error result (``is_error`` where it has one).

    Attributes:
        call: the call, as it came from the stream.
        output: what the tool returned (``None`` for an error): a string, or a value JSON can
            carry (``run_tools`` makes any other output a failure, as the adapters refuse it).
        error: for a call that did not run or failed, the object the model is told:
            ``{"ok": false, "errors": [{"kind": ..., "message": ...}]}``, for an invalid call
            exactly what ``error_result_message`` sends; the kind is an ``ArgumentIssue`` kind
            (``unknown_tool`` for a tool not given), or ``tool_error`` when the tool raised.
        exception: the exception the tool raised, kept for the application (never compared).
    """

    call: Call
    output: Any = None
    _: KW_ONLY
    error: JSONObject | None = None
    exception: BaseException | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.call, Call):
            raise UsageError(
                f"call must be a ToolCall, a CustomToolCall or an InvalidToolCall, got {type(self.call).__name__}"
            )
        if self.error is None and isinstance(self.call, InvalidToolCall):
            raise UsageError("an invalid call never runs: its result needs an error")

    @property
    def id(self) -> str | None:
        return self.call.id

    @property
    def name(self) -> str | None:
        return self.call.name

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @property
    def outcome(self) -> str:
        """How the call ended: ``"ok"`` (its tool returned), ``"failed"``
        (its tool raised), ``"refused"`` (never run: invalid, or no such tool), ``"cancelled"``
        (its tool started, then was cancelled: it may have had effects) or ``"not_run"`` (its
        tool never started: the stream failed first)."""
        if self.error is None:
            return "ok"
        errors = self.error.get("errors")
        kind = errors[0].get("kind") if isinstance(errors, list) and errors and isinstance(errors[0], dict) else None
        return _OUTCOME_OF.get(kind, "refused") if isinstance(kind, str) else "refused"

    def __repr__(self) -> str:
        shown = f"error={_cut(repr(self.error))}" if self.error is not None else f"output={_cut(repr(self.output))}"
        return f"ToolResult(id={self.id!r}, name={self.name!r}, {shown})"


@value
class CallRef:
    """A call known only by its id and tool name: what a framework keeps of a call it ran, to
    write its result with an adapter without the ``ToolCall`` itself.

    ``id`` is ``None`` for a call the provider gave no id (Gemini 2.5, Ollama), which only the
    providers that match results by name (Gemini, Ollama) can take back.
    """

    id: str | None
    name: str


@value
class TextDelta:
    """A piece of the assistant's text, in arrival order.

    Attributes:
        text: the piece, as received.
        choice: as for ``ToolCall``.
        index: the content block (Anthropic, Bedrock, Cohere) or output item (OpenAI Responses)
            the text belongs to; ``None`` for providers that number neither (OpenAI Chat,
            Mistral, Ollama, Gemini), and for Cohere's tool plan.
    """

    text: str
    _: KW_ONLY
    choice: int = 0
    index: int | None = None

    def __repr__(self) -> str:
        where = "" if self.index is None else f", index={self.index}"
        return f"TextDelta({_cut(self.text)!r}{where})"


Finish: TypeAlias = Literal["stop", "tool_calls", "length", "content_filter", "error", "other"]
"""Why a response ended, in one vocabulary for every provider (``ResponseEnd.finish``)."""
FINISHES: tuple[Finish, ...] = get_args(Finish)
#: The finishes that stop the output where it is: a call still being written is cut off.
CUTTING_FINISHES: frozenset[Finish] = frozenset({"length", "content_filter", "error"})


@value
class TokenUsage:
    """Token counts in one vocabulary for every provider; ``None`` where the provider gave none.

    Attributes:
        input_tokens: every input token, cached or not.
        output_tokens: every output token, reasoning included.
        cache_read_tokens: the input tokens read from the provider's cache.
        reasoning_tokens: the output tokens spent on reasoning.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    reasoning_tokens: int | None = None


@value
class ResponseEnd:
    """The response ended normally: the last event of a stream.

    Attributes:
        stop_reason: the provider's own stop or finish reason, unchanged (``tool_use``,
            ``tool_calls``, ``max_tokens``, ``length``…); ``None`` when it gave none.
        usage: the provider's usage object as sent (merged when it came in pieces).
        finish: ``stop_reason`` in the vocabulary every provider shares: ``stop``,
            ``tool_calls`` (also a normal stop after calls, for providers that say only
            ``STOP``), ``length`` (the output limit: a call still open was truncated),
            ``content_filter``, ``error`` or ``other`` (any reason not known, or none).
        tokens: ``usage`` as ``TokenUsage``, the same for every provider; ``None`` without usage.
        anomalies: the rules that fired for the response as a whole, each once
            (``stop_reason_repeated``: a choice's stop reason came again after its end).

    ``finish`` and ``tokens`` are read from ``stop_reason`` and ``usage`` (and whether calls
    came): two ends are equal when those are.
    """

    stop_reason: str | None
    usage: dict[str, Any] | None = None
    _: KW_ONLY
    finish: Finish = field(default="other", compare=False)
    tokens: TokenUsage | None = field(default=None, compare=False)
    anomalies: tuple[str, ...] = ()


@value
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


@value
class CallStarted:
    """A call opened (only with ``fragments=True``): what a UI needs to show it before it ends.

    Comes once per call, before its ``ArgumentsFragment``s and before the call itself, with the
    id and name as known when it opened (OpenAI Chat and its kin send both in the call's first
    chunk; a call given whole, as Gemini and Ollama give them, opens and ends at once).

    Attributes:
        index, choice: as for ``ToolCall``: the key its fragments and its call come with.
        id: the provider's call id, where known yet.
        name: the tool's name, where known yet.
    """

    index: int
    id: str | None
    name: str | None
    _: KW_ONLY
    choice: int = 0


@value
class ArgumentsFragment:
    """One raw piece of a call's argument text, as the provider streamed it (only with
    ``fragments=True``), for UIs that stream tool inputs.

    The fragments of a call, joined, are the text its ``ToolCall`` was parsed from (or its
    ``InvalidToolCall.raw``): nothing is parsed or repaired here, and the call is still parsed
    once, strictly, at its end. A provider that gives the arguments as an object (Gemini,
    Ollama) gives no fragments; a whole-arguments repeat that the accumulator drops is not one.

    Attributes:
        index, choice: as for ``ToolCall``.
        text: the piece, verbatim.
    """

    index: int
    text: str
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"ArgumentsFragment(index={self.index}, text={_cut(self.text, 40)!r})"


Progress: TypeAlias = ArgumentsPreview | CallStarted | ArgumentsFragment
"""What the iterators yield about calls still open, when asked for: never part of a ``Turn``."""
