"""The architecture, as a test: stages share the vocabulary and never import each other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "streamkit"
VOCABULARY = {"_errors", "_types", "_events", "_limits", "_json"}
STAGES = {"_sse", "_ndjson", "_awsstream", "_accumulator", "_normalize", "_validate", "providers", "adapters", "_turn"}
STAGES |= {"_sources", "_preview"}  # source items -> pipeline inputs; argument previews
STAGES |= {"_ending"}  # the end of a response in the vocabulary every provider shares
COMPOSER = {"_pipeline", "_detect"}
# The HTTP edge, in order: each part may use the ones before it. Redaction knows no HTTP
# library; the response checks and the client helpers take httpx's objects.
EDGE_PARTS = ("_redact", "_transport", "_client")
EDGE = set(EDGE_PARTS)
RUNNER = {"_run_tools"}  # runs the application's tools on the calls; knows no transport
# Transports for the SDKs' HTTP clients: the pipeline and the detection, not the edge. Each of
# integrations/httpx.py and integrations/httpx2.py imports its own library, and nothing else does.
INTEGRATIONS = {"integrations"}
# Framework integrations that send the request themselves: an httpx client unless given one
# (closed under anyio's shield when the framework cancels the request).
SENDERS = {"langchain"}
THIRD_PARTY = {"httpx", "httpx_sse", "httpx2", "anyio"}


def module_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    return rel.parts[0]


def imports(path: Path) -> set[str]:
    """Top-level streamkit modules and third-party packages imported by ``path``."""
    found: set[str] = set()
    package = path.relative_to(PACKAGE).parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                parts = [*base, *(node.module or "").split(".")] if node.module else base
                if parts:
                    found.add(parts[0])
                else:
                    found.update(alias.name for alias in node.names)
            elif node.module:
                found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(PACKAGE)) for p in SOURCES])
def test_imports_flow_one_way(path: Path) -> None:
    me = module_of(path)
    used = imports(path) - {me}
    if me in VOCABULARY:
        allowed = {"_errors", "_types"}
    elif me in STAGES:
        allowed = VOCABULARY
    elif me in COMPOSER:
        allowed = VOCABULARY | STAGES
    elif me in EDGE:
        allowed = VOCABULARY | STAGES | COMPOSER | set(EDGE_PARTS[: EDGE_PARTS.index(me)])
    elif me in RUNNER:
        allowed = VOCABULARY | STAGES
    elif me in INTEGRATIONS:
        allowed = VOCABULARY | STAGES | COMPOSER
    else:
        return  # entry points (__init__, _cli, __main__) may use anything
    streamkit_modules = VOCABULARY | STAGES | COMPOSER | EDGE | RUNNER | INTEGRATIONS | {"_cli"}
    assert used & streamkit_modules <= allowed, f"{path.name} imports {sorted(used & streamkit_modules - allowed)}"
    third_party = used & THIRD_PARTY
    if me in RUNNER:
        third_party -= {"anyio"}  # the runner's task group; never an HTTP client
    if me in INTEGRATIONS:
        libraries = {path.stem, "httpx", "anyio"} if path.stem in SENDERS else {path.stem}
        assert third_party <= libraries, f"{path.name} imports {sorted(third_party)}"
        return
    assert not third_party or me in EDGE - {"_redact"}, f"{path.name} imports {sorted(third_party)}"


def test_importing_streamkit_loads_no_http_client_and_no_validator() -> None:
    """``import streamkit`` pays for httpx, httpx2, jsonschema-rs and anyio only when they are used."""
    lazy = ("anyio", "httpx", "httpx2", "jsonschema_rs")
    code = f"import sys, streamkit; print(sorted(m for m in {lazy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


@pytest.mark.parametrize(("module", "library", "other"), [("httpx", "httpx", "httpx2"), ("httpx2", "httpx2", "httpx")])
def test_each_integration_loads_its_own_library_alone(module: str, library: str, other: str) -> None:
    loaded = f"sorted(m for m in {(library, other)!r} if m in sys.modules)"
    code = f"import sys, streamkit.integrations.{module}; print({loaded})"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == f"[{library!r}]\n"
