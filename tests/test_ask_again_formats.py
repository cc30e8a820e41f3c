"""A bad call told to the model by the transports (the policy's ``tell``) in OpenAI Responses,
Gemini, Cohere and Ollama: the first response holds a bad call, the transport asks again, and
the client reads one response, the valid calls of both answers in order, the text of both, the
second's end.

Responses and Gemini are read by their own SDKs (openai's ``responses.stream``, google-genai)
over an httpx2 client; Cohere and Ollama, whose SDKs take no such client here, by a plain
httpx2 client whose body streamkit decodes again. Every fixture of a format that goes on with
the next response is also fed through a ``Session`` by itself, at any chunking.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest

import streamkit
from streamkit import InvalidToolCall, Limits, ToolCall
from streamkit._reemit import PENDING, BadCalls, Session
from streamkit._reemit._policy import InvalidCallsError
from streamkit._types import Call, Provider
from streamkit.integrations.httpx2 import AsyncTransport, Transport
from streamkit.providers import ENCODERS, FACTS

from . import answers
from .helpers import FIXTURES, Fixture, fixtures
from .models import GEMINI, OPENAI
from .server import LoopbackServer, Reply, Turns, split_awkwardly

openai = pytest.importorskip("openai", minversion="3")
httpx2 = pytest.importorskip("httpx2")

MODES = ["sync", "async"]
WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
    "required": ["city"],
}
#: The model's corrected call, in every answer.
ROME = ("call_again_9", "get_weather", {"city": "Rome"})


def fixture(path: str) -> Reply:
    return Reply(split_awkwardly((FIXTURES / path).read_bytes()))


def causes(error: BaseException | None) -> Iterator[BaseException]:
    while error is not None:
        yield error
        error = error.__cause__


# -- OpenAI Responses ----------------------------------------------------------------------------

RESPONSES_PATH = "/v1/responses"


def responses(server: LoopbackServer, mode: str, *replies: Reply, invalid: Any = None) -> tuple[Any, list[Any]]:
    """One streamed Responses request offering ``get_weather`` only: the SDK's final response (or
    its error) and the events it handed over."""
    server.routes = Turns(RESPONSES_PATH, *replies)
    events: list[Any] = []
    kwargs = {} if invalid is None else {"invalid": invalid}
    request = {
        "model": OPENAI,
        "input": "Weather and AAPL?",
        "tools": [{"type": "function", "name": "get_weather", "parameters": WEATHER, "strict": False}],
    }
    if mode == "sync":
        http = httpx2.Client(transport=Transport(**kwargs))
        with openai.OpenAI(base_url=server.url("/v1"), api_key="sk-test", max_retries=0, http_client=http) as client:
            try:
                with client.responses.stream(**request) as stream:
                    events += stream
                    return stream.get_final_response(), events
            except (openai.APIError, RuntimeError) as exc:  # RuntimeError: no response.completed
                return exc, events

    async def run() -> tuple[Any, list[Any]]:
        http = httpx2.AsyncClient(transport=AsyncTransport(**kwargs))
        client = openai.AsyncOpenAI(base_url=server.url("/v1"), api_key="sk-test", max_retries=0, http_client=http)
        async with client:
            try:
                async with client.responses.stream(**request) as stream:
                    events.extend([event async for event in stream])
                    return await stream.get_final_response(), events
            except (openai.APIError, RuntimeError) as exc:
                return exc, events

    return asyncio.run(run())


def function_calls(output: list[Any]) -> list[tuple[Any, ...]]:
    return [(item.call_id, item.name, orjson.loads(item.arguments)) for item in output if item.type == "function_call"]


@pytest.mark.parametrize("mode", MODES)
def test_openai_responses_gets_one_response_of_valid_calls_and_the_model_is_told_of_the_bad_one(
    server: LoopbackServer, mode: str
) -> None:
    first = fixture("openai_responses/text_then_two_calls.sse")  # get_stock: no tool of the request
    final, events = responses(server, mode, first, answers.responses(" Fixed.", [ROME]))
    assert (final.id, final.status) == ("resp_1", "completed")
    assert function_calls(final.output) == [("call_A", "get_weather", {"city": "Paris"}), ROME]
    assert [item.id for item in final.output] == ["rs_1", "msg_1", "fc_A", "msg_resp_2", "fc_call_again_9"]
    added = [event.output_index for event in events if event.type == "response.output_item.added"]
    assert added == [0, 1, 2, 3, 4]
    texts = [event.delta for event in events if event.type == "response.output_text.delta"]
    assert texts == ["Checking both.", " Fixed."]
    numbers = [event.sequence_number for event in events]
    assert numbers == sorted(numbers)  # on from the first response (a call's events share its end's number)
    assert [event.type for event in events].count("response.created") == 1
    assert events[-1].type == "response.completed"
    assert len(server.requests) == 2
    asked, again = (orjson.loads(request.body) for request in server.requests)
    assert again["input"][0] == {"role": "user", "content": asked["input"]}
    results = [item for item in again["input"] if item.get("type") == "function_call_output"]
    assert [(item["call_id"], item["output"]) for item in results[:1]] == [("call_A", PENDING)]
    [(call_id, error)] = [(item["call_id"], orjson.loads(item["output"])) for item in results[1:]]
    assert call_id == "call_B" and error["ok"] is False
    assert [issue["kind"] for issue in error["errors"]] == ["unknown_tool"]


@pytest.mark.parametrize("mode", MODES)
def test_openai_responses_after_a_cut_call_ends_as_the_answer_ends(server: LoopbackServer, mode: str) -> None:
    cut = fixture("openai_responses/incomplete_truncated.sse")
    final, events = responses(server, mode, cut, answers.responses(" Shorter.", [ROME], stop="incomplete"))
    assert isinstance(final, RuntimeError) and "response.completed" in str(final)  # the SDK's own, on incomplete
    terminal = [event for event in events if event.type in ("response.completed", "response.incomplete")]
    assert [event.type for event in terminal] == ["response.incomplete"]
    [end] = terminal
    assert end.response.id == "resp_1"
    assert function_calls(end.response.output) == [ROME]
    error = orjson.loads(orjson.loads(server.requests[1].body)["input"][-1]["output"])
    assert [issue["kind"] for issue in error["errors"]] == ["truncated", "unknown_tool"]


@pytest.mark.parametrize("mode", MODES)
def test_openai_responses_model_that_keeps_sending_bad_calls_fails_the_body_after_the_rounds(
    server: LoopbackServer, mode: str
) -> None:
    first = fixture("openai_responses/text_then_two_calls.sse")
    again = answers.responses(" Again.", [("call_C", "get_stock", {"ticker": "AAPL"})])
    error, _ = responses(server, mode, first, again, invalid=BadCalls("tell", rounds=1))
    assert isinstance(error, openai.APIConnectionError)
    [refused] = [cause for cause in causes(error) if isinstance(cause, InvalidCallsError)]
    assert refused.rounds == 1 and [call.id for call in refused.invalid] == ["call_C"]
    assert len(server.requests) == 2


# -- Gemini (google-genai) -----------------------------------------------------------------------

GEMINI_PATH = f"/v1/models/{GEMINI}:streamGenerateContent"


def gemini(server: LoopbackServer, mode: str, *replies: Reply, invalid: Any = None) -> list[Any]:
    """One streamed request through google-genai offering ``get_weather`` only: its chunks."""
    genai = pytest.importorskip("google.genai")
    server.routes = Turns(GEMINI_PATH, *replies)
    kwargs = {} if invalid is None else {"invalid": invalid}
    weather = genai.types.FunctionDeclaration(name="get_weather", parameters=WEATHER)
    config = genai.types.GenerateContentConfig(tools=[genai.types.Tool(function_declarations=[weather])])
    retry = genai.types.HttpRetryOptions(attempts=1)
    if mode == "sync":
        with httpx2.Client(transport=Transport(**kwargs)) as http:
            options = genai.types.HttpOptions(base_url=server.url(""), httpx_client=http, retry_options=retry)
            client = genai.Client(api_key="k", http_options=options)
            return list(client.models.generate_content_stream(model=GEMINI, contents="hi", config=config))

    async def run() -> list[Any]:
        async with httpx2.AsyncClient(transport=AsyncTransport(**kwargs)) as http:
            options = genai.types.HttpOptions(base_url=server.url(""), httpx_async_client=http, retry_options=retry)
            client = genai.Client(api_key="k", http_options=options)
            stream = await client.aio.models.generate_content_stream(model=GEMINI, contents="hi", config=config)
            return [chunk async for chunk in stream]

    return asyncio.run(run())


@pytest.mark.parametrize("mode", MODES)
def test_gemini_gets_one_response_of_valid_calls_and_the_model_is_told_of_the_bad_one(
    server: LoopbackServer, mode: str
) -> None:
    first = fixture("gemini/text_then_two_calls.sse")  # get_stock: no tool of the request
    chunks = gemini(server, mode, first, answers.gemini(" Fixed.", [ROME]))
    parts = [part for chunk in chunks for part in chunk.candidates[0].content.parts or []]
    calls = [(part.function_call.name, part.function_call.args) for part in parts if part.function_call]
    assert calls == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    assert "".join(part.text for part in parts if part.text) == "Checking both. Fixed."
    assert [chunk.candidates[0].finish_reason for chunk in chunks if chunk.candidates[0].finish_reason] == ["STOP"]
    assert chunks[-1].usage_metadata.total_token_count == 14
    assert len(server.requests) == 2
    contents = orjson.loads(server.requests[1].body)["contents"]
    assert [content["role"] for content in contents] == ["user", "model", "user"]
    names = [part["functionCall"]["name"] for part in contents[1]["parts"] if "functionCall" in part]
    assert names == ["get_weather", "get_stock"]
    weather, stock = (part["functionResponse"] for part in contents[2]["parts"])
    assert weather == {"name": "get_weather", "response": {"output": PENDING}}
    error = stock["response"]["error"]
    assert stock["name"] == "get_stock" and error["ok"] is False
    assert [issue["kind"] for issue in error["errors"]] == ["unknown_tool"]


@pytest.mark.parametrize("mode", MODES)
def test_gemini_model_that_keeps_sending_bad_calls_fails_the_body_after_the_rounds(
    server: LoopbackServer, mode: str
) -> None:
    bad = fixture("gemini/text_then_two_calls.sse")
    with pytest.raises(httpx2.RemoteProtocolError) as raised:
        gemini(server, mode, bad, invalid=BadCalls("tell", rounds=2))
    [refused] = [cause for cause in causes(raised.value) if isinstance(cause, InvalidCallsError)]
    assert refused.rounds == 2 and [call.name for call in refused.invalid] == ["get_stock"]
    assert len(server.requests) == 3


# -- Cohere and Ollama, read back by streamkit ---------------------------------------------------


def plain(server: LoopbackServer, path: str, request: dict[str, Any], *replies: Reply) -> bytes:
    """The re-emitted body of one request through the transport, read whole."""
    server.routes = Turns(path, *replies)
    with httpx2.Client(transport=Transport()) as http:
        response = http.post(server.url(path), json=request)
        body: bytes = response.read()
        return body


def test_cohere_gets_one_message_of_valid_calls_and_the_model_is_told_of_the_bad_one(server: LoopbackServer) -> None:
    request = {
        "model": "command-a",
        "stream": True,
        "messages": [{"role": "user", "content": "Weather and AAPL?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}],
    }
    first = fixture("cohere/text_then_two_calls.sse")
    body = plain(server, "/v2/chat", request, first, answers.cohere(" Fixed.", [ROME]))
    turn = streamkit.collect_turn([body], "cohere")
    assert [(call.id, call.name, call.input) for call in turn.calls] == [
        ("get_weather_e8p4pn45zt0t", "get_weather", {"city": "Paris"}),
        ROME,
    ]
    assert (turn.text, turn.stop_reason) == ("I will check both. Fixed.", "TOOL_CALL")
    frames = [orjson.loads(line[6:]) for line in body.split(b"\n") if line.startswith(b"data: ")]
    assert [frame["index"] for frame in frames if frame["type"] == "tool-call-start"] == [0, 1]
    assert [frame["type"] for frame in frames].count("message-start") == 1
    assert [frame["type"] for frame in frames].count("message-end") == 1
    assert len(server.requests) == 2
    told = orjson.loads(server.requests[1].body)["messages"][1:]
    assert [entry["role"] for entry in told] == ["assistant", "tool", "tool"]
    error = orjson.loads(told[2]["content"][0]["document"]["data"])
    assert told[2]["tool_call_id"] == "get_stock_pyxssbwnq9fq" and error["ok"] is False
    assert [issue["kind"] for issue in error["errors"]] == ["unknown_tool"]


def test_ollama_gets_one_message_of_valid_calls_and_the_model_is_told_of_the_bad_one(server: LoopbackServer) -> None:
    request = {
        "model": "qwen3",
        "messages": [{"role": "user", "content": "Weather and AAPL?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}}],
    }
    first = Reply(
        split_awkwardly((FIXTURES / "ollama/text_then_two_calls.ndjson").read_bytes()),
        content_type="application/x-ndjson",
    )
    body = plain(server, "/api/chat", request, first, answers.ollama(" Fixed.", [ROME]))
    turn = streamkit.collect_turn([body], "ollama")
    assert [(call.id, call.name, call.input) for call in turn.calls] == [
        ("call_k3j9x0qa", "get_weather", {"city": "Paris", "unit": "celsius"}),
        ROME,
    ]
    assert (turn.text, turn.stop_reason) == ("Checking both. Fixed.", "stop")
    lines = [orjson.loads(line) for line in body.splitlines()]
    indexes = [entry["function"]["index"] for line in lines for entry in line["message"].get("tool_calls", ())]
    assert indexes == [0, 1]
    assert [line["done"] for line in lines].count(True) == 1 and lines[-1]["done"] is True
    assert len(server.requests) == 2
    told = orjson.loads(server.requests[1].body)["messages"][1:]
    assert [entry["role"] for entry in told] == ["assistant", "tool", "tool"]
    assert (told[1]["tool_name"], told[1]["content"]) == ("get_weather", PENDING)
    error = orjson.loads(told[2]["content"])
    assert told[2]["tool_name"] == "get_stock" and error["ok"] is False
    assert [issue["kind"] for issue in error["errors"]] == ["unknown_tool"]


# -- Every fixture with a bad call, by itself ----------------------------------------------------

#: Each format's clean answer, asked again.
ANSWERS: dict[str, Callable[[str, list[answers.Answered]], Reply]] = {
    "openai_chat": answers.chat,
    "mistral": answers.chat,
    "anthropic": answers.messages,
    "openai_responses": answers.responses,
    "gemini": answers.gemini,
    "cohere": answers.cohere,
    "ollama": answers.ollama,
}
#: A request's tools when the fixture's calls are checked against some: ``get_weather`` only.
OFFERED = streamkit.Toolset([{"name": "get_weather", "parameters": WEATHER}])


def _session(fixture: Fixture, toolset: streamkit.Toolset | None) -> Session:
    history = FACTS[fixture.provider].history_key
    assert history is not None
    return Session(fixture.provider, "/", toolset, Limits(), asked={history: []})


def _told(fixture: Fixture, toolset: streamkit.Toolset | None) -> bool:
    """Whether the fixture holds a bad call the model is told of (no stream error, no cut body)."""
    session = _session(fixture, toolset)
    session.feed(fixture.path.read_bytes())
    session.flush()
    return session.again is not None


CASES = [
    pytest.param(fixture, toolset, id=f"{fixture.case}-{'offered' if toolset else 'any'}")
    for fixture in fixtures()
    if fixture.provider in ENCODERS and ENCODERS[fixture.provider].continues
    for toolset in (None, OFFERED)
    if _told(fixture, toolset)
]


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[start : start + size] for start in range(0, len(data), size)]


def _meaning(call: Call) -> tuple[Any, ...]:
    return (type(call).__name__, call.id, call.name, call.input)


@pytest.mark.parametrize("size", [1, 7])
@pytest.mark.parametrize(("fixture", "toolset"), CASES)
def test_every_bad_call_fixture_goes_on_with_the_answer_as_one_response(
    fixture: Fixture, toolset: streamkit.Toolset | None, size: int
) -> None:
    session = _session(fixture, toolset)
    out = b"".join(session.feed(chunk) for chunk in _chunks(fixture.path.read_bytes(), size)) + session.flush()
    assert session.again is not None and not session.stopped
    valid = [call for call in session.calls if not isinstance(call, InvalidToolCall)]
    assert session.left_out
    session.resume(None)
    answer = b"".join(ANSWERS[fixture.provider](" Fixed.", [ROME]).writes)
    out += b"".join(session.feed(chunk) for chunk in _chunks(answer, size)) + session.flush()
    assert session.again is None and not session.stopped
    provider: Provider = fixture.provider
    calls = list(streamkit.iter_tool_calls([out], provider))
    assert [_meaning(call) for call in calls] == [*map(_meaning, valid), ("ToolCall", *ROME)]
    assert len({call.index for call in calls}) == len(calls)
    assert all(isinstance(call, ToolCall | streamkit.CustomToolCall) for call in calls)
    turn = streamkit.collect_turn([out], provider)
    assert turn.text.endswith(" Fixed.")


# -- The proxy's Responses route -----------------------------------------------------------------


def test_the_proxys_responses_tell_route_streams_one_response_of_valid_calls(upstream: LoopbackServer) -> None:
    """A ``tell`` route of ``streamkit serve`` in OpenAI Responses, whose calls are written whole:
    the model is told of the bad call and the SDK reads one response, as through the transports."""
    pytest.importorskip("uvicorn")
    from .serving import CLIENTS, PROXY_KEY, RESPONSES_TOOLS, keyed_proxy, reply, route

    answer = answers.responses(" Fixed.", [("call_9", "get_weather", {"city": "Paris"})])
    with keyed_proxy(upstream, route(upstream, "openai_responses", invalid="tell")) as served:
        before = len(upstream.requests)
        upstream.routes = Turns(RESPONSES_PATH, reply("openai_responses", "schema_error"), answer)
        client = CLIENTS.add(openai.OpenAI(base_url=served.url + "/v1", api_key=PROXY_KEY, max_retries=0))
        with client.responses.stream(model=OPENAI, input="Paris?", tools=RESPONSES_TOOLS) as stream:
            events = list(stream)
            final = stream.get_final_response()
    assert (final.id, final.status, final.output_text) == ("resp_s1", "completed", " Fixed.")
    assert function_calls(final.output) == [("call_9", "get_weather", {"city": "Paris"})]
    assert [event.output_index for event in events if event.type == "response.output_item.added"] == [0, 1]
    _, again = upstream.requests[before:]
    told = orjson.loads(again.body)["input"]
    assert told[0] == {"role": "user", "content": "Paris?"}
    [error] = [orjson.loads(item["output"]) for item in told if item.get("call_id") == "call_w" and "output" in item]
    assert [issue["kind"] for issue in error["errors"]] == ["schema"]
