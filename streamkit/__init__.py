"""streamkit: a streamed LLM response in, completed and validated tool calls out.

Bytes are framed (SSE), decoded per provider, accumulated per call and parsed once, at each
call's end marker, by one shared normalizer. Every stage is sans-IO; the iterators here drive
them over any iterable of bytes.
"""

from __future__ import annotations

from ._errors import (
    FramingError,
    HTTPStatusError,
    IncompleteStreamError,
    ProviderError,
    ProviderProtocolError,
    StreamError,
    StreamkitError,
    TransportError,
    UsageError,
)
from ._normalize import parse_arguments
from ._pipeline import (
    Assembler,
    acollect_turn,
    aiter_events,
    aiter_tool_calls,
    collect_turn,
    iter_events,
    iter_tool_calls,
)
from ._types import (
    ISSUE_KINDS,
    ArgumentIssue,
    CallState,
    InvalidToolCall,
    MessageItem,
    ReasoningItem,
    RedactedThinking,
    ResponseEnd,
    ServerToolResult,
    ServerToolUse,
    StreamEvent,
    TextDelta,
    TextSignature,
    Thinking,
    ToolCall,
    Turn,
    TurnItem,
)
from ._validate import Toolset
from .adapters import ADAPTERS
from .providers import DECODERS

__version__ = "0.1.0"

__all__ = (
    "ADAPTERS",
    "ArgumentIssue",
    "Assembler",
    "CallState",
    "DECODERS",
    "FramingError",
    "HTTPStatusError",
    "ISSUE_KINDS",
    "IncompleteStreamError",
    "InvalidToolCall",
    "MessageItem",
    "ProviderError",
    "ProviderProtocolError",
    "ReasoningItem",
    "RedactedThinking",
    "ResponseEnd",
    "ServerToolResult",
    "ServerToolUse",
    "StreamError",
    "StreamEvent",
    "StreamkitError",
    "TextDelta",
    "TextSignature",
    "Thinking",
    "ToolCall",
    "Toolset",
    "TransportError",
    "Turn",
    "TurnItem",
    "UsageError",
    "__version__",
    "acollect_turn",
    "aiter_events",
    "aiter_tool_calls",
    "collect_turn",
    "iter_events",
    "iter_tool_calls",
    "parse_arguments",
)

for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = "streamkit"
del _name, _value
