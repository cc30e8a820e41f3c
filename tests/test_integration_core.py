"""The core the integrations that send their own requests share: keys, base URLs and clients.

Keys and base URLs come from the variables each decoder declares, read by the one request
builder; a model keeps one HTTP client for its life (one connection for many requests) and
closes it even when cancelled.
"""

from __future__ import annotations

import asyncio
import gc
import json

import anyio
import httpx
import pytest

import streamkit
from streamkit import ArgumentIssue, CustomToolCall, InvalidToolCall, TokenUsage, ToolCall, Turn, UsageError
from streamkit._turn_types import StreamEvent
from streamkit.adapters._base import call_id
from streamkit.integrations._chat import User, build
from streamkit.integrations._clients import Clients
from streamkit.providers import FACTS

from .helpers import FIXTURES
from .server import LoopbackServer, Reply

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    ("provider", "environ", "header", "value", "url"),
    [
        ("anthropic", {"ANTHROPIC_API_KEY": "a1", "ANTHROPIC_BASE_URL": "http://gw/a"}, "x-api-key", "a1", "http://gw/a/v1/messages"),
        ("openai_chat", {"OPENAI_API_KEY": "o1"}, "Authorization", "Bearer o1", "https://api.openai.com/v1/chat/completions"),
        ("gemini", {"GOOGLE_API_KEY": "g2"}, "x-goog-api-key", "g2", "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse"),
        ("gemini", {"GEMINI_API_KEY": "g1", "GOOGLE_API_KEY": "g2"}, "x-goog-api-key", "g1", "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse"),
        ("mistral", {"MISTRAL_API_KEY": "m1", "MISTRAL_BASE_URL": "http://gw/v1/"}, "Authorization", "Bearer m1", "http://gw/v1/chat/completions"),
    ],
)  # fmt: skip
def test_keys_and_base_urls_come_from_the_declared_variables(
    provider: str, environ: dict[str, str], header: str, value: str, url: str
) -> None:
    request = build(provider, "m", [User("hi")], environ=environ)
    assert (request.url, request.headers.get(header)) == (url, value)


def test_a_given_key_and_base_url_win_over_the_environment() -> None:
    environ = {"OPENAI_API_KEY": "env", "OPENAI_BASE_URL": "http://env/v1"}
    request = build("openai_chat", "m", [User("hi")], api_key="given", base_url="http://given/v1", environ=environ)
    assert (request.url, request.headers["Authorization"]) == ("http://given/v1/chat/completions", "Bearer given")


def test_without_a_key_anywhere_only_the_always_sent_headers_go() -> None:
    assert build("anthropic", "m", [User("hi")], environ={}).headers == {"anthropic-version": "2023-06-01"}


@pytest.mark.parametrize("slug", sorted(slug for slug, facts in FACTS.items() if facts.auth_header))
def test_every_provider_that_takes_a_key_declares_where_it_is_read_from(slug: str) -> None:
    facts = FACTS[slug]
    assert facts.key_variables and facts.base_url_variable
    assert facts.key_from({facts.key_variables[-1]: "k"}) == "k"
    assert facts.key_from({name: "" for name in facts.key_variables}) is None  # empty is unset


def _text_reply() -> Reply:
    return Reply([(FIXTURES / "anthropic/text_only_crlf.sse").read_bytes()])


async def _send(clients: Clients, server: LoopbackServer) -> str:
    client: httpx.AsyncClient = clients.async_()
    async with client.stream("POST", server.url("/v1/messages"), json={}) as response:
        return (await response.aread()).decode()[:5]


async def test_one_client_and_one_connection_for_many_requests(server: LoopbackServer) -> None:
    server.routes["/v1/messages"] = _text_reply()
    clients = Clients()
    assert [await _send(clients, server) for _ in range(3)] == ["event"] * 3
    assert (len(server.requests), len(server.connections)) == (3, 1)
    await clients.aclose()
    assert server.connections[0].closed.wait(5)


async def test_closing_is_not_interrupted_by_a_cancellation(server: LoopbackServer) -> None:
    server.routes["/v1/messages"] = _text_reply()
    clients = Clients()
    await _send(clients, server)
    with anyio.CancelScope() as scope:
        scope.cancel()
        await clients.aclose()  # runs to its end inside a cancelled scope
    assert server.connections[0].closed.wait(5)


async def test_a_given_client_is_used_and_left_open(server: LoopbackServer) -> None:
    server.routes["/v1/messages"] = _text_reply()
    async with httpx.AsyncClient() as given:
        clients = Clients(async_=given)
        assert clients.async_() is given
        await clients.aclose()
        assert not given.is_closed


@pytest.mark.filterwarnings("ignore::ResourceWarning", "ignore::pytest.PytestUnraisableExceptionWarning")
def test_each_event_loop_gets_a_client_of_its_own(server: LoopbackServer) -> None:
    """Two ``asyncio.run``: the second does not reuse connections of a loop that has ended (the
    first loop's connection cannot be closed from the second: it is dropped, with a warning)."""
    server.routes["/v1/messages"] = _text_reply()
    clients = Clients()
    made = [asyncio.run(_made(clients, server, close=last)) for last in (False, True)]
    assert made[0] is not made[1]
    assert len(server.connections) == 2
    assert server.connections[1].closed.wait(5)
    del made
    gc.collect()  # the dropped connection's warning is raised here, not in a later test


async def _made(clients: Clients, server: LoopbackServer, *, close: bool) -> object:
    await _send(clients, server)
    made = clients.async_()
    if close:
        await clients.aclose()
    return made


def test_a_sync_client_is_kept_and_closed(server: LoopbackServer) -> None:
    server.routes["/v1/messages"] = _text_reply()
    clients = Clients()
    for _ in range(2):
        clients.sync().post(server.url("/v1/messages"), content=json.dumps({}))
    assert (len(server.requests), len(server.connections)) == (2, 1)
    clients.close()
    assert server.connections[0].closed.wait(5)


# -- the early runs of one scope ----------------------------------------------------------------


async def test_an_early_run_is_handed_only_to_the_call_that_started_it() -> None:
    from streamkit.integrations._early import EarlyRuns

    stopped: list[str] = []

    async def tool(result: str) -> str:
        try:
            await asyncio.sleep(0 if result == "Rome" else 10)
        except asyncio.CancelledError:
            stopped.append(result)
            raise
        return result

    runs: EarlyRuns[str] = EarlyRuns()
    runs.start("call_1", ("get_weather", {"city": "Paris"}), lambda: tool("Paris"))
    runs.start("call_1", ("get_weather", {"city": "Paris"}), lambda: tool("twice"))  # the same call: once
    runs.start("call_2", ("get_weather", {"city": "Oslo"}), lambda: tool("Oslo"))
    await asyncio.sleep(0)  # both begin
    assert runs.take("call_1", ("get_weather", {"city": "Berlin"})) is None  # an id reused for another call
    runs.start("call_2", ("get_weather", {"city": "Rome"}), lambda: tool("Rome"))  # replaces the other call's run
    task = runs.take("call_2", ("get_weather", {"city": "Rome"}))
    assert task is not None and await task == "Rome"
    assert runs.take("call_2", ("get_weather", {"city": "Rome"})) is None  # taken once
    assert sorted(stopped) == ["Oslo", "Paris"]


async def test_closing_the_scope_cancels_and_waits_for_what_was_not_taken() -> None:
    from streamkit.integrations._early import EarlyRuns

    ended: list[str] = []

    async def tool() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            ended.append("ended")

    runs: EarlyRuns[None] = EarlyRuns()
    runs.start("call_1", "a", tool)
    await asyncio.sleep(0)
    with anyio.CancelScope() as scope:
        scope.cancel()  # closing while the scope itself is being cancelled
        await runs.close()
    assert ended == ["ended"]


# -- the one tool reader ------------------------------------------------------------------------


def test_tools_in_any_format_streamkit_reads_are_offered_with_their_descriptions() -> None:
    from streamkit.integrations._chat import Tool, read_tools

    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    tools = [
        {"type": "function", "function": {"name": "a", "description": "A.", "parameters": schema}},
        {"name": "b", "description": "B.", "input_schema": schema},
        {"functionDeclarations": [{"name": "c", "parameters": {"type": "OBJECT"}}]},
        {"type": "function", "function": {"name": "d"}},
    ]
    assert read_tools(tools) == [
        Tool("a", "A.", schema),
        Tool("b", "B.", schema),
        Tool("c", "", {"type": "object"}),
        Tool("d", "", {"type": "object", "properties": {}}),
    ]


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ({"type": "web_search"}, r"^tools\[0\] is not a function tool, the only kind offered here"),
        ({"type": "bash_20250124", "name": "bash"}, r"^tools\[0\] is not a function tool"),
        ({"type": "function", "function": {"parameters": {}}}, r"^tools\[0\]\.function\.name must be a non-empty"),
    ],
)
def test_a_tool_that_cannot_be_offered_is_refused_by_position(tool: dict[str, object], message: str) -> None:
    from streamkit import UsageError
    from streamkit.integrations._chat import read_tools

    with pytest.raises(UsageError, match=message):
        read_tools([tool])


# -- the one turn reader ------------------------------------------------------------------------


def streamed(name: str, provider: str) -> list[StreamEvent]:
    with open(FIXTURES / name, "rb") as stream:
        return list(streamkit.iter_events(stream, provider))  # type: ignore[arg-type]  # a slug of the fixtures


def test_the_reader_gives_each_call_its_position_among_the_turns_calls() -> None:
    from streamkit.integrations._turns import Reader

    reader = Reader("anthropic", "a framework")
    positions = []
    for event in streamed("anthropic/invalid_calls_between_blocks.sse", "anthropic"):
        reader.feed(event)
        if isinstance(event, ToolCall | InvalidToolCall):
            positions.append((len(reader.calls) - 1, call_id(event), type(event).__name__))
    assert positions == [
        (0, "toolu_01", "InvalidToolCall"),
        (1, "toolu_02", "ToolCall"),
        (2, "toolu_03", "ToolCall"),
        (3, "toolu_04", "ToolCall"),
    ]
    done = reader.read()
    assert [call_id(call) for call in done.valid] == [call_id(call) for call in reader.valid]
    assert done.turn == Turn.from_events(reader.events, "anthropic")


@pytest.mark.parametrize("fed", ["events", "turn"])
def test_a_second_choice_is_refused_by_name_never_dropped(fed: str) -> None:
    from streamkit.integrations._turns import Reader, read

    refused = r"^a framework takes one answer per request, and the response holds choice 1: ask for one \(no n or "
    both = streamed("openai_chat/n2_same_call_id_per_choice.sse", "openai_chat")
    with pytest.raises(UsageError, match=refused):
        if fed == "events":
            reader = Reader("openai_chat", "a framework")
            for event in both:
                reader.feed(event)
        else:
            read(Turn.from_events(both, "openai_chat", choice=1), "a framework")


def test_a_custom_tools_call_is_refused_by_name() -> None:
    from streamkit.integrations._turns import Reader, read

    custom = CustomToolCall(0, "c", "run_sql", "SELECT 1")
    refused = r"^the model called 'run_sql' as a custom tool .* which a framework cannot run"
    with pytest.raises(UsageError, match=refused):
        Reader("openai_responses", "a framework").feed(custom)
    with pytest.raises(UsageError, match=refused):
        read(Turn("openai_responses", (custom,)), "a framework")


@pytest.mark.parametrize(
    ("tokens", "usage"),
    [
        (None, None),
        (TokenUsage(10, 4), (10, 4, 14, None, None)),
        (TokenUsage(10, 4, cache_read_tokens=6, reasoning_tokens=2), (10, 4, 14, 6, 2)),
        (TokenUsage(output_tokens=4), (0, 4, 4, None, None)),  # a count not sent is 0, never a usage dropped
    ],
)
def test_usage_is_reported_whenever_the_provider_sent_counts(
    tokens: TokenUsage | None, usage: tuple[int, ...] | None
) -> None:
    from streamkit.integrations._turns import usage_of

    counts = usage_of(tokens)
    shown = None if counts is None else (counts.input, counts.output, counts.total, counts.cache_read, counts.reasoning)
    assert shown == usage


def test_one_invalid_calls_error_for_both_frameworks() -> None:
    pytest.importorskip("smolagents")
    pytest.importorskip("langchain")
    from streamkit.integrations import langchain, smolagents
    from streamkit.integrations._invalid import InvalidCallsError

    assert langchain.InvalidCallsError is smolagents.InvalidCallsError is InvalidCallsError
    cut = InvalidToolCall(1, "t2", "write_file", '{"path": "a', (ArgumentIssue("truncated", "cut"),))
    valid = ToolCall(0, "t1", "get_weather", {"city": "Paris"})
    told = (
        "the tool call write_file (t2) was not run: your arguments were cut off by the output limit; send less per call"
    )
    step = InvalidCallsError([cut], [valid])
    assert str(step) == f"{told}; so the other calls of that turn were not run either: get_weather (t1). " + (
        "Send the calls again, each whole."
    )
    stopped = InvalidCallsError([cut], turns=3)
    assert str(stopped) == f"the model sent only invalid tool calls 3 turns in a row; the last turn's: {told}."
    assert (stopped.invalid, stopped.withheld, stopped.turns, step.turns) == ((cut,), (), 3, None)
