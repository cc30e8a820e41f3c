"""A turn's values: its opaque state, the ``Turn`` itself, and what the rich iterators yield.

The state is what a provider needs back, unchanged, when the turn is sent again with the tool
results: reasoning, signatures, server-side tools, per-call state. ``Turn`` gathers it with
the text and the calls (``_types``) in arrival order. Like those, every value is frozen and
slotted, with a repr short enough for a log line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, field
from typing import Any, TypeAlias, TypeVar, overload

from ._errors import UsageError
from ._types import (
    ArgumentsFragment,
    ArgumentsPreview,
    Call,
    CallRef,
    CallStarted,
    CustomToolCall,
    Finish,
    InvalidToolCall,
    Progress,
    ResponseEnd,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolResult,
    _cut,
)
from ._values import value

__all__ = (
    "CallState",
    "Entry",
    "Image",
    "MessageItem",
    "Outcome",
    "Part",
    "Parts",
    "Ran",
    "ReasoningItem",
    "RedactedThinking",
    "Results",
    "ServerToolResult",
    "ServerToolUse",
    "StreamEvent",
    "TextSignature",
    "WHOLE_BLOCKS",
    "Thinking",
    "UNSIGNED",
    "carried",
    "carrying",
    "Turn",
    "TurnItem",
    "TurnState",
    "User",
)


# -- a turn's opaque state ---------------------------------------------------------------------
# Values a provider needs back, unchanged, when the turn is sent again with the tool results.
# Opaque strings (signatures, encrypted content, redacted data) are kept exactly as received:
# never decoded, re-encoded or parsed.


def _text(value: object) -> str | None:
    """A field of a provider's block that is a string, else ``None``: what it holds is the provider's."""
    return value if isinstance(value, str) else None


#: What joins a call's id and the state carried in it (``carrying``).
_CARRIED = "__streamkit_"


def carrying(ident: str, state: Mapping[str, str]) -> str:
    """A call's id as a client of another format holds it, carrying the provider ``state`` its
    upstream needs back with the call (Gemini 3's ``thoughtSignature``): every client sends a
    call's id back as it got it, and ``carried`` reads the state again. The state is written as
    base64url JSON, letters, digits, ``_`` and ``-`` alone, which every format's ids take."""
    if not state:
        return ident
    import base64  # here: only a translated call with state to carry needs them

    import orjson

    encoded = base64.urlsafe_b64encode(orjson.dumps(dict(state))).rstrip(b"=").decode()
    return f"{ident}{_CARRIED}{encoded}"


_T = TypeVar("_T")


@overload
def carried(ident: str) -> tuple[str, dict[str, str]]: ...
@overload
def carried(ident: _T) -> tuple[_T, dict[str, str]]: ...
def carried(ident: Any) -> tuple[Any, dict[str, str]]:
    """A call's id as the upstream gave it, and the state ``carrying`` put in it (none for an
    id that carries none, or whose state does not read back as strings, or that is no string)."""
    if not isinstance(ident, str):
        return ident, {}
    given, sep, encoded = ident.rpartition(_CARRIED)
    if not sep:
        return ident, {}
    import base64

    import orjson

    try:
        state = orjson.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except (ValueError, orjson.JSONDecodeError):
        return ident, {}
    if not isinstance(state, dict) or not all(isinstance(v, str) for v in state.values()):
        return ident, {}
    return given, state


#: The signature streamkit writes on reasoning that came with none (an OpenAI-compatible
#: ``reasoning_content``) for a client whose format sends reasoning back only signed: an
#: Anthropic ``thinking`` block's ``signature``, a Responses ``reasoning`` item's
#: ``encrypted_content``. Read back, it is unsigned reasoning again, which the upstream takes
#: (DeepSeek's thinking mode refuses a tool-calling turn sent back without its reasoning).
UNSIGNED = "streamkit.unsigned"


@value
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


@value
class RedactedThinking:
    """Reasoning the provider sent encrypted: Anthropic's ``redacted_thinking.data``, Bedrock's
    ``reasoningContent.redactedContent`` (base64 text, as received)."""

    data: str
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"RedactedThinking({_cut(self.data, 20)!r})"


@value
class ReasoningItem:
    """An OpenAI Responses ``reasoning`` output item, whole, as ``response.output_item.done`` gave it."""

    item: dict[str, Any]
    _: KW_ONLY
    choice: int = 0

    @property
    def id(self) -> str | None:
        return _text(self.item.get("id"))

    @property
    def encrypted_content(self) -> str | None:
        return _text(self.item.get("encrypted_content"))

    def __repr__(self) -> str:
        return f"ReasoningItem(id={self.id!r})"


@value
class MessageItem:
    """An OpenAI Responses ``message`` output item, whole (its ``id``, ``phase``, content)."""

    item: dict[str, Any]
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"MessageItem(id={self.item.get('id')!r})"


@value
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
        return _text(self.block.get("id"))

    @property
    def name(self) -> str | None:
        return _text(self.block.get("name", self.block.get("type")))

    def __repr__(self) -> str:
        return f"ServerToolUse(id={self.id!r}, name={self.name!r})"


@value
class ServerToolResult:
    """The result of a server-side tool, as the provider sent it (``web_search_tool_result``…)."""

    block: dict[str, Any]
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"ServerToolResult(type={self.block.get('type')!r})"


@value
class TextSignature:
    """Gemini's ``thoughtSignature`` on a text part: it belongs to the text just before it."""

    signature: str
    _: KW_ONLY
    choice: int = 0

    def __repr__(self) -> str:
        return f"TextSignature({_cut(self.signature, 20)!r})"


@value
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

#: A block a decoder received whole, by its kind, made into its value (``choice`` the answer's).
WHOLE_BLOCKS: Mapping[str, Callable[[dict[str, Any], int], TurnState]] = {
    "redacted_thinking": lambda block, choice: RedactedThinking(block["data"], choice=choice),
    "reasoning_item": lambda block, choice: ReasoningItem(block, choice=choice),
    "message_item": lambda block, choice: MessageItem(block, choice=choice),
    "server_tool_use": lambda block, choice: ServerToolUse(block, choice=choice),
    "server_tool_result": lambda block, choice: ServerToolResult(block, choice=choice),
    "text_signature": lambda block, choice: TextSignature(block["signature"], choice=choice),
}

StreamEvent: TypeAlias = TextDelta | ToolCall | CustomToolCall | InvalidToolCall | ResponseEnd | Progress | TurnState
"""What the rich iterators yield."""

TurnItem: TypeAlias = TextDelta | ToolCall | CustomToolCall | InvalidToolCall | TurnState
"""One item of a ``Turn``."""

_TURN_ITEMS = (
    TextDelta,
    ToolCall,
    CustomToolCall,
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


@value
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
    def calls(self) -> tuple[Call, ...]:
        """The turn's calls, valid or not, in order: what the caller runs."""
        return tuple(item for item in self.items if isinstance(item, Call))

    @property
    def text(self) -> str:
        """All of the turn's answer text."""
        return "".join(item.text for item in self.items if isinstance(item, TextDelta))

    def call_state(self, call: Call) -> dict[str, str]:
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


# -- a conversation in streamkit's terms ------------------------------------------------------
# What a request carries, read from any format and written as any provider's: the integrations
# that send their own requests read their framework's messages into these, and the proxy reads a
# client's request into them to send it to an upstream of another format.

#: A call the model made, as a tool result answers it: the call itself, or its id and name.
Ran: TypeAlias = ToolCall | CustomToolCall | CallRef
#: What happened to one call: ``(call, result)`` when it ran (``result`` a ``Parts`` when it holds
#: an image), ``(call, result, True)`` when the tool raised (``result`` then says how), the invalid
#: call, or a ``ToolResult``.
Outcome: TypeAlias = tuple[Ran, Any] | tuple[Ran, Any, bool] | InvalidToolCall | ToolResult


@value
class Image:
    """An image the model is shown: its bytes as base64 (``data``, with their ``media_type``), or
    the ``url`` it is fetched from (its ``media_type`` then ``None`` unless the client said it).

    The base64 text is kept as received, never decoded: the upstream reads the same bytes.
    """

    media_type: str | None
    _: KW_ONLY
    data: str | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise UsageError("an Image is given either its data (base64) or its url")
        if self.data is not None and not self.media_type:
            raise UsageError("an Image given as data needs its media_type (image/png...)")

    @property
    def as_url(self) -> str:
        """The image as one URL: its own, or a ``data:`` URL of its bytes, as OpenAI's formats take it."""
        return self.url if self.url is not None else f"data:{self.media_type};base64,{self.data}"

    def __repr__(self) -> str:
        where = f"data=<{len(self.data)} chars>" if self.data is not None else f"url={_cut(self.url or '', 60)!r}"
        return f"Image({self.media_type!r}, {where})"


#: One piece of a message that holds an image: its text, or the image.
Part: TypeAlias = str | Image


@value
class Parts:
    """Text and images in the order given: a user message, or a tool's result, that holds an
    image. Text alone stays a string (``User(text)``, a result's text), written as before."""

    items: tuple[Part, ...]

    def __post_init__(self) -> None:
        for position, item in enumerate(self.items):
            if not isinstance(item, str | Image):
                raise UsageError(f"parts[{position}] is text or an Image, not {type(item).__name__}")

    @property
    def images(self) -> tuple[Image, ...]:
        return tuple(item for item in self.items if isinstance(item, Image))

    @property
    def text(self) -> str:
        """The text parts, each on its own paragraph: what a format of text alone could carry."""
        return "\n\n".join(item for item in self.items if isinstance(item, str))


@value
class User:
    """A user message: its text, or its ``Parts`` when it holds an image."""

    content: str | Parts

    @property
    def text(self) -> str:
        return self.content if isinstance(self.content, str) else self.content.text


@value
class Results:
    """A turn's tool results, as the adapters take them (``ToolResult``, ``(call, result)``…)."""

    outcomes: tuple[Outcome, ...]


Entry: TypeAlias = User | Turn | Results
"""One entry of the conversation: a user message, an assistant ``Turn``, or tool results."""
