"""The bundled example upstream: a recorded stream replayed over HTTP, for ``serve --example``.

``streamkit serve --example`` routes OpenAI Chat Completions to this server's own
``/example/v1``, which answers every request with ``example/openai_chat.sse``: two parallel
calls that a local server sent both at index 0, as Ollama's OpenAI endpoint does through some
gateways. The bytes cross a real loopback connection and the proxy's whole path, so what a
newcomer's SDK reads is exactly what it would read in front of a real upstream: two calls,
at indexes 0 and 1, each whole.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

__all__ = ("EXAMPLE_PREFIX", "example_route", "serve_example")

EXAMPLE_PREFIX = "/example/v1"

Message = MutableMapping[str, Any]


def example_route(host: str, port: int) -> dict[str, Any]:
    """The route that sends OpenAI Chat Completions to the example upstream (a ``[[route]]`` table)."""
    local = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    return {"format": "openai_chat", "upstream": f"http://{local}:{port}{EXAMPLE_PREFIX}"}


async def serve_example(
    path: str, receive: Callable[[], Awaitable[Message]], send: Callable[[Message], Awaitable[None]]
) -> None:
    """Answer with the recorded stream, one event per write, as a server that streams does."""
    while (await receive()).get("more_body", False):
        pass
    if path != EXAMPLE_PREFIX + "/chat/completions":
        body = b'{"error":{"message":"the example upstream serves /chat/completions only","type":"not_found"}}'
        await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})
        return
    recorded = (Path(__file__).parent / "example" / "openai_chat.sse").read_bytes()  # package data
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for event in recorded.split(b"\n\n"):
        if event.strip():
            await send({"type": "http.response.body", "body": event + b"\n\n", "more_body": True})
    await send({"type": "http.response.body", "body": b""})
