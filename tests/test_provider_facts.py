"""Each provider's facts beyond its events are declared once, in its folder (its ``FACTS`` or its
decoder), and read from there."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamkit import InvalidToolCall, Limits, iter_tool_calls
from streamkit._detect import _classify
from streamkit._errors import UsageError
from streamkit._events import ErrorReceived
from streamkit._foreign import _reported
from streamkit._live import AUTH
from streamkit._redact import secrets
from streamkit._reemit import path_provider
from streamkit._response import _accepted
from streamkit._status import error_details_of
from streamkit._types import Call
from streamkit.integrations._chat import PROVIDERS, User, build
from streamkit.providers import DECODERS, FACTS, Decoder, decoder_for
from streamkit.serve._formats import FORMATS
from streamkit.serve._whole import whole_calls

PACKAGE = Path(__file__).resolve().parent.parent / "streamkit"
SOURCES = sorted(PACKAGE.rglob("*.py"))


def homes(cls: type[Decoder]) -> set[Path]:
    """The folders of a decoder's provider and of the decoders it extends (and the decoders' base):
    where its facts are declared."""
    modules = [
        Path(inspect.getfile(k)).resolve() for k in cls.__mro__ if k.__module__.startswith("streamkit.providers")
    ]
    return {
        path for module in modules for path in (module.parent.glob("*.py") if module.name == "decode.py" else [module])
    }


def declared(cls: type[Decoder]) -> set[str]:
    """The facts a provider declares that name something on the wire: what no other module restates."""
    declared = FACTS[cls.slug]
    facts = {*cls.content_types, *declared.request_headers, cls.done, declared.auth_header}
    facts |= {declared.base_url, declared.paths.request, declared.paths.end}
    return {fact for fact in facts if fact} - GENERIC


#: Media types that are no one provider's: those of the framings streamkit reads and writes
#: back (SSE's, NDJSON's: each framer names its own), and any JSON body's.
GENERIC = {"text/event-stream", "application/x-ndjson", "application/json"}


#: Each fact, and the modules where it may stand: its provider's folder (its facts, its decoder,
#: and its re-emitter, which writes its own provider's events and so names their types); no
#: module outside names them.
HOMES: dict[str, set[Path]] = {}
for _cls in DECODERS.values():
    for _fact in {*declared(_cls), *_cls.event_types}:
        HOMES.setdefault(_fact, set()).update(homes(_cls))


def restated(path: Path) -> list[str]:
    text = path.read_text()
    return sorted(
        fact
        for fact, places in HOMES.items()
        if path.resolve() not in places and (f'"{fact}"' in text or f"'{fact}'" in text)
    )


#: Modules that still restate facts, each pinned to exactly those: the test server speaks the
#: providers' protocols as a server does, and is to read them from their homes too.
NOT_YET_READ: dict[str, list[str]] = {
    "testing.py": ["application/vnd.amazon.eventstream"],
}


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(PACKAGE)) for p in SOURCES])
def test_no_module_restates_a_fact_declared_in_a_providers_home(path: Path) -> None:
    assert restated(path) == NOT_YET_READ.get(str(path.relative_to(PACKAGE)), [])


def test_the_facts_test_sees_a_restated_fact(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text('if frame.data == "[DONE]" and kind == "message_start":\n    pass\n')
    assert restated(stray) == ["[DONE]", "message_start"]


@pytest.mark.parametrize("slug", sorted(slug for slug, cls in DECODERS.items() if cls.done))
def test_done_is_compared_through_the_declared_fact(slug: str) -> None:
    # The literal stands once, where it is declared; every comparison reads ``self.done``.
    cls = DECODERS[slug]
    assert sum(path.read_text().count(f'"{cls.done}"') for path in homes(cls)) == 1


@pytest.mark.parametrize("slug", sorted(DECODERS))
def test_the_response_check_takes_each_declared_content_type(slug: str) -> None:
    decoder = DECODERS[slug]
    for kind in decoder.content_types:
        assert _accepted(httpx.Response(200, headers={"content-type": f"{kind}; charset=utf-8"}), decoder)
    assert not _accepted(httpx.Response(200, headers={"content-type": "text/html"}), decoder)


@pytest.mark.parametrize("slug", sorted(slug for slug, facts in FACTS.items() if facts.auth_header))
def test_the_declared_auth_header_is_sent_and_redacted(slug: str) -> None:
    facts = FACTS[slug]
    assert facts.auth_header is not None
    assert (AUTH[slug].header, AUTH[slug].template) == (facts.auth_header, facts.auth_value)
    assert facts.key_in(facts.auth_value.format("sk-0123456789")) == "sk-0123456789"
    request = httpx.Request("POST", "https://api.example/v1", headers={facts.auth_header: "sk-0123456789"})
    assert "sk-0123456789" in secrets(request)


@pytest.mark.parametrize("slug", sorted(slug for slug, cls in DECODERS.items() if cls.event_types))
def test_detection_reads_the_declared_event_types(slug: str) -> None:
    for kind in DECODERS[slug].event_types:
        assert (_classify(kind, {}), _classify(None, {"type": kind})) == (slug, slug)


#: One error object per provider with both of its type fields set, the wire shape its stream
#: carries it in, and the type that provider's reader takes: the readers once disagreed here.
ERRORS: dict[str, tuple[dict[str, Any], dict[str, Any], str]] = {
    "openai_chat": ({"type": "server_error", "code": "500", "message": "m"}, {}, "server_error"),
    "openai_responses": ({"type": "error", "code": "rate_limit_exceeded", "message": "m"}, {}, "rate_limit_exceeded"),
    "gemini": ({"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "m"}, {}, "RESOURCE_EXHAUSTED"),
    "anthropic": ({"type": "overloaded_error", "message": "m"}, {"type": "error"}, "overloaded_error"),
    "ollama": ({"type": "server_error", "message": "m"}, {}, "server_error"),
}


def stream_error(slug: str, error: dict[str, Any], envelope: dict[str, Any]) -> list[Any]:
    if slug == "openai_responses":  # the fields at the top of the error event
        return DECODERS[slug]().feed_payload(error)
    return DECODERS[slug]().feed_payload({**envelope, "error": error})


@pytest.mark.parametrize("slug", sorted(ERRORS))
def test_every_reader_reads_a_providers_error_object_alike(slug: str) -> None:
    error, envelope, kind = ERRORS[slug]
    cls = DECODERS[slug]
    assert stream_error(slug, error, envelope) == [ErrorReceived(kind, "m")]
    assert error_details_of(json.dumps({"error": error}).encode(), cls) == (kind, "m")
    assert _reported(_SDKError(body={"error": error}), cls) == (kind, "m")
    assert _reported(_SDKError(body=error), cls) == (kind, "m")  # openai's SDK keeps the object itself


def test_a_body_in_another_providers_shape_is_read_in_that_shape() -> None:
    # A gateway in front of OpenAI answering with Gemini's error: its status names the type,
    # though OpenAI's own "code" field comes first and holds a number.
    body = {"error": {"code": 503, "status": "UNAVAILABLE", "message": "try later"}}
    assert error_details_of(json.dumps(body).encode(), DECODERS["openai_chat"]) == ("UNAVAILABLE", "try later")
    assert error_details_of(json.dumps([body]).encode(), DECODERS["gemini"]) == ("UNAVAILABLE", "try later")


def test_an_error_object_without_a_message_is_carried_as_its_json_text() -> None:
    assert DECODERS["gemini"]().feed_payload({"error": {"code": 500}}) == [ErrorReceived("500", '{"code": 500}')]


def test_the_provider_lookup_names_what_was_passed_and_what_is_known() -> None:
    known = ", ".join(sorted(DECODERS))
    for wrong in ("openai", None, ["gemini"]):
        with pytest.raises(UsageError) as info:
            decoder_for(wrong)
        assert str(info.value) == f"unknown provider {wrong!r}; known providers: {known}"
    assert decoder_for("gemini") is DECODERS["gemini"]


class _SDKError(Exception):
    def __init__(self, *, body: Any) -> None:
        super().__init__("sdk text")
        self.body = body


def _sse(data: dict[str, Any], event: str | None = None) -> str:
    return (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"


def _chat_answer(reason: str, arguments: str) -> tuple[bytes, dict[str, Any]]:
    """One call and the finish reason ``reason``, streamed and as one body."""
    function = {"name": "get_weather", "arguments": arguments}
    call = {"index": 0, "id": "call_1", "type": "function", "function": function}
    chunks = [
        {"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]},
        {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]},
    ]
    stream = "".join(_sse(chunk) for chunk in chunks) + "data: [DONE]\n\n"
    message = {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": function}]}
    return stream.encode(), {"choices": [{"index": 0, "message": message, "finish_reason": reason}]}


def _messages_answer(reason: str, arguments: str) -> tuple[bytes, dict[str, Any]]:
    """One ``tool_use`` block and the stop reason ``reason``, streamed and as one body (whose
    ``input`` is what the API parsed of the text, here nothing)."""
    start = {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 1}}
    block = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": arguments},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(_sse(data, event) for event, data in events).encode(), {"content": [block], "stop_reason": reason}


def _cut(calls: list[Call]) -> list[bool]:
    return [isinstance(call, InvalidToolCall) and any(e.kind == "truncated" for e in call.errors) for call in calls]


@pytest.mark.parametrize("reason", list(DECODERS["openai_chat"].finish_reasons))
def test_a_chat_answer_gives_the_same_calls_streamed_and_not(reason: str) -> None:
    """Every finish reason cuts a call read whole exactly when it cuts the same call streamed
    (``content_filter`` and ``error`` as ``length``): both read the provider's one table."""
    stream, body = _chat_answer(reason, '{"city": "Paris"}')
    streamed = list(iter_tool_calls([stream], "openai_chat"))
    assert whole_calls("openai_chat", body, None, Limits()) == streamed
    assert _cut(streamed) == [reason in FACTS["openai_chat"].cutting]


@pytest.mark.parametrize("reason", list(DECODERS["anthropic"].finish_reasons))
def test_a_messages_answer_cut_mid_call_is_cut_streamed_and_not(reason: str) -> None:
    """A ``tool_use`` block whose text stops mid-JSON is cut by the stop reasons that cut
    (``max_tokens``, ``model_context_window_exceeded``, ``refusal``), read whole or streamed."""
    stream, body = _messages_answer(reason, '{"city": "Pa')
    streamed = list(iter_tool_calls([stream], "anthropic"))
    assert _cut(whole_calls("anthropic", body, None, Limits())) == _cut(streamed)
    assert _cut(streamed) == [reason in FACTS["anthropic"].cutting]


def test_each_providers_facts_cut_on_its_length_filter_and_error_finishes() -> None:
    """``cutting`` is derived from the finish table, so a decoder and a body reader cannot differ."""
    assert FACTS["openai_chat"].cutting == {"length", "content_filter", "error", "insufficient_system_resource"}
    assert FACTS["anthropic"].cutting == {"max_tokens", "model_context_window_exceeded", "refusal"}
    assert FACTS["mistral"].cutting == FACTS["openai_chat"].cutting | {"model_length"}
    for slug, cls in DECODERS.items():
        assert cls.finish_reasons is FACTS[slug].finish_reasons


@pytest.mark.parametrize("slug", sorted(slug for slug, facts in FACTS.items() if facts.paths.end))
def test_a_requests_path_names_the_provider_whose_facts_declare_it(slug: str) -> None:
    """The transports name a stream's provider by its request's path, from the facts alone."""
    end = FACTS[slug].paths.end
    assert path_provider(f"/v1{end}") == slug
    if slug in FORMATS:  # the proxy serves the format under /v1 at the same path, and forwards it there
        assert (FORMATS[slug].path, FORMATS[slug].upstream_path) == (f"/v1{end}", end)


@pytest.mark.parametrize("slug", sorted(PROVIDERS))
def test_a_request_goes_where_the_providers_facts_say(slug: str) -> None:
    facts = FACTS[slug]
    request = build(slug, "m", [User("hi")], api_key="k", environ={})
    assert request.url == f"{facts.base_url}{facts.paths.request}".format(model="m")
