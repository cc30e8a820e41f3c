"""smolagents' own ``ToolCallingAgent`` over ``StreamkitModel``, against the loopback server.

On OpenAI Chat and Anthropic streams, streamed (``stream_outputs=True``) and not: two calls at
one index (or none) each run once with their own arguments; a turn with a cut call, invalid
JSON, a schema failure or an unknown tool runs none of its calls and the next request tells the
model why, in streamkit's words; a plain turn is smolagents' own parsing error. Each run ends on
the model's ``final_answer`` call. Skipped where smolagents is not installed (the
``framework-tests`` extra installs it).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamkit import UsageError
from streamkit.adapters._base import TRUNCATED_MESSAGE

from .agent_turns import CASES, PATHS, TWO_CHOICES, Case, calling, last_user_text, sent, serve
from .server import LoopbackServer, Reply, Turns

smolagents = pytest.importorskip("smolagents")

from streamkit.integrations.smolagents import InvalidCallsError, StreamkitModel  # noqa: E402

from .models import ANTHROPIC, OPENAI  # noqa: E402

FINAL = {"answer": "done"}
STREAMED = pytest.mark.parametrize("streamed", [False, True], ids=["generate", "generate_stream"])


def agent(model: StreamkitModel, ran: list[tuple[str, dict[str, Any]]], streamed: bool) -> Any:
    from smolagents import ToolCallingAgent, tool

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city.
        """
        ran.append(("get_weather", {"city": city}))
        return f"sunny in {city}"

    @tool
    def get_stock(ticker: str) -> str:
        """A stock's price.

        Args:
            ticker: the ticker.
        """
        ran.append(("get_stock", {"ticker": ticker}))
        return f"{ticker}: 190"

    @tool
    def write_file(path: str, content: str) -> str:
        """Write a file.

        Args:
            path: where.
            content: what.
        """
        ran.append(("write_file", {"path": path, "content": content}))
        return "written"

    @tool
    def read_file(path: str) -> str:
        """Read a file.

        Args:
            path: where.
        """
        ran.append(("read_file", {"path": path}))
        return f"the text of {path}"

    tools = [get_weather, get_stock, write_file, read_file]
    return ToolCallingAgent(tools=tools, model=model, stream_outputs=streamed, max_steps=3, verbosity_level=0)


def run(server: LoopbackServer, case: Case, streamed: bool) -> tuple[Any, list[tuple[str, dict[str, Any]]]]:
    base = serve(server, case, calling(case.provider, "call_F", "final_answer", FINAL))
    ran: list[tuple[str, dict[str, Any]]] = []
    model = StreamkitModel(case.provider, "m", base_url=base, api_key="k")
    try:
        return agent(model, ran, streamed).run("Weather in Paris, and AAPL?"), ran
    finally:
        model.close()


def said(role: str, text: str) -> dict[str, Any]:
    """A message as smolagents writes them: its content a list of parts."""
    return {"role": role, "content": [{"type": "text", "text": text}]}


def observations(case: Case) -> str:
    results = {"get_weather": "sunny in {city}", "get_stock": "{ticker}: 190", "read_file": "the text of {path}"}
    ordered = sorted(case.valid)  # smolagents writes them in the order of the call ids
    return "Observation:\n" + "\n".join(results[name].format(**arguments) for _, name, arguments in ordered)


CALLING = [name for name, case in CASES.items() if case.valid and not case.invalid]
ALL_INVALID = [name for name, case in CASES.items() if case.invalid and not case.valid]
MIXED = [name for name, case in CASES.items() if case.invalid and case.valid]
PLAIN = [name for name, case in CASES.items() if not case.valid and not case.invalid]


@STREAMED
@pytest.mark.parametrize("name", CALLING)
def test_each_call_runs_once_with_its_own_arguments(server: LoopbackServer, name: str, streamed: bool) -> None:
    case = CASES[name]
    answer, ran = run(server, case, streamed)
    assert answer == "done"
    assert sorted(ran, key=json.dumps) == sorted(((n, a) for _, n, a in case.valid), key=json.dumps)
    assert len(server.requests) == 2
    assert last_user_text(sent(server, 1)) == observations(case)


#: What streamkit says of each kind of invalid call (the schema's and JSON's words as in the fixtures).
SAID = {
    "truncated": TRUNCATED_MESSAGE,
    "invalid_json": "the arguments are not valid JSON: trailing comma is not allowed",
    "schema": '7 is not of type "string"',
    "unknown_tool": 'no tool named "delete_everything" was offered; the offered tools are: '
    "get_weather, get_stock, write_file, read_file, final_answer",
}
RETRY = (
    "\nNow let's retry: take care not to repeat previous errors! "
    "If you have retried several times, try a completely different approach.\n"
)


def told(case: Case) -> str:
    """What streamkit says of a case's invalid calls (``InvalidCallsError``'s words)."""
    said = [f"the tool call {tool} ({ident}) was not run: {SAID[kind]}" for ident, tool, kind in case.invalid]
    return "; ".join(said) + ". Send the calls again, each whole."


@STREAMED
@pytest.mark.parametrize("name", ALL_INVALID)
def test_a_turn_of_invalid_calls_only_runs_nothing_and_the_model_is_told(
    server: LoopbackServer, name: str, streamed: bool
) -> None:
    case = CASES[name]
    answer, ran = run(server, case, streamed)
    assert (answer, ran) == ("done", [])
    error = "Error while parsing tool call from model output: " + told(case)
    assert last_user_text(sent(server, 1)) == "Error:\n" + error + RETRY


@STREAMED
@pytest.mark.parametrize("name", MIXED)
def test_the_valid_calls_of_a_turn_run_and_the_model_is_told_of_the_invalid_ones(
    server: LoopbackServer, name: str, streamed: bool
) -> None:
    """Beside the observation of the calls that ran, the next request says why the others did not."""
    case = CASES[name]
    answer, ran = run(server, case, streamed)
    assert answer == "done"
    assert sorted(ran, key=json.dumps) == sorted(((n, a) for _, n, a in case.valid), key=json.dumps)
    assert len(server.requests) == 2
    assert last_user_text(sent(server, 1)) == observations(case) + "\n" + told(case)


@STREAMED
@pytest.mark.parametrize("name", PLAIN)
def test_a_plain_turn_is_smolagents_own_parsing_error(server: LoopbackServer, name: str, streamed: bool) -> None:
    case = CASES[name]
    answer, ran = run(server, case, streamed)
    assert (answer, ran) == ("done", [])
    told = last_user_text(sent(server, 1))
    assert told.startswith("Error:\nError while parsing tool call from model output: ")
    assert "the tool call" not in told


def test_generate_stream_gives_each_call_one_delta_at_an_index_of_its_own(server: LoopbackServer) -> None:
    from smolagents.models import agglomerate_stream_deltas

    case = CASES["openai_chat-two-at-index-0"]
    model = StreamkitModel("openai_chat", OPENAI, base_url=serve(server, case), api_key="k")
    deltas = list(model.generate_stream([said("user", "?")]))
    calls = [
        (d.index, d.id, d.function and d.function.name, d.function and d.function.arguments)
        for delta in deltas
        for d in delta.tool_calls or ()
    ]
    assert calls == [(0, "call_A", "get_weather", '{"city":"Paris"}'), (1, "call_B", "get_stock", '{"ticker":"AAPL"}')]
    message = agglomerate_stream_deltas(deltas)
    assert [(c.id, c.function.arguments) for c in message.tool_calls or ()] == [
        ("call_A", '{"city":"Paris"}'),
        ("call_B", '{"ticker":"AAPL"}'),
    ]
    model.close()


def test_generate_outside_an_agent_gives_the_valid_calls_and_raises_for_invalid_ones_only(
    server: LoopbackServer,
) -> None:
    case = CASES["anthropic-complete-then-cut"]
    model = StreamkitModel("anthropic", ANTHROPIC, base_url=serve(server, case), api_key="k")
    message = model.generate([said("user", "?")])
    assert [(call.id, call.function.name, call.function.arguments) for call in message.tool_calls or ()] == [
        ("toolu_A", "get_weather", {"city": "Paris"})
    ]
    assert model.parse_tool_calls(message) is message  # nothing to raise: the turn has a valid call
    server.routes = {PATHS["anthropic"]: Reply([CASES["anthropic-cut"].first])}
    message = model.generate([said("user", "?")])
    assert message.tool_calls is None
    with pytest.raises(InvalidCallsError) as raised:
        model.parse_tool_calls(message)
    assert ([call.id for call in raised.value.invalid], raised.value.withheld) == (["toolu_C"], ())
    model.close()


@STREAMED
def test_a_response_of_two_choices_is_refused_not_cut_to_one(server: LoopbackServer, streamed: bool) -> None:
    model = StreamkitModel("openai_chat", "m", base_url=serve(server, TWO_CHOICES), api_key="k")
    with pytest.raises(
        UsageError, match=r"^smolagents takes one answer per request, and the response holds choice 1: "
    ):
        list(model.generate_stream([said("user", "?")])) if streamed else model.generate([said("user", "?")])
    model.close()


def test_the_request_carries_the_system_prompt_tools_and_stop_sequences(server: LoopbackServer) -> None:
    from smolagents import tool

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city.
        """
        return city

    server.routes = Turns(PATHS["anthropic"], Reply([calling("anthropic", "t1", "get_weather", {"city": "Oslo"})]))
    model = StreamkitModel("anthropic", ANTHROPIC, base_url=server.url(""), api_key="k", max_tokens=99)
    messages = [said("system", "Be brief."), said("user", "Oslo?")]
    message = model.generate(messages, stop_sequences=["Observation:"], tools_to_call_from=[get_weather])
    assert [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()] == [
        ("t1", "get_weather", {"city": "Oslo"})
    ]
    body = sent(server, 0)
    assert (body["system"], body["max_tokens"], body["stop_sequences"]) == ("Be brief.", 99, ["Observation:"])
    [offered] = body["tools"]
    assert offered["name"] == "get_weather"
    assert offered["input_schema"] == {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "the city."}},
        "required": ["city"],
    }
    assert server.requests[0].headers["x-api-key"] == "k"
    model.close()


def test_bad_arguments_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="provider='openai'"):
        StreamkitModel("openai", OPENAI)
    model = StreamkitModel("openai_chat", OPENAI, api_key="k")
    with pytest.raises(UsageError, match="response_format"):
        model.generate([said("user", "?")], response_format={"type": "json_object"})
