"""Codex on a Google Gemini and an Ollama upstream through ``streamkit serve``, offline.

Codex (``codex exec``) speaks OpenAI Responses, its shell tool ``exec_command``; the loopback
upstream speaks Gemini's ``streamGenerateContent`` SSE or Ollama's ``/api/chat`` NDJSON. The
proxy writes each request in the upstream's format (the system prompt from Codex's developer
messages, its function tools as the upstream declares them, each call and its output as the
upstream's own history) and each answer as Responses. A plain answer ends the run; a call runs
once; a bad call (off its schema, or one Gemini could not read) is told to the model in the
upstream's terms, one upstream request more, and never runs, the corrected call does; Codex
reads one response a turn and reconnects never. (Straight at either upstream there is no run to
compare: Codex speaks Responses only.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn")

from . import answers
from .agent_turns import PLAIN
from .models import GEMINI
from .server import LoopbackServer, Reply, Turns, bodies
from .serving import PROXY_KEY, UPSTREAM_KEY, Proxy, translating_proxy
from .test_serve_clients import codex, codex_output, kinds, needs
from .test_serve_clients_gemini import PATH, turn
from .test_serve_translate_ollama import CHAT, sent_to
from .translating import sse_event

#: Codex's function tools, in its order, as either upstream is offered them: its ``namespace``
#: (multi_agent_v1) and the server-run ``web_search`` have no equal in the upstream's format.
FUNCTIONS = [
    "exec_command",
    "write_stdin",
    "request_user_input",
    "view_image",
    "get_goal",
    "create_goal",
    "update_goal",
]
#: How Codex reports the command that made ``file``.
RAN = "/bin/bash -lc 'touch {}'"


def touch(file: str) -> dict[str, Any]:
    """exec_command's arguments to make ``file``."""
    return {"cmd": f"touch {file}"}


#: Off exec_command's schema: the command a number.
OFF_SCHEMA: dict[str, Any] = {"cmd": 42}


def run(proxy: Proxy, home: Path, model: str) -> list[dict[str, Any]]:
    """Codex's run through ``proxy``, ended well: its JSON events."""
    out = codex(proxy.url + "/v1", PROXY_KEY, home, model)
    assert out.returncode == 0, out.stderr
    events: list[dict[str, Any]] = [json.loads(line) for line in out.stdout.splitlines()]
    return events


def assert_ran(events: list[dict[str, Any]], home: Path, files: list[str]) -> None:
    """Each of ``files`` made by one command, run once, and nothing else; the answer last; no
    ``error`` event (the sign of a stream Codex read as dropped and asked again for)."""
    assert sorted(path.name for path in (home / "work").iterdir()) == files
    commands = sorted(  # Codex runs a turn's calls at once: they end in any order
        (event["item"]["command"], event["item"]["exit_code"])
        for event in events
        if event["type"] == "item.completed" and event["item"]["type"] == "command_execution"
    )
    assert commands == [(RAN.format(file), 0) for file in files]
    assert [event for event in events if event["type"] == "error"] == []
    assert events[-2]["item"]["type"] == "agent_message"
    assert events[-2]["item"]["text"] == PLAIN
    assert events[-1]["type"] == "turn.completed"


def assert_system(text: str, home: Path) -> None:
    """Codex's developer messages, joined: its prompt, its skills, its sandbox's permissions."""
    assert text.startswith("You are a coding agent running in the Codex CLI")
    assert "\n\n<skills_instructions>\n" in text
    assert "\n\n<permissions instructions>\n" in text
    assert f"`{home / 'work'}`" in text
    assert text.endswith("</permissions instructions>")


def assert_exec_command(schema: dict[str, Any]) -> None:
    """exec_command's parameters as Codex declares them: a command string, nothing unknown."""
    assert (schema["type"], schema["required"], schema["additionalProperties"]) == ("object", ["cmd"], False)
    assert schema["properties"]["cmd"] == {"type": "string", "description": "Shell command to execute."}


# -- Gemini -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def on_gemini(upstream: LoopbackServer) -> Iterator[Proxy]:
    """OpenAI Responses clients on a Gemini upstream (its API has no /v1)."""
    with translating_proxy(upstream, "gemini", "openai_responses", root="") as running:
        yield running


def called(args: dict[str, Any]) -> dict[str, Any]:
    """A ``functionCall`` part of exec_command, as Gemini sends it: no id."""
    return {"functionCall": {"name": "exec_command", "args": args}}


#: What Gemini reports of a call it could not read: the call as the model wrote it.
UNREAD = "Malformed function call: print(default_api.exec_command(cmd='touch bad.txt'"


def malformed(*texts: str) -> bytes:
    """A Gemini answer of ``texts``, then ``MALFORMED_FUNCTION_CALL``: no part, the finish message."""
    usage = {"promptTokenCount": 9, "candidatesTokenCount": 5, "totalTokenCount": 14}
    candidates = [
        *({"content": {"role": "model", "parts": [{"text": text}]}, "index": 0} for text in texts),
        {
            "content": {"role": "model", "parts": []},
            "finishMessage": UNREAD,
            "index": 0,
            "finishReason": "MALFORMED_FUNCTION_CALL",
        },
    ]
    chunks = [{"candidates": [candidate], "usageMetadata": usage, "modelVersion": GEMINI} for candidate in candidates]
    return b"".join(sse_event(chunk, end=b"\r\n\r\n") for chunk in chunks)


ANSWER = turn({"text": PLAIN})
GOOD = turn(called(touch("good.txt")))
#: Each scenario: the model's turns, the files made, and each request's last turn
#: (``gemini_exchange``): the proxy's ask-again is the second request of a bad call's run.
ON_GEMINI: dict[str, tuple[tuple[bytes, ...], list[str], list[list[tuple[Any, str]]]]] = {
    "plain": ((ANSWER,), [], [[]]),
    "call": ((GOOD, ANSWER), ["good.txt"], [[], [(touch("good.txt"), "exit 0")]]),
    "two-calls": (
        (turn(called(touch("a.txt")), called(touch("b.txt"))), ANSWER),
        ["a.txt", "b.txt"],
        [[], [(touch("a.txt"), "exit 0"), (touch("b.txt"), "exit 0")]],
    ),
    "schema": (
        (turn(called(OFF_SCHEMA)), GOOD, ANSWER),
        ["good.txt"],
        [[], [(OFF_SCHEMA, "schema")], [(touch("good.txt"), "exit 0")]],
    ),
    "malformed": (
        (malformed("I'll make it."), GOOD, ANSWER),
        ["good.txt"],
        [[], [(None, "missing_name,malformed_call")], [(touch("good.txt"), "exit 0")]],
    ),
    # nothing before it: the ask-again has no model turn, only the errors after the task
    "malformed-alone": (
        (malformed(), GOOD, ANSWER),
        ["good.txt"],
        [[], [(None, "missing_name,malformed_call")], [(touch("good.txt"), "exit 0")]],
    ),
}


#: The errors of exec_command's arguments off its schema, as the proxy tells the model.
SCHEMA_ERRORS = {"ok": False, "errors": [{"kind": "schema", "message": '42 is not of type "string"', "path": "$.cmd"}]}
#: The errors of a call Gemini could not read, with that call as Gemini reported it.
UNREAD_ERRORS = {
    "ok": False,
    "errors": [
        {"kind": "missing_name", "message": "the call has no tool name"},
        {
            "kind": "malformed_call",
            "message": "the provider reported a malformed function call; its message is the raw text",
        },
    ],
    "call": UNREAD,
}
#: What the proxy's ask-again adds to Codex's first request, in Gemini's terms, per bad turn: a
#: call off its schema and its errors as its ``functionResponse`` (no id: Gemini gave none);
#: the errors of a call Gemini could not read as a text part (a function part needs a name),
#: after the model's text if it wrote any, the model turn left out if not (it would be empty).
ASKED_GEMINI = {
    "schema": [
        {"role": "model", "parts": [called(OFF_SCHEMA)]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "exec_command", "response": {"error": SCHEMA_ERRORS}}}],
        },
    ],
    "malformed": [
        {"role": "model", "parts": [{"text": "I'll make it."}]},
        {"role": "user", "parts": [{"text": json.dumps(UNREAD_ERRORS, separators=(",", ":"))}]},
    ],
    "malformed-alone": [{"role": "user", "parts": [{"text": json.dumps(UNREAD_ERRORS, separators=(",", ":"))}]}],
}


def gemini_exchange(body: dict[str, Any]) -> list[tuple[Any, str]]:
    """What a Gemini request's last turn answered, each call by its ``args`` (``None`` for one
    Gemini could not read, whose errors come as a text part: it has no part of its own) and the
    answer (``codex_output``, or the error kinds): nothing for a request that ends otherwise.
    A ``functionResponse`` pairs with its call in the model turn before by id and name."""
    contents: list[dict[str, Any]] = [{"parts": []}, *body["contents"]]
    model, results = contents[-2:]
    calls = [part["functionCall"] for part in model["parts"] if "functionCall" in part]
    told: list[tuple[Any, str]] = []
    for part in results["parts"]:
        if part.get("text", "").startswith('{"ok":false'):
            told.append((None, kinds(part["text"])))
        elif "functionResponse" in part:
            response = part["functionResponse"]
            [made] = [call for call in calls if call.get("id") == response.get("id")]
            assert made["name"] == response["name"] == "exec_command"
            said = response["response"]
            answer = kinds(json.dumps(said["error"])) if "error" in said else codex_output(said["output"])
            told.append((made["args"], answer))
    return told


@needs("@openai/codex")
@pytest.mark.parametrize("name", list(ON_GEMINI))
def test_codex_on_a_gemini_upstream_through_the_proxy(
    on_gemini: Proxy, upstream: LoopbackServer, tmp_path: Path, name: str
) -> None:
    """Each request a streamed ``streamGenerateContent`` with the route's key, Codex's prompt as
    ``systemInstruction`` and its functions as ``functionDeclarations``; the calls Gemini gave
    no ids get the proxy's, by which their ``functionResponse`` parts pair with them; a bad call
    is told to Gemini in the proxy's own request and never runs."""
    turns, files, exchanges = ON_GEMINI[name]
    upstream.routes = Turns(PATH, *(Reply([answer]) for answer in turns))
    since = len(upstream.requests)
    events = run(on_gemini, tmp_path, GEMINI)
    assert_ran(events, tmp_path, files)
    requests = upstream.requests[since:]
    assert [(r.target, r.headers["x-goog-api-key"]) for r in requests] == [(PATH + "?alt=sse", UPSTREAM_KEY)] * len(
        turns
    )
    sent = bodies(upstream, since)
    for body in sent:
        assert sorted(body) == ["contents", "systemInstruction", "tools"]
        [system] = body["systemInstruction"]["parts"]
        assert_system(system["text"], tmp_path)
        [tools] = body["tools"]
        assert [(sorted(d), d["name"]) for d in tools["functionDeclarations"]] == [
            (["description", "name", "parametersJsonSchema"], function) for function in FUNCTIONS
        ]
        assert_exec_command(tools["functionDeclarations"][0]["parametersJsonSchema"])
        # the environment and the task: Codex's two user messages, one user turn
        task = body["contents"][0]
        assert (task["role"], [part["text"] for part in task["parts"]][1:]) == ("user", ["Make the file."])
        assert task["parts"][0]["text"].startswith("<environment_context>")
    assert [gemini_exchange(body) for body in sent] == exchanges
    if files:  # the text the model wrote before the call Gemini could not read stays in the turn
        assert_gemini_history(sent[-1], len(files), [{"text": "I'll make it."}] if name == "malformed" else [])
    if name in ASKED_GEMINI:  # the proxy's request: Codex's first, then the bad turn and its errors
        first, again = sent[:2]
        assert again == {**first, "contents": [*first["contents"], *ASKED_GEMINI[name]]}


def assert_gemini_history(body: dict[str, Any], count: int, said: list[dict[str, Any]]) -> None:
    """The request after Codex ran ``count`` calls ends with the model turn of the parts ``said``
    and exactly those calls, each with the id the proxy gave it (Gemini gave none), the first one
    with the signature Google documents for one not known, then one user turn of their outputs,
    paired by that id: Codex's own history, the proxy's ask-again absent from it."""
    model, results = body["contents"][-2:]
    assert (model["role"], model["parts"][: len(said)]) == ("model", said)
    calls = [part["functionCall"] for part in model["parts"][len(said) :]]
    assert len(calls) == count == len({call["id"] for call in calls})
    assert all(call["id"].startswith("call_") and sorted(call) == ["args", "id", "name"] for call in calls)
    signed = [["functionCall", "thoughtSignature"]] + [["functionCall"]] * (count - 1)
    assert [sorted(part) for part in model["parts"][len(said) :]] == signed
    assert model["parts"][len(said)]["thoughtSignature"] == "skip_thought_signature_validator"
    assert results["role"] == "user"
    assert [(p["functionResponse"]["id"], sorted(p["functionResponse"])) for p in results["parts"]] == [
        (call["id"], ["id", "name", "response"]) for call in calls
    ]
    assert all(
        sorted(p["functionResponse"]["response"]) == ["output"]
        and "\nProcess exited with code 0\n" in p["functionResponse"]["response"]["output"]
        for p in results["parts"]
    )


# -- Ollama -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def on_ollama(upstream: LoopbackServer) -> Iterator[Proxy]:
    """OpenAI Responses clients on an Ollama upstream (its API has no /v1)."""
    with translating_proxy(upstream, "ollama", "openai_responses", root="") as running:
        yield running


#: The model Codex asks Ollama for.
QWEN = "qwen3"
MAKES = answers.ollama("", [("call_9", "exec_command", touch("good.txt"))])
SAYS = answers.ollama(PLAIN, [])
#: Each scenario: the model's turns, the files made, and each request's last turn
#: (``ollama_exchange``).
ON_OLLAMA: dict[str, tuple[tuple[Reply, ...], list[str], list[list[tuple[str, Any, str]]]]] = {
    "plain": ((SAYS,), [], [[]]),
    "call": ((MAKES, SAYS), ["good.txt"], [[], [("call_9", touch("good.txt"), "exit 0")]]),
    "two-calls": (
        (
            answers.ollama(
                "", [("call_a", "exec_command", touch("a.txt")), ("call_b", "exec_command", touch("b.txt"))]
            ),
            SAYS,
        ),
        ["a.txt", "b.txt"],
        [[], [("call_a", touch("a.txt"), "exit 0"), ("call_b", touch("b.txt"), "exit 0")]],
    ),
    "schema": (
        (answers.ollama("", [("call_bad", "exec_command", OFF_SCHEMA)]), MAKES, SAYS),
        ["good.txt"],
        [[], [("call_bad", OFF_SCHEMA, "schema")], [("call_9", touch("good.txt"), "exit 0")]],
    ),
}


def ollama_exchange(body: dict[str, Any]) -> list[tuple[str, Any, str]]:
    """The calls of an Ollama request's last assistant message (id and arguments, an object) and
    what the ``tool`` messages after it, one a call in order, each naming its tool, answered:
    nothing for a request that ends otherwise."""
    messages = body["messages"]
    results: list[dict[str, Any]] = []
    while messages[-1]["role"] == "tool":
        results.insert(0, messages[-1])
        messages = messages[:-1]
    if not results:
        return []
    calls = messages[-1]["tool_calls"]
    assert [sorted(result) for result in results] == [["content", "role", "tool_name"]] * len(calls)
    assert [result["tool_name"] for result in results] == [call["function"]["name"] for call in calls]
    told = [
        kinds(result["content"]) if result["content"].startswith('{"ok":false') else codex_output(result["content"])
        for result in results
    ]
    return [(call["id"], call["function"]["arguments"], said) for call, said in zip(calls, told, strict=True)]


@needs("@openai/codex")
@pytest.mark.parametrize("name", list(ON_OLLAMA))
def test_codex_on_an_ollama_upstream_through_the_proxy(
    on_ollama: Proxy, upstream: LoopbackServer, tmp_path: Path, name: str
) -> None:
    """Each request a streamed ``/api/chat`` with the route's key, Codex's prompt as the system
    message and its functions as Chat's function tools; each call goes back with its arguments an
    object and its output as a ``tool`` message naming the tool; a call off its schema is told
    to the model in the proxy's own request and never runs."""
    turns, files, exchanges = ON_OLLAMA[name]
    upstream.routes = Turns(CHAT, *turns)
    since = len(upstream.requests)
    events = run(on_ollama, tmp_path, QWEN)
    assert_ran(events, tmp_path, files)
    sent = sent_to(upstream, since)  # each a request to /api/chat with the route's key
    assert len(sent) == len(turns)
    for body in sent:
        assert (sorted(body), body["model"], body["stream"]) == (["messages", "model", "stream", "tools"], QWEN, True)
        system, environment, task = body["messages"][:3]
        assert sorted(system) == ["content", "role"] and system["role"] == "system"
        assert_system(system["content"], tmp_path)
        assert environment["role"] == "user" and environment["content"].startswith("<environment_context>")
        assert task == {"role": "user", "content": "Make the file."}
        assert [(sorted(tool), tool["type"], sorted(tool["function"])) for tool in body["tools"]] == [
            (["function", "type"], "function", ["description", "name", "parameters"])
        ] * len(FUNCTIONS)
        assert [tool["function"]["name"] for tool in body["tools"]] == FUNCTIONS
        assert_exec_command(body["tools"][0]["function"]["parameters"])
    assert [ollama_exchange(body) for body in sent] == exchanges
    if files:  # Codex's history: the calls it ran, their arguments objects, each output named by its tool
        assistant, *results = sent[-1]["messages"][3:]
        made = [
            {"id": ident, "function": {"name": "exec_command", "arguments": args}} for ident, args, _ in exchanges[-1]
        ]
        assert assistant == {"role": "assistant", "content": "", "tool_calls": made}
        assert [(result["role"], result["tool_name"]) for result in results] == [("tool", "exec_command")] * len(files)
    if name == "schema":  # the proxy's request: Codex's first, then the bad turn and its errors
        first, again = sent[:2]
        assistant, told = again["messages"][len(first["messages"]) :]
        assert again == {**first, "messages": [*first["messages"], assistant, told]}
        bad = {"id": "call_bad", "function": {"name": "exec_command", "arguments": OFF_SCHEMA}}
        assert assistant == {"role": "assistant", "content": "", "tool_calls": [bad]}
        assert (told["role"], told["tool_name"], json.loads(told["content"])) == ("tool", "exec_command", SCHEMA_ERRORS)
