"""The bundled example upstream: a recorded turn replayed over HTTP, for ``serve --example``.

``streamkit serve --example`` routes OpenAI Chat Completions for the model ``example`` to this
server's own ``/example/v1``. A streamed request is answered with ``example/openai_chat.sse``:
two parallel calls that a local server sent both at index 0, as Ollama's OpenAI endpoint does
through some gateways. A request without ``"stream": true`` (the OpenAI SDK's default) is
answered with the same turn as one JSON body, ``example/openai_chat.json``. The bytes cross a
real loopback connection and the proxy's whole path, so what a newcomer's SDK reads is exactly
what it would read in front of a real upstream: two calls, at indexes 0 and 1, each whole.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import orjson

from ._formats import FORMATS

__all__ = ("EXAMPLE_MODEL", "EXAMPLE_PREFIX", "example_hint", "example_route", "serve_example")

EXAMPLE_PREFIX = "/example/v1"
#: The one model the example serves; any other is answered with the proxy's "no route" error.
EXAMPLE_MODEL = "example"
_RECORDED = Path(__file__).parent / "example"  # package data
#: The example upstream speaks the format of its recording (``<slug>.sse``, and the same turn
#: not streamed, ``<slug>.json``), at that API's own path.
_STREAMED = next(_RECORDED.glob("*.sse"))
_WHOLE = _STREAMED.with_suffix(".json")
_CHAT = FORMATS[_STREAMED.stem]

Message = MutableMapping[str, Any]
Send = Callable[[Message], Awaitable[None]]


def example_route(host: str, port: int) -> dict[str, Any]:
    """The route that sends OpenAI Chat Completions to the example upstream (a ``[[route]]`` table)."""
    return {"format": _CHAT.slug, "upstream": _base(host, port) + EXAMPLE_PREFIX, "models": [EXAMPLE_MODEL]}


def example_hint(host: str, port: int) -> str:
    """What a newcomer runs next, printed when the example starts."""
    url = _base(host, port) + "/v1"
    body = '{"model": "example", "messages": [{"role": "user", "content": "Weather in Paris, and AAPL?"}]}'
    return (
        f"streamkit serve: the example answers at {url} (model {EXAMPLE_MODEL!r}, any key); try: "
        f"curl -s {_base(host, port)}{_CHAT.path} -H 'content-type: application/json' -d '{body}'"
    )


def _base(host: str, port: int) -> str:
    local = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    return f"http://[{local}]:{port}" if ":" in local else f"http://{local}:{port}"


async def serve_example(path: str, receive: Callable[[], Awaitable[Message]], send: Send) -> None:
    """Answer as a server that streams does: the recorded stream, one event per write, or the whole turn."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    if path != EXAMPLE_PREFIX + _CHAT.upstream_path:
        await _error(send, 404, f"the example upstream serves {_CHAT.upstream_path} only")
        return
    try:
        streamed = orjson.loads(body).get("stream") is True
    except (orjson.JSONDecodeError, AttributeError):
        await _error(send, 400, "the request body is not a JSON object")
        return
    if not streamed:
        whole = _WHOLE.read_bytes()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": whole})
        return
    recorded = _STREAMED.read_bytes()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for event in recorded.split(b"\n\n"):
        if event.strip():
            await send({"type": "http.response.body", "body": event + b"\n\n", "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def _error(send: Send, status: int, message: str) -> None:
    body = orjson.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})
