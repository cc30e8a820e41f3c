"""``streamkit serve`` with responses that are not streamed: the same checks on the whole body."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")

from .server import LoopbackServer, Reply
from .serving import PROXY_KEY, TOOLS, Proxy, keyed_proxy, route

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")


def chat_body(arguments: str, finish: str = "tool_calls") -> bytes:
    call = {"id": "call_w", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    return json.dumps(body).encode()


def messages_body(tool_input: Any, stop: str = "tool_use") -> bytes:
    block = {"type": "tool_use", "id": "toolu_w", "name": "get_weather", "input": tool_input}
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return json.dumps(body).encode()


CUT = "truncated: the arguments were cut off before the call ended (output limit reached or stream ended)"
ONE = 'schema: 1 is not of type "string"'
TOWN = '"town" is not a property this tool accepts'
WEATHER = [{"name": "get_weather", "input_schema": TOOLS[0]["function"]["parameters"]}]


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with keyed_proxy(upstream, route(upstream), route(upstream, "anthropic")) as running:
        yield running


def chat(served: Proxy, upstream: LoopbackServer, body: bytes) -> Any:
    upstream.routes["/v1/chat/completions"] = Reply([body], content_type="application/json", chunked=False)
    with openai.OpenAI(base_url=served.url + "/v1", api_key=PROXY_KEY, max_retries=0) as client:
        return client.chat.completions.create(model="m", messages=[], tools=TOOLS)


def test_a_valid_whole_response_passes_as_it_came(served: Proxy, upstream: LoopbackServer) -> None:
    completion = chat(served, upstream, chat_body('{"city": "Paris"}'))
    call = completion.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name, call.function.arguments) == ("call_w", "get_weather", '{"city": "Paris"}')


@pytest.mark.parametrize(
    ("body", "issue"),
    [
        (chat_body('{"city": 42}'), 'schema: 42 is not of type "string"'),
        (chat_body('{"city": "Pa', finish="length"), CUT),
        (chat_body('{"town": "Paris"}'), f'schema: {TOWN}; schema: the required property "city" is missing'),
    ],
)
def test_an_invalid_whole_call_is_withheld_as_a_422_no_client_retries(
    served: Proxy, upstream: LoopbackServer, body: bytes, issue: str
) -> None:
    before = len(upstream.requests)
    with pytest.raises(openai.UnprocessableEntityError) as raised:
        chat(served, upstream, body)
    assert raised.value.status_code == 422
    assert len(upstream.requests) == before + 1  # a 422: a status no SDK retries (the 502 it was, they do)
    assert raised.value.body == {
        "message": f"streamkit withheld an invalid tool call: at index 0 (get_weather, id call_w): {issue}",
        "type": "invalid_tool_call",
        "param": None,
        "code": None,
    }


def test_anthropic_whole_response_checked(served: Proxy, upstream: LoopbackServer) -> None:
    client = anthropic.Anthropic(base_url=served.url, api_key=PROXY_KEY, max_retries=0)
    with client:
        _check_messages(client, upstream)


def _check_messages(client: Any, upstream: LoopbackServer) -> None:
    upstream.routes["/v1/messages"] = Reply(
        [messages_body({"city": "Oslo"})], content_type="application/json", chunked=False
    )
    message = client.messages.create(model="m", max_tokens=10, messages=[], tools=WEATHER)
    assert [(b.id, b.input) for b in message.content] == [("toolu_w", {"city": "Oslo"})]
    upstream.routes["/v1/messages"] = Reply(
        [messages_body({"city": 1})], content_type="application/json", chunked=False
    )
    with pytest.raises(anthropic.APIStatusError) as raised:
        client.messages.create(model="m", max_tokens=10, messages=[], tools=WEATHER)
    assert raised.value.status_code == 422
    assert raised.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_tool_call",
            "message": f"streamkit withheld an invalid tool call: at index 0 (get_weather, id toolu_w): {ONE}",
        },
    }


def test_a_whole_answer_the_upstream_cuts_is_a_502_that_says_so(served: Proxy, upstream: LoopbackServer) -> None:
    """A chunked JSON body that stops in the middle: the client gets the format's error, not a 500."""
    cut = Reply([chat_body('{"city": "Paris"}')[:40]], content_type="application/json", cut=True)
    upstream.routes["/v1/chat/completions"] = cut
    client = openai.OpenAI(base_url=served.url + "/v1", api_key=PROXY_KEY, max_retries=0)
    with client, pytest.raises(openai.InternalServerError) as raised:
        client.chat.completions.create(model="m", messages=[], tools=TOOLS)
    assert raised.value.status_code == 502
    assert raised.value.body["type"] == "api_error"
    assert raised.value.body["message"].startswith("the upstream's answer failed: RemoteProtocolError: ")
