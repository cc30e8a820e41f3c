"""streamkit: a streamed LLM response in, completed and validated tool calls out.

Bytes are framed (SSE), decoded per provider, accumulated per call and parsed once, at each
call's end marker, by one shared normalizer. Every stage is sans-IO; the iterators here drive
them over an httpx or httpx2 response or any iterable of bytes, text lines, SSE events, dicts or
SDK event objects, and ``astream``/``stream`` send the request themselves.
"""

from __future__ import annotations

import logging as _logging

from ._client import AsyncEventStream, EventStream, astream, stream
from ._errors import (
    FramingError,
    HTTPStatusError,
    IncompleteStreamError,
    LimitExceededError,
    ProviderError,
    ProviderProtocolError,
    StreamError,
    StreamkitError,
    TransportError,
    UsageError,
)
from ._limits import Limits
from ._normalize import parse_arguments
from ._pipeline import Assembler, StreamOptions
from ._run_tools import run_tools
from ._transport import (
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
    ArgumentsFragment,
    ArgumentsPreview,
    CallRef,
    CallStarted,
    CallState,
    Finish,
    InvalidToolCall,
    MessageItem,
    Provider,
    ReasoningItem,
    RedactedThinking,
    ResponseEnd,
    ServerToolResult,
    ServerToolUse,
    StreamEvent,
    TextDelta,
    TextSignature,
    Thinking,
    TokenUsage,
    ToolCall,
    ToolResult,
    Turn,
    TurnItem,
)
from ._validate import Toolset
from .adapters import ADAPTERS, call_id
from .providers import DECODERS

__version__ = "0.1.0"

__all__ = (
    "ADAPTERS",
    "ArgumentIssue",
    "ArgumentsFragment",
    "ArgumentsPreview",
    "Assembler",
    "AsyncEventStream",
    "CallRef",
    "CallStarted",
    "CallState",
    "DECODERS",
    "EventStream",
    "Finish",
    "FramingError",
    "HTTPStatusError",
    "ISSUE_KINDS",
    "IncompleteStreamError",
    "InvalidToolCall",
    "LimitExceededError",
    "Limits",
    "MessageItem",
    "Provider",
    "ProviderError",
    "ProviderProtocolError",
    "ReasoningItem",
    "RedactedThinking",
    "ResponseEnd",
    "ServerToolResult",
    "ServerToolUse",
    "StreamError",
    "StreamEvent",
    "StreamOptions",
    "StreamkitError",
    "TextDelta",
    "TextSignature",
    "Thinking",
    "TokenUsage",
    "ToolCall",
    "ToolResult",
    "Toolset",
    "TransportError",
    "Turn",
    "TurnItem",
    "UsageError",
    "__version__",
    "acollect_turn",
    "aiter_events",
    "aiter_tool_calls",
    "astream",
    "call_id",
    "collect_turn",
    "iter_events",
    "iter_tool_calls",
    "parse_arguments",
    "run_tools",
    "stream",
)

for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = "streamkit"
del _name, _value

# Quiet by default: an application that wants streamkit's debug records configures the logger.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
