"""Claude Code on a Google Gemini upstream through ``streamkit serve``, offline.

Claude Code speaks Anthropic Messages; the loopback upstream speaks Gemini's
``streamGenerateContent`` SSE. The proxy writes each request as Gemini's and each answer as
Messages: a plain answer ends the run; two calls (Gemini gives them no ids) both run, their results
going back as ``functionResponse`` parts paired with their calls by name and the ids Claude Code
read; a call off its schema is told to the model in Gemini's terms and never runs.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn")

from .agent_turns import PLAIN
from .models import GEMINI
from .server import LoopbackServer, Reply, Turns, bodies
from .serving import PROXY_KEY, UPSTREAM_KEY, Proxy, translating_proxy
from .test_serve_clients import BASH_RAN, IMAGE, claude_code, runs_claude_code
from .translating import sse_event

PATH = f"/v1beta/models/{GEMINI}:streamGenerateContent"


def turn(*parts: dict[str, Any]) -> bytes:
    """A Gemini answer: ``parts`` in one chunk, then the finish reason with Gemini 3's empty text."""
    candidates = [
        {"content": {"role": "model", "parts": list(parts)}, "index": 0},
        {"content": {"role": "model", "parts": [{"text": ""}]}, "index": 0, "finishReason": "STOP"},
    ]
    usage = {"promptTokenCount": 9, "candidatesTokenCount": 5, "totalTokenCount": 14}
    chunks = [{"candidates": [candidate], "usageMetadata": usage, "modelVersion": GEMINI} for candidate in candidates]
    return b"".join(sse_event(chunk, end=b"\r\n\r\n") for chunk in chunks)


def bash(file: str, command: Any = None) -> dict[str, Any]:
    args = {"command": f"touch {file}" if command is None else command, "description": f"Make {file}"}
    return {"functionCall": {"name": "Bash", "args": args}}


#: Each scenario: the model's turns, the files made, and Claude Code's turns (``num_turns``).
SCENARIOS = {
    "plain": ((turn({"text": PLAIN}),), [], 1),
    "two-calls": ((turn(bash("a.txt"), bash("b.txt")), turn({"text": PLAIN})), ["a.txt", "b.txt"], 3),
    "schema": ((turn(bash("bad.txt", 42)), turn(bash("good.txt")), turn({"text": PLAIN})), ["good.txt"], 2),
}


@pytest.fixture(scope="module")
def on_gemini(upstream: LoopbackServer) -> Iterator[Proxy]:
    with translating_proxy(upstream, "gemini", "anthropic", root="") as running:
        yield running


@runs_claude_code
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_claude_code_on_a_gemini_upstream_through_the_proxy(
    on_gemini: Proxy, upstream: LoopbackServer, tmp_path: Path, name: str
) -> None:
    turns, files, steps = SCENARIOS[name]
    upstream.routes = Turns(PATH, *(Reply([answer]) for answer in turns))
    since = len(upstream.requests)
    ran = claude_code(on_gemini.url, PROXY_KEY, tmp_path, GEMINI)  # every model it asks for Gemini's
    assert ran == {"subtype": "success", "is_error": False, "num_turns": steps, "result": PLAIN}
    assert sorted(path.name for path in (tmp_path / "work").iterdir()) == files
    requests = upstream.requests[since:]
    assert [(r.target, r.headers["x-goog-api-key"]) for r in requests] == [(PATH + "?alt=sse", UPSTREAM_KEY)] * len(
        turns
    )
    sent = bodies(upstream, since)
    assert all("Bash" in [d["name"] for d in body["tools"][0]["functionDeclarations"]] for body in sent)
    assert all(body["systemInstruction"]["parts"][0]["text"] for body in sent)
    if name == "two-calls":
        model, results = sent[1]["contents"][-2:]
        calls = [part["functionCall"] for part in model["parts"] if "functionCall" in part]
        answers = [part["functionResponse"] for part in results["parts"] if "functionResponse" in part]
        assert [call["args"]["command"] for call in calls] == ["touch a.txt", "touch b.txt"]
        assert [(answer["name"], answer["id"]) for answer in answers] == [("Bash", call["id"]) for call in calls]
        assert all(call["id"].startswith("toolu_") for call in calls)
        assert [answer["response"]["output"].splitlines()[0] for answer in answers] == [BASH_RAN, BASH_RAN]
    if name == "schema":
        told = sent[1]["contents"][-1]["parts"][0]["functionResponse"]
        assert (told["name"], [error["kind"] for error in told["response"]["error"]["errors"]]) == ("Bash", ["schema"])


@runs_claude_code
def test_claude_codes_read_of_an_image_reaches_the_gemini_upstream_in_the_function_response(
    on_gemini: Proxy, upstream: LoopbackServer, tmp_path: Path
) -> None:
    """The model reads a PNG with Claude Code's Read tool, whose result is the image alone: the
    ``functionResponse`` carries it as ``inlineData``, the file's bytes unchanged, with an empty
    ``output``; the run ends with the answer."""
    name, data = IMAGE
    args = {"file_path": str(tmp_path / "work" / name)}
    read = turn({"functionCall": {"name": "Read", "args": args}})
    upstream.routes = Turns(PATH, Reply([read]), Reply([turn({"text": PLAIN})]))
    since = len(upstream.requests)
    ran = claude_code(on_gemini.url, PROXY_KEY, tmp_path, GEMINI, files=dict([IMAGE]))
    assert ran == {"subtype": "success", "is_error": False, "num_turns": 2, "result": PLAIN}
    first, second = bodies(upstream, since)
    [tool] = [d for d in first["tools"][0]["functionDeclarations"] if d["name"] == "Read"]
    assert tool["parametersJsonSchema"]["required"] == ["file_path"]
    model, results = second["contents"][-2:]
    ident = model["parts"][0]["functionCall"]["id"]
    assert ident.startswith("toolu_")
    assert model == {  # the call came without a thought signature: the proxy says to skip its check
        "role": "model",
        "parts": [
            {
                "functionCall": {"name": "Read", "args": args, "id": ident},
                "thoughtSignature": "skip_thought_signature_validator",
            }
        ],
    }
    shown = {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(data).decode()}}
    assert results == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "Read", "response": {"output": ""}, "parts": [shown], "id": ident}}],
    }


#: A signature as Gemini 3 puts one on a turn's first call (opaque base64; this one is made up).
SIGNATURE = base64.b64encode(b"a signature of the model's reasoning, " * 8).decode()


@runs_claude_code
def test_claude_code_hands_gemini_3_its_own_signature_back(
    on_gemini: Proxy, upstream: LoopbackServer, tmp_path: Path
) -> None:
    """Gemini 3 signs a turn's first call and wants the signature back with it; Claude Code keeps
    no such field, so the proxy carries it in the call's id, which Claude Code sends back as it
    got it: the next request's call has Gemini's own signature, not the skip value, and its id
    and its result's are the call's own."""
    signed = {**bash("a.txt"), "thoughtSignature": SIGNATURE}
    signed["functionCall"] = {**signed["functionCall"], "id": "g3call01"}
    turns = (turn(signed), turn({"text": PLAIN}))
    upstream.routes = Turns(PATH, *(Reply([answer]) for answer in turns))
    since = len(upstream.requests)
    ran = claude_code(on_gemini.url, PROXY_KEY, tmp_path, GEMINI)
    assert ran == {"subtype": "success", "is_error": False, "num_turns": 2, "result": PLAIN}
    assert sorted(path.name for path in (tmp_path / "work").iterdir()) == ["a.txt"]
    _, again = bodies(upstream, since)
    model, results = again["contents"][-2:]
    [part] = [part for part in model["parts"] if "functionCall" in part]
    [answer] = [part["functionResponse"] for part in results["parts"]]
    assert (part["thoughtSignature"], part["functionCall"]["id"], answer["id"]) == (SIGNATURE, "g3call01", "g3call01")
