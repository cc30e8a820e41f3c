"""``streamkit serve`` between formats: OpenAI Chat, OpenAI Responses and Anthropic Messages
clients on a Google Gemini upstream.

The official openai and anthropic SDKs talk to the proxy; the loopback upstream speaks Gemini's
``streamGenerateContent`` SSE and records what it was sent. Each test asserts the request the
upstream got, field by field, and what the SDK made of the answer; a bad call is answered
upstream in Gemini's own terms (``functionResponse`` parts).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from streamkit._turn_types import carried, carrying
from streamkit.providers import MODEL_LISTS
from streamkit.providers._writer import Model
from streamkit.providers.gemini.history import SKIP_SIGNATURE
from streamkit.serve._translate import translate

pytest.importorskip("uvicorn")  # the proxy

from .models import GEMINI
from .server import LoopbackServer, Reply, Turns, bodies
from .serving import (
    UPSTREAM_KEY,
    Proxy,
    assert_chat_text,
    claude,
    gpt,
    streamed_chat,
    streamed_message,
    translating_proxy,
)
from .translating import (
    BOTH,
    PROMPT,
    STOCK,
    WEATHER,
    anthropic_error,
    blocks,
    calls,
    chat_tools,
    items,
    messages_tools,
    openai_error,
    recorded,
    responses_tools,
    sse_event,
    tool_use,
)

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

PATH = f"/v1beta/models/{GEMINI}:streamGenerateContent"
CHAT_TOOLS = chat_tools(*BOTH)
RESPONSES_TOOLS = responses_tools(*BOTH)
ANTHROPIC_TOOLS = messages_tools(*BOTH)
#: The tools as Gemini gets them: one ``functionDeclarations`` entry, the schemas as JSON Schema.
DECLARED = [
    {
        "functionDeclarations": [
            {"name": "get_weather", "description": "The weather.", "parametersJsonSchema": WEATHER},
            {"name": "get_stock", "description": "A price.", "parametersJsonSchema": STOCK},
        ]
    }
]


def chunk(*parts: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    """One ``data:`` event of a Gemini stream: a candidate with ``parts`` (and its finish)."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0, **extra}
    if finish is not None:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": GEMINI, "responseId": "r1"}
    if finish is not None:
        body["usageMetadata"] = {"promptTokenCount": 11, "candidatesTokenCount": 7, "totalTokenCount": 18}
    return sse_event(body, end=b"\r\n\r\n")


def called(name: str, args: dict[str, Any], ident: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args}
    return {"functionCall": call if ident is None else {"id": ident, **call}}


TEXT = Reply([chunk({"text": "Sunny "}), chunk({"text": "in Paris."}, finish="STOP")])
FIXED = Reply([chunk(called("get_weather", {"city": "Paris"}), finish="STOP")])
TWO_CALLS = recorded("gemini/text_then_two_calls.sse")
#: The ``thoughtSignature`` the recorded turns' first call carries.
SIGNATURE = "EqUCAbcd1234"
#: Gemini 3's calls carry ids: two given, the third empty (none).
IDS = recorded("gemini/gemini3_ids_and_empty_text.sse")
#: A call Gemini sent whole but that fails its tool's schema: no ``city``, an unknown key.
OFF_SCHEMA = Reply([chunk({"text": "Checking."}, called("get_weather", {"town": "Paris"}), finish="STOP")])
MALFORMED = recorded("gemini/malformed_function_call.sse")
CUT = Reply([chunk({"text": "Sunny in"}), chunk({"text": " Par"}, finish="MAX_TOKENS")])


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with translating_proxy(upstream, "gemini", "openai_chat", "openai_responses", "anthropic", root="") as running:
        yield running


@pytest.fixture(autouse=True)
def fresh(upstream: LoopbackServer) -> None:
    upstream.routes = {}
    upstream.requests.clear()


def sent(upstream: LoopbackServer) -> list[dict[str, Any]]:
    """The bodies the upstream got, each checked to be a streamed request keyed as Gemini's."""
    for request in upstream.requests:
        assert (request.method, request.target) == ("POST", PATH + "?alt=sse")
        assert request.headers["x-goog-api-key"] == UPSTREAM_KEY
        assert "authorization" not in request.headers and "x-api-key" not in request.headers
    return bodies(upstream)


# -- OpenAI Chat ------------------------------------------------------------------------------


def test_a_chat_request_is_written_as_geminis_and_its_text_answer_read(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(PATH, TEXT)
    request = {
        "model": GEMINI,
        "messages": PROMPT,
        "tools": CHAT_TOOLS,
        "max_completion_tokens": 512,
        "temperature": 0.2,
        "stop": ["END"],
        "stream_options": {"include_usage": True},
    }
    choice = assert_chat_text(served, request)
    assert choice.message.tool_calls is None
    [body] = sent(upstream)
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": DECLARED,
        "generationConfig": {"maxOutputTokens": 512, "temperature": 0.2, "stopSequences": ["END"]},
    }


def test_two_calls_without_ids_reach_a_chat_client_with_its_own_ids_and_go_back_paired(
    served: Proxy, upstream: LoopbackServer
) -> None:
    """Gemini 2.5 gives no call ids: the client reads ``call_`` ids minted by the proxy, and sends
    them back with its results; each ``functionResponse`` is paired with its call by name and id.
    The first call's ``thoughtSignature`` rides in its id, and goes back on its part."""
    upstream.routes = Turns(PATH, TWO_CALLS)
    client = gpt(served)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather and AAPL?"}]
    with client.chat.completions.stream(model=GEMINI, messages=messages, tools=CHAT_TOOLS) as stream:
        [choice] = stream.get_final_completion().choices
    first = choice.message
    assert choice.finish_reason == "tool_calls"
    weather, stock = calls(first)
    assert (weather[1:], stock[1:]) == (("get_weather", {"city": "Paris"}), ("get_stock", {"ticker": "AAPL"}))
    assert weather[0].startswith("call_") and stock[0].startswith("call_") and weather[0] != stock[0]
    (weather_id, carried_state), (stock_id, nothing) = carried(weather[0]), carried(stock[0])
    assert (carried_state, nothing, stock_id) == ({"thoughtSignature": SIGNATURE}, {}, stock[0])
    assert first.content == "Checking both."
    upstream.routes = Turns(PATH, TEXT)
    upstream.requests.clear()
    messages += [
        first.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": stock[0], "content": "190"},
        {"role": "tool", "tool_call_id": weather[0], "content": '{"sky": "sunny"}'},
    ]
    again = client.chat.completions.create(model=GEMINI, messages=messages, tools=CHAT_TOOLS)
    assert again.choices[0].message.content == "Sunny in Paris."
    [body] = sent(upstream)
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "Weather and AAPL?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Checking both."},
                {
                    "functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": weather_id},
                    "thoughtSignature": SIGNATURE,
                },
                {"functionCall": {"name": "get_stock", "args": {"ticker": "AAPL"}, "id": stock[0]}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_stock", "response": {"output": "190"}, "id": stock[0]}},
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"output": '{"sky": "sunny"}'},
                        "id": weather_id,
                    }
                },
            ],
        },
    ]


def test_geminis_own_call_ids_reach_the_client_as_they_came(served: Proxy, upstream: LoopbackServer) -> None:
    """Gemini 3's ids go to the client as they came, the first call's signature carried after it
    (so its results pair with them upstream, and the signature goes back); the call that came
    with an empty id gets one minted in the client's form."""
    upstream.routes = Turns(PATH, IDS)
    clock = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
    weather = [{"role": "user", "content": "Weather?"}]
    message = streamed_chat(served, model=GEMINI, messages=weather, tools=[*CHAT_TOOLS, clock]).choices[0].message
    first, second, third = calls(message)
    assert (carried(first[0]), first[1:]) == (
        ("96c1su3s", {"thoughtSignature": SIGNATURE}),
        ("get_weather", {"city": "Paris"}),
    )
    assert second == ("k2p9x7qa", "get_weather", {"city": "Paris"})
    assert third[0].startswith("call_") and third[1:] == ("get_time", {"zone": "CET"})


def corrected(served: Proxy, upstream: LoopbackServer, first: Reply) -> Any:
    """The choice a Chat client streams when the upstream answers ``first``, then ``FIXED``."""
    upstream.routes = Turns(PATH, first, FIXED)
    asked = [{"role": "user", "content": "Weather?"}]
    [choice] = streamed_chat(served, model=GEMINI, messages=asked, tools=CHAT_TOOLS).choices
    return choice


def test_a_call_off_its_schema_is_told_to_gemini_and_the_chat_client_reads_the_correction(
    served: Proxy, upstream: LoopbackServer
) -> None:
    choice = corrected(served, upstream, OFF_SCHEMA)
    [(_, name, args)] = calls(choice.message)
    assert (name, args, choice.finish_reason) == ("get_weather", {"city": "Paris"}, "tool_calls")
    assert choice.message.content == "Checking."
    first, again = sent(upstream)
    assert again["tools"] == first["tools"] == DECLARED
    model, told = again["contents"][len(first["contents"]) :]
    assert model == {
        "role": "model",
        "parts": [{"text": "Checking."}, {"functionCall": {"name": "get_weather", "args": {"town": "Paris"}}}],
    }
    [part] = told["parts"]
    response = part["functionResponse"]
    assert (told["role"], response["name"], response["response"]["error"]["ok"]) == ("user", "get_weather", False)
    assert {error["kind"] for error in response["response"]["error"]["errors"]} == {"schema"}


def test_a_malformed_function_call_is_told_to_gemini_and_the_client_reads_the_correction(
    served: Proxy, upstream: LoopbackServer
) -> None:
    choice = corrected(served, upstream, MALFORMED)
    assert [call[1:] for call in calls(choice.message)] == [("get_weather", {"city": "Paris"})]
    assert (choice.message.content, choice.finish_reason) == ("I'll check.", "tool_calls")
    first, again = sent(upstream)
    told = again["contents"][len(first["contents"]) :]
    # The call Gemini could not read has no name, and a function part needs one: the model turn
    # holds its text only, and the errors go back as a text part.
    assert told[0] == {"role": "model", "parts": [{"text": "I'll check."}]}
    [part] = told[1]["parts"]
    assert (told[1]["role"], list(part)) == ("user", ["text"])
    payload = json.loads(part["text"])
    assert payload["ok"] is False
    assert [error["kind"] for error in payload["errors"]] == ["missing_name", "malformed_call"]
    assert payload["call"].startswith("Malformed function call: print(default_api.get_weather(")


def test_max_tokens_is_the_chat_clients_length(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(PATH, CUT)
    chunks = list(
        gpt(served).chat.completions.create(
            model=GEMINI, messages=[{"role": "user", "content": "Weather?"}], max_tokens=3, stream=True
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert (text, [c.choices[0].finish_reason for c in chunks if c.choices][-1]) == ("Sunny in Par", "length")
    [body] = sent(upstream)
    assert body["generationConfig"] == {"maxOutputTokens": 3}


def test_a_chat_request_not_streamed_is_answered_with_a_body(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(PATH, TWO_CALLS)
    raw = gpt(served).chat.completions.with_raw_response.create(
        model=GEMINI, messages=[{"role": "user", "content": "Both?"}], tools=CHAT_TOOLS
    )
    assert raw.headers["content-type"] == "application/json"
    [choice] = raw.parse().choices
    assert [call[1:] for call in calls(choice.message)] == [
        ("get_weather", {"city": "Paris"}),
        ("get_stock", {"ticker": "AAPL"}),
    ]
    assert (choice.message.content, choice.finish_reason) == ("Checking both.", "tool_calls")
    [body] = sent(upstream)
    assert "stream" not in body  # Gemini streams by its path, not by a field


GEMINI_ERROR = {
    "error": {"code": 429, "message": f"Resource exhausted (key {UPSTREAM_KEY})", "status": "RESOURCE_EXHAUSTED"}
}


@pytest.mark.parametrize(
    ("status", "reason", "error"),
    [(429, "Too Many Requests", "RateLimitError"), (400, "Bad Request", "BadRequestError")],
)
def test_an_upstream_error_keeps_its_status_in_each_clients_shape(
    served: Proxy, upstream: LoopbackServer, status: int, reason: str, error: str
) -> None:
    said = json.dumps({"error": {**GEMINI_ERROR["error"], "code": status}}).encode()
    upstream.routes = {PATH: Reply([said], status=status, reason=reason, content_type="application/json")}
    message = f"the upstream answered {status}: " + json.dumps(
        {"error": {**GEMINI_ERROR["error"], "code": status, "message": "Resource exhausted (key [REDACTED])"}}
    )
    with pytest.raises(getattr(openai, error)) as chat:
        gpt(served).chat.completions.create(model=GEMINI, messages=[{"role": "user", "content": "Hi"}])
    assert (chat.value.status_code, chat.value.body) == (status, openai_error(message, "api_error"))
    with pytest.raises(getattr(openai, error)) as responses:
        gpt(served).responses.create(model=GEMINI, input="Hi", stream=True)
    assert (responses.value.status_code, responses.value.body) == (status, openai_error(message, "api_error"))
    with pytest.raises(getattr(anthropic, error)) as messages:
        claude(served).messages.create(model=GEMINI, max_tokens=10, messages=[{"role": "user", "content": "Hi"}])
    assert (messages.value.status_code, messages.value.body) == (status, anthropic_error(message, "api_error"))
    assert len(sent(upstream)) == 3


# -- OpenAI Responses -------------------------------------------------------------------------


def test_a_responses_request_is_written_as_geminis_and_its_calls_read(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(PATH, TWO_CALLS)
    request: dict[str, Any] = {
        "model": GEMINI,
        "instructions": "Be brief.",
        "input": [{"role": "user", "content": "Weather and AAPL?"}],
        "tools": RESPONSES_TOOLS,
        "max_output_tokens": 512,
        "temperature": 0.2,
    }
    with gpt(served).responses.stream(**request) as stream:
        response = stream.get_final_response()
    assert response.status == "completed"
    message, weather, stock = items(response)
    assert message == ("message", "Checking both.")
    assert (weather[0], weather[2:], stock[0], stock[2:]) == (
        "function_call",
        ("get_weather", {"city": "Paris"}),
        "function_call",
        ("get_stock", {"ticker": "AAPL"}),
    )
    assert weather[1].startswith("call_") and stock[1].startswith("call_") and weather[1] != stock[1]
    [body] = sent(upstream)
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "Weather and AAPL?"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": DECLARED,
        "generationConfig": {"maxOutputTokens": 512, "temperature": 0.2},
    }


def test_the_responses_next_turn_pairs_each_output_with_its_call(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(PATH, TEXT)
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather and AAPL?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"type": "function_call", "call_id": "call_2", "name": "get_stock", "arguments": '{"ticker": "AAPL"}'},
        {"type": "function_call_output", "call_id": "call_2", "output": "190"},
        {"type": "function_call_output", "call_id": "call_1", "output": "Sunny"},
    ]
    response = gpt(served).responses.create(model=GEMINI, input=history, tools=RESPONSES_TOOLS)
    assert (items(response), response.status) == ([("message", "Sunny in Paris.")], "completed")
    [body] = sent(upstream)
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"},
                    "thoughtSignature": SKIP_SIGNATURE,
                },
                {"functionCall": {"name": "get_stock", "args": {"ticker": "AAPL"}, "id": "call_2"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_stock", "response": {"output": "190"}, "id": "call_2"}},
                {"functionResponse": {"name": "get_weather", "response": {"output": "Sunny"}, "id": "call_1"}},
            ],
        },
    ]


def test_max_tokens_is_the_responses_clients_incomplete(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(PATH, CUT)
    events = list(gpt(served).responses.create(model=GEMINI, input="Weather?", max_output_tokens=16, stream=True))
    assert events[-1].type == "response.incomplete"
    response = events[-1].response
    assert (items(response), response.status) == ([("message", "Sunny in Par")], "incomplete")
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"


def test_a_responses_request_not_streamed_reads_the_correction_of_a_bad_call(
    served: Proxy, upstream: LoopbackServer
) -> None:
    upstream.routes = Turns(PATH, OFF_SCHEMA, FIXED)
    response = gpt(served).responses.create(model=GEMINI, input="Weather?", tools=RESPONSES_TOOLS)
    assert [item[2:] for item in items(response) if item[0] == "function_call"] == [("get_weather", {"city": "Paris"})]
    assert len(sent(upstream)) == 2


# -- Anthropic Messages -----------------------------------------------------------------------


def test_a_messages_request_is_written_as_geminis_and_its_calls_read(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(PATH, TWO_CALLS)
    request = {
        "model": GEMINI,
        "max_tokens": 512,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Weather and AAPL?"}],
        "tools": ANTHROPIC_TOOLS,
        "stop_sequences": ["END"],
        "extra_body": {"temperature": 0.2},  # anthropic 2.x takes it only so
    }
    message = streamed_message(served, **request)
    text, weather, stock = blocks(message)
    assert text == ("text", "Checking both.")
    assert (weather[0], weather[2:], stock[0], stock[2:]) == (
        "tool_use",
        ("get_weather", {"city": "Paris"}),
        "tool_use",
        ("get_stock", {"ticker": "AAPL"}),
    )
    assert weather[1].startswith("toolu_") and stock[1].startswith("toolu_") and weather[1] != stock[1]
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (29, 60)  # thoughts are output
    [body] = sent(upstream)
    assert body == {
        "contents": [{"role": "user", "parts": [{"text": "Weather and AAPL?"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": DECLARED,
        "generationConfig": {"maxOutputTokens": 512, "temperature": 0.2, "stopSequences": ["END"]},
    }


def test_the_messages_next_turn_pairs_each_result_with_its_call(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(PATH, TEXT)
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather and AAPL?"},
        {
            "role": "assistant",
            "content": [
                tool_use("toolu_1", "get_weather", {"city": "Paris"}),
                tool_use("toolu_2", "get_stock", {"ticker": "AAPL"}),
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Sunny"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "no such ticker", "is_error": True},
            ],
        },
    ]
    message = claude(served).messages.create(model=GEMINI, max_tokens=64, messages=history, tools=ANTHROPIC_TOOLS)
    assert (blocks(message), message.stop_reason) == ([("text", "Sunny in Paris.")], "end_turn")
    [body] = sent(upstream)
    model, results = body["contents"][1:]
    assert model == {
        "role": "model",
        "parts": [
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "toolu_1"},
                "thoughtSignature": SKIP_SIGNATURE,
            },
            {"functionCall": {"name": "get_stock", "args": {"ticker": "AAPL"}, "id": "toolu_2"}},
        ],
    }
    assert results["role"] == "user"
    assert [part["functionResponse"]["name"] for part in results["parts"]] == ["get_weather", "get_stock"]
    assert [part["functionResponse"]["id"] for part in results["parts"]] == ["toolu_1", "toolu_2"]
    assert results["parts"][0]["functionResponse"]["response"] == {"output": "Sunny"}


def test_max_tokens_is_the_messages_clients_max_tokens(served: Proxy, upstream: LoopbackServer) -> None:
    upstream.routes = Turns(PATH, CUT)
    message = claude(served).messages.create(
        model=GEMINI, max_tokens=3, messages=[{"role": "user", "content": "Weather?"}]
    )
    assert (blocks(message), message.stop_reason) == ([("text", "Sunny in Par")], "max_tokens")


def test_a_malformed_call_told_to_gemini_reaches_a_messages_client_corrected(
    served: Proxy, upstream: LoopbackServer
) -> None:
    upstream.routes = Turns(PATH, MALFORMED, FIXED)
    weather = [{"role": "user", "content": "Weather?"}]
    message = streamed_message(served, model=GEMINI, max_tokens=64, messages=weather, tools=ANTHROPIC_TOOLS)
    text, call = blocks(message)
    assert (text, call[0], call[2:], message.stop_reason) == (
        ("text", "I'll check."),
        "tool_use",
        ("get_weather", {"city": "Paris"}),
        "tool_use",
    )
    assert len(sent(upstream)) == 2


def test_count_tokens_on_a_gemini_upstream_is_an_estimate_marked_so(served: Proxy, upstream: LoopbackServer) -> None:
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    raw = claude(served).messages.with_raw_response.count_tokens(
        model=GEMINI, system="Be brief.", messages=messages, tools=ANTHROPIC_TOOLS
    )
    chars = len("Be brief.") + sum(len(json.dumps(part, separators=(",", ":"))) for part in (messages, ANTHROPIC_TOOLS))
    assert (raw.parse().input_tokens, raw.headers["x-streamkit-estimate"]) == (-(-chars // 4), "true")
    assert upstream.requests == []


# -- the model list ---------------------------------------------------------------------------

GEMINI_LIST = {
    "models": [
        {
            "name": f"models/{GEMINI}",
            "version": "001",
            "displayName": "Gemini Flash",
            "description": "Fast.",
            "inputTokenLimit": 1048576,
            "outputTokenLimit": 65536,
            "supportedGenerationMethods": ["generateContent", "countTokens", "createCachedContent"],
        },
        {
            "name": "models/text-embedding",
            "displayName": "Text Embedding",
            "supportedGenerationMethods": ["embedContent"],
        },
        {"name": "models/gemini-pro-latest", "displayName": "Gemini Pro Latest"},
        {"displayName": "no name"},
    ],
    "nextPageToken": "",
}


def listed(upstream: LoopbackServer) -> None:
    upstream.routes = {"/v1beta/models": Reply([json.dumps(GEMINI_LIST).encode()], content_type="application/json")}


def test_an_openai_client_reads_geminis_model_list_in_its_shape(served: Proxy, upstream: LoopbackServer) -> None:
    listed(upstream)
    client = gpt(served)
    models = [model.model_dump(exclude_unset=True) for model in client.models.list()]
    one = client.models.retrieve("gemini-pro-latest").model_dump(exclude_unset=True)
    assert models == [
        {"id": GEMINI, "created": 0, "object": "model", "owned_by": "google"},
        {"id": "gemini-pro-latest", "created": 0, "object": "model", "owned_by": "google"},
    ]
    assert one == models[1]
    # the Chat and the Responses routes list alike: each asks its upstream, the same list kept once
    assert {(r.method, r.target, r.headers["x-goog-api-key"]) for r in upstream.requests} == {
        ("GET", "/v1beta/models?pageSize=1000", UPSTREAM_KEY)
    }


def test_an_anthropic_client_reads_geminis_model_list_in_its_shape(served: Proxy, upstream: LoopbackServer) -> None:
    listed(upstream)
    page = claude(served).models.list()
    assert [(model.id, model.display_name, model.type) for model in page.data] == [
        (GEMINI, "Gemini Flash", "model"),
        ("gemini-pro-latest", "Gemini Pro Latest", "model"),
    ]
    assert (page.first_id, page.last_id, page.has_more) == (GEMINI, "gemini-pro-latest", False)
    [request] = upstream.requests
    assert (request.target, request.headers["x-goog-api-key"]) == ("/v1beta/models?pageSize=1000", UPSTREAM_KEY)


def test_a_gemini_model_list_that_fails_is_the_clients_error(served: Proxy, upstream: LoopbackServer) -> None:
    said = json.dumps({"error": {"code": 403, "message": f"key {UPSTREAM_KEY} denied", "status": "PERMISSION_DENIED"}})
    upstream.routes = {"/v1beta/models": Reply([said.encode()], status=403, reason="Forbidden")}
    with pytest.raises(anthropic.PermissionDeniedError) as failed:
        claude(served).models.list()
    message = failed.value.body["error"]["message"]
    assert message.startswith("the upstream's model list answered 403: ")
    assert UPSTREAM_KEY not in message and "[REDACTED]" in message


def test_the_model_list_readers_of_the_upstreams_no_client_speaks() -> None:
    """Gemini's ids come without their ``models/`` prefix, a model that generates nothing left out;
    Ollama's are the names a request gives, its time and namespace as its OpenAI list has them."""
    assert MODEL_LISTS["gemini"](GEMINI_LIST) == [
        Model(GEMINI, name="Gemini Flash", owner="google"),
        Model("gemini-pro-latest", name="Gemini Pro Latest", owner="google"),
    ]
    tags = {
        "models": [
            {"name": "qwen3:latest", "model": "qwen3:latest", "modified_at": "2025-10-03T23:34:03.409490317-07:00"},
            {"name": "someone/coder:7b", "modified_at": "not a time"},
            {"size": 1},
        ]
    }
    assert MODEL_LISTS["ollama"](tags) == [
        Model("qwen3:latest", 1759559643, owner="library"),
        Model("someone/coder:7b", 0, owner="someone"),
    ]
    assert MODEL_LISTS["gemini"]([]) == MODEL_LISTS["ollama"]({"models": "none"}) == []


CARRIED = carrying("g3call01", {"thoughtSignature": SIGNATURE})
#: One exchange holding a call whose id carries Gemini's signature, as each client sends it back.
SENT_BACK: dict[str, dict[str, Any]] = {
    "openai_chat": {
        "model": GEMINI,
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": CARRIED, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": CARRIED, "content": "sunny"},
        ],
    },
    "openai_responses": {
        "model": GEMINI,
        "input": [
            {"role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": CARRIED, "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": CARRIED, "output": "sunny"},
        ],
    },
    "anthropic": {
        "model": GEMINI,
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": CARRIED, "name": "get_weather", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": CARRIED, "content": "sunny"}]},
        ],
    },
}


@pytest.mark.parametrize("client", list(SENT_BACK))
def test_a_signature_carried_in_a_call_id_goes_back_to_gemini_on_its_call(client: str) -> None:
    """Each client format reads the call's own id and Gemini's signature out of the id the proxy
    gave it: the call and its result go to Gemini by the call's id, the call signed as it came."""
    call, result = translate(client, "gemini", SENT_BACK[client]).body["contents"][1:]
    assert call == {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "get_weather", "args": {}, "id": "g3call01"}, "thoughtSignature": SIGNATURE}
        ],
    }
    assert result["parts"][0]["functionResponse"]["id"] == "g3call01"
