"""``emit = "fragments"``: each call streamed as it arrives, read by the official SDKs' accumulators.

The proxy runs under uvicorn in front of the loopback server, which replays fixtures/serve/
one event per write. A valid call reaches the SDK's own ``done`` (its end marker) with the
arguments the provider streamed; an invalid or cut call never does: the stream ends with the
format's error event before its end, and the SDK raises.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamkit
from streamkit import Limits, Provider
from streamkit._reemit import BadCalls
from streamkit._validate import Toolset
from streamkit.serve._fragments import ServeSession

pytest.importorskip("uvicorn")

from .helpers import ROOT, split_at
from .models import OPENAI
from .server import LoopbackServer, Reply
from .serving import (
    ANTHROPIC_TOOLS,
    CLIENTS,
    FIXTURES,
    PROXY_KEY,
    RESPONSES_TOOLS,
    TOOLS,
    Proxy,
    keyed_proxy,
    reply,
    route,
)

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

WITHHELD = "streamkit withheld an invalid tool call: at index"
BAD_CASES = ["cut_call", "invalid_json", "schema_error"]


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    routes = [route(upstream, fmt, emit="fragments") for fmt in ("openai_chat", "anthropic", "openai_responses")]
    with keyed_proxy(upstream, *routes) as running:
        yield running


# -- OpenAI Chat Completions -----------------------------------------------------------------------


def chat(served: Proxy, upstream: LoopbackServer, case: str) -> tuple[list[Any], list[Any], Exception | None]:
    """The SDK accumulator's argument deltas and completed calls (``arguments.done``), and what it raised."""
    upstream.routes["/v1/chat/completions"] = reply("openai_chat", case)
    client = CLIENTS.add(openai.OpenAI(base_url=served.url + "/v1", api_key=PROXY_KEY, max_retries=0))
    deltas: list[Any] = []
    done: list[Any] = []
    try:
        with client.chat.completions.stream(model="llama3.1", messages=[], tools=TOOLS) as stream:
            for event in stream:
                if event.type == "tool_calls.function.arguments.delta" and event.arguments_delta:  # not a start's ""
                    deltas.append((event.index, event.arguments_delta))
                elif event.type == "tool_calls.function.arguments.done":
                    done.append((event.index, event.name, event.arguments))
    except openai.APIError as exc:
        return deltas, done, exc
    return deltas, done, None


def test_chat_parallel_calls_at_index_zero_stream_at_their_own_indexes(served: Proxy, upstream: LoopbackServer) -> None:
    deltas, done, raised = chat(served, upstream, "parallel_index_zero")
    assert raised is None
    # the provider's own pieces, as they came: the first call's two, the second's one
    assert deltas == [(0, '{"city": "Pa'), (0, 'ris"}'), (1, '{"ticker": "AAPL"}')]
    assert done == [(0, "get_weather", '{"city": "Paris"}'), (1, "get_stock", '{"ticker": "AAPL"}')]


def test_chat_a_call_without_index_gets_one(served: Proxy, upstream: LoopbackServer) -> None:
    deltas, done, raised = chat(served, upstream, "index_missing")
    assert raised is None
    assert deltas == [(0, '{"city": '), (0, '"Oslo"}')]
    assert done == [(0, "get_weather", '{"city": "Oslo"}')]


@pytest.mark.parametrize("case", BAD_CASES)
def test_chat_an_invalid_call_never_completes_in_the_sdk(served: Proxy, upstream: LoopbackServer, case: str) -> None:
    deltas, done, raised = chat(served, upstream, case)
    assert isinstance(raised, openai.APIError)
    assert raised.message.startswith(WITHHELD)
    assert done == []  # the accumulator completed nothing: neither a finish reason nor a next index came
    assert deltas  # the arguments did stream, up to the bad call


def test_chat_a_call_after_an_open_one_waits_for_its_end(served: Proxy, upstream: LoopbackServer) -> None:
    """cut_call: get_stock starts while get_weather is open (both end at the finish reason, which
    cuts get_stock); get_stock's start would end get_weather in the SDK, so it is never sent."""
    deltas, _, _ = chat(served, upstream, "cut_call")
    assert deltas == [(0, '{"city": "Paris"}')]


def test_chat_a_pass_route_marks_the_invalid_call_before_its_end(upstream: LoopbackServer) -> None:
    with keyed_proxy(upstream, route(upstream, emit="fragments", invalid="pass")) as running:
        upstream.routes["/v1/chat/completions"] = reply("openai_chat", "schema_error")
        body = {"model": "m", "messages": [], "tools": TOOLS, "stream": True}
        headers = {"authorization": f"Bearer {PROXY_KEY}"}
        text = httpx.post(running.url + "/v1/chat/completions", json=body, headers=headers, timeout=10).text
    events = text.split("\n\n")
    mark = next(n for n, event in enumerate(events) if event.startswith(": streamkit: invalid tool call"))
    assert events[mark] == (
        ': streamkit: invalid tool call at index 0 (get_weather, id call_w): schema: 42 is not of type "string"'
    )
    assert '"finish_reason":"tool_calls"' in events[mark + 1]  # the mark comes just before the call's end
    assert '"arguments":"{\\"city\\": 42}"' in "".join(events[:mark])
    assert events[-2] == "data: [DONE]"


# -- Anthropic Messages ----------------------------------------------------------------------------


def messages(served: Proxy, upstream: LoopbackServer, case: str) -> tuple[list[Any], list[Any], Exception | None]:
    """The SDK's partial-JSON snapshots and its completed tool_use blocks, and what it raised."""
    upstream.routes["/v1/messages"] = reply("anthropic", case)
    headers = {"anthropic-version": "2023-06-01"}
    client = CLIENTS.add(
        anthropic.Anthropic(base_url=served.url, api_key=PROXY_KEY, max_retries=0, default_headers=headers)
    )
    snapshots: list[Any] = []
    done: list[Any] = []
    try:
        with client.messages.stream(model="m", max_tokens=100, messages=[], tools=ANTHROPIC_TOOLS) as stream:
            for event in stream:
                if event.type == "input_json":
                    snapshots.append(event.snapshot)
                elif event.type == "content_block_stop" and event.content_block.type == "tool_use":
                    done.append((event.index, event.content_block.id, event.content_block.input))
    except (anthropic.APIStatusError, ValueError) as exc:
        return snapshots, done, exc
    return snapshots, done, None


def test_anthropic_calls_stream_and_complete(served: Proxy, upstream: LoopbackServer) -> None:
    snapshots, done, raised = messages(served, upstream, "two_calls")
    assert raised is None
    assert snapshots == [{}, {"city": "Paris"}, {"ticker": "AAPL"}]  # the SDK's partial JSON, fragment by fragment
    assert done == [(1, "toolu_w", {"city": "Paris"}), (2, "toolu_s", {"ticker": "AAPL"})]


@pytest.mark.parametrize("case", BAD_CASES)
def test_anthropic_an_invalid_call_never_completes_in_the_sdk(
    served: Proxy, upstream: LoopbackServer, case: str
) -> None:
    _, done, raised = messages(served, upstream, case)
    assert done == []  # no content_block_stop: the SDK's block stays open, and the stream raises
    if case == "invalid_json":  # the SDK's own partial-JSON parser fails first, as it would on the provider's
        assert isinstance(raised, ValueError)
    else:
        assert isinstance(raised, anthropic.APIStatusError)
        assert raised.body["error"]["message"].startswith(WITHHELD)


# -- OpenAI Responses ------------------------------------------------------------------------------


def responses(served: Proxy, upstream: LoopbackServer, case: str) -> tuple[list[Any], list[Any], Any]:
    """The argument deltas, the completed function_call items, and the error event or final response."""
    upstream.routes["/v1/responses"] = reply("openai_responses", case)
    client = CLIENTS.add(openai.OpenAI(base_url=served.url + "/v1", api_key=PROXY_KEY, max_retries=0))
    deltas: list[Any] = []
    done: list[Any] = []
    end: Any = None
    with client.responses.stream(model="m", input="hi", tools=RESPONSES_TOOLS) as stream:
        for event in stream:
            if event.type == "response.function_call_arguments.delta":
                deltas.append((event.output_index, event.delta))
            elif event.type == "response.output_item.done" and event.item.type == "function_call":
                done.append((event.output_index, event.item.call_id, event.item.arguments))
            elif event.type in ("error", "response.completed"):
                end = event
    return deltas, done, end


def test_responses_calls_stream_and_complete(served: Proxy, upstream: LoopbackServer) -> None:
    deltas, done, end = responses(served, upstream, "two_calls")
    assert deltas == [(1, '{"city": '), (1, '"Paris"}'), (2, '{"ticker": "AAPL"}')]
    assert done == [(1, "call_w", '{"city": "Paris"}'), (2, "call_s", '{"ticker": "AAPL"}')]
    assert end.type == "response.completed"


@pytest.mark.parametrize("case", BAD_CASES)
def test_responses_an_invalid_call_never_completes_in_the_sdk(
    served: Proxy, upstream: LoopbackServer, case: str
) -> None:
    deltas, done, end = responses(served, upstream, case)
    assert deltas
    assert done == []
    assert end.type == "error"
    assert end.message.startswith(WITHHELD)


# -- The session itself, without a server ----------------------------------------------------------

VALID: list[tuple[Provider, str]] = [
    ("openai_chat", "parallel_index_zero"),
    ("openai_chat", "index_missing"),
    ("openai_chat", "interleaved"),
]
VALID += [("anthropic", "two_calls"), ("openai_responses", "two_calls")]
FORMAT_TOOLS = {"openai_chat": TOOLS, "anthropic": ANTHROPIC_TOOLS, "openai_responses": RESPONSES_TOOLS}


def fragmented(fmt: Provider, chunks: list[bytes]) -> bytes:
    session = ServeSession(
        fmt, "/", Toolset(FORMAT_TOOLS[fmt]), Limits(), fragments=True, bad=BadCalls("raise"), opened=True
    )
    out = b"".join(session.feed(chunk) for chunk in chunks) + session.flush()
    assert (session.failure, session.withheld) == (None, ())
    return out


@given(data=st.data())
def test_chunk_boundaries_never_change_the_fragments_and_the_calls_are_the_providers(data: st.DataObject) -> None:
    fmt, case = data.draw(st.sampled_from(VALID))
    whole = (FIXTURES / fmt / f"{case}.sse").read_bytes()
    once = fragmented(fmt, [whole])
    cuts = data.draw(st.lists(st.integers(0, len(whole)), max_size=12))
    assert fragmented(fmt, split_at(whole, cuts)) == once
    calls = [(c.id, c.name, c.input) for c in streamkit.iter_tool_calls([whole], fmt)]
    assert [(c.id, c.name, c.input) for c in streamkit.iter_tool_calls([once], fmt)] == calls


def test_chat_interleaved_calls_stream_one_at_a_time() -> None:
    """get_stock opens while get_weather is open: its fragments are held, then sent as one delta
    once get_weather ended (at the finish reason), just before that finish reason."""
    out = fragmented("openai_chat", [(FIXTURES / "openai_chat" / "interleaved.sse").read_bytes()])
    pieces: list[Any] = []
    for event in out.decode().split("\n\n")[:-1]:
        payload = json.loads(event.removeprefix("data: ")) if event != "data: [DONE]" else None
        choice = payload["choices"][0] if payload else {}
        calls = choice.get("delta", {}).get("tool_calls", ())
        pieces += [(call["index"], call.get("id"), call["function"].get("arguments")) for call in calls]
        if choice.get("finish_reason"):
            pieces.append(choice["finish_reason"])
    assert pieces == [
        (0, "call_w", ""),
        (0, None, '{"city": '),
        (0, None, '"Paris"}'),
        (1, "call_s", ""),
        (1, None, '{"ticker": "AAPL"}'),
        "tool_calls",
    ]


# -- OpenAI Responses custom tools -------------------------------------------------------------------


def custom_events(served: Proxy, upstream: LoopbackServer, case: str) -> list[Any]:
    data = (ROOT / "fixtures" / "openai_responses" / f"{case}.sse").read_bytes()
    upstream.routes["/v1/responses"] = Reply([event + b"\n\n" for event in data.split(b"\n\n") if event.strip()])
    tools = json.loads((ROOT / "fixtures" / "openai_responses" / "custom_tools.json").read_text(encoding="utf-8"))
    client = CLIENTS.add(openai.OpenAI(base_url=served.url + "/v1", api_key=PROXY_KEY, max_retries=0))
    return list(client.responses.create(model=OPENAI, input="hi", tools=tools, stream=True))


def test_responses_custom_call_streams_as_its_own_input_deltas(served: Proxy, upstream: LoopbackServer) -> None:
    events = custom_events(served, upstream, "custom_tool_beside_function")
    patch = "*** Begin Patch\n*** Update File: a.py\n-x = 1\n+x = 2\n*** End Patch"
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [(item.type, item.call_id, item.name) for item in done] == [
        ("function_call", "call_w1", "get_weather"),
        ("custom_tool_call", "call_p1", "apply_patch"),
    ]
    assert done[1].input == patch
    # the custom call's text in its own events, never as a function's arguments
    assert "".join(e.delta for e in events if e.type == "response.custom_tool_call_input.delta") == patch
    assert [e.input for e in events if e.type == "response.custom_tool_call_input.done"] == [patch]
    function_deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert patch not in function_deltas and json.loads(function_deltas) == {"city": "Paris"}
    final = events[-1].response.output
    assert [(item.type, getattr(item, "input", None)) for item in final] == [
        ("function_call", None),
        ("custom_tool_call", patch),
    ]


def test_responses_custom_call_failing_its_grammar_never_completes(served: Proxy, upstream: LoopbackServer) -> None:
    events = custom_events(served, upstream, "custom_tool_grammar_regex")
    assert [e.type for e in events if e.type == "response.custom_tool_call_input.done"] == [
        "response.custom_tool_call_input.done"
    ]
    assert [e.type for e in events[-2:]] == ["error", "response.failed"] and events[-2].code == "grammar"
