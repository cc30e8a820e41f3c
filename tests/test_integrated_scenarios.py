"""Each scenario of a bad tool call under the frameworks streamkit integrates, before and after.

The same scenarios and stand-in model as ``tests/test_unintegrated_frameworks.py``
(``tests/standin.py``): each framework's own agent loop runs real tools against the loopback
server, whose model answers each request from what it was sent. Each cell runs with streamkit's
integration ("after") and, where the framework has its own model class for the provider, with
that class alone ("before"); it asserts which tools ran with which arguments, what the later
requests told the model, how the run ended and how many requests reached the server.
``python -m tests.test_integrated_scenarios`` prints the table of docs/frameworks/scenarios.md
from the same runs.

Skipped where a framework is not installed (the ``framework-tests`` extra installs them).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib.util
import io
import json
import os
import re
import sys
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import orjson
import pytest

from .helpers import ROOT
from .models import ANTHROPIC, OPENAI
from .server import LoopbackServer
from .standin import (
    AFTER,
    PROMPT,
    PROVIDERS,
    SCENARIOS,
    Outcome,
    Tools,
    chat,
    describe,
    measure,
    messages,
    ollama,
    results,
    text_of,
)

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BASES = {"openai_chat": "/v1", "anthropic": "", "ollama": ""}
MODELS = {"openai_chat": OPENAI, "anthropic": ANTHROPIC, "ollama": "qwen3"}


def raised(error: BaseException) -> str:
    """How a run that raised ended: the error's type and its first words (the server's port left out)."""
    words = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1", " ".join(str(error).split()))
    return f"raised {type(error).__name__}: {words[:72]}"


def answer(text: object) -> str:
    return f"answer {text!r}" if text else "ended without an answer"


# -- pydantic-ai ---------------------------------------------------------------------------------


def run_pydantic_ai(server: LoopbackServer, provider: str, tools: Tools, streamkit: bool) -> str:
    """``Agent.run`` with an event handler (a streamed request), on the model alone or wrapped."""
    import httpx2
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    from streamkit.integrations.pydantic_ai import wrap

    async def ignore(context: Any, events: Any) -> None:
        async for _ in events:
            pass

    async def main() -> str:
        async with httpx2.AsyncClient(timeout=30) as client:
            model: Any
            if provider == "openai_chat":
                model = OpenAIChatModel(OPENAI, provider=OpenAIProvider(server.url("/v1"), "k", http_client=client))
            else:
                made = AnthropicProvider(api_key="k", base_url=server.url(""), http_client=client)
                model = AnthropicModel(ANTHROPIC, provider=made)
            agent = Agent(wrap(model) if streamkit else model, tools=tools.all())
            try:
                result = await agent.run(PROMPT, event_stream_handler=ignore)
            except Exception as error:
                return raised(error)
            return answer(result.output)

    return asyncio.run(main())


# -- LangChain -----------------------------------------------------------------------------------


def run_langchain(server: LoopbackServer, provider: str, tools: Tools, streamkit: bool, *, ask_again: bool) -> str:
    """``create_agent`` on ``StreamkitChatModel``, with ``AskAgainMiddleware`` or without."""
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool

    from streamkit.integrations.langchain import AskAgainMiddleware, StreamkitChatModel

    assert streamkit  # langchain-openai and langchain-anthropic are not among the test extras
    settings: dict[str, Any] = {"provider": provider, "model": MODELS[provider], "api_key": "k"}
    model = StreamkitChatModel(base_url=server.url(BASES[provider]), **settings)
    middleware = [AskAgainMiddleware()] if ask_again else []
    agent = create_agent(model, tools=[tool(function) for function in tools.all()], middleware=middleware)

    async def main() -> str:
        try:
            reply = (await agent.ainvoke({"messages": [HumanMessage(PROMPT)]}))["messages"][-1]
        except Exception as error:
            return raised(error)
        finally:
            await model.aclose()
        return answer(reply.text)

    return asyncio.run(main())


# -- openai-agents -------------------------------------------------------------------------------


def run_openai_agents(server: LoopbackServer, provider: str, tools: Tools, streamkit: bool) -> str:
    """``Runner.run_streamed``: ``StreamkitModel``, or the SDK's own model for the provider
    (``OpenAIChatCompletionsModel``; ``LitellmModel`` for Anthropic)."""
    import httpx
    from agents import Agent, RunConfig, Runner, function_tool

    from streamkit.integrations.openai_agents import StreamkitModel

    async def main() -> str:
        async with httpx.AsyncClient() as client:
            model: Any
            if streamkit:
                model = StreamkitModel(
                    provider, MODELS[provider], client=client, base_url=server.url(BASES[provider]), api_key="k"
                )
            elif provider == "openai_chat":
                from agents import OpenAIChatCompletionsModel
                from openai import AsyncOpenAI

                sdk = AsyncOpenAI(base_url=server.url("/v1"), api_key="k", max_retries=0, http_client=client)
                model = OpenAIChatCompletionsModel(OPENAI, sdk)
            else:
                from agents.extensions.models.litellm_model import LitellmModel

                model = LitellmModel(f"anthropic/{ANTHROPIC}", base_url=server.url(""), api_key="k")
            agent = Agent(name="assistant", tools=[function_tool(f) for f in tools.all()], model=model)
            try:
                result = Runner.run_streamed(agent, PROMPT, run_config=RunConfig(tracing_disabled=True))
                async for _ in result.stream_events():
                    pass
            except Exception as error:
                return raised(error)
            return answer(result.final_output)

    return asyncio.run(main())


# -- LiteLLM -------------------------------------------------------------------------------------

SCHEMAS = {
    "get_weather": {"city": {"type": "string"}},
    "get_stock": {"ticker": {"type": "string"}},
    "write_file": {"path": {"type": "string"}, "content": {"type": "string"}},
}
LITELLM_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties, "required": list(properties)},
        },
    }
    for name, properties in SCHEMAS.items()
]


def run_litellm(server: LoopbackServer, provider: str, tools: Tools, streamkit: bool) -> str:
    """The loop of docs/frameworks/litellm.md on ``streamkit/<provider>/<model>``; before, the
    same loop on LiteLLM's own provider, running the calls of ``stream_chunk_builder``'s message
    and answering one it cannot parse or run with the exception's words."""
    import litellm

    from streamkit.integrations.litellm import assistant_turn, register

    register()
    litellm.suppress_debug_info = True
    functions = {function.__name__: function for function in tools.all()}

    async def main() -> str:
        history: list[Any] = [{"role": "user", "content": PROMPT}]
        name = (
            f"streamkit/{provider}/{MODELS[provider]}" if streamkit else f"{provider.split('_')[0]}/{MODELS[provider]}"
        )
        for _ in range(6):
            try:
                response = await litellm.acompletion(
                    model=name,
                    messages=history,
                    tools=LITELLM_TOOLS,
                    stream=True,
                    api_base=server.url(BASES[provider]),
                    api_key="k",
                    max_tokens=1024,
                )
                chunks = [chunk async for chunk in response]
            except Exception as error:
                return raised(error)
            message: Any = litellm.stream_chunk_builder(chunks).choices[0].message  # type: ignore[union-attr]
            turn = assistant_turn(message) if streamkit else [message.model_dump(exclude_none=True)]
            history += turn
            calls = message.tool_calls or []
            for call in calls:
                history.append({"role": "tool", "tool_call_id": call.id, "content": run_call(functions, call)})
            if len(turn) == 1 and not calls:
                return answer(message.content)
        return "ended after 6 turns"

    return asyncio.run(main())


def run_call(functions: dict[str, Callable[..., str]], call: Any) -> str:
    """A call's result, or the words of why it could not run."""
    try:
        return functions[call.function.name](**json.loads(call.function.arguments))
    except (KeyError, ValueError, TypeError) as error:
        return f"error: {type(error).__name__}: {error}"


# -- smolagents ----------------------------------------------------------------------------------


def run_smolagents(server: LoopbackServer, provider: str, tools: Tools, streamkit: bool) -> str:
    """``ToolCallingAgent`` streaming: ``StreamkitModel``; before, ``OpenAIServerModel`` (OpenAI
    Chat) or ``LiteLLMModel`` (Anthropic)."""
    from smolagents import Tool, ToolCallingAgent

    from streamkit.integrations.smolagents import StreamkitModel

    model: Any
    if streamkit:
        model = StreamkitModel(provider, MODELS[provider], base_url=server.url(BASES[provider]), api_key="k")
    elif provider == "openai_chat":
        from smolagents import OpenAIServerModel

        model = OpenAIServerModel(OPENAI, api_base=server.url("/v1"), api_key="k", client_kwargs={"max_retries": 0})
    else:
        from smolagents import LiteLLMModel

        model = LiteLLMModel(f"anthropic/{ANTHROPIC}", api_base=server.url(""), api_key="k")

    def made(function: Callable[..., str]) -> Tool:
        inputs = {name: {"type": "string", "description": name} for name in SCHEMAS[function.__name__]}
        body = {"name": function.__name__, "description": function.__doc__, "inputs": inputs, "output_type": "string"}
        kind = type(function.__name__, (Tool,), body | {"forward": staticmethod(function)})
        made: Tool = kind()
        return made

    agent = ToolCallingAgent(
        tools=[made(function) for function in tools.all()],
        model=model,
        max_steps=4,
        stream_outputs=True,
        verbosity_level=-1,
    )
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # its live display of the streamed calls
            output = agent.run(PROMPT)
    except Exception as error:
        return raised(error)
    finally:
        if streamkit:
            model.close()
    return answer(output)


def smolagents_results(provider: str, body: bytes) -> list[str]:
    """smolagents sends a step's observations (or its error) as the user's text after its calls."""
    history: list[dict[str, Any]] = orjson.loads(body)["messages"]
    if len(history) < 3 or history[-1]["role"] != "user":
        return []
    text = text_of(history[-1]["content"])
    if text.startswith("Observation:"):
        lines = text.removeprefix("Observation:").strip().splitlines()
        return [line for line in lines if line.strip()]
    error = text.removeprefix("Error:").strip().splitlines()[0]
    return [error.removeprefix("Error while parsing tool call from model output: ")]


def smolagents_final(provider: str) -> bytes:
    """smolagents ends a run on a call to its ``final_answer`` tool."""
    call = [(0, "fix_final", "final_answer", '{"answer": "Done."}')]
    if provider == "ollama":
        return ollama(None, [("fix_final", "final_answer", {"answer": "Done."})], "stop")
    return chat(None, call, "tool_calls") if provider == "openai_chat" else messages(None, call, "tool_use")


# -- agno ----------------------------------------------------------------------------------------


def run_agno(server: LoopbackServer, provider: str, tools: Tools, streamkit: bool) -> str:
    """``Agent.run(stream=True)``: ``StreamkitModel``; before, agno's ``OpenAIChat`` or ``Claude``."""
    from agno.agent import Agent, RunOutput

    from streamkit.integrations.agno import StreamkitModel

    model: Any
    if streamkit:
        model = StreamkitModel(
            id=MODELS[provider], provider=provider, base_url=server.url(BASES[provider]), api_key="k"
        )
    elif provider == "openai_chat":
        from agno.models.openai import OpenAIChat

        model = OpenAIChat(id=OPENAI, base_url=server.url("/v1"), api_key="k", max_retries=0)
    else:
        from agno.models.anthropic import Claude

        model = Claude(id=ANTHROPIC, api_key="k", client_params={"base_url": server.url(""), "max_retries": 0})
    agent = Agent(model=model, tools=tools.all(), telemetry=False)
    try:
        outputs = list(agent.run(PROMPT, stream=True, yield_run_output=True))
    except Exception as error:
        return raised(error)
    finally:
        if streamkit:
            model.close()
    last = outputs[-1] if outputs else None
    if isinstance(last, RunOutput) and last.status.value == "ERROR":
        return f"run error: {' '.join(str(last.content).split())[:110]}"
    return answer(last.content if isinstance(last, RunOutput) else None)


# -- the cells -----------------------------------------------------------------------------------

#: framework -> (the module it needs, its runner, whether it has a model of its own to run "before").
FRAMEWORKS: dict[str, tuple[str, Callable[..., str], bool]] = {
    "pydantic-ai": ("pydantic_ai", run_pydantic_ai, True),
    "langchain": ("langchain.agents", partial(run_langchain, ask_again=False), False),
    "langchain AskAgainMiddleware": ("langchain.agents", partial(run_langchain, ask_again=True), False),
    "openai-agents": ("agents", run_openai_agents, True),
    "litellm": ("litellm", run_litellm, True),
    "smolagents": ("smolagents", run_smolagents, True),
    "agno": ("agno", run_agno, True),
}
READERS = {"smolagents": smolagents_results}
FINALS = {"smolagents": smolagents_final}
CELLS = [
    (framework, provider, scenario) for framework in FRAMEWORKS for provider in PROVIDERS for scenario in SCENARIOS
]


def run(framework: str, provider: str, scenario: str, streamkit: bool) -> Outcome:
    runner = partial(FRAMEWORKS[framework][1], streamkit=streamkit)
    final = FINALS[framework](provider) if framework in FINALS else None
    reader = READERS.get(framework, results)
    try:
        return measure(
            lambda server, provider, tools: runner(server, provider, tools), provider, scenario, reader, final
        )
    finally:
        if not streamkit:  # the HTTP clients some frameworks' own models leave open, collected here
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ResourceWarning)
                gc.collect()


#: Where no run without streamkit is measured, and why (LangChain's own ``ChatOpenAI`` and
#: ``ChatAnthropic`` are not among the test dependencies: no LangChain row has one).
NO_BEFORE = {
    # LiteLLM refuses the forced tool choice ToolCallingAgent sends for a model it does not know
    ("smolagents", "anthropic"): "LiteLLMModel refuses tool_choice='required' for this model",
}
#: Where a run with streamkit ends otherwise than ``AFTER`` (told in streamkit's words, then the
#: model's answer), measured: the framework's own words or rule. ``test_every_difference_...``
#: checks that none runs a bad call.
OWN: dict[tuple[str, str, str], Outcome] = {
    ("pydantic-ai", "openai_chat", "invalid_json"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"),
        ("invalid_json", "pydantic: string_type", "Unknown tool name: 'delete_everything'. Available tools: 'ge"),
        "answer 'Done.'",
        3,
    ),
    ("pydantic-ai", "openai_chat", "schema"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"), ("pydantic: missing,extra_forbidden",), "answer 'Done.'", 3
    ),
    ("pydantic-ai", "anthropic", "invalid_json"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"),
        ("invalid_json", "pydantic: string_type", "Unknown tool name: 'delete_everything'. Available tools: 'ge"),
        "answer 'Done.'",
        3,
    ),
    ("pydantic-ai", "anthropic", "schema"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"), ("pydantic: missing,extra_forbidden",), "answer 'Done.'", 3
    ),
    ("langchain", "openai_chat", "cut"): Outcome(
        (),
        (),
        "raised InvalidCallsError: the tool call write_file (call_A) was not run: your arguments were cut o",
        1,
    ),
    ("langchain", "openai_chat", "eof"): Outcome(
        (),
        (),
        "raised InvalidCallsError: the tool call get_stock (call_S) was not run: your arguments were cut of",
        1,
    ),
    ("langchain", "anthropic", "cut"): Outcome(
        (),
        (),
        "raised InvalidCallsError: the tool call get_weather (toolu_C) was not run: your arguments were cut",
        1,
    ),
    ("openai-agents", "openai_chat", "invalid_json"): Outcome(
        (), (), "raised ModelBehaviorError: Tool delete_everything not found in agent assistant", 1
    ),
    ("openai-agents", "anthropic", "invalid_json"): Outcome(
        (), (), "raised ModelBehaviorError: Tool delete_everything not found in agent assistant", 1
    ),
    ("smolagents", "openai_chat", "text"): Outcome(
        (), ("The model output does not contain any JSON blob.",), "answer 'Done.'", 2
    ),
    ("smolagents", "openai_chat", "cut"): Outcome(
        ("write_file(a.txt, Once upon a time.)",),
        ("the tool call write_file (call_A) was not run: your argument",),
        "answer 'Done.'",
        3,
    ),
    ("smolagents", "openai_chat", "whole_then_cut"): Outcome(
        ("get_stock(AAPL)", "get_stock(MSFT)"),
        ("the tool call get_stock (call_St0ck2) was not run: your argu",),
        "answer 'Done.'",
        3,
    ),
    ("smolagents", "openai_chat", "invalid_json"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"),
        ("the tool call get_weather (call_1) was not run: the argument",),
        "answer 'Done.'",
        3,
    ),
    ("smolagents", "openai_chat", "schema"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"),
        ('the tool call get_weather (call_W) was not run: "town" is no',),
        "answer 'Done.'",
        3,
    ),
    ("smolagents", "openai_chat", "eof"): Outcome(
        ("get_stock(AAPL)", "get_weather(Lima)"),
        ("the tool call get_stock (call_S) was not run: your arguments",),
        "answer 'Done.'",
        3,
    ),
    ("smolagents", "anthropic", "text"): Outcome(
        (), ("The model output does not contain any JSON blob.",), "answer 'Done.'", 2
    ),
    ("smolagents", "anthropic", "cut"): Outcome(
        ("get_weather(Paris)",), ("the tool call get_weather (toolu_C) was not run: your argume",), "answer 'Done.'", 3
    ),
    ("smolagents", "anthropic", "whole_then_cut"): Outcome(
        ("get_weather(Paris)", "write_file(notes.txt, Dear Paris.)"),
        ("the tool call write_file (toolu_B) was not run: your argumen",),
        "answer 'Done.'",
        3,
    ),
    ("smolagents", "anthropic", "invalid_json"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"),
        ("the tool call get_weather (toolu_01) was not run: the argume",),
        "answer 'Done.'",
        3,
    ),
    ("smolagents", "anthropic", "schema"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"),
        ('the tool call get_weather (toolu_W) was not run: "town" is n',),
        "answer 'Done.'",
        3,
    ),
    ("smolagents", "anthropic", "eof"): Outcome(
        ("get_stock(AAPL)", "get_weather(Lima)"),
        ("the tool call get_weather (toolu_W) was not run: your argume",),
        "answer 'Done.'",
        3,
    ),
    ("agno", "anthropic", "cut"): Outcome(("get_weather(Paris)",), ("truncated",), "answer 'Checking.Done.'", 3),
    ("agno", "anthropic", "invalid_json"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"),
        ("invalid_json", "schema", "unknown_tool"),
        "answer 'Checking Paris first.And the stock.Done.'",
        3,
    ),
}


def expected(framework: str, provider: str, scenario: str) -> Outcome:
    return OWN.get((framework, provider, scenario), AFTER[provider][scenario])


def before(framework: str, provider: str) -> bool:
    return FRAMEWORKS[framework][2] and (framework, provider) not in NO_BEFORE


def row(framework: str, provider: str, scenario: str, alone: Outcome | None) -> str:
    """The page's row: the framework alone (or why not), and with streamkit."""
    if alone is not None:
        without = describe(alone)
    else:
        without = f"— ({NO_BEFORE[framework, provider]})" if (framework, provider) in NO_BEFORE else "—"
    with_it = describe(expected(framework, provider, scenario))
    return f"| {framework} | {provider} | {scenario} | {without} | {with_it} |"


def table() -> str:
    """The table of docs/frameworks/scenarios.md, every "before" run now."""
    lines = ["| Framework | Provider | Scenario | Without streamkit | With streamkit |", "|---|---|---|---|---|"]
    for cell in CELLS:
        alone = run(*cell, False) if before(*cell[:2]) else None
        lines.append(row(*cell, alone))
    return "\n".join(lines) + "\n"


PAGE = ROOT / "docs" / "frameworks" / "scenarios.md"
IDS = ["-".join(cell).replace(" ", "-") for cell in CELLS]


@pytest.fixture(autouse=True)
def installed(request: pytest.FixtureRequest) -> None:
    cell = request.node.callspec.params.get("cell") if hasattr(request.node, "callspec") else None
    if cell is not None and importlib.util.find_spec(FRAMEWORKS[cell[0]][0].split(".")[0]) is None:
        pytest.skip(f"{cell[0]} is not installed")


@pytest.mark.parametrize("cell", CELLS, ids=IDS)
def test_with_streamkit_a_bad_call_never_runs_and_the_run_ends_told(cell: tuple[str, str, str]) -> None:
    """The valid calls run once, the bad ones never; the model is told of each (in streamkit's
    words, or the framework's own) and answers, or the run raises one error naming the call."""
    assert run(*cell, True) == expected(*cell)


@pytest.mark.parametrize("cell", CELLS, ids=IDS)
def test_the_page_shows_each_framework_alone_and_with_streamkit(cell: tuple[str, str, str]) -> None:
    alone = run(*cell, False) if before(*cell[:2]) else None
    assert row(*cell, alone) in PAGE.read_text(encoding="utf-8").splitlines()


def test_every_difference_runs_no_bad_call_and_ends_on_an_answer_or_an_error_naming_it() -> None:
    """Where a framework's own rule or words differ from streamkit's: no tool ran that ``AFTER``
    would not run, and the run either ran them all and answered, or raised naming a call."""
    for (framework, provider, scenario), outcome in OWN.items():
        meant = AFTER[provider][scenario]
        assert set(outcome.ran) <= set(meant.ran), (framework, provider, scenario)
        answered = outcome.ran == meant.ran and outcome.ended.startswith("answer ")
        named = re.match(r"raised \w+Error: (the tool call \w+ \(\w+\) was not run|Tool \w+ not found)", outcome.ended)
        assert answered or named, (framework, provider, scenario)


if __name__ == "__main__":
    sys.stdout.write(table())
