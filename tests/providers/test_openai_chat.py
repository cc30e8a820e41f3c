"""OpenAI Chat Completions and the compatible gateways' quirks."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamkit
from streamkit import (
    IncompleteStreamError,
    InvalidToolCall,
    LimitExceededError,
    Limits,
    ProviderError,
    ProviderProtocolError,
    ResponseEnd,
    TextDelta,
    ToolCall,
    UsageError,
)
from streamkit._events import ArgumentsDelta, BlockDelta, BlockEnded, BlockStarted, CallOpened, Frame
from streamkit.providers import OpenAIChatDecoder
from streamkit.providers.openai_chat import decode as openai_chat

from ..helpers import FIXTURES, events, split_at, sse


def chunk(*tool_calls: dict[str, Any], finish: str | None = None, choice: int = 0, **delta: Any) -> dict[str, Any]:
    if tool_calls:
        delta["tool_calls"] = list(tool_calls)
    return {"choices": [{"index": choice, "delta": delta, "finish_reason": finish}]}


def tc(index: int | None = None, id: str | None = None, name: str | None = None, args: Any = None) -> dict[str, Any]:  # noqa: A002
    entry: dict[str, Any] = {} if index is None else {"index": index}
    if id is not None:
        entry["id"] = id
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    entry["function"] = function
    return entry


FINISH = chunk(finish="tool_calls")


def calls(*payloads: object, **options: Any) -> list[object]:
    return [e for e in events(sse(*payloads, done=True), "openai_chat", **options) if not isinstance(e, ResponseEnd)]


def test_same_index_entries_in_one_chunk_merge() -> None:
    # openai-python #3201: id/name and the first arguments as two entries of the same index.
    out = calls(chunk(tc(0, "call_1", "f"), tc(0, args='{"a"')), chunk(tc(0, args=": 1}")), FINISH)
    assert out == [ToolCall(0, "call_1", "f", {"a": 1})]


def test_gapped_and_out_of_order_indexes() -> None:
    # openai-node #1963: a not-yet-seen index is placed at its index, not appended.
    out = calls(chunk(tc(2, "c2", "g", "{}")), chunk(tc(0, "c0", "f", '{"x": 0}')), FINISH)
    assert out == [ToolCall(2, "c2", "g", {}), ToolCall(0, "c0", "f", {"x": 0})]


def test_missing_index_continues_the_open_call() -> None:
    # ollama #7881, mistral.rs #1507, langchain #34654
    out = calls(chunk(tc(None, "c1", "f", '{"a":')), chunk(tc(None, args=" 1}")), FINISH)
    assert out == [ToolCall(0, "c1", "f", {"a": 1}, anomalies=("index_missing",))]


def test_missing_index_with_a_new_id_starts_the_next_call() -> None:
    out = calls(chunk(tc(None, "c1", "f", "{}")), chunk(tc(None, "c2", "g", '{"b": 2}')), FINISH)
    assert out == [
        ToolCall(0, "c1", "f", {}, anomalies=("index_missing",)),
        ToolCall(1, "c2", "g", {"b": 2}, anomalies=("index_missing",)),
    ]


def test_every_call_at_index_zero_with_distinct_ids() -> None:
    # ollama #15457, langchainjs #8433, litellm #11558: never "add_new_taskadd_ideas" or {..}{..}
    out = calls(chunk(tc(0, "c1", "add_new_task", '{"t": 1}')), chunk(tc(0, "c2", "add_ideas", '{"i": 2}')), FINISH)
    assert out == [
        ToolCall(0, "c1", "add_new_task", {"t": 1}),
        ToolCall(1, "c2", "add_ideas", {"i": 2}, anomalies=("index_reused",)),
    ]


def test_a_new_call_on_an_occupied_index_never_looks_through_the_indexes_used(monkeypatch: pytest.MonkeyPatch) -> None:
    # Finding the next free index by the largest index used cost the square of the calls (vLLM,
    # SGLang and Ollama's /v1 send every call at index 0). Counted, not timed.
    listed = 0

    class Used(set[int]):
        def __iter__(self) -> Any:
            nonlocal listed
            listed += 1
            return super().__iter__()

    make = openai_chat._Choice.__init__

    def counted(self: openai_chat._Choice) -> None:
        make(self)
        self.used = Used()

    monkeypatch.setattr(openai_chat._Choice, "__init__", counted)
    payloads = [chunk(tc(0, f"c{n}", "f", f'{{"n": {n}}}')) for n in range(300)]
    out = calls(*payloads, FINISH, limits=Limits(max_calls=300))
    assert out == [ToolCall(n, f"c{n}", "f", {"n": n}, anomalies=("index_reused",) if n else ()) for n in range(300)]
    assert listed == 0


def test_id_repeated_on_every_chunk_is_set_once() -> None:
    # SGLang; litellm #20480: the id is never concatenated
    out = calls(chunk(tc(0, "c1", "f", '{"a"')), chunk(tc(0, "c1", None, ": 1}")), FINISH)
    assert out == [ToolCall(0, "c1", "f", {"a": 1}, anomalies=("id_repeated",))]


def test_placeholder_ids_and_names_never_replace_values() -> None:
    # vLLM's id "" on later chunks; LM Studio's name ""
    out = calls(chunk(tc(0, "c1", "f", '{"a"')), chunk(tc(0, "", "", ": 1}")), chunk(tc(0, "null", None, "")), FINISH)
    assert out == [ToolCall(0, "c1", "f", {"a": 1}, anomalies=("id_placeholder", "name_placeholder"))]


def test_name_repeated_on_every_delta_is_not_concatenated() -> None:
    # llama.cpp before PR #13800
    out = calls(chunk(tc(0, "c1", "f", '{"a"')), chunk(tc(0, None, "f", ": 1}")), FINISH)
    assert out == [ToolCall(0, "c1", "f", {"a": 1}, anomalies=("name_repeated",))]


def test_a_different_name_on_an_open_call_is_an_error() -> None:
    with pytest.raises(ProviderProtocolError, match="tool name changed from 'f' to 'g'"):
        calls(chunk(tc(0, "c1", "f", "{")), chunk(tc(0, None, "g", "}")), FINISH)


def test_arguments_as_an_object() -> None:
    out = calls(chunk(tc(0, "c1", "f", {"city": "Paris"})), FINISH)
    assert out == [ToolCall(0, "c1", "f", {"city": "Paris"}, anomalies=("arguments_object",))]


def test_full_arguments_resent_after_the_deltas() -> None:
    # litellm #20480, elizaOS #16973: never {...}{...}
    out = calls(chunk(tc(0, "c1", "f", '{"a": ')), chunk(tc(0, args="1}")), chunk(tc(0, "c1", "f", '{"a": 1}')), FINISH)
    assert out == [ToolCall(0, "c1", "f", {"a": 1}, anomalies=("id_repeated", "name_repeated", "arguments_resent"))]


def test_two_finish_reasons_deliver_each_call_once() -> None:
    # OpenRouter sends finish_reason twice (ai-sdk-provider #489)
    out = calls(chunk(tc(0, "c1", "f", "{}")), FINISH, FINISH)
    assert out == [ToolCall(0, "c1", "f", {})]


def test_parsable_prefix_is_not_an_end() -> None:
    # vercel/ai #13137: {"query":"test"} must not run without "limit"
    out = calls(chunk(tc(0, "c1", "search", '{"query":"test"}')), chunk(tc(0, args="")), FINISH)
    assert out == [ToolCall(0, "c1", "search", {"query": "test"})]
    split = calls(chunk(tc(0, "c1", "search", '{"query":"test"')), chunk(tc(0, args=',"limit":10}')), FINISH)
    assert split == [ToolCall(0, "c1", "search", {"query": "test", "limit": 10})]


def test_length_finish_truncates_even_parsable_calls() -> None:
    # langchain #39275, vercel/ai #19066: never a valid-looking call after a cut
    (call,) = calls(chunk(tc(0, "c1", "delete", '{"path": "/tmp/x"}')), chunk(finish="length"))
    assert isinstance(call, InvalidToolCall) and call.truncated and call.raw == '{"path": "/tmp/x"}'


def test_early_close_policy() -> None:
    opts = {"early_close": True}
    out = events(
        sse(chunk(tc(0, "a", "f", "{}")), chunk(tc(1, "b", "g", "{}")), FINISH, done=True), "openai_chat", **opts
    )
    assert out[:2] == [ToolCall(0, "a", "f", {}), ToolCall(1, "b", "g", {})]
    with pytest.raises(ProviderProtocolError, match="already delivered"):
        calls(chunk(tc(0, "a", "f", "{")), chunk(tc(1, "b", "g", "{}")), chunk(tc(0, args="}")), FINISH, **opts)


@pytest.mark.parametrize("early_close", [False, True])
def test_a_call_displaced_after_the_order_delivered_it_is_delivered_once_and_nothing_is_listed(
    early_close: bool,
) -> None:
    """Call a at index 0, call b at index 1 (which delivers a at once under early_close), then a
    new id at index 0: a's place is taken, whether or not it was still open; the decoder keeps
    no shadow of which calls are open, and the table delivers a once either way."""
    data = sse(
        chunk(tc(0, "a", "f", "{}")), chunk(tc(1, "b", "g", "{}")), chunk(tc(0, "c", "h", "{}")), FINISH, done=True
    )
    out = events(data, "openai_chat", early_close=early_close)
    assert out == [  # a at its displacement (or before, by the order); b and c at the finish
        ToolCall(0, "a", "f", {}),
        ToolCall(1, "b", "g", {}),
        ToolCall(2, "c", "h", {}, anomalies=("index_reused",)),
        ResponseEnd("tool_calls"),  # no anomaly of the response: no end marker came twice
    ]


TWO_OPENED = (FIXTURES / "openai_chat" / "two_calls_opened_before_arguments.sse").read_bytes()


@given(cuts=st.lists(st.integers(min_value=0, max_value=len(TWO_OPENED)), max_size=30))
def test_early_close_never_delivers_a_call_opened_before_any_arguments(cuts: list[int]) -> None:
    """Two calls opened before any arguments: the first is not delivered as {} by the second's
    start (run_tools would run delete_files() with its defaults), and the stream ends well."""
    out = list(streamkit.iter_events(split_at(TWO_OPENED, cuts), "openai_chat", early_close=True))
    assert out == [
        ToolCall(0, "call_Dz8x1", "delete_files", {"paths": ["build/"]}),
        ToolCall(1, "call_Lq3v7", "list_files", {"dir": "."}),
        ResponseEnd("tool_calls"),
    ]


def test_early_close_is_refused_for_providers_with_end_markers() -> None:
    with pytest.raises(UsageError, match="early_close"):
        events(b"", "anthropic", early_close=True)


def test_text_usage_and_skipped_chunks() -> None:
    azure_first = {"id": "", "choices": [], "prompt_filter_results": [{"prompt_index": 0}]}
    annotation = {"choices": [{"index": 0, "content_filter_offsets": {}, "finish_reason": None}]}
    out = events(
        sse(
            azure_first,
            chunk(role="assistant", content=None),
            chunk(content=""),
            chunk(content="Hi"),
            chunk(tool_calls=[]),
            annotation,
            chunk(finish="stop"),
            {"choices": [], "usage": {"total_tokens": 9}, "obfuscation": "xyz"},
            done=True,
        ),
        "openai_chat",
    )
    assert out == [TextDelta("Hi"), ResponseEnd("stop", {"total_tokens": 9})]


def test_sse_comments_and_empty_data_keep_alives() -> None:
    data = b": OPENROUTER PROCESSING\n\ndata: \n\n" + sse(chunk(tc(0, "a", "f", "{}")), FINISH, done=True)
    assert events(data, "openai_chat")[0] == ToolCall(0, "a", "f", {})


@pytest.mark.parametrize(
    ("payload", "kind", "message"),
    [
        ({"error": {"message": "boom", "type": "server_error"}}, "server_error", "boom"),
        ({"error": {"message": "tool", "code": "tool_use_failed"}}, "tool_use_failed", "tool"),
        ({"object": "error", "message": "vllm says no", "type": "BadRequestError"}, "BadRequestError", "vllm says no"),
    ],
)
def test_error_chunks(payload: dict[str, Any], kind: str, message: str) -> None:
    with pytest.raises(ProviderError) as info:
        events(sse(chunk(tc(0, "a", "f", '{"x')), payload), "openai_chat")
    assert (info.value.type, info.value.message, info.value.provider) == (kind, message, "openai_chat")
    (unfinished,) = info.value.unfinished
    assert unfinished.raw == '{"x' and unfinished.truncated


def test_error_next_to_a_finish_reason_does_not_deliver() -> None:
    payload = chunk(finish="error")
    payload["error"] = {"code": 502, "message": "upstream"}
    with pytest.raises(ProviderError, match="upstream"):
        calls(chunk(tc(0, "a", "f", "{}")), payload)


def test_stream_cut_without_finish_or_done() -> None:
    with pytest.raises(IncompleteStreamError) as info:
        events(sse(chunk(tc(0, "a", "f", '{"q": "par'))), "openai_chat")
    assert [c.raw for c in info.value.unfinished] == ['{"q": "par']


def test_garbage_after_done_is_ignored() -> None:
    data = sse(chunk(tc(0, "a", "f", "{}")), FINISH, done=True) + b"data: not json\n\n"
    assert events(data, "openai_chat")[-1] == ResponseEnd("tool_calls")


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"choices": {"index": 0}}, "$.choices must be a list"),
        ({"choices": [{"index": 0, "delta": {"tool_calls": {"a": 1}}}]}, "tool_calls must be a list"),
        (chunk(tc(0, "a", 5)), "function.name must be a string"),  # type: ignore[arg-type]
        (chunk({"index": "0", "id": "a"}), "index must be int"),
        ("[1, 2]", "must be a JSON object"),
        ("{not json", "event data is not JSON"),
    ],
)
def test_wrong_shapes_name_the_path(payload: object, path: str) -> None:
    with pytest.raises(ProviderProtocolError, match=re.escape(path)):
        events(sse(payload, done=True), "openai_chat")


def test_reasoning_between_argument_fragments_is_kept_and_closed() -> None:
    # A continuation chunk takes the hot path only when no reasoning block is open and it
    # carries no reasoning: otherwise the block is closed, or the reasoning kept, as always.
    decoder = OpenAIChatDecoder()
    assert decoder.feed_payload(chunk(tc(0, "c1", "f", ""))) == [CallOpened(0, "c1", "f")]
    thinking = [BlockStarted(0, "thinking", {}), BlockDelta(0, "text", "hm")]
    assert decoder.feed_payload(chunk(reasoning_content="hm")) == thinking
    more = Frame(None, json.dumps(chunk(tc(0, args="{}"))))
    assert decoder.feed(more) == [BlockEnded(0), ArgumentsDelta(0, "{}")]
    both = chunk(tc(0, args=" "), reasoning_content="again")
    assert decoder.feed_payload(both) == [
        BlockStarted(1, "thinking", {}),
        BlockDelta(1, "text", "again"),
        BlockEnded(1),
        ArgumentsDelta(0, " "),
    ]


# -- finish_reason per call, and streams with no [DONE] ---------------------------------------------


def test_each_finish_reason_ends_the_calls_opened_since_the_last() -> None:
    # DeepInfra and Z.ai: each parallel call whole in its own chunk, each with a finish_reason.
    out = events(
        sse(chunk(tc(0, "a", "f", "{}"), finish="tool_calls"), chunk(tc(1, "b", "g", '{"x": 1}'), finish="tool_calls"))
        + b"data: [DONE]\n\n",
        "openai_chat",
    )
    end = ResponseEnd("tool_calls", anomalies=("stop_reason_repeated",))
    assert out == [ToolCall(0, "a", "f", {}), ToolCall(1, "b", "g", {"x": 1}), end]


def test_the_first_finish_reason_is_the_stop_reason() -> None:
    # Together sends tool_calls, tool_calls, stop: the later two are listed, never taken.
    finishes = [chunk(finish=reason) for reason in ("tool_calls", "tool_calls", "stop")]
    out = events(sse(chunk(tc(0, "a", "f", "{}")), *finishes, done=True), "openai_chat")
    assert out == [ToolCall(0, "a", "f", {}), ResponseEnd("tool_calls", anomalies=("stop_reason_repeated",))]


def test_a_later_length_finish_cuts_the_calls_opened_since() -> None:
    out = calls(chunk(tc(0, "a", "f", "{}"), finish="tool_calls"), chunk(tc(1, "b", "g", '{"x": 1}'), finish="length"))
    assert out[0] == ToolCall(0, "a", "f", {})
    assert isinstance(out[1], InvalidToolCall) and out[1].truncated


NO_DONE = [chunk(content="Hi"), chunk(tc(0, "a", "f", "{}")), chunk(finish="tool_calls")]


def test_no_done_after_every_choice_finished_is_a_whole_response() -> None:
    # Cerebras ends every stream right after the chunk with finish_reason and usage.
    assert events(sse(*NO_DONE), "openai_chat") == [
        TextDelta("Hi"),
        ToolCall(0, "a", "f", {}),
        ResponseEnd("tool_calls"),
    ]
    assert events(sse(chunk(content="Hi", finish="stop")).replace(b"\n", b"\r\n"), "openai_chat") == [
        TextDelta("Hi"),
        ResponseEnd("stop"),
    ]


@pytest.mark.parametrize(
    ("payloads", "tail"),
    [
        pytest.param(NO_DONE[:2], b"", id="no-finish-reason"),
        pytest.param([chunk(content="Hi")], b"", id="text-with-no-finish-reason"),
        pytest.param([*NO_DONE, chunk(content="more", choice=1)], b"", id="a-second-choice-never-finished"),
        pytest.param([*NO_DONE, chunk(tc(1, "b", "g", "{}"))], b"", id="a-call-opened-after-the-finish"),
        pytest.param([*NO_DONE, chunk(reasoning_content="hm")], b"", id="reasoning-after-the-finish"),
        pytest.param(NO_DONE, b'data: {"choices": [], "usa', id="cut-inside-the-next-event"),
        pytest.param(NO_DONE, b"data: [DONE]\n", id="cut-before-the-blank-line"),
        pytest.param([{"choices": [], "usage": {"total_tokens": 1}}], b"", id="no-choice-at-all"),
    ],
)
def test_no_done_is_still_incomplete_when_anything_was_cut(payloads: list[dict[str, Any]], tail: bytes) -> None:
    with pytest.raises(IncompleteStreamError, match="ended before the provider's end-of-stream marker"):
        events(sse(*payloads) + tail, "openai_chat")


def test_choices_with_only_reasoning_or_text_count_against_max_choices() -> None:
    for delta in ({"reasoning_content": "hm"}, {"content": "hi"}):
        many = [chunk(choice=n, **delta) for n in range(3)]
        with pytest.raises(LimitExceededError) as info:
            events(sse(*many, done=True), "openai_chat", limits=Limits(max_choices=2))
        assert (info.value.limit, info.value.value) == ("max_choices", 2)
        assert len(events(sse(*many[:2], done=True), "openai_chat", limits=Limits(max_choices=2))) > 1
