"""Agent clients that run their own loop, through ``streamkit serve`` and straight at the upstream.

The Vercel AI SDK (``ai`` with ``@ai-sdk/openai`` and ``@ai-sdk/anthropic``), Claude Code and
Codex, pinned in tests/node/package.json, each against the loopback upstream and nothing else.
The upstream answers each request with the model's next turn: the first turn (a bad call, or
valid ones, or text), then, asked again, the model's corrected call, then a text answer. Through
the proxy's default ``tell`` route the client never runs a bad call: the proxy asks the model
again inside the same response, so a bad turn costs one upstream request more than a valid one.

CI installs the modules from tests/node's lock into a directory outside the package and names it
in ``STREAMKIT_NODE_MODULES``; without node or those modules the tests skip, saying which.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

pytest.importorskip("uvicorn")

from .agent_turns import PLAIN, calling, fixture, plain
from .server import LoopbackServer, Reply, Request, Turns, bodies
from .serving import PROXY_KEY, Proxy, keyed_proxy, route, translating_proxy
from .translating import sse_event
from .wire import WIRES, OpenAIChatWire, call

NODE_DIR = Path(__file__).resolve().parent / "node"
NODE = shutil.which("node")
MODULES = Path(os.environ.get("STREAMKIT_NODE_MODULES", NODE_DIR / "node_modules"))
PATHS = {"openai_chat": "/v1/chat/completions", "anthropic": "/v1/messages"}
#: Seconds any client gets to finish its whole run.
TIMEOUT = 60


def needs(*packages: str) -> pytest.MarkDecorator:
    """Skip, saying why, without node or without one of ``packages`` in ``MODULES``."""
    missing = [name for name in packages if not (MODULES / name / "package.json").exists()]
    reason = "node is not installed" if NODE is None else f"{', '.join(missing)} not installed in {MODULES}"
    return pytest.mark.skipif(
        NODE is None or bool(missing), reason=f"{reason} (npm ci --prefix DIR with tests/node's lock)"
    )


@dataclass(frozen=True)
class Loop:
    """A first turn; the valid calls it holds; the bad calls' error kinds; and the call the model
    makes instead once told (``None`` for a turn with no bad call)."""

    first: bytes
    kept: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    told: list[str] = field(default_factory=list)
    redo: tuple[str, str, dict[str, Any]] | None = None

    def turns(self, provider: str) -> Turns:
        """The model's turns in order: the first, the corrected call if any, the text answer."""
        after = [calling(provider, *self.redo)] if self.redo else []
        return Turns(PATHS[provider], *(Reply([turn]) for turn in [self.first, *after, plain(provider)]))


WEATHER = ("get_weather", {"city": "Paris"})
STOCK = ("get_stock", {"ticker": "AAPL"})
LOOPS = {
    "openai_chat": {
        "plain": Loop(plain("openai_chat")),
        "two-at-index-0": Loop(fixture("serve/openai_chat/parallel_index_zero.sse"), [WEATHER, STOCK]),
        "cut": Loop(
            fixture("openai_chat/length_truncated.sse"),
            told=["truncated"],
            redo=("call_9", "write_file", {"path": "a.txt", "content": "Once upon a time."}),
        ),
        "complete-then-cut": Loop(
            fixture("serve/openai_chat/cut_call.sse"), [WEATHER], ["ran", "truncated"], ("call_9", *STOCK)
        ),
        "invalid-json": Loop(
            fixture("serve/openai_chat/invalid_json.sse"), told=["invalid_json"], redo=("call_9", *WEATHER)
        ),
        "schema": Loop(fixture("serve/openai_chat/schema_error.sse"), told=["schema"], redo=("call_9", *WEATHER)),
    },
    "anthropic": {
        "plain": Loop(plain("anthropic")),
        "two-at-index-0": Loop(
            fixture("anthropic/gateway_block_index_reused.sse"),
            [("read_file", {"path": "README.md"}), ("read_file", {"path": "setup.cfg"})],
        ),
        "cut": Loop(fixture("serve/anthropic/cut_call.sse"), told=["truncated"], redo=("toolu_9", *WEATHER)),
        "complete-then-cut": Loop(
            fixture("anthropic/max_tokens_truncated.sse"),
            [WEATHER],
            ["ran", "truncated"],
            ("toolu_9", "write_file", {"path": "notes.txt", "content": "Dear Paris, the weather is fine."}),
        ),
        "invalid-json": Loop(
            fixture("serve/anthropic/invalid_json.sse"), told=["invalid_json"], redo=("toolu_9", *WEATHER)
        ),
        "schema": Loop(fixture("serve/anthropic/schema_error.sse"), told=["schema"], redo=("toolu_9", *WEATHER)),
    },
}


@pytest.fixture(scope="module")
def served(upstream: LoopbackServer) -> Iterator[Proxy]:
    with keyed_proxy(upstream, route(upstream), route(upstream, "anthropic")) as running:
        yield running


def vercel(provider: str, base_url: str, key: str) -> dict[str, Any]:
    """One run of the AI SDK's agent loop (tests/node/agent_loop.mjs): what the application saw."""
    assert NODE is not None
    command = [NODE, str(NODE_DIR / "agent_loop.mjs"), provider, base_url, key, str(MODULES)]
    out = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, check=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def answered(provider: str, body: dict[str, Any]) -> list[str]:
    """What a request tells the model of each call of its last turn: a tool's result as sent, or
    the error kinds of streamkit's payload (``{"ok": false, "errors": [...]}``)."""
    if provider == "anthropic":
        contents = [block["content"] for block in body["messages"][-1]["content"] if block["type"] == "tool_result"]
    else:
        contents = []
        for message in reversed(body["messages"]):
            if message["role"] != "tool":
                break
            contents.insert(0, message["content"])
    return [kinds(content) if content.startswith('{"ok":false') else content for content in contents]


def kinds(told: str) -> str:
    """The error kinds of streamkit's payload, comma-separated."""
    return ",".join(error["kind"] for error in json.loads(told)["errors"])


#: What a tool answers, as the scripts' tools do: a valid call's result.
RESULTS: dict[str, Callable[[dict[str, str]], str]] = {
    "get_weather": lambda args: f"sunny in {args['city']}",
    "get_stock": lambda args: f"{args['ticker']} at 182.5",
    "write_file": lambda args: "written",
    "read_file": lambda args: f"the text of {args['path']}",
}
STANDS = "this call is valid and stands: it runs once your turn ends, and its result comes then; do not send it again"
CASES = [(provider, name) for provider, loops in LOOPS.items() for name in loops]


@needs("ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "zod")
@pytest.mark.parametrize(("provider", "name"), CASES)
def test_the_ai_sdk_loop_through_the_proxy_runs_only_valid_calls_and_ends_with_the_answer(
    served: Proxy, upstream: LoopbackServer, provider: str, name: str
) -> None:
    """A bad call never reaches the SDK: the proxy asks the model again within the response, the
    SDK runs the corrected call in its first step and gets the answer in its second."""
    loop = LOOPS[provider][name]
    upstream.routes = loop.turns(provider)
    since = len(upstream.requests)
    ran = [*loop.kept, *([(loop.redo[1], loop.redo[2])] if loop.redo else [])]
    steps = ["tool-calls", "stop"] if ran else ["stop"]
    assert vercel(provider, served.url + "/v1", PROXY_KEY) == {
        "ran": [[tool, args] for tool, args in ran],
        "toolErrors": [],
        "steps": steps,
        "text": PLAIN,
    }
    sent = bodies(upstream, since)
    assert len(sent) == len(steps) + bool(loop.redo)  # the SDK's steps, and the proxy's one ask-again
    if loop.redo:
        told = [STANDS if kind == "ran" else kind for kind in loop.told]
        assert answered(provider, sent[1]) == told
    if ran:
        assert answered(provider, sent[-1]) == [RESULTS[tool](args) for tool, args in ran]


#: Straight at the upstream, the same turns: (tools run, tools whose input the SDK found bad,
#: steps, final text, upstream requests). The SDK checks a call's JSON and schema itself and
#: sends the model its error in a step of its own; a turn that ends at the output limit runs no
#: tool, not even a whole one, and ends the run without an answer, but for OpenAI Chat's lone
#: cut call, which it answers with an error as it does invalid JSON.
BEFORE: dict[tuple[str, str], tuple[list[Any], list[str], list[str], str, int]] = {
    ("openai_chat", "plain"): ([], [], ["stop"], PLAIN, 1),
    ("openai_chat", "two-at-index-0"): ([WEATHER, STOCK], [], ["tool-calls", "stop"], PLAIN, 2),
    ("openai_chat", "cut"): (
        [("write_file", {"path": "a.txt", "content": "Once upon a time."})],
        ["write_file"],
        ["length", "tool-calls", "stop"],
        PLAIN,
        3,
    ),
    ("openai_chat", "complete-then-cut"): ([], ["get_stock"], ["length"], "", 1),
    ("openai_chat", "invalid-json"): ([WEATHER], ["get_weather"], ["tool-calls", "tool-calls", "stop"], PLAIN, 3),
    ("openai_chat", "schema"): ([WEATHER], ["get_weather"], ["tool-calls", "tool-calls", "stop"], PLAIN, 3),
    ("anthropic", "plain"): ([], [], ["stop"], PLAIN, 1),
    ("anthropic", "two-at-index-0"): (
        [("read_file", {"path": "README.md"}), ("read_file", {"path": "setup.cfg"})],
        [],
        ["tool-calls", "stop"],
        PLAIN,
        2,
    ),
    ("anthropic", "cut"): ([], [], ["length"], "", 1),
    ("anthropic", "complete-then-cut"): ([], [], ["length"], "", 1),
    ("anthropic", "invalid-json"): ([WEATHER], ["get_weather"], ["tool-calls", "tool-calls", "stop"], PLAIN, 3),
    ("anthropic", "schema"): ([WEATHER], ["get_weather"], ["tool-calls", "tool-calls", "stop"], PLAIN, 3),
}


@needs("ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "zod")
@pytest.mark.parametrize(("provider", "name"), CASES)
def test_the_ai_sdk_loop_straight_at_the_upstream(upstream: LoopbackServer, provider: str, name: str) -> None:
    """The same turns without the proxy, for comparison: what the SDK makes of them alone."""
    upstream.routes = LOOPS[provider][name].turns(provider)
    since = len(upstream.requests)
    ran, errors, steps, text, requests = BEFORE[provider, name]
    assert vercel(provider, upstream.url("/v1"), "sk-upstream") == {
        "ran": [[*call] for call in ran],
        "toolErrors": errors,
        "steps": steps,
        "text": text,
    }
    assert len(upstream.requests) - since == requests


# Claude Code: its own loop over Anthropic Messages, its built-in Bash tool allowed to run `touch`.
# The bad call would make bad.txt, the model's corrected call makes good.txt.
CLAUDE = MODULES / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"
_ANTHROPIC = WIRES["anthropic"]
_MAX_TOKENS = (
    b'event: message_delta\ndata: {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}\n\n'
    b'event: message_stop\ndata: {"type": "message_stop"}\n\n'
)
#: Claude Code's first turns: a Bash call that is not JSON, and one the output limit cut.
CLAUDE_FIRST = {
    "invalid-json": _ANTHROPIC.begin()
    + call(_ANTHROPIC, 0, "toolu_bad", "Bash", ['{"command": "touch bad.txt",}'])
    + _ANTHROPIC.finish(),
    "cut": _ANTHROPIC.begin()
    + _ANTHROPIC.start(0, "toolu_bad", "Bash")
    + _ANTHROPIC.fragment(0, '{"command": "touch ba')
    + _MAX_TOKENS,
}
CLAUDE_REDO = calling("anthropic", "toolu_9", "Bash", {"command": "touch good.txt", "description": "Make good.txt"})


Test = TypeVar("Test", bound=Callable[..., Any])


def runs_claude_code(test: Test) -> Test:
    """Skip, saying why, without node, Claude Code, or the native binary its postinstall puts in place."""
    placeholder = pytest.mark.skipif(
        CLAUDE.exists() and CLAUDE.stat().st_size < 1 << 20,
        reason=f"{CLAUDE} is the package's placeholder: its postinstall, which puts the native binary there, "
        "did not run",
    )
    marked: Test = needs("@anthropic-ai/claude-code")(placeholder(test))
    return marked


def claude_code(
    base_url: str, key: str, home: Path, model: str | None = None, files: dict[str, bytes] | None = None
) -> dict[str, Any]:
    """``claude -p`` in ``home/work``, offline: a home of its own, no telemetry or update check,
    and every request not to loopback sent to a closed port; every model it asks for ``model``
    when one is given; ``files`` (name: bytes) in the work directory."""
    (home / "work").mkdir()
    for name, data in (files or {}).items():
        (home / "work" / name).write_bytes(data)
    models = {} if model is None else {"ANTHROPIC_MODEL": model, "ANTHROPIC_SMALL_FAST_MODEL": model}
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": key,
        **models,
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1",
    }
    command = [str(CLAUDE), "-p", "Make the file.", "--output-format", "json", "--allowedTools", "Bash(touch:*)"]
    out = subprocess.run(
        command, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=home / "work", check=True
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return {key: result[key] for key in ("subtype", "is_error", "num_turns", "result")}


def exchange(request: Request) -> tuple[list[str], list[str]]:
    """The calls of a request's last assistant turn, by id, and what each was answered: the error
    kinds of streamkit's payload, or the first line of the tool's result."""
    messages = json.loads(request.body)["messages"]
    if len(messages) < 2 or messages[-2]["role"] != "assistant":
        return [], []
    ids = [block["id"] for block in messages[-2]["content"] if block["type"] == "tool_use"]
    results = [block["content"] for block in messages[-1]["content"] if block["type"] == "tool_result"]
    return ids, [kinds(text) if text.startswith('{"ok":false') else text.splitlines()[0] for text in results]


BASH_RAN = "(Bash completed with no output)"
CLAUDE_PARSE_ERROR = (
    "<tool_use_error>InputValidationError: Bash was called with input that could not be parsed as JSON."
)
#: Claude Code's requests, each as its last turn's calls and what they were answered, and its
#: number of turns: through the proxy, the proxy's ask-again tells the model and Claude Code sees
#: one turn with the corrected call.
CLAUDE_PROXIED = {
    kind: ([([], []), (["toolu_bad"], [told]), (["toolu_9"], [BASH_RAN])], 2)
    for kind, told in (("invalid-json", "invalid_json"), ("cut", "truncated"))
}
#: Straight at the upstream: Claude Code answers the call it cannot parse with its own error and
#: keeps it in the history; it drops a turn cut at the output limit and sends the request again,
#: with a reminder that the limit was hit.
CLAUDE_ALONE = {
    "invalid-json": (
        [
            ([], []),
            (["toolu_bad"], [CLAUDE_PARSE_ERROR]),
            (["toolu_bad", "toolu_9"], [CLAUDE_PARSE_ERROR, BASH_RAN]),
        ],
        3,
    ),
    "cut": ([([], []), ([], []), (["toolu_9"], [BASH_RAN])], 3),
}


@runs_claude_code
@pytest.mark.parametrize("kind", ["invalid-json", "cut"])
@pytest.mark.parametrize("via", ["proxy", "upstream"])
def test_claude_code_never_runs_the_bad_call_and_ends_with_the_answer(
    served: Proxy, upstream: LoopbackServer, tmp_path: Path, kind: str, via: str
) -> None:
    """Through the proxy: three requests, one of them the proxy's ask-again, and two turns of
    Claude Code's. Straight at the upstream: the same three requests, all Claude Code's, and
    three turns. Either way bad.txt is never made, and every request is a streamed /v1/messages."""
    turns = (CLAUDE_FIRST[kind], CLAUDE_REDO, plain("anthropic"))
    upstream.routes = Turns(PATHS["anthropic"], *(Reply([turn]) for turn in turns))
    since = len(upstream.requests)
    proxied = via == "proxy"
    exchanges, steps = (CLAUDE_PROXIED if proxied else CLAUDE_ALONE)[kind]
    ran = claude_code(served.url if proxied else upstream.url(""), PROXY_KEY if proxied else "sk-upstream", tmp_path)
    assert ran == {"subtype": "success", "is_error": False, "num_turns": steps, "result": PLAIN}
    assert sorted(path.name for path in (tmp_path / "work").iterdir()) == ["good.txt"]
    sent = upstream.requests[since:]
    assert [exchange(request) for request in sent] == exchanges
    assert (b"Output token limit hit." in sent[1].body) == (kind == "cut" and not proxied)
    assert {(r.target, json.loads(r.body)["stream"]) for r in sent} == {("/v1/messages?beta=true", True)}


@pytest.fixture(scope="module")
def translating(upstream: LoopbackServer) -> Iterator[Proxy]:
    """Anthropic Messages clients on an OpenAI Chat upstream."""
    with translating_proxy(upstream, "openai_chat", "anthropic") as running:
        yield running


_CHAT = OpenAIChatWire()
_LENGTH = _CHAT.chunk({}, "length") + b"data: [DONE]\n\n"


def chat_calls(name: str, *calls: tuple[str, str]) -> bytes:
    """A Chat turn of ``name`` calls, each ``(id, arguments as sent)``, all at index 0 as many
    OpenAI-compatible servers send parallel calls."""
    return _CHAT.begin() + b"".join(call(_CHAT, 0, ident, name, [text]) for ident, text in calls) + _CHAT.finish()


@dataclass(frozen=True)
class Session:
    """A client's run on a Chat upstream: the model's turns, the files made, and each request's
    last calls (by id) with what each was answered (``chat_exchange``)."""

    turns: tuple[bytes, ...]
    files: list[str]
    exchanges: list[tuple[list[str], list[str]]]
    #: The assistant message the second request ends its history with, before the results.
    assistant: dict[str, Any] | None = None


def sessions(tool: str, arguments: Callable[[str], dict[str, str]], ran: str) -> dict[str, Session]:
    """The scenarios for a client whose shell tool is ``tool``, called with ``arguments(file)``
    to make ``file``, a run command answered ``ran``. The bad call would make bad.txt."""

    def made(ident: str, file: str) -> tuple[str, str]:
        return ident, json.dumps(arguments(file))

    def turn(*calls: tuple[str, str]) -> dict[str, Any]:
        """The assistant message of ``calls``, each ``(id, file)``, as the proxy writes it to Chat."""
        written = [(ident, json.dumps(arguments(file), separators=(",", ":"))) for ident, file in calls]
        functions = [{"name": tool, "arguments": text} for _, text in written]
        made = [
            {"id": ident, "type": "function", "function": f} for (ident, _), f in zip(written, functions, strict=True)
        ]
        return {"role": "assistant", "content": None, "tool_calls": made}

    bad = json.dumps(arguments("bad.txt"))
    key = next(iter(arguments("bad.txt")))  # the command, given a number
    fixed, answer = chat_calls(tool, made("call_9", "good.txt")), plain("openai_chat")
    first: tuple[list[str], list[str]] = ([], [])
    return {
        "plain": Session((answer,), [], [first]),
        "two-at-index-0": Session(
            (chat_calls(tool, made("call_a", "a.txt"), made("call_b", "b.txt")), answer),
            ["a.txt", "b.txt"],
            [first, (["call_a", "call_b"], [ran, ran])],
            turn(("call_a", "a.txt"), ("call_b", "b.txt")),
        ),
        "cut": Session(
            (_CHAT.begin() + _CHAT.start(0, "call_bad", tool) + _CHAT.fragment(0, bad[:-8]) + _LENGTH, fixed, answer),
            ["good.txt"],
            [first, (["call_bad"], ["truncated"]), (["call_9"], [ran])],
        ),
        "invalid-json": Session(
            (chat_calls(tool, ("call_bad", bad[:-1] + ",}")), fixed, answer),
            ["good.txt"],
            [first, (["call_bad"], ["invalid_json"]), (["call_9"], [ran])],
        ),
        "schema": Session(
            (chat_calls(tool, ("call_bad", json.dumps({**arguments("bad.txt"), key: 42}))), fixed, answer),
            ["good.txt"],
            [first, (["call_bad"], ["schema"]), (["call_9"], [ran])],
        ),
        "multi-turn": Session(
            (chat_calls(tool, made("call_a", "a.txt")), chat_calls(tool, made("call_b", "b.txt")), answer),
            ["a.txt", "b.txt"],
            [first, (["call_a"], [ran]), (["call_b"], [ran])],
            turn(("call_a", "a.txt")),
        ),
        # DeepSeek's thinking mode: reasoning before the call, which must come back with it.
        "reasoning": Session(
            (reasoned(chat_calls(tool, made("call_a", "a.txt"))), answer),
            ["a.txt"],
            [first, (["call_a"], [ran])],
            turn(("call_a", "a.txt")) | {"reasoning_content": THOUGHT},
        ),
    }


#: What the model thought before its call, as DeepSeek's ``reasoning_content``.
THOUGHT = "The user wants a file: touch makes one."


def reasoned(turn: bytes) -> bytes:
    """A Chat turn with ``THOUGHT`` as reasoning before its first chunk, in two deltas."""
    half = len(THOUGHT) // 2
    thought = [
        _CHAT.chunk({"role": "assistant", "reasoning_content": part}) for part in (THOUGHT[:half], THOUGHT[half:])
    ]
    return b"".join(thought) + turn


def chat_exchange(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The calls of a Chat request's last assistant turn, by id, and what the ``tool`` messages
    after it answered each (``codex_output``): nothing for a request that ends otherwise."""
    messages = body["messages"]
    results: list[dict[str, Any]] = []
    while messages and messages[-1]["role"] == "tool":
        results.insert(0, messages[-1])
        messages = messages[:-1]
    if not results:
        return [], []
    ids = [made["id"] for made in messages[-1]["tool_calls"]]
    assert [result["tool_call_id"] for result in results] == ids
    return ids, [codex_output(result["content"]) for result in results]


def assert_results(sent: list[dict[str, Any]], session: Session) -> None:
    """The second request ends with the assistant message of the session's calls, then one
    ``tool`` message per call, by id, with the command's output (``chat_exchange`` reads it)."""
    if session.assistant is None:
        return
    calls = session.assistant["tool_calls"]
    *_, assistant = sent[1]["messages"][: -len(calls)]
    assert assistant == session.assistant
    results = sent[1]["messages"][-len(calls) :]
    assert [(result["role"], result["tool_call_id"], sorted(result)) for result in results] == [
        ("tool", made["id"], ["content", "role", "tool_call_id"]) for made in calls
    ]


CLAUDE_ON_CHAT = sessions("Bash", lambda file: {"command": f"touch {file}", "description": f"Make {file}"}, BASH_RAN)
#: Claude Code's turns per scenario (its ``num_turns``): a turn of two calls counts two, as it
#: does straight at an Anthropic upstream, though their results go back in one request.
CLAUDE_TURNS = {"plain": 1, "two-at-index-0": 3, "cut": 2, "invalid-json": 2, "schema": 2, "multi-turn": 3}
CLAUDE_TURNS |= {"reasoning": 2}


@runs_claude_code
@pytest.mark.parametrize("name", list(CLAUDE_ON_CHAT))
def test_claude_code_on_an_openai_chat_server_through_the_proxy(
    translating: Proxy, upstream: LoopbackServer, tmp_path: Path, name: str
) -> None:
    """Claude Code speaks Messages, the upstream Chat Completions: the proxy writes each request
    as Chat and each answer as Messages. Two calls at index 0 both run; a bad call (cut at the
    output limit, not JSON, or breaking its schema) is told to the model in Chat's terms and
    never runs, the corrected one does; the results come back as ``tool`` messages; the run
    ends with the answer. Every request the upstream gets is a streamed Chat request, its tools
    Claude Code's own. (Straight at the upstream there is no run to compare: Claude Code cannot
    speak Chat.)"""
    session = CLAUDE_ON_CHAT[name]
    upstream.routes = Turns(PATHS["openai_chat"], *(Reply([turn]) for turn in session.turns))
    since = len(upstream.requests)
    ran = claude_code(translating.url, PROXY_KEY, tmp_path)
    assert ran == {"subtype": "success", "is_error": False, "num_turns": CLAUDE_TURNS[name], "result": PLAIN}
    assert sorted(path.name for path in (tmp_path / "work").iterdir()) == session.files
    sent = bodies(upstream, since)
    assert [request.target for request in upstream.requests[since:]] == [PATHS["openai_chat"]] * len(sent)
    assert all(body["stream"] is True and body["messages"][0]["role"] == "system" for body in sent)
    assert "Bash" in [tool["function"]["name"] for tool in sent[0]["tools"]]
    assert [chat_exchange(body) for body in sent] == session.exchanges
    assert_results(sent, session)


# Codex (`codex exec`): its own loop over OpenAI Responses, its exec_command tool run in the
# workspace. The bad call would make bad.txt, the model's corrected call makes good.txt.
CODEX = MODULES / ".bin" / "codex"


def _event(kind: str, number: int, **fields: Any) -> bytes:
    return sse_event({"type": kind, "sequence_number": number, **fields}, kind)


_RESPONSE: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "model": "m",
    "error": None,
    "incomplete_details": None,
}
_USAGE: dict[str, Any] = {
    "input_tokens": 1,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 1,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 2,
}


def responses_turn(item: dict[str, Any], middle: list[tuple[str, dict[str, Any]]], end: str = "completed") -> bytes:
    """A Responses stream of one output item: created, the item added, ``middle``, and the end
    (``completed`` with the item done, or ``incomplete`` at the output limit, the item left open)."""
    started: dict[str, Any] = {**item, "status": "in_progress"}
    started |= {"arguments": ""} if "arguments" in item else {"content": list[Any]()}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {**_RESPONSE, "status": "in_progress", "output": [], "usage": None}})
    ]
    events.append(("response.output_item.added", {"output_index": 0, "item": started}))
    events += middle
    if end == "completed":
        events.append(("response.output_item.done", {"output_index": 0, "item": item}))
        events.append(
            ("response.completed", {"response": {**_RESPONSE, "status": end, "output": [item], "usage": _USAGE}})
        )
    else:
        reason = {"reason": "max_output_tokens"}
        response = {**_RESPONSE, "status": end, "output": [], "usage": _USAGE, "incomplete_details": reason}
        events.append(("response.incomplete", {"response": response}))
    return b"".join(_event(kind, number, **fields) for number, (kind, fields) in enumerate(events))


def codex_call(call_id: str, arguments: str, *, cut: bool = False) -> bytes:
    """A turn of one exec_command call; ``cut``: the output limit stops it inside ``arguments``."""
    item = {"id": f"fc_{call_id}", "type": "function_call", "status": "completed", "name": "exec_command"}
    item |= {"call_id": call_id, "arguments": arguments}
    delta = ("response.function_call_arguments.delta", {"item_id": item["id"], "output_index": 0, "delta": arguments})
    if cut:
        return responses_turn(item, [delta], "incomplete")
    done = ("response.function_call_arguments.done", {"item_id": item["id"], "output_index": 0, "arguments": arguments})
    return responses_turn(item, [delta, done])


def codex_text(text: str) -> bytes:
    part = {"type": "output_text", "text": text, "annotations": []}
    item = {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": [part]}
    where = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    middle = [
        ("response.content_part.added", {**where, "part": {**part, "text": ""}}),
        ("response.output_text.delta", {**where, "delta": text}),
        ("response.output_text.done", {**where, "text": text}),
    ]
    return responses_turn(item, middle)


CODEX_FIRST = {
    "invalid-json": codex_call("call_bad", '{"cmd": "touch bad.txt",}'),
    "cut": codex_call("call_bad", '{"cmd": "touch ba', cut=True),
}


def codex(base_url: str, key: str, home: Path, model: str = "m") -> subprocess.CompletedProcess[str]:
    """``codex exec`` in ``home/work`` with a model provider at ``base_url`` and ``model``,
    offline: a CODEX_HOME of its own, and every request not to loopback sent to a closed port."""
    (home / "work").mkdir()
    (home / "codex").mkdir()
    provider = f'name = "loopback"\nbase_url = "{base_url}"\nenv_key = "LOOPBACK_KEY"\nwire_api = "responses"\n'
    config = f'model = "{model}"\nmodel_provider = "loopback"\n\n[model_providers.loopback]\n{provider}'
    (home / "codex" / "config.toml").write_text(config)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "CODEX_HOME": str(home / "codex"),
        "LOOPBACK_KEY": key,
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1",
    }
    command = [str(CODEX), "exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write", "Make the file."]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=home / "work", stdin=subprocess.DEVNULL
    )


@pytest.fixture(scope="module")
def responses(upstream: LoopbackServer) -> Iterator[Proxy]:
    with keyed_proxy(upstream, route(upstream, "openai_responses")) as running:
        yield running


def codex_exchange(request: Request) -> list[tuple[str, str]]:
    """The calls a Codex request holds and what each was answered: the error kinds of streamkit's
    payload, ``exit 0`` for a command that ran, or the first line of another output."""
    items = [item for item in json.loads(request.body)["input"] if item["type"] != "message"]
    return [
        (item["call_id"], "call")
        if item["type"] == "function_call"
        else (item["call_id"], codex_output(item["output"]))
        for item in items
    ]


def codex_output(output: str) -> str:
    if output.startswith('{"ok":false'):
        return kinds(output)
    return "exit 0" if "\nProcess exited with code 0\n" in output else output.splitlines()[0]


CODEX_RAN = [("call_9", "call"), ("call_9", "exit 0")]
CODEX_PARSE_ERROR = [
    ("call_bad", "call"),
    ("call_bad", "failed to parse function arguments: trailing comma at line 1 column 25"),
]
#: Straight at the upstream: (exit status, files made, each request's calls). Codex answers a call
#: it cannot parse with its own error and keeps it in the history; a response cut at the output
#: limit (`response.incomplete`) fails the turn and the run.
CODEX_ALONE = {
    "invalid-json": (0, ["good.txt"], [[], CODEX_PARSE_ERROR, [*CODEX_PARSE_ERROR, *CODEX_RAN]]),
    "cut": (1, [], [[]]),
}


@needs("@openai/codex")
@pytest.mark.parametrize(("kind", "told"), [("invalid-json", "invalid_json"), ("cut", "truncated")])
def test_codex_through_the_proxy_never_runs_the_bad_call_and_ends_with_the_answer(
    responses: Proxy, upstream: LoopbackServer, tmp_path: Path, kind: str, told: str
) -> None:
    """Three requests and the corrected call run: the second is the proxy's, telling the model,
    and Codex reads one response and reconnects never. (When a Responses route ended a bad turn
    with ``error`` and ``response.failed``, Codex read that as a dropped stream and sent the same
    request again, up to its ``stream_max_retries``: 6 requests for a model that kept failing.)"""
    turns = (CODEX_FIRST[kind], codex_call("call_9", '{"cmd": "touch good.txt"}'), codex_text(PLAIN))
    upstream.routes = Turns("/v1/responses", *(Reply([turn]) for turn in turns))
    since = len(upstream.requests)
    out = codex(responses.url + "/v1", PROXY_KEY, tmp_path)
    assert out.returncode == 0, out.stderr
    assert sorted(path.name for path in (tmp_path / "work").iterdir()) == ["good.txt"]
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events[-2:-1] == [
        {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": PLAIN}}
    ]
    reconnects = [event for event in events if event["type"] == "error"]
    sent = upstream.requests[since:]
    assert (reconnects, codex_exchange(sent[1])) == ([], [("call_bad", "call"), ("call_bad", told)])
    assert [codex_exchange(request) for request in (sent[0], sent[2])] == [[], CODEX_RAN]
    assert len(sent) == 3


@needs("@openai/codex")
@pytest.mark.parametrize("kind", ["invalid-json", "cut"])
def test_codex_straight_at_the_upstream(upstream: LoopbackServer, tmp_path: Path, kind: str) -> None:
    """The same turns without the proxy, for comparison: what Codex makes of them alone."""
    turns = (CODEX_FIRST[kind], codex_call("call_9", '{"cmd": "touch good.txt"}'), codex_text(PLAIN))
    upstream.routes = Turns("/v1/responses", *(Reply([turn]) for turn in turns))
    since = len(upstream.requests)
    out = codex(upstream.url("/v1"), "sk-upstream", tmp_path)
    status, files, exchanges = CODEX_ALONE[kind]
    assert out.returncode == status
    assert sorted(path.name for path in (tmp_path / "work").iterdir()) == files
    assert [codex_exchange(request) for request in upstream.requests[since:]] == exchanges


@pytest.fixture(scope="module")
def codex_on_chat(upstream: LoopbackServer) -> Iterator[Proxy]:
    """OpenAI Responses clients on an OpenAI Chat upstream."""
    with translating_proxy(upstream, "openai_chat", "openai_responses") as running:
        yield running


CODEX_ON_CHAT = sessions("exec_command", lambda file: {"cmd": f"touch {file}"}, "exit 0")

#: The messages of Codex's first request as Chat: its two developer messages joined as the system
#: message, its environment and the task as user messages.
ROLES = ["system", "user", "user"]


@needs("@openai/codex")
@pytest.mark.parametrize("name", list(CODEX_ON_CHAT))
def test_codex_on_an_openai_chat_server_through_the_proxy(
    codex_on_chat: Proxy, upstream: LoopbackServer, tmp_path: Path, name: str
) -> None:
    """Codex speaks Responses, the upstream Chat Completions: the proxy writes each request as
    Chat (the system prompt from Codex's developer message, its function tools, the outputs as
    ``tool`` messages) and each answer as Responses. Two calls at index 0 both run; a bad call
    (cut, not JSON, or breaking its schema) is told to the model in Chat's terms and never
    runs, the corrected one does; the run ends with the answer, Codex reconnecting never.
    (Straight at the upstream there is no run to compare: Codex speaks Responses only.)"""
    session = CODEX_ON_CHAT[name]
    upstream.routes = Turns(PATHS["openai_chat"], *(Reply([turn]) for turn in session.turns))
    since = len(upstream.requests)
    out = codex(codex_on_chat.url + "/v1", PROXY_KEY, tmp_path)
    assert out.returncode == 0, out.stderr
    assert sorted(path.name for path in (tmp_path / "work").iterdir()) == session.files
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert [event for event in events if event["type"] == "error"] == []
    assert events[-2]["item"]["type"] == "agent_message"
    assert events[-2]["item"]["text"] == PLAIN
    sent = bodies(upstream, since)
    assert [request.target for request in upstream.requests[since:]] == [PATHS["openai_chat"]] * len(sent)
    assert all(body["stream"] is True for body in sent)
    system = [body["messages"][0] for body in sent]
    assert {message["role"] for message in system} == {"system"}
    assert all(message["content"].startswith("You are a coding agent running in the Codex CLI") for message in system)
    assert "exec_command" in [tool["function"]["name"] for tool in sent[0]["tools"]]
    assert sent[0]["messages"][len(ROLES) - 1 :] == [{"role": "user", "content": "Make the file."}]
    assert [[message["role"] for message in body["messages"]][: len(ROLES)] for body in sent] == [ROLES] * len(sent)
    assert [chat_exchange(body) for body in sent] == session.exchanges
    assert_results(sent, session)


@pytest.fixture(scope="module")
def crossed(upstream: LoopbackServer) -> Iterator[Proxy]:
    """Each client on the other format's upstream: Messages on Chat, Chat on Messages."""
    routes = (
        route(upstream, "anthropic", upstream_format="openai_chat"),
        route(upstream, "openai_chat", upstream_format="anthropic"),
    )
    with keyed_proxy(upstream, *routes) as running:
        yield running


#: The other format: the upstream's, for a client of each.
OTHER = {"anthropic": "openai_chat", "openai_chat": "anthropic"}
CROSSED = [(client, name) for client in OTHER for name in ("plain", "two-at-index-0", "cut", "invalid-json", "schema")]


@needs("ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "zod")
@pytest.mark.parametrize(("client", "name"), CROSSED)
def test_the_ai_sdk_loop_on_the_other_formats_upstream(
    crossed: Proxy, upstream: LoopbackServer, client: str, name: str
) -> None:
    """The SDK's Anthropic provider on a Chat upstream, its OpenAI provider (``.chat()``) on a
    Messages one: the turns are the upstream's, and the run is the same-format run's, a bad call
    told to the model in the upstream's terms, the corrected call run once, the answer last.
    (Straight at the upstream there is nothing to compare: the SDK's provider cannot speak the
    other format.)"""
    provider = OTHER[client]
    loop = LOOPS[provider][name]
    upstream.routes = loop.turns(provider)
    since = len(upstream.requests)
    ran = [*loop.kept, *([(loop.redo[1], loop.redo[2])] if loop.redo else [])]
    steps = ["tool-calls", "stop"] if ran else ["stop"]
    assert vercel(client, crossed.url + "/v1", PROXY_KEY) == {
        "ran": [[tool, args] for tool, args in ran],
        "toolErrors": [],
        "steps": steps,
        "text": PLAIN,
    }
    assert {request.target for request in upstream.requests[since:]} == {PATHS[provider]}
    sent = bodies(upstream, since)
    assert len(sent) == len(steps) + bool(loop.redo)
    if loop.redo:
        assert answered(provider, sent[1]) == loop.told
    if ran:
        assert answered(provider, sent[-1]) == [RESULTS[tool](args) for tool, args in ran]


def png(width: int, height: int) -> bytes:
    """A valid PNG of ``width`` by ``height`` red pixels (8-bit RGB, rows unfiltered)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


#: The image file Claude Code's Read tool is called on, and its bytes.
IMAGE = ("dot.png", png(2, 2))


@runs_claude_code
def test_claude_codes_read_of_an_image_reaches_the_chat_upstream_after_the_tool_message(
    translating: Proxy, upstream: LoopbackServer, tmp_path: Path
) -> None:
    """The model reads a PNG with Claude Code's Read tool, whose result is the image alone, no
    text. A ``tool`` message carries text only: the upstream gets the note that an image follows
    in it and, after it, a user message naming the call and showing the file's bytes as Claude
    Code sent them, unchanged; the run ends with the answer."""
    name, data = IMAGE
    path = str(tmp_path / "work" / name)
    read = chat_calls("Read", ("call_r", json.dumps({"file_path": path})))
    upstream.routes = Turns(PATHS["openai_chat"], Reply([read]), Reply([plain("openai_chat")]))
    since = len(upstream.requests)
    ran = claude_code(translating.url, PROXY_KEY, tmp_path, files=dict([IMAGE]))
    assert ran == {"subtype": "success", "is_error": False, "num_turns": 2, "result": PLAIN}
    first, second = bodies(upstream, since)
    [schema] = [tool["function"]["parameters"] for tool in first["tools"] if tool["function"]["name"] == "Read"]
    assert (schema["required"], schema["properties"]["file_path"]["type"]) == (["file_path"], "string")
    shown = {"url": "data:image/png;base64," + base64.b64encode(data).decode()}
    assert second["messages"][-3:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_r",
                    "type": "function",
                    "function": {"name": "Read", "arguments": json.dumps({"file_path": path}, separators=(",", ":"))},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_r", "content": "(1 image follows in a user message)"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "The image Read (call call_r) returned:"},
                {"type": "image_url", "image_url": shown},
            ],
        },
    ]
