"""streamkit: a streamed LLM response in, completed and validated tool calls out.

Bytes are framed (SSE), decoded per provider, accumulated per call and parsed once, at each
call's end marker, by one shared normalizer. Every stage is sans-IO; the iterators here drive
them over any iterable of bytes.
"""

from __future__ import annotations

import logging as _logging

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
from ._pipeline import Assembler, aiter_events, aiter_tool_calls, iter_events, iter_tool_calls
from ._types import (
    ISSUE_KINDS,
    ArgumentIssue,
    InvalidToolCall,
    ResponseEnd,
    StreamEvent,
    TextDelta,
    ToolCall,
)
from .providers import DECODERS

__version__ = "0.1.0"

__all__ = (
    "ArgumentIssue",
    "Assembler",
    "DECODERS",
    "FramingError",
    "HTTPStatusError",
    "ISSUE_KINDS",
    "IncompleteStreamError",
    "InvalidToolCall",
    "LimitExceededError",
    "Limits",
    "ProviderError",
    "ProviderProtocolError",
    "ResponseEnd",
    "StreamError",
    "StreamEvent",
    "StreamkitError",
    "TextDelta",
    "ToolCall",
    "TransportError",
    "UsageError",
    "__version__",
    "aiter_events",
    "aiter_tool_calls",
    "iter_events",
    "iter_tool_calls",
    "parse_arguments",
)

for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = "streamkit"
del _name, _value

# Quiet by default: an application that wants streamkit's debug records configures the logger.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())
