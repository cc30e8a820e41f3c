"""DSPy over ``streamkit/<provider>/<model>``, through ``streamkit.integrations.litellm.register()``.

DSPy runs on LiteLLM. Its ``ReAct`` sends no tools: the model writes its next tool and arguments
as text fields (``[[ ## next_tool_args ## ]]``), which DSPy's adapter parses, repairing broken
JSON. So streamkit's call guarantees do not reach ``ReAct``'s calls, and a turn cut off by the
output limit can run a tool with repaired arguments: these tests pin what is true. Native tool
calls (a signature with a ``dspy.ToolCalls`` output) do come from streamkit, whole. Skipped
where DSPy is not installed (the ``framework-tests`` extra installs it).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .agent_turns import BASES, PATHS, fixture, sent
from .server import LoopbackServer, Reply, Turns
from .wire import AnthropicWire, OpenAIChatWire

pytest.importorskip("dspy")

import dspy

from streamkit.integrations import litellm as integration

from .models import ANTHROPIC, OPENAI

integration.register()

MODELS = {"openai_chat": f"streamkit/openai_chat/{OPENAI}", "anthropic": f"streamkit/anthropic/{ANTHROPIC}"}


def text_turn(provider: str, text: str, *, cut: bool = False) -> bytes:
    """A turn of text alone, ended as the provider ends an answer (or cut by the output limit)."""
    if provider == "anthropic":
        anthropic = AnthropicWire()
        anthropic.stop_reason = "max_tokens" if cut else "end_turn"
        return anthropic.begin() + anthropic.text(text) + anthropic.finish()
    chat = OpenAIChatWire()
    return chat.begin() + chat.text(text) + chat.chunk({}, "length" if cut else "stop") + b"data: [DONE]\n\n"


def fields(**values: str) -> str:
    """Output fields as DSPy's chat adapter asks the model to write them."""
    return "".join(f"[[ ## {name} ## ]]\n{value}\n\n" for name, value in values.items()) + "[[ ## completed ## ]]"


WEATHER = fields(next_thought="I need the weather.", next_tool_name="get_weather", next_tool_args='{"city": "Paris"}')
FINISH = fields(next_thought="Done.", next_tool_name="finish", next_tool_args="{}")
ANSWER = fields(reasoning="It is sunny.", answer="sunny")
#: A first turn the output limit cut inside the tool's arguments.
CUT = WEATHER[: WEATHER.index('"Paris"') + len('"Par')]


def react(
    server: LoopbackServer, provider: str, *turns: bytes, first: Reply | None = None, **lm: Any
) -> tuple[Any, list[str]]:
    """A ``ReAct`` program over the turns (after ``first``, when given); its prediction and the
    cities its tool ran with."""
    replies = [Reply([turn]) for turn in turns]
    server.routes = Turns(PATHS[provider], *([first] if first else []), *replies)
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return f"sunny in {city}"

    model = dspy.LM(MODELS[provider], api_base=server.url(BASES[provider]), api_key="k", cache=False, **lm)
    with dspy.context(lm=model, adapter=dspy.ChatAdapter()):
        prediction = dspy.ReAct("question -> answer", tools=[get_weather])(question="Weather in Paris?")
    return prediction, ran


def last_user_text(body: dict[str, Any]) -> str:
    content = [message for message in body["messages"] if message["role"] == "user"][-1]["content"]
    return content if isinstance(content, str) else "".join(block["text"] for block in content)


@pytest.mark.parametrize("provider", MODELS)
def test_react_writes_its_calls_as_text_and_runs_them(server: LoopbackServer, provider: str) -> None:
    turns = [text_turn(provider, text) for text in (WEATHER, FINISH, ANSWER)]
    prediction, ran = react(server, provider, *turns)  # DSPy's default num_retries=3 included
    assert (prediction.answer, ran, len(server.requests)) == ("sunny", ["Paris"], 3)
    bodies = [sent(server, number) for number in range(3)]
    assert all("tools" not in body for body in bodies)  # no native tool call: nothing for streamkit to check
    assert "[[ ## observation_0 ## ]]\nsunny in Paris\n\n" in last_user_text(bodies[1])


@pytest.mark.parametrize("provider", MODELS)
def test_react_runs_a_cut_turn_with_repaired_arguments(server: LoopbackServer, provider: str) -> None:
    first = text_turn(provider, CUT, cut=True)
    prediction, ran = react(server, provider, first, *(text_turn(provider, t) for t in (WEATHER, FINISH, ANSWER)))
    assert prediction.answer == "sunny"
    assert ran == ["Par", "Paris"]  # DSPy repaired '{"city": "Par' and ran the tool: only a warning says it was cut


class Ask(dspy.Signature):  # type: ignore[misc]  # DSPy's classes are untyped
    """Answer with tools."""

    question: str = dspy.InputField()
    tools: list[dspy.Tool] = dspy.InputField()
    calls: dspy.ToolCalls = dspy.OutputField()


def ask(server: LoopbackServer, name: str, model: Any = None) -> Any:
    server.routes = Turns(PATHS["openai_chat"], Reply([fixture(name)]))
    if model is None:
        model = dspy.LM(MODELS["openai_chat"], api_base=server.url("/v1"), api_key="k", cache=False, num_retries=0)

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return city

    def get_stock(ticker: str) -> str:
        """A stock's price."""
        return ticker

    with dspy.context(lm=model, adapter=dspy.ChatAdapter(use_native_function_calling=True)):
        tools = [dspy.Tool(get_weather), dspy.Tool(get_stock)]
        return dspy.Predict(Ask)(question="Weather in Paris, and AAPL?", tools=tools)


def test_native_tool_calls_come_whole_and_apart(server: LoopbackServer) -> None:
    prediction = ask(server, "openai_chat/parallel_calls_all_index_zero.sse")
    assert [(call.id, call.name, call.args) for call in prediction.calls.tool_calls] == [
        ("call_A", "get_weather", {"city": "Paris"}),
        ("call_B", "get_stock", {"ticker": "AAPL"}),
    ]
    assert "tools" not in sent(server, 0)  # LiteLLM knows no streamkit model's abilities: DSPy writes them as text


def test_a_cut_native_call_is_withheld_and_dspy_raises_naming_it(server: LoopbackServer) -> None:
    """DSPy has no loop to tell the model: its error names the call, and why it did not come."""
    from dspy.utils.exceptions import AdapterParseError

    with pytest.raises(AdapterParseError) as raised:
        ask(server, "openai_chat/length_truncated.sse")
    assert raised.value.lm_response == (
        "the tool call write_file (call_A) was not run: your arguments were cut off by the output limit; "
        "send less per call. Send the calls again, each whole."
    )
    assert "Expected to find output fields in the LM response: [calls]" in str(raised.value)
    assert raised.value.lm_response in str(raised.value)
    assert len(server.requests) == 2  # DSPy asks again through its JSONAdapter, as for any unparsed answer


def test_num_retries_resends_a_request_that_failed_before_its_response(server: LoopbackServer) -> None:
    busy = Reply([json.dumps({"error": {"type": "overloaded", "message": "busy"}}).encode()], status=503)
    busy.headers = [("retry-after-ms", "10")]
    turns = [text_turn("openai_chat", text) for text in (WEATHER, FINISH, ANSWER)]
    prediction, ran = react(server, "openai_chat", *turns, first=busy, num_retries=1)
    assert (prediction.answer, ran, len(server.requests)) == ("sunny", ["Paris"], 4)
    assert server.requests[0].body == server.requests[1].body


def test_without_retries_the_status_error_is_raised(server: LoopbackServer) -> None:
    busy = Reply([json.dumps({"error": {"type": "overloaded", "message": "busy"}}).encode()], status=503)
    with pytest.raises(Exception, match="503"):
        react(server, "openai_chat", text_turn("openai_chat", ANSWER), first=busy, num_retries=0)
    assert len(server.requests) == 1


def test_beside_a_whole_native_call_a_cut_one_is_left_out_and_listed_in_the_history(server: LoopbackServer) -> None:
    model = dspy.LM(MODELS["openai_chat"], api_base=server.url("/v1"), api_key="k", cache=False, num_retries=0)
    prediction = ask(server, "openai_chat/length_after_a_followed_call.sse", model)
    assert [(call.name, call.args) for call in prediction.calls.tool_calls] == [("get_stock", {"ticker": "AAPL"})]
    [withheld] = integration.invalid_calls(model.history[-1]["response"].choices[0].message)
    assert (withheld["id"], withheld["error"]["errors"][0]["kind"]) == ("call_St0ck2", "truncated")
    assert len(server.requests) == 1
