"""An OpenAI Chat Completions request read into streamkit's terms (``providers/openai_chat/asked.py``).

Its messages are read by the one reader the LiteLLM, smolagents and agno integrations hand theirs
to: each case below is read both ways, as a client's request (``ASKED``) and as a framework's
messages (``integrations._openai_messages``), and must give the same conversation; the two differ
only in how a call's arguments that are not an object are worded (the integrations name every
issue the stream's reading names).
"""

from __future__ import annotations

from typing import Any

import pytest

from streamkit import InvalidToolCall, ToolCall
from streamkit._errors import UsageError
from streamkit._turn_types import Results, Thinking, Turn, User
from streamkit._types import CallRef, TextDelta
from streamkit.integrations._openai_messages import conversation
from streamkit.providers import ASKED, MESSAGES
from streamkit.providers._request import Asked, RequestError

read = ASKED["openai_chat"]


def call(ident: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


USER = {"role": "user", "content": "Weather?"}
CALLS = {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_weather", '{"city":"Paris"}')]}
WEATHER = ToolCall(0, "c1", "get_weather", {"city": "Paris"})

#: Messages, and the system text and entries both readers make of them.
CASES: dict[str, tuple[list[dict[str, Any]], str | None, list[Any]]] = {
    "system and developer text joined": (
        [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": [{"type": "text", "text": "Use "}, {"type": "text", "text": "tools."}]},
            USER,
        ],
        "Be brief.\n\nUse tools.",
        [User("Weather?")],
    ),
    "a call and its result": (
        [USER, CALLS, {"role": "tool", "tool_call_id": "c1", "content": "Sunny"}],
        None,
        [User("Weather?"), Turn("openai_chat", (WEATHER,)), Results(((CallRef("c1", "get_weather"), "Sunny"),))],
    ),
    "neighbouring results are one Results, then the user's text": (
        [
            USER,
            {
                "role": "assistant",
                "content": "Both.",
                "reasoning_content": "Two tools.",
                "tool_calls": [call("c1", "get_weather", '{"city":"Paris"}'), call("c2", "get_stock", "")],
            },
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "Sunny"}]},
            {"role": "tool", "tool_call_id": "c2", "content": "190"},
            {"role": "user", "content": "Thanks."},
        ],
        None,
        [
            User("Weather?"),
            Turn(
                "openai_chat",
                (Thinking("Two tools."), TextDelta("Both."), WEATHER, ToolCall(1, "c2", "get_stock", {})),
            ),
            Results(((CallRef("c1", "get_weather"), "Sunny"), (CallRef("c2", "get_stock"), "190"))),
            User("Thanks."),
        ],
    ),
    "null arguments are none": (
        [USER, {"role": "assistant", "tool_calls": [call("c1", "get_time", "null")]}],
        None,
        [User("Weather?"), Turn("openai_chat", (ToolCall(0, "c1", "get_time", {}),))],
    ),
    "an empty assistant message is no turn": (
        [USER, {"role": "assistant", "content": ""}, USER],
        None,
        [User("Weather?"), User("Weather?")],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_request_and_a_frameworks_messages_are_read_alike(case: str) -> None:
    messages, system, entries = CASES[case]
    asked = read({"model": "m", "messages": messages})
    assert (asked.system, list(asked.entries)) == (system, entries)
    assert conversation("openai_chat", messages) == (system, entries)


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [('{"city": "Par', "invalid_json"), ("[1, 2]", "not_an_object"), ('"Paris"', "not_an_object")],
)
def test_arguments_that_are_not_an_object_make_an_invalid_call_both_ways(arguments: str, kind: str) -> None:
    messages = [USER, {"role": "assistant", "tool_calls": [call("c1", "get_weather", arguments)]}]
    asked = read({"model": "m", "messages": messages})
    _, framework = conversation("openai_chat", messages)
    for entries in (list(asked.entries), framework):
        turn = entries[1]
        assert isinstance(turn, Turn)
        [bad] = turn.items
        assert isinstance(bad, InvalidToolCall)
        assert (bad.id, bad.name, bad.raw, [issue.kind for issue in bad.errors]) == (
            "c1",
            "get_weather",
            arguments,
            [kind],
        )


def test_the_registry_hands_the_integrations_the_folders_reader() -> None:
    [(slug, reader)] = MESSAGES.items()
    assert slug == "openai_chat"
    assert reader.__module__ == "streamkit.providers.openai_chat.asked"


def test_a_field_left_unset_is_not_named_as_left_out() -> None:
    """Null, false or empty asks nothing, on the body as on a tool: only what is set is named."""
    body = {"model": "m", "messages": [USER], "store": False, "user": "", "metadata": None, "service_tier": "flex"}
    assert read(body).dropped == ("service_tier (a capacity hint)",)


def test_the_request_in_streamkits_terms() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    body = {
        "model": "m",
        "messages": [USER],
        "tools": tools,
        "max_tokens": 50,
        "max_completion_tokens": 100,
        "temperature": 0.2,
        "stop": ["END"],
        "seed": 7,
        "tool_choice": "required",
        "stream": True,
        "stream_options": {"include_usage": True},
        "n": 1,
        "user": "u1",
        "metadata": {"a": "b"},
        "store": True,
        "parallel_tool_calls": True,
    }
    assert read(body) == Asked(
        "m",
        None,
        (User("Weather?"),),
        tuple(tools),
        100,
        {"temperature": 0.2, "stop": ["END"], "seed": 7},
        "required",
        True,
        (
            "user (an end user's id for abuse reports)",
            "metadata (tags for completions OpenAI stores)",
            "store (whether OpenAI stores the completion)",
            "parallel_tool_calls (true: every model's default)",
        ),
    )


def test_parallel_tool_calls_false_is_carried_as_a_setting() -> None:
    asked = read({"model": "m", "messages": [USER], "parallel_tool_calls": False, "max_tokens": 9})
    assert (asked.settings, asked.dropped, asked.limit, asked.stream) == ({"parallel_tool_calls": False}, (), 9, False)


@pytest.mark.parametrize(
    ("choice", "read_as"),
    [
        (None, "auto"),
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ({"type": "function", "function": {"name": "get_weather"}}, "get_weather"),
    ],
)
def test_each_tool_choice(choice: Any, read_as: str) -> None:
    body = {"model": "m", "messages": [USER], **({} if choice is None else {"tool_choice": choice})}
    assert read(body).tool_choice == read_as


@pytest.mark.parametrize(
    ("body", "where", "reason"),
    [
        ({"messages": [USER]}, "model", "the model is missing"),
        ({"model": "m"}, "messages", "a list of messages is required"),
        ({"model": "m", "messages": [USER], "n": 3}, "n", "3 choices; streamkit carries one to another format"),
        (
            {"model": "m", "messages": [USER], "logprobs": True, "audio": {}},
            "audio",
            "streamkit does not carry this field to another format",
        ),
        (
            {"model": "m", "messages": [USER], "tool_choice": {"type": "allowed_tools"}},
            "tool_choice",
            "{'type': 'allowed_tools'} is not a tool choice streamkit carries to another format",
        ),
        (
            {"model": "m", "messages": [USER, {"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
            "messages[1].content[0].image_url",
            "an image's URL is a string",
        ),
        (
            {"model": "m", "messages": [{"role": "function", "content": "x"}]},
            "messages[0]",
            "has the role 'function'; streamkit sends system, user, assistant, tool",
        ),
        (
            {"model": "m", "messages": [{"role": "tool", "tool_call_id": "c9", "content": "x"}]},
            "messages[0].tool_call_id",
            "answers the call 'c9', which no assistant message before it made",
        ),
        ({"model": "m", "messages": ["hi"]}, "messages[0]", "is str, not a message object"),
        (
            {"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}]},
            "messages[0].tool_calls[0].function",
            "is str, not an object",
        ),
    ],
)
def test_what_cannot_be_carried_is_named(body: dict[str, Any], where: str, reason: str) -> None:
    with pytest.raises(RequestError) as raised:
        read(body)
    assert (raised.value.where, raised.value.reason, str(raised.value)) == (where, reason, f"{where}: {reason}")


def test_a_frameworks_message_error_names_the_message_without_a_colon() -> None:
    """The integrations' errors read as a sentence: the message first, then what is wrong with it."""
    with pytest.raises(UsageError) as raised:
        conversation("anthropic", [{"role": "user", "content": [{"type": "input_audio"}]}])
    assert str(raised.value) == "messages[0].content[0] is a 'input_audio' part; streamkit sends text and images"
    assert not isinstance(raised.value, RequestError)
