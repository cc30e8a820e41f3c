"""``streamkit serve`` for OpenAI Chat Completions, read by the openai SDK and by curl.

The proxy runs under uvicorn on loopback in front of the repository's loopback server, which
replays the transcripts of fixtures/serve/openai_chat/ one event per write.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

from .server import LoopbackServer, Reply, Turns
from .serving import CLIENTS, FIXTURES, PROXY_KEY, TOOLS, UPSTREAM_KEY, Proxy, keyed_proxy, reply, route

openai = pytest.importorskip("openai")

PATH = "/v1/chat/completions"


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with keyed_proxy(upstream, route(upstream, invalid="withhold")) as running:  # the tell route: its own test
        yield running


def client(served: Proxy, key: str = PROXY_KEY) -> Any:
    return CLIENTS.add(openai.OpenAI(base_url=served.url + "/v1", api_key=key, max_retries=0))


def calls_of(served: Proxy, upstream: LoopbackServer, case: str) -> tuple[dict[int, dict[str, str]], str | None]:
    """The calls the SDK's chunks carry, by index, joined as an SDK user joins them; the finish reason."""
    upstream.routes[PATH] = reply("openai_chat", case)
    stream = client(served).chat.completions.create(model="llama3.1", messages=[], tools=TOOLS, stream=True)
    calls: dict[int, dict[str, str]] = {}
    finish = None
    for chunk in stream:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for delta in choice.delta.tool_calls or ():
                call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                call["id"] += delta.id or ""
                call["name"] += delta.function.name or ""
                call["arguments"] += delta.function.arguments or ""
    return calls, finish


def test_parallel_calls_at_index_zero_come_at_their_own_indexes(served: Proxy, upstream: LoopbackServer) -> None:
    calls, finish = calls_of(served, upstream, "parallel_index_zero")
    assert calls == {
        0: {"id": "call_w", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        1: {"id": "call_s", "name": "get_stock", "arguments": '{"ticker":"AAPL"}'},
    }
    assert finish == "tool_calls"
    sent = upstream.requests[-1]
    assert sent.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"  # the route's key, not the proxy key
    assert json.loads(sent.body)["tools"] == TOOLS


def test_a_call_without_index_gets_one(served: Proxy, upstream: LoopbackServer) -> None:
    calls, _ = calls_of(served, upstream, "index_missing")
    assert calls == {0: {"id": "call_w", "name": "get_weather", "arguments": '{"city":"Oslo"}'}}


def test_a_call_leaving_out_a_defaulted_parameter_comes_through(served: Proxy, upstream: LoopbackServer) -> None:
    """A strict schema (every property required, a defaulted one too): the tool's default applies."""
    weather = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "units": {"type": "string", "default": "c"}},
        "required": ["city", "units"],
        "additionalProperties": False,
    }
    strict = [{"type": "function", "function": {"name": "get_weather", "parameters": weather}}]
    upstream.routes[PATH] = reply("openai_chat", "index_missing")
    stream = client(served).chat.completions.create(model="llama3.1", messages=[], tools=strict, stream=True)
    calls = [
        (d.index, d.id, d.function.name, d.function.arguments)
        for c in stream
        for d in c.choices[0].delta.tool_calls or ()
    ]
    assert calls == [(0, "call_w", "get_weather", '{"city":"Oslo"}')]


NOT_JSON = "the arguments are not valid JSON: trailing comma is not allowed"
CUT = "truncated: the arguments were cut off before the call ended (output limit reached or stream ended)"


@pytest.mark.parametrize(
    ("case", "message", "code"),
    [
        # get_weather is complete: get_stock followed it (OpenAI Chat's sequential order); only get_stock was cut.
        ("cut_call", f"at index 1 (get_stock, id call_s): {CUT}", CUT[:9]),
        ("invalid_json", f"at index 0 (get_weather, id call_w): invalid_json: {NOT_JSON}", "invalid_json"),
        ("schema_error", 'at index 0 (get_weather, id call_w): schema: 42 is not of type "string"', "schema"),
    ],
)
def test_an_invalid_call_is_withheld_and_the_sdk_raises(
    served: Proxy, upstream: LoopbackServer, case: str, message: str, code: str
) -> None:
    upstream.routes[PATH] = reply("openai_chat", case)
    stream = client(served).chat.completions.create(model="llama3.1", messages=[], tools=TOOLS, stream=True)
    seen: list[Any] = []
    with pytest.raises(openai.APIError) as raised:
        seen.extend(stream)
    assert raised.value.message == f"streamkit withheld an invalid tool call: {message}"
    assert raised.value.body["code"] == code
    assert raised.value.body["type"] == "invalid_tool_call"
    # OpenAI Chat calls end at the finish reason: "length" cuts every call still open, both here
    assert [d for chunk in seen for choice in chunk.choices for d in choice.delta.tool_calls or ()] == []


def test_the_withheld_report_in_bytes(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes[PATH] = reply("openai_chat", "invalid_json")
    body = _post(served, {"model": "m", "messages": [], "tools": TOOLS, "stream": True})
    *_, last = body.split(b"\n\n")[:-1]
    payload = json.loads(last.removeprefix(b"data: "))
    assert payload == {
        "error": {
            "message": payload["error"]["message"],
            "type": "invalid_tool_call",
            "param": None,
            "code": "invalid_json",
        }
    }
    assert b"[DONE]" not in body  # the turn failed: no end marker follows the report


def _post(served: Proxy, body: dict[str, Any], key: str = PROXY_KEY) -> bytes:
    response = httpx.post(served.url + PATH, json=body, headers={"authorization": f"Bearer {key}"}, timeout=10)
    return response.content


def test_an_upstream_error_echoing_the_key_is_scrubbed(served: Proxy, upstream: LoopbackServer) -> None:
    echoed = f'{{"error":{{"message":"Incorrect API key provided: {UPSTREAM_KEY}.","type":"invalid_request_error"}}}}'
    upstream.routes[PATH] = Reply([echoed.encode()], status=401, reason="Unauthorized", content_type="application/json")
    with pytest.raises(openai.AuthenticationError) as raised:
        client(served).chat.completions.create(model="m", messages=[], stream=True)
    assert raised.value.body == {"message": "Incorrect API key provided: [REDACTED].", "type": "invalid_request_error"}
    assert UPSTREAM_KEY[:8] not in json.dumps(raised.value.body)


def test_an_in_stream_error_echoing_the_key_is_scrubbed(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes[PATH] = reply("openai_chat", "error_echoes_key")
    stream = client(served).chat.completions.create(model="m", messages=[], stream=True)
    with pytest.raises(openai.APIError) as raised:
        list(stream)
    assert raised.value.message == "Incorrect API key provided: [REDACTED]. Check your key."


@pytest.mark.parametrize("key", [None, "sk-wrong-key-0000"])
def test_a_missing_or_wrong_proxy_key_is_refused(served: Proxy, upstream: LoopbackServer, key: str | None) -> None:
    before = len(upstream.requests)
    headers = {} if key is None else {"authorization": f"Bearer {key}"}
    response = httpx.post(served.url + PATH, json={"model": "m", "messages": []}, headers=headers, timeout=10)
    assert response.status_code == 401
    error = {"message": "a missing or wrong proxy key", "type": "authentication_error", "param": None, "code": None}
    assert response.json() == {"error": error}
    assert len(upstream.requests) == before  # nothing was sent upstream


def test_the_sdk_with_a_wrong_proxy_key_raises_its_own_error(served: Proxy) -> None:
    with pytest.raises(openai.AuthenticationError):
        client(served, key="sk-wrong").chat.completions.create(model="m", messages=[], stream=True)


def test_a_client_that_disconnects_cancels_the_upstream_request(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes[PATH] = reply("openai_chat", "long_text", delay=0.02)  # 4 s of text, one event per write
    whole = sum(map(len, upstream.routes[PATH].writes))
    with httpx.stream(
        "POST", served.url + PATH, json={"model": "m", "messages": []}, headers={"x-api-key": PROXY_KEY}, timeout=10
    ) as response:
        for _ in response.iter_raw():
            break  # one chunk read, then the client leaves
    connection = upstream.connections[-1]  # the pooled connection the request went on
    written = connection.bytes_written
    assert connection.closed.wait(2)  # the proxy closed its upstream connection, long before the reply's end
    assert connection.bytes_written - written < whole


def test_curl_reads_the_canonical_stream_exactly(served: Proxy, upstream: LoopbackServer) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    upstream.routes[PATH] = reply("openai_chat", "parallel_index_zero")
    body = json.dumps({"model": "llama3.1", "messages": [], "tools": TOOLS, "stream": True})
    out = subprocess.run(
        [curl, "-sS", "-N", served.url + PATH, "-H", f"Authorization: Bearer {PROXY_KEY}", "-d", body],
        capture_output=True,
        check=True,
        timeout=30,
    )
    assert out.stdout == (FIXTURES / "openai_chat" / "parallel_index_zero.expected.sse").read_bytes()


def test_health_and_metrics(served: Proxy, upstream: LoopbackServer) -> None:
    assert httpx.get(served.url + "/healthz").json() == {"status": "ok"}
    calls_of(served, upstream, "parallel_index_zero")
    metrics = httpx.get(served.url + "/metrics").text
    assert 'streamkit_serve_calls_total{format="openai_chat",outcome="valid"}' in metrics
    assert "# TYPE streamkit_serve_call_seconds histogram" in metrics
    time.sleep(0)


def test_an_upstream_cut_mid_stream_ends_with_the_error_event(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes[PATH] = reply("openai_chat", "parallel_index_zero", cut=True)
    upstream.routes[PATH].writes = upstream.routes[PATH].writes[:3]  # inside the first call
    stream = client(served).chat.completions.create(model="m", messages=[], stream=True)
    with pytest.raises(openai.APIError) as raised:
        list(stream)
    assert raised.value.body["type"] == "api_error"
    assert raised.value.message.startswith("the upstream's stream failed: RemoteProtocolError: ")


def test_an_unreachable_upstream_is_a_502_in_the_formats_shape(upstream: LoopbackServer) -> None:
    closed = LoopbackServer()
    closed.close()  # a port nothing listens on
    route = {"format": "openai_chat", "upstream": closed.url("/v1")}
    with keyed_proxy(upstream, route) as proxying, pytest.raises(openai.InternalServerError) as raised:
        client(proxying).chat.completions.create(model="m", messages=[], stream=True)
    assert raised.value.status_code == 502
    assert raised.value.body["type"] == "api_error"
    assert raised.value.body["message"].startswith("the upstream cannot be reached: ConnectError: ")


@pytest.mark.parametrize(
    ("fmt", "body"),
    [
        (
            "openai_chat",
            {"error": {"message": "no route for GET /v1/nowhere", "type": "not_found", "param": None, "code": None}},
        ),
        ("anthropic", {"type": "error", "error": {"type": "not_found", "message": "no route for GET /v1/nowhere"}}),
    ],
)
def test_a_path_no_format_is_served_on_is_a_404_in_the_first_routes_shape(
    upstream: LoopbackServer, fmt: str, body: dict[str, Any]
) -> None:
    with keyed_proxy(upstream, {"format": fmt, "upstream": upstream.url("/v1")}) as proxying:
        answer = httpx.get(proxying.url + "/v1/nowhere", headers={"authorization": f"Bearer {PROXY_KEY}"})
    assert (answer.status_code, answer.json()) == (404, body)


def test_a_tell_route_answers_a_bad_call_upstream_and_the_sdk_reads_one_turn_of_valid_calls(
    upstream: LoopbackServer,
) -> None:
    """``invalid = "tell"``: the bad call never reaches the SDK; the proxy sends the request again
    with the turn and the call's error, and the stream goes on with the model's answer."""
    answer = (
        b'data: {"id":"c2","object":"chat.completion.chunk","created":2,"model":"m","choices":[{"index":0,'
        b'"delta":{"role":"assistant","content":" Fixed.","tool_calls":[{"index":0,"id":"call_9","type":"function",'
        b'"function":{"name":"get_weather","arguments":"{\\"city\\": \\"Paris\\"}"}}]},"finish_reason":null}]}\n\n'
        b'data: {"id":"c2","object":"chat.completion.chunk","created":2,"model":"m","choices":[{"index":0,'
        b'"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n'
    )
    with keyed_proxy(upstream, route(upstream, invalid="tell")) as served:
        before = len(upstream.requests)
        upstream.routes = Turns(PATH, reply("openai_chat", "schema_error"), Reply([answer]))
        request = {"model": "m", "messages": [{"role": "user", "content": "Paris?"}], "tools": TOOLS}
        with client(served).chat.completions.stream(**request) as stream:
            final = stream.get_final_completion()
        metrics = httpx.get(served.url + "/metrics", timeout=10).text
    assert 'streamkit_serve_asked_again_total{format="openai_chat"} 1' in metrics
    assert 'streamkit_serve_calls_total{format="openai_chat",outcome="told"} 1' in metrics
    assert 'streamkit_serve_streams_total{format="openai_chat",outcome="told"} 1' in metrics
    choice = final.choices[0]
    calls = [(call.index, call.id, call.function.arguments) for call in choice.message.tool_calls or ()]
    assert calls[-1] == (len(calls) - 1, "call_9", '{"city":"Paris"}')
    assert "call_w" not in [call[1] for call in calls]  # the bad call, never handed on
    assert (choice.finish_reason, (choice.message.content or "").endswith(" Fixed.")) == ("tool_calls", True)
    first, again = upstream.requests[before:]
    appended = json.loads(again.body)["messages"][len(json.loads(first.body)["messages"]) :]
    assert [entry["role"] for entry in appended][:1] == ["assistant"]
    [told] = [entry for entry in appended if entry.get("tool_call_id") == "call_w"]
    assert json.loads(told["content"])["errors"][0]["kind"] == "schema"
