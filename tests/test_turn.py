"""A whole turn: its opaque state decoded, assembled and written back as the provider accepted it.

The round trips use recorded turns (tests/recorded_turns.md names each recording and where it
comes from): a streamed turn, and the follow-up request that sent it back with the tool results
and that the provider answered with 200. The history streamkit writes for the turn must carry
the same opaque state, in the same order. The recordings are not part of this repository: they
are read from ``../shared/recorded-turns/`` (or ``$STREAMKIT_RECORDED_TURNS``), and those tests
are skipped where they are absent; every other test here uses the repository's own fixtures.
"""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamkit import (
    CallState,
    InvalidToolCall,
    MessageItem,
    ProviderProtocolError,
    ReasoningItem,
    RedactedThinking,
    ResponseEnd,
    ServerToolResult,
    ServerToolUse,
    TextDelta,
    TextSignature,
    Thinking,
    ToolCall,
    Turn,
    UsageError,
    collect_turn,
    iter_events,
    iter_tool_calls,
)
from streamkit.adapters import ADAPTERS

from .eventstream_encode import event as aws_event
from .helpers import one_byte, slug, split_at, sse

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("STREAMKIT_RECORDED_TURNS", ROOT.parent / "shared" / "recorded-turns"))
recordings = pytest.mark.skipif(not DATA.is_dir(), reason=f"no recorded turns in {DATA} (tests/recorded_turns.md)")


def recorded(name: str) -> bytes:
    if name.startswith("bedrock"):
        events = json.loads((DATA / f"{name}.events.json").read_text())
        return b"".join(aws_event(*next(iter(item.items()))) for item in events)
    return (DATA / f"{name}.sse").read_bytes()


def followup(name: str) -> Any:
    return json.loads((DATA / f"{name}.followup.json").read_text())


def b64(text: str) -> bytes:
    """A signature's bytes: Google's SDK re-encodes signatures in the URL-safe alphabet."""
    return base64.b64decode(text.replace("-", "+").replace("_", "/"))


# -- round trips against accepted follow-up requests ----------------------------------------------


@recordings
def test_anthropic_thinking_and_server_tools_go_back_as_accepted() -> None:
    name = "anthropic_thinking_server_tools"
    turn = collect_turn([recorded(name)], "anthropic")
    assert turn.stop_reason == "pause_turn"
    (message,) = ADAPTERS["anthropic"].turn_messages(turn)
    want = followup(name)["content"]
    got = message["content"]
    assert (
        [block["type"] for block in got]
        == [block["type"] for block in want]
        == [
            "thinking",
            "text",
            "server_tool_use",
            "web_search_tool_result",
            "server_tool_use",
            "web_search_tool_result",
        ]
    )
    assert got[0] == {"type": "thinking", "thinking": want[0]["thinking"], "signature": want[0]["signature"]}
    assert got[1]["text"] == want[1]["text"]
    for use, theirs in ((got[2], want[2]), (got[4], want[4])):
        assert use == theirs  # id, name and the input its fragments made
    for result, theirs in ((got[3], want[3]), (got[5], want[5])):
        # As received; the recording's client left out ``caller`` and its cassette writer turned
        # typographic dashes in titles into ASCII, so the opaque parts are compared.
        assert result["caller"] == {"type": "direct"}
        assert result["tool_use_id"] == theirs["tool_use_id"]
        assert [(r["url"], r["encrypted_content"]) for r in result["content"]] == [
            (r["url"], r["encrypted_content"]) for r in theirs["content"]
        ]


@recordings
def test_gemini_call_signature_goes_back_on_its_call() -> None:
    name = "gemini_call_signature"
    turn = collect_turn([recorded(name)], "gemini")
    (message,) = ADAPTERS["gemini"].turn_messages(turn)
    (want,) = followup(name)["parts"]
    (got,) = message["parts"]
    assert got["functionCall"] == {"name": "get_country", "args": {}}
    # The SDK re-encoded the same bytes in the URL-safe alphabet; streamkit keeps the text as received.
    assert b64(got["thoughtSignature"]) == b64(want["thoughtSignature"])
    assert got["thoughtSignature"] in recorded(name).decode()


@recordings
def test_gemini_parallel_calls_keep_their_one_signature_on_the_first() -> None:
    name = "gemini_parallel_calls"
    turn = collect_turn([recorded(name)], "gemini")
    (message,) = ADAPTERS["gemini"].turn_messages(turn)
    want = followup(name)["parts"]
    got = message["parts"]
    assert ["thoughtSignature" in part for part in got] == ["thoughtSignature" in part for part in want]
    assert ["thoughtSignature" in part for part in got] == [True, False, False]
    assert b64(got[0]["thoughtSignature"]) == b64(want[0]["thoughtSignature"])
    assert [part["functionCall"]["name"] for part in got] == [part["functionCall"]["name"] for part in want]


@recordings
def test_responses_reasoning_item_message_and_call_go_back_as_accepted() -> None:
    name = "openai_responses_reasoning_call"
    turn = collect_turn([recorded(name)], "openai_responses")
    items = ADAPTERS["openai_responses"].turn_messages(turn)
    want = followup(name)
    assert (
        [item["type"] for item in items] == [item["type"] for item in want] == ["reasoning", "message", "function_call"]
    )
    reasoning, message, call = items
    for key in ("id", "encrypted_content", "summary"):
        assert reasoning[key] == want[0][key]
    assert (message["id"], message["phase"]) == (want[1]["id"], want[1]["phase"])
    assert call == {
        "type": "function_call",
        "id": want[2]["id"],
        "call_id": want[2]["call_id"],
        "name": want[2]["name"],
        "arguments": want[2]["arguments"],
    }
    # The item from output_item.added had another encrypted_content: the done event's is kept.
    assert reasoning["encrypted_content"] in recorded(name).decode().split("response.output_item.done", 1)[1]


@recordings
def test_bedrock_reasoning_then_tool_use_goes_back_as_accepted() -> None:
    name = "bedrock_reasoning_tool_use"
    turn = collect_turn([recorded(name)], "bedrock")
    assert ADAPTERS["bedrock"].turn_messages(turn) == [followup(name)]


# -- the rich stream: state as values of its own, calls unchanged ---------------------------------


def test_anthropic_events_in_order_and_calls_alone_unchanged() -> None:
    data = sse(
        {"type": "message_start", "message": {"id": "m1"}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "Ab+"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "/c="}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "Zz=="}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t1", "name": "f"}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    )
    assert list(iter_events([data], "anthropic")) == [
        Thinking("hm", "Ab+/c="),
        RedactedThinking("Zz=="),
        ToolCall(2, "t1", "f", {}),
        ResponseEnd("tool_use"),
    ]
    assert list(iter_tool_calls([data], "anthropic")) == [ToolCall(2, "t1", "f", {})]
    (message,) = ADAPTERS["anthropic"].turn_messages(collect_turn([data], "anthropic"))
    assert message["content"] == [
        {"type": "thinking", "thinking": "hm", "signature": "Ab+/c="},
        {"type": "redacted_thinking", "data": "Zz=="},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
    ]


def test_anthropic_server_tool_input_is_assembled_and_is_never_a_call() -> None:
    data = sse(
        {"type": "message_start", "message": {"id": "m1"}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"q":'}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '"x"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    )
    use = ServerToolUse({"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"q": "x"}})
    assert list(iter_events([data], "anthropic")) == [use, ResponseEnd("end_turn")]
    assert list(iter_tool_calls([data], "anthropic")) == []


def test_a_signature_delta_outside_a_thinking_block_is_a_protocol_error() -> None:
    data = sse(
        {"type": "message_start", "message": {"id": "m1"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "x"}},
    )
    with pytest.raises(
        ProviderProtocolError,
        match="event 'BlockDelta', call index 0: not allowed in state IDLE: the block never started",
    ):
        list(iter_events([data], "anthropic"))


SIGNED = sse(
    {"type": "message_start", "message": {"id": "m1"}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    *(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": piece}}
        for piece in ("EuwJCm4I", "DxgCKkBj", "ID0+egpR", "zHnlw==")
    ),
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
    {"type": "message_stop"},
)


def test_a_signature_split_over_deltas_and_bytes_assembles_the_same() -> None:
    want = [Thinking("", "EuwJCm4IDxgCKkBjID0+egpRzHnlw=="), ResponseEnd("end_turn")]
    assert list(iter_events([SIGNED], "anthropic")) == want
    assert list(iter_events(one_byte(SIGNED), "anthropic")) == want


@given(cuts=st.lists(st.integers(min_value=0, max_value=1 << 12), max_size=20))
def test_a_signature_is_chunking_invariant(cuts: list[int]) -> None:
    chunks = split_at(SIGNED, [c % (len(SIGNED) + 1) for c in cuts])
    assert next(iter(iter_events(chunks, "anthropic"))) == Thinking("", "EuwJCm4IDxgCKkBjID0+egpRzHnlw==")


@pytest.mark.parametrize("name", ["anthropic/thinking_then_call", "openai_responses/reasoning_then_call"])
def test_turns_are_chunking_invariant(name: str) -> None:
    provider = slug(name.split("/")[0])
    data = (ROOT / "fixtures" / f"{name}.sse").read_bytes()
    whole = collect_turn([data], provider)
    assert collect_turn([data[i : i + 7] for i in range(0, len(data), 7)], provider) == whole


def test_gemini_thoughts_text_signature_and_calls() -> None:
    data = sse(
        {"candidates": [{"content": {"parts": [{"text": "a", "thought": True}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "b", "thought": True, "thoughtSignature": "T1"}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]},
        {"candidates": [{"content": {"parts": [{"text": "", "thoughtSignature": "S1"}]}}]},
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "C1"},
                            {"functionCall": {"name": "g", "args": {"x": 1}}},
                        ]
                    },
                    "finishReason": "STOP",
                }
            ]
        },
    )
    events = list(iter_events([data], "gemini"))
    assert events == [
        Thinking("ab", "T1"),
        TextDelta("Hi"),
        TextSignature("S1"),
        CallState(0, "thoughtSignature", "C1"),  # before its call, as for every provider
        ToolCall(0, None, "f", {}, state={"thoughtSignature": "C1"}),
        ToolCall(1, None, "g", {"x": 1}),
        ResponseEnd("STOP"),
    ]
    (message,) = ADAPTERS["gemini"].turn_messages(Turn.from_events(events, "gemini"))
    assert message["parts"] == [
        {"text": "ab", "thought": True, "thoughtSignature": "T1"},
        {"text": "Hi", "thoughtSignature": "S1"},
        {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "C1"},
        {"functionCall": {"name": "g", "args": {"x": 1}}},
    ]


def test_deepseek_reasoning_content_is_kept_on_a_tool_calling_turn() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    data = sse(
        chunk({"reasoning_content": "think"}),
        chunk({"reasoning_content": "ing"}),
        chunk({"tool_calls": [call]}),
        chunk({}, "tool_calls"),
        "[DONE]",
    )
    turn = collect_turn([data], "openai_chat")
    assert turn.items == (Thinking("thinking"), ToolCall(0, "c1", "f", {}))
    (message,) = ADAPTERS["openai_chat"].turn_messages(turn)
    assert message["reasoning_content"] == "thinking"
    assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": "{}"}


def test_deepseek_reasoning_without_a_call_is_dropped_and_said_so() -> None:
    turn = Turn("openai_chat", (Thinking("t"), TextDelta("answer")))
    out = ADAPTERS["openai_chat"].turn_messages(turn)
    assert list(out) == [{"role": "assistant", "content": "answer"}]
    assert out.dropped == (Thinking("t"),)


def test_bedrock_redacted_reasoning_goes_back_as_received() -> None:
    turn = Turn("bedrock", (RedactedThinking("AAEC"), TextDelta("ok")))
    assert list(ADAPTERS["bedrock"].turn_messages(turn)) == [
        {"role": "assistant", "content": [{"reasoningContent": {"redactedContent": "AAEC"}}, {"text": "ok"}]}
    ]


# -- across providers: opaque state never crosses -----------------------------------------------

CALL = ToolCall(0, "toolu_1", "f", {"a": 1})


@pytest.mark.parametrize("target", sorted(ADAPTERS))
def test_another_providers_state_is_dropped_and_said_so(target: str) -> None:
    foreign = {
        "anthropic": "gemini",
        "bedrock": "anthropic",
        "gemini": "anthropic",
        "openai_responses": "anthropic",
    }.get(target, "anthropic")
    state = (
        Thinking("t", "SIG"),
        RedactedThinking("RED"),
        ReasoningItem({"type": "reasoning", "id": "rs_1", "encrypted_content": "ENC"}),
        MessageItem({"type": "message", "id": "msg_1"}),
        ServerToolUse({"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}),
        ServerToolResult({"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}),
        TextSignature("TS"),
        CallState(0, "thoughtSignature", "CS"),
    )
    turn = Turn(foreign, (*state, TextDelta("hi"), CALL))
    out = ADAPTERS[target].turn_messages(turn)
    assert out.dropped == state
    text = json.dumps(list(out))
    for secret in ("SIG", "RED", "rs_1", "ENC", "msg_1", "s1", "TS", "CS"):
        assert secret not in text
    assert ("hi" in text and "toolu_1" in text) or target == "mistral"


def test_turn_messages_refuses_what_is_not_a_turn() -> None:
    with pytest.raises(UsageError, match=r"turn must be a streamkit\.Turn, got list"):
        ADAPTERS["anthropic"].turn_messages([CALL])  # type: ignore[arg-type]


def test_turn_from_events_joins_text_runs_and_keeps_the_end() -> None:
    bad = InvalidToolCall(1, None, "g", "{", ())
    turn = Turn.from_events(
        [TextDelta("a"), TextDelta("b"), CALL, TextDelta("c"), bad, ResponseEnd("stop", {"n": 1})], "openai_chat"
    )
    assert turn.items == (TextDelta("ab"), CALL, TextDelta("c"), bad)
    assert (turn.stop_reason, turn.usage, turn.text, turn.calls) == ("stop", {"n": 1}, "abc", (CALL, bad))
    with pytest.raises(UsageError, match=r"events\[0\] is not a streamkit value: str"):
        Turn.from_events(["x"], "openai_chat")  # type: ignore[list-item]


# -- the documented agent loop (docs/turns.md) runs as written ---------------------------------------


def test_the_documented_agent_turn_runs() -> None:
    import re

    from .helpers import FIXTURES, ROOT

    page = (ROOT / "docs" / "turns.md").read_text(encoding="utf-8")
    code = re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL)[0]
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    history: list[Any] = []
    data = (FIXTURES / "anthropic" / "thinking_then_call.sse").read_bytes()
    assert namespace["agent_turn"](history, [data], "anthropic") is True
    assert [block["type"] for block in history[0]["content"]] == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert history[0]["content"][0]["signature"] == "EqQBCkYIBRgCIkB3n+x/2Jq0Vf8w=="
    assert history[1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_01A", "content": '{"temp_c":21}'}],
    }


# -- cut-off blocks, errors, the async twin -------------------------------------------------------


def test_a_thinking_block_cut_by_the_output_limit_is_kept_unsigned_and_not_sent_to_anthropic() -> None:
    data = sse(
        {"type": "message_start", "message": {"id": "m1"}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "half"}},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}},
        {"type": "message_stop"},
    )
    turn = collect_turn([data], "anthropic")
    assert turn.items == (Thinking("half"),)
    out = ADAPTERS["anthropic"].turn_messages(turn)
    assert (list(out), out.dropped) == ([], (Thinking("half"),))


def test_a_server_tool_input_that_is_not_json_is_a_protocol_error() -> None:
    data = sse(
        {"type": "message_start", "message": {"id": "m1"}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"q"'}},
        {"type": "content_block_stop", "index": 0},
    )
    with pytest.raises(ProviderProtocolError, match=r"a server tool's input is not JSON") as info:
        list(iter_events([data], "anthropic"))
    assert (info.value.provider, info.value.index) == ("anthropic", 0)


def test_a_thinking_delta_in_a_server_tools_block_is_a_protocol_error() -> None:
    data = sse(
        {"type": "message_start", "message": {"id": "m1"}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "x"}},
    )
    with pytest.raises(ProviderProtocolError, match="call index 0: no 'text' part in a server_tool_use block"):
        list(iter_events([data], "anthropic"))


def test_the_turn_stage_refuses_events_for_blocks_that_are_not_open() -> None:
    from streamkit._events import BlockDelta, BlockEnded, BlockStarted
    from streamkit._turn import TurnStage

    stage = TurnStage("anthropic")
    with pytest.raises(ProviderProtocolError) as info:
        stage.feed(BlockDelta(0, "text", "x"))
    assert str(info.value) == (
        "anthropic, event 'BlockDelta', call index 0: not allowed in state IDLE: the block never started"
    )
    assert info.value.state == "IDLE"
    with pytest.raises(ProviderProtocolError, match="unknown block kind 'essay'"):
        stage.feed(BlockStarted(0, "essay", {}))
    assert stage.feed(BlockStarted(0, "thinking", {})) == []
    with pytest.raises(ProviderProtocolError, match="not allowed in state OPEN: the block is already open"):
        stage.feed(BlockStarted(0, "thinking", {}))
    with pytest.raises(ProviderProtocolError, match="unknown part 'body'"):
        stage.feed(BlockDelta(0, "body", "x"))
    assert stage.feed(BlockEnded(0)) == [Thinking("", None)]
    assert stage.feed(BlockEnded(0)) == []  # a repeated end changes nothing
    with pytest.raises(ProviderProtocolError, match="not allowed in state DELIVERED: the block was already handed out"):
        stage.feed(BlockDelta(0, "text", "x"))


@pytest.mark.asyncio
async def test_the_async_twin_collects_the_same_turn() -> None:
    from streamkit import acollect_turn

    data = (ROOT / "fixtures" / "openai_responses" / "reasoning_then_call.sse").read_bytes()

    async def chunks() -> Any:
        for start in range(0, len(data), 50):
            yield data[start : start + 50]

    whole = collect_turn([data], "openai_responses")
    assert await acollect_turn(chunks(), "openai_responses") == whole


def test_a_call_id_carries_state_a_client_sends_back_and_reads_it_again() -> None:
    from streamkit._turn_types import carried, carrying

    state = {"thoughtSignature": "EqUC+/abc=="}
    ident = carrying("call_1", state)
    assert ident == "call_1__streamkit_eyJ0aG91Z2h0U2lnbmF0dXJlIjoiRXFVQysvYWJjPT0ifQ"
    assert re.fullmatch(r"[A-Za-z0-9_-]+", ident)  # every format's ids take it (Anthropic's pattern)
    assert carried(ident) == ("call_1", state)
    assert carrying("call_1", {}) == "call_1"  # nothing to carry: the id as it was
    assert carried("call_1") == ("call_1", {})
    assert carried("call_1__streamkit_!!") == ("call_1__streamkit_!!", {})  # not ours: as it came
    assert carried("call_1__streamkit_WzFd") == ("call_1__streamkit_WzFd", {})  # JSON, but no state
