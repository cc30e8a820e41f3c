"""The formats side by side, for the tests of what is written in each (the proxy between formats,
the request builders): the tools as each format declares them, readers of what the official SDKs
made of an answer, one exchange (a call of get_weather after "Checking.", its result, the user's
next words) as each format writes it, and the answers of the upstreams the tests stand in for.
Nothing here needs the proxy's extra (uvicorn)."""

from __future__ import annotations

import json
from typing import Any

from .helpers import FIXTURES
from .server import LoopbackServer, Reply, bodies

#: get_stock's parameters.
STOCK: dict[str, Any] = {"type": "object", "properties": {"ticker": {"type": "string"}}, "required": ["ticker"]}
#: get_weather's parameters: a city alone.
CITY: dict[str, Any] = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
#: get_weather's parameters: a city, and the units the recorded answers give, no other key.
WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "units": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}
#: A tool: its name, description and parameters.
Declared = tuple[str, str, dict[str, Any]]
#: The two tools, described briefly.
BOTH: tuple[Declared, ...] = (("get_weather", "The weather.", WEATHER), ("get_stock", "A price.", STOCK))


def chat_tools(*tools: Declared) -> list[dict[str, Any]]:
    """``tools`` as OpenAI Chat (and Ollama) declares them."""
    return [{"type": "function", "function": {"name": n, "description": d, "parameters": p}} for n, d, p in tools]


def responses_tools(*tools: Declared) -> list[dict[str, Any]]:
    """``tools`` as OpenAI Responses declares them."""
    return [{"type": "function", "name": n, "description": d, "parameters": p} for n, d, p in tools]


def messages_tools(*tools: Declared) -> list[dict[str, Any]]:
    """``tools`` as Anthropic Messages declares them."""
    return [{"name": n, "description": d, "input_schema": p} for n, d, p in tools]


# -- what an SDK made of an answer --------------------------------------------------------------


def calls(message: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """An OpenAI Chat message's calls: each one's id, name and arguments."""
    return [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or ()]


def blocks(message: Any) -> list[tuple[Any, ...]]:
    """An Anthropic message's blocks: a text's text, a call's id, name and input."""
    return [(b.type, b.text) if b.type == "text" else (b.type, b.id, b.name, b.input) for b in message.content]


def items(response: Any) -> list[tuple[Any, ...]]:
    """A response's output items: a message's text, a call's id, name and arguments."""
    out: list[tuple[Any, ...]] = []
    for item in response.output:
        if item.type == "message":
            out.append(("message", "".join(part.text for part in item.content)))
        else:
            out.append((item.type, item.call_id, item.name, json.loads(item.arguments)))
    return out


def openai_error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    """An error body in OpenAI's shape."""
    return {"message": message, "type": kind, "param": None, "code": None}


def anthropic_error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    """An error body in Anthropic's shape."""
    return {"type": "error", "error": {"type": kind, "message": message}}


# -- one exchange, as each format writes it -----------------------------------------------------

#: A system prompt and the user's question, as OpenAI Chat (and Ollama) messages.
PROMPT: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
]


def chat_call(ident: str, name: str, arguments: str) -> dict[str, Any]:
    """A call as an OpenAI Chat assistant message holds it, its arguments as JSON text."""
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_use(ident: str, name: str, given: dict[str, Any]) -> dict[str, Any]:
    """A call as an Anthropic assistant message holds it."""
    return {"type": "tool_use", "id": ident, "name": name, "input": given}


def chat_turn(ident: str, result: Any, then: str) -> list[dict[str, Any]]:
    """The exchange as OpenAI Chat messages: the call ``ident``, its ``result``, the user's ``then``."""
    call = chat_call(ident, "get_weather", '{"city":"Paris"}')
    return [
        {"role": "assistant", "content": "Checking.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": ident, "content": result},
        {"role": "user", "content": then},
    ]


def messages_turn(ident: str, result: Any, then: str) -> list[dict[str, Any]]:
    """The exchange as Anthropic messages: the result and the user's words in one user message."""
    said = [{"type": "text", "text": "Checking."}, tool_use(ident, "get_weather", {"city": "Paris"})]
    told = [{"type": "tool_result", "tool_use_id": ident, "content": result}, {"type": "text", "text": then}]
    return [{"role": "assistant", "content": said}, {"role": "user", "content": told}]


def ollama_turn(ident: str, result: Any, then: str) -> list[dict[str, Any]]:
    """The exchange as Ollama messages: the arguments an object, the result named by its tool."""
    call = {"id": ident, "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
    return [
        {"role": "assistant", "content": "Checking.", "tool_calls": [call]},
        {"role": "tool", "tool_name": "get_weather", "content": result},
        {"role": "user", "content": then},
    ]


def chat_history(first: str, second: str) -> list[dict[str, Any]]:
    """A conversation as OpenAI Chat messages: a turn of two calls, ids ``first`` and ``second``,
    their results (the second's as text parts), and the user's next words."""
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather and AAPL?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                chat_call(first, "get_weather", '{"city":"Paris"}'),
                chat_call(second, "get_stock", '{"ticker":"AAPL"}'),
            ],
        },
        {"role": "tool", "tool_call_id": first, "content": "Sunny"},
        {"role": "tool", "tool_call_id": second, "content": [{"type": "text", "text": "190"}]},
        {"role": "user", "content": "And tomorrow?"},
    ]


def recorded(name: str, **head: Any) -> Reply:
    """A recorded answer of fixtures/, in one write."""
    return Reply([(FIXTURES / name).read_bytes()], **head)


def sse_event(body: Any, name: str | None = None, end: bytes = b"\n\n") -> bytes:
    """One SSE event: its ``name`` if any, ``body`` as JSON, and its end (Gemini's is CRLF CRLF)."""
    head = b"" if name is None else f"event: {name}\n".encode()
    return head + b"data: " + json.dumps(body).encode() + end


# -- an OpenAI Chat upstream --------------------------------------------------------------------

CHAT = "/v1/chat/completions"
DONE = b"data: [DONE]\n\n"
USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> bytes:
    """One event of a Chat stream: ``delta`` and its finish, or the usage alone."""
    body: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        body |= {"choices": [], "usage": usage}
    return sse_event(body)


def call(index: int, ident: str, name: str, arguments: str) -> bytes:
    """One event of a Chat stream: a call whole."""
    entry = {"index": index, "id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}
    return chunk({"tool_calls": [entry]})


#: A text answer in two pieces, with its usage.
TEXT = Reply(
    [
        chunk({"role": "assistant", "content": "Sunny "}),
        chunk({"content": "in Paris."}),
        chunk({}, "stop"),
        chunk({}, usage=USAGE),
        DONE,
    ]
)
#: The model's corrected call, once told of a bad one.
FIXED = Reply(
    [
        chunk({"role": "assistant", "content": None}),
        call(0, "call_9", "get_weather", '{"city": "Paris"}'),
        chunk({}, "tool_calls"),
        DONE,
    ]
)


def sent(upstream: LoopbackServer, since: int) -> list[dict[str, Any]]:
    """The bodies the Chat upstream got since request ``since``, each sent to its Chat path."""
    found = bodies(upstream, since)
    assert all(request.target.startswith(CHAT) for request in upstream.requests[since:])
    return found


def assert_told_cut(upstream: LoopbackServer, since: int) -> None:
    """The upstream got a request and that request again, the cut ``call_A`` told to the model
    in Chat's terms: its assistant turn, then a ``tool`` message of the error."""
    first, again = sent(upstream, since)
    assistant, told = again["messages"][len(first["messages"]) :]
    assert assistant["role"] == "assistant" and assistant["tool_calls"][0]["id"] == "call_A"
    assert (told["role"], told["tool_call_id"]) == ("tool", "call_A")
    assert json.loads(told["content"])["errors"][0]["kind"] == "truncated"
