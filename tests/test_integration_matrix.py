"""Every integration, provider and scenario of ``tests/scenarios.py``, under each framework's own loop.

Each run offers ``get_weather`` and ``get_stock`` and asserts which tools ran with which
arguments, what each request after a turn of calls told the model of each call (its result,
or streamkit's error), and how the run ended. The loopback server plays the provider, one
reply per model turn. A framework that is not installed is skipped (the ``framework-tests``
extra installs them all).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from .helpers import waited
from .models import ANTHROPIC, OPENAI
from .scenarios import FINAL_TEXT, RESULTS, SCENARIOS, Ran, Told, replies, told
from .server import LoopbackServer, Reply, Turns

pytestmark = pytest.mark.anyio

PATHS = {"openai_chat": "/v1/chat/completions", "anthropic": "/v1/messages"}
BASES = {"openai_chat": "/v1", "anthropic": ""}
MODELS = {"openai_chat": OPENAI, "anthropic": ANTHROPIC}
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


Run = Callable[[str], Awaitable[str]]


@asynccontextmanager
async def _pydantic_ai_agent(
    server: LoopbackServer, provider: str, tools: Iterable[Callable[..., Any]], *, early: bool
) -> AsyncIterator[Run]:
    """A pydantic-ai agent on the wrapped model (or with ``StartToolsEarly``); runs it on a prompt."""
    import httpx2
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    from streamkit.integrations.pydantic_ai import StartToolsEarly, wrap

    async with httpx2.AsyncClient(timeout=30) as client:
        model: Any
        if provider == "openai_chat":
            model = OpenAIChatModel(OPENAI, provider=OpenAIProvider(server.url("/v1"), "k", http_client=client))
        else:
            model = AnthropicModel(
                ANTHROPIC,
                provider=AnthropicProvider(api_key="k", base_url=server.url(""), http_client=client),
            )
        if early:
            agent: Agent[None, str] = Agent(model, tools=list(tools), capabilities=[StartToolsEarly()])
        else:
            agent = Agent(wrap(model), tools=list(tools))

        async def run(prompt: str) -> str:
            return (await agent.run(prompt)).output

        yield run


@asynccontextmanager
async def _langchain_agent(
    server: LoopbackServer, provider: str, tools: Iterable[Callable[..., Any]], *, early: bool
) -> AsyncIterator[Run]:
    """``create_agent`` asking again after invalid calls (with ``EarlyToolsMiddleware`` when early)."""
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool

    from streamkit.integrations.langchain import AskAgainMiddleware, EarlyToolsMiddleware, StreamkitChatModel

    settings: dict[str, Any] = {"provider": provider, "model": MODELS[provider], "api_key": "k"}
    model = StreamkitChatModel(base_url=server.url(BASES[provider]), **settings)
    middleware = EarlyToolsMiddleware() if early else AskAgainMiddleware()
    agent = create_agent(model, tools=[tool(function) for function in tools], middleware=[middleware])

    async def run(prompt: str) -> str:
        messages = (await agent.ainvoke({"messages": [HumanMessage(prompt)]}))["messages"]
        return str(messages[-1].text)

    try:
        yield run
    finally:
        await model.aclose()


#: The early starters: each framework's agent that starts a tool while the model still streams.
EARLY = {"pydantic-ai": _pydantic_ai_agent, "langchain": _langchain_agent}


def _once(early: bool, made: Callable[..., Any]) -> Runner:
    """A runner that makes the agent, runs it once on "Go", and closes it."""

    async def runner(server: LoopbackServer, provider: str, ran: Ran) -> str:
        async with made(server, provider, _recorded(ran).values(), early=early) as run:
            return str(await run("Go"))

    return runner


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
    "pydantic-ai": ("pydantic_ai", _once(False, _pydantic_ai_agent)),
    "pydantic-ai StartToolsEarly": ("pydantic_ai", _once(True, _pydantic_ai_agent)),
    "langchain": ("langchain.agents", _once(False, _langchain_agent)),
    "langchain EarlyToolsMiddleware": ("langchain.agents", _once(True, _langchain_agent)),
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
    turns = OWN_WORDS.get(framework.split()[0], {}).get(name, SCENARIOS[name].told)
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


# -- the early starters: runs of one agent never share an early run ------------------------------


def _slow_weather(
    started: list[int], cancelled: list[int], slow: float, began: asyncio.Event | None = None
) -> Callable[..., Awaitable[str]]:
    """A tool that numbers its runs; the first sleeps ``slow`` seconds (and notes a cancellation)."""

    async def get_weather(city: str) -> str:
        """The weather in a city."""
        number = len(started) + 1
        started.append(number)
        if began is not None:
            began.set()
        try:
            await asyncio.sleep(slow if number == 1 else 0)
        except asyncio.CancelledError:
            cancelled.append(number)
            raise
        return f"sunny in {city}, run {number}"

    return get_weather


def _paused_call(provider: str) -> Reply:
    """The plain turn, paused before its last event (after the call's end, OpenAI Chat's finish
    included), so the tool starts while the stream is still open."""
    (turn, _) = replies(SCENARIOS["plain"], provider)
    return Reply(turn.writes, pauses={len(turn.writes) - 1: 0.5})


def _serve(server: LoopbackServer, early: str, provider: str, *, both_paused: bool) -> None:
    """Two turns of one call (the first paused, the second too when ``both_paused``), then the answer."""
    pytest.importorskip(FRAMEWORKS[early][0])
    turn, final_reply = replies(SCENARIOS["plain"], provider)
    second = _paused_call(provider) if both_paused else turn
    server.routes = Turns(PATHS[provider], _paused_call(provider), second, final_reply)


#: Each early starter on each provider.
EACH_EARLY = pytest.mark.parametrize(("early", "provider"), [(e, p) for e in sorted(EARLY) for p in sorted(PATHS)])


@EACH_EARLY
async def test_two_runs_of_one_agent_in_parallel_each_get_their_own_result(
    server: LoopbackServer, early: str, provider: str
) -> None:
    """Both runs get the same call (the same id): each run's next request carries its own tool's result."""
    _serve(server, early, provider, both_paused=True)
    started: list[int] = []
    async with EARLY[early](server, provider, [_slow_weather(started, [], 0)], early=True) as run:
        outputs = await asyncio.gather(run("Go"), run("Go"))
    assert (list(outputs), sorted(started)) == ([FINAL_TEXT, FINAL_TEXT], [1, 2])
    results = sorted(told(json.loads(request.body))["call_A"] for request in server.requests[2:])
    assert results == ["sunny in Paris, run 1", "sunny in Paris, run 2"]


@EACH_EARLY
async def test_a_run_closed_mid_stream_cancels_its_tool_and_the_next_run_gets_its_own(
    server: LoopbackServer, early: str, provider: str
) -> None:
    _serve(server, early, provider, both_paused=False)
    started: list[int] = []
    cancelled: list[int] = []
    began = asyncio.Event()
    async with EARLY[early](server, provider, [_slow_weather(started, cancelled, 10, began)], early=True) as run:
        first = asyncio.ensure_future(run("Go"))
        await waited(began, "the tool to start while the stream is paused")
        assert not server.connections[0].finished.is_set()
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert cancelled == [1]  # the closed run's tool was cancelled, not left running
        assert await run("Go") == FINAL_TEXT
    assert started == [1, 2]
    assert told(json.loads(server.requests[-1].body)) == {"call_A": "sunny in Paris, run 2"}


# -- each framework's page states the table ------------------------------------------------------

PAGES = Path(__file__).resolve().parent.parent / "docs" / "frameworks"
#: How each page's table names a scenario (a row that starts with it).
ROWS = {
    "plain": "| a plain turn",
    "two calls at index 0": "| two calls at index 0 (OpenAI Chat), or without an index; Anthropic reusing a block",
    "cut": "| a call cut off by the output limit",
    "complete then cut": "| a complete call, then a cut one",
    "invalid JSON": "| invalid JSON",
    "schema": "| arguments that fail the",
    "gzip": "| a plain turn of one call, sent gzip-compressed or not",
    "multi-turn": "| a multi-turn conversation",
}


@pytest.mark.parametrize("page", ["langchain", "litellm", "openai_agents", "pydantic_ai"])
async def test_each_framework_page_states_what_a_user_sees_in_each_scenario(page: str) -> None:
    lines = (PAGES / f"{page}.md").read_text(encoding="utf-8").splitlines()
    assert sorted(ROWS) == sorted(SCENARIOS)
    missing = [name for name, row in ROWS.items() if not any(line.startswith(row) for line in lines)]
    assert missing == []
