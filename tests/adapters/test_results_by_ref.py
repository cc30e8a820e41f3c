"""Results written from a call's id and name alone (``CallRef``), and results of tools that raised
(``is_error=True``), for every provider, in each provider's own shape."""

from __future__ import annotations

from typing import Any

import pytest

import streamkit
from streamkit import CallRef, ToolCall, UsageError, call_id
from streamkit.adapters import ADAPTERS, Adapter
from streamkit.adapters._base import Outcome, failure_payload

SLUGS = sorted(ADAPTERS)
REF = CallRef("abcDEF123", "get_weather")  # an id every provider takes as it is
CALL = ToolCall(0, "abcDEF123", "get_weather", {"city": "Paris"})
RAISED = ValueError("no such city")
#: What the model is told about a tool that raised: the shape of an invalid call's errors.
PAYLOAD = {"ok": False, "errors": [{"kind": "tool_error", "message": "ValueError: no such city"}]}
TEXT = '{"ok":false,"errors":[{"kind":"tool_error","message":"ValueError: no such city"}]}'

#: What each provider is sent for a tool that raised: its own error flag, or the failure as text.
ERRORS: dict[str, list[dict[str, Any]]] = {
    "anthropic": [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "abcDEF123", "content": TEXT, "is_error": True}],
        }
    ],
    "bedrock": [
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "abcDEF123", "content": [{"json": PAYLOAD}], "status": "error"}}],
        }
    ],
    "cohere": [
        {"role": "tool", "tool_call_id": "abcDEF123", "content": [{"type": "document", "document": {"data": TEXT}}]}
    ],
    "gemini": [
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "get_weather", "response": {"error": PAYLOAD}, "id": "abcDEF123"}}],
        }
    ],
    "mistral": [{"role": "tool", "name": "get_weather", "tool_call_id": "abcDEF123", "content": TEXT}],
    "ollama": [{"role": "tool", "tool_name": "get_weather", "content": TEXT}],
    "openai_chat": [{"role": "tool", "tool_call_id": "abcDEF123", "content": TEXT}],
    "openai_responses": [{"type": "function_call_output", "call_id": "abcDEF123", "output": TEXT}],
}


def test_every_provider_has_its_error_shape_here() -> None:
    assert sorted(ERRORS) == SLUGS


@pytest.mark.parametrize("slug", SLUGS)
def test_a_tool_that_raised_is_written_in_the_providers_own_way(slug: str) -> None:
    adapter = ADAPTERS[slug]
    assert adapter.tool_result_message(REF, RAISED, is_error=True) == ERRORS[slug]
    assert adapter.tool_result_message(CALL, RAISED, is_error=True) == ERRORS[slug]
    assert adapter.tool_results_message([(REF, "ValueError: no such city", True)]) == ERRORS[slug]
    assert adapter.tool_results_message([(REF, RAISED, True)]) == ERRORS[slug]


@pytest.mark.parametrize("slug", SLUGS)
def test_a_ref_writes_what_the_call_writes(slug: str) -> None:
    adapter = ADAPTERS[slug]
    for result in ("sunny", {"temp": 21}, [1, 2]):
        assert adapter.tool_result_message(REF, result) == adapter.tool_result_message(CALL, result)
    mixed: list[Outcome] = [(REF, "sunny"), (CALL, "cloudy", False), (REF, "boom", True)]
    expected: list[Outcome] = [(CALL, "sunny"), (CALL, "cloudy"), (CALL, "boom", True)]
    assert adapter.tool_results_message(mixed) == adapter.tool_results_message(expected)


def test_a_failure_is_told_as_run_tools_tells_it() -> None:
    from streamkit import ToolResult

    assert failure_payload(RAISED) == PAYLOAD
    assert failure_payload(ValueError()) == {"ok": False, "errors": [{"kind": "tool_error", "message": "ValueError"}]}
    detail = {"code": 404}
    assert failure_payload(detail)["errors"][0]["message"] == '{"code":404}'
    for slug in SLUGS:  # the same entries as a failed ToolResult from run_tools
        failed = ToolResult(CALL, error=PAYLOAD)
        assert ADAPTERS[slug].tool_results_message([failed]) == ERRORS[slug], slug


@pytest.mark.parametrize("slug", ["anthropic", "bedrock", "cohere", "mistral", "openai_chat", "openai_responses"])
def test_a_ref_without_an_id_is_refused_where_the_provider_needs_one(slug: str) -> None:
    with pytest.raises(UsageError, match="the call of 'get_weather' has no id, and this provider needs one"):
        ADAPTERS[slug].tool_result_message(CallRef(None, "get_weather"), "sunny")


@pytest.mark.parametrize("slug", ["gemini", "ollama"])
def test_a_ref_without_an_id_is_enough_where_results_match_by_name(slug: str) -> None:
    no_id = ToolCall(0, None, "get_weather", {})
    adapter = ADAPTERS[slug]
    assert adapter.tool_result_message(CallRef(None, "get_weather"), "sunny") == adapter.tool_result_message(
        no_id, "sunny"
    )


def test_the_derived_id_is_public_and_a_ref_made_with_it_writes_the_same() -> None:
    no_id = ToolCall(3, None, "get_weather", {"city": "Paris"})
    derived = call_id(no_id)
    assert derived == streamkit.adapters.call_id(no_id) == call_id(no_id)  # the same every time
    assert derived.startswith("call_") and len(derived) == 29 and derived[5:].isalnum()
    assert call_id(CALL) == "abcDEF123"  # a call's own id is kept
    ref = CallRef(derived, "get_weather")
    for slug in ("openai_chat", "openai_responses", "anthropic", "cohere", "mistral", "bedrock"):
        assert ADAPTERS[slug].tool_result_message(ref, 1) == ADAPTERS[slug].tool_result_message(no_id, 1), slug


@pytest.mark.parametrize("slug", SLUGS)
def test_bad_refs_and_flags_are_usage_errors(slug: str) -> None:
    adapter: Any = ADAPTERS[slug]  # given what its types refuse
    with pytest.raises(UsageError, match="call must be a ToolCall, a CustomToolCall or a CallRef, got tuple"):
        adapter.tool_result_message(("abcDEF123", "get_weather"), "sunny")
    with pytest.raises(UsageError, match="is_error must be a bool, got str"):
        adapter.tool_result_message(REF, "sunny", is_error="yes")
    with pytest.raises(UsageError, match=r"outcomes\[0\] must be a \(call, result\) pair"):
        adapter.tool_results_message([(REF, "sunny", "yes")])


def test_every_adapter_module_is_an_adapter() -> None:
    adapters: list[Adapter] = [ADAPTERS[slug] for slug in SLUGS]  # typed by the protocol
    for adapter in adapters:
        for name in ("assistant_message", "tool_results_message", "tool_result_message", "error_result_message"):
            assert callable(getattr(adapter, name))
        assert callable(adapter.turn_messages)
