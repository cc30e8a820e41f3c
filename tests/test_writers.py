"""The writers: an answer in one provider's format from values decoded from another's stream.

Each writer writes the values of real fixtures of the other providers; what it wrote is read back
by streamkit's own decoder of its format, by its official SDK's stream helper (against the
loopback server) and, as a body, by the SDK's model classes: each holds the same text, calls,
reasoning and stop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import orjson
import pytest

import streamkit
from streamkit import InvalidToolCall, ResponseEnd, TextDelta, TokenUsage, ToolCall
from streamkit._errors import UsageError
from streamkit._turn_types import UNSIGNED, ReasoningItem, RedactedThinking, Thinking, Turn, carrying
from streamkit.providers import FACTS, WRITERS
from streamkit.providers._writer import Writer, stop_reason

from .helpers import FIXTURES
from .models import ANTHROPIC, OPENAI
from .server import LoopbackServer, Reply

#: Real streams of every provider, as their values.
SOURCES = [
    ("openai_chat", "text_then_two_calls"),
    ("openai_chat", "parallel_calls_all_index_zero"),
    ("openai_chat", "reasoning_content_then_call"),
    ("openai_chat", "stop_with_named_tool_choice"),
    ("openai_chat", "length_truncated"),
    ("anthropic", "thinking_then_call"),
    ("anthropic", "text_then_two_calls"),
    ("anthropic", "max_tokens_truncated"),
    ("openai_responses", "reasoning_text_and_two_calls"),
    ("openai_responses", "incomplete_truncated"),
    ("gemini", "text_then_two_calls"),
    ("gemini", "thought_signatures"),
]
#: Each writer with every stream of the other providers.
CASES = [(slug, source) for slug in WRITERS for source in SOURCES if source[0] != slug]
IDS = [f"{slug}<-{source[0]}/{source[1]}" for slug, source in CASES]
MODEL = {"anthropic": ANTHROPIC, "openai_chat": OPENAI, "openai_responses": OPENAI}
#: The prefix of a call id a writer makes where the upstream gave none (Gemini's calls).
MINTED = {"anthropic": "toolu_", "openai_chat": "call_", "openai_responses": "call_"}


def decoded(source: tuple[str, str]) -> list[Any]:
    slug, name = source
    return list(streamkit.iter_events([(FIXTURES / slug / f"{name}.sse").read_bytes()], slug))  # type: ignore[arg-type]


def writer(slug: str) -> Writer:
    return WRITERS[slug](MODEL[slug], "fixed_id", created=1700000000)


@dataclass(frozen=True)
class Answer:
    """What a client's answer holds, in a form every reader gives."""

    text: str
    calls: list[tuple[Any, ...]]  # id, name, input (an invalid call's raw text)
    reasoning: list[Any]
    finish: str


def expected(slug: str, values: list[Any]) -> Answer:
    """What a writer of ``slug`` answers with for ``values``: choice 0's text, valid calls and the
    reasoning its format carries; ``tool_calls`` is a stop when no call is left to write."""
    mine = [value for value in values if getattr(value, "choice", 0) == 0]
    calls = [value for value in mine if isinstance(value, ToolCall)]
    # a writer carries the state its values hold in each call's id (the proxy gives it only what
    # the upstream needs back)
    minted = [call.id or writer(slug).minted(MINTED[slug], number) for number, call in enumerate(calls)]
    ids = [carrying(ident, call.state) for ident, call in zip(minted, calls, strict=True)]
    end = next(value for value in values if isinstance(value, ResponseEnd))
    finish = "stop" if end.finish == "tool_calls" and not calls else end.finish
    return Answer(
        "".join(value.text for value in mine if isinstance(value, TextDelta)),
        [(id_, call.name, call.input) for id_, call in zip(ids, calls, strict=True)],
        [reasoning(slug, value) for value in mine if reasoning(slug, value) is not None],
        finish,
    )


def reasoning(slug: str, value: Any) -> Any:
    """The reasoning of ``value`` as a writer of ``slug`` keeps it: Anthropic thinking (unsigned
    reasoning signed ``UNSIGNED``) and redacted thinking, the others any reasoning text."""
    if slug == "anthropic":
        if isinstance(value, Thinking):
            return ("thinking", value.text, UNSIGNED if value.signature is None else value.signature)
        return ("redacted_thinking", value.data) if isinstance(value, RedactedThinking) else None
    if isinstance(value, Thinking):
        return value.text
    if isinstance(value, ReasoningItem):
        return "".join(part["text"] for part in value.item["summary"])
    return None


def read_back(slug: str, turn: Turn) -> Answer:
    """What streamkit's decoder of ``slug`` read in a written stream."""
    found: list[Any] = []
    for item in turn.items:
        if slug == "openai_responses" and isinstance(item, ReasoningItem):
            found.append("".join(part["text"] for part in item.item["summary"]))
        elif slug != "openai_responses" and isinstance(item, Thinking | RedactedThinking):
            found.append(reasoning(slug, item) if slug == "anthropic" else item.text)  # type: ignore[union-attr]
    calls = [(call.id, call.name, call.raw if isinstance(call, InvalidToolCall) else call.input) for call in turn.calls]
    assert turn.finish is not None
    return Answer(turn.text, calls, found, turn.finish)


@pytest.mark.parametrize(("slug", "source"), CASES, ids=IDS)
def test_streamkit_reads_back_what_was_decoded(slug: str, source: tuple[str, str]) -> None:
    values = decoded(source)
    written = writer(slug).values(values)
    turn = streamkit.collect_turn([written], slug)  # type: ignore[arg-type]
    answer = expected(slug, values)
    if slug == "openai_chat" and answer.finish == "length" and answer.calls:
        # Chat marks no call's end: the last call before ``length`` reads as cut, its text kept raw.
        assert isinstance(turn.calls[-1], InvalidToolCall) and turn.calls[-1].truncated
        last = answer.calls[-1]
        answer = replace(answer, calls=[*answer.calls[:-1], (*last[:2], orjson.dumps(last[2]).decode())])
    else:
        assert not [call for call in turn.calls if isinstance(call, InvalidToolCall)]
    assert read_back(slug, turn) == answer
    tokens = next(value for value in values if isinstance(value, ResponseEnd)).tokens
    if tokens is not None:
        assert turn.tokens is not None
        assert (turn.tokens.input_tokens, turn.tokens.output_tokens) == (tokens.input_tokens, tokens.output_tokens)


@pytest.mark.parametrize(("slug", "source"), CASES, ids=IDS)
def test_one_value_at_a_time_writes_the_same_bytes(slug: str, source: tuple[str, str]) -> None:
    values = decoded(source)
    one_by_one = writer(slug)
    pieces = [one_by_one.values([]), *(one_by_one.values([value]) for value in values)]
    assert b"".join(pieces) == writer(slug).values(values)


# -- the official SDKs: their stream helpers and their model classes ---------------------------


def anthropic_answer(message: Any) -> Answer:
    text, calls, found = "", [], list[Any]()
    for block in message.content:
        if block.type == "text":
            text += block.text
        elif block.type == "tool_use":
            calls.append((block.id, block.name, block.input))
        elif block.type == "thinking":
            found.append(("thinking", block.thinking, block.signature))
        else:
            found.append((block.type, block.data))
    finish = FACTS["anthropic"].finish_reasons[message.stop_reason]
    return Answer(text, calls, found, finish)


def chat_answer(completion: Any) -> Answer:
    choice = completion.choices[0]
    message = choice.message
    calls = [(call.id, call.function.name, orjson.loads(call.function.arguments)) for call in message.tool_calls or []]
    found = [message.reasoning_content] if getattr(message, "reasoning_content", None) else []
    finish = FACTS["openai_chat"].finish_reasons[choice.finish_reason]
    return Answer(message.content or "", calls, found, "stop" if finish == "tool_calls" and not calls else finish)


def responses_answer(response: Any) -> Answer:
    text, calls, found = "", [], []
    for item in response.output:
        if item.type == "message":
            text += "".join(part.text for part in item.content)
        elif item.type == "function_call":
            calls.append((item.call_id, item.name, orjson.loads(item.arguments)))
        elif item.type == "reasoning":
            found.append("".join(part.text for part in item.summary))
    reason = response.incomplete_details.reason if response.status == "incomplete" else response.status
    finish = FACTS["openai_responses"].finish_reasons[reason]
    return Answer(text, calls, found, "tool_calls" if finish == "stop" and calls else finish)


@dataclass(frozen=True)
class Sdk:
    """How an SDK streams its API, reads its final message, and what its body's model class is."""

    package: str
    path: str
    base: str
    final: Callable[[Any], Any]
    model: str
    answer: Callable[[Any], Answer]


SDKS = {
    "anthropic": Sdk(
        "anthropic",
        "/v1/messages",
        "",
        lambda client: client.messages.stream(model=ANTHROPIC, max_tokens=1024, messages=[]),
        "anthropic.types.Message",
        anthropic_answer,
    ),
    "openai_chat": Sdk(
        "openai",
        "/v1/chat/completions",
        "/v1",
        lambda client: client.chat.completions.stream(model=OPENAI, messages=[]),
        "openai.types.chat.ChatCompletion",
        chat_answer,
    ),
    "openai_responses": Sdk(
        "openai",
        "/v1/responses",
        "/v1",
        lambda client: client.responses.stream(model=OPENAI, input="Weather in Paris?"),
        "openai.types.responses.Response",
        responses_answer,
    ),
}
FINALS = {
    "anthropic": lambda stream: stream.get_final_message(),
    "openai_chat": lambda stream: stream.get_final_completion(),
    "openai_responses": lambda stream: stream.get_final_response(),
}
#: The OpenAI SDKs' final answers refuse a stream cut by the output limit (no final response, or
#: ``LengthFinishReasonError``); the Anthropic SDK's holds it.
SDK_CASES = [
    (slug, source)
    for slug, source in CASES
    if slug == "anthropic" or next(v for v in decoded(source) if isinstance(v, ResponseEnd)).finish != "length"
]


def sdk_client(sdk: Sdk, server: LoopbackServer) -> Any:
    package = pytest.importorskip(sdk.package)
    cls = package.Anthropic if sdk.package == "anthropic" else package.OpenAI
    return cls(base_url=server.url(sdk.base), api_key="sk-test", max_retries=0)


@pytest.mark.parametrize(("slug", "source"), SDK_CASES, ids=[f"{s}<-{src[0]}/{src[1]}" for s, src in SDK_CASES])
def test_the_sdk_stream_helper_reads_the_answer(server: LoopbackServer, slug: str, source: tuple[str, str]) -> None:
    sdk = SDKS[slug]
    values = decoded(source)
    server.routes[sdk.path] = Reply([writer(slug).values(values)])
    client = sdk_client(sdk, server)
    with client, sdk.final(client) as stream:
        for _ in stream:
            pass
        final = FINALS[slug](stream)
    assert sdk.answer(final) == expected(slug, values)


@pytest.mark.parametrize(("slug", "source"), CASES, ids=IDS)
def test_the_body_is_the_sdk_model_of_the_same_answer(slug: str, source: tuple[str, str]) -> None:
    sdk = SDKS[slug]
    module, _, name = sdk.model.rpartition(".")
    model = getattr(pytest.importorskip(module), name)
    values = decoded(source)
    body = writer(slug).body(values)
    assert sdk.answer(model.model_validate(body)) == expected(slug, values)
    assert orjson.loads(orjson.dumps(body)) == body  # JSON as it is


# -- exact bytes, stop reasons, and what is never written ----------------------------------------

TINY = [
    TextDelta("Hi."),
    ToolCall(0, "call_A", "get_weather", {"city": "Paris"}),
    ResponseEnd("tool_calls", finish="tool_calls", tokens=TokenUsage(10, 5, 4)),
]


def events(written: bytes) -> list[tuple[str | None, Any]]:
    out: list[tuple[str | None, Any]] = []
    for event in written.decode().split("\n\n")[:-1]:
        lines = dict(line.split(": ", 1) for line in event.split("\n"))
        data = lines["data"]
        out.append((lines.get("event"), data if data == "[DONE]" else orjson.loads(data)))
    return out


def test_the_anthropic_answer_exactly() -> None:
    block = {"type": "tool_use", "id": "call_A", "name": "get_weather", "input": {}}
    message: dict[str, Any] = {
        "id": "fixed_id",
        "type": "message",
        "role": "assistant",
        "model": ANTHROPIC,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    assert events(writer("anthropic").values(TINY)) == [
        ("message_start", {"type": "message_start", "message": message}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi."}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1, "content_block": block}),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"city":"Paris"}'},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"input_tokens": 6, "cache_read_input_tokens": 4, "output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def test_the_chat_answer_exactly() -> None:
    head = {"id": "fixed_id", "object": "chat.completion.chunk", "created": 1700000000, "model": OPENAI}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[None, Any]:
        return None, {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    call = {"index": 0, "id": "call_A", "type": "function"}
    call["function"] = {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    usage = {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 4},
    }
    assert events(writer("openai_chat").values(TINY)) == [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hi."}),
        chunk({"tool_calls": [call]}),
        chunk({}, "tool_calls"),
        (None, {**head, "choices": [], "usage": usage}),
        (None, "[DONE]"),
    ]


def test_the_responses_answer_exactly() -> None:
    written = events(writer("openai_responses").values(TINY))
    assert [(kind, data["sequence_number"], data.get("output_index")) for kind, data in written] == [
        ("response.created", 0, None),
        ("response.in_progress", 1, None),
        ("response.output_item.added", 2, 0),
        ("response.content_part.added", 3, 0),
        ("response.output_text.delta", 4, 0),
        ("response.output_text.done", 5, 0),
        ("response.content_part.done", 6, 0),
        ("response.output_item.done", 7, 0),
        ("response.output_item.added", 8, 1),
        ("response.function_call_arguments.delta", 9, 1),
        ("response.function_call_arguments.done", 10, 1),
        ("response.output_item.done", 11, 1),
        ("response.completed", 12, None),
    ]
    message_id, call_id = written[2][1]["item"]["id"], written[8][1]["item"]["id"]
    assert (message_id[:4], call_id[:3]) == ("msg_", "fc_")
    assert written[8][1]["item"] == {
        "id": call_id,
        "type": "function_call",
        "status": "in_progress",
        "arguments": "",
        "call_id": "call_A",
        "name": "get_weather",
    }
    assert written[9][1]["delta"] == written[10][1]["arguments"] == '{"city":"Paris"}'
    final = written[-1][1]["response"]
    assert [item["type"] for item in final["output"]] == ["message", "function_call"]
    assert final["output"][0]["content"][0]["text"] == "Hi."
    assert (final["status"], final["usage"]["input_tokens_details"]["cached_tokens"]) == ("completed", 4)


@pytest.mark.parametrize(
    ("slug", "reasons"),
    [
        ("anthropic", ["end_turn", "tool_use", "max_tokens", "refusal", "end_turn", "end_turn"]),
        ("openai_chat", ["stop", "tool_calls", "length", "content_filter", "error", "stop"]),
        (
            "openai_responses",
            ["completed", "completed", "max_output_tokens", "content_filter", "completed", "completed"],
        ),
    ],
)
def test_each_finish_is_the_first_stop_reason_listed_with_it(slug: str, reasons: list[str]) -> None:
    """``other`` never takes a reason with a meaning of its own (Anthropic's ``pause_turn``)."""
    finishes = ["stop", "tool_calls", "length", "content_filter", "error", "other"]
    assert [stop_reason(FACTS[slug], finish, calls=True) for finish in finishes] == reasons  # type: ignore[arg-type]
    assert stop_reason(FACTS[slug], "tool_calls", calls=False) == reasons[0]


@pytest.mark.parametrize("slug", list(WRITERS))
def test_an_invalid_call_is_never_written(slug: str) -> None:
    invalid = InvalidToolCall(0, "call_A", "f", '{"a": ', (streamkit.ArgumentIssue("invalid_json", "cut"),))
    values = [TextDelta("Hi."), invalid, ResponseEnd("tool_calls", finish="tool_calls")]
    written = writer(slug).values(values)
    assert b"call_A" not in written
    turn = streamkit.collect_turn([written], slug)  # type: ignore[arg-type]
    assert (turn.text, turn.calls, turn.finish) == ("Hi.", (), "stop")
    assert "call_A" not in orjson.dumps(writer(slug).body(values)).decode()


@pytest.mark.parametrize("slug", list(WRITERS))
def test_nothing_is_written_after_the_end(slug: str) -> None:
    one = writer(slug)
    one.values(TINY)
    with pytest.raises(UsageError, match="after the ResponseEnd"):
        one.values([TextDelta("more")])


@pytest.mark.parametrize("slug", list(WRITERS))
def test_a_writer_without_an_id_makes_one_in_its_clients_form(slug: str) -> None:
    first, second = WRITERS[slug]("m"), WRITERS[slug]("m")
    prefix = {"anthropic": "msg_", "openai_chat": "chatcmpl-", "openai_responses": "resp_"}[slug]
    assert first.response_id.startswith(prefix) and first.response_id != second.response_id
    assert len(first.response_id) == len(prefix) + 24


def test_every_choice_is_written_to_a_chat_client(server: LoopbackServer) -> None:
    """``n > 1``: each choice its own calls, numbered from 0, and its own finish reason."""
    values = [
        ToolCall(0, "call_Y", "f", {"n": 1}, choice=1),
        TextDelta("None needed.", choice=0),
        ResponseEnd("tool_calls", finish="tool_calls"),
    ]
    server.routes["/v1/chat/completions"] = Reply([writer("openai_chat").values(values)])
    client = sdk_client(SDKS["openai_chat"], server)
    with client, SDKS["openai_chat"].final(client) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    got = [
        (
            c.index,
            c.message.content,
            [(t.id, t.function.arguments) for t in c.message.tool_calls or []],
            c.finish_reason,
        )
        for c in final.choices
    ]
    assert got == [(0, "None needed.", [], "stop"), (1, None, [("call_Y", '{"n":1}')], "tool_calls")]


@pytest.mark.parametrize("slug", ["anthropic", "openai_responses"])
def test_a_single_choice_format_writes_choice_zero_alone(slug: str) -> None:
    values = [TextDelta("zero"), TextDelta("one", choice=1), ResponseEnd("stop", finish="stop")]
    turn = streamkit.collect_turn([writer(slug).values(values)], slug)  # type: ignore[arg-type]
    assert turn.text == "zero"
