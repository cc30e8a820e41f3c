"""Safety: nothing from the stream is evaluated, and logging is quiet and never shows arguments."""

from __future__ import annotations

import ast
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from streamkit import Limits, ToolCall

from .wire import WIRES, OpenAIChatWire, call, run

PACKAGE = Path(__file__).resolve().parent.parent / "streamkit"
SECRET = "sk-live-0123456789abcdef"

# Names whose use would let stream content run as code or be deserialized as objects.
FORBIDDEN_BUILTINS = {"eval", "exec", "compile", "__import__", "input", "breakpoint"}
FORBIDDEN_METHODS = {"eval", "exec", "literal_eval", "system", "popen", "spawn"}
FORBIDDEN_MODULES = {"pickle", "marshal", "shelve", "dill", "subprocess", "importlib", "code", "codeop", "ctypes"}
#: The provider registry imports a provider's stage by its folder's name, only for a slug of its
#: own table (an unknown one is a KeyError before any import: ``test_the_registry_imports_…``).
IMPORTS_BY_NAME = {"providers/__init__.py"}
#: The class maker compiles each vocabulary class's ``__init__`` from its field names, as
#: ``dataclass`` does: text made from the class's source alone, never from a stream.
EXECS_CLASS_SOURCE = {"_values.py"}


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_can_evaluate_stream_content(path: Path) -> None:
    tree = ast.parse(path.read_text())
    where = str(path.relative_to(PACKAGE))
    forbidden = FORBIDDEN_MODULES - ({"importlib"} if where in IMPORTS_BY_NAME else set())
    builtins = FORBIDDEN_BUILTINS - ({"exec"} if where in EXECS_CLASS_SOURCE else set())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                assert func.id not in builtins, f"{path.name}:{node.lineno} calls {func.id}"
            elif isinstance(func, ast.Attribute):
                assert func.attr not in FORBIDDEN_METHODS, f"{path.name}:{node.lineno} calls {func.attr}"
        elif isinstance(node, ast.Import):
            assert not {a.name.split(".")[0] for a in node.names} & forbidden, f"{path.name}:{node.lineno}"
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            assert node.module.split(".")[0] not in forbidden, f"{path.name}:{node.lineno}"


@pytest.mark.parametrize("name", ["os", "..", "openai_chat.decode", "../etc", "subprocess"])
def test_the_registry_imports_nothing_for_a_slug_outside_its_table(name: str) -> None:
    code = (
        "import sys, streamkit.providers as p\n"
        "before = set(sys.modules)\n"
        "for table in (p.FACTS, p.DECODERS, p.HISTORIES, p.ENCODERS, p.BODIES, p.REQUESTS):\n"
        f"    assert table.get({name!r}) is None\n"
        "print(sorted(set(sys.modules) - before))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


#: A call whose opening is sent twice: the accumulator logs the anomaly (``id_repeated``).
_OPENING = b'data: {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c"}]}}]}\n\n'
_ANOMALY = _OPENING * 2 + b"data: [DONE]\n\n"
_RUN_ANOMALY = f"""
import sys
import streamkit
list(streamkit.iter_events([{_ANOMALY!r}], "openai_chat"))
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


def test_the_streamkit_logger_is_quiet_by_default() -> None:
    """Once a stage has logged, in a fresh interpreter: the application decides what it sees."""
    code = _RUN_ANOMALY + (
        "logger = logging.getLogger('streamkit')\nprint([type(h).__name__ for h in logger.handlers], logger.level)\n"
    )
    out = _run("import logging\n" + code)
    assert (out.stdout, out.stderr) == (f"['NullHandler'] {logging.NOTSET}\n", "")


def test_a_program_without_logging_does_not_load_it_for_streamkit() -> None:
    """Nobody can see a record before ``logging`` is loaded: the pipeline does not load it."""
    out = _run(_RUN_ANOMALY + "print('logging' in sys.modules)\n")
    assert (out.stdout, out.stderr) == ("False\n", "")


def _hostile_streams() -> list[tuple[str, bytes, dict[str, object]]]:
    """Streams that make every stage log: anomalies, a cut call, a limit, a frame left unfinished."""
    out: list[tuple[str, bytes, dict[str, object]]] = []
    for slug, wire in sorted(WIRES.items()):
        secret_args = f'{{"api_key": "{SECRET}"}}'
        out.append((slug, wire.begin() + call(wire, 0, "c", "f", [secret_args]) + wire.finish(), {}))
        out.append((slug, wire.begin() + wire.start(0, "c", "f") + wire.fragment(0, secret_args), {}))
        limited: dict[str, object] = {"limits": Limits(max_argument_bytes=10)}
        out.append((slug, wire.begin() + wire.start(0, "c", "f") + wire.fragment(0, secret_args), limited))
        out.append((slug, wire.begin() + wire.start(0, "c", "f") + wire.fragment(0, secret_args)[:-3], {}))
    openai = OpenAIChatWire()
    resent = openai.chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": SECRET}}]})
    out.append(("openai_chat", openai.begin() + call(openai, 0, "c", "f", [SECRET]) + resent + openai.finish(), {}))
    return out


def test_debug_logs_name_what_happened_and_never_show_arguments(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="streamkit")
    for slug, data, options in _hostile_streams():
        run([data], slug, **options)
    messages = [record.getMessage() for record in caplog.records]
    assert all(record.name.startswith("streamkit") for record in caplog.records)
    assert not [m for m in messages if SECRET in m or "api_key" in m]
    assert "openai_chat: call index 0: arguments_resent" in messages
    assert "anthropic: call index 0: the arguments grew to 39 characters (max_argument_bytes=10)" in messages
    assert "openai_chat: call index 0: the arguments grew to 39 characters (max_argument_bytes=10)" in messages
    assert [m for m in messages if m.startswith("input ended inside an SSE event: ") and m.endswith(" bytes dropped")]


def test_nothing_is_logged_above_debug(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="streamkit")
    for slug, data, options in _hostile_streams():
        run([data], slug, **options)
    assert caplog.records and {record.levelno for record in caplog.records} == {logging.DEBUG}


def test_reprs_of_calls_never_show_long_arguments() -> None:
    call_value = ToolCall(0, "c", "f", {"content": "x" * 50 + SECRET})
    assert SECRET not in repr(call_value)


def test_every_anomaly_is_logged_including_the_normalizers(caplog: pytest.LogCaptureFixture) -> None:
    from .helpers import FIXTURES, events

    caplog.set_level(logging.DEBUG, logger="streamkit")
    events((FIXTURES / "openai_chat" / "empty_and_null_arguments.sse").read_bytes(), "openai_chat")
    assert [r.getMessage() for r in caplog.records] == ["openai_chat: call index 2: null_arguments"]
