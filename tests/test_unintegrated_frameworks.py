"""The transports under agent frameworks streamkit does not integrate: Haystack and AutoGen.

Each framework's own agent loop runs real Python tools against the loopback server, whose
``Model`` answers like a model would: the scenario's turn first, then a whole corrected call
when the last results hold an error, then a text answer. Each cell runs twice: with the SDK's
plain HTTP client ("before") and with streamkit's transport under it ("after"), and asserts
which tools ran with which arguments, what the later requests told the model, how the run
ended and how many requests reached the server. ``python -m tests.test_unintegrated_frameworks``
prints the table of docs/frameworks/other.md from the same runs.

Skipped where the frameworks are not installed (the ``unintegrated-tests`` extra installs them).
"""

from __future__ import annotations

import asyncio
import sys
from functools import partial
from typing import Any

import pytest

from .helpers import ROOT
from .models import ANTHROPIC, OPENAI
from .server import LoopbackServer
from .standin import AFTER, PROMPT, PROVIDERS, SCENARIOS, Outcome, Tools, cause_chain, describe, measure

FRAMEWORKS = ("haystack", "autogen")


def run_haystack(server: LoopbackServer, provider: str, tools: Tools, streamkit: bool) -> str:
    """Haystack's Agent, streaming; OpenAI Chat on an httpx client, Anthropic on an httpx2 one."""
    from haystack.components.agents import Agent
    from haystack.dataclasses import ChatMessage
    from haystack.tools.from_function import create_tool_from_function
    from haystack.utils import Secret

    generator: Any
    if provider == "openai_chat":
        from haystack.components.generators.chat import OpenAIChatGenerator

        from streamkit.integrations.httpx import Transport

        http = {"transport": Transport()} if streamkit else {"timeout": 30}
        generator = OpenAIChatGenerator(
            api_key=Secret.from_token("sk-test"),
            model=OPENAI,
            api_base_url=server.url("/v1"),
            max_retries=0,
            http_client_kwargs=http,
        )
    else:
        import anthropic
        import httpx2
        from haystack_integrations.components.generators.anthropic import AnthropicChatGenerator

        from streamkit.integrations.httpx2 import Transport as Transport2

        generator = AnthropicChatGenerator(api_key=Secret.from_token("sk-ant-test"), model=ANTHROPIC)
        client = httpx2.Client(transport=Transport2()) if streamkit else httpx2.Client()
        generator.client = anthropic.Anthropic(
            base_url=server.url(""), api_key="sk-ant-test", max_retries=0, http_client=client
        )
    agent = Agent(
        chat_generator=generator,
        tools=[create_tool_from_function(tool) for tool in tools.all()],
        streaming_callback=lambda chunk: None,
        max_agent_steps=8,
    )
    agent.warm_up()
    try:
        reply = agent.run(messages=[ChatMessage.from_user(PROMPT)])["last_message"]
    except Exception as error:
        return f"raised {type(error).__name__}: {cause_chain(error)}"
    finally:
        generator.close()  # the SDK's client, and the HTTP client under it
    return f"answer {reply.text!r}" if reply.text else "ended without an answer"


def run_autogen(server: LoopbackServer, provider: str, tools: Tools, streamkit: bool) -> str:
    """AutoGen's AssistantAgent, streaming, OpenAI Chat on an httpx2 async client (its Anthropic
    client fails before any request under anthropic 2.x: see ``CELLS``)."""
    import httpx2
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.messages import TextMessage
    from autogen_core.models import ModelInfo
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    from streamkit.integrations.httpx2 import AsyncTransport

    info: ModelInfo = {
        "vision": False,
        "function_calling": True,
        "json_output": True,
        "family": "unknown",
        "structured_output": True,
    }

    async def main() -> str:
        http = httpx2.AsyncClient(transport=AsyncTransport()) if streamkit else httpx2.AsyncClient()
        sdk: dict[str, Any] = {"api_key": "sk-test", "base_url": server.url("/v1"), "http_client": http}
        client = OpenAIChatCompletionClient(model=OPENAI, max_retries=0, model_info=info, **sdk)
        agent = AssistantAgent(
            "agent", model_client=client, tools=[*tools.all()], model_client_stream=True, max_tool_iterations=8
        )
        try:
            result = await agent.run(task=PROMPT)
        except Exception as error:
            return f"raised {type(error).__name__}: {cause_chain(error)}"
        finally:
            await client.close()
            await http.aclose()
        last = result.messages[-1]
        return f"answer {last.content!r}" if isinstance(last, TextMessage) else f"ended on {type(last).__name__}"

    return asyncio.run(main())


RUNNERS = {"haystack": run_haystack, "autogen": run_autogen}


def run(framework: str, provider: str, scenario: str, streamkit: bool) -> Outcome:
    runner = partial(RUNNERS[framework], streamkit=streamkit)
    return measure(lambda server, provider, tools: runner(server, provider, tools), provider, scenario)


#: The cells run: AutoGen's Anthropic client (autogen-ext 0.7.5) passes ``temperature``, which
#: the anthropic 2.x SDK no longer takes, so it fails before any request, with or without streamkit.
CELLS = [
    (framework, provider, scenario)
    for framework in FRAMEWORKS
    for provider in PROVIDERS
    for scenario in SCENARIOS
    if (framework, provider) != ("autogen", "anthropic")
]


def table(outcomes: dict[tuple[str, str, str, bool], Outcome]) -> str:
    """The before/after table of docs/frameworks/other.md."""
    lines = ["| Framework | Provider | Scenario | Without streamkit | With the transport |", "|---|---|---|---|---|"]
    for framework, provider, scenario in CELLS:
        before, after = (outcomes[framework, provider, scenario, streamkit] for streamkit in (False, True))
        lines.append(f"| {framework} | {provider} | {scenario} | {describe(before)} | {describe(after)} |")
    return "\n".join(lines) + "\n"


PAGE = ROOT / "docs" / "frameworks" / "other.md"


@pytest.fixture(autouse=True)
def frameworks(request: pytest.FixtureRequest) -> None:
    framework, provider = request.node.callspec.params["cell"][:2]
    pytest.importorskip({"haystack": "haystack", "autogen": "autogen_agentchat"}[framework])
    if framework == "haystack" and provider == "anthropic":
        pytest.importorskip("haystack_integrations.components.generators.anthropic")


@pytest.mark.parametrize("cell", CELLS, ids=["-".join(cell) for cell in CELLS])
def test_with_the_transport_a_bad_call_never_runs_and_the_model_is_told(cell: tuple[str, str, str]) -> None:
    """The same outcome under each framework: the valid calls run once, the bad ones never, each
    told in streamkit's words by the request the transport sends again, and the run ends on the
    model's answer (a body that ends inside a call too: its open calls are told as cut)."""
    framework, provider, scenario = cell
    assert run(framework, provider, scenario, True) == AFTER[provider][scenario]


@pytest.mark.parametrize("cell", CELLS, ids=["-".join(cell) for cell in CELLS])
def test_the_page_shows_what_each_framework_does_alone(cell: tuple[str, str, str]) -> None:
    """The page's row is measured: the framework alone, beside the transport's outcome."""
    framework, provider, scenario = cell
    before = run(framework, provider, scenario, False)
    row = f"| {framework} | {provider} | {scenario} | {describe(before)} | {describe(AFTER[provider][scenario])} |"
    assert row in PAGE.read_text(encoding="utf-8").splitlines()


if __name__ == "__main__":
    measured = {(*key, streamkit): run(*key, streamkit) for key in CELLS for streamkit in (False, True)}
    sys.stdout.write(table(measured))
