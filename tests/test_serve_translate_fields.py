"""The fields inside a client's request, read to the last key: each one carried to the upstream,
left out and named (where leaving it out asks the same), or a ``RequestError`` naming it, never
read past. A tool's definition, a tool choice, a message's own fields, a block's hints, the
stream's options: each as Anthropic Messages, OpenAI Chat and OpenAI Responses clients send it."""

from __future__ import annotations

from typing import Any

import pytest

from streamkit._turn_types import User
from streamkit.providers import MESSAGES
from streamkit.providers._request import RequestError
from streamkit.serve._translate import translate

from .translating import CITY, chat_tools, messages_tools, responses_tools

#: Why a tool's ``strict`` is left out: the same words for every format.
STRICT = "the upstream is not asked to hold the arguments to the schema: streamkit checks each call against it"
UNKNOWN = "streamkit does not carry this field to another format"

#: get_weather, as each format declares it.
CHAT_TOOL = chat_tools(("get_weather", "The weather.", CITY))[0]
MESSAGES_TOOL = messages_tools(("get_weather", "The weather.", CITY))[0]
RESPONSES_TOOL = responses_tools(("get_weather", "The weather.", CITY))[0]
#: get_weather, as an upstream of Chat Completions is sent it (never with ``strict``).
WRITTEN_CHAT_TOOL = CHAT_TOOL


def messages_request(**fields: Any) -> dict[str, Any]:
    """An Anthropic Messages request: ``fields`` over a question and get_weather."""
    base = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "Weather?"}]}
    return {**base, "tools": [MESSAGES_TOOL], **fields}


def chat_request(**fields: Any) -> dict[str, Any]:
    """An OpenAI Chat request: ``fields`` over a question and get_weather."""
    return {"model": "m", "messages": [{"role": "user", "content": "Weather?"}], "tools": [CHAT_TOOL], **fields}


def refused(client: str, upstream: str, request: dict[str, Any]) -> tuple[str, str]:
    """Where and why translating ``request`` is refused."""
    with pytest.raises(RequestError) as raised:
        translate(client, upstream, request)
    return raised.value.where, raised.value.reason


# -- Anthropic Messages ------------------------------------------------------------------------


def test_an_anthropic_tools_hints_are_left_out_and_named_and_its_definition_carried() -> None:
    """A cache breakpoint, ``strict`` and eager input streaming ask nothing of the answer that
    streamkit does not already hold it to: each is named where it is."""
    tool = {**MESSAGES_TOOL, "cache_control": {"type": "ephemeral"}, "strict": True, "eager_input_streaming": True}
    translated = translate("anthropic", "openai_chat", messages_request(tools=[tool]))
    assert translated.body["tools"] == [WRITTEN_CHAT_TOOL]
    assert translated.asked.dropped == (
        "tools[0].cache_control (a cache hint)",
        f"tools[0].strict ({STRICT})",
        "tools[0].eager_input_streaming (how the call's input is streamed, not what it is)",
    )


def test_an_anthropic_tool_left_as_the_api_defaults_names_nothing() -> None:
    tool = {**MESSAGES_TOOL, "type": "custom", "strict": False, "defer_loading": False, "cache_control": None}
    translated = translate("anthropic", "openai_chat", messages_request(tools=[tool]))
    assert (translated.body["tools"], translated.asked.dropped) == ([WRITTEN_CHAT_TOOL], ())


def test_a_deferred_anthropic_tool_is_not_offered_and_named() -> None:
    """Anthropic shows a ``defer_loading`` tool to the model only once its tool search finds it;
    the upstream has no tool search, so the tool is not offered, as on Anthropic without one."""
    deferred = {**MESSAGES_TOOL, "name": "mcp__search", "defer_loading": True}
    translated = translate("anthropic", "openai_chat", messages_request(tools=[MESSAGES_TOOL, deferred]))
    assert translated.body["tools"] == [WRITTEN_CHAT_TOOL]
    assert translated.asked.dropped == (
        "tools[1] 'mcp__search' (defer_loading: Anthropic offers it only once its tool search finds it, and the "
        "upstream has no tool search: not offered)",
    )


def test_an_anthropic_tool_callable_directly_as_by_default_names_nothing() -> None:
    tool = {**MESSAGES_TOOL, "allowed_callers": ["direct"]}
    translated = translate("anthropic", "openai_chat", messages_request(tools=[tool]))
    assert (translated.body["tools"], translated.asked.dropped) == ([WRITTEN_CHAT_TOOL], ())


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        (
            "input_examples",
            [{"city": "Paris"}],
            "examples of the tool's input shown to the model, which the upstream's tool definitions cannot hold",
        ),
        (
            "allowed_callers",
            ["code_execution_20250825"],
            "who may call the tool (Anthropic's code execution), which the upstream cannot set",
        ),
        ("input_shape", {}, UNKNOWN),
    ],
)
def test_an_anthropic_tool_field_that_changes_what_is_offered_is_refused(field: str, value: Any, reason: str) -> None:
    request = messages_request(tools=[{**MESSAGES_TOOL, field: value}])
    assert refused("anthropic", "openai_chat", request) == (f"tools[0].{field}", reason)


def test_an_unknown_key_inside_an_anthropic_tool_choice_is_refused() -> None:
    request = messages_request(tool_choice={"type": "tool", "name": "get_weather", "disable_parallel": True})
    assert refused("anthropic", "openai_chat", request) == ("tool_choice.disable_parallel", UNKNOWN)


def test_an_anthropic_tool_choice_with_every_key_it_takes_is_carried() -> None:
    choice = {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": False}
    body = translate("anthropic", "openai_chat", messages_request(tool_choice=choice)).body
    assert (body["tool_choice"], "parallel_tool_calls" in body) == (
        {"type": "function", "function": {"name": "get_weather"}},
        False,
    )


def test_anthropic_cache_breakpoints_on_blocks_are_named_where_they_are() -> None:
    ephemeral = {"type": "ephemeral"}
    request = messages_request(
        system=[{"type": "text", "text": "Be brief.", "cache_control": ephemeral}],
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "Weather?", "cache_control": ephemeral}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "get_weather",
                                               "input": {"city": "Paris"}, "cache_control": ephemeral}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "cache_control": ephemeral,
                                          "content": [{"type": "text", "text": "Sunny", "cache_control": None}]}]},
        ],
    )  # fmt: skip
    translated = translate("anthropic", "openai_chat", request)
    assert translated.body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert translated.asked.dropped == (
        "system[0].cache_control (a cache hint)",
        "messages[0].content[0].cache_control (a cache hint)",
        "messages[1].content[0].cache_control (a cache hint)",
        "messages[2].content[0].cache_control (a cache hint)",
    )


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_anthropic_citations_on_a_text_block_are_refused(role: str) -> None:
    cited = {"type": "char_location", "cited_text": "Sunny", "document_index": 0}
    text = {"type": "text", "text": "It is sunny.", "citations": [cited]}
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "Ok."}]
    messages[0 if role == "user" else 1] = {"role": role, "content": [text]}
    where = f"messages[{0 if role == 'user' else 1}].content[0].citations"
    reason = "the places in documents the text cites, which the upstream's messages cannot hold"
    assert refused("anthropic", "openai_chat", messages_request(messages=messages)) == (where, reason)


def test_anthropic_citations_left_empty_ask_nothing() -> None:
    text = {"type": "text", "text": "It is sunny.", "citations": None}
    request = messages_request(
        messages=[{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": [text]}]
    )
    translated = translate("anthropic", "openai_chat", request)
    assert (translated.body["messages"][1], translated.asked.dropped) == (
        {"role": "assistant", "content": "It is sunny."},
        (),
    )


def test_anthropic_top_k_to_a_chat_upstream_is_refused_and_metadata_named() -> None:
    assert refused("anthropic", "openai_chat", messages_request(top_k=5)) == (
        "top_k",
        "the upstream's format (openai_chat) has no such setting",
    )
    translated = translate("anthropic", "openai_chat", messages_request(metadata={"user_id": "u1"}))
    assert ("metadata" in translated.body, translated.asked.dropped) == (
        False,
        ("metadata (its user id, for abuse reports)",),
    )


# -- OpenAI Chat -------------------------------------------------------------------------------


def test_a_chat_functions_strict_is_left_out_and_named() -> None:
    tool = {"type": "function", "function": {**CHAT_TOOL["function"], "strict": True}}
    translated = translate("openai_chat", "anthropic", chat_request(tools=[tool]))
    assert translated.body["tools"] == [MESSAGES_TOOL]
    assert translated.asked.dropped == (f"tools[0].function.strict ({STRICT})",)


def test_a_chat_function_with_strict_false_names_nothing() -> None:
    tool = {"type": "function", "function": {**CHAT_TOOL["function"], "strict": False}}
    assert translate("openai_chat", "anthropic", chat_request(tools=[tool])).asked.dropped == ()


@pytest.mark.parametrize(
    ("tool", "where"),
    [
        ({**CHAT_TOOL, "cache": True}, "tools[0].cache"),
        ({"type": "function", "function": {**CHAT_TOOL["function"], "examples": []}}, "tools[0].function.examples"),
    ],
)
def test_an_unknown_key_of_a_chat_tool_is_refused(tool: dict[str, Any], where: str) -> None:
    assert refused("openai_chat", "anthropic", chat_request(tools=[tool])) == (where, UNKNOWN)


@pytest.mark.parametrize(
    ("message", "where", "reason"),
    [
        (
            {"role": "user", "content": "Weather?", "name": "ann"},
            "messages[0].name",
            "the name of the message's author, which the upstream's messages cannot hold",
        ),
        (
            {"role": "system", "content": "Be brief.", "name": "rules"},
            "messages[0].name",
            "the name of the message's author, which the upstream's messages cannot hold",
        ),
        (
            {"role": "assistant", "content": None, "refusal": "I cannot help with that."},
            "messages[0].refusal",
            "the assistant's refusal, which streamkit does not carry: give it as the content",
        ),
        (
            {"role": "assistant", "content": None, "audio": {"id": "audio_1"}},
            "messages[0].audio",
            "an earlier answer's audio, kept by OpenAI's servers",
        ),
        (
            {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": "{}"}},
            "messages[0].function_call",
            "a call in the form before tool_calls, which streamkit does not read: give it as tool_calls",
        ),
    ],
)
def test_a_chat_messages_own_field_that_the_model_would_read_is_refused(
    message: dict[str, Any], where: str, reason: str
) -> None:
    request = chat_request(messages=[message, {"role": "user", "content": "Weather?"}])
    assert refused("openai_chat", "anthropic", request) == (where, reason)


def test_an_assistant_message_as_the_openai_sdk_dumps_it_is_read() -> None:
    """The SDK's message, appended whole: every field it has, unset."""
    unset = ("refusal", "audio", "function_call", "tool_calls", "name")
    dumped: dict[str, Any] = {"role": "assistant", "content": "Sunny.", "annotations": [], **dict.fromkeys(unset)}
    request = chat_request(messages=[{"role": "user", "content": "Weather?"}, dumped])
    translated = translate("openai_chat", "anthropic", request)
    assert (translated.body["messages"][1], translated.asked.dropped) == (
        {"role": "assistant", "content": [{"type": "text", "text": "Sunny."}]},
        (),
    )


def test_a_chat_custom_call_in_the_history_is_refused() -> None:
    call = {"id": "c1", "type": "custom", "custom": {"name": "apply_patch", "input": "*** Begin Patch"}}
    request = chat_request(
        messages=[{"role": "user", "content": "Fix it."}, {"role": "assistant", "tool_calls": [call]}]
    )
    assert refused("openai_chat", "anthropic", request) == (
        "messages[1].tool_calls[0].type",
        "a 'custom' call; streamkit carries function calls",
    )


def test_the_shared_chat_messages_reader_still_reads_a_frameworks_named_message() -> None:
    """LiteLLM and the other integrations hand their messages to the same reader: what a client
    of the proxy is refused for is theirs to send, as before."""
    assert MESSAGES["openai_chat"]("openai_chat", [{"role": "user", "content": "Hi", "name": "ann"}]) == (
        None,
        [User("Hi")],
    )


def test_chat_stream_options_are_read_to_the_last_key() -> None:
    options = {"include_usage": True, "include_obfuscation": True}
    translated = translate("openai_chat", "anthropic", chat_request(stream=True, stream_options=options))
    assert translated.asked.dropped == (
        "stream_options.include_obfuscation (padding in OpenAI's stream events, not part of the answer)",
    )
    unknown = chat_request(stream=True, stream_options={"include_usage": True, "chunk_size": 8})
    assert refused("openai_chat", "anthropic", unknown) == ("stream_options.chunk_size", UNKNOWN)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("logprobs", True),
        ("top_logprobs", 3),
        ("logit_bias", {"50256": -100}),
        ("modalities", ["text", "audio"]),
        ("prediction", {"type": "content", "content": "x"}),
        ("web_search_options", {}),
        ("verbosity", "low"),
        ("functions", [CHAT_TOOL["function"]]),
    ],
)
def test_chat_fields_another_format_has_no_place_for_are_refused(field: str, value: Any) -> None:
    assert refused("openai_chat", "anthropic", chat_request(**{field: value})) == (field, UNKNOWN)


# -- OpenAI Responses --------------------------------------------------------------------------


def responses_request(**fields: Any) -> dict[str, Any]:
    """An OpenAI Responses request: ``fields`` over a question and get_weather."""
    return {"model": "m", "input": "Weather?", "tools": [RESPONSES_TOOL], **fields}


def test_a_responses_json_schema_format_is_carried_with_its_strict_to_chat_and_refused_by_anthropic() -> None:
    schema = {"type": "json_schema", "name": "weather", "schema": CITY, "strict": True}
    request = responses_request(text={"format": schema})
    assert translate("openai_responses", "openai_chat", request).body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "weather", "schema": CITY, "strict": True},
    }
    assert refused("openai_responses", "anthropic", request) == (
        "response_format",
        "the upstream's format (anthropic) has no such setting",
    )


@pytest.mark.parametrize(
    "choice",
    [
        {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "get_weather"}]},
        {"type": "custom", "name": "apply_patch"},
        {"type": "web_search_preview"},
    ],
)
def test_a_responses_tool_choice_another_format_cannot_make_is_refused(choice: dict[str, Any]) -> None:
    where, reason = refused("openai_responses", "openai_chat", responses_request(tool_choice=choice))
    assert (where, reason) == (
        "tool_choice",
        f"{choice!r:.80} is not a tool choice streamkit carries to another format",
    )


@pytest.mark.parametrize(("field", "value"), [("max_tool_calls", 3), ("top_logprobs", 2), ("prompt", {"id": "p"})])
def test_responses_fields_another_format_has_no_place_for_are_refused(field: str, value: Any) -> None:
    assert refused("openai_responses", "openai_chat", responses_request(**{field: value})) == (field, UNKNOWN)


def test_a_responses_functions_strict_is_named_in_the_same_words() -> None:
    tool = {**RESPONSES_TOOL, "strict": True}
    translated = translate("openai_responses", "openai_chat", responses_request(tools=[tool]))
    assert translated.asked.dropped == (f"tools[0].strict ({STRICT})",)


def test_a_refused_field_set_to_zero_is_refused_not_taken_as_unset() -> None:
    """Unset is absent, null, false or empty: 0 is a value (JSON's 0 is not its false)."""
    request = {"model": "m", "input": [{"role": "user", "content": "Hi."}], "background": 0}
    with pytest.raises(RequestError, match=r"^background: "):
        translate("openai_responses", "openai_chat", request)


# -- Tool choices, every client format --------------------------------------------------------

#: Each format's tool choices, and what streamkit makes of them.
CHOICES_READ = [
    ("anthropic", None, "auto"),
    ("anthropic", {"type": "auto"}, "auto"),
    ("anthropic", {"type": "any"}, "required"),
    ("anthropic", {"type": "none"}, "none"),
    ("anthropic", {"type": "tool", "name": "get_weather"}, "get_weather"),
    ("openai_chat", None, "auto"),
    ("openai_chat", "required", "required"),
    ("openai_chat", "none", "none"),
    ("openai_chat", {"type": "function", "function": {"name": "get_weather"}}, "get_weather"),
    ("openai_responses", "auto", "auto"),
    ("openai_responses", "required", "required"),
    ("openai_responses", {"type": "function", "name": "get_weather"}, "get_weather"),
]


def request_of(client: str, **fields: Any) -> dict[str, Any]:
    build = {"anthropic": messages_request, "openai_chat": chat_request, "openai_responses": responses_request}
    return build[client](**fields)


@pytest.mark.parametrize(("client", "choice", "read"), CHOICES_READ)
def test_each_format_s_tool_choice_is_read_in_streamkit_s_terms(client: str, choice: Any, read: str) -> None:
    request = request_of(client) if choice is None else request_of(client, tool_choice=choice)
    assert translate(client, "gemini", request).asked.tool_choice == read


@pytest.mark.parametrize(
    ("client", "choice"),
    [
        ("anthropic", "auto"),  # Anthropic's choices are objects
        ("anthropic", {"type": "tool"}),
        ("anthropic", {"type": "required"}),
        ("openai_chat", "any"),
        ("openai_chat", {"type": "function", "function": {}}),
        ("openai_chat", {"type": "function", "name": "get_weather"}),  # Responses' shape
        ("openai_responses", {"type": "function", "function": {"name": "get_weather"}}),  # Chat's shape
        ("openai_responses", ["auto"]),
    ],
)
def test_a_tool_choice_a_format_does_not_take_is_refused(client: str, choice: Any) -> None:
    assert refused(client, "gemini", request_of(client, tool_choice=choice)) == (
        "tool_choice",
        f"{choice!r:.80} is not a tool choice streamkit carries to another format",
    )


@pytest.mark.parametrize(
    ("choice", "written"),
    [
        ("auto", {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", {"type": "any", "disable_parallel_tool_use": True}),
        (
            {"type": "function", "function": {"name": "get_weather"}},
            {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
        ),
        ("none", {"type": "none"}),  # no call to make: one at a time asks nothing
    ],
)
def test_one_call_at_a_time_reaches_anthropic_in_its_tool_choice(choice: Any, written: dict[str, Any]) -> None:
    body = translate("openai_chat", "anthropic", chat_request(tool_choice=choice, parallel_tool_calls=False)).body
    assert (body["tool_choice"], "parallel_tool_calls" in body) == (written, False)


def test_parallel_calls_asked_of_anthropic_leave_its_tool_choice_as_the_choice_writes_it() -> None:
    body = translate("openai_chat", "anthropic", chat_request(parallel_tool_calls=True)).body
    assert ("tool_choice" in body, "parallel_tool_calls" in body) == (False, False)


def test_a_responses_function_tool_is_checked_to_its_last_field() -> None:
    """Its ``strict`` is named; any other key it does not know is refused by name."""
    tool = {**RESPONSES_TOOL, "strict": True}
    assert translate("openai_responses", "openai_chat", responses_request(tools=[tool])).asked.dropped == (
        f"tools[0].strict ({STRICT})",
    )
    unknown = {**RESPONSES_TOOL, "defer": True}
    assert refused("openai_responses", "openai_chat", responses_request(tools=[unknown])) == ("tools[0].defer", UNKNOWN)
