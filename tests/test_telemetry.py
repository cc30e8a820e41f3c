"""OpenTelemetry: the spans, events and measurements a stream and its tools record, read back from
the SDK's in-memory exporters with the attribute names and values exactly; and nothing at all,
not even an import, while telemetry is off."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import streamkit
from streamkit import IncompleteStreamError, _observe, telemetry

from .helpers import FIXTURES, Clock
from .models import ANTHROPIC
from .server import LoopbackServer, Reply, Turns


class Recorded:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        self.reader = InMemoryMetricReader()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def histograms(self) -> dict[str, list[tuple[dict[str, Any], int, float]]]:
        """Each histogram by name: (attributes, count, sum) of each of its points."""
        out: dict[str, list[tuple[dict[str, Any], int, float]]] = {}
        data = self.reader.get_metrics_data()
        assert data is not None
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out[metric.name] = [
                        (dict(point.attributes or {}), point.count, round(point.sum, 9))  # type: ignore[union-attr]
                        for point in metric.data.data_points
                    ]
        return out


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    out = Recorded()
    telemetry.enable(out.tracer_provider, out.meter_provider)
    try:
        yield out
    finally:
        telemetry.disable()


BASE = 1_000_000_000  # the clock, in ns, when a test's stream is made
MS = 1_000_000


@pytest.fixture
def clock(clock: Clock) -> Clock:
    clock.now = BASE
    return clock


def by_line(name: str, clock: Clock) -> Iterator[bytes]:
    """The fixture's lines, the clock at line number * 1 ms while each is read."""
    for number, line in enumerate((FIXTURES / name).read_bytes().splitlines(keepends=True), 1):
        clock.now = BASE + number * MS
        yield line


def test_a_stream_is_one_client_span_with_the_genai_attributes(recorded: Recorded, clock: Clock) -> None:
    calls = list(streamkit.iter_tool_calls(by_line("anthropic/text_then_two_calls.sse", clock), "anthropic"))
    assert [call.id for call in calls] == ["toolu_A", "toolu_B"]
    [span] = recorded.finished()
    assert span.name == "chat"
    assert span.kind is SpanKind.CLIENT
    assert span.start_time == BASE  # the clock when the iterator was made
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.stream": True,
        "streamkit.provider": "anthropic",
        "gen_ai.response.time_to_first_chunk": 0.001,  # the first line, 1 ms in
        "gen_ai.response.finish_reasons": ("tool_use",),
        "streamkit.finish": "tool_calls",
        "gen_ai.usage.input_tokens": 377,
        "gen_ai.usage.output_tokens": 65,
    }
    assert span.status.status_code is StatusCode.UNSET


def test_each_call_is_an_event_at_its_end_marker_with_its_times(recorded: Recorded, clock: Clock) -> None:
    list(streamkit.iter_tool_calls(by_line("anthropic/text_then_two_calls.sse", clock), "anthropic"))
    [span] = recorded.finished()
    events = [(event.name, event.timestamp, dict(event.attributes or {})) for event in span.events]
    assert events == [call_event(1, "toolu_A", "get_weather", 21, 36), call_event(2, "toolu_B", "get_stock", 39, 48)]


def call_event(index: int, call_id: str, name: str, opened: int, ended: int) -> tuple[str, int, dict[str, Any]]:
    """A valid call's event: opened and ended at those lines of the fixture, delivered at once."""
    return (
        "streamkit.tool_call",
        BASE + ended * MS,
        {
            "streamkit.tool_call.index": index,
            "streamkit.tool_call.choice": 0,
            "streamkit.tool_call.outcome": "valid",
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.name": name,
            "streamkit.tool_call.first_fragment_time": BASE + opened * MS,
            "streamkit.tool_call.end_marker_time": BASE + ended * MS,
            "streamkit.tool_call.delivered_time": BASE + ended * MS,
        },
    )


def test_the_histograms_time_the_first_chunk_the_first_call_and_each_call(recorded: Recorded, clock: Clock) -> None:
    list(streamkit.iter_tool_calls(by_line("anthropic/text_then_two_calls.sse", clock), "anthropic"))
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic"}
    histograms = recorded.histograms()
    assert histograms[telemetry.TIME_TO_FIRST_CHUNK_METRIC] == [(chat, 1, 0.001)]
    assert histograms[telemetry.FIRST_CALL_METRIC] == [(chat, 1, 0.036)]
    valid = {**chat, "streamkit.tool_call.outcome": "valid"}
    assert histograms[telemetry.STREAMING_METRIC] == [
        ({**valid, "gen_ai.tool.name": "get_weather"}, 1, 0.015),
        ({**valid, "gen_ai.tool.name": "get_stock"}, 1, 0.009),
    ]


def test_an_invalid_and_a_cut_call_carry_their_outcome_and_issue_kinds(recorded: Recorded) -> None:
    body = (FIXTURES / "anthropic" / "max_tokens_truncated.sse").read_bytes()
    list(streamkit.iter_tool_calls([body], "anthropic"))
    [span] = recorded.finished()
    outcomes = [(event.attributes or {}).get("streamkit.tool_call.outcome") for event in span.events]
    assert outcomes == ["valid", "cut"]
    assert (span.events[1].attributes or {})["streamkit.tool_call.issues"] == ("truncated",)
    assert "streamkit.tool_call.raw" not in (span.events[1].attributes or {})  # only on opt-in
    assert dict(span.attributes or {})["gen_ai.response.finish_reasons"] == ("max_tokens",)


def test_raw_text_is_recorded_only_on_opt_in_and_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    out = Recorded()
    telemetry.enable(out.tracer_provider, out.meter_provider, capture_content=True, secrets=["sk-secret-key-123"])
    try:
        body = (FIXTURES / "anthropic" / "bad_arguments.sse").read_bytes()
        body = body.replace(b'\\"x\\"', b'\\"sk-secret-key-123\\"')  # the key's name, in the JSON text
        calls = list(streamkit.iter_tool_calls([body], "anthropic"))
    finally:
        telemetry.disable()
    [span] = out.finished()
    invalid = [
        event for event in span.events if (event.attributes or {}).get("streamkit.tool_call.outcome") == "invalid"
    ]
    assert invalid, calls
    assert (invalid[0].attributes or {})["streamkit.tool_call.raw"] == '{"[REDACTED]": 1,}'


def test_a_stream_that_fails_ends_its_span_in_error_with_its_cut_calls(recorded: Recorded) -> None:
    body = (FIXTURES / "anthropic" / "no_message_stop.sse").read_bytes()
    with pytest.raises(IncompleteStreamError):
        list(streamkit.iter_events([body], "anthropic"))
    [span] = recorded.finished()
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == "IncompleteStreamError"
    assert [(event.attributes or {})["streamkit.tool_call.outcome"] for event in span.events][-1] == "cut"


def test_a_stream_left_early_ends_its_span_as_abandoned(recorded: Recorded) -> None:
    body = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    calls = streamkit.iter_tool_calls(body.splitlines(keepends=True), "anthropic")
    next(calls)
    calls.close()  # type: ignore[attr-defined]
    [span] = recorded.finished()
    assert (span.attributes or {})["streamkit.abandoned"] is True
    assert len(span.events) == 1


TURN_BYTES = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
#: Streams that fail on argument text: bytes that are not UTF-8 amid a call's arguments (the error
#: shows the bytes around them), and an event whose data is not JSON (the error quotes its start).
FAILING = {
    "not UTF-8": (TURN_BYTES.replace(b"Pa", b"Secret plan\xff", 1), "FramingError"),
    "not JSON": (
        TURN_BYTES.replace(b'{"type":"content_block_stop","index":1}', b'{"city": "Secret plan for Paris"', 1),
        "ProviderProtocolError",
    ),
}


def text_in(span: ReadableSpan) -> str:
    """Every string the span carries: its status, its attributes and its events'."""
    values = [span.status.description or ""]
    for attributes in [span.attributes, *(event.attributes for event in span.events)]:
        values += [str(value) for value in (attributes or {}).values()]
    return "\n".join(values)


@pytest.mark.parametrize("case", sorted(FAILING))
def test_without_consent_a_failed_span_says_the_errors_class_and_fields_never_its_text(
    recorded: Recorded, case: str
) -> None:
    body, kind = FAILING[case]
    with pytest.raises(streamkit.StreamError) as raised:
        list(streamkit.iter_tool_calls([body], "anthropic"))
    assert "Secret plan" in str(raised.value)  # the message quotes the stream, for the caller
    [span] = recorded.finished()
    assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, None)
    attributes = dict(span.attributes or {})
    assert attributes["error.type"] == kind
    if kind == "FramingError":
        assert attributes["streamkit.error.offset"] == raised.value.offset  # type: ignore[attr-defined]
    assert "Secret" not in text_in(span)


@pytest.mark.parametrize("case", sorted(FAILING))
def test_with_consent_a_failed_span_says_the_errors_message(content_recorded: Recorded, case: str) -> None:
    body, _ = FAILING[case]
    with pytest.raises(streamkit.StreamError) as raised:
        list(streamkit.iter_tool_calls([body], "anthropic"))
    [span] = content_recorded.finished()
    assert span.status.description == str(raised.value)


@pytest.mark.anyio
@pytest.mark.parametrize("consent", [False, True], ids=["without consent", "with consent"])
async def test_a_tool_that_fails_says_its_message_only_with_consent(consent: bool) -> None:
    out = Recorded()
    telemetry.enable(out.tracer_provider, out.meter_provider, capture_content=consent)

    def get_stock(ticker: str) -> str:
        raise RuntimeError(f"no quote for {ticker}")

    async def early_run() -> None:  # an early starter's run of the tool, which raises
        raise RuntimeError("no quote for MSFT")

    try:
        events = streamkit.aiter_events([TURN_BYTES], "anthropic")
        await streamkit.run_tools(events, {"get_weather": lambda city, units: "sunny", "get_stock": get_stock})
        with pytest.raises(RuntimeError):
            await _observe.traced(streamkit.ToolCall(0, "toolu_C", "get_stock", {"ticker": "MSFT"}), early_run())
    finally:
        telemetry.disable()
    failed = [span for span in out.finished() if span.name == "execute_tool get_stock"]
    assert [(span.status.status_code, span.attributes["error.type"]) for span in failed] == [  # type: ignore[index]
        (StatusCode.ERROR, "RuntimeError"),
        (StatusCode.ERROR, "RuntimeError"),
    ]
    if consent:
        said = [span.status.description for span in failed]
        assert said == ["RuntimeError: no quote for AAPL", "RuntimeError: no quote for MSFT"]
        [exception] = failed[1].events  # the raised one's
        assert (exception.attributes or {})["exception.message"] == "no quote for MSFT"
    else:
        assert [span.status.description for span in failed] == [None, None]
        assert [text for span in failed if "AAPL" in (text := text_in(span)) or "MSFT" in text] == []


@pytest.mark.anyio
async def test_run_tools_makes_an_execute_tool_span_per_call_linked_to_the_call(recorded: Recorded) -> None:
    async def get_weather(city: str, units: str) -> str:
        return f"18 {units} in {city}"

    def get_stock(ticker: str) -> str:
        raise RuntimeError(f"no quote for {ticker}")

    body = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    events = streamkit.aiter_events([body], "anthropic")
    results = await streamkit.run_tools(events, {"get_weather": get_weather, "get_stock": get_stock})
    assert [result.is_error for result in results] == [False, True]
    spans = {span.name: span for span in recorded.finished()}
    chat = spans["chat"]
    weather, stock = spans["execute_tool get_weather"], spans["execute_tool get_stock"]
    assert dict(weather.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "toolu_A",
    }
    assert weather.kind is SpanKind.INTERNAL
    [link] = weather.links
    assert link.context.span_id == chat.context.span_id
    assert dict(link.attributes or {}) == {"gen_ai.tool.call.id": "toolu_A"}
    assert stock.status.status_code is StatusCode.ERROR
    assert (stock.attributes or {})["error.type"] == "RuntimeError"
    assert "gen_ai.tool.call.result" not in (weather.attributes or {})


def test_the_request_a_stream_answers_names_its_server(recorded: Recorded, server: LoopbackServer) -> None:
    body = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    server.routes["/v1/messages"] = Reply([body])
    with httpx.Client() as client, client.stream("POST", server.url("/v1/messages")) as response:
        list(streamkit.iter_tool_calls(response, "anthropic"))
    [span] = recorded.finished()
    assert (span.attributes or {})["server.address"] == "127.0.0.1"
    assert (span.attributes or {})["server.port"] == server.port


KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
#: What an in-stream error quotes of the key: all of it, or its start (OpenAI's "Incorrect API key").
ECHOES = {"whole key": KEY, "its start": KEY[:11] + "\u2026"}
_SAID = "openai_chat reported an error invalid_request_error: Incorrect API key provided: "
SCRUBBED = {"whole key": _SAID + "[REDACTED]", "its start": _SAID + "[REDACTED]\u2026"}


def key_error(echo: str) -> bytes:
    """An OpenAI Chat stream whose error echoes the request's key."""
    error = {"message": f"Incorrect API key provided: {echo}", "type": "invalid_request_error"}
    return b"data: " + json.dumps({"error": error}).encode() + b"\n\n"


def failed_span(out: Recorded) -> tuple[dict[str, Any], str | None]:
    [span] = out.finished()
    assert span.status.status_code is StatusCode.ERROR
    return dict(span.attributes or {}), span.status.description


@pytest.fixture
def content_recorded() -> Iterator[Recorded]:
    out = Recorded()
    telemetry.enable(out.tracer_provider, out.meter_provider, capture_content=True)
    try:
        yield out
    finally:
        telemetry.disable()


@pytest.mark.parametrize("echo", sorted(ECHOES))
def test_stream_tells_telemetry_its_requests_secrets_and_server(
    content_recorded: Recorded, server: LoopbackServer, http: ModuleType, echo: str
) -> None:
    server.routes["/v1/chat/completions"] = Reply([key_error(ECHOES[echo])])
    with (
        http.Client(headers={"Authorization": f"Bearer {KEY}"}) as client,
        pytest.raises(streamkit.ProviderError),
        streamkit.stream(client, "openai_chat", server.url("/v1/chat/completions")) as events,
    ):
        list(events)
    attributes, status = failed_span(content_recorded)
    assert status == SCRUBBED[echo]
    assert (attributes["server.address"], attributes["server.port"]) == ("127.0.0.1", server.port)


@pytest.mark.anyio
@pytest.mark.parametrize("echo", sorted(ECHOES))
async def test_astream_tells_telemetry_its_requests_secrets_and_server(
    content_recorded: Recorded, server: LoopbackServer, http: ModuleType, echo: str
) -> None:
    server.routes["/v1/chat/completions"] = Reply([key_error(ECHOES[echo])])
    async with http.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}) as client:
        with pytest.raises(streamkit.ProviderError):
            async with streamkit.astream(client, "openai_chat", server.url("/v1/chat/completions")) as events:
                async for _ in events:
                    pass
    attributes, status = failed_span(content_recorded)
    assert status == SCRUBBED[echo]
    assert (attributes["server.address"], attributes["server.port"]) == ("127.0.0.1", server.port)


def test_when_off_a_stream_imports_no_opentelemetry_and_records_nothing() -> None:
    code = (
        "import sys, streamkit\n"
        "body = open(sys.argv[1], 'rb').read()\n"
        "list(streamkit.iter_tool_calls([body], 'anthropic'))\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    path = FIXTURES / "anthropic" / "text_then_two_calls.sse"
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"
    assert not telemetry.enabled()
    assert streamkit.Assembler("anthropic")._watch is None


def test_after_disable_streams_record_nothing(recorded: Recorded) -> None:
    telemetry.disable()
    body = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    calls = list(streamkit.iter_tool_calls([body], "anthropic"))
    assert recorded.finished() == []
    assert [call.times for call in calls] == [None, None]


@pytest.mark.asyncio  # the starter's tasks are asyncio's
async def test_the_langchain_early_starter_runs_each_tool_in_an_execute_tool_span(recorded: Recorded) -> None:
    pytest.importorskip("langchain.agents.middleware")
    from langchain.agents.middleware import ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from streamkit.integrations._early import STARTER
    from streamkit.integrations._langchain_early import EarlyToolsMiddleware

    @tool
    def get_stock(ticker: str) -> str:
        """A stock's last price."""
        return f"190.12 for {ticker}"

    body = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
    calls = list(streamkit.iter_tool_calls([body], "anthropic"))
    call = calls[1]
    assert isinstance(call, streamkit.ToolCall)

    async def model_call(request: Any) -> ModelResponse[Any]:
        start = STARTER.get()
        assert start is not None
        start(call)  # what StreamkitChatModel does at the call's end marker
        entry = {"id": call.id, "name": call.name, "args": call.input}
        return ModelResponse(result=[AIMessage("", tool_calls=[entry])])

    request = ModelRequest(model=None, messages=[], tools=[get_stock])  # type: ignore[arg-type]
    response = await EarlyToolsMiddleware().awrap_model_call(request, model_call)
    message = response.result[-1]
    assert message.content == "190.12 for AAPL"
    spans = {span.name: span for span in recorded.finished()}
    stock = spans["execute_tool get_stock"]
    assert (stock.attributes or {})["gen_ai.tool.call.id"] == "toolu_B"
    assert [link.context.span_id for link in stock.links] == [spans["chat"].context.span_id]


@pytest.mark.asyncio  # pydantic-ai runs on asyncio
async def test_the_pydantic_ai_early_starter_runs_each_tool_in_an_execute_tool_span(
    recorded: Recorded, server: LoopbackServer
) -> None:
    pytest.importorskip("pydantic_ai")
    pytest.importorskip("anthropic")
    httpx2 = pytest.importorskip("httpx2")
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    from streamkit.integrations.pydantic_ai import StartToolsEarly

    turn, answer = (FIXTURES / "anthropic" / name for name in ("text_then_two_calls.sse", "text_only_crlf.sse"))
    server.routes = Turns("/v1/messages", Reply([turn.read_bytes()]), Reply([answer.read_bytes()]))
    async with httpx2.AsyncClient(timeout=60) as client:
        provider = AnthropicProvider(api_key="test-key", base_url=server.url(""), http_client=client)
        agent: Agent[None, str] = Agent(AnthropicModel(ANTHROPIC, provider=provider), capabilities=[StartToolsEarly()])

        @agent.tool_plain
        def get_weather(city: str, units: str) -> str:
            return "sunny"

        @agent.tool_plain
        def get_stock(ticker: str) -> str:
            return "190"

        await agent.run("Go")
    spans = recorded.finished()
    first, _ = [span for span in spans if span.name == "chat"]  # the turn with the calls, then the answer
    assert (first.attributes or {})["gen_ai.response.finish_reasons"] == ("tool_use",)
    tools = {span.name: span for span in spans if span.name.startswith("execute_tool")}  # early runs' only
    assert sorted(tools) == ["execute_tool get_stock", "execute_tool get_weather"]
    for name, call_id in (("get_weather", "toolu_A"), ("get_stock", "toolu_B")):
        span = tools[f"execute_tool {name}"]
        assert dict(span.attributes or {}) == {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": call_id,
        }
        [link] = span.links
        assert link.context.span_id == first.context.span_id
        assert dict(link.attributes or {}) == {"gen_ai.tool.call.id": call_id}


TURN = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
FIRST_CALL_ENDED = TURN.index(b"event: content_block_start", TURN.index(b'"toolu_A"'))  # after its stop


def transports(http: ModuleType) -> ModuleType:
    return importlib.import_module(f"streamkit.integrations.{http.__name__}")


def chat_span(recorded: Recorded) -> tuple[dict[str, Any], list[Any]]:
    """The one stream span's attributes, and the ids of its calls' events."""
    [span] = recorded.finished()
    return dict(span.attributes or {}), [(event.attributes or {})["gen_ai.tool.call.id"] for event in span.events]


def test_a_transport_names_the_server_of_the_stream_it_reemits(
    recorded: Recorded, server: LoopbackServer, http: ModuleType
) -> None:
    server.routes["/v1/messages"] = Reply([TURN])
    with (
        http.Client(transport=transports(http).Transport()) as client,
        client.stream("POST", server.url("/v1/messages")) as response,
    ):
        response.read()
    attributes, calls = chat_span(recorded)
    assert (attributes["server.address"], attributes["server.port"]) == ("127.0.0.1", server.port)
    assert attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert calls == ["toolu_A", "toolu_B"]


def test_a_body_left_after_its_first_call_ends_its_span(
    recorded: Recorded, server: LoopbackServer, http: ModuleType
) -> None:
    server.routes["/v1/messages"] = Reply([TURN[:FIRST_CALL_ENDED], TURN[FIRST_CALL_ENDED:]], pauses={1: 0.5})
    with (
        http.Client(transport=transports(http).Transport()) as client,
        client.stream("POST", server.url("/v1/messages")) as response,
    ):
        chunks = response.iter_bytes()  # held: httpx2 closes the response when it is collected
        assert b'"toolu_A"' in next(chunks)
        assert recorded.finished() == []  # the stream is still open
    attributes, calls = chat_span(recorded)
    assert attributes["streamkit.abandoned"] is True
    assert attributes["server.port"] == server.port
    assert calls == ["toolu_A"]


def test_a_body_closed_unread_ends_its_span(recorded: Recorded, server: LoopbackServer, http: ModuleType) -> None:
    server.routes["/v1/messages"] = Reply([TURN])
    with http.Client(transport=transports(http).Transport(provider="anthropic")) as client:
        request = client.build_request("POST", server.url("/v1/messages"))
        client.send(request, stream=True).close()
    attributes, calls = chat_span(recorded)
    assert attributes["streamkit.abandoned"] is True
    assert calls == []


@pytest.mark.asyncio  # under trio, httpx's own generators below a body left early warn as they are collected
async def test_an_async_body_left_after_its_first_call_ends_its_span(
    recorded: Recorded, server: LoopbackServer, http: ModuleType
) -> None:
    server.routes["/v1/messages"] = Reply([TURN[:FIRST_CALL_ENDED], TURN[FIRST_CALL_ENDED:]], pauses={1: 0.5})
    async with (
        http.AsyncClient(transport=transports(http).AsyncTransport()) as client,
        client.stream("POST", server.url("/v1/messages")) as response,
        aclosing(response.aiter_raw()) as raw,
    ):
        assert b'"toolu_A"' in await anext(raw)
    attributes, calls = chat_span(recorded)
    assert attributes["streamkit.abandoned"] is True
    assert (attributes["server.address"], attributes["server.port"]) == ("127.0.0.1", server.port)
    assert calls == ["toolu_A"]


@pytest.mark.parametrize("whole", [True, False], ids=["read whole", "closed after its first event"])
def test_the_boto3_hook_names_the_server_and_ends_its_span(
    recorded: Recorded, server: LoopbackServer, whole: bool
) -> None:
    pytest.importorskip("boto3")
    from streamkit.integrations.boto3 import install

    from .test_integration_boto3 import bedrock_client

    server.routes["/model/m/converse-stream"] = Reply([(FIXTURES / "bedrock" / "text_then_two_calls.bin").read_bytes()])
    client = bedrock_client(server)
    install(client)
    stream = client.converse_stream(modelId="m", messages=[{"role": "user", "content": [{"text": "Go"}]}])["stream"]
    if whole:
        list(stream)
    else:
        assert next(stream) == {"messageStart": {"role": "assistant"}}
        assert recorded.finished() == []  # the stream is still open
        stream.close()
    client.close()
    attributes, calls = chat_span(recorded)
    assert (attributes["gen_ai.provider.name"], attributes["server.address"]) == ("aws.bedrock", "127.0.0.1")
    assert attributes["server.port"] == server.port
    if whole:
        assert attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
        assert calls == ["tooluse_wX3kQ9aRTcW1", "tooluse_Bq7m2LpZSe0v"]
    else:
        assert (attributes["streamkit.abandoned"], calls) == (True, [])


#: Run in a fresh interpreter: the bytes still allocated (``tracemalloc``) once the calls of
#: ``streams`` streams of one call of ``size`` characters are dropped, telemetry on.
KEPT = """
import gc, json, sys, tracemalloc
from opentelemetry.sdk.trace import TracerProvider
import streamkit
from streamkit import telemetry

def body(size, n):
    events = [
        ("message_start", {"type": "message_start", "message": {"id": "msg"}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": f"toolu_{n}", "name": "write", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": json.dumps({"text": "x" * size})}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(f"event: {name}\\ndata: {json.dumps(data)}\\n\\n".encode() for name, data in events)

telemetry.enable(TracerProvider())
streams, size = int(sys.argv[1]), int(sys.argv[2])
list(streamkit.iter_tool_calls([body(16, 0)], "anthropic"))  # every module loaded
tracemalloc.start()
for n in range(streams):
    calls = list(streamkit.iter_tool_calls([body(size, n)], "anthropic"))
    assert [call.input["text"] for call in calls] == ["x" * size]
del calls
gc.collect()
print(tracemalloc.get_traced_memory()[0])
"""


def kept_after(streams: int, size: int) -> int:
    root = Path(__file__).resolve().parent.parent  # this checkout's streamkit, imported first
    args = [sys.executable, "-c", KEPT, str(streams), str(size)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True, cwd=root)
    return int(done.stdout)


def test_finished_streams_leave_none_of_their_arguments_behind() -> None:
    """24 streams of one 512 KiB call (12 MiB of arguments) leave under 64 KiB behind: each
    call's link for its ``execute_tool`` span (its times, its span's context), never the call."""
    assert kept_after(24, 512 * 1024) < 64 * 1024


def test_the_links_kept_for_execute_tool_spans_stay_within_their_bound() -> None:
    """More calls than the links kept: the oldest are forgotten, each kept one costs its few hundred bytes."""
    kept = telemetry._LINKS_KEPT
    assert kept_after(kept + 400, 16) < kept * 768


def test_a_provider_exception_under_the_boto3_hook_fails_its_span_with_the_call_it_cut(
    recorded: Recorded, server: LoopbackServer
) -> None:
    pytest.importorskip("boto3")
    from botocore.exceptions import EventStreamError

    from streamkit.integrations.boto3 import install

    from .test_integration_boto3 import bedrock_client

    server.routes["/model/m/converse-stream"] = Reply([(FIXTURES / "bedrock" / "error_midstream.bin").read_bytes()])
    client = bedrock_client(server)
    install(client)
    stream = client.converse_stream(modelId="m", messages=[{"role": "user", "content": [{"text": "Go"}]}])["stream"]
    with pytest.raises(EventStreamError):
        list(stream)
    client.close()
    [span] = recorded.finished()
    attributes = dict(span.attributes or {})
    assert span.status.status_code is StatusCode.ERROR
    assert (attributes["error.type"], "streamkit.abandoned" in attributes) == ("ProviderError", False)
    outcomes = [(event.attributes or {})["streamkit.tool_call.outcome"] for event in span.events]
    assert outcomes == ["valid", "cut"]


def test_without_opentelemetry_the_import_names_the_extra() -> None:
    """``opentelemetry`` made unimportable in a fresh interpreter, as where the extra is not installed."""
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "try:\n    from streamkit import telemetry\n"
        "except ModuleNotFoundError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout == (
        "streamkit.telemetry needs OpenTelemetry's API, which is not installed: "
        "pip install 'streamkit-toolcalls[otel]'\n"
    )
