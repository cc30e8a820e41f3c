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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from streamkit._reemit import PENDING

from .helpers import FIXTURES, ROOT
from .models import ANTHROPIC, OPENAI
from .server import LoopbackServer, Reply, split_awkwardly

FRAMEWORKS = ("haystack", "autogen")
PROVIDERS = ("openai_chat", "anthropic")
SCENARIOS = ("text", "index_zero", "cut", "whole_then_cut", "invalid_json", "schema", "eof")
PATHS = {"openai_chat": "/v1/chat/completions", "anthropic": "/v1/messages"}
#: What the tools return: a tool result that is none of these is an error the model was told.
OUTPUTS = {"get_weather": "sunny", "get_stock": "190", "write_file": "written"}


# -- the model's turns, as the provider streams them -------------------------------------------


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 1, "model": OPENAI, "choices": [choice]}


def chat(text: str | None, calls: list[tuple[int, str, str, str]], finish: str | None) -> bytes:
    """An OpenAI Chat stream: ``text``, then each call ``(index, id, name, arguments)`` in two
    pieces, then ``finish`` and ``[DONE]`` (neither when ``finish`` is ``None``: the stream ends)."""
    chunks = [chat_chunk({"role": "assistant", "content": text})]
    for index, call_id, name, arguments in calls:
        head = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        half = len(arguments) // 2
        chunks.append(chat_chunk({"tool_calls": [head]}))
        pieces = (arguments[:half], arguments[half:])
        chunks += [chat_chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in pieces]
    out = b"".join(b"data: " + orjson.dumps(chunk) + b"\n\n" for chunk in chunks)
    return out if finish is None else out + b"data: " + orjson.dumps(chat_chunk({}, finish)) + b"\n\ndata: [DONE]\n\n"


def messages(text: str | None, calls: list[tuple[int, str, str, str]], stop: str | None) -> bytes:
    """An Anthropic Messages stream: a text block, then each call ``(index, id, name, input)``
    as a ``tool_use`` block at that index, then ``stop``. With ``stop`` ``None`` the stream ends
    inside the last block."""
    start: dict[str, Any] = {"id": "msg_t", "type": "message", "role": "assistant", "model": ANTHROPIC, "content": []}
    start |= {"stop_reason": None, "usage": {"input_tokens": 9, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    blocks: list[tuple[int, dict[str, Any], list[dict[str, Any]]]] = []
    if text is not None:
        blocks.append((0, {"type": "text", "text": ""}, [{"type": "text_delta", "text": text}]))
    for index, call_id, name, arguments in calls:
        half = len(arguments) // 2
        pieces = [{"type": "input_json_delta", "partial_json": p} for p in (arguments[:half], arguments[half:])]
        blocks.append((index, {"type": "tool_use", "id": call_id, "name": name, "input": {}}, pieces))
    for number, (index, block, deltas) in enumerate(blocks):
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        if stop is not None or number < len(blocks) - 1:
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    if stop is not None:
        delta = {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 12}}
        events += [("message_delta", delta), ("message_stop", {"type": "message_stop"})]
    return b"".join(f"event: {name}\ndata: ".encode() + orjson.dumps(data) + b"\n\n" for name, data in events)


def fixture(path: str) -> bytes:
    return (FIXTURES / path).read_bytes()


PARIS = '{"city": "Paris"}'
AAPL = '{"ticker": "AAPL"}'
#: Each scenario's first turn, per provider.
TURNS: dict[str, dict[str, Callable[[], bytes]]] = {
    "openai_chat": {
        "text": lambda: chat("Sunny in Paris.", [], "stop"),
        "index_zero": lambda: fixture("openai_chat/parallel_calls_all_index_zero.sse"),
        "cut": lambda: fixture("openai_chat/length_truncated.sse"),
        "whole_then_cut": lambda: fixture("openai_chat/length_after_a_followed_call.sse"),
        "invalid_json": lambda: fixture("openai_chat/invalid_calls_then_a_valid_one.sse"),
        "schema": lambda: chat(
            None, [(0, "call_S", "get_stock", AAPL), (1, "call_W", "get_weather", '{"town": 1}')], "tool_calls"
        ),
        "eof": lambda: chat(
            None, [(0, "call_S", "get_stock", AAPL), (1, "call_W", "get_weather", '{"city": "Li')], None
        ),
    },
    "anthropic": {
        "text": lambda: messages("Sunny in Paris.", [], "end_turn"),
        "index_zero": lambda: messages(
            None, [(0, "toolu_W", "get_weather", PARIS), (0, "toolu_S", "get_stock", AAPL)], "tool_use"
        ),
        "cut": lambda: fixture("anthropic/max_tokens_cut_after_a_whole_value.sse"),
        "whole_then_cut": lambda: fixture("anthropic/max_tokens_truncated.sse"),
        "invalid_json": lambda: fixture("anthropic/invalid_calls_between_blocks.sse"),
        "schema": lambda: messages(
            None, [(0, "toolu_S", "get_stock", AAPL), (1, "toolu_W", "get_weather", '{"town": 1}')], "tool_use"
        ),
        "eof": lambda: messages(
            None, [(0, "toolu_S", "get_stock", AAPL), (1, "toolu_W", "get_weather", '{"city": "Li')], None
        ),
    },
}
WHOLE = {
    "index_zero": [("get_weather", PARIS), ("get_stock", AAPL)],
    "cut": [("write_file", '{"path": "a.txt", "content": "Once upon a time."}')],
    "whole_then_cut": [("get_stock", '{"ticker": "MSFT"}')],
    "invalid_json": [("get_weather", PARIS)],
    "schema": [("get_weather", PARIS)],
    "eof": [("get_weather", '{"city": "Lima"}')],
}
#: What the model sends again, whole, when told of an error: the calls it meant (Anthropic's
#: fixtures cut other calls than OpenAI's).
FIXES = {
    # a Chat body that ends before its finish reason leaves both calls open: both are told as cut
    "openai_chat": WHOLE | {"eof": [("get_stock", AAPL), ("get_weather", '{"city": "Lima"}')]},
    "anthropic": WHOLE
    | {
        "cut": [("get_weather", PARIS)],
        "whole_then_cut": [("write_file", '{"path": "notes.txt", "content": "Dear Paris."}')],
    },
}


def fixed(provider: str, scenario: str) -> bytes:
    """The model's answer to results that hold an error: the calls again, whole."""
    calls = [(n, f"fix_{n}", name, arguments) for n, (name, arguments) in enumerate(FIXES[provider][scenario])]
    return chat(None, calls, "tool_calls") if provider == "openai_chat" else messages(None, calls, "tool_use")


#: The model's answer to results that hold none.
FINAL = {"openai_chat": chat("Done.", [], "stop"), "anthropic": messages("Done.", [], "end_turn")}


def results(provider: str, body: bytes) -> list[str]:
    """The tool results at the end of a request's history, each as its text."""
    history: list[dict[str, Any]] = orjson.loads(body)["messages"]
    if provider == "openai_chat":
        found = []
        for message in reversed(history):
            if message["role"] != "tool":
                break
            found.append(text_of(message["content"]))
        return found[::-1]
    last = history[-1]
    content = last["content"] if last["role"] == "user" and isinstance(last["content"], list) else []
    return [text_of(block.get("content", "")) for block in content if block.get("type") == "tool_result"]


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


class Model(dict[str, Reply]):
    """The server's one route: a model answering each request from what it was sent."""

    def __init__(self, server: LoopbackServer, provider: str, scenario: str) -> None:
        super().__init__({PATHS[provider]: Reply()})
        self.server, self.provider, self.scenario = server, provider, scenario

    def get(self, key: str, default: Reply | None = None) -> Reply | None:  # type: ignore[override]
        if key != PATHS[self.provider]:
            return default
        told = results(self.provider, self.server.requests[-1].body)  # recorded before it is routed
        if not told:
            body = TURNS[self.provider][self.scenario]()
        elif all(text in OUTPUTS.values() for text in told):
            body = FINAL[self.provider]
        else:
            body = fixed(self.provider, self.scenario)
        return Reply(split_awkwardly(body))


# -- what a run did ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One run: the tools run (sorted), what the model was told of bad calls, how it ended, the
    requests the server answered, and how many of them repeated an earlier one byte for byte
    (a turn sent again)."""

    ran: tuple[str, ...]
    told: tuple[str, ...]
    ended: str
    requests: int
    repeats: int = 0


def told_of(provider: str, server: LoopbackServer) -> tuple[str, ...]:
    """Each error result the later requests sent: streamkit's kinds, or the framework's words."""
    said = []
    for request in server.requests[1:]:
        for text in results(provider, request.body):
            if text in OUTPUTS.values() or text == PENDING:
                continue
            try:
                payload = orjson.loads(text)
            except orjson.JSONDecodeError:  # the framework's own words, on one line
                said.append(" ".join(text.split())[:60])
            else:
                said.append(",".join(issue["kind"] for issue in payload["errors"]))
    return tuple(said)


class Tools:
    """Real tools that record each call."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def get_weather(self, city: str) -> str:
        """The weather in a city."""
        self.ran.append(f"get_weather({city})")
        return OUTPUTS["get_weather"]

    def get_stock(self, ticker: str) -> str:
        """A stock's price."""
        self.ran.append(f"get_stock({ticker})")
        return OUTPUTS["get_stock"]

    def write_file(self, path: str, content: str) -> str:
        """Write a file."""
        self.ran.append(f"write_file({path}, {content})")
        return OUTPUTS["write_file"]

    def all(self) -> list[Callable[..., str]]:
        return [self.get_weather, self.get_stock, self.write_file]


PROMPT = "Weather in Paris, and the AAPL price?"


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


def cause_chain(error: BaseException) -> str:
    names: list[str] = []
    cause: BaseException | None = error.__cause__ or error.__context__
    while cause is not None and len(names) < 4:
        names.append(type(cause).__name__)
        cause = cause.__cause__ or cause.__context__
    return " < ".join(names) or str(error)[:80]


RUNNERS = {"haystack": run_haystack, "autogen": run_autogen}


def run(framework: str, provider: str, scenario: str, streamkit: bool) -> Outcome:
    server = LoopbackServer()
    try:
        server.routes = Model(server, provider, scenario)
        tools = Tools()
        ended = RUNNERS[framework](server, provider, tools, streamkit)
        bodies = [request.body for request in server.requests]
        repeats = len(bodies) - len(set(bodies))
        return Outcome(tuple(sorted(tools.ran)), told_of(provider, server), ended, len(bodies), repeats)
    finally:
        server.close()


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


def describe(outcome: Outcome) -> str:
    ran = ", ".join(f"`{call}`" for call in outcome.ran) or "nothing"
    told = ", ".join(f"“{text}”".replace("`", "'") for text in outcome.told)
    requests = f"{outcome.requests} request{'s' if outcome.requests != 1 else ''}"
    requests += f" ({outcome.repeats} repeated)" if outcome.repeats else ""
    parts = [f"ran {ran}", *([f"told {told}"] if told else []), outcome.ended, requests]
    return "; ".join(parts).replace("|", "\\|")


DONE = "answer 'Done.'"
BOTH = ("get_stock(AAPL)", "get_weather(Paris)")
#: With the transport, whatever the framework: each scenario's outcome per provider.
AFTER = {
    "openai_chat": {
        "text": Outcome((), (), "answer 'Sunny in Paris.'", 1),
        "index_zero": Outcome(BOTH, (), DONE, 2),
        "cut": Outcome(("write_file(a.txt, Once upon a time.)",), ("truncated",), DONE, 3),
        "whole_then_cut": Outcome(("get_stock(AAPL)", "get_stock(MSFT)"), ("truncated",), DONE, 3),
        "invalid_json": Outcome(BOTH, ("invalid_json", "schema", "unknown_tool"), DONE, 3),
        "schema": Outcome(BOTH, ("schema,schema",), DONE, 3),
        "eof": Outcome(("get_stock(AAPL)", "get_weather(Lima)"), ("truncated", "truncated"), DONE, 3),
    },
}
AFTER["anthropic"] = AFTER["openai_chat"] | {
    "cut": Outcome(("get_weather(Paris)",), ("truncated",), DONE, 3),
    "whole_then_cut": Outcome(("get_weather(Paris)", "write_file(notes.txt, Dear Paris.)"), ("truncated",), DONE, 3),
    "eof": Outcome(("get_stock(AAPL)", "get_weather(Lima)"), ("truncated",), DONE, 3),
}
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
