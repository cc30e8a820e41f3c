"""``streamkit serve`` between formats: an OpenAI Responses client on an OpenAI Chat upstream.

The official openai SDK talks to the proxy with ``client.responses``; the loopback upstream
speaks Chat Completions and records what it was sent. Each test asserts the request the upstream
got, field by field, and what the SDK made of the answer; a bad call is answered upstream in
Chat's own terms.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from streamkit.providers._request import RequestError
from streamkit.serve._translate import translate

pytest.importorskip("uvicorn")  # the proxy

from .server import LoopbackServer, Turns
from .serving import Proxy, gpt, translating_proxy
from .translating import (
    CHAT,
    CITY,
    FIXED,
    STOCK,
    TEXT,
    assert_told_cut,
    chat_call,
    chat_tools,
    items,
    openai_error,
    recorded,
    sent,
)

openai = pytest.importorskip("openai")

TOOLS = [
    {"type": "function", "name": "get_weather", "description": "The weather in a city.", "parameters": CITY},
    {"type": "function", "name": "get_stock", "description": "A stock's price.", "parameters": STOCK, "strict": False},
]
#: The tools as the upstream gets them: Chat's function tools.
CHAT_TOOLS = chat_tools(("get_weather", "The weather in a city.", CITY), ("get_stock", "A stock's price.", STOCK))


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with translating_proxy(upstream, "openai_chat", "openai_responses") as running:
        yield running


def test_a_text_answer_and_the_request_written_as_chat(served: Proxy, upstream: LoopbackServer) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    request: dict[str, Any] = {
        "model": "qwen3-coder",
        "instructions": "Be brief.",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Use metric units."}]},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "tools": [*TOOLS, {"type": "web_search"}],
        "max_output_tokens": 512,
        "temperature": 0.2,
        "parallel_tool_calls": False,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "reasoning": {"summary": "auto"},
        "prompt_cache_key": "thread-1",
    }
    with gpt(served).responses.stream(**request) as stream:
        response = stream.get_final_response()
    assert (items(response), response.status) == ([("message", "Sunny in Paris.")], "completed")
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 7)
    [body] = sent(upstream, since)
    assert body == {
        "model": "qwen3-coder",
        "messages": [
            {"role": "system", "content": "Be brief.\n\nUse metric units."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": CHAT_TOOLS,
        "max_completion_tokens": 512,
        "temperature": 0.2,
        "parallel_tool_calls": False,
    }


def test_two_calls_at_index_zero_reach_the_client_as_two_function_call_items(
    served: Proxy, upstream: LoopbackServer
) -> None:
    upstream.routes = Turns(CHAT, recorded("openai_chat/parallel_calls_all_index_zero.sse"))
    with gpt(served).responses.stream(model="m", input="Both?", tools=TOOLS) as stream:
        response = stream.get_final_response()
    assert items(response) == [
        ("function_call", "call_A", "get_weather", {"city": "Paris"}),
        ("function_call", "call_B", "get_stock", {"ticker": "AAPL"}),
    ]
    assert response.status == "completed"


def test_a_cut_call_is_told_to_the_model_in_chat_and_the_client_reads_its_correction(
    served: Proxy, upstream: LoopbackServer
) -> None:
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, recorded("openai_chat/length_truncated.sse"), FIXED)
    with gpt(served).responses.stream(model="m", input="Write.", tools=TOOLS) as stream:
        response = stream.get_final_response()
    assert items(response) == [("function_call", "call_9", "get_weather", {"city": "Paris"})]
    assert_told_cut(upstream, since)


def test_a_call_still_cut_when_the_rounds_are_used_ends_with_error_and_response_failed_numbered_on(
    served: Proxy, upstream: LoopbackServer
) -> None:
    """As a same-format route ends: ``error`` then ``response.failed``, numbered on from the
    events written, so Codex stops at the failed response instead of sending the request again."""
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, recorded("openai_chat/length_truncated.sse"))
    with gpt(served).responses.create(model="m", input="Write.", tools=TOOLS, stream=True) as stream:
        events = list(stream)
    assert [(e.type, e.sequence_number) for e in events] == [
        ("response.created", 0),
        ("response.in_progress", 1),
        ("error", 2),
        ("response.failed", 3),
    ]
    error, failed = events[-2:]
    assert (error.code, failed.response.status, failed.response.error.code) == ("truncated", "failed", "truncated")
    assert failed.response.id == events[0].response.id and failed.response.output == []
    assert len(sent(upstream, since)) == 3  # the request and two rounds of telling the model


def test_the_next_turn_carries_the_calls_and_their_outputs_as_chat_messages(
    served: Proxy, upstream: LoopbackServer
) -> None:
    """The items of one assistant turn (text, reasoning, two calls) make one assistant message;
    the outputs after it, ``tool`` messages; a call whose arguments are not JSON goes as it came."""
    since = len(upstream.requests)
    upstream.routes = Turns(CHAT, TEXT)
    history: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather and AAPL?"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Two tools."}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
        },
        {
            "type": "function_call",
            "id": "fc_2",
            "call_id": "call_2",
            "name": "get_stock",
            "arguments": '{"ticker": "AAPL",}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "Sunny"},
        {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "not JSON"}]},
        {"type": "message", "role": "user", "content": "And tomorrow?"},
    ]
    response = gpt(served).responses.create(model="m", input=history, tools=TOOLS, tool_choice="required")
    assert (items(response), response.status) == ([("message", "Sunny in Paris.")], "completed")
    [body] = sent(upstream, since)
    assert body["messages"] == [
        {"role": "user", "content": "Weather and AAPL?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                chat_call("call_1", "get_weather", '{"city":"Paris"}'),
                chat_call("call_2", "get_stock", '{"ticker": "AAPL",}'),
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": "not JSON"},
        {"role": "user", "content": "And tomorrow?"},
    ]
    assert (body["tool_choice"], body["tools"]) == ("required", CHAT_TOOLS)


@pytest.mark.parametrize(
    ("request_", "said"),
    [
        (
            {"input": "Go on.", "previous_response_id": "resp_1"},
            "previous_response_id: the proxy keeps no responses: send the whole conversation as input",
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "file_1"}]}]},
            "input[0].content[0].file_id: an image by file id, a file only OpenAI's servers hold",
        ),
        ({"input": "Hi.", "top_logprobs": 2}, "top_logprobs: streamkit does not carry this field to another format"),
        (
            {"input": [{"type": "function_call_output", "call_id": "call_1", "output": "Sunny"}]},
            "input[0].call_id: 'call_1' answers no call before it",
        ),
    ],
    ids=["previous_response_id", "image-file-id", "unknown", "orphan-output"],
)
def test_a_field_the_upstream_cannot_carry_is_a_400_in_the_clients_shape(
    served: Proxy, upstream: LoopbackServer, request_: dict[str, Any], said: str
) -> None:
    since = len(upstream.requests)
    with pytest.raises(openai.BadRequestError) as raised:
        gpt(served).responses.create(model="m", **request_)
    assert raised.value.status_code == 400
    assert raised.value.body == openai_error(f"the request cannot be sent to the upstream (openai_chat): {said}")
    assert len(upstream.requests) == since


#: Codex's tools besides its functions: a namespace of functions it runs only for a call naming
#: the namespace, and a tool OpenAI's servers run.
NAMESPACE = {"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents.", "tools": TOOLS[:1]}
CODEX_REQUEST: dict[str, Any] = {
    "model": "m",
    "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Make the file."}]},
    ],
    "tools": [TOOLS[1], NAMESPACE, {"type": "web_search", "external_web_access": False}],
    "tool_choice": "auto",
    "parallel_tool_calls": True,
    "reasoning": {"summary": "auto"},
    "store": False,
    "stream": True,
    "include": ["reasoning.encrypted_content"],
    "prompt_cache_key": "t1",
    "client_metadata": {"thread_id": "t1"},
}


def test_tools_no_other_format_declares_are_left_out_and_named() -> None:
    translated = translate("openai_responses", "openai_chat", CODEX_REQUEST)
    assert translated.asked.dropped == (  # store is false: it asks nothing, and is not named
        "include (extra output such as encrypted reasoning, which the upstream does not give)",
        "prompt_cache_key (a cache hint)",
        "client_metadata (the client's own ids)",
        "reasoning (but its effort: a summary of it, which the upstream's answer does not hold)",
        "tools[1] 'multi_agent_v1' (a namespace: the client runs its functions only for a call that names it, "
        "which the upstream's cannot)",
        "tools[2] (web_search, a tool OpenAI's servers run, which the upstream cannot)",
    )
    assert translated.toolset is not None and translated.toolset.names == ("get_stock",)
    assert (translated.body["messages"][0], translated.body["tools"]) == (
        {"role": "system", "content": "You are Codex."},
        CHAT_TOOLS[1:],
    )


@pytest.mark.parametrize("upstream", ["openai_chat", "anthropic", "gemini"])
def test_parallel_tool_calls_true_asks_nothing_and_false_is_carried_or_refused(upstream: str) -> None:
    """True is every API's default, and Codex sends it: a format without the setting takes the
    request; false is carried where the upstream's format has the setting, else refused."""
    assert "parallel_tool_calls" not in translate("openai_responses", upstream, CODEX_REQUEST).body
    asked_one = {**CODEX_REQUEST, "parallel_tool_calls": False}
    if upstream == "openai_chat":
        assert translate("openai_responses", upstream, asked_one).body["parallel_tool_calls"] is False
        return
    if upstream == "anthropic":  # in the tool choice, beside its type
        body = translate("openai_responses", upstream, asked_one).body
        assert (body["tool_choice"], "parallel_tool_calls" in body) == (
            {"type": "auto", "disable_parallel_tool_use": True},
            False,
        )
        return
    with pytest.raises(RequestError, match=f"^parallel_tool_calls: the upstream's format \\({upstream}\\) has"):
        translate("openai_responses", upstream, asked_one)


@pytest.mark.parametrize(
    ("client", "asked", "upstream", "written"),
    [
        (
            "openai_responses",
            {"reasoning": {"effort": "high", "summary": "auto"}},
            "openai_chat",
            {"reasoning_effort": "high"},
        ),
        ("openai_chat", {"reasoning_effort": "low"}, "openai_responses", {"reasoning": {"effort": "low"}}),
        ("openai_responses", {"reasoning": {"effort": "medium"}}, "ollama", {"think": "medium"}),
    ],
)
def test_a_reasoning_effort_goes_where_the_upstream_has_one(
    client: str, asked: dict[str, Any], upstream: str, written: dict[str, Any]
) -> None:
    request = {"model": "m", _HISTORY[client]: [{"role": "user", "content": "Hi."}], **asked}
    body = translate(client, upstream, request).body
    assert {key: body[key] for key in written} == written


@pytest.mark.parametrize(
    ("client", "asked"),
    [("openai_chat", {"reasoning_effort": "high"}), ("openai_responses", {"reasoning": {"effort": "high"}})],
)
@pytest.mark.parametrize(("upstream", "place"), [("anthropic", "thinking"), ("gemini", "generationConfig")])
def test_a_reasoning_effort_the_upstream_has_no_place_for_is_left_out_and_named(
    client: str, asked: dict[str, Any], upstream: str, place: str
) -> None:
    request = {"model": "m", _HISTORY[client]: [{"role": "user", "content": "Hi."}], **asked}
    translated = translate(client, upstream, request)
    assert place not in translated.body
    assert translated.asked.dropped[-1] == (
        "reasoning_effort (how long the model reasons: the upstream's format sets none, "
        "its model reasons as it is set to)"
    )


#: Where each client format holds its history.
_HISTORY = {"openai_chat": "messages", "openai_responses": "input"}


def test_a_setting_read_under_another_name_is_not_taken_as_read_under_its_chat_name() -> None:
    """Anthropic's stop sequences are ``stop_sequences``: a ``stop`` in a Messages body is no
    field of the format, refused by name rather than left unread."""
    request = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "Hi."}], "stop": ["END"]}
    with pytest.raises(RequestError, match=r"^stop: streamkit does not carry this field to another format$"):
        translate("anthropic", "openai_chat", request)


@pytest.mark.parametrize("upstream", ["openai_chat", "openai_responses", "gemini"])
def test_anthropics_one_call_at_a_time_is_carried_or_refused(upstream: str) -> None:
    """``tool_choice.disable_parallel_tool_use`` asks for one call a turn: Chat and Responses
    carry it as ``parallel_tool_calls: false``; a format without the setting refuses it by name."""
    request = {
        "model": "m",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "Hi."}],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    }
    if upstream == "gemini":
        with pytest.raises(RequestError, match=r"^parallel_tool_calls: the upstream's format \(gemini\) has"):
            translate("anthropic", upstream, request)
        return
    assert translate("anthropic", upstream, request).body["parallel_tool_calls"] is False
