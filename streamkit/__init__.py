"""streamkit: a streamed LLM response in, completed and validated tool calls out.

Bytes are framed (SSE), decoded per provider, accumulated per call and parsed once, at each
call's end marker, by one shared normalizer. Every stage is sans-IO; the iterators here drive
them over an httpx or httpx2 response or any iterable of bytes, text lines, SSE events, dicts or
SDK event objects, and ``astream``/``stream`` send the request themselves.
"""

from __future__ import annotations

import sys as _sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # what the names are, for type checkers and the API reference; loaded on first use
    from types import ModuleType

    from ._assembler import Assembler, StreamOptions
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
    from ._run_tools import run_tools
    from ._transport import (
        acollect_turn,
        aiter_events,
        aiter_tool_calls,
        collect_turn,
        iter_events,
        iter_tool_calls,
    )
    from ._turn_types import (
        CallState,
        MessageItem,
        ReasoningItem,
        RedactedThinking,
        ServerToolResult,
        ServerToolUse,
        StreamEvent,
        TextSignature,
        Thinking,
        Turn,
        TurnItem,
    )
    from ._types import (
        ISSUE_KINDS,
        ArgumentIssue,
        ArgumentsFragment,
        ArgumentsPreview,
        CallRef,
        CallStarted,
        CallTimes,
        CustomToolCall,
        Finish,
        InvalidToolCall,
        Provider,
        ResponseEnd,
        TextDelta,
        TokenUsage,
        ToolCall,
        ToolResult,
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
    "CallTimes",
    "CustomToolCall",
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

# Where each public name lives. ``import streamkit`` loads none of these modules: each is loaded
# the first time one of its names is used, so a program pays only for the parts it uses.
_SUBPACKAGES = ("adapters", "integrations", "providers")
_HOMES = {
    "ADAPTERS": "adapters",
    "ArgumentIssue": "_types",
    "ArgumentsFragment": "_types",
    "ArgumentsPreview": "_types",
    "Assembler": "_assembler",
    "AsyncEventStream": "_client",
    "CallRef": "_types",
    "CallStarted": "_types",
    "CallState": "_turn_types",
    "CallTimes": "_types",
    "CustomToolCall": "_types",
    "DECODERS": "providers",
    "EventStream": "_client",
    "Finish": "_types",
    "FramingError": "_errors",
    "HTTPStatusError": "_errors",
    "ISSUE_KINDS": "_types",
    "IncompleteStreamError": "_errors",
    "InvalidToolCall": "_types",
    "LimitExceededError": "_errors",
    "Limits": "_limits",
    "MessageItem": "_turn_types",
    "Provider": "_types",
    "ProviderError": "_errors",
    "ProviderProtocolError": "_errors",
    "ReasoningItem": "_turn_types",
    "RedactedThinking": "_turn_types",
    "ResponseEnd": "_types",
    "ServerToolResult": "_turn_types",
    "ServerToolUse": "_turn_types",
    "StreamError": "_errors",
    "StreamEvent": "_turn_types",
    "StreamOptions": "_assembler",
    "StreamkitError": "_errors",
    "TextDelta": "_types",
    "TextSignature": "_turn_types",
    "Thinking": "_turn_types",
    "TokenUsage": "_types",
    "ToolCall": "_types",
    "ToolResult": "_types",
    "Toolset": "_validate",
    "TransportError": "_errors",
    "Turn": "_turn_types",
    "TurnItem": "_turn_types",
    "UsageError": "_errors",
    "acollect_turn": "_transport",
    "aiter_events": "_transport",
    "aiter_tool_calls": "_transport",
    "astream": "_client",
    "call_id": "adapters",
    "collect_turn": "_transport",
    "iter_events": "_transport",
    "iter_tool_calls": "_transport",
    "parse_arguments": "_normalize",
    "run_tools": "_run_tools",
    "stream": "_client",
}


_LOADING: set[str] = set()  # the import statement asks for a subpackage's name while importing it


if not TYPE_CHECKING:  # unseen by type checkers, so that a misspelt name stays an error there

    def __getattr__(name: str) -> object:
        home = name if name in _SUBPACKAGES else _HOMES.get(name)
        if home is None or home in _LOADING:
            raise AttributeError(f"module 'streamkit' has no attribute {name!r}")
        _LOADING.add(home)
        try:
            loaded = _load(home)
        finally:
            _LOADING.discard(home)
        if home == name:
            return loaded
        modules = _sys.modules
        for public, where in _HOMES.items():  # what the load brought in beside ``home`` too
            module = modules.get(f"{__name__}.{where}")
            if module is not None and public not in globals() and hasattr(module, public):
                value = getattr(module, public)
                if isinstance(value, type):
                    value.__module__ = __name__
                globals()[public] = value
        return globals()[name]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _load(home: str) -> ModuleType:
    """The module ``home``, imported by a plain import statement: no module is imported by a string."""
    if home == "_client":
        from . import _client

        return _client
    elif home == "_assembler":
        from . import _assembler

        return _assembler
    elif home == "_errors":
        from . import _errors

        return _errors
    elif home == "_limits":
        from . import _limits

        return _limits
    elif home == "_normalize":
        from . import _normalize

        return _normalize
    elif home == "_pipeline":
        from . import _pipeline

        return _pipeline
    elif home == "_run_tools":
        from . import _run_tools

        return _run_tools
    elif home == "_transport":
        from . import _transport

        return _transport
    elif home == "_types":
        from . import _types

        return _types
    elif home == "_turn_types":
        from . import _turn_types

        return _turn_types
    elif home == "_validate":
        from . import _validate

        return _validate
    elif home == "adapters":
        from . import adapters

        return adapters
    elif home == "integrations":
        from . import integrations

        return integrations
    elif home == "providers":
        from . import providers

        return providers
    raise AssertionError(home)


del TYPE_CHECKING
