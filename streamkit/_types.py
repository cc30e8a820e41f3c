"""Values that leave the library: completed calls, invalid calls, text and the end of a response.

Every value is frozen and slotted, and its repr is short enough for a log line: argument
objects and raw text are cut, never printed whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, get_args

from ._errors import UsageError

__all__ = (
    "FINISHES",
    "ISSUE_KINDS",
    "ArgumentIssue",
    "ArgumentsFragment",
    "ArgumentsPreview",
    "CallRef",
    "CallStarted",
    "CallState",
    "Finish",
    "InvalidToolCall",
    "JSONObject",
    "MessageItem",
    "NO_STATE",
    "PROVIDERS",
    "Provider",
    "ReasoningItem",
    "RedactedThinking",
    "ResponseEnd",
    "ServerToolResult",
    "ServerToolUse",
    "StreamEvent",
    "TextDelta",
    "TextSignature",
    "Thinking",
    "TokenUsage",
    "ToolCall",
    "ToolResult",
    "Turn",
    "TurnItem",
)

Provider: TypeAlias = Literal[
    "openai_chat", "openai_responses", "anthropic", "gemini", "cohere", "mistral", "ollama", "bedrock"
]
"""A provider's slug: the same in modules, fixtures, the command line and ``DECODERS``."""
PROVIDERS: tuple[Provider, ...] = get_args(Provider)

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
)

_REPR_LIMIT = 60


def _cut(text: str, limit: int = _REPR_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _keys(state: Mapping[str, str]) -> str:
    """A call's state in its repr: the keys only, since the values are long opaque text."""
    return f", state=[{','.join(state)}]" if state else ""


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
        anomalies: the reconciliation rules that fired for this call (listed under "Anomalies" in docs/providers.md).
        state: the provider's opaque per-call state, to send back with the call unchanged:
            ``{"thoughtSignature": ...}`` for a Gemini call that carried one, ``{"id": "fc_..."}``
            for an OpenAI Responses ``function_call`` item; empty for every other call.
    """

    index: int
    id: str | None
    name: str
    input: JSONObject
    _: KW_ONLY
    choice: int = 0
    anomalies: tuple[str, ...] = ()
    state: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        args = _cut(repr(self.input))
        return f"ToolCall(index={self.index}, id={self.id!r}, name={self.name!r}, input={args}{_keys(self.state)})"


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
        state: as for ``ToolCall``.
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


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What running one call gave: its tool's output, or the error the model is told.

    ``streamkit.run_tools`` returns these, and every adapter's ``tool_results_message`` writes
    them, an error as that provider's error result (``is_error`` where it has one).

    Attributes:
        call: the call, as it came from the stream.
        output: what the tool returned (``None`` for an error).
        error: for a call that did not run or failed, the object the model is told:
            ``{"ok": false, "errors": [{"kind": ..., "message": ...}]}``, for an invalid call
            exactly what ``error_result_message`` sends; the kind is an ``ArgumentIssue`` kind
            (``unknown_tool`` for a tool not given), or ``tool_error`` when the tool raised.
        exception: the exception the tool raised, kept for the application (never compared).
    """

    call: ToolCall | InvalidToolCall
    output: Any = None
    _: KW_ONLY
    error: JSONObject | None = None
    exception: BaseException | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.call, ToolCall | InvalidToolCall):
            raise UsageError(f"call must be a ToolCall or an InvalidToolCall, got {type(self.call).__name__}")
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

    def __repr__(self) -> str:
        shown = f"error={_cut(repr(self.error))}" if self.error is not None else f"output={_cut(repr(self.output))}"
        return f"ToolResult(id={self.id!r}, name={self.name!r}, {shown})"


@dataclass(frozen=True, slots=True)
class CallRef:
    """A call known only by its id and tool name: what a framework keeps of a call it ran, to
    write its result with an adapter without the ``ToolCall`` itself.

    ``id`` is ``None`` for a call the provider gave no id (Gemini 2.5, Ollama), which only the
    providers that match results by name (Gemini, Ollama) can take back.
    """

    id: str | None
    name: str


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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

    ``finish`` and ``tokens`` are read from ``stop_reason`` and ``usage`` (and whether calls
    came): two ends are equal when those are.
    """

    stop_reason: str | None
    usage: dict[str, Any] | None = None
    _: KW_ONLY
    finish: Finish = field(default="other", compare=False)
    tokens: TokenUsage | None = field(default=None, compare=False)


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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


# -- a turn's opaque state ---------------------------------------------------------------------
# Values a provider needs back, unchanged, when the turn is sent again with the tool results.
# Opaque strings (signatures, encrypted content, redacted data) are kept exactly as received:
# never decoded, re-encoded or parsed.


@dataclass(frozen=True, slots=True)
class Thinking:
    """A reasoning block: its text and its signature, exactly as received.

    Anthropic ``thinking`` blocks, Bedrock ``reasoningContent.reasoningText``, Gemini thought
    parts, and ``reasoning_content`` (DeepSeek, OpenAI-compatible servers). ``signature`` is
    ``None`` when the provider gave none.
    """

    text: str
    signature: str | None = None
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        signed = "" if self.signature is None else f", signature={_cut(self.signature, 20)!r}"
        return f"Thinking({_cut(self.text)!r}{signed})"


@dataclass(frozen=True, slots=True)
class RedactedThinking:
    """Reasoning the provider sent encrypted: Anthropic's ``redacted_thinking.data``, Bedrock's
    ``reasoningContent.redactedContent`` (base64 text, as received)."""

    data: str
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"RedactedThinking({_cut(self.data, 20)!r})"


@dataclass(frozen=True, slots=True)
class ReasoningItem:
    """An OpenAI Responses ``reasoning`` output item, whole, as ``response.output_item.done`` gave it."""

    item: dict[str, Any]
    _: KW_ONLY
    choice: int = 0

    @property
    def id(self) -> str | None:
        value = self.item.get("id")
        return value if isinstance(value, str) else None

    @property
    def encrypted_content(self) -> str | None:
        value = self.item.get("encrypted_content")
        return value if isinstance(value, str) else None

    def __repr__(self) -> str:
        return f"ReasoningItem(id={self.id!r})"


@dataclass(frozen=True, slots=True)
class MessageItem:
    """An OpenAI Responses ``message`` output item, whole (its ``id``, ``phase``, content)."""

    item: dict[str, Any]
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"MessageItem(id={self.item.get('id')!r})"


@dataclass(frozen=True, slots=True)
class ServerToolUse:
    """A tool the provider ran itself (web search, code execution, MCP): never a ``ToolCall``.

    ``block`` is the provider's block or item as received; for Anthropic, ``input`` is the
    object its streamed fragments made.
    """

    block: dict[str, Any]
    _: KW_ONLY
    choice: int = 0

    @property
    def id(self) -> str | None:
        value = self.block.get("id")
        return value if isinstance(value, str) else None

    @property
    def name(self) -> str | None:
        value = self.block.get("name", self.block.get("type"))
        return value if isinstance(value, str) else None

    def __repr__(self) -> str:
        return f"ServerToolUse(id={self.id!r}, name={self.name!r})"


@dataclass(frozen=True, slots=True)
class ServerToolResult:
    """The result of a server-side tool, as the provider sent it (``web_search_tool_result``…)."""

    block: dict[str, Any]
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"ServerToolResult(type={self.block.get('type')!r})"


@dataclass(frozen=True, slots=True)
class TextSignature:
    """Gemini's ``thoughtSignature`` on a text part: it belongs to the text just before it."""

    signature: str
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"TextSignature({_cut(self.signature, 20)!r})"


@dataclass(frozen=True, slots=True)
class CallState:
    """Provider state that belongs to the call at ``index``: Gemini's ``thoughtSignature`` on a
    ``functionCall`` part (key ``"thoughtSignature"``), a Responses ``function_call`` item id
    (key ``"id"``).

    The call carries the same state as its ``state``; this event comes before the call, for
    every provider, and stays so that a ``Turn`` keeps it among its items.
    """

    index: int
    key: str
    value: str
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"CallState(index={self.index}, key={self.key!r}, value={_cut(self.value, 20)!r})"


TurnState: TypeAlias = (
    Thinking
    | RedactedThinking
    | ReasoningItem
    | MessageItem
    | ServerToolUse
    | ServerToolResult
    | TextSignature
    | CallState
)

Progress: TypeAlias = ArgumentsPreview | CallStarted | ArgumentsFragment
"""What the iterators yield about calls still open, when asked for: never part of a ``Turn``."""

StreamEvent: TypeAlias = TextDelta | ToolCall | InvalidToolCall | ResponseEnd | Progress | TurnState
"""What the rich iterators yield."""

TurnItem: TypeAlias = TextDelta | ToolCall | InvalidToolCall | TurnState
"""One item of a ``Turn``."""

_TURN_ITEMS = (
    TextDelta,
    ToolCall,
    InvalidToolCall,
    Thinking,
    RedactedThinking,
    ReasoningItem,
    MessageItem,
    ServerToolUse,
    ServerToolResult,
    TextSignature,
    CallState,
)


_PROGRESS = (ArgumentsPreview, CallStarted, ArgumentsFragment)


def _joined(texts: list[TextDelta], choice: int) -> TextDelta:
    """Neighbouring text deltas as one; its ``index`` is theirs when they share one."""
    index = texts[0].index
    if any(text.index != index for text in texts):
        index = None
    return TextDelta("".join(text.text for text in texts), choice=choice, index=index)


@dataclass(frozen=True, slots=True)
class Turn:
    """Everything one assistant turn produced, in order: what its next request must carry.

    Attributes:
        provider: the slug of the provider the turn was decoded from; its opaque state is only
            ever written back for that provider.
        items: text (neighbouring deltas joined), reasoning, server-side tools, calls and the
            state tied to them, in arrival order.
        stop_reason, usage: as in ``ResponseEnd``; ``None`` when the stream gave no end.
        choice: the choice this turn is (OpenAI Chat with ``n > 1``, Gemini candidates).
        finish, tokens: as in ``ResponseEnd``; ``None`` when the stream gave no end.
    """

    provider: str
    items: tuple[TurnItem, ...]
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None
    _: KW_ONLY
    choice: int = 0
    finish: Finish | None = field(default=None, compare=False)
    tokens: TokenUsage | None = field(default=None, compare=False)

    @classmethod
    def from_events(cls, events: Iterable[StreamEvent], provider: str, *, choice: int = 0) -> Turn:
        """The turn made by the values ``iter_events`` yielded (those of one ``choice``)."""
        if not isinstance(provider, str):
            raise UsageError(f"provider must be a slug, got {type(provider).__name__}")
        items: list[TurnItem] = []
        texts: list[TextDelta] = []
        end: ResponseEnd | None = None
        for position, event in enumerate(events):
            if isinstance(event, ResponseEnd):
                end = event
                continue
            if isinstance(event, _PROGRESS):
                continue
            if not isinstance(event, _TURN_ITEMS):
                raise UsageError(f"events[{position}] is not a streamkit value: {type(event).__name__}")
            if event.choice != choice:
                continue
            if isinstance(event, TextDelta):
                texts.append(event)
                continue
            if texts:
                items.append(_joined(texts, choice))
                texts = []
            items.append(event)
        if texts:
            items.append(_joined(texts, choice))
        return cls(
            provider,
            tuple(items),
            None if end is None else end.stop_reason,
            None if end is None else end.usage,
            choice=choice,
            finish=None if end is None else end.finish,
            tokens=None if end is None else end.tokens,
        )

    @property
    def calls(self) -> tuple[ToolCall | InvalidToolCall, ...]:
        """The turn's calls, valid or not, in order: what the caller runs."""
        return tuple(item for item in self.items if isinstance(item, ToolCall | InvalidToolCall))

    @property
    def text(self) -> str:
        """All of the turn's answer text."""
        return "".join(item.text for item in self.items if isinstance(item, TextDelta))

    def call_state(self, call: ToolCall | InvalidToolCall) -> dict[str, str]:
        """The provider state tied to ``call`` (``{"thoughtSignature": ...}``, ``{"id": ...}``):
        its own ``state``, and any ``CallState`` item for it."""
        items = {
            item.key: item.value
            for item in self.items
            if isinstance(item, CallState) and item.index == call.index and item.choice == call.choice
        }
        return {**items, **call.state}

    def __repr__(self) -> str:
        kinds = ",".join(type(item).__name__ for item in self.items)
        return f"Turn(provider={self.provider!r}, items=[{_cut(kinds, 120)}], stop_reason={self.stop_reason!r})"
