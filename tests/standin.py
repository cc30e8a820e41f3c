"""A stand-in model for running agent frameworks on each scenario of a bad tool call.

The loopback server's one route answers each request from what it was sent, as a model would:
the scenario's turn first, then the calls it meant again, whole, when the latest tool results
hold an error, then a text answer. Real tools record what ran. ``measure`` runs one framework
on one scenario and returns its ``Outcome``: the tools run, what the later requests told the
model of bad calls, how the run ended and how many requests reached the server.
``tests/test_unintegrated_frameworks.py`` and ``tests/test_integrated_scenarios.py`` use it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from streamkit._reemit import PENDING

from .helpers import FIXTURES
from .models import ANTHROPIC, OPENAI
from .server import LoopbackServer, Reply, split_awkwardly

PROVIDERS = ("openai_chat", "anthropic")
SCENARIOS = ("text", "index_zero", "cut", "whole_then_cut", "invalid_json", "schema", "eof")
PATHS = {"openai_chat": "/v1/chat/completions", "anthropic": "/v1/messages", "ollama": "/api/chat"}
#: The content type of each provider's stream (SSE unless named).
TYPES = {"ollama": "application/x-ndjson"}
#: What the tools return: a tool result that is none of these is an error the model was told.
OUTPUTS = {"get_weather": "sunny", "get_stock": "190", "write_file": "written"}

# -- the model's turns, as the provider streams them -------------------------------------------


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 1, "model": OPENAI, "choices": [choice]}


def chat(text: str | None, calls: list[tuple[int, str, str, str]], finish: str | None) -> bytes:
    """An OpenAI Chat stream: ``text``, then each call ``(index, id, name, arguments)`` in two
    pieces, then ``finish`` and ``[DONE]`` (neither when ``finish`` is ``None``: the stream ends)."""
    chunks = [chat_chunk({"role": "assistant", "content": text})]
    for index, call_id, name, arguments in calls:
        head = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        half = len(arguments) // 2
        chunks.append(chat_chunk({"tool_calls": [head]}))
        pieces = (arguments[:half], arguments[half:])
        chunks += [chat_chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}) for p in pieces]
    out = b"".join(b"data: " + orjson.dumps(chunk) + b"\n\n" for chunk in chunks)
    return out if finish is None else out + b"data: " + orjson.dumps(chat_chunk({}, finish)) + b"\n\ndata: [DONE]\n\n"


def messages(text: str | None, calls: list[tuple[int, str, str, str]], stop: str | None) -> bytes:
    """An Anthropic Messages stream: a text block, then each call ``(index, id, name, input)``
    as a ``tool_use`` block at that index, then ``stop``. With ``stop`` ``None`` the stream ends
    inside the last block."""
    start: dict[str, Any] = {"id": "msg_t", "type": "message", "role": "assistant", "model": ANTHROPIC, "content": []}
    start |= {"stop_reason": None, "usage": {"input_tokens": 9, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    blocks: list[tuple[int, dict[str, Any], list[dict[str, Any]]]] = []
    if text is not None:
        blocks.append((0, {"type": "text", "text": ""}, [{"type": "text_delta", "text": text}]))
    for index, call_id, name, arguments in calls:
        half = len(arguments) // 2
        pieces = [{"type": "input_json_delta", "partial_json": p} for p in (arguments[:half], arguments[half:])]
        blocks.append((index, {"type": "tool_use", "id": call_id, "name": name, "input": {}}, pieces))
    for number, (index, block, deltas) in enumerate(blocks):
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        if stop is not None or number < len(blocks) - 1:
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    if stop is not None:
        delta = {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 12}}
        events += [("message_delta", delta), ("message_stop", {"type": "message_stop"})]
    return b"".join(f"event: {name}\ndata: ".encode() + orjson.dumps(data) + b"\n\n" for name, data in events)


#: A call on Ollama's wire: ``(id, name, arguments)``, the arguments an object, or a string as
#: some Ollama-compatible servers send them.
Called = tuple[str, str, "dict[str, Any] | str"]


def ollama(text: str | None, calls: list[Called], stop: str | None, *, held: str = "") -> bytes:
    """An Ollama ``/api/chat`` stream: a line of ``text``, one line holding every call (each at
    ``function.index`` 0, as Ollama numbers parallel calls), then the ``done`` line with
    ``stop`` and the ``held`` text Ollama sends there when the limit cut a call. With ``stop``
    ``None`` the body ends after the calls, with no ``done`` line."""
    head = {"model": "qwen3", "created_at": "2026-01-01T00:00:00Z"}
    lines: list[dict[str, Any]] = []
    if text is not None:
        lines.append({**head, "message": {"role": "assistant", "content": text}, "done": False})
    if calls:
        entries = [{"id": i, "function": {"index": 0, "name": name, "arguments": args}} for i, name, args in calls]
        message = {"role": "assistant", "content": "", "tool_calls": entries}
        lines.append({**head, "message": message, "done": False})
    if stop is not None:
        message = {"role": "assistant", "content": held}
        lines.append({**head, "message": message, "done": True, "done_reason": stop, "eval_count": 12})
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def fixture(path: str) -> bytes:
    return (FIXTURES / path).read_bytes()


PARIS = '{"city": "Paris"}'
AAPL = '{"ticker": "AAPL"}'
WEATHER: Called = ("call_W", "get_weather", {"city": "Paris"})
STOCK: Called = ("call_S", "get_stock", {"ticker": "AAPL"})
#: What Ollama sends as text on the ``done`` line when the output limit cut a call: the call's
#: text so far, held back until it would parse (``fixtures/ollama/length_limit.ndjson``).
HELD = '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "Once upon'
#: Each scenario's first turn, per provider.
TURNS: dict[str, dict[str, Callable[[], bytes]]] = {
    "openai_chat": {
        "text": lambda: chat("Sunny in Paris.", [], "stop"),
        "index_zero": lambda: fixture("openai_chat/parallel_calls_all_index_zero.sse"),
        "cut": lambda: fixture("openai_chat/length_truncated.sse"),
        "whole_then_cut": lambda: fixture("openai_chat/length_after_a_followed_call.sse"),
        "invalid_json": lambda: fixture("openai_chat/invalid_calls_then_a_valid_one.sse"),
        "schema": lambda: chat(
            None, [(0, "call_S", "get_stock", AAPL), (1, "call_W", "get_weather", '{"town": 1}')], "tool_calls"
        ),
        "eof": lambda: chat(
            None, [(0, "call_S", "get_stock", AAPL), (1, "call_W", "get_weather", '{"city": "Li')], None
        ),
    },
    "anthropic": {
        "text": lambda: messages("Sunny in Paris.", [], "end_turn"),
        "index_zero": lambda: messages(
            None, [(0, "toolu_W", "get_weather", PARIS), (0, "toolu_S", "get_stock", AAPL)], "tool_use"
        ),
        "cut": lambda: fixture("anthropic/max_tokens_cut_after_a_whole_value.sse"),
        "whole_then_cut": lambda: fixture("anthropic/max_tokens_truncated.sse"),
        "invalid_json": lambda: fixture("anthropic/invalid_calls_between_blocks.sse"),
        "schema": lambda: messages(
            None, [(0, "toolu_S", "get_stock", AAPL), (1, "toolu_W", "get_weather", '{"town": 1}')], "tool_use"
        ),
        "eof": lambda: messages(
            None, [(0, "toolu_S", "get_stock", AAPL), (1, "toolu_W", "get_weather", '{"city": "Li')], None
        ),
    },
    # Ollama sends a call whole in one line's ``message.tool_calls``: ``index_zero`` is two calls
    # in one message, each at ``function.index`` 0 as Ollama numbers any; ``cut`` is
    # ``done_reason: "length"`` with the cut call's text held back as content (no call arrives);
    # ``whole_then_cut`` a whole call, then that ``length`` line; ``invalid_json`` arguments as a
    # string that is not JSON (as some Ollama-compatible servers send them) beside a valid call,
    # one that fails its schema and an unknown tool; ``eof`` two whole calls, then no ``done`` line.
    "ollama": {
        "text": lambda: ollama("Sunny in Paris.", [], "stop"),
        "index_zero": lambda: ollama(None, [WEATHER, STOCK], "stop"),
        "cut": lambda: ollama(None, [], "length", held=HELD),
        "whole_then_cut": lambda: ollama(None, [STOCK], "length", held=HELD),
        "invalid_json": lambda: ollama(
            None,
            [
                ("call_1", "get_weather", '{"city": "Paris",}'),
                STOCK,
                ("call_3", "get_weather", {"city": 7}),
                ("call_4", "delete_everything", {}),
            ],
            "stop",
        ),
        "schema": lambda: ollama(None, [STOCK, ("call_W", "get_weather", {"town": 1})], "stop"),
        "eof": lambda: ollama(None, [STOCK, ("call_W", "get_weather", {"city": "Lima"})], None),
    },
}
WHOLE = {
    "index_zero": [("get_weather", PARIS), ("get_stock", AAPL)],
    "cut": [("write_file", '{"path": "a.txt", "content": "Once upon a time."}')],
    "whole_then_cut": [("get_stock", '{"ticker": "MSFT"}')],
    "invalid_json": [("get_weather", PARIS)],
    "schema": [("get_weather", PARIS)],
    "eof": [("get_weather", '{"city": "Lima"}')],
}
#: What the model sends again, whole, when told of an error: the calls it meant (Anthropic's
#: fixtures cut other calls than OpenAI's).
FIXES = {
    # a Chat body that ends before its finish reason leaves both calls open: both are told as cut
    "openai_chat": WHOLE | {"eof": [("get_stock", AAPL), ("get_weather", '{"city": "Lima"}')]},
    "anthropic": WHOLE
    | {
        "cut": [("get_weather", PARIS)],
        "whole_then_cut": [("write_file", '{"path": "notes.txt", "content": "Dear Paris."}')],
    },
    # the call Ollama held back when the limit cut it; both whole calls of a body with no ``done`` line
    "ollama": WHOLE
    | {
        "whole_then_cut": [("write_file", '{"path": "a.txt", "content": "Once upon a time."}')],
        "eof": [("get_stock", AAPL), ("get_weather", '{"city": "Lima"}')],
    },
}


def fixed(provider: str, scenario: str) -> bytes:
    """The model's answer to results that hold an error: the calls again, whole."""
    calls = [(n, f"fix_{n}", name, arguments) for n, (name, arguments) in enumerate(FIXES[provider][scenario])]
    if provider == "ollama":
        return ollama(None, [(i, name, orjson.loads(arguments)) for _, i, name, arguments in calls], "stop")
    return chat(None, calls, "tool_calls") if provider == "openai_chat" else messages(None, calls, "tool_use")


#: The model's answer to results that hold none.
FINAL = {
    "openai_chat": chat("Done.", [], "stop"),
    "anthropic": messages("Done.", [], "end_turn"),
    "ollama": ollama("Done.", [], "stop"),
}


def results(provider: str, body: bytes) -> list[str]:
    """The tool results at the end of a request's history, each as its text."""
    history: list[dict[str, Any]] = orjson.loads(body)["messages"]
    if provider in ("openai_chat", "ollama"):  # results as ``tool`` messages, the content a string
        found = []
        for message in reversed(history):
            if message["role"] != "tool":
                break
            assert provider != "ollama" or "tool_name" in message, message  # Ollama names the tool
            found.append(text_of(message["content"]))
        return found[::-1]
    last = history[-1]
    content = last["content"] if last["role"] == "user" and isinstance(last["content"], list) else []
    return [text_of(block.get("content", "")) for block in content if block.get("type") == "tool_result"]


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


#: How a framework writes the latest tool results into a request: each result's text, none on
#: the first request.
Reader = Callable[[str, bytes], list[str]]


class Model(dict[str, Reply]):
    """The server's one route: a model answering each request from what it was sent; ``reader``
    finds the latest tool results in a request, ``final`` is the answer once they hold no error."""

    def __init__(
        self, server: LoopbackServer, provider: str, scenario: str, reader: Reader = results, final: bytes | None = None
    ) -> None:
        super().__init__({PATHS[provider]: Reply()})
        self.server, self.provider, self.scenario = server, provider, scenario
        self.reader, self.final = reader, FINAL[provider] if final is None else final

    def get(self, key: str, default: Reply | None = None) -> Reply | None:  # type: ignore[override]
        if key != PATHS[self.provider]:
            return default
        told = self.reader(self.provider, self.server.requests[-1].body)  # recorded before it is routed
        if not told:
            body = TURNS[self.provider][self.scenario]()
        elif all(text in OUTPUTS.values() for text in told) or self.scenario not in FIXES[self.provider]:
            body = self.final
        else:
            body = fixed(self.provider, self.scenario)
        return Reply(split_awkwardly(body), content_type=TYPES.get(self.provider, "text/event-stream"))


# -- what a run did ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """One run: the tools run (sorted), what the model was told of bad calls, how it ended, the
    requests the server answered, and how many of them repeated an earlier one byte for byte
    (a turn sent again)."""

    ran: tuple[str, ...]
    told: tuple[str, ...]
    ended: str
    requests: int
    repeats: int = 0


def told_of(provider: str, server: LoopbackServer, reader: Reader = results) -> tuple[str, ...]:
    """Each error result the later requests sent: streamkit's kinds, or the framework's words."""
    said = []
    for request in server.requests[1:]:
        for text in reader(provider, request.body):
            if text in OUTPUTS.values() or text == PENDING:
                continue
            said.append(kinds(text) or " ".join(text.split())[:60])  # the framework's own words, on one line
    return tuple(said)


def kinds(text: str) -> str | None:
    """The kinds of streamkit's ``{"ok": false, "errors": [...]}``, the types of pydantic's
    errors (either also under ``"error"``, as pydantic-ai writes a retry to OpenAI Chat), or
    ``None`` for other words."""
    try:
        payload = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if isinstance(payload, dict) and payload.keys() == {"error"}:
        payload = payload["error"]
    if isinstance(payload, list) and all(isinstance(issue, dict) and "type" in issue for issue in payload):
        return "pydantic: " + ",".join(issue["type"] for issue in payload)  # pydantic's validation errors
    if isinstance(payload, str):
        return payload[:60]
    if not isinstance(payload, dict) or payload.get("ok") is not False:
        return None
    return ",".join(issue["kind"] for issue in payload["errors"])


class Tools:
    """Real tools that record each call."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def get_weather(self, city: str) -> str:
        """The weather in a city."""
        self.ran.append(f"get_weather({city})")
        return OUTPUTS["get_weather"]

    def get_stock(self, ticker: str) -> str:
        """A stock's price."""
        self.ran.append(f"get_stock({ticker})")
        return OUTPUTS["get_stock"]

    def write_file(self, path: str, content: str) -> str:
        """Write a file."""
        self.ran.append(f"write_file({path}, {content})")
        return OUTPUTS["write_file"]

    def all(self) -> list[Callable[..., str]]:
        return [self.get_weather, self.get_stock, self.write_file]


PROMPT = "Weather in Paris, and the AAPL price?"


def cause_chain(error: BaseException) -> str:
    names: list[str] = []
    cause: BaseException | None = error.__cause__ or error.__context__
    while cause is not None and len(names) < 4:
        names.append(type(cause).__name__)
        cause = cause.__cause__ or cause.__context__
    return " < ".join(names) or str(error)[:80]


def describe(outcome: Outcome) -> str:
    ran = ", ".join(f"`{call}`" for call in outcome.ran) or "nothing"
    told = ", ".join(f"“{text}”".replace("`", "'") for text in outcome.told)
    requests = f"{outcome.requests} request{'s' if outcome.requests != 1 else ''}"
    requests += f" ({outcome.repeats} repeated)" if outcome.repeats else ""
    parts = [f"ran {ran}", *([f"told {told}"] if told else []), outcome.ended, requests]
    return "; ".join(parts).replace("|", "\\|")


DONE = "answer 'Done.'"
BOTH = ("get_stock(AAPL)", "get_weather(Paris)")


#: Runs one framework's agent against the server with the tools; how the run ended.
Runner = Callable[[LoopbackServer, str, "Tools"], str]


def measure(
    runner: Runner, provider: str, scenario: str, reader: Reader = results, final: bytes | None = None
) -> Outcome:
    """One run of ``runner`` on ``scenario``, against a stand-in model of ``provider``."""
    server = LoopbackServer()
    try:
        server.routes = Model(server, provider, scenario, reader, final)
        tools = Tools()
        ended = runner(server, provider, tools)
        bodies = [request.body for request in server.requests]
        repeats = len(bodies) - len(set(bodies))
        return Outcome(tuple(sorted(tools.ran)), told_of(provider, server, reader), ended, len(bodies), repeats)
    finally:
        server.close()


#: Each scenario's outcome per provider where the model is told in streamkit's words (the
#: transports' and the proxy's ``tell``, whatever the framework).
AFTER = {
    "openai_chat": {
        "text": Outcome((), (), "answer 'Sunny in Paris.'", 1),
        "index_zero": Outcome(BOTH, (), DONE, 2),
        "cut": Outcome(("write_file(a.txt, Once upon a time.)",), ("truncated",), DONE, 3),
        "whole_then_cut": Outcome(("get_stock(AAPL)", "get_stock(MSFT)"), ("truncated",), DONE, 3),
        "invalid_json": Outcome(BOTH, ("invalid_json", "schema", "unknown_tool"), DONE, 3),
        "schema": Outcome(BOTH, ("schema,schema",), DONE, 3),
        "eof": Outcome(("get_stock(AAPL)", "get_weather(Lima)"), ("truncated", "truncated"), DONE, 3),
    },
}
AFTER["anthropic"] = AFTER["openai_chat"] | {
    "cut": Outcome(("get_weather(Paris)",), ("truncated",), DONE, 3),
    "whole_then_cut": Outcome(("get_weather(Paris)", "write_file(notes.txt, Dear Paris.)"), ("truncated",), DONE, 3),
    "eof": Outcome(("get_stock(AAPL)", "get_weather(Lima)"), ("truncated",), DONE, 3),
}
