"""Reasoning an OpenAI-compatible upstream gives unsigned (DeepSeek's ``reasoning_content``) goes
to a Messages or Responses client in a form it sends back, and back to the upstream with the
tool-calling turn it belongs to: DeepSeek's thinking mode refuses that turn without it (400, "The
reasoning_content in the thinking mode must be passed back to the API").

The real SDKs are the clients; the loopback upstream answers with a recorded DeepSeek turn
(fixtures/openai_chat/reasoning_content_then_call.sse).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from streamkit._turn_types import UNSIGNED
from streamkit.serve._translate import translate

pytest.importorskip("uvicorn")  # the proxy

from .helpers import FIXTURES
from .server import LoopbackServer, Reply, Turns, bodies
from .serving import Proxy, claude, gpt, translating_proxy

CHAT = "/v1/chat/completions"
REASONED = Reply([(FIXTURES / "openai_chat/reasoning_content_then_call.sse").read_bytes()])
ANSWER = Reply(
    [
        b'data: {"id":"c2","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
        b'"delta":{"role":"assistant","content":"Sunny."},"finish_reason":"stop"}]}\n\n',
        b"data: [DONE]\n\n",
    ]
)
THOUGHT = "Need the weather tool."
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
#: The assistant message the upstream must get back: its reasoning with its call.
SENT_BACK = {
    "role": "assistant",
    "content": None,
    "reasoning_content": THOUGHT,
    "tool_calls": [
        {"id": "call_00_x", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
    ],
}
RESULT = {"role": "tool", "tool_call_id": "call_00_x", "content": "21C"}


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with translating_proxy(upstream, "openai_chat", "anthropic", "openai_responses") as running:
        yield running


def sent(upstream: LoopbackServer, since: int) -> list[dict[str, Any]]:
    assert {request.target for request in upstream.requests[since:]} == {CHAT}
    return bodies(upstream, since)


def test_a_messages_client_gets_the_reasoning_as_thinking_and_the_upstream_gets_it_back(
    served: Proxy, upstream: LoopbackServer
) -> None:
    client = claude(served)
    tools = [{"name": "get_weather", "input_schema": WEATHER}]
    asked = [{"role": "user", "content": "Weather in Paris?"}]
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, REASONED, ANSWER)
    with client.messages.stream(model="m", max_tokens=100, messages=asked, tools=tools) as stream:
        first = stream.get_final_message()
    thinking, call = first.content
    assert (thinking.type, thinking.thinking, thinking.signature) == ("thinking", THOUGHT, UNSIGNED)
    assert (call.type, call.id, call.name, call.input) == ("tool_use", "call_00_x", "get_weather", {"city": "Paris"})
    result = {"type": "tool_result", "tool_use_id": call.id, "content": "21C"}
    history = [*asked, {"role": "assistant", "content": first.content}, {"role": "user", "content": [result]}]
    second = client.messages.create(model="m", max_tokens=100, messages=history, tools=tools)
    assert [block.text for block in second.content] == ["Sunny."]
    _, again = sent(upstream, since)
    assert again["messages"][1:] == [SENT_BACK, RESULT]


def test_a_responses_client_gets_a_reasoning_item_it_sends_back_and_the_upstream_gets_it(
    served: Proxy, upstream: LoopbackServer
) -> None:
    client = gpt(served)
    tools = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
    asked = [{"role": "user", "content": "Weather in Paris?"}]
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, REASONED, ANSWER)
    with client.responses.stream(model="m", input=asked, tools=tools, store=False) as stream:
        first = stream.get_final_response()
    reasoning, call = first.output
    assert (reasoning.type, [part.text for part in reasoning.summary]) == ("reasoning", [THOUGHT])
    assert reasoning.encrypted_content == UNSIGNED
    assert (call.type, call.call_id, call.name) == ("function_call", "call_00_x", "get_weather")
    items = [item.model_dump(exclude_none=True) for item in first.output]
    output = {"type": "function_call_output", "call_id": "call_00_x", "output": "21C"}
    second = client.responses.create(model="m", input=[*asked, *items, output], tools=tools, store=False)
    assert second.output_text == "Sunny."
    _, again = sent(upstream, since)
    assert again["messages"][1:] == [SENT_BACK, RESULT]


def test_signed_thinking_is_anthropics_and_never_goes_to_a_chat_upstream_as_reasoning() -> None:
    """A thinking block Anthropic signed is its provider's state: a Chat upstream gets the turn
    without it (as before); only reasoning streamkit marked unsigned is carried back."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
    request = {
        "model": "m",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "Hm.", "signature": "EqQB"}, call]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "21C"}]},
        ],
    }
    assert "reasoning_content" not in translate("anthropic", "openai_chat", request).body["messages"][1]
