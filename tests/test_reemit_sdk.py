"""The re-emitting transports under the official SDKs, against the loopback server.

Each case replays a fixture through ``streamkit.integrations.httpx2`` (and ``.httpx`` where the
SDK takes an httpx client) and checks what the SDK's own final message holds, and that
``on_call`` saw each call while the SDK was still reading the stream.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import pydantic
import pytest

import streamkit
from streamkit import InvalidToolCall, ToolCall
from streamkit._types import Call
from streamkit.integrations.httpx2 import AsyncTransport, Transport, invalid_calls

from . import answers
from .helpers import FIXTURES
from .models import ANTHROPIC, GEMINI, OPENAI
from .server import LoopbackServer, Reply, Turns, split_awkwardly

openai = pytest.importorskip("openai", minversion="3")
anthropic = pytest.importorskip("anthropic", minversion="2")
pytest.importorskip("httpx2")

#: The HTTP libraries each SDK takes a client of (anthropic 2.x takes httpx2 clients only).
OPENAI_LIBS = ["httpx2", "httpx"]
MODES = ["sync", "async"]


@dataclass
class Outcome:
    """What the SDK made of one stream."""

    final: Any = None  # its final message, when it got that far
    error: BaseException | None = None
    snapshot: Any = None  # its own accumulated message when it stopped
    log: list[Any] = field(default_factory=list)  # the SDK's event types and on_call's calls, in order
    responses: list[Any] = field(default_factory=list)  # the HTTP responses the SDK read

    @property
    def left_out(self) -> list[InvalidToolCall]:
        """The calls the transport left out, read from the response as a user would."""
        return [call for response in self.responses for call in invalid_calls(response)]

    @property
    def calls(self) -> list[Call]:
        return [item for item in self.log if isinstance(item, Call)]

    def fired_while_streaming(self) -> bool:
        """Every call reached on_call before the SDK read its last event."""
        last = max(number for number, item in enumerate(self.log) if isinstance(item, str))
        return bool(self.calls) and all(self.log.index(call) < last for call in self.calls)


def _client(lib: str, mode: str, outcome: Outcome | None, tools: Any = None, invalid: str | None = None) -> Any:
    """An http client of ``lib`` with the re-emitting transport (none when ``outcome`` is None)."""
    library = importlib.import_module(lib)
    if outcome is None:
        return library.AsyncClient() if mode == "async" else library.Client()
    integration = importlib.import_module(f"streamkit.integrations.{lib}")
    if mode == "sync":
        hooks = {"response": [outcome.responses.append]}
        transport = integration.Transport(on_call=outcome.log.append, tools=tools, invalid=invalid)
        return library.Client(transport=transport, event_hooks=hooks)

    async def on_call(call: Call) -> None:
        await asyncio.sleep(0)
        outcome.log.append(call)

    async def on_response(response: Any) -> None:
        outcome.responses.append(response)

    transport = integration.AsyncTransport(on_call=on_call, tools=tools, invalid=invalid)
    return library.AsyncClient(transport=transport, event_hooks={"response": [on_response]})


@dataclass(frozen=True)
class Api:
    """How one SDK streams one API: its client classes, path, stream helper and final message."""

    path: str
    base: str
    clients: tuple[str, str, str]  # module, sync class, async class
    open: Callable[[Any], Any]
    final: Callable[[Any], Any]
    snapshot: Callable[[Any], Any]


CHAT = Api(
    "/v1/chat/completions",
    "/v1",
    ("openai", "OpenAI", "AsyncOpenAI"),
    lambda client: client.chat.completions.stream(model=OPENAI, messages=[]),
    lambda stream: stream.get_final_completion(),
    lambda stream: stream.current_completion_snapshot,
)
RESPONSES = Api(
    "/v1/responses",
    "/v1",
    ("openai", "OpenAI", "AsyncOpenAI"),
    lambda client: client.responses.stream(model=OPENAI, input="Weather in Paris?"),
    lambda stream: stream.get_final_response(),
    lambda stream: None,
)
MESSAGES = Api(
    "/v1/messages",
    "",
    ("anthropic", "Anthropic", "AsyncAnthropic"),
    lambda client: client.messages.stream(model=ANTHROPIC, max_tokens=1024, messages=[]),
    lambda stream: stream.get_final_message(),
    lambda stream: stream.current_message_snapshot,
)


#: The block the model's answer adds when asked again.
DONE = ("text", " Done.")


#: The model's answer when asked again about a bad call: a word, and the end.
ANSWERS = {
    CHAT.path: answers.chat(" Done.", [], stop="stop"),
    MESSAGES.path: answers.messages(" Done.", [], stop="end_turn"),
    RESPONSES.path: answers.responses(" Done.", []),
}


def run(
    server: LoopbackServer,
    api: Api,
    reply: Reply,
    lib: str,
    mode: str,
    *,
    plain: bool = False,
    tools: Any = None,
    invalid: str | None = None,
) -> Outcome:
    """Stream ``reply`` through the SDK, with the transport (or ``plain``, the SDK alone). A
    request the transport sends again, asking the model again about a bad call (``tell``), is
    answered with the API's ``ANSWERS``: a plain ending."""
    server.routes = Turns(api.path, reply, ANSWERS.get(api.path, reply))
    outcome = Outcome()
    module, sync_class, async_class = api.clients
    sdk = getattr(importlib.import_module(module), async_class if mode == "async" else sync_class)
    http_client = _client(lib, mode, None if plain else outcome, tools, invalid)
    client = sdk(base_url=server.url(api.base), api_key="sk-test", max_retries=0, http_client=http_client)
    if mode == "sync":
        with client:
            stream = None
            try:
                with api.open(client) as stream:
                    for event in stream:
                        outcome.log.append(event.type)
                    outcome.final = api.final(stream)
            except Exception as exc:
                outcome.error = exc
            outcome.snapshot = None if stream is None else api.snapshot(stream)
        return outcome

    async def stream_it() -> None:
        async with client:
            stream = None
            try:
                async with api.open(client) as stream:
                    async for event in stream:
                        outcome.log.append(event.type)
                    outcome.final = await api.final(stream)
            except Exception as exc:
                outcome.error = exc
            outcome.snapshot = None if stream is None else api.snapshot(stream)

    asyncio.run(stream_it())
    return outcome


def fixture(path: str) -> Reply:
    """A fixture's bytes, cut inside every multi-byte character and every CRLF."""
    return Reply(split_awkwardly((FIXTURES / path).read_bytes()))


def cut_after(path: str, marker: bytes) -> Reply:
    """A fixture's events up to the first that holds ``marker``; then the connection drops."""
    events = (FIXTURES / path).read_bytes().split(b"\n\n")
    upto = next(number for number, event in enumerate(events) if marker in event)
    return Reply([event + b"\n\n" for event in events[: upto + 1]], cut=True)


def tool_calls(message: Any) -> list[tuple[Any, ...]]:
    return [(call.id, call.function.name, call.function.arguments) for call in message.tool_calls or []]


def blocks(message: Any) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for block in message.content:
        if block.type == "text":
            out.append(("text", block.text))
        elif block.type == "tool_use":
            out.append(("tool_use", block.id, block.name, block.input))
        else:
            out.append((block.type,))
    return out


# -- OpenAI Chat Completions -------------------------------------------------------------------

PARIS = ("call_A", "get_weather", '{"city":"Paris"}')
AAPL = ("call_B", "get_stock", '{"ticker":"AAPL"}')


@pytest.mark.parametrize("lib", OPENAI_LIBS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("case", "calls"),
    [
        ("parallel_calls_all_index_zero", [PARIS, AAPL]),
        ("index_missing", [PARIS, AAPL]),
        ("arguments_resent_after_deltas", [PARIS]),
        ("gateway_arguments_object", [PARIS]),
    ],
)
def test_openai_chat_gets_each_call_whole(
    server: LoopbackServer, lib: str, mode: str, case: str, calls: list[tuple[str, str, str]]
) -> None:
    outcome = run(server, CHAT, fixture(f"openai_chat/{case}.sse"), lib, mode)
    assert outcome.error is None
    choice = outcome.final.choices[0]
    assert (choice.finish_reason, tool_calls(choice.message)) == ("tool_calls", calls)
    assert [call.id for call in outcome.calls] == [call[0] for call in calls]
    assert outcome.fired_while_streaming()


@pytest.mark.parametrize(
    ("case", "alone"),
    [
        (
            "parallel_calls_all_index_zero",
            [("call_Acall_B", "get_weatherget_stock", '{"city": "Paris"}{"ticker": "AAPL"}')],
        ),
        (
            "arguments_resent_after_deltas",
            [("call_Acall_A", "get_weatherget_weather", '{"city": "Paris"}{"city": "Paris"}')],
        ),
    ],
)
def test_openai_chat_alone_misassembles_these_streams(
    server: LoopbackServer, case: str, alone: list[tuple[str, str, str]]
) -> None:
    outcome = run(server, CHAT, fixture(f"openai_chat/{case}.sse"), "httpx2", "sync", plain=True)
    assert tool_calls(outcome.final.choices[0].message) == alone


@pytest.mark.parametrize("lib", OPENAI_LIBS)
@pytest.mark.parametrize("mode", MODES)
def test_openai_chat_sees_the_length_finish_and_no_truncated_call(server: LoopbackServer, lib: str, mode: str) -> None:
    outcome = run(server, CHAT, fixture("openai_chat/length_truncated.sse"), lib, mode)
    assert outcome.error is None  # the model was asked again: its answer's finish ends the turn
    choice = outcome.final.choices[0]
    assert (choice.finish_reason, tool_calls(choice.message)) == ("stop", [])  # the cut call is left out
    assert len(server.requests) == 2
    [call] = outcome.calls
    assert isinstance(call, InvalidToolCall) and call.truncated
    assert outcome.left_out == [call]
    assert outcome.fired_while_streaming()


@pytest.mark.parametrize("lib", OPENAI_LIBS)
@pytest.mark.parametrize("mode", MODES)
def test_openai_chat_raises_the_stream_error_after_the_completed_call(
    server: LoopbackServer, lib: str, mode: str
) -> None:
    outcome = run(server, CHAT, fixture("openai_chat/error_after_completed_call.sse"), lib, mode)
    assert isinstance(outcome.error, openai.APIError)
    assert "The server had an error" in str(outcome.error)
    assert tool_calls(outcome.snapshot.choices[0].message) == [PARIS]  # call_B, cut by the error, is left out
    assert outcome.calls == [ToolCall(0, "call_A", "get_weather", {"city": "Paris"})]
    assert [(call.id, call.raw) for call in outcome.left_out] == [("call_B", '{"ticker": "AA')]
    assert outcome.fired_while_streaming()


@pytest.mark.parametrize("lib", OPENAI_LIBS)
@pytest.mark.parametrize("mode", MODES)
def test_openai_chat_sees_a_cut_connection(server: LoopbackServer, lib: str, mode: str) -> None:
    reply = cut_after("openai_chat/parallel_calls_all_index_zero.sse", b"get_stock")
    outcome = run(server, CHAT, reply, lib, mode)
    alone = run(server, CHAT, reply, lib, mode, plain=True)
    assert outcome.error is not None and type(outcome.error) is type(alone.error)
    assert tool_calls(outcome.snapshot.choices[0].message) == [PARIS]
    assert outcome.calls == [ToolCall(0, "call_A", "get_weather", {"city": "Paris"})]
    assert outcome.fired_while_streaming()


# -- OpenAI Responses --------------------------------------------------------------------------


@pytest.mark.parametrize("lib", OPENAI_LIBS)
@pytest.mark.parametrize("mode", MODES)
def test_openai_responses_keeps_reasoning_items_and_gets_each_call(server: LoopbackServer, lib: str, mode: str) -> None:
    outcome = run(server, RESPONSES, fixture("openai_responses/reasoning_text_and_two_calls.sse"), lib, mode)
    alone = run(server, RESPONSES, fixture("openai_responses/reasoning_text_and_two_calls.sse"), lib, mode, plain=True)
    assert outcome.error is None
    assert outcome.final.to_dict() == alone.final.to_dict()
    reasoning, message, *calls = outcome.final.output
    assert (reasoning.id, reasoning.encrypted_content) == ("rs_7", "gAAAAABfinal-Zx_9w==")
    assert message.content[0].text == "Checking Paris."
    assert [(call.id, call.call_id, call.name, call.arguments) for call in calls] == [
        ("fc_7", "call_P", "get_weather", '{"city":"Paris"}'),
        ("fc_8", "call_Q", "get_stock", '{"ticker":"AAPL"}'),
    ]
    assert [call.id for call in outcome.calls] == ["call_P", "call_Q"]
    assert outcome.fired_while_streaming()


@pytest.mark.parametrize("lib", OPENAI_LIBS)
@pytest.mark.parametrize("mode", MODES)
def test_openai_responses_reads_one_response_after_a_truncated_call_is_told(
    server: LoopbackServer, lib: str, mode: str
) -> None:
    """The cut call is left out and the model asked again: the SDK reads the first response's
    start, then the answer's items as the rest of it, and its end."""
    outcome = run(server, RESPONSES, fixture("openai_responses/incomplete_truncated.sse"), lib, mode)
    assert outcome.error is None
    assert "response.function_call_arguments.delta" not in outcome.log
    assert [kind for kind in outcome.log if isinstance(kind, str) and "created" in kind] == ["response.created"]
    assert (outcome.log[-1], outcome.final.id, outcome.final.status) == ("response.completed", "resp_1", "completed")
    assert outcome.final.output_text == " Done."
    [call] = outcome.calls
    assert isinstance(call, InvalidToolCall) and call.truncated
    assert len(server.requests) == 2


# -- Anthropic Messages ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", ["text_then_two_calls", "thinking_then_call", "server_tool_then_client_tool"])
def test_anthropic_final_message_is_the_one_the_sdk_makes_alone(server: LoopbackServer, mode: str, case: str) -> None:
    outcome = run(server, MESSAGES, fixture(f"anthropic/{case}.sse"), "httpx2", mode)
    alone = run(server, MESSAGES, fixture(f"anthropic/{case}.sse"), "httpx2", mode, plain=True)
    assert outcome.error is None
    assert outcome.final.to_dict() == alone.final.to_dict()
    assert outcome.fired_while_streaming()


@pytest.mark.parametrize("mode", MODES)
def test_anthropic_gets_each_call_whole(server: LoopbackServer, mode: str) -> None:
    outcome = run(server, MESSAGES, fixture("anthropic/text_then_two_calls.sse"), "httpx2", mode)
    assert (outcome.final.stop_reason, blocks(outcome.final)) == (
        "tool_use",
        [
            ("text", "Checking both."),
            ("tool_use", "toolu_A", "get_weather", {"city": "Paris", "units": "c"}),
            ("tool_use", "toolu_B", "get_stock", {"ticker": "AAPL"}),
        ],
    )
    assert [call.id for call in outcome.calls] == ["toolu_A", "toolu_B"]


@pytest.mark.parametrize("mode", MODES)
def test_anthropic_keeps_thinking_signatures(server: LoopbackServer, mode: str) -> None:
    outcome = run(server, MESSAGES, fixture("anthropic/thinking_then_call.sse"), "httpx2", mode)
    thinking, redacted, *_ = outcome.final.content
    assert thinking.signature and thinking.signature in (FIXTURES / "anthropic/thinking_then_call.sse").read_text()
    assert redacted.data in (FIXTURES / "anthropic/thinking_then_call.sse").read_text()


@pytest.mark.parametrize("mode", MODES)
def test_anthropic_sees_max_tokens_and_no_truncated_call(server: LoopbackServer, mode: str) -> None:
    outcome = run(server, MESSAGES, fixture("anthropic/max_tokens_truncated.sse"), "httpx2", mode)
    alone = run(server, MESSAGES, fixture("anthropic/max_tokens_truncated.sse"), "httpx2", mode, plain=True)
    assert outcome.final.stop_reason == "end_turn"  # the answer's, the model asked again about the cut call
    assert blocks(outcome.final) == [("tool_use", "toolu_A", "get_weather", {"city": "Paris"}), DONE]
    assert blocks(alone.final)[1] == ("tool_use", "toolu_B", "write_file", {"path": "notes.txt"})  # partial JSON
    first, cut = outcome.calls
    assert isinstance(first, ToolCall) and isinstance(cut, InvalidToolCall) and cut.truncated
    assert outcome.left_out == [cut]
    assert outcome.fired_while_streaming()


@pytest.mark.parametrize("mode", MODES)
def test_anthropic_raises_the_stream_error_after_the_completed_call(server: LoopbackServer, mode: str) -> None:
    outcome = run(server, MESSAGES, fixture("anthropic/error_midstream.sse"), "httpx2", mode)
    assert isinstance(outcome.error, anthropic.APIStatusError)
    assert "overloaded_error" in str(outcome.error)
    assert blocks(outcome.snapshot)[0] == ("tool_use", "toolu_A", "get_weather", {"city": "Oslo"})
    assert outcome.calls == [ToolCall(0, "toolu_A", "get_weather", {"city": "Oslo"})]
    assert outcome.fired_while_streaming()


@pytest.mark.parametrize("mode", MODES)
def test_anthropic_sees_a_cut_connection(server: LoopbackServer, mode: str) -> None:
    reply = cut_after("anthropic/text_then_two_calls.sse", b'"index":2')
    outcome = run(server, MESSAGES, reply, "httpx2", mode)
    alone = run(server, MESSAGES, reply, "httpx2", mode, plain=True)
    assert outcome.error is not None and type(outcome.error) is type(alone.error)
    assert blocks(outcome.snapshot) == [
        ("text", "Checking both."),
        ("tool_use", "toolu_A", "get_weather", {"city": "Paris", "units": "c"}),
    ]
    assert outcome.calls == [ToolCall(1, "toolu_A", "get_weather", {"city": "Paris", "units": "c"})]
    assert outcome.fired_while_streaming()


# -- An invalid or cut call never reaches the SDK as a call -----------------------------------

#: The tools sent, for the transport to check each call against (one format for both SDKs).
TOOLS = [
    {"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "get_stock", "input_schema": {"type": "object", "properties": {"ticker": {"type": "string"}}}},
]
#: How the body may come: compressed, or labelled as something other than a stream.
BODIES: dict[str, dict[str, Any]] = {
    "gzip": {"gzip": True},
    "deflate": {"deflate": True},
    "text/plain": {"content_type": "text/plain; charset=utf-8"},
    "octet-stream": {"content_type": "application/octet-stream"},
}


def kinds(calls: list[InvalidToolCall]) -> list[tuple[Any, ...]]:
    return [(call.id, *(issue.kind for issue in call.errors)) for call in calls]


@pytest.mark.parametrize("lib", OPENAI_LIBS)
@pytest.mark.parametrize("mode", MODES)
def test_openai_chat_gets_only_the_valid_call_of_four(server: LoopbackServer, lib: str, mode: str) -> None:
    case = fixture("openai_chat/invalid_calls_then_a_valid_one.sse")
    outcome = run(server, CHAT, case, lib, mode, tools=TOOLS)
    assert outcome.error is None
    choice = outcome.final.choices[0]
    assert (choice.finish_reason, tool_calls(choice.message)) == (
        "stop",  # the answer's, the model asked again about the other three
        [("call_2", "get_stock", '{"ticker":"AAPL"}')],
    )
    assert choice.message.tool_calls[0].index == 0
    assert kinds(outcome.left_out) == [("call_1", "invalid_json"), ("call_3", "schema"), ("call_4", "unknown_tool")]
    assert [call.id for call in outcome.calls] == ["call_1", "call_2", "call_3", "call_4"]
    alone = run(server, CHAT, case, lib, mode, plain=True)
    assert [call[0] for call in tool_calls(alone.final.choices[0].message)] == ["call_1", "call_2", "call_3", "call_4"]


class WriteFile(pydantic.BaseModel):
    path: str
    content: str


def test_openai_chat_partial_json_parser_never_sees_a_cut_call(server: LoopbackServer) -> None:
    """The SDK's ``.stream(tools=...)`` parses arguments as they grow (``parsed_arguments``)."""
    tool = openai.pydantic_function_tool(WriteFile, name="write_file")
    parsed = Api(
        CHAT.path,
        CHAT.base,
        CHAT.clients,
        lambda client: client.chat.completions.stream(model=OPENAI, messages=[], tools=[tool]),
        CHAT.final,
        CHAT.snapshot,
    )
    outcome = run(server, parsed, fixture("openai_chat/length_truncated.sse"), "httpx2", "sync")
    alone = run(server, parsed, fixture("openai_chat/length_truncated.sse"), "httpx2", "sync", plain=True)
    assert alone.snapshot.choices[0].message.tool_calls[0].function.parsed_arguments == {"path": "a.txt"}
    assert outcome.error is None
    assert outcome.final.choices[0].message.tool_calls is None
    assert kinds(outcome.left_out) == [("call_A", "truncated")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("tools", "left_out"), [(None, 1), (TOOLS, 3)], ids=["no-tools", "tools"])
def test_anthropic_final_message_holds_no_invalid_call_and_each_block_in_its_place(
    server: LoopbackServer, mode: str, tools: Any, left_out: int
) -> None:
    case = fixture("anthropic/invalid_calls_between_blocks.sse")
    outcome = run(server, MESSAGES, case, "httpx2", mode, tools=tools)
    assert outcome.error is None
    assert outcome.final.stop_reason == "end_turn"  # the answer's: every case holds an invalid call
    unchecked = [
        ("tool_use", "toolu_03", "get_weather", {"city": 7}),
        ("tool_use", "toolu_04", "delete_everything", {}),
    ]
    assert blocks(outcome.final) == [
        ("text", "Checking Paris first."),
        ("text", "And the stock."),
        ("tool_use", "toolu_02", "get_stock", {"ticker": "AAPL"}),
        *(unchecked if tools is None else []),
        DONE,
    ]
    wanted = [("toolu_01", "invalid_json"), ("toolu_03", "schema"), ("toolu_04", "unknown_tool")]
    assert kinds(outcome.left_out) == wanted[:left_out]
    assert outcome.fired_while_streaming()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("body", ["identity", *BODIES])
def test_anthropic_never_completes_a_cut_call_whatever_the_body_looks_like(
    server: LoopbackServer, mode: str, body: str
) -> None:
    case = Reply(fixture("anthropic/max_tokens_cut_after_a_whole_value.sse").writes, **BODIES.get(body, {}))
    alone = run(server, MESSAGES, case, "httpx2", mode, plain=True)
    assert blocks(alone.final)[1] == ("tool_use", "toolu_C", "get_weather", {"city": "Paris"})  # what it fixes
    outcome = run(server, MESSAGES, case, "httpx2", mode)
    assert outcome.error is None
    assert (outcome.final.stop_reason, blocks(outcome.final)) == ("end_turn", [("text", "Checking."), DONE])
    assert kinds(outcome.left_out) == [("toolu_C", "truncated")]
    assert "content-encoding" not in outcome.responses[0].headers


@pytest.mark.parametrize("lib", OPENAI_LIBS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("body", list(BODIES))
def test_openai_chat_reads_a_compressed_or_mislabelled_stream_through_streamkit(
    server: LoopbackServer, lib: str, mode: str, body: str
) -> None:
    case = Reply(fixture("openai_chat/parallel_calls_all_index_zero.sse").writes, **BODIES[body])
    outcome = run(server, CHAT, case, lib, mode)
    assert outcome.error is None
    assert tool_calls(outcome.final.choices[0].message) == [PARIS, AAPL]
    cut = Reply(fixture("openai_chat/length_truncated.sse").writes, **BODIES[body])
    outcome = run(server, CHAT, cut, lib, mode)
    assert outcome.error is None
    assert tool_calls(outcome.final.choices[0].message) == []
    assert kinds(outcome.left_out) == [("call_A", "truncated")]


# -- Google Gemini (google-genai) ------------------------------------------------------------

PARIS_SIGNED = ("get_weather", {"city": "Paris"}, b"\n,\x01r\xc8\xda|-\xf3\xf9X\xf6\xc1")
RECIPE = {
    "recipe": {
        "name": "Lasagna",
        "ingredients": [{"amount": "16 oz", "name": "noodles"}, {"amount": "1 lb", "name": "beef"}],
        "servings": 6,
        "vegetarian": False,
        "notes": None,
    }
}
ITEMS = {"operations": [{"action": "add", "price": 0.5}, {"action": "add", "price": 0.3}]}


@pytest.mark.parametrize(
    ("case", "calls"),
    [
        ("thought_signatures", [PARIS_SIGNED, ("get_weather", {"city": "Rome"}, None)]),
        (
            "vertex_streamed_arguments",
            [("cookRecipe", RECIPE, b"\x12\xa5\x02\x01\xb7\x1d\xd7m\xf8"), ("writeItems", ITEMS, None)],
        ),
    ],
)
def test_google_genai_gets_each_call_whole_with_its_signature(
    server: LoopbackServer, case: str, calls: list[tuple[Any, ...]]
) -> None:
    genai = pytest.importorskip("google.genai")
    import httpx2

    server.routes["/v1/models/gemini-3.8-flash:streamGenerateContent"] = fixture(f"gemini/{case}.sse")
    log: list[Any] = []
    got = []
    with httpx2.Client(transport=Transport(on_call=log.append)) as http:
        retry = genai.types.HttpRetryOptions(attempts=1)
        options = genai.types.HttpOptions(base_url=server.url(""), httpx_client=http, retry_options=retry)
        client = genai.Client(api_key="k", http_options=options)
        for chunk in client.models.generate_content_stream(model=GEMINI, contents="hi"):
            log.append("chunk")
            for part in chunk.candidates[0].content.parts or []:
                if part.function_call:
                    assert part.function_call.partial_args is None
                    got.append((part.function_call.name, part.function_call.args, part.thought_signature))
    assert got == calls
    assert [call.name for call in Outcome(log=log).calls] == [call[0] for call in calls]
    assert Outcome(log=log).fired_while_streaming()


def test_google_genai_async_client_takes_the_async_transport(server: LoopbackServer) -> None:
    genai = pytest.importorskip("google.genai")
    import httpx2

    server.routes["/v1/models/gemini-3.8-flash:streamGenerateContent"] = fixture("gemini/vertex_streamed_arguments.sse")

    async def calls() -> list[tuple[Any, ...]]:
        got = []
        async with httpx2.AsyncClient(transport=AsyncTransport()) as http:
            retry = genai.types.HttpRetryOptions(attempts=1)
            options = genai.types.HttpOptions(base_url=server.url(""), httpx_async_client=http, retry_options=retry)
            client = genai.Client(api_key="k", http_options=options)
            async for chunk in await client.aio.models.generate_content_stream(model=GEMINI, contents="hi"):
                parts = chunk.candidates[0].content.parts or []
                got += [(part.function_call.name, part.function_call.args) for part in parts if part.function_call]
        return got

    assert asyncio.run(calls()) == [("cookRecipe", RECIPE), ("writeItems", ITEMS)]


# -- A transport of the other HTTP library ----------------------------------------------------

#: (SDK, the client's library, the transport's library): every pairing an SDK accepts a client for.
MISMATCHED = [("openai", "httpx2", "httpx"), ("openai", "httpx", "httpx2"), ("anthropic", "httpx2", "httpx")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("sdk", "client_lib", "transport_lib"), MISMATCHED)
def test_a_transport_under_the_other_librarys_client_is_a_usage_error_naming_the_right_one(
    server: LoopbackServer, mode: str, sdk: str, client_lib: str, transport_lib: str
) -> None:
    library = importlib.import_module(client_lib)
    integration = importlib.import_module(f"streamkit.integrations.{transport_lib}")
    name = "AsyncTransport" if mode == "async" else "Transport"
    transport = getattr(integration, name)()
    http = library.AsyncClient(transport=transport) if mode == "async" else library.Client(transport=transport)
    api = CHAT if sdk == "openai" else MESSAGES
    module, sync_class, async_class = api.clients
    make = getattr(importlib.import_module(module), async_class if mode == "async" else sync_class)
    client = make(base_url=server.url(api.base), api_key="sk-test", max_retries=0, http_client=http)

    async def opened() -> None:
        async with client, api.open(client):
            pass

    with pytest.raises(Exception) as raised:
        if mode == "async":
            asyncio.run(opened())
        else:
            with client, api.open(client):
                pass
    error: BaseException | None = raised.value
    if sdk == "anthropic":  # it wraps what is not its own or httpx2's, the UsageError as the cause
        assert (type(error), str(error)) == (anthropic.APIConnectionError, "Connection error.")
        error = raised.value.__cause__
    assert type(error) is streamkit.UsageError
    assert str(error) == (
        f"streamkit.integrations.{transport_lib}.{name} is for {transport_lib} clients, and it was given "
        f"a request from an {client_lib} client: use streamkit.integrations.{client_lib}.{name}"
    )
    assert server.requests == []  # refused before anything was sent


# -- What each SDK raises when streamkit stops the stream --------------------------------------


def ended_after(path: str, marker: bytes) -> Reply:
    """A fixture's events up to the first that holds ``marker``, then the body's clean end: a call
    is still open and nothing says why, so streamkit stops the stream (on ``raise``; ``tell``
    asks the model again, ``tests/test_ask_again.py``)."""
    events = (FIXTURES / path).read_bytes().split(b"\n\n")
    upto = next(number for number, event in enumerate(events) if marker in event)
    return Reply([event + b"\n\n" for event in events[: upto + 1]])


def stopped(error: BaseException | None, library: str, cause: type[Exception], provider: str) -> BaseException:
    """``error`` is the library's ``RemoteProtocolError`` for streamkit's ``cause``; it is returned."""
    assert error is not None and type(error) is importlib.import_module(library).RemoteProtocolError
    assert str(error).startswith(f"streamkit stopped the stream: {provider}: ")
    assert type(error.__cause__) is cause
    return error


@pytest.mark.parametrize("lib", OPENAI_LIBS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("api", "case"), [(CHAT, "openai_chat"), (RESPONSES, "openai_responses")], ids=["chat", "responses"]
)
def test_openai_raises_its_connection_error_when_streamkit_stops_the_stream(
    server: LoopbackServer, lib: str, mode: str, api: Api, case: str
) -> None:
    reply = ended_after(f"{case}/text_then_two_calls.sse", b"get_stock")
    outcome = run(server, api, reply, lib, mode, invalid="raise")  # "tell" would ask the model again
    assert (type(outcome.error), str(outcome.error)) == (openai.APIConnectionError, "Connection error.")
    assert outcome.error is not None
    stopped(outcome.error.__cause__, lib, streamkit.IncompleteStreamError, case)


@pytest.mark.parametrize("mode", MODES)
def test_anthropic_raises_its_connection_error_naming_why_when_streamkit_stops_the_stream(
    server: LoopbackServer, mode: str
) -> None:
    reply = ended_after("anthropic/text_then_two_calls.sse", b"get_stock")
    outcome = run(server, MESSAGES, reply, "httpx2", mode, invalid="raise")  # "tell" would ask the model again
    assert outcome.error is not None and type(outcome.error) is anthropic.APIConnectionError
    cause = stopped(outcome.error.__cause__, "httpx2", streamkit.IncompleteStreamError, "anthropic")
    host = server.url("").removeprefix("http://")
    assert str(outcome.error) == f"Connection to {host} failed: {cause}"
    assert [call.name for call in outcome.calls] == ["get_weather"]


@pytest.mark.parametrize("mode", MODES)
def test_google_genai_raises_the_protocol_error_itself_when_streamkit_stops_the_stream(
    server: LoopbackServer, mode: str
) -> None:
    genai = pytest.importorskip("google.genai")
    import httpx2

    first = (FIXTURES / "gemini" / "text_then_two_calls.sse").read_bytes().split(b"\n\n")[0]
    server.routes[f"/v1/models/{GEMINI}:streamGenerateContent"] = Reply(
        [first + b"\n\n", b'data: {"candidates": [\n\n']
    )
    retry = genai.types.HttpRetryOptions(attempts=1)

    def read() -> None:
        with httpx2.Client(transport=Transport()) as http:
            options = genai.types.HttpOptions(base_url=server.url(""), httpx_client=http, retry_options=retry)
            for _ in genai.Client(api_key="k", http_options=options).models.generate_content_stream(
                model=GEMINI, contents="hi"
            ):
                pass

    async def aread() -> None:
        async with httpx2.AsyncClient(transport=AsyncTransport()) as http:
            options = genai.types.HttpOptions(base_url=server.url(""), httpx_async_client=http, retry_options=retry)
            client = genai.Client(api_key="k", http_options=options)
            async for _ in await client.aio.models.generate_content_stream(model=GEMINI, contents="hi"):
                pass

    with pytest.raises(httpx2.RemoteProtocolError) as raised:
        read() if mode == "sync" else asyncio.run(aread())
    stopped(raised.value, "httpx2", streamkit.ProviderProtocolError, "gemini")


@pytest.mark.parametrize("mode", MODES)
def test_mistral_raises_the_protocol_error_itself_when_streamkit_stops_the_stream(
    server: LoopbackServer, mode: str
) -> None:
    pytest.importorskip("mistralai")
    import httpx2
    from mistralai.client import Mistral

    server.routes["/v1/chat/completions"] = ended_after("openai_chat/text_then_two_calls.sse", b"get_stock")
    messages: Any = [{"role": "user", "content": "hi"}]

    def read() -> None:
        with httpx2.Client(transport=Transport(invalid="raise")) as http:
            for _ in Mistral(api_key="k", server_url=server.url(""), client=http).chat.stream(
                model="m", messages=messages
            ):
                pass

    async def aread() -> None:
        async with httpx2.AsyncClient(transport=AsyncTransport(invalid="raise")) as http:
            client = Mistral(api_key="k", server_url=server.url(""), async_client=http)
            async for _ in await client.chat.stream_async(model="m", messages=messages):
                pass

    with pytest.raises(httpx2.RemoteProtocolError) as raised:
        read() if mode == "sync" else asyncio.run(aread())
    stopped(raised.value, "httpx2", streamkit.IncompleteStreamError, "openai_chat")


# -- The request's own tools -------------------------------------------------------------------

#: TOOLS as the openai SDK sends them.
FUNCTIONS = [
    {"type": "function", "function": {"name": tool["name"], "parameters": tool["input_schema"]}} for tool in TOOLS
]


def offering(api: Api, tools: list[dict[str, Any]]) -> Api:
    """``api`` whose request offers ``tools``, through the SDK's own parameter."""
    if api is CHAT:
        opened = lambda client: client.chat.completions.stream(model=OPENAI, messages=[], tools=tools)  # noqa: E731
    else:
        opened = lambda client: client.messages.stream(model=ANTHROPIC, max_tokens=1024, messages=[], tools=tools)  # noqa: E731
    return Api(api.path, api.base, api.clients, opened, api.final, api.snapshot)


@pytest.mark.parametrize("lib", OPENAI_LIBS)
@pytest.mark.parametrize("mode", MODES)
def test_openai_chat_calls_are_checked_against_the_tools_the_request_offers(
    server: LoopbackServer, lib: str, mode: str
) -> None:
    outcome = run(
        server, offering(CHAT, FUNCTIONS), fixture("openai_chat/invalid_calls_then_a_valid_one.sse"), lib, mode
    )
    assert outcome.error is None
    choice = outcome.final.choices[0]
    assert (choice.finish_reason, tool_calls(choice.message)) == (
        "stop",  # the answer's, the model asked again about the other three
        [("call_2", "get_stock", '{"ticker":"AAPL"}')],
    )
    assert kinds(outcome.left_out) == [("call_1", "invalid_json"), ("call_3", "schema"), ("call_4", "unknown_tool")]
    # each call left out is reported as a cut one is: on_call sees it, then invalid_calls lists it
    assert [call for call in outcome.calls if isinstance(call, InvalidToolCall)] == outcome.left_out
    assert outcome.fired_while_streaming()


@pytest.mark.parametrize("mode", MODES)
def test_anthropic_calls_are_checked_against_the_tools_the_request_offers(server: LoopbackServer, mode: str) -> None:
    case = fixture("anthropic/invalid_calls_between_blocks.sse")
    outcome = run(server, offering(MESSAGES, TOOLS), case, "httpx2", mode)
    assert outcome.error is None
    assert blocks(outcome.final) == [
        ("text", "Checking Paris first."),
        ("text", "And the stock."),
        ("tool_use", "toolu_02", "get_stock", {"ticker": "AAPL"}),
        DONE,
    ]
    assert kinds(outcome.left_out) == [
        ("toolu_01", "invalid_json"),
        ("toolu_03", "schema"),
        ("toolu_04", "unknown_tool"),
    ]
    assert [call for call in outcome.calls if isinstance(call, InvalidToolCall)] == outcome.left_out


def test_google_genai_calls_are_checked_against_the_declarations_beside_built_in_tools(server: LoopbackServer) -> None:
    genai = pytest.importorskip("google.genai")
    import httpx2

    server.routes = Turns(
        f"/v1/models/{GEMINI}:streamGenerateContent",
        fixture("gemini/text_then_two_calls.sse"),
        answers.gemini(" Fixed.", [("c9", "get_weather", {"city": "Rome"})]),
    )
    weather = genai.types.FunctionDeclaration(
        name="get_weather", parameters={"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}
    )
    tools = [
        genai.types.Tool(google_search=genai.types.GoogleSearch()),
        genai.types.Tool(function_declarations=[weather]),
    ]
    seen: list[Any] = []
    got = []
    with httpx2.Client(transport=Transport(on_call=seen.append)) as http:
        retry = genai.types.HttpRetryOptions(attempts=1)
        options = genai.types.HttpOptions(base_url=server.url(""), httpx_client=http, retry_options=retry)
        client = genai.Client(api_key="k", http_options=options)
        config = genai.types.GenerateContentConfig(tools=tools)
        for chunk in client.models.generate_content_stream(model=GEMINI, contents="hi", config=config):
            parts = chunk.candidates[0].content.parts or []
            got += [(part.function_call.name, part.function_call.args) for part in parts if part.function_call]
    assert got == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    [stock] = [call for call in seen if isinstance(call, InvalidToolCall)]
    assert (stock.name, *(issue.kind for issue in stock.errors)) == ("get_stock", "unknown_tool")
    assert orjson.loads(server.requests[0].body)["tools"][0] == {"googleSearch": {}}
    assert len(server.requests) == 2  # the model was told get_stock is no tool of the request


@pytest.mark.parametrize("mode", MODES)
def test_an_sdk_request_whose_tools_streamkit_cannot_read_is_refused_before_it_is_sent(
    server: LoopbackServer, mode: str
) -> None:
    outcome = run(
        server,
        offering(CHAT, [{"type": "function", "function": "f"}]),
        fixture("openai_chat/text_then_two_calls.sse"),
        "httpx2",
        mode,
    )
    assert type(outcome.error) is streamkit.UsageError
    assert str(outcome.error).startswith("the request's tools: tools[0].function must be an object; ")
    assert server.requests == []
