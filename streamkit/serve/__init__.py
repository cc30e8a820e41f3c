"""``streamkit serve``: an HTTP proxy that gives any client streamkit's guarantees.

It accepts OpenAI Chat Completions, OpenAI Responses and Anthropic Messages requests, forwards
each to the upstream its route names, and streams back, in the client's own format, a
canonical stream: each tool call once, with its own index and id, whole at its end or (a
route's ``emit = "fragments"``) streamed as it arrives with its end held until it is checked
against the request's own ``tools``; an invalid or cut call is never handed on in a form the
client would run. Install with the ``serve`` extra (uvicorn); see docs/serve.md.

The HTTP edge lives here, apart from the core: the core knows nothing of servers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._config import Config, Route, load_config, parse_config

if TYPE_CHECKING:
    from ._app import App

__all__ = ("App", "Config", "Route", "load_config", "parse_config")


def __getattr__(name: str) -> Any:
    """``App`` loads httpx and anyio: only when it is used, not for the command line's parser."""
    if name == "App":
        from ._app import App

        return App
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
