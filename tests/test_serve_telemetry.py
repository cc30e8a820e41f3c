"""``streamkit serve`` with ``telemetry = true``: each proxied stream recorded by ``streamkit.telemetry``.

The OpenTelemetry SDK's in-memory exporter and reader take what the proxy records while real
clients read streams through it, under uvicorn on 127.0.0.1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("opentelemetry.sdk")

from opentelemetry.trace import SpanKind, StatusCode

import streamkit
from streamkit import UsageError, telemetry
from streamkit.serve import App, parse_config

from .server import LoopbackServer, Reply
from .serving import ANTHROPIC_TOOLS, CLIENTS, PROXY_KEY, TOOLS, UPSTREAM_KEY, Proxy, reply, route
from .test_telemetry import Recorded

openai = pytest.importorskip("openai")


@pytest.fixture
def recorded(upstream: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Proxy, Recorded]]:
    monkeypatch.setenv("TEST_PROXY_KEY", PROXY_KEY)
    monkeypatch.setenv("TEST_UPSTREAM_KEY", UPSTREAM_KEY)
    out = Recorded()
    config = {
        "server": {"proxy_key_env": "TEST_PROXY_KEY", "telemetry": True},
        "route": [route(upstream), route(upstream, "anthropic", invalid="withhold")],
    }
    running = Proxy(config, tracer_provider=out.tracer_provider, meter_provider=out.meter_provider)
    try:
        yield running, out
    finally:
        running.close()
        CLIENTS.close()
        telemetry.disable()


def test_each_stream_is_a_span_with_the_upstream_address_and_its_calls(
    recorded: tuple[Proxy, Recorded], upstream: LoopbackServer
) -> None:
    served, out = recorded
    upstream.routes["/v1/chat/completions"] = reply("openai_chat", "parallel_index_zero")
    client = CLIENTS.add(openai.OpenAI(base_url=served.url + "/v1", api_key=PROXY_KEY, max_retries=0))
    list(client.chat.completions.create(model="llama3.1", messages=[], tools=TOOLS, stream=True))
    [span] = out.finished()
    assert (span.name, span.kind) == ("chat", SpanKind.CLIENT)
    attributes = dict(span.attributes or {})
    assert {key: attributes[key] for key in ("gen_ai.provider.name", "server.address", "server.port")} == {
        "gen_ai.provider.name": "openai",
        "server.address": "127.0.0.1",
        "server.port": upstream.port,
    }
    assert attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    keys = ("gen_ai.tool.call.id", "gen_ai.tool.name", "streamkit.tool_call.outcome")
    calls = [{key: event.attributes[key] for key in keys} for event in span.events if event.attributes is not None]
    assert calls == [
        {"gen_ai.tool.call.id": "call_w", "gen_ai.tool.name": "get_weather", "streamkit.tool_call.outcome": "valid"},
        {"gen_ai.tool.call.id": "call_s", "gen_ai.tool.name": "get_stock", "streamkit.tool_call.outcome": "valid"},
    ]
    histograms = out.histograms()
    assert [count for _, count, _ in histograms[telemetry.FIRST_CALL_METRIC]] == [1]
    assert sum(count for _, count, _ in histograms[telemetry.STREAMING_METRIC]) == 2


def test_a_withheld_call_is_an_invalid_call_event_and_the_span_ends(
    recorded: tuple[Proxy, Recorded], upstream: LoopbackServer
) -> None:
    served, out = recorded
    upstream.routes["/v1/messages"] = reply("anthropic", "schema_error")
    body = {"model": "m", "max_tokens": 10, "messages": [], "tools": ANTHROPIC_TOOLS, "stream": True}
    response = httpx.post(served.url + "/v1/messages", json=body, headers={"x-api-key": PROXY_KEY}, timeout=10)
    assert b"event: error" in response.content
    [span] = out.finished()
    attributes = dict(span.attributes or {})
    assert (attributes["gen_ai.provider.name"], attributes["server.port"]) == ("anthropic", upstream.port)
    assert attributes["streamkit.abandoned"] is True  # the proxy stopped reading at the withheld call
    [event] = span.events
    assert event.attributes is not None
    assert (event.attributes["streamkit.tool_call.outcome"], event.attributes["streamkit.tool_call.issues"]) == (
        "invalid",
        ("schema",),
    )


def test_telemetry_without_opentelemetry_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(streamkit, "telemetry", raising=False)
    monkeypatch.setitem(sys.modules, "streamkit.telemetry", None)
    config: dict[str, Any] = {"server": {"telemetry": True}, "route": [{"format": "anthropic", "upstream": "http://x"}]}
    with pytest.raises(UsageError) as raised:
        App(parse_config(config))
    assert str(raised.value) == (
        "telemetry needs OpenTelemetry's API, which is not installed: pip install 'streamkit-toolcalls[otel]'"
    )


ERROR_BODY = b'{"error": {"message": "slow down", "type": "rate_limit_exceeded"}}'


@pytest.mark.parametrize(("status", "reason"), [(500, "Internal Server Error"), (429, "Too Many Requests")])
def test_an_upstream_error_status_is_a_failed_span(
    recorded: tuple[Proxy, Recorded], upstream: LoopbackServer, status: int, reason: str
) -> None:
    served, out = recorded
    upstream.routes["/v1/chat/completions"] = Reply([ERROR_BODY], status=status, reason=reason, content_type=JSON)
    body = {"model": "m", "messages": [], "stream": True}
    answer = httpx.post(served.url + "/v1/chat/completions", json=body, headers=KEYED, timeout=10)
    assert answer.status_code == status
    [span] = out.finished()
    # the proxy records no content (no ``capture_content``): the class and the status say it
    assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, None)
    attributes = dict(span.attributes or {})
    assert (attributes["error.type"], attributes["http.response.status_code"]) == ("HTTPStatusError", status)


def test_a_stream_the_upstream_cuts_is_a_failed_span_with_its_open_call_cut(
    recorded: tuple[Proxy, Recorded], upstream: LoopbackServer
) -> None:
    served, out = recorded
    cut = reply("openai_chat", "parallel_index_zero", cut=True)
    cut.writes = cut.writes[:3]  # inside the first call
    upstream.routes["/v1/chat/completions"] = cut
    body = {"model": "m", "messages": [], "tools": TOOLS, "stream": True}
    httpx.post(served.url + "/v1/chat/completions", json=body, headers=KEYED, timeout=10)
    [span] = out.finished()
    assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, None)
    assert dict(span.attributes or {})["error.type"] == "TransportError"
    assert [(event.attributes or {}).get("streamkit.tool_call.outcome") for event in span.events] == ["cut"]


def test_an_unreachable_upstream_is_a_failed_span(upstream: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_PROXY_KEY", PROXY_KEY)
    closed = LoopbackServer()
    closed.close()  # a port nothing listens on
    out = Recorded()
    nowhere = {"format": "openai_chat", "upstream": closed.url("/v1")}
    config = {"server": {"proxy_key_env": "TEST_PROXY_KEY", "telemetry": True}, "route": [nowhere]}
    running = Proxy(config, tracer_provider=out.tracer_provider, meter_provider=out.meter_provider)
    try:
        body = {"model": "m", "messages": [], "stream": True}
        answer = httpx.post(running.url + "/v1/chat/completions", json=body, headers=KEYED, timeout=10)
    finally:
        running.close()
        telemetry.disable()
    assert answer.status_code == 502
    [span] = out.finished()
    assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, None)
    assert dict(span.attributes or {})["error.type"] == "TransportError"


def test_an_answer_not_streamed_is_a_span_with_its_calls_and_finish(
    recorded: tuple[Proxy, Recorded], upstream: LoopbackServer
) -> None:
    served, out = recorded
    message = {"role": "assistant", "tool_calls": [_CALL]}
    whole = {
        "id": "c",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }
    upstream.routes["/v1/chat/completions"] = Reply([json.dumps(whole).encode()], content_type=JSON, chunked=False)
    body = {"model": "m", "messages": [], "tools": TOOLS}
    answer = httpx.post(served.url + "/v1/chat/completions", json=body, headers=KEYED, timeout=10)
    assert answer.json() == whole
    [span] = out.finished()
    assert span.status.status_code == StatusCode.UNSET
    attributes = dict(span.attributes or {})
    assert (attributes["gen_ai.response.finish_reasons"], attributes["streamkit.finish"]) == (
        ("tool_calls",),
        "tool_calls",
    )
    [event] = span.events
    assert (event.attributes or {})["streamkit.tool_call.outcome"] == "valid"


_CALL = {"id": "call_w", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
KEYED = {"authorization": f"Bearer {PROXY_KEY}"}
JSON = "application/json"
