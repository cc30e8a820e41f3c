"""Sources by shape: text lines, SSE events, dicts and SDK objects mean what the bytes mean."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

import streamkit
from streamkit import IncompleteStreamError, ProviderError, ToolCall, UsageError
from streamkit._events import Frame
from streamkit._sources import Payload, SourceAdapter
from streamkit._sse import SSEDecoder

from .helpers import FIXTURES, Fixture, fixtures, slug, sse

SSE_FIXTURES = [f for f in fixtures() if f.path.suffix == ".sse"]


def outcome(source: Iterable[Any], provider: str) -> tuple[list[object], str | None]:
    """Every value yielded, then the error's type and message (or None)."""
    got: list[object] = []
    try:
        got.extend(streamkit.iter_events(source, slug(provider)))
    except streamkit.StreamkitError as exc:
        unfinished = [repr(c) for c in getattr(exc, "unfinished", ())]
        return got, f"{type(exc).__name__}: {exc} {unfinished}"
    return got, None


def frames(data: bytes) -> list[Frame]:
    decoder = SSEDecoder()
    return [*decoder.feed(data), *decoder.flush()]


def payloads(data: bytes) -> list[dict[str, Any]]:
    """The decoded JSON payloads of a transcript, as an SDK hands them out ([DONE] consumed)."""
    return [json.loads(frame.data) for frame in frames(data) if frame.data != "[DONE]"]


@pytest.mark.parametrize("fixture", SSE_FIXTURES, ids=lambda f: f.case)
def test_text_lines_mean_what_the_bytes_mean(fixture: Fixture) -> None:
    data = fixture.path.read_bytes()
    expected = outcome([data], fixture.provider)
    lines = re.split(r"\r\n|\r|\n", data.decode("utf-8"))  # lines without their ends, cut at SSE line ends only
    assert lines.pop() == ""  # a transcript ends with a line end
    assert outcome(lines, fixture.provider) == expected
    kept = io.StringIO(data.decode("utf-8"), newline="")  # a text file: lines keep their line ends
    assert outcome(kept, fixture.provider) == expected


@pytest.mark.parametrize("fixture", SSE_FIXTURES, ids=lambda f: f.case)
def test_sse_event_objects_mean_what_the_bytes_mean(fixture: Fixture) -> None:
    httpx_sse = pytest.importorskip("httpx_sse")
    data = fixture.path.read_bytes()
    events = [httpx_sse.ServerSentEvent(event=f.event or "message", data=f.data) for f in frames(data)]
    assert outcome(events, fixture.provider) == outcome([data], fixture.provider)


PAYLOAD_CASES = [
    "anthropic/text_then_two_calls",
    "anthropic/max_tokens_truncated",
    "anthropic/error_midstream",
    "anthropic/exact_values",
    "openai_chat/text_then_two_calls",
    "openai_chat/two_choices",
    "openai_chat/length_truncated",
    "openai_chat/empty_and_null_arguments",
    "openai_chat/stop_with_named_tool_choice",
]


def case(name: str) -> tuple[str, bytes]:
    provider, stem = name.split("/")
    return provider, (FIXTURES / provider / f"{stem}.sse").read_bytes()


@pytest.mark.parametrize("name", PAYLOAD_CASES)
def test_dicts_mean_what_the_bytes_mean(name: str) -> None:
    provider, data = case(name)
    assert outcome(payloads(data), provider) == outcome([data], provider)


class PydanticLike:
    """A stand-in for a pydantic v2 SDK object: dumps by alias, unset fields left out."""

    def __init__(self, wire: dict[str, Any], snake: dict[str, Any]) -> None:
        self._wire, self._snake = wire, snake

    def model_dump(self, *, mode: str, by_alias: bool, exclude_unset: bool, warnings: bool) -> dict[str, Any]:
        assert (mode, exclude_unset, warnings) == ("json", True, False)
        return self._wire if by_alias else self._snake


class StainlessLike:
    def __init__(self, payload: dict[str, Any]) -> None:
        self._payload = payload

    def to_dict(self) -> dict[str, Any]:
        return self._payload


class GenaiLike:
    def __init__(self, payload: dict[str, Any]) -> None:
        self._payload = payload

    def to_json_dict(self) -> dict[str, Any]:
        return self._payload


WRAPPERS: dict[str, Callable[[dict[str, Any]], object]] = {
    "model_dump": lambda p: PydanticLike(p, {"wrong": "snake_case names"}),
    "to_dict": StainlessLike,
    "to_json_dict": GenaiLike,
}


@pytest.mark.parametrize("wrap", sorted(WRAPPERS))
@pytest.mark.parametrize("name", PAYLOAD_CASES)
def test_sdk_like_objects_mean_what_the_bytes_mean(name: str, wrap: str) -> None:
    provider, data = case(name)
    objects = [WRAPPERS[wrap](p) for p in payloads(data)]
    assert outcome(objects, provider) == outcome([data], provider)


def test_null_members_mean_what_wire_nulls_mean() -> None:
    # An SDK object's dump keeps the nulls the wire sent, and nothing the wire did not send.
    chunk = {"choices": [{"index": 0, "delta": {"content": None, "tool_calls": None}, "finish_reason": "stop"}]}
    for wrap in WRAPPERS.values():
        assert outcome([wrap(chunk)], "openai_chat") == outcome([sse(chunk)], "openai_chat")
    assert outcome([sse(chunk)], "openai_chat") == ([streamkit.ResponseEnd("stop")], None)


def test_an_sdk_source_of_openai_chat_cut_before_its_finish_reason_is_incomplete() -> None:
    # The openai SDK consumes [DONE], and ends as quietly when the body just stops: calls open
    # with no finish_reason at the end of the source were cut off, as at the end of the bytes.
    _, data = case("openai_chat/text_then_two_calls")
    chunks = payloads(data)
    cut = [c for c in chunks if not any(ch.get("finish_reason") for ch in c.get("choices", []))]
    for source in ([StainlessLike(c) for c in cut], cut):
        got: list[object] = []
        with pytest.raises(IncompleteStreamError) as info:
            got.extend(streamkit.iter_events(source, "openai_chat"))
        assert got == [streamkit.TextDelta("Checking both.")]
        assert [(c.id, c.raw, c.truncated) for c in info.value.unfinished] == [
            ("call_A", '{"city": "Paris"}', True),
            ("call_B", '{"ticker": "AAPL"}', True),
        ]


def test_an_sdk_source_of_openai_chat_ends_when_every_choice_finished() -> None:
    _, data = case("openai_chat/text_then_two_calls")
    assert outcome([StainlessLike(c) for c in payloads(data)], "openai_chat") == outcome([data], "openai_chat")


def test_an_sdk_source_of_anthropic_without_message_stop_is_incomplete() -> None:
    _, data = case("anthropic/text_then_two_calls")
    events = [p for p in payloads(data) if p["type"] != "message_stop"]
    with pytest.raises(IncompleteStreamError):
        list(streamkit.iter_events([StainlessLike(e) for e in events], "anthropic"))


def test_a_source_that_switches_kinds_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"^item 2 of the source is text, but the source began with bytes: one"):
        list(streamkit.iter_events([b"data: {}\n\n", "data: {}"], "openai_chat"))
    with pytest.raises(UsageError, match=r"^item 3 of the source is a dict, but the source began with an SDK object"):
        list(streamkit.iter_events([StainlessLike({}), StainlessLike({}), {}], "openai_chat"))


def test_an_unknown_item_names_its_type_and_number() -> None:
    with pytest.raises(UsageError, match=r"^item 2 of the source is a builtins\.float: a source yields bytes, text"):
        list(streamkit.iter_events([b"", 1.5], "openai_chat"))


def test_bytes_like_items_are_bytes() -> None:
    _, data = case("anthropic/text_then_two_calls")
    pieces = [bytearray(data[:100]), memoryview(data[100:1000]), data[1000:]]
    assert outcome(pieces, "anthropic") == outcome([data], "anthropic")


def test_provider_errors_from_dicts_keep_their_type() -> None:
    _, data = case("anthropic/error_midstream")
    with pytest.raises(ProviderError) as info:
        list(streamkit.iter_events(payloads(data), "anthropic"))
    assert info.value.type == "overloaded_error"


def test_boto3_events_are_unwrapped_for_event_stream_decoders() -> None:
    adapter = SourceAdapter("bedrock", "eventstream")
    delta = {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a"'}}}
    assert adapter.adapt({"contentBlockDelta": delta}) == Payload(delta, "contentBlockDelta")
    with pytest.raises(UsageError, match=r"^item 2 of the source must be one \{event type: payload\} pair"):
        adapter.adapt({"messageStop": {}, "metadata": {}})


def test_sse_event_default_name_means_no_name() -> None:
    class Event:
        def __init__(self, event: str, data: str) -> None:
            self.event, self.data = event, data

    adapter = SourceAdapter("anthropic", "sse")
    assert adapter.adapt(Event("message", "{}")) == Frame(None, "{}")
    assert adapter.adapt(Event("ping", "{}")) == Frame("ping", "{}")


# -- the official SDKs' own types (skipped when the SDK is not installed) ------------------------


def test_real_openai_chunks() -> None:
    chat = pytest.importorskip("openai.types.chat")
    _, data = case("openai_chat/text_then_two_calls")
    chunks = [chat.ChatCompletionChunk.model_validate(p) for p in payloads(data)]
    assert list(streamkit.iter_tool_calls(chunks, "openai_chat")) == [
        ToolCall(0, "call_A", "get_weather", {"city": "Paris"}),
        ToolCall(1, "call_B", "get_stock", {"ticker": "AAPL"}),
    ]
    assert outcome(chunks, "openai_chat") == outcome([data], "openai_chat")


@pytest.mark.parametrize("name", [n for n in PAYLOAD_CASES if n.startswith("anthropic/") and "error" not in n])
def test_real_anthropic_events(name: str) -> None:
    types = pytest.importorskip("anthropic.types")
    pydantic = pytest.importorskip("pydantic")
    adapter = pydantic.TypeAdapter(types.RawMessageStreamEvent)
    _, data = case(name)
    events = [adapter.validate_python(p) for p in payloads(data) if p["type"] != "ping"]  # the SDK skips pings
    assert outcome(events, "anthropic") == outcome([data], "anthropic")


def test_real_google_genai_chunks_dump_by_their_wire_names() -> None:
    types = pytest.importorskip("google.genai.types")
    wire = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3},
    }
    chunk = types.GenerateContentResponse.model_validate(wire)
    assert SourceAdapter("gemini", "sse").adapt(chunk) == Payload(wire, None)


def test_the_raw_chunk_inside_an_sdk_helper_event_is_taken() -> None:
    class ChunkEvent(StainlessLike):
        type = "chunk"

        def __init__(self, chunk: object) -> None:
            super().__init__({"type": "chunk", "snapshot": "the whole completion so far"})
            self.chunk = chunk

    _, data = case("openai_chat/text_then_two_calls")
    objects = [ChunkEvent(StainlessLike(p)) for p in payloads(data)]
    assert outcome(objects, "openai_chat") == outcome([data], "openai_chat")


MISTRAL_CHUNKS: list[dict[str, Any]] = [
    # Mistral's shape: OpenAI Chat chunks, each call whole in one delta (Mistral's streaming format).
    {
        "id": "c1",
        "model": "mistral-large",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
    },
    {
        "id": "c1",
        "model": "mistral-large",
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "id": "a1B2c3D4e",
                            "index": 0,
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        }
                    ]
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    },
]


def test_real_mistralai_completion_events() -> None:
    mistralai = pytest.importorskip("mistralai")
    models = getattr(mistralai, "models", None) or pytest.importorskip("mistralai.client.models")
    events = [models.CompletionEvent.model_validate({"data": chunk}) for chunk in MISTRAL_CHUNKS]
    got = outcome(events, "openai_chat")
    assert got == outcome([sse(*MISTRAL_CHUNKS, done=True)], "openai_chat")
    assert got == (
        [
            ToolCall(0, "a1B2c3D4e", "get_weather", {"city": "Paris"}),
            streamkit.ResponseEnd("tool_calls", {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}),
        ],
        None,
    )


def test_the_chunk_inside_a_lone_data_member_is_taken() -> None:
    # mistralai's CompletionEvent(data=chunk), without the SDK.
    _, data = case("openai_chat/text_then_two_calls")
    objects = [PydanticLike({"data": p}, {"data": {}}) for p in payloads(data)]
    assert outcome(objects, "openai_chat") == outcome([data], "openai_chat")


# -- Unicode line separators inside JSON strings -------------------------------------------------

#: JSON carries U+2028, U+2029 and U+0085 raw inside strings; ``str.splitlines`` (and so httpx's
#: ``iter_lines()``) ends a line at each of them.
SEPARATED = "one\u2028two\u2029three\u0085four"
SEPARATED_CHAT = [
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": SEPARATED}, "finish_reason": None}]},
    {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_A",
                            "type": "function",
                            "function": {
                                "name": "note",
                                "arguments": json.dumps({"text": SEPARATED}, ensure_ascii=False),
                            },
                        }
                    ]
                },
                "finish_reason": None,
            }
        ]
    },
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
]
SEPARATED_SSE = "".join(f"data: {json.dumps(p, ensure_ascii=False)}\n\n" for p in SEPARATED_CHAT).encode() + (
    b"data: [DONE]\n\n"
)
SEPARATED_OLLAMA = "".join(
    json.dumps(p, ensure_ascii=False) + "\n"
    for p in [
        {"message": {"role": "assistant", "content": SEPARATED}, "done": False},
        {
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "note", "arguments": {"text": SEPARATED}}}],
            },
            "done": False,
        },
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"},
    ]
).encode()


def httpx_response_source(data: bytes) -> Iterator[object]:
    """What ``iter_events(response, ...)`` reads from a streamed ``httpx.Response`` of ``data``."""
    httpx = pytest.importorskip("httpx")
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, content=data, headers={"content-type": "text/event-stream"})
    )
    with httpx.Client(transport=transport) as client, client.stream("POST", "http://model.test/") as response:
        yield from streamkit.iter_events(response, "openai_chat")


SEPARATED_SOURCES: dict[str, Callable[[bytes], Iterable[Any]]] = {
    "bytes whole": lambda data: [data],
    "bytes one at a time": lambda data: [data[i : i + 1] for i in range(len(data))],
    "[text.encode()]": lambda data: [data.decode("utf-8").encode()],
    "text.splitlines(keepends=True)": lambda data: data.decode("utf-8").splitlines(keepends=True),
    "text file": lambda data: io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"),
    "lines split at SSE line ends": lambda data: re.split(r"\r\n|\r|\n", data.decode("utf-8"))[:-1],
}


@pytest.mark.parametrize("form", sorted(SEPARATED_SOURCES))
def test_unicode_line_separators_in_json_strings_survive_every_recommended_source(form: str) -> None:
    for provider, data in (("openai_chat", SEPARATED_SSE), ("ollama", SEPARATED_OLLAMA)):
        expected = outcome([data], provider)
        assert expected[1] is None
        assert streamkit.TextDelta(SEPARATED) in expected[0]
        assert [(c.name, c.input) for c in expected[0] if isinstance(c, ToolCall)] == [("note", {"text": SEPARATED})]
        assert outcome(SEPARATED_SOURCES[form](data), provider) == expected


def test_unicode_line_separators_survive_the_other_recommended_sources() -> None:
    expected = outcome([SEPARATED_SSE], "openai_chat")
    assert outcome(payloads(SEPARATED_SSE), "openai_chat") == expected  # dicts
    assert outcome([StainlessLike(p) for p in payloads(SEPARATED_SSE)], "openai_chat") == expected  # SDK objects
    assert list(httpx_response_source(SEPARATED_SSE)) == expected[0]  # an httpx.Response
    httpx_sse = pytest.importorskip("httpx_sse")
    httpx = pytest.importorskip("httpx")
    transport = httpx.MockTransport(
        lambda request: httpx.Response(200, content=SEPARATED_SSE, headers={"content-type": "text/event-stream"})
    )
    with httpx.Client(transport=transport) as client, httpx_sse.connect_sse(client, "GET", "http://x.test/") as es:
        assert outcome(es.iter_sse(), "openai_chat") == expected  # httpx-sse's ServerSentEvents


def test_a_line_keeps_any_end_str_splitlines_cuts_at() -> None:
    ends = [chr(c) for c in range(0x2030) if len(f"a{chr(c)}b".splitlines()) == 2]
    adapter = SourceAdapter("openai_chat", "sse")
    assert [adapter.adapt(f"data: x{end}") for end in ends] == [f"data: x{end}".encode() for end in ends]
    assert [adapter.adapt("data: x"), adapter.adapt("")] == [b"data: x\n", b"\n"]
