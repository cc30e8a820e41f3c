"""The httpx2 transport under pydantic-ai's own agent loop, against the loopback server.

pydantic-ai reads OpenAI Chat streams with the openai SDK over an httpx2 client: given the
transport, its agent runs each parallel call once with its own arguments, and never runs a call
that the output limit cut off. Skipped where pydantic-ai is not installed (the
``framework-tests`` extra installs it).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .helpers import FIXTURES
from .server import LoopbackServer, Reply

pytest.importorskip("pydantic_ai")
httpx2 = pytest.importorskip("httpx2")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.exceptions import ModelConnectionError, UnexpectedModelBehavior  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

from streamkit.integrations.httpx2 import AsyncTransport  # noqa: E402

from .models import OPENAI  # noqa: E402

pytestmark = pytest.mark.anyio
PATH = "/v1/chat/completions"


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": OPENAI}
    body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return b"data: " + json.dumps(body).encode() + b"\n\n"


FINAL = chunk({"role": "assistant", "content": "done"}) + chunk({}, "stop") + b"data: [DONE]\n\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # pydantic-ai runs on asyncio


async def run(server: LoopbackServer, ran: list[tuple[str, dict[str, str]]], transport: bool, prompt: str) -> str:
    client = httpx2.AsyncClient(transport=AsyncTransport()) if transport else httpx2.AsyncClient()
    async with client, agent(server, ran, client).run_stream(prompt) as result:
        return await result.get_output()


def agent(server: LoopbackServer, ran: list[tuple[str, dict[str, str]]], client: Any) -> Agent[None, str]:
    provider = OpenAIProvider(base_url=server.url("/v1"), api_key="test-key", http_client=client)
    made: Agent[None, str] = Agent(OpenAIChatModel(OPENAI, provider=provider))

    @made.tool_plain
    def get_weather(city: str) -> str:
        ran.append(("get_weather", {"city": city}))
        server.routes[PATH] = Reply([FINAL])
        return "sunny"

    @made.tool_plain
    def get_stock(ticker: str) -> str:
        ran.append(("get_stock", {"ticker": ticker}))
        server.routes[PATH] = Reply([FINAL])
        return "190"

    @made.tool_plain
    def write_file(path: str, content: str) -> str:
        ran.append(("write_file", {"path": path, "content": content}))
        return "written"

    return made


@pytest.mark.parametrize("fixture", ["parallel_calls_all_index_zero", "index_missing"])
async def test_each_parallel_call_runs_once_with_its_own_arguments(server: LoopbackServer, fixture: str) -> None:
    server.routes[PATH] = Reply([(FIXTURES / "openai_chat" / f"{fixture}.sse").read_bytes()])
    ran: list[tuple[str, dict[str, str]]] = []
    assert await run(server, ran, True, "Weather in Paris, and AAPL?") == "done"
    assert sorted(ran) == [("get_stock", {"ticker": "AAPL"}), ("get_weather", {"city": "Paris"})]


async def test_without_the_transport_the_calls_are_merged(server: LoopbackServer) -> None:
    """What the transport fixes: pydantic-ai alone joins the two calls sent at index 0."""
    server.routes[PATH] = Reply([(FIXTURES / "openai_chat" / "parallel_calls_all_index_zero.sse").read_bytes()])
    ran: list[tuple[str, dict[str, str]]] = []
    with pytest.raises(UnexpectedModelBehavior, match="get_weatherget_stock"):
        await run(server, ran, False, "Weather in Paris, and AAPL?")
    assert ran == []


async def test_a_call_cut_by_the_output_limit_never_runs(server: LoopbackServer) -> None:
    server.routes[PATH] = Reply([(FIXTURES / "openai_chat" / "length_truncated.sse").read_bytes()])
    ran: list[tuple[str, dict[str, str]]] = []
    with pytest.raises(ModelConnectionError) as raised:  # told twice, cut each time: one typed error
        await run(server, ran, True, "Write a story to a.txt")
    assert ran == []
    cause = raised.value.__cause__
    assert cause is not None and "write_file (call_A) was not run: your arguments were cut" in str(cause.__cause__)
    assert len(server.requests) == 3  # the request, and the transport's two rounds: the SDK re-sent nothing
