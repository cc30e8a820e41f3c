"""Every integration, provider and scenario of ``tests/scenarios.py``, under each framework's own loop.

Each run offers ``get_weather`` and ``get_stock`` and asserts which tools ran with which
arguments, what each request after a turn of calls told the model of each call (its result,
or streamkit's error), and how the run ended. The loopback server plays the provider, one
reply per model turn. A framework that is not installed is skipped (the ``framework-tests``
extra installs them all).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from .scenarios import FINAL_TEXT, RESULTS, SCENARIOS, Ran, Told, replies, told
from .server import LoopbackServer, Turns

pytestmark = pytest.mark.anyio

PATHS = {"openai_chat": "/v1/chat/completions", "anthropic": "/v1/messages"}
BASES = {"openai_chat": "/v1", "anthropic": ""}
MODELS = {"openai_chat": "gpt-4o", "anthropic": "claude-sonnet-4-5"}
Runner = Callable[[LoopbackServer, str, Ran], Awaitable[str]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # every framework here runs on asyncio


def _recorded(ran: Ran) -> dict[str, Callable[..., str]]:
    """The tools, each recording its run before it returns its result."""

    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(("get_weather", {"city": city}))
        return RESULTS["get_weather"](city)

    def get_stock(ticker: str) -> str:
        """A stock's price."""
        ran.append(("get_stock", {"ticker": ticker}))
        return RESULTS["get_stock"](ticker)

    return {"get_weather": get_weather, "get_stock": get_stock}


async def _pydantic_ai(server: LoopbackServer, provider: str, ran: Ran) -> str:
    import httpx2
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    from streamkit.integrations.pydantic_ai import wrap

    async with httpx2.AsyncClient(timeout=30) as client:
        model: Any
        if provider == "openai_chat":
            model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(server.url("/v1"), "k", http_client=client))
        else:
            model = AnthropicModel(
                "claude-sonnet-4-5",
                provider=AnthropicProvider(api_key="k", base_url=server.url(""), http_client=client),
            )
        agent: Agent[None, str] = Agent(wrap(model), tools=list(_recorded(ran).values()))
        return (await agent.run("Go")).output


async def _langchain(server: LoopbackServer, provider: str, ran: Ran) -> str:
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool

    from streamkit.integrations.langchain import AskAgainMiddleware, StreamkitChatModel

    settings: dict[str, Any] = {"provider": provider, "model": MODELS[provider], "api_key": "k"}
    model = StreamkitChatModel(base_url=server.url(BASES[provider]), **settings)
    try:
        tools = [tool(function) for function in _recorded(ran).values()]
        agent = create_agent(model, tools=tools, middleware=[AskAgainMiddleware()])
        messages = (await agent.ainvoke({"messages": [HumanMessage("Go")]}))["messages"]
        return str(messages[-1].text)
    finally:
        await model.aclose()


async def _openai_agents(server: LoopbackServer, provider: str, ran: Ran) -> str:
    import httpx
    from agents import Agent, RunConfig, Runner, function_tool

    from streamkit.integrations.openai_agents import StreamkitModelProvider

    async with httpx.AsyncClient() as client:
        made = StreamkitModelProvider(
            provider, default_model=MODELS[provider], client=client, base_url=server.url(BASES[provider]), api_key="k"
        )
        tools: list[Any] = [function_tool(function) for function in _recorded(ran).values()]
        agent = Agent(name="assistant", instructions="Be brief.", tools=tools)
        result = await Runner.run(agent, "Go", run_config=RunConfig(model_provider=made, tracing_disabled=True))
        return str(result.final_output)


async def _litellm(server: LoopbackServer, provider: str, ran: Ran) -> str:
    """The multi-turn loop of the LiteLLM page, as a user copies it."""
    import asyncio

    import litellm

    from streamkit.integrations.litellm import assistant_turn, register

    register()
    functions = _recorded(ran)
    properties = {"city": {"type": "string"}, "ticker": {"type": "string"}}
    tools = [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties}}}
        for name in functions
    ]
    messages: list[Any] = [{"role": "user", "content": "Go"}]
    for _ in range(5):
        response = await litellm.acompletion(
            model=f"streamkit/{provider}/{MODELS[provider]}",
            messages=messages,
            tools=tools,
            stream=True,
            api_base=server.url(BASES[provider]),
            api_key="k",
        )
        chunks, running = [], {}
        async for chunk in response:
            chunks.append(chunk)
            delta = chunk.choices[0].delta if chunk.choices else None
            for call in (delta and delta.tool_calls) or ():
                arguments = json.loads(call.function.arguments)
                running[call.id] = asyncio.create_task(asyncio.to_thread(functions[call.function.name], **arguments))
        built: Any = litellm.stream_chunk_builder(chunks)
        message = built.choices[0].message
        turn = assistant_turn(message)
        messages += turn
        for call_id, task in running.items():
            messages.append({"role": "tool", "tool_call_id": call_id, "content": await task})
        if len(turn) == 1 and not running:
            return str(message.content)
    raise AssertionError("the loop did not end")


FRAMEWORKS: dict[str, tuple[str, Runner]] = {
    "pydantic-ai": ("pydantic_ai", _pydantic_ai),
    "langchain": ("langchain.agents", _langchain),
    "openai-agents": ("agents", _openai_agents),
    "litellm": ("litellm", _litellm),
}

#: Where a framework tells the model in its own words rather than streamkit's: framework -> scenario -> told.
OWN_WORDS: dict[str, dict[str, list[Told]]] = {
    # pydantic-ai validates the arguments itself and asks again with pydantic's errors (paths included).
    "pydantic-ai": {
        "schema": [
            {"call_A": '[{"type":"string_type","loc":["city"],"msg":"Input should be a valid string","input":7}]'}
        ]
    },
}


def _expected_told(framework: str, name: str) -> list[Told]:
    """What each request after a turn of calls holds: every result and error so far."""
    turns = OWN_WORDS.get(framework, {}).get(name, SCENARIOS[name].told)
    return [{key: value for turn in turns[: n + 1] for key, value in turn.items()} for n in range(len(turns))]


@pytest.mark.parametrize("provider", sorted(PATHS))
@pytest.mark.parametrize("name", list(SCENARIOS))
@pytest.mark.parametrize("framework", list(FRAMEWORKS))
async def test_the_scenario_under_the_framework(
    server: LoopbackServer, framework: str, name: str, provider: str
) -> None:
    module, runner = FRAMEWORKS[framework]
    if importlib.util.find_spec(module.split(".")[0]) is None:
        pytest.skip(f"{module} is not installed")
    scenario = SCENARIOS[name]
    server.routes = Turns(PATHS[provider], *replies(scenario, provider))
    ran: Ran = []
    output = await runner(server, provider, ran)
    bodies = [json.loads(request.body) for request in server.requests]
    assert sorted(ran) == sorted(scenario.ran)
    assert [told(body) for body in bodies[1:]] == _expected_told(framework, name)
    assert output == FINAL_TEXT
