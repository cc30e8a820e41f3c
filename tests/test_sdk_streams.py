"""The official SDKs' stream helpers as sources, against the loopback server (skipped without them)."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import pytest

import streamkit
from streamkit import (
    HTTPStatusError,
    IncompleteStreamError,
    Provider,
    ProviderError,
    ResponseEnd,
    StreamkitError,
    TextDelta,
    ToolCall,
    TransportError,
)

from .helpers import FIXTURES, sse
from .models import OPENAI as OPENAI_MODEL
from .server import LoopbackServer, Reply, split_awkwardly

ANTHROPIC = (FIXTURES / "anthropic" / "text_then_two_calls.sse").read_bytes()
OPENAI = (FIXTURES / "openai_chat" / "text_then_two_calls.sse").read_bytes()


def test_the_anthropic_messages_stream_helper(server: LoopbackServer) -> None:
    anthropic = pytest.importorskip("anthropic")
    server.routes["/v1/messages"] = Reply(split_awkwardly(ANTHROPIC))
    client = anthropic.Anthropic(base_url=server.url(""), api_key="sk-test", max_retries=0)
    with client, client.messages.stream(model="m", max_tokens=64, messages=[]) as sdk_stream:
        got = list(streamkit.iter_events(sdk_stream, "anthropic"))
    assert got == [
        TextDelta("Checking ", index=0),
        TextDelta("both.", index=0),
        ToolCall(1, "toolu_A", "get_weather", {"city": "Paris", "units": "c"}),
        ToolCall(2, "toolu_B", "get_stock", {"ticker": "AAPL"}),
        ResponseEnd("tool_use", {"input_tokens": 377, "output_tokens": 65}),
    ]


def test_the_openai_chat_stream_helper(server: LoopbackServer) -> None:
    openai = pytest.importorskip("openai")
    server.routes["/v1/chat/completions"] = Reply(split_awkwardly(OPENAI))
    client = openai.OpenAI(base_url=server.url("/v1"), api_key="sk-test", max_retries=0)
    with client, client.chat.completions.stream(model=OPENAI_MODEL, messages=[]) as sdk_stream:
        got = list(streamkit.iter_tool_calls(sdk_stream, "openai_chat"))
    assert got == [
        ToolCall(0, "call_A", "get_weather", {"city": "Paris"}),
        ToolCall(1, "call_B", "get_stock", {"ticker": "AAPL"}),
    ]


# -- what an SDK's own iteration raises, and how its streams end ------------------------------------

PARIS = ToolCall(0, "call_A", "get_weather", {"city": "Paris"})


def outcome(source: Any, provider: Provider, **options: Any) -> tuple[list[object], StreamkitError | None]:
    got: list[object] = []
    try:
        got.extend(streamkit.iter_events(source, provider, **options))
    except StreamkitError as exc:
        return got, exc
    return got, None


def openai_chunk(*calls: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"tool_calls": list(calls)} if calls else {}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": OPENAI_MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def entry(index: int, arguments: Any, call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    return {"index": index, **({"id": call_id, "type": "function"} if call_id else {}), "function": function}


OPENAI_CALLS = [
    openai_chunk(entry(0, '{"city": "Paris"}', "call_A", "get_weather")),
    openai_chunk(entry(1, '{"ticker": "AA', "call_B", "get_stock")),
]
OPENAI_ERROR = {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}


def openai_client(server: LoopbackServer, body: bytes, **reply: Any) -> Any:
    openai = pytest.importorskip("openai")
    server.routes["/v1/chat/completions"] = Reply([body], **reply)
    return openai.OpenAI(base_url=server.url("/v1"), api_key="sk-test", max_retries=0)


def test_an_openai_error_event_is_a_provider_error_after_the_calls_before_it(server: LoopbackServer) -> None:
    openai = pytest.importorskip("openai")
    client = openai_client(server, sse(*OPENAI_CALLS, OPENAI_ERROR))
    with client:
        stream = client.chat.completions.create(model=OPENAI_MODEL, messages=[], stream=True)
        got, error = outcome(stream, "openai_chat", early_close=True)
    assert got == [PARIS]
    assert isinstance(error, ProviderError) and isinstance(error.__cause__, openai.APIError)
    assert (error.provider, error.type, error.message) == (
        "openai_chat",
        "server_error",
        "The server had an error while processing your request.",
    )
    assert [(c.id, c.raw, c.truncated) for c in error.unfinished] == [("call_B", '{"ticker": "AA', True)]


@pytest.mark.anyio
async def test_an_openai_error_event_through_the_async_client(server: LoopbackServer) -> None:
    openai = pytest.importorskip("openai")
    server.routes["/v1/chat/completions"] = Reply([sse(*OPENAI_CALLS, OPENAI_ERROR)])
    client = openai.AsyncOpenAI(base_url=server.url("/v1"), api_key="sk-test", max_retries=0)
    got: list[object] = []
    async with client:
        stream = await client.chat.completions.create(model=OPENAI_MODEL, messages=[], stream=True)
        with pytest.raises(ProviderError) as info:
            async for item in streamkit.aiter_events(stream, "openai_chat", early_close=True):
                got.append(item)  # noqa: PERF401 - kept one by one: the iteration raises
    assert got == [PARIS]
    assert isinstance(info.value.__cause__, openai.APIError)
    assert [c.raw for c in info.value.unfinished] == ['{"ticker": "AA']
    del info, stream
    _collect_abandoned_generators()


def _collect_abandoned_generators() -> None:
    """The openai SDK raises an error event's ``APIError`` inside its own generator and leaves the
    byte iterators under it suspended; held by the error's traceback, they are collected whenever
    the garbage collector next runs, and under trio each then warns that it was never exhausted, in
    whichever test that is. Collected here, where it is known, their warnings expected."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def test_a_connection_cut_under_the_sdk_is_a_transport_error(server: LoopbackServer) -> None:
    client = openai_client(server, sse(*OPENAI_CALLS), cut=True, cut_mid_chunk=True)
    with client:
        got, error = outcome(client.chat.completions.create(model="m", messages=[], stream=True), "openai_chat")
    assert got == []
    assert isinstance(error, TransportError) and error.__cause__ is not None
    assert error.provider == "openai_chat"
    assert [c.raw for c in error.unfinished] == ['{"city": "Paris"}', '{"ticker": "AA']


def test_an_answer_that_is_not_2xx_read_by_the_sdk_is_an_http_status_error(server: LoopbackServer) -> None:
    genai = pytest.importorskip("google.genai")
    server.routes["/v1/models/g:streamGenerateContent"] = Reply(
        [b'{"error": {"code": 429, "message": "Resource exhausted.", "status": "RESOURCE_EXHAUSTED"}}'],
        status=429,
        reason="Too Many Requests",
        content_type="application/json",
    )
    client = genai.Client(api_key="k", http_options=genai.types.HttpOptions(base_url=server.url("")))
    got, error = outcome(client.models.generate_content_stream(model="g", contents="hi"), "gemini")
    assert got == []
    assert isinstance(error, HTTPStatusError) and isinstance(error.__cause__, genai.errors.ClientError)
    assert (error.status_code, error.error_type, error.error_message) == (
        429,
        "RESOURCE_EXHAUSTED",
        "Resource exhausted.",
    )
    assert error.retryable and error.headers["content-type"] == "application/json"


def test_an_anthropic_error_event_is_a_provider_error(server: LoopbackServer) -> None:
    anthropic = pytest.importorskip("anthropic")
    server.routes["/v1/messages"] = Reply(
        split_awkwardly((FIXTURES / "anthropic" / "error_midstream.sse").read_bytes())
    )
    client = anthropic.Anthropic(base_url=server.url(""), api_key="sk-test", max_retries=0)
    with client:
        stream = client.messages.create(model="m", max_tokens=64, messages=[], stream=True)
        got, error = outcome(stream, "anthropic")
    assert got == [ToolCall(0, "toolu_A", "get_weather", {"city": "Oslo"})]
    assert isinstance(error, ProviderError) and isinstance(error.__cause__, anthropic.APIStatusError)
    assert (error.type, error.message, str(error)) == (
        "overloaded_error",
        "Overloaded",
        "anthropic reported an error overloaded_error: Overloaded",
    )
    assert [(c.id, c.raw) for c in error.unfinished] == [("toolu_B", '{"city": "Ber')]


def test_a_google_genai_error_event_is_a_provider_error(server: LoopbackServer) -> None:
    genai = pytest.importorskip("google.genai")
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}
    body = sse(
        {"candidates": [{"content": {"role": "model", "parts": [call]}, "index": 0}]},
        {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}},
    )
    server.routes["/v1/models/g:streamGenerateContent"] = Reply([body])
    client = genai.Client(api_key="k", http_options=genai.types.HttpOptions(base_url=server.url("")))
    got, error = outcome(client.models.generate_content_stream(model="g", contents="hi"), "gemini")
    assert got == [ToolCall(0, None, "get_weather", {"city": "Paris"})]
    assert isinstance(error, ProviderError) and isinstance(error.__cause__, genai.errors.ServerError)
    assert (error.type, error.message, error.unfinished) == ("UNAVAILABLE", "The model is overloaded.", ())


def test_a_mistral_error_event_is_a_provider_error(server: LoopbackServer) -> None:
    pytest.importorskip("mistralai")
    from mistralai.client import Mistral

    opened = openai_chunk({"id": "a1B2c3D4e", "function": {"name": "get_weather", "arguments": '{"city": "Pa'}})
    error_event = {"object": "error", "message": "Service unavailable, please retry", "type": "internal_error"}
    server.routes["/v1/chat/completions"] = Reply([sse(opened, error_event)])
    client = Mistral(api_key="k", server_url=server.url(""))
    stream = client.chat.stream(model="m", messages=[{"role": "user", "content": "hi"}])  # type: ignore[arg-type]
    got, error = outcome(stream, "mistral")
    assert got == []
    assert isinstance(error, ProviderError) and type(error.__cause__).__name__ == "ResponseValidationError"
    assert [(c.id, c.raw) for c in error.unfinished] == [("a1B2c3D4e", '{"city": "Pa')]


def test_an_openai_sdk_stream_cut_without_done_is_incomplete(server: LoopbackServer) -> None:
    client = openai_client(server, sse(*OPENAI_CALLS))  # the body ends cleanly, with no finish_reason
    with client:
        got, error = outcome(client.chat.completions.create(model="m", messages=[], stream=True), "openai_chat")
    assert got == []
    assert isinstance(error, IncompleteStreamError)
    assert [c.raw for c in error.unfinished] == ['{"city": "Paris"}', '{"ticker": "AA']


def test_an_openai_sdk_stream_without_done_but_finished_is_whole(server: LoopbackServer) -> None:
    finished = [OPENAI_CALLS[0], openai_chunk(entry(1, '{"ticker": "AAPL"}', "call_B", "get_stock"), finish="stop")]
    client = openai_client(server, sse(*finished))  # Cerebras: no [DONE]
    with client:
        got, error = outcome(client.chat.completions.create(model="m", messages=[], stream=True), "openai_chat")
    assert (got, error) == ([PARIS, ToolCall(1, "call_B", "get_stock", {"ticker": "AAPL"}), ResponseEnd("stop")], None)


def test_openai_chunks_with_object_arguments_dump_without_a_warning(server: LoopbackServer) -> None:
    # The type says string; a gateway sends an object. Warnings are errors in this suite.
    data = (FIXTURES / "openai_chat" / "gateway_arguments_object.sse").read_bytes()
    client = openai_client(server, data)
    with client:
        got, error = outcome(client.chat.completions.create(model="m", messages=[], stream=True), "openai_chat")
    assert (got, error) == outcome([data], "openai_chat")


def test_google_genai_null_values_in_vertex_partial_args(server: LoopbackServer) -> None:
    genai = pytest.importorskip("google.genai")
    data = (FIXTURES / "gemini" / "vertex_streamed_arguments.sse").read_bytes()
    server.routes["/v1/models/g:streamGenerateContent"] = Reply(split_awkwardly(data))
    client = genai.Client(api_key="k", http_options=genai.types.HttpOptions(base_url=server.url("")))
    got, error = outcome(client.models.generate_content_stream(model="g", contents="hi"), "gemini")
    expected, _ = outcome([data], "gemini")
    assert error is None
    assert [item for item in got if isinstance(item, ToolCall)] == [i for i in expected if isinstance(i, ToolCall)]
    assert any(item.input.get("recipe", {}).get("notes", 0) is None for item in got if isinstance(item, ToolCall))


GEMINI_KEY = "AIzaTestKey0123456789"


def test_an_answer_that_is_not_2xx_fails_alike_read_by_the_sdk_or_by_the_http_edge(server: LoopbackServer) -> None:
    """The SDK's exception for a refused request carries what the HTTP edge's error does: the wait
    the server asked for, the body's excerpt, the request named, the key scrubbed from all of it."""
    genai = pytest.importorskip("google.genai")
    httpx = pytest.importorskip("httpx")
    echoed = f'{{"error": {{"code": 429, "message": "Slow down, {GEMINI_KEY}.", "status": "RESOURCE_EXHAUSTED"}}}}'
    server.routes["/v1/models/g:streamGenerateContent"] = Reply(
        [echoed.encode()],
        status=429,
        reason="Too Many Requests",
        content_type="application/json",
        headers=[("Retry-After", "7")],
    )
    client = genai.Client(api_key=GEMINI_KEY, http_options=genai.types.HttpOptions(base_url=server.url("")))
    _, error = outcome(client.models.generate_content_stream(model="g", contents="hi"), "gemini")
    assert isinstance(error, HTTPStatusError) and isinstance(error.__cause__, genai.errors.ClientError)
    sent = error.__cause__.response.request
    with httpx.Client() as http, http.stream("POST", str(sent.url), headers={"x-goog-api-key": GEMINI_KEY}) as answer:
        _, edge = outcome(answer, "gemini")
    assert isinstance(edge, HTTPStatusError) and edge.__cause__ is None

    def shown(failed: HTTPStatusError) -> tuple[object, ...]:
        return failed.status_code, failed.error_type, failed.error_message, failed.body_excerpt, failed.retry_after

    body = '{"error": {"code": 429, "message": "Slow down, [REDACTED].", "status": "RESOURCE_EXHAUSTED"}}'
    assert shown(error) == shown(edge) == (429, "RESOURCE_EXHAUSTED", "Slow down, [REDACTED].", body, 7.0)
    url = server.url("/v1/models/g:streamGenerateContent?alt=sse")
    message = f"HTTP 429 Too Many Requests from POST {url}: RESOURCE_EXHAUSTED: Slow down, [REDACTED]."
    assert str(error) == str(edge) == message
    assert error.headers["retry-after"] == edge.headers["retry-after"] == "7"
