"""The end of a response in one vocabulary: ``finish`` from every provider's stop reasons, and
``TokenUsage`` from every provider's usage, with exact values, table by table."""

from __future__ import annotations

from typing import Any

import pytest

from streamkit import DECODERS, ResponseEnd, StreamError, TokenUsage, collect_turn, iter_events
from streamkit._ending import finish_of, tokens_of
from streamkit._events import StopReceived
from streamkit._types import FINISHES
from streamkit.providers import Decoder

from .helpers import Fixture, fixtures

#: Every provider's stop reasons and what each must finish as, written out here, not read from
#: the decoders: a reason added there without a row here fails the completeness test below.
FINISH: dict[str, dict[str, str]] = {
    "openai_chat": {
        "stop": "stop",
        "tool_calls": "tool_calls",
        "function_call": "tool_calls",
        "length": "length",
        "content_filter": "content_filter",
        "error": "error",
        "insufficient_system_resource": "error",
    },
    "mistral": {
        "stop": "stop",
        "tool_calls": "tool_calls",
        "function_call": "tool_calls",
        "length": "length",
        "model_length": "length",
        "content_filter": "content_filter",
        "error": "error",
        "insufficient_system_resource": "error",
    },
    "openai_responses": {
        "completed": "stop",
        "max_output_tokens": "length",
        "content_filter": "content_filter",
        "incomplete": "other",
    },
    "anthropic": {
        "end_turn": "stop",
        "stop_sequence": "stop",
        "tool_use": "tool_calls",
        "max_tokens": "length",
        "model_context_window_exceeded": "length",
        "refusal": "content_filter",
        "pause_turn": "other",
    },
    "bedrock": {
        "end_turn": "stop",
        "stop_sequence": "stop",
        "tool_use": "tool_calls",
        "max_tokens": "length",
        "model_context_window_exceeded": "length",
        "refusal": "content_filter",
        "pause_turn": "other",
        "guardrail_intervened": "content_filter",
        "content_filtered": "content_filter",
        "malformed_model_output": "error",
        "malformed_tool_use": "error",
    },
    "gemini": {
        "STOP": "stop",
        "MAX_TOKENS": "length",
        "SAFETY": "content_filter",
        "RECITATION": "content_filter",
        "BLOCKLIST": "content_filter",
        "PROHIBITED_CONTENT": "content_filter",
        "SPII": "content_filter",
        "IMAGE_SAFETY": "content_filter",
        "IMAGE_PROHIBITED_CONTENT": "content_filter",
        "IMAGE_RECITATION": "content_filter",
        "MALFORMED_FUNCTION_CALL": "error",
        "UNEXPECTED_TOOL_CALL": "error",
        "TOO_MANY_TOOL_CALLS": "error",
        "FINISH_REASON_UNSPECIFIED": "other",
        "BLOCKED_REASON_UNSPECIFIED": "other",
        "LANGUAGE": "other",
        "OTHER": "other",
    },
    "cohere": {
        "COMPLETE": "stop",
        "STOP_SEQUENCE": "stop",
        "TOOL_CALL": "tool_calls",
        "MAX_TOKENS": "length",
        "ERROR_LIMIT": "length",
        "ERROR_TOXIC": "content_filter",
    },
    "ollama": {"stop": "stop", "length": "length", "load": "other", "unload": "other"},
}
ROWS = [(slug, reason, finish) for slug, table in FINISH.items() for reason, finish in table.items()]


def test_every_provider_and_every_reason_has_a_row() -> None:
    assert sorted(FINISH) == sorted(DECODERS)
    for slug, table in FINISH.items():
        assert dict(DECODERS[slug].finish_reasons) == table, slug
    assert {finish for _, _, finish in ROWS} == set(FINISHES)  # the whole vocabulary is used


@pytest.mark.parametrize(("slug", "reason", "finish"), ROWS)
def test_each_stop_reason_finishes_as_its_row_says(slug: str, reason: str, finish: str) -> None:
    assert finish_of(DECODERS[slug].finish_reasons, reason, called=False) == finish
    # A normal stop after calls is tool_calls (Gemini, Responses and Ollama say only STOP);
    # every other finish stays what it is, so a truncated call is never a call to run.
    assert finish_of(DECODERS[slug].finish_reasons, reason, called=True) == (
        "tool_calls" if finish == "stop" else finish
    )


@pytest.mark.parametrize("slug", sorted(DECODERS))
def test_an_unknown_or_missing_reason_is_other(slug: str) -> None:
    assert finish_of(DECODERS[slug].finish_reasons, "SOMETHING_NEW", called=False) == "other"
    assert finish_of(DECODERS[slug].finish_reasons, "SOMETHING_NEW", called=True) == "other"
    assert finish_of(DECODERS[slug].finish_reasons, None, called=True) == "other"


def test_a_provider_not_known_finishes_as_other_and_counts_nothing() -> None:
    assert finish_of({}, "stop", called=True) == "other"  # a decoder of its own that declares no table
    assert tokens_of(Decoder.tokens, {"prompt_tokens": 1}) is None  # nor a reader of usage


#: A usage object as each provider sends it (merged, as the stream's pieces are), and its counts.
USAGE: dict[str, tuple[dict[str, Any], TokenUsage]] = {
    "openai_chat": (
        {
            "prompt_tokens": 149,
            "completion_tokens": 60,
            "total_tokens": 209,
            "prompt_tokens_details": {"cached_tokens": 128},
            "completion_tokens_details": {"reasoning_tokens": 32},
        },
        TokenUsage(149, 60, 128, 32),
    ),
    "mistral": ({"prompt_tokens": 124, "total_tokens": 146, "completion_tokens": 22}, TokenUsage(124, 22)),
    "openai_responses": (
        {
            "input_tokens": 31,
            "input_tokens_details": {"cached_tokens": 16},
            "output_tokens": 40,
            "output_tokens_details": {"reasoning_tokens": 24},
            "total_tokens": 71,
        },
        TokenUsage(31, 40, 16, 24),
    ),
    "anthropic": (
        {"input_tokens": 20, "cache_read_input_tokens": 300, "cache_creation_input_tokens": 57, "output_tokens": 65},
        TokenUsage(377, 65, 300, None),
    ),
    "bedrock": (
        {"inputTokens": 50, "outputTokens": 30, "totalTokens": 480, "cacheReadInputTokens": 400},
        TokenUsage(450, 30, 400, None),
    ),
    "gemini": (
        {
            "promptTokenCount": 29,
            "toolUsePromptTokenCount": 3,
            "candidatesTokenCount": 15,
            "thoughtsTokenCount": 45,
            "cachedContentTokenCount": 20,
            "totalTokenCount": 92,
        },
        TokenUsage(32, 60, 20, 45),
    ),
    "cohere": (
        {
            "billed_units": {"input_tokens": 119, "output_tokens": 44},
            "tokens": {"input_tokens": 1549, "output_tokens": 95},
            "cached_tokens": 1504,
        },
        TokenUsage(1549, 95, 1504, None),
    ),
    "ollama": ({"prompt_eval_count": 88, "eval_count": 21}, TokenUsage(88, 21)),
}


def test_every_provider_has_a_usage_row() -> None:
    assert sorted(USAGE) == sorted(DECODERS)


@pytest.mark.parametrize("slug", sorted(USAGE))
def test_each_providers_usage_reads_as_its_row_says(slug: str) -> None:
    usage, tokens = USAGE[slug]
    read = DECODERS[slug].tokens
    assert tokens_of(read, usage) == tokens
    assert tokens_of(read, None) is None
    assert tokens_of(read, {}) is None
    assert tokens_of(read, {"unrelated": 1}) is None  # none of the counts: no TokenUsage at all


def test_usage_values_that_are_not_integers_are_left_out_not_guessed() -> None:
    usage = {"prompt_tokens": "149", "completion_tokens": True, "prompt_tokens_details": None}
    assert tokens_of(DECODERS["openai_chat"].tokens, usage) is None
    assert tokens_of(DECODERS["cohere"].tokens, {"billed_units": {"input_tokens": 7}}) == TokenUsage(
        7, None, None, None
    )


#: One recorded stream per provider: the ResponseEnd each must end with, every field exact.
ENDS: dict[str, tuple[str, str, TokenUsage | None]] = {
    "anthropic/max_tokens_truncated": ("max_tokens", "length", TokenUsage(377, 4096)),
    "anthropic/text_only_crlf": ("end_turn", "stop", TokenUsage(377, 3)),
    "anthropic/text_then_two_calls": ("tool_use", "tool_calls", TokenUsage(377, 65)),
    "bedrock/max_tokens_truncated": ("max_tokens", "length", TokenUsage(150, 64)),
    "bedrock/text_then_two_calls": ("tool_use", "tool_calls", TokenUsage(512, 96)),
    "cohere/max_tokens_truncated": ("MAX_TOKENS", "length", TokenUsage(1549, 95, 1504)),
    "cohere/text_then_two_calls": ("TOOL_CALL", "tool_calls", TokenUsage(1549, 95, 1504)),
    "gemini/malformed_function_call": ("MALFORMED_FUNCTION_CALL", "error", TokenUsage(29, 60, None, 45)),
    "gemini/max_tokens_truncated": ("MAX_TOKENS", "length", TokenUsage(29, 60, None, 45)),
    "gemini/text_then_two_calls": ("STOP", "tool_calls", TokenUsage(29, 60, None, 45)),
    "gemini/vertex_crlf": ("STOP", "tool_calls", None),  # only totalTokenCount: no counts
    "mistral/length_truncated": ("length", "length", TokenUsage(124, 22)),
    "mistral/text_then_two_calls": ("tool_calls", "tool_calls", TokenUsage(124, 22)),
    "ollama/length_limit": ("length", "length", TokenUsage(150, 64)),
    "ollama/text_then_two_calls": ("stop", "tool_calls", TokenUsage(169, 45)),
    "openai_chat/length_truncated": ("length", "length", None),
    "openai_chat/stop_with_named_tool_choice": ("stop", "tool_calls", None),
    "openai_chat/text_then_two_calls": ("tool_calls", "tool_calls", TokenUsage(149, 60)),
    "openai_responses/incomplete_truncated": ("max_output_tokens", "length", TokenUsage(31, 40, 0, 0)),
    "openai_responses/text_then_two_calls": ("completed", "tool_calls", TokenUsage(31, 40, 0, 0)),
}
BY_CASE = {fixture.case: fixture for fixture in fixtures()}


def test_every_provider_has_recorded_ends_here() -> None:
    assert {case.split("/")[0] for case in ENDS} == set(DECODERS)


@pytest.mark.parametrize("case", sorted(ENDS))
def test_a_recorded_stream_ends_with_its_finish_and_tokens(case: str) -> None:
    fixture: Fixture = BY_CASE[case]
    end = list(iter_events([fixture.path.read_bytes()], fixture.provider))[-1]
    assert isinstance(end, ResponseEnd)
    stop_reason, finish, tokens = ENDS[case]
    assert (end.stop_reason, end.finish, end.tokens) == (stop_reason, finish, tokens)
    turn = collect_turn([fixture.path.read_bytes()], fixture.provider)
    assert (turn.finish, turn.tokens) == (finish, tokens)


def test_a_text_only_gemini_stop_is_stop() -> None:
    data = (
        b'data: {"candidates":[{"content":{"parts":[{"text":"Hi"}]},"finishReason":"STOP"}],'
        b'"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1}}\n\n'
    )
    end = list(iter_events([data], "gemini"))[-1]
    assert isinstance(end, ResponseEnd)
    assert (end.finish, end.tokens) == ("stop", TokenUsage(3, 1, None, None))


@pytest.mark.parametrize("fixture", fixtures(), ids=lambda f: f.case)
def test_every_recorded_end_finishes_in_the_vocabulary(fixture: Fixture) -> None:
    try:
        end = list(iter_events([fixture.path.read_bytes()], fixture.provider))[-1]
    except StreamError:
        return
    assert isinstance(end, ResponseEnd)
    assert end.finish in FINISHES
    assert end.finish != "other" or end.stop_reason is None  # every recorded reason is in a table


def test_finish_and_tokens_do_not_change_equality() -> None:
    assert ResponseEnd("tool_use", {"input_tokens": 1}) == ResponseEnd(
        "tool_use", {"input_tokens": 1}, finish="tool_calls", tokens=TokenUsage(1)
    )


@pytest.mark.parametrize(
    ("slug", "reason", "cut"),
    [
        ("openai_chat", "length", True),
        ("openai_chat", "insufficient_system_resource", True),  # DeepSeek: an error, read from the table
        ("openai_chat", "stop", False),
        ("mistral", "model_length", True),  # Mistral's own reason, in its own table
        ("mistral", "tool_calls", False),
    ],
)
def test_a_choice_is_cut_by_the_reasons_its_table_says_are_a_cut(slug: str, reason: str, cut: bool) -> None:
    # The decoder's one table says both what a reason finishes as and whether it cuts open calls.
    decoder = DECODERS[slug]()
    events = decoder.feed_payload({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
    assert [(e.stop_reason, e.cut_open_calls) for e in events if isinstance(e, StopReceived)] == [(reason, cut)]
