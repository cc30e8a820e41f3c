"""``streamkit serve`` with ``telemetry = true``: each proxied stream recorded by ``streamkit.telemetry``.

The OpenTelemetry SDK's in-memory exporter and reader take what the proxy records while real
clients read streams through it, under uvicorn on 127.0.0.1.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("opentelemetry.sdk")

from opentelemetry.trace import SpanKind

import streamkit
from streamkit import UsageError, telemetry
from streamkit.serve import App, parse_config

from .server import LoopbackServer
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
        "route": [route(upstream), route(upstream, "anthropic")],
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
