"""Every Python example in the README and the docs runs as written.

Each ```` ```python ```` block is run on its own, from the repository root, as a user would run
it: a complete program, as a script runs (one that awaits defines ``main`` and calls
``asyncio.run(main())``; a top-level ``await`` fails, as it does in a script). The official SDKs and the raw
HTTP examples find their server through the environment variables the SDKs read themselves
(``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``,
``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``), here pointing at the loopback server, which answers each
provider's endpoint with the repository's own fixture of that provider. A block followed
directly by a ```` ```text ```` block must print exactly that text. A block preceded by
``<!-- not run: why -->`` is only compiled; there are few. A block preceded by
``<!-- test file: ... -->`` is a user's test file: pytest runs it in a fresh process with
streamkit's plugin, and every test in it must pass (exactly N of them, if the mark says "N
tests pass"). A ```` ```console ```` block of
``$ streamkit replay ...`` must show exactly what that command prints, and the README's
Quickstart output is what its first command prints.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import io
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .helpers import FIXTURES, ROOT, replay
from .server import LoopbackServer, Reply

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(
    r"(?:<!-- (?P<mark>[^>]*?) -->\n)?```python\n(?P<code>.*?)```\n(?:\s*```text\n(?P<output>.*?)```)?", re.DOTALL
)
SDKS = {"openai", "anthropic", "google", "boto3", "mistralai"}  # the sdk-tests extra
FRAMEWORKS = {"pydantic_ai", "langchain", "langchain_core", "langgraph", "agents", "litellm"}  # framework-tests
FRAMEWORKS |= {"crewai"}  # tested in a virtualenv of its own (google.adk is under SDKS' "google")
FRAMEWORKS |= {"smolagents", "agno"}
FRAMEWORKS |= {"haystack", "haystack_integrations", "autogen_agentchat", "autogen_ext"}  # unintegrated-tests


@dataclass(frozen=True)
class Example:
    page: Path
    line: int
    code: str
    mark: str | None
    output: str | None

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("code"))
            found.append(Example(page, line, match["code"], match["mark"], match["output"]))
    return found


#: A request body that sends tool results back (Anthropic's blocks, OpenAI's messages, Gemini's parts).
RESULTS = re.compile(rb'"type": ?"tool_result"|"role": ?"tool"|"functionResponse"')


class Endpoints(dict[str, Reply]):
    """The loopback server's routes, matched on the end of the path (model names vary).

    A request that sends tool results back is answered with the path's entry in ``answers``,
    where it has one: the model's answer once the tools ran, which ends a multi-turn loop.
    """

    def __init__(self, server: LoopbackServer, replies: dict[str, Reply], answers: dict[str, Reply]) -> None:
        super().__init__(replies)
        self.server = server
        self.answers = answers

    def get(self, path: str, default: Any = None) -> Any:
        suffix = next((suffix for suffix in self if path.endswith(suffix)), None)
        if suffix is None:
            return default
        answer = self.answers.get(suffix)
        sent = self.server.requests[-1].body if self.server.requests else b""
        return answer if answer is not None and RESULTS.search(sent) else self[suffix]


def fixture_reply(name: str, content_type: str = "text/event-stream") -> Reply:
    data = (FIXTURES / name).read_bytes()
    return Reply([data[i : i + 97] for i in range(0, len(data), 97)], content_type=content_type)


@pytest.fixture
def providers(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackServer]:
    """The loopback server as every provider's endpoint, the SDKs pointed at it."""
    server = LoopbackServer()
    server.routes = Endpoints(
        server,
        {
            "/v1/messages": fixture_reply("anthropic/text_then_two_calls.sse"),
            "/v1/chat/completions": fixture_reply("openai_chat/text_then_two_calls.sse"),
            "/v1/responses": fixture_reply("openai_responses/text_then_two_calls.sse"),
            ":streamGenerateContent": fixture_reply("gemini/text_then_two_calls.sse"),
            "/converse-stream": fixture_reply("bedrock/text_then_two_calls.bin", "application/vnd.amazon.eventstream"),
        },
        {
            "/v1/messages": fixture_reply("anthropic/text_only_crlf.sse"),
            ":streamGenerateContent": fixture_reply("gemini/text_only.sse"),
        },
    )
    for name in ("GOOGLE_API_KEY", "AWS_PROFILE", "AWS_SESSION_TOKEN", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    environment = {
        "ANTHROPIC_BASE_URL": server.url(""),
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "OPENAI_BASE_URL": server.url("/v1"),
        "OPENAI_API_KEY": "sk-test",
        "GOOGLE_GEMINI_BASE_URL": server.url(""),
        "GEMINI_API_KEY": "test-key",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": server.url(""),
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(ROOT)
    yield server
    server.close()


def run(example: Example) -> str:
    """Run the block as a script runs it, and return its output."""
    code = compile(example.code, example.name, "exec")
    namespace: dict[str, Any] = {"__name__": "__main__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, namespace)
    del namespace
    gc.collect()  # what the example left open is reported here, against this example
    return out.getvalue()


EXAMPLES = examples()


def imported(code: str) -> set[str]:
    """The top-level modules a block imports (absolute imports only, as an example's are)."""
    return {
        name.split(".")[0]
        for node in ast.walk(ast.parse(code))
        for name in (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.level == 0
            else []
        )
    }


def run_as_test_file(example: Example, where: Path) -> None:
    """Run the block as a user's test file, by pytest in a fresh process with streamkit's plugin."""
    for name in sorted(imported(example.code) & (SDKS | FRAMEWORKS)):
        pytest.importorskip(name, reason="the sdk-tests and framework-tests extras")
    test_file = where / "test_example.py"
    test_file.write_text(example.code, encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "streamkit.testing",
        str(test_file),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, f"{example.name}:\n{done.stdout}{done.stderr}"
    promised = re.search(r"(\d+) tests? pass", example.mark or "")  # "test file: 7 tests pass"
    if promised is not None:
        summary = done.stdout.strip().splitlines()[-1]
        assert re.match(rf"{promised[1]} passed in ", summary), f"{example.name}: {summary}"


def with_the_example_served(example: Example) -> None:
    """Run the block against ``streamkit serve --example``, started as the page says, on a free port."""
    pytest.importorskip("uvicorn", reason="the serve extra")
    pytest.importorskip("openai", reason="the sdk-tests extra")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "streamkit", "serve", "--example", "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert server.poll() is None and time.monotonic() < deadline, "streamkit serve --example did not start"
            time.sleep(0.05)
        assert "http://127.0.0.1:8080" in example.code  # the page's own address, here on a free port
        moved = Example(example.page, example.line, example.code.replace(":8080", f":{port}"), None, example.output)
        printed = run(moved)
    finally:
        server.terminate()
        server.wait(30)
    if example.output is not None:
        assert printed == example.output


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_the_example_runs(example: Example, providers: LoopbackServer, tmp_path: Path) -> None:
    if example.mark is not None and example.mark.startswith("not run:"):
        compile(example.code, example.name, "exec")
        return
    if example.mark is not None and example.mark.startswith("test file:"):
        run_as_test_file(example, tmp_path)
        return
    if example.mark == "with: streamkit serve --example":
        with_the_example_served(example)
        return
    assert example.mark is None, f"{example.name}: unknown mark {example.mark!r}"
    try:
        printed = run(example)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in SDKS | FRAMEWORKS:
            raise
        pytest.skip(f"{exc.name} is not installed (the sdk-tests and framework-tests extras)")
    if example.output is not None:
        assert printed == example.output


def test_the_examples_are_found_and_few_are_not_run() -> None:
    assert len(EXAMPLES) >= 15
    assert len({e.page for e in EXAMPLES}) >= 6
    not_run = [e.name for e in EXAMPLES if e.mark is not None and e.mark.startswith("not run:")]
    assert len(not_run) <= 3, not_run


CONSOLE = re.compile(r"```console\n\$ streamkit (?P<args>.*?)\n(?P<output>.*?)```", re.DOTALL)
SESSIONS = [
    (page, match["args"], match["output"])
    for page in PAGES
    for match in CONSOLE.finditer(page.read_text(encoding="utf-8"))
]


@pytest.mark.parametrize(("page", "args", "output"), SESSIONS, ids=[f"{p.name}:{a}" for p, a, _ in SESSIONS])
def test_the_command_line_sessions_print_what_they_show(
    page: Path, args: str, output: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    result = replay(shlex.split(args))
    assert (result.code, result.stdout) == (0, output)


def test_the_quickstart_output_is_what_its_first_command_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme[readme.index("## Quickstart") :]
    commands, shown = re.findall(r"```(?:sh|text)\n(.*?)```", quickstart, flags=re.DOTALL)[:2]
    first = commands.splitlines()[0].split(" && ", 1)[1]
    assert first.startswith("streamkit ")
    monkeypatch.chdir(ROOT)
    result = replay(shlex.split(first)[1:])
    assert (result.code, result.stdout) == (0, shown)


def test_the_api_reference_names_every_public_name() -> None:
    import streamkit

    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [name for name in streamkit.__all__ if f"streamkit.{name}" not in page]
    assert missing == []
