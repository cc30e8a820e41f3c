"""agno's own ``Agent`` over ``StreamkitModel``, against the loopback server.

On OpenAI Chat and Anthropic streams, with ``run`` and ``arun``, streamed and not: two calls at
one index (or none) each run once with their own arguments; a cut call, invalid JSON, a schema
failure or an unknown tool never runs, and the next request answers it with streamkit's error
while the valid calls of the same turn run; a plain turn ends the run. Skipped where agno is not
installed (the ``framework-tests`` extra installs it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from streamkit import Turn, UsageError
from streamkit.adapters._base import TRUNCATED_MESSAGE

from .agent_turns import CASES, PATHS, PLAIN, TWO_CHOICES, Case, calling, fixture, plain, sent, serve
from .helpers import events
from .server import LoopbackServer, Reply, Turns

agno = pytest.importorskip("agno")

from streamkit.integrations.agno import ERROR_KEY, TURN_KEY, StreamkitModel  # noqa: E402

from .models import OPENAI  # noqa: E402

pytestmark = pytest.mark.anyio
RESULTS = {"get_weather": "sunny in {city}", "get_stock": "{ticker}: 190", "read_file": "the text of {path}"}
MODES = pytest.mark.parametrize("mode", ["run", "run-stream", "arun", "arun-stream"])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # agno's async paths run on asyncio


def tools(ran: list[tuple[str, dict[str, Any]]]) -> list[Callable[..., str]]:
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(("get_weather", {"city": city}))
        return RESULTS["get_weather"].format(city=city)

    def get_stock(ticker: str) -> str:
        """A stock's price."""
        ran.append(("get_stock", {"ticker": ticker}))
        return RESULTS["get_stock"].format(ticker=ticker)

    def write_file(path: str, content: str) -> str:
        """Write a file."""
        ran.append(("write_file", {"path": path, "content": content}))
        return "written"

    def read_file(path: str) -> str:
        """Read a file."""
        ran.append(("read_file", {"path": path}))
        return RESULTS["read_file"].format(path=path)

    return [get_weather, get_stock, write_file, read_file]


async def run(model: StreamkitModel, ran: list[tuple[str, dict[str, Any]]], mode: str) -> str:
    """The agent's answer, run as ``mode`` says."""
    from agno.agent import Agent

    agent = Agent(model=model, tools=tools(ran), telemetry=False)
    prompt = "Weather in Paris, and AAPL?"
    if mode == "run":
        return str(agent.run(prompt).content)
    if mode == "arun":
        return str((await agent.arun(prompt)).content)
    if mode == "run-stream":
        events = list(agent.run(prompt, stream=True))
    else:
        events = [event async for event in agent.arun(prompt, stream=True)]
    return "".join(event.content for event in events if type(event).__name__ == "RunContentEvent" and event.content)


def answered(body: dict[str, Any], provider: str) -> dict[str, str]:
    """The tool results a request sends back, by call id."""
    if provider == "openai_chat":
        return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}
    blocks = [block for m in body["messages"] if m["role"] == "user" for block in m["content"]]
    return {block["tool_use_id"]: block["content"] for block in blocks if block["type"] == "tool_result"}


def text(case: Case) -> str:
    """The text of the case's first turn."""
    return Turn.from_events(events(case.first, case.provider), case.provider).text  # type: ignore[arg-type]


KINDS = {"truncated": TRUNCATED_MESSAGE}
CALLING = [name for name, case in CASES.items() if case.valid or case.invalid]
PLAIN_TURNS = [name for name, case in CASES.items() if not case.valid and not case.invalid]


@MODES
@pytest.mark.parametrize("name", CALLING)
async def test_the_valid_calls_run_and_each_invalid_one_is_answered_with_its_error(
    server: LoopbackServer, name: str, mode: str
) -> None:
    case = CASES[name]
    model = StreamkitModel(id="m", provider=case.provider, base_url=serve(server, case, plain(case.provider)))
    ran: list[tuple[str, dict[str, Any]]] = []
    assert await run(model, ran, mode) == text(case) + PLAIN  # agno joins the text of the run's turns
    assert sorted(ran, key=json.dumps) == sorted(((n, a) for _, n, a in case.valid), key=json.dumps)
    assert len(server.requests) == 2
    results = answered(sent(server, 1), case.provider)
    expected = {ident: RESULTS[tool].format(**arguments) for ident, tool, arguments in case.valid}
    assert {ident: results[ident] for ident in expected} == expected
    errors = {ident: json.loads(results[ident]) for ident, _, _ in case.invalid}
    assert set(results) == set(expected) | set(errors)
    for ident, _, kind in case.invalid:
        assert errors[ident]["ok"] is False
        assert [error["kind"] for error in errors[ident]["errors"]] == [kind]
        assert errors[ident]["errors"][0]["message"] == KINDS.get(kind, errors[ident]["errors"][0]["message"])
    await model.aclose()


@MODES
@pytest.mark.parametrize("name", PLAIN_TURNS)
async def test_a_plain_turn_is_the_answer(server: LoopbackServer, name: str, mode: str) -> None:
    case = CASES[name]
    model = StreamkitModel(id="m", provider=case.provider, base_url=serve(server, case))
    ran: list[tuple[str, dict[str, Any]]] = []
    assert (await run(model, ran, mode), ran, len(server.requests)) == (PLAIN, [], 1)
    await model.aclose()


@pytest.mark.parametrize("method", ["invoke", "ainvoke", "invoke_stream", "ainvoke_stream"])
async def test_a_response_of_two_choices_is_refused_not_cut_to_one(server: LoopbackServer, method: str) -> None:
    from agno.models.message import Message

    model = StreamkitModel(id="m", provider="openai_chat", base_url=serve(server, TWO_CHOICES), api_key="k")
    given = ([Message(role="user", content="?")], Message(role="assistant"))
    with pytest.raises(UsageError, match=r"^agno takes one answer per request, and the response holds choice 1: "):
        if method == "invoke":
            model.invoke(*given)
        elif method == "ainvoke":
            await model.ainvoke(*given)
        elif method == "invoke_stream":
            list(model.invoke_stream(*given))
        else:
            _ = [delta async for delta in model.ainvoke_stream(*given)]
    await model.aclose()


async def test_the_assistant_message_keeps_every_call_and_the_turn(server: LoopbackServer) -> None:
    from agno.models.message import Message

    case = CASES["anthropic-complete-then-cut"]
    model = StreamkitModel(id="m", provider="anthropic", base_url=serve(server, case))
    response = model.invoke([Message(role="user", content="?")], Message(role="assistant"))
    assert [(entry["id"], ERROR_KEY in entry) for entry in response.tool_calls] == [
        ("toolu_A", False),
        ("toolu_B", True),
    ]
    assert response.tool_calls[0]["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert response.tool_calls[1][ERROR_KEY] == {
        "ok": False,
        "errors": [{"kind": "truncated", "message": TRUNCATED_MESSAGE}],
    }
    assert response.provider_data is not None
    assert [item["type"] for item in response.provider_data[TURN_KEY]["items"]] == ["ToolCall", "InvalidToolCall"]
    model.close()


async def test_the_thinking_goes_back_with_its_signature(server: LoopbackServer) -> None:
    from agno.agent import Agent

    turns = [fixture("anthropic/thinking_then_call.sse"), calling("anthropic", "t2", "get_stock", {"ticker": "AAPL"})]
    server.routes = Turns(PATHS["anthropic"], *(Reply([turn]) for turn in [*turns, plain("anthropic")]))
    model = StreamkitModel(id="m", provider="anthropic", base_url=server.url(""), api_key="k")
    ran: list[tuple[str, dict[str, Any]]] = []
    agent = Agent(model=model, tools=tools(ran), telemetry=False)
    assert agent.run("Weather in Paris?").content == "Let me check." + PLAIN
    assert ran == [("get_weather", {"city": "Paris"}), ("get_stock", {"ticker": "AAPL"})]
    assistant = sent(server, 1)["messages"][1]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "The user wants the weather in Paris.",
        "signature": "EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w==",
    }
    assert assistant["content"][1]["type"] == "redacted_thinking"
    assert sent(server, 2)["messages"][1] == assistant  # kept across turns, as received
    model.close()


def test_bad_arguments_are_usage_errors() -> None:
    from agno.media import Image
    from agno.models.message import Message

    with pytest.raises(UsageError, match="provider='openai'"):
        StreamkitModel(id=OPENAI, provider="openai")
    with pytest.raises(UsageError, match="id, the provider's model name"):
        StreamkitModel(provider="openai_chat")
    model = StreamkitModel(id=OPENAI, provider="openai_chat", api_key="k")
    with pytest.raises(UsageError, match=r"messages\[0\] carries media"):
        model.invoke(
            [Message(role="user", content="?", images=[Image(url="http://x/y.png")])], Message(role="assistant")
        )
    with pytest.raises(UsageError, match="tool_choice='required'"):
        model.invoke([Message(role="user", content="?")], Message(role="assistant"), tool_choice="required")
