"""Each scenario of a bad tool call on Ollama's ``/api/chat``, under the integrations that send
their own requests.

The runners, stand-in model and tools of ``tests/test_integrated_scenarios.py`` with
``provider="ollama"``: the stand-in answers on ``/api/chat`` in NDJSON (``tests/standin.py``'s
``ollama``), and reads the results of a request from its Ollama ``tool`` messages (each naming
its tool by ``tool_name``). Ollama sends each call whole, its arguments an object, in one line's
``message.tool_calls``, so the scenarios are what ``providers/ollama/decode.py`` can receive:

- ``index_zero``: two calls in one message, each at ``function.index`` 0 (as Ollama numbers
  any parallel calls);
- ``cut``: the ``done`` line says ``done_reason: "length"`` and holds the cut call's text as
  content, as Ollama's server does: no call arrives, so the turn is a text answer cut by the
  limit (``test_a_call_ollama_held_back_at_the_limit_is_told`` is what it should be);
- ``whole_then_cut``: a whole call, then that ``length`` line;
- ``invalid_json``: a call whose arguments are a string that is not JSON (as some
  Ollama-compatible servers send them), beside a valid call, one that fails its schema and one
  to a tool not offered;
- ``schema``: a valid call beside one that fails its schema;
- ``eof``: two whole calls, then the body ends with no ``done`` line: no call is open, so it
  fails as any stream that ends early with none open does (``integrations/_ending.py``).

pydantic-ai is not here: its ``wrap`` takes pydantic-ai's own models, none of which speaks
``/api/chat``. ``python -m tests.test_integrated_ollama`` prints the Ollama table of
docs/frameworks/scenarios.md. Skipped where a framework is not installed.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from .standin import AFTER, DONE, Outcome, describe
from .test_integrated_scenarios import FRAMEWORKS, PAGE, run

PROVIDER = "ollama"
#: The integrations whose model takes ``provider="ollama"``.
NAMES = [framework for framework in FRAMEWORKS if framework != "pydantic-ai"]
SCENARIOS = ("text", "index_zero", "cut", "whole_then_cut", "invalid_json", "schema", "eof")
CELLS = [(framework, scenario) for framework in NAMES for scenario in SCENARIOS]

#: The held text, as the run's answer.
HELD_ANSWER = """answer '<tool_call>\\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "Once upon'"""
ENDED_EARLY = "the stream ended before the provider's end-of-stream marker"
#: Each scenario's outcome where the model is told in streamkit's words.
OLLAMA = AFTER["openai_chat"] | {
    "cut": Outcome((), (), HELD_ANSWER, 1),
    "whole_then_cut": Outcome(("get_stock(AAPL)",), (), DONE, 2),
    "eof": Outcome((), (), f"raised IncompleteStreamError: ollama: {ENDED_EARLY}", 1),
}
#: Where a framework's own rule or words end a run otherwise, measured.
OWN: dict[tuple[str, str], Outcome] = {
    # an answer cut by the limit is an incomplete response, which the SDK raises for
    ("openai-agents", "cut"): Outcome(
        (), (), "raised ModelBehaviorError: Responses stream ended with terminal event `response.incomplete`. status", 1
    ),
    ("openai-agents", "invalid_json"): Outcome(
        (), (), "raised ModelBehaviorError: Tool delete_everything not found in agent assistant", 1
    ),
    ("litellm", "eof"): Outcome(
        (),
        (),
        "raised MidStreamFallbackError: litellm.MidStreamFallbackError: litellm.APIConnectionError: ollama: the ",
        1,
    ),
    # smolagents asks again after a turn with no call, and shows the model streamkit's sentence
    ("smolagents", "text"): Outcome((), ("The model output does not contain any JSON blob.",), DONE, 2),
    ("smolagents", "cut"): Outcome(
        ("write_file(a.txt, Once upon a time.)",), ("The model output does not contain any JSON blob.",), DONE, 3
    ),
    ("smolagents", "invalid_json"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"),
        ("the tool call get_weather (call_1) was not run: the argument",),
        DONE,
        3,
    ),
    ("smolagents", "schema"): Outcome(
        ("get_stock(AAPL)", "get_weather(Paris)"),
        ('the tool call get_weather (call_W) was not run: "town" is no',),
        DONE,
        3,
    ),
    ("smolagents", "eof"): Outcome(
        (),
        (),
        "raised AgentGenerationError: Error while generating output: ollama: the stream ended before the provi",
        1,
    ),
    # agno joins the text of every turn into its answer; it ends a run that raised with a
    # RunErrorEvent and no RunOutput, the error logged
    ("agno", "whole_then_cut"): Outcome(("get_stock(AAPL)",), (), HELD_ANSWER[:-1] + "Done.'", 2),
    ("agno", "eof"): Outcome((), (), "ended without an answer", 1),
}


#: What the stand-in sends again, whole, after a turn that ran no call (smolagents asks again).
OLLAMA_FIXED = {"cut": ("write_file(a.txt, Once upon a time.)",)}


def expected(framework: str, scenario: str) -> Outcome:
    return OWN.get((framework, scenario), OLLAMA[scenario])


def row(framework: str, scenario: str) -> str:
    return f"| {framework} | {scenario} | {describe(expected(framework, scenario))} |"


def table() -> str:
    """The Ollama table of docs/frameworks/scenarios.md, each row run now."""
    lines = ["| Framework | Scenario | With streamkit |", "|---|---|---|"]
    for framework, scenario in CELLS:
        assert run(framework, PROVIDER, scenario, True) == expected(framework, scenario), (framework, scenario)
        lines.append(row(framework, scenario))
    return "\n".join(lines) + "\n"


def installed(framework: str) -> None:
    if importlib.util.find_spec(FRAMEWORKS[framework][0].split(".")[0]) is None:
        pytest.skip(f"{framework} is not installed")


@pytest.mark.parametrize("cell", CELLS, ids=["-".join(cell).replace(" ", "-") for cell in CELLS])
def test_on_ollama_a_bad_call_never_runs_and_the_run_ends_told(cell: tuple[str, str]) -> None:
    """The valid calls run once, the bad ones never; the model is told of each in its Ollama
    ``tool`` message (streamkit's words, or the framework's own) and answers, or the run raises."""
    installed(cell[0])
    assert run(cell[0], PROVIDER, cell[1], True) == expected(*cell)


@pytest.mark.parametrize("cell", CELLS, ids=["-".join(cell).replace(" ", "-") for cell in CELLS])
def test_the_page_shows_each_ollama_cell(cell: tuple[str, str]) -> None:
    assert row(*cell) in PAGE.read_text(encoding="utf-8").splitlines()


def test_every_ollama_difference_runs_no_bad_call() -> None:
    """No run, in any framework's own rule, runs a tool that streamkit's outcome would not."""
    for (framework, scenario), outcome in OWN.items():
        meant = set(OLLAMA[scenario].ran) | set(OLLAMA_FIXED.get(scenario, ()))
        assert set(outcome.ran) <= meant, (framework, scenario)


@pytest.mark.xfail(
    strict=True,
    reason=(
        "providers/ollama/decode.py reads the held call text on a done_reason 'length' line as the "
        "turn's text: no call is open, so nothing tells the model its call was cut"
    ),
)
@pytest.mark.parametrize("scenario", ["cut", "whole_then_cut"])
def test_a_call_ollama_held_back_at_the_limit_is_told(scenario: str) -> None:
    """What a call cut by the limit gives on the other providers: the model told ``truncated``,
    the call it meant sent again whole and run, then its answer."""
    installed("langchain AskAgainMiddleware")
    ran = {"cut": (), "whole_then_cut": ("get_stock(AAPL)",)}[scenario]
    meant = Outcome((*ran, "write_file(a.txt, Once upon a time.)"), ("truncated",), DONE, 3)
    assert run("langchain AskAgainMiddleware", PROVIDER, scenario, True) == meant


if __name__ == "__main__":
    sys.stdout.write(table())
