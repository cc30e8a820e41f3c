"""``streamkit.integrations.boto3`` under a real boto3 client, against the loopback server.

Each test sends ``converse_stream`` with a ``bedrock-runtime`` client (fake credentials, the
loopback server as its ``endpoint_url``) that answers with a recorded ConverseStream body from
``fixtures/bedrock``; botocore parses the event stream itself, and the test reads what the
installed hook gives the caller: every event as botocore parsed it, each valid call whole, each
invalid one left out. ``read`` is a caller that joins a call's input fragments and parses them
at the block's stop, as Strands Agents and pydantic-ai's Bedrock model do.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from streamkit import IncompleteStreamError, InvalidToolCall, ProviderProtocolError, ToolCall, UsageError, collect_turn

from .helpers import FIXTURES
from .server import LoopbackServer, Reply, Turns

boto3 = pytest.importorskip("boto3")
from botocore.exceptions import EventStreamError, ResponseStreamingError  # noqa: E402

from streamkit._reemit import Options  # noqa: E402
from streamkit.integrations.boto3 import ToolCallStream, install, invalid_calls, uninstall  # noqa: E402

PATH = "/model/test-model/converse-stream"
MESSAGES = [{"role": "user", "content": [{"text": "Weather in Paris, and AAPL?"}]}]

Events = list[dict[str, Any]]


Clients = Callable[[], Any]


def bedrock_client(server: LoopbackServer) -> Any:
    """A ``bedrock-runtime`` client of the loopback server, with fake credentials."""
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=server.url(""),
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


@pytest.fixture
def clients(server: LoopbackServer) -> Iterator[Clients]:
    """Makes ``bedrock-runtime`` clients of the loopback server (fake credentials), closed after the test."""
    made: list[Any] = []

    def make() -> Any:
        made.append(bedrock_client(server))
        return made[-1]

    yield make
    for client in made:
        client.close()


@dataclass
class Bedrock:
    """The loopback server as Bedrock, and a client with the hook installed."""

    server: LoopbackServer
    clients: Clients
    client: Any

    def converse(self, name: str, pieces: int | None = None) -> tuple[Events, dict[str, Any]]:
        """The events the caller reads for the recorded body ``name`` (in writes of ``pieces`` bytes)."""
        data = (FIXTURES / "bedrock" / f"{name}.bin").read_bytes()
        writes = [data] if pieces is None else [data[i : i + pieces] for i in range(0, len(data), pieces)]
        self.server.routes[PATH] = Reply(writes, content_type="application/vnd.amazon.eventstream")
        response = self.client.converse_stream(modelId="test-model", messages=MESSAGES)
        return list(response["stream"]), response

    def botocore_events(self, name: str) -> Events:
        """What botocore alone gives for the same body."""
        self.server.routes[PATH] = Reply([(FIXTURES / "bedrock" / f"{name}.bin").read_bytes()])
        return list(self.clients().converse_stream(modelId="test-model", messages=MESSAGES)["stream"])


def installed(server: LoopbackServer, clients: Clients, **options: Any) -> Bedrock:
    client = clients()
    install(client, **options)
    return Bedrock(server, clients, client)


@pytest.fixture
def bedrock(server: LoopbackServer, clients: Clients) -> Bedrock:
    return installed(server, clients)


@dataclass
class Read:
    calls: list[tuple[str, str, Any]] = field(default_factory=list)
    text: str = ""
    stop: str | None = None


def read(events: Events) -> Read:
    """What a caller that parses each call's joined input at its block's stop makes of ``events``."""
    out = Read()
    open_calls: dict[int, tuple[dict[str, Any], list[str]]] = {}
    for event in events:
        ((kind, body),) = event.items()
        index = body.get("contentBlockIndex")
        if kind == "contentBlockStart" and "toolUse" in body["start"]:
            open_calls[index] = (body["start"]["toolUse"], [])
        elif kind == "contentBlockDelta" and "toolUse" in body["delta"]:
            open_calls[index][1].append(body["delta"]["toolUse"]["input"])
        elif kind == "contentBlockDelta" and "text" in body["delta"]:
            out.text += body["delta"]["text"]
        elif kind == "contentBlockStop" and index in open_calls:
            tool, pieces = open_calls.pop(index)
            out.calls.append((tool["toolUseId"], tool["name"], json.loads("".join(pieces))))
        elif kind == "messageStop":
            out.stop = body["stopReason"]
    assert open_calls == {}, "a call was given without its stop"
    return out


def shape(events: Events) -> list[tuple[str, int | None]]:
    return [(kind, body.get("contentBlockIndex")) for event in events for kind, body in event.items()]


def outside_calls(events: Events, indexes: set[int]) -> Events:
    return [event for event in events if next(iter(event.values())).get("contentBlockIndex") not in indexes]


@pytest.mark.parametrize("pieces", [None, 1, 7], ids=["whole", "one byte a write", "7 bytes a write"])
def test_two_parallel_calls_each_come_once_whole_at_their_stop(bedrock: Bedrock, pieces: int | None) -> None:
    events, response = bedrock.converse("text_then_two_calls", pieces)
    assert shape(events) == [
        ("messageStart", None),
        *[("contentBlockDelta", 0)] * 2,
        ("contentBlockStop", 0),
        *[("contentBlockStart", 1), ("contentBlockDelta", 1), ("contentBlockStop", 1)],
        *[("contentBlockStart", 2), ("contentBlockDelta", 2), ("contentBlockStop", 2)],
        ("messageStop", None),
        ("metadata", None),
    ]
    assert events[5] == {
        "contentBlockDelta": {
            "delta": {"toolUse": {"input": '{"city":"Paris","unit":"celsius"}'}},
            "contentBlockIndex": 1,
        }
    }
    assert read(events) == Read(
        calls=[
            ("tooluse_wX3kQ9aRTcW1", "get_weather", {"city": "Paris", "unit": "celsius"}),
            ("tooluse_Bq7m2LpZSe0v", "get_stock", {"ticker": "AAPL"}),
        ],
        text="Checking both. One moment.",
        stop="tool_use",
    )
    original = bedrock.botocore_events("text_then_two_calls")
    assert outside_calls(events, {1, 2}) == outside_calls(original, {1, 2})  # the rest as botocore parsed it
    starts = [event for event in original if "contentBlockStart" in event]
    assert [event for event in events if "contentBlockStart" in event] == starts
    assert invalid_calls(response) == []


def test_a_call_cut_by_max_tokens_is_left_out_and_the_stop_reason_kept(bedrock: Bedrock) -> None:
    events, response = bedrock.converse("max_tokens_truncated")
    assert read(events) == Read(calls=[("tooluse_Tr0000000001", "get_weather", {"city": "Oslo"})], stop="max_tokens")
    assert 1 not in {index for _, index in shape(events)}
    [cut] = invalid_calls(response)
    assert (cut.id, cut.name, cut.raw, cut.truncated) == (
        "tooluse_Tr0000000002",
        "write_report",
        '{"title": "Weather", "body": "Oslo is',
        True,
    )


def test_invalid_json_is_left_out_and_reported_and_the_valid_call_comes(
    server: LoopbackServer, clients: Clients
) -> None:
    seen: list[ToolCall | InvalidToolCall] = []
    events, response = installed(server, clients, on_call=seen.append).converse("invalid_json_then_a_valid_call")
    assert read(events) == Read(calls=[("tooluse_Good00000002", "get_stock", {"ticker": "AAPL"})], stop="tool_use")
    assert [(call.name, type(call).__name__) for call in seen] == [
        ("get_weather", "InvalidToolCall"),
        ("get_stock", "ToolCall"),
    ]
    [bad] = invalid_calls(response)
    assert (bad.raw, [(issue.kind, issue.position) for issue in bad.errors]) == (
        '{"city": "Paris",}',
        [("invalid_json", 16)],
    )


def test_a_call_failing_its_schema_is_left_out(server: LoopbackServer, clients: Clients) -> None:
    weather = {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["fahrenheit"]}}}
    tools = [
        {"toolSpec": {"name": "get_weather", "inputSchema": {"json": weather}}},
        {"toolSpec": {"name": "get_stock", "inputSchema": {"json": {"type": "object"}}}},
    ]
    events, response = installed(server, clients, tools=tools).converse("text_then_two_calls")
    assert read(events).calls == [("tooluse_Bq7m2LpZSe0v", "get_stock", {"ticker": "AAPL"})]
    [bad] = invalid_calls(response)
    assert [(issue.kind, issue.path) for issue in bad.errors] == [("schema", "$.unit")]


def test_a_plain_turn_is_what_botocore_gives(bedrock: Bedrock) -> None:
    events, response = bedrock.converse("text_only")
    assert events == bedrock.botocore_events("text_only")
    assert read(events) == Read(text="It is sunny in Paris.", stop="end_turn")
    assert invalid_calls(response) == []


def test_redacted_reasoning_then_a_call_passes_through_as_botocore_parsed_it(bedrock: Bedrock) -> None:
    """An OpenAI model on Bedrock: its redacted reasoning (bytes, as botocore decodes the blob) goes
    through untouched, and its call comes whole, as botocore's own parse gives it."""
    events, response = bedrock.converse("redacted_reasoning_then_tool_use")
    original = bedrock.botocore_events("redacted_reasoning_then_tool_use")
    [redacted] = [
        event for event in original if "reasoningContent" in event.get("contentBlockDelta", {}).get("delta", {})
    ]
    assert isinstance(redacted["contentBlockDelta"]["delta"]["reasoningContent"]["redactedContent"], bytes)
    assert outside_calls(events, {1}) == outside_calls(original, {1})
    assert read(events) == Read(calls=[("call_9f2c41d07be3", "get_weather", {"city": "Oslo"})], stop="tool_use")
    assert read(original) == read(events)
    assert invalid_calls(response) == []


def test_botocores_events_make_the_turn_the_wire_makes(bedrock: Bedrock) -> None:
    """The same turn from botocore's parsed events (a blob as bytes) as from the bytes on the wire
    (the blob as base64 text): ``RedactedThinking`` holds the base64 text either way."""
    name = "redacted_reasoning_then_tool_use"
    parsed = collect_turn(bedrock.botocore_events(name), "bedrock")
    wire = collect_turn([(FIXTURES / "bedrock" / f"{name}.bin").read_bytes()], "bedrock")
    assert parsed.items == wire.items
    assert [type(item).__name__ for item in wire.items] == ["RedactedThinking", "ToolCall"]


def test_a_stream_cut_mid_call_gives_the_calls_before_then_fails_as_a_dropped_read(bedrock: Bedrock) -> None:
    data = (FIXTURES / "bedrock" / "cut_mid_message.bin").read_bytes()
    bedrock.server.routes[PATH] = Reply([data])
    response = bedrock.client.converse_stream(modelId="test-model", messages=MESSAGES)
    events: Events = []
    with pytest.raises(ResponseStreamingError) as info:
        events.extend(response["stream"])
    assert isinstance(info.value.__cause__, IncompleteStreamError)
    assert read(events).calls == [("tooluse_Cut000000001", "get_weather", {"city": "Rome"})]
    assert [(call.name, call.truncated) for call in invalid_calls(response)] == [("get_stock", True)]


def test_a_provider_exception_is_botocores_after_the_calls_before_it(bedrock: Bedrock) -> None:
    data = (FIXTURES / "bedrock" / "error_midstream.bin").read_bytes()
    bedrock.server.routes[PATH] = Reply([data])
    response = bedrock.client.converse_stream(modelId="test-model", messages=MESSAGES)
    events: Events = []
    with pytest.raises(EventStreamError, match="throttlingException"):
        events.extend(response["stream"])
    assert read(events).calls == [("tooluse_Er0000000001", "get_weather", {"city": "Lima"})]


def test_a_provider_exception_inside_a_call_reports_that_call_as_cut(server: LoopbackServer, clients: Clients) -> None:
    seen: list[ToolCall | InvalidToolCall] = []
    bedrock = installed(server, clients, on_call=seen.append)
    bedrock.server.routes[PATH] = Reply([(FIXTURES / "bedrock" / "error_midstream.bin").read_bytes()])
    response = bedrock.client.converse_stream(modelId="test-model", messages=MESSAGES)
    with pytest.raises(EventStreamError, match="throttlingException"):
        list(response["stream"])
    assert [(type(call).__name__, call.name) for call in seen] == [
        ("ToolCall", "get_weather"),
        ("InvalidToolCall", "get_stock"),
    ]
    [cut] = invalid_calls(response)
    assert (cut is seen[1], cut.id, cut.raw, cut.truncated) == (True, "tooluse_Er0000000002", '{"ticker": "AA', True)


def test_install_takes_a_bedrock_runtime_client_and_uninstall_undoes_it(
    server: LoopbackServer, clients: Clients
) -> None:
    other = boto3.client("s3", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
    with pytest.raises(UsageError, match=r"a boto3 'bedrock-runtime' client, got S3 \(s3\)"):
        install(other)
    other.close()
    with pytest.raises(UsageError, match="on_call must be callable"):
        install(clients(), on_call="print")  # type: ignore[arg-type]
    client = clients()
    install(client)
    install(client)  # again: one hook, the new options
    server.routes[PATH] = Reply([(FIXTURES / "bedrock" / "text_only.bin").read_bytes()])
    stream = client.converse_stream(modelId="test-model", messages=MESSAGES)["stream"]
    assert isinstance(stream, ToolCallStream)
    stream.close()
    uninstall(client)
    response = client.converse_stream(modelId="test-model", messages=MESSAGES)
    assert not isinstance(response["stream"], ToolCallStream)
    response["stream"].close()
    with pytest.raises(UsageError, match="call install"):
        invalid_calls(response)


def test_closing_the_stream_closes_botocores(bedrock: Bedrock) -> None:
    head = (FIXTURES / "bedrock" / "text_then_two_calls.bin").read_bytes()
    bedrock.server.routes[PATH] = Reply([head], endless=lambda number: b"\0" * 64)
    stream = bedrock.client.converse_stream(modelId="test-model", messages=MESSAGES)["stream"]
    assert next(stream) == {"messageStart": {"role": "assistant"}}
    stream.close()
    assert bedrock.server.connections[0].closed.wait(5)


@pytest.mark.parametrize(
    ("first", "ran"),
    [
        ("text_then_two_calls", [("get_weather", "Paris"), ("get_stock", "AAPL")]),
        ("max_tokens_truncated", [("get_weather", "Oslo")]),
        ("invalid_json_then_a_valid_call", [("get_stock", "AAPL")]),
    ],
)
def test_pydantic_ais_bedrock_model_runs_only_the_whole_calls(
    server: LoopbackServer, clients: Clients, first: str, ran: list[tuple[str, str]]
) -> None:
    """pydantic-ai's ``BedrockConverseModel`` reads ``converse_stream`` as Strands does: under the
    hook, a cut or invalid call never reaches its history, so it neither runs nor is answered."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.models.bedrock import BedrockConverseModel
    from pydantic_ai.providers.bedrock import BedrockProvider

    turns = [(FIXTURES / "bedrock" / f"{name}.bin").read_bytes() for name in (first, "text_only")]
    server.routes = Turns(PATH, Reply([turns[0]]), Reply([turns[1]]))
    client = clients()
    install(client)
    agent: Agent[None, str] = Agent(BedrockConverseModel("test-model", provider=BedrockProvider(bedrock_client=client)))
    done: list[tuple[str, str]] = []

    @agent.tool_plain
    def get_weather(city: str, unit: str = "c") -> str:
        done.append(("get_weather", city))
        return "sunny"

    @agent.tool_plain
    def get_stock(ticker: str) -> str:
        done.append(("get_stock", ticker))
        return "190"

    @agent.tool_plain
    def write_report(title: str, body: str) -> str:
        done.append(("write_report", title))
        return "written"

    async def drain(context: Any, events: Any) -> None:
        async for _ in events:
            pass

    # run_sync runs on the thread's current loop, making one it never closes when there is none:
    # give it one and close it, or its unclosed-loop warning fails whichever test collects it.
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        assert agent.run_sync("Go", event_stream_handler=drain).output == "It is sunny in Paris."
    finally:
        asyncio.set_event_loop(None)
        loop.close()
    # pydantic-ai runs a turn's tools at once, on threads: each runs once, finishing in any order;
    # the calls' order is the history's, asserted below
    assert sorted(done) == sorted(ran)
    sent = json.loads(server.requests[1].body)["messages"]
    uses = [block["toolUse"]["name"] for block in sent[1]["content"] if "toolUse" in block]
    results = [block["toolResult"]["status"] for block in sent[2]["content"]]
    assert (uses, results) == ([name for name, _ in ran], ["success"] * len(ran))


def test_an_event_the_decoder_refuses_fails_the_stream_after_what_came_before() -> None:
    options = Options(None, None, None, None, asynchronous=False)
    stream = ToolCallStream([{"messageStart": {"role": "assistant"}}, {"a": {}, "b": {}}], options)
    assert next(stream) == {"messageStart": {"role": "assistant"}}
    with pytest.raises(ResponseStreamingError, match=r"one key, the event type; got keys \['a', 'b'\]") as info:
        next(stream)
    assert isinstance(info.value.__cause__, ProviderProtocolError)


def test_a_call_cut_after_its_block_stop_is_left_out_with_its_block() -> None:
    """The stop reason that says the output limit cut the call comes after its ``contentBlockStop``."""
    options = Options(None, None, None, None, asynchronous=False)
    given: Events = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a": "b'}}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "max_tokens"}},
        {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}}},
    ]
    stream = ToolCallStream(given, options)
    assert list(stream) == [given[0], *given[4:]]
    [cut] = stream.invalid_calls
    assert (cut.id, cut.raw, cut.truncated) == ("t1", '{"a": "b', True)
