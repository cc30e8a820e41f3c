"""The proxy on a real uvicorn server on 127.0.0.1, in front of the loopback upstream, for the serve
tests, and the official SDKs' clients of it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from streamkit.serve import App, parse_config
from streamkit.serve._command import server_options

from .server import LoopbackServer, Reply
from .translating import blocks

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "serve"
PROXY_KEY = "sk-P7x2Qm9Lz4Kv8Rt3Wn"
UPSTREAM_KEY = "sk-9f3Kq2Lx7Vm4Zt8Wb1Rc"
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_stock",
            "parameters": {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]},
        },
    },
]

#: The same tools in Anthropic's and OpenAI Responses' shapes.
ANTHROPIC_TOOLS = [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in TOOLS]
RESPONSES_TOOLS = [
    {"type": "function", "name": t["function"]["name"], "parameters": t["function"]["parameters"]} for t in TOOLS
]


def events(fmt: str, case: str) -> list[bytes]:
    """A transcript, one write per SSE event, as a streaming server writes it."""
    data = (FIXTURES / fmt / f"{case}.sse").read_bytes()
    return [event + b"\n\n" for event in data.split(b"\n\n") if event.strip()]


class Proxy:
    """``App`` under uvicorn on a free port, in a thread with its own event loop."""

    def __init__(self, config: dict[str, Any], **options: Any) -> None:
        self.app = App(parse_config(config), **options)
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        served = server_options(self.app.config)  # the settings ``streamkit serve`` runs uvicorn with
        settings = uvicorn.Config(self.app, log_level="warning", access_log=False, lifespan="on", **served)
        self._server = uvicorn.Server(settings)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the proxy did not start")
            time.sleep(0.01)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._socket.close()


def route(upstream: LoopbackServer, fmt: str = "openai_chat", **extra: Any) -> dict[str, Any]:
    return {"format": fmt, "upstream": upstream.url("/v1"), "key_env": "TEST_UPSTREAM_KEY", **extra}


@contextmanager
def proxy(upstream: LoopbackServer, *routes: dict[str, Any], **server: Any) -> Iterator[Proxy]:
    running = Proxy({"server": {"proxy_key_env": "TEST_PROXY_KEY", **server}, "route": list(routes)})
    try:
        yield running
    finally:
        running.close()


class Clients:
    """The SDK clients a test opened, closed when it ends (their pools would otherwise leak sockets)."""

    def __init__(self) -> None:
        self._opened: list[Any] = []

    def add(self, client: Any) -> Any:
        self._opened.append(client)
        return client

    def close(self) -> None:
        for client in self._opened:
            client.close()
        self._opened.clear()


#: The SDK clients of the tests of the proxy now running, closed with it.
CLIENTS = Clients()


@contextmanager
def keyed_proxy(upstream: LoopbackServer, *routes: dict[str, Any], **server: Any) -> Iterator[Proxy]:
    """``proxy`` with the test keys in the environment: the proxy key, and each route's upstream key."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEST_PROXY_KEY", PROXY_KEY)
        patch.setenv("TEST_UPSTREAM_KEY", UPSTREAM_KEY)
        with proxy(upstream, *routes, **server) as running:
            try:
                yield running
            finally:
                CLIENTS.close()


@contextmanager
def translating_proxy(upstream: LoopbackServer, to: str, *formats: str, root: str = "/v1") -> Iterator[Proxy]:
    """``keyed_proxy`` with a route for each client format of ``formats``, each sent on to the
    upstream in format ``to``, its API at ``root`` (Gemini's and Ollama's have no /v1)."""
    routes = (route(upstream, fmt, upstream_format=to) | {"upstream": upstream.url(root)} for fmt in formats)
    with keyed_proxy(upstream, *routes) as running:
        yield running


def gpt(served: Proxy) -> Any:
    """The openai SDK's client of the proxy's OpenAI routes, closed with the proxy."""
    openai = pytest.importorskip("openai")
    return CLIENTS.add(openai.OpenAI(base_url=served.url + "/v1", api_key=PROXY_KEY, max_retries=0))


def claude(served: Proxy) -> Any:
    """The anthropic SDK's client of the proxy's Messages route, closed with the proxy."""
    anthropic = pytest.importorskip("anthropic")
    return CLIENTS.add(anthropic.Anthropic(base_url=served.url, api_key=PROXY_KEY, max_retries=0))


def streamed_chat(served: Proxy, **request: Any) -> Any:
    """The completion a Chat client streams for ``request``, read whole."""
    with gpt(served).chat.completions.stream(**request) as stream:
        return stream.get_final_completion()


def streamed_message(served: Proxy, **request: Any) -> Any:
    """The message a Messages client streams for ``request``, read whole."""
    with claude(served).messages.stream(**request) as stream:
        return stream.get_final_message()


def assert_chat_text(served: Proxy, request: dict[str, Any]) -> Any:
    """A Chat client streams ``request`` and reads the text answer "Sunny in Paris." with its
    usage (11 tokens in, 7 out); its choice, for more checks."""
    completion = streamed_chat(served, **request)
    [choice] = completion.choices
    assert (choice.message.content, choice.finish_reason) == ("Sunny in Paris.", "stop")
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (11, 7)
    return choice


def assert_chat_answered(served: Proxy, **request: Any) -> None:
    """A Chat client asks for ``request`` in one body and reads the text answer "Sunny in Paris.",
    no calls."""
    [choice] = gpt(served).chat.completions.create(**request).choices
    assert (choice.message.content, choice.finish_reason, choice.message.tool_calls) == (
        "Sunny in Paris.",
        "stop",
        None,
    )


def assert_messages_text(served: Proxy, request: dict[str, Any]) -> None:
    """A Messages client streams ``request`` and reads the text answer "Sunny in Paris." with its
    usage (11 tokens in, 7 out)."""
    message = streamed_message(served, **request)
    assert (blocks(message), message.stop_reason) == ([("text", "Sunny in Paris.")], "end_turn")
    assert (message.usage.input_tokens, message.usage.output_tokens) == (11, 7)


def reply(fmt: str, case: str, **extra: Any) -> Reply:
    return Reply(writes=events(fmt, case), **extra)
