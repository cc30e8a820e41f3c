"""``streamkit serve`` for Anthropic Messages and OpenAI Responses, read by their official SDKs.

Each transcript of fixtures/serve/<format>/ is replayed by the loopback server, one event per
write; the SDK reads the proxy's stream as it reads the provider's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

from .helpers import ROOT
from .models import ANTHROPIC, OPENAI
from .server import LoopbackServer, Reply
from .serving import (
    ANTHROPIC_TOOLS,
    CLIENTS,
    PROXY_KEY,
    RESPONSES_TOOLS,
    UPSTREAM_KEY,
    Proxy,
    keyed_proxy,
    reply,
    route,
)

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

CUT = "truncated: the arguments were cut off before the call ended (output limit reached or stream ended)"
NOT_JSON = "invalid_json: the arguments are not valid JSON: trailing comma is not allowed"
SCHEMA = 'schema: 42 is not of type "string"'


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with keyed_proxy(upstream, route(upstream, "anthropic"), route(upstream, "openai_responses")) as running:
        yield running


# -- Anthropic Messages ----------------------------------------------------------------------------


def messages(served: Proxy, upstream: LoopbackServer, case: str) -> Any:
    upstream.routes["/v1/messages"] = reply("anthropic", case)
    headers = {"anthropic-version": "2023-06-01"}
    client = CLIENTS.add(
        anthropic.Anthropic(base_url=served.url, api_key=PROXY_KEY, max_retries=0, default_headers=headers)
    )
    return client.messages.stream(model=ANTHROPIC, max_tokens=100, messages=[], tools=ANTHROPIC_TOOLS)


def test_anthropic_calls_come_whole_and_the_sdk_parses_them(served: Proxy, upstream: LoopbackServer) -> None:
    with messages(served, upstream, "two_calls") as stream:
        final = stream.get_final_message()
    assert [(b.type, getattr(b, "text", None), getattr(b, "input", None)) for b in final.content] == [
        ("text", "Checking both.", None),
        ("tool_use", None, {"city": "Paris"}),
        ("tool_use", None, {"ticker": "AAPL"}),
    ]
    assert [b.id for b in final.content[1:]] == ["toolu_w", "toolu_s"]
    assert final.stop_reason == "tool_use"
    sent = upstream.requests[-1]
    assert sent.headers["x-api-key"] == UPSTREAM_KEY  # the route's key, in Anthropic's header
    assert sent.headers["anthropic-version"] == "2023-06-01"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("invalid_json", f"at index 0 (get_weather, id toolu_w): {NOT_JSON}"),
        ("schema_error", f"at index 0 (get_weather, id toolu_w): {SCHEMA}"),
        ("cut_call", f"at index 0 (get_weather, id toolu_w): {CUT}"),
    ],
)
def test_anthropic_invalid_calls_are_withheld_and_the_sdk_raises(
    served: Proxy, upstream: LoopbackServer, case: str, message: str
) -> None:
    seen: list[Any] = []
    with pytest.raises(anthropic.APIStatusError) as raised, messages(served, upstream, case) as stream:
        seen.extend(stream)
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "invalid_tool_call", "message": f"streamkit withheld an invalid tool call: {message}"},
    }
    assert not [event for event in seen if event.type == "content_block_start"]  # the call never began


def test_anthropic_in_stream_error_echoing_the_key_is_scrubbed(served: Proxy, upstream: LoopbackServer) -> None:
    with pytest.raises(anthropic.APIStatusError) as raised, messages(served, upstream, "error_echoes_key") as stream:
        list(stream)
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key: [REDACTED]"},
    }


def test_anthropic_wrong_proxy_key_is_refused_in_anthropics_shape(served: Proxy, upstream: LoopbackServer) -> None:
    client = CLIENTS.add(anthropic.Anthropic(base_url=served.url, api_key="sk-wrong-key", max_retries=0))
    with pytest.raises(anthropic.AuthenticationError) as raised:
        client.messages.create(model="m", max_tokens=10, messages=[])
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": "a missing or wrong proxy key"},
    }


# -- OpenAI Responses ------------------------------------------------------------------------------


def responses(served: Proxy, upstream: LoopbackServer, case: str) -> list[Any]:
    upstream.routes["/v1/responses"] = reply("openai_responses", case)
    client = CLIENTS.add(openai.OpenAI(base_url=served.url + "/v1", api_key=PROXY_KEY, max_retries=0))
    return list(client.responses.create(model=OPENAI, input="hi", tools=RESPONSES_TOOLS, stream=True))


def test_responses_calls_come_whole_and_the_sdk_reads_them(served: Proxy, upstream: LoopbackServer) -> None:
    events = responses(served, upstream, "two_calls")
    done = [e.item for e in events if e.type == "response.output_item.done" and e.item.type == "function_call"]
    assert [(item.call_id, item.name, item.arguments) for item in done] == [
        ("call_w", "get_weather", '{"city":"Paris"}'),
        ("call_s", "get_stock", '{"ticker":"AAPL"}'),
    ]
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert deltas == ['{"city":"Paris"}', '{"ticker":"AAPL"}']  # one delta a call, whole
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == ["Checking both."]
    assert events[-1].type == "response.completed"
    assert upstream.requests[-1].headers["authorization"] == f"Bearer {UPSTREAM_KEY}"


@pytest.mark.parametrize(
    ("case", "message", "code"),
    [
        ("invalid_json", f"at index 0 (get_weather, id call_w): {NOT_JSON}", "invalid_json"),
        ("schema_error", f"at index 0 (get_weather, id call_w): {SCHEMA}", "schema"),
        ("cut_call", f"at index 0 (get_weather, id call_w): {CUT}", "truncated"),
    ],
)
def test_responses_invalid_calls_are_withheld_as_an_error_event(
    served: Proxy, upstream: LoopbackServer, case: str, message: str, code: str
) -> None:
    events = responses(served, upstream, case)
    assert [e.type for e in events] == ["response.created", "response.in_progress", "error", "response.failed"]
    error, failed = events[-2:]
    assert (error.code, error.message) == (code, f"streamkit withheld an invalid tool call: {message}")
    # numbered on from the events read (the last one read is the withheld call's), as clients that
    # check the events' types require; then the terminal event a client stops on
    numbers = [e.sequence_number for e in events]
    assert numbers[:2] == [0, 1] and numbers[2] > 1 and numbers[3] == numbers[2] + 1
    assert (failed.response.status, failed.response.id, failed.response.output) == ("failed", events[0].response.id, [])
    assert (failed.response.error.code, failed.response.error.message) == (code, error.message)


def test_responses_pass_route_marks_and_passes_the_invalid_call(upstream: LoopbackServer) -> None:
    with keyed_proxy(upstream, route(upstream, "openai_responses", invalid="pass")) as passing:
        upstream.routes["/v1/responses"] = reply("openai_responses", "invalid_json")
        body = {"model": "m", "input": "hi", "tools": RESPONSES_TOOLS, "stream": True}
        text = httpx.post(passing.url + "/v1/responses", json=body, headers={"x-api-key": PROXY_KEY}).text
    mark = f": streamkit: invalid tool call at index 0 (get_weather, id call_w): {NOT_JSON}\n\n"
    assert mark in text
    after = text[text.index(mark) + len(mark) :]
    assert json.loads(after.split("\n")[1].removeprefix("data: "))["item"]["call_id"] == "call_w"
    assert '"delta":"{\\"city\\": \\"Paris\\",}"' in after  # its raw text, as the model sent it


# -- OpenAI Responses custom tools -------------------------------------------------------------------

CUSTOM_TOOLS = json.loads((ROOT / "fixtures" / "openai_responses" / "custom_tools.json").read_text(encoding="utf-8"))


def custom(served: Proxy, upstream: LoopbackServer, case: str) -> list[Any]:
    data = (ROOT / "fixtures" / "openai_responses" / f"{case}.sse").read_bytes()
    upstream.routes["/v1/responses"] = Reply([event + b"\n\n" for event in data.split(b"\n\n") if event.strip()])
    client = CLIENTS.add(openai.OpenAI(base_url=served.url + "/v1", api_key=PROXY_KEY, max_retries=0))
    return list(client.responses.create(model=OPENAI, input="hi", tools=CUSTOM_TOOLS, stream=True))


def test_responses_custom_calls_come_whole_beside_function_calls(served: Proxy, upstream: LoopbackServer) -> None:
    events = custom(served, upstream, "custom_tool_beside_function")
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [(item.type, item.call_id, item.name) for item in done] == [
        ("function_call", "call_w1", "get_weather"),
        ("custom_tool_call", "call_p1", "apply_patch"),
    ]
    patch = "*** Begin Patch\n*** Update File: a.py\n-x = 1\n+x = 2\n*** End Patch"
    assert done[1].input == patch
    deltas = [e.delta for e in events if e.type == "response.custom_tool_call_input.delta"]
    assert deltas == [patch]  # one delta a call, whole
    final = events[-1].response.output
    assert [(item.type, getattr(item, "input", None)) for item in final] == [
        ("function_call", None),
        ("custom_tool_call", patch),
    ]


def test_responses_custom_call_failing_its_grammar_is_withheld(served: Proxy, upstream: LoopbackServer) -> None:
    events = custom(served, upstream, "custom_tool_grammar_regex")
    error, failed = events[-2:]
    assert (error.type, failed.type, failed.response.error.code) == ("error", "response.failed", "grammar")
    assert (error.code, error.message) == (
        "grammar",
        "streamkit withheld an invalid tool call: at index 1 (set_date, id call_d2): grammar: "
        "the input does not match the tool's regex grammar (the whole text must match)",
    )
