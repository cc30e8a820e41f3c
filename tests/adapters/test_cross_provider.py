"""Across providers: decode from one, write for another, and read it back where a decoder exists.

Also what every adapter shares: the same functions, ids that match between a call and its
result, arguments serialized once, and clear errors for bad input.
"""

from __future__ import annotations

import dataclasses
import datetime
import inspect
import json
from typing import Any

import pytest

import streamkit
from streamkit import ArgumentIssue, InvalidToolCall, ToolCall, ToolResult, UsageError
from streamkit.adapters import ADAPTERS, _base, anthropic, openai_chat

from .cases import BAD_JSON, HAND_MADE, SCHEMA, TEXT, TRUNCATED, decoded, read_back

SLUGS = ("openai_chat", "openai_responses", "anthropic", "gemini", "cohere", "mistral", "ollama", "bedrock")
READABLE = ("openai_chat", "anthropic")  # the providers whose decoders read the written shape back


def sources() -> dict[str, tuple[str, list[ToolCall]]]:
    out = {slug: decoded(slug) for slug in READABLE}
    out.update({slug: (TEXT, calls) for slug, calls in HAND_MADE.items()})
    return out


SOURCES = sources()


def test_there_is_one_adapter_per_provider_with_the_same_functions() -> None:
    assert sorted(ADAPTERS) == sorted(SLUGS)
    assert streamkit.ADAPTERS is ADAPTERS
    reference = {name: inspect.signature(getattr(openai_chat, name)) for name in openai_chat.__all__}
    for slug, module in ADAPTERS.items():
        names = getattr(module, "__all__")  # noqa: B009  # a module's, not the Adapter protocol's
        assert names == openai_chat.__all__, slug
        assert {name: inspect.signature(getattr(module, name)) for name in names} == reference, slug


@pytest.mark.parametrize("source", SOURCES, ids=SOURCES.keys())
@pytest.mark.parametrize("target", READABLE)
def test_calls_written_for_another_provider_read_back_the_same(source: str, target: str) -> None:
    text, calls = SOURCES[source]
    (message,) = ADAPTERS[target].assistant_message(calls, text=text)
    back_text, back = read_back(target, message)
    assert back_text == text
    assert [(c.name, c.input) for c in back] == [(c.name, c.input) for c in calls]
    written_ids = _call_ids(target, [message])
    assert [c.id for c in back] == written_ids
    for call, written in zip(calls, written_ids, strict=True):
        if call.id is not None and (target != "anthropic" or call.id.replace("_", "").isalnum()):
            assert written == call.id  # ids the target accepts are kept as they are


def test_calls_without_ids_get_the_same_made_up_id_every_time() -> None:
    calls = HAND_MADE["gemini"]
    first = _call_ids("openai_chat", openai_chat.assistant_message(calls))
    assert first == _call_ids("openai_chat", openai_chat.assistant_message(calls))
    assert len(set(first)) == 2 and all(i.startswith("call_") and len(i) == 29 for i in first)
    assert _call_ids("anthropic", anthropic.assistant_message(calls)) == first
    other_input = ToolCall(0, None, "get_weather", {"city": "Rome"})
    assert _call_ids("openai_chat", openai_chat.assistant_message([other_input])) != first[:1]


@pytest.mark.parametrize("source", SOURCES, ids=SOURCES.keys())
@pytest.mark.parametrize("target", SLUGS)
def test_every_call_and_its_result_carry_the_same_id(source: str, target: str) -> None:
    _, calls = SOURCES[source]
    everything: list[ToolCall | InvalidToolCall] = [*calls, TRUNCATED, SCHEMA]
    adapter = ADAPTERS[target]
    history = adapter.assistant_message(everything)
    outcomes: list[Any] = [(call, {"ok": True}) for call in calls] + [TRUNCATED, SCHEMA]
    results = adapter.tool_results_message(outcomes)
    assert _call_ids(target, history) == _result_ids(target, results)
    assert _arguments(target, history)[: len(calls)] == [call.input for call in calls]


def _call_ids(target: str, history: list[dict[str, Any]]) -> list[Any]:
    if target == "openai_responses":
        return [item["call_id"] for item in history if item["type"] == "function_call"]
    (message,) = history
    if target in ("openai_chat", "cohere", "mistral"):
        return [call["id"] for call in message["tool_calls"]]
    if target == "ollama":
        return [call["function"]["name"] for call in message["tool_calls"]]  # results name the tool
    if target == "anthropic":
        return [block["id"] for block in message["content"] if block["type"] == "tool_use"]
    if target == "gemini":
        return [
            (p["functionCall"]["name"], p["functionCall"].get("id")) for p in message["parts"] if "functionCall" in p
        ]
    return [block["toolUse"]["toolUseId"] for block in message["content"] if "toolUse" in block]


def _result_ids(target: str, results: list[dict[str, Any]]) -> list[Any]:
    if target == "openai_responses":
        return [item["call_id"] for item in results]
    if target in ("openai_chat", "cohere", "mistral"):
        return [message["tool_call_id"] for message in results]
    if target == "ollama":
        return [message["tool_name"] for message in results]
    (message,) = results
    if target == "anthropic":
        return [block["tool_use_id"] for block in message["content"]]
    if target == "gemini":
        return [(p["functionResponse"]["name"], p["functionResponse"].get("id")) for p in message["parts"]]
    return [block["toolResult"]["toolUseId"] for block in message["content"]]


def _arguments(target: str, history: list[dict[str, Any]]) -> list[Any]:
    if target == "openai_responses":
        return [_loads(item["arguments"]) for item in history if item["type"] == "function_call"]
    (message,) = history
    if target in ("openai_chat", "cohere", "mistral"):
        return [_loads(call["function"]["arguments"]) for call in message["tool_calls"]]
    if target == "ollama":
        return [call["function"]["arguments"] for call in message["tool_calls"]]
    if target == "anthropic":
        return [block["input"] for block in message["content"] if block["type"] == "tool_use"]
    if target == "gemini":
        return [p["functionCall"]["args"] for p in message["parts"] if "functionCall" in p]
    return [block["toolUse"]["input"] for block in message["content"] if "toolUse" in block]


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


# --- late serialization ----------------------------------------------------------------------


@pytest.mark.parametrize("slug", SLUGS)
def test_tool_results_are_written_as_the_outcomes_they_stand_for(slug: str) -> None:
    adapter = ADAPTERS[slug]
    weather = ToolCall(0, "call_A", "get_weather", {"city": "Paris"})
    ran = ToolResult(weather, {"temp_c": 21})
    refused = ToolResult(TRUNCATED, error=_base.error_payload(TRUNCATED))
    assert adapter.tool_results_message([ran, refused]) == adapter.tool_results_message(
        [(weather, {"temp_c": 21}), TRUNCATED]
    )
    # A tool that failed is written as an invalid call with the same id and the same payload is.
    payload = {"ok": False, "errors": [{"kind": "tool_error", "message": "ValueError: no such city"}]}
    failed = ToolResult(weather, error=payload, exception=ValueError("no such city"))
    same = InvalidToolCall(
        0, "call_A", "get_weather", '{"city":"Paris"}', (ArgumentIssue("tool_error", "ValueError: no such city"),)
    )
    assert adapter.tool_results_message([failed]) == adapter.error_result_message(same)


def test_a_failed_tool_result_is_an_error_result_for_anthropic() -> None:
    weather = ToolCall(0, "toolu_1", "get_weather", {"city": "Paris"})
    payload = {"ok": False, "errors": [{"kind": "tool_error", "message": "TimeoutError"}]}
    assert anthropic.tool_results_message([ToolResult(weather, error=payload)]) == [
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": '{"ok":false,"errors":[{"kind":"tool_error","message":"TimeoutError"}]}',
                    "is_error": True,
                }
            ],
        }
    ]


def test_a_tool_result_is_checked_when_made() -> None:
    with pytest.raises(UsageError, match="an invalid call never runs: its result needs an error"):
        ToolResult(TRUNCATED, "output")
    with pytest.raises(UsageError, match="call must be a ToolCall, a CustomToolCall or an InvalidToolCall, got dict"):
        ToolResult({"name": "f"})  # type: ignore[arg-type]
    result = ToolResult(ToolCall(0, "call_A", "f", {}), error={"ok": False, "errors": []}, exception=KeyError("x"))
    assert (result.id, result.name, result.is_error) == ("call_A", "f", True)
    assert result == ToolResult(ToolCall(0, "call_A", "f", {}), error={"ok": False, "errors": []})
    assert repr(result) == "ToolResult(id='call_A', name='f', error={'ok': False, 'errors': []})"
    assert not ToolResult(ToolCall(0, "call_A", "f", {}), None).is_error


def test_arguments_are_serialized_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    real = _base.dumps

    def counting(value: Any, **options: Any) -> str:
        seen.append(value)
        return real(value, **options)

    monkeypatch.setattr(_base, "dumps", counting)
    _, calls = decoded("openai_chat")
    openai_chat.assistant_message(calls)
    assert seen == [{"city": "Paris"}, {"ticker": "AAPL"}]


def test_integers_beyond_64_bits_are_written_exactly() -> None:
    call = ToolCall(0, "call_A", "f", {"n": 10**30})
    (message,) = openai_chat.assistant_message([call])
    assert message["tool_calls"][0]["function"]["arguments"] == '{"n":1000000000000000000000000000000}'
    assert openai_chat.tool_result_message(call, 2**70)[0]["content"] == "1180591620717411303424"


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize("slug", SLUGS)
def test_bad_input_is_a_usage_error(slug: str) -> None:
    adapter: Any = ADAPTERS[slug]  # given what its types refuse
    with pytest.raises(UsageError, match="needs at least one call or some text"):
        adapter.assistant_message([])
    with pytest.raises(UsageError, match=r"calls\[0\] must be a ToolCall or an InvalidToolCall, got dict"):
        adapter.assistant_message([{"name": "f"}])
    with pytest.raises(UsageError, match="text must be a string or None, got int"):
        adapter.assistant_message([BAD_JSON], text=3)
    with pytest.raises(
        UsageError, match=r"outcomes\[1\] must be a \(call, result\) pair, a \(call, result, is_error\)"
    ):
        adapter.tool_results_message([BAD_JSON, ("f", 1)])
    with pytest.raises(UsageError, match="there are no results to write"):
        adapter.tool_results_message([])
    with pytest.raises(UsageError, match=r"outcomes\[0\] must be"):
        adapter.error_result_message(HAND_MADE["mistral"][0])  # a valid call is not an error


# --- outputs: written alike by every adapter, or refused alike ----------------------------------


class Opaque:
    """An object of the application's own, which no JSON writer knows."""


@dataclasses.dataclass
class Reading:
    city: str
    taken: datetime.date


UNWRITABLE = [
    pytest.param({"b", "a"}, "is of type set", id="set"),
    pytest.param(Opaque(), "is of type Opaque", id="object"),
    pytest.param({"tags": [1, {2}]}, "holds a value of type set at $.tags[1]", id="nested set"),
    pytest.param({"at": {(1, 2): "x"}}, "holds a dict key of type tuple at $.at", id="tuple key"),
]


def _written(target: str, results: list[dict[str, Any]]) -> Any:
    """The one output a results message carries, read back as JSON where the provider takes text."""
    if target == "openai_responses":
        return _loads(results[0]["output"])
    if target in ("openai_chat", "mistral", "ollama"):
        return _loads(results[0]["content"])
    if target == "cohere":
        return _loads(results[0]["content"][0]["document"]["data"])
    (message,) = results
    if target == "anthropic":
        return _loads(message["content"][0]["content"])
    if target == "gemini":
        return message["parts"][0]["functionResponse"]["response"]
    (block,) = message["content"][0]["toolResult"]["content"]
    return block.get("json", block.get("text"))


@pytest.mark.parametrize("slug", SLUGS)
@pytest.mark.parametrize(("output", "where"), UNWRITABLE)
def test_an_output_json_cannot_carry_is_refused_alike_naming_the_tool_the_call_and_the_type(
    slug: str, output: object, where: str
) -> None:
    adapter = ADAPTERS[slug]
    weather = ToolCall(0, "call_A", "get_weather", {"city": "Paris"})
    for outcomes in ([(weather, output)], [ToolResult(weather, output)], [(weather, output, True)]):
        with pytest.raises(UsageError) as info:
            adapter.tool_results_message(outcomes)
        assert str(info.value) == (
            f"the output of get_weather (call call_A) {where}, which JSON cannot carry: a tool returns a string, "
            "or JSON values (dict, list, str, int, float, bool, None)"
        )
    no_id = ToolCall(3, None, "get_weather", {"city": "Paris"})
    with pytest.raises(UsageError, match=r"^the output of get_weather \(call at index 3\) "):
        adapter.tool_result_message(no_id, output)


@pytest.mark.parametrize("slug", SLUGS)
def test_an_output_orjson_writes_is_written_alike_by_every_adapter(slug: str) -> None:
    weather = ToolCall(0, "call_A", "get_weather", {"city": "Paris"})
    output = {"reading": Reading("Paris", datetime.date(2025, 1, 2)), "range": (18, 24), "big": 2**70}
    plain = {"reading": {"city": "Paris", "taken": "2025-01-02"}, "range": [18, 24], "big": 2**70}
    written = _written(slug, ADAPTERS[slug].tool_result_message(weather, output))
    assert written == plain
    assert json.loads(json.dumps(written)) == plain  # plain JSON values, whichever way the provider takes them


def test_an_output_that_refers_to_itself_is_refused_naming_where() -> None:
    looped: list[Any] = [1]
    looped.append({"again": looped})
    with pytest.raises(UsageError, match=r"^the output of f \(call call_A\) refers to itself at \$\[1\]\.again, "):
        openai_chat.tool_result_message(ToolCall(0, "call_A", "f", {}), looped)
