"""The architecture, as a test: stages share the vocabulary and never import each other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "streamkit"
VOCABULARY = {"_errors", "_types", "_turn_types", "_events", "_limits", "_json", "_framing"}
VOCABULARY |= {"_inexact"}  # whether orjson may have read an integer inexactly, apart from _json's exact reader
VOCABULARY |= {"_values"}  # how the vocabulary's dataclasses are made
VOCABULARY |= {"_observe"}  # the telemetry hooks: a global every layer may read, importing nothing
STAGES = {"_sse", "_ndjson", "_awsstream", "_accumulator", "_normalize", "_validate", "providers", "adapters", "_turn"}
# A provider is a folder holding its part of several stages, each file classed by its name:
# ``decode.py`` and ``body.py`` (a body that was not streamed) are the decoder stage
# ("providers"), ``history.py`` the adapters' and
# ``reemit.py`` the re-emission's, which writes a decoded stream back (using its decoder's
# facts) for the transports and the proxy. Each folder's ``__init__.py`` declares the provider's
# facts (``FACTS``, a ``providers/_facts.py`` dataclass), read by its stages and the generic code;
# the registry (``providers/__init__.py``) loads a provider's stages at their first lookup.
# ``request.py`` writes a streamed request's body from a history already written (``_request``).
# ``write.py`` writes an answer in its provider's format from any provider's values (``_writer``),
# framed as the re-emitters frame theirs; ``models.py`` reads its API's model list into the
# writers' ``Model``s where no ``write.py`` does.
FOLDER_FILES = {"decode": "providers", "body": "providers", "history": "adapters", "reemit": "_encoder"}
FOLDER_FILES |= {"__init__": "_facts", "request": "_request", "write": "_writer", "asked": "_request"}
FOLDER_FILES |= {"models": "_writer"}
STAGES |= {"_encoder", "_registry", "_facts", "_request", "_writer"}
STAGES |= {"_sources", "_preview"}  # source items -> pipeline inputs; argument previews
STAGES |= {"_ending"}  # the end of a response in the vocabulary every provider shares
# The hot read: the stream's fast path, across the framer, the decoder and the accumulator,
# through what each exposes for it; the composer arms it and hands it reads, and nothing else
# knows it exists.
HOT = {"_hot"}
COMPOSER = {"_pipeline", "_detect"}
# The HTTP edge, in order: each part may use the ones before it. The response checks take httpx's
# objects; the iterators (a response as a source) and the client (sending the request) each use
# them, and not each other.
EDGE_PARTS = ("_response", "_transport", "_client")
EDGE = set(EDGE_PARTS)
RUNNER = {"_run_tools"}  # runs the application's tools on the calls; knows no transport
# The re-emission the transports and the proxy both stand on: a stream written back, each call
# whole, by the composer and a provider's encoder. Sans-IO: no HTTP library, no transport.
REEMIT = {"_reemit"}
# Transports for the SDKs' HTTP clients: the pipeline and the detection, the re-emission, and the
# redaction (a request's secrets, which telemetry scrubs); of the edge nothing. Each of integrations/httpx.py and
# integrations/httpx2.py imports its own library, and nothing else does.
INTEGRATIONS = {"integrations"}
THIRD_PARTY = {"httpx", "httpx_sse", "httpx2", "anyio"}
# The framework integrations that send their requests themselves, and the libraries they send with:
# an httpx client unless given one (closed under anyio's shield when the framework cancels).
SENDS_WITH = {"openai_agents": {"httpx"}, "_clients": {"httpx", "anyio"}, "_early": {"anyio"}, "litellm": {"httpx"}}
SENDS_WITH["litellm"] |= {"anyio"}  # a retried request waits under anyio
# They send through the edge's client, imported by name (never through the package root).
SENDERS = {"openai_agents", "litellm", "langchain", "crewai", "google_adk", "smolagents", "agno"}
# The proxy (streamkit serve): an HTTP edge of its own, on the re-emission the transports use and
# the redaction (never on the integrations); it sends with httpx, streams under anyio and runs on
# uvicorn. Nothing imports it but the command line.
SERVE = {"serve"}
SERVES_WITH = {"httpx", "anyio", "uvicorn"}


# A stage's own parts, in modules of their own: the stage's to import, and bound by its rules.
PART_OF = {"_tooldefs": "_validate"}  # reading the tool definitions, for the validator
PART_OF |= {"_previewing": "_accumulator"}  # the accumulator that previews, loaded only for previews
# The composer's parts: the Assembler, and the translation of a source's own exceptions.
PART_OF |= {"_assembler": "_pipeline", "_foreign": "_pipeline"}
# What an error shows of a refused answer, built once for the composer (an SDK's exception for
# it) and for the HTTP edge (its own response): the status error, and the redaction of the
# request's secrets it uses. Neither knows an HTTP library.
PART_OF |= {"_status": "_pipeline", "_redact": "_pipeline"}


def layer_of(parts: list[str] | tuple[str, ...]) -> str:
    """The layer of a streamkit module named by its dotted parts below the package."""
    if parts[0] == "providers":
        if len(parts) == 1 or parts[1] == "__init__":
            return "_registry"
        if parts[1] in ("_encoder", "_facts", "_request", "_writer"):
            return parts[1]
        if not parts[1].startswith("_"):  # a provider's folder
            return FOLDER_FILES[parts[2]] if len(parts) > 2 else "_facts"
    return PART_OF.get(parts[0], parts[0])


def module_of(path: Path) -> str:
    return layer_of(path.relative_to(PACKAGE).with_suffix("").parts)


def imports(path: Path) -> set[str]:
    """Top-level streamkit modules and third-party packages imported by ``path``."""
    found: set[str] = set()
    package = path.relative_to(PACKAGE).parts[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                parts = [*base, *(node.module or "").split(".")] if node.module else base
                for alias in node.names:  # a name may be a module of the package imported from
                    named = [*parts, alias.name]
                    module = PACKAGE.joinpath(*named).with_suffix(".py").is_file() or PACKAGE.joinpath(*named).is_dir()
                    found.add(layer_of(named if module or not parts else parts))
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
        allowed = {"_errors", "_types"} | ({"_turn_types"} if me != "_types" else set())  # a turn holds calls
        allowed |= {"_values"}  # how its dataclasses are made
        if me == "_framing":
            allowed |= {"_events"}  # the framers' base cuts bytes into the frames defined there
    elif me == "_registry":
        allowed = VOCABULARY | {"providers", "adapters", "_encoder", "_facts", "_request", "_writer"}  # its stages
    elif me == "_facts":
        allowed = VOCABULARY | {"_ending"}  # which finishes cut: the shared rule, read once per provider
        allowed |= {"providers"} if path.name == "__init__.py" else set()  # its decoder, re-exported on first use
    elif me in STAGES:
        allowed = VOCABULARY | {"_facts"}  # a stage reads its provider's facts
        if me == "_encoder":
            allowed |= {"providers", "_registry"}  # a re-emitter reads its own decoder's facts
        if me == "_writer":
            allowed |= {"_encoder", "providers"}  # framed as the re-emitters frame theirs; its decoder's facts
        if me == "adapters":
            allowed |= {"_registry"}  # ``ADAPTERS`` is the registry's history writers
        if me == "adapters" and path.name == "history.py":
            # a result's images shown after the tool messages as a user message, which its request writer writes
            allowed |= {"_request"}
    elif me in HOT:
        allowed = VOCABULARY | STAGES
    elif me in COMPOSER:
        allowed = VOCABULARY | STAGES | HOT
    elif me in EDGE:
        allowed = VOCABULARY | STAGES | COMPOSER | set(EDGE_PARTS[: EDGE_PARTS.index(me)]) - {"_transport"}
    elif me in RUNNER:
        allowed = VOCABULARY | STAGES
    elif me in REEMIT:
        allowed = VOCABULARY | STAGES | COMPOSER
    elif me in INTEGRATIONS:
        allowed = VOCABULARY | STAGES | COMPOSER | REEMIT | ({"_client"} if path.stem in SENDERS else set())
        assert "streamkit" not in used, f"{path.name} imports the package root; import the modules it uses"
    elif me in SERVE:
        allowed = VOCABULARY | STAGES | COMPOSER | REEMIT
    else:
        return  # entry points (__init__, _cli, __main__) may use anything
    streamkit_modules = VOCABULARY | STAGES | HOT | COMPOSER | EDGE | RUNNER | REEMIT | INTEGRATIONS | SERVE | {"_cli"}
    assert used & streamkit_modules <= allowed, f"{path.name} imports {sorted(used & streamkit_modules - allowed)}"
    third_party = used & (THIRD_PARTY | SERVES_WITH)
    if me in SERVE:
        assert third_party <= SERVES_WITH, f"{path.name} imports {sorted(third_party)}"
        return
    if me in RUNNER:
        third_party -= {"anyio"}  # the runner's task group; never an HTTP client
    if me in INTEGRATIONS:
        assert third_party <= {path.stem, *SENDS_WITH.get(path.stem, ())}, f"{path.name} imports {sorted(third_party)}"
        return
    assert not third_party or me in EDGE, f"{path.name} imports {sorted(third_party)}"


def test_the_command_line_loads_no_server() -> None:
    """``streamkit replay`` does not pay for the proxy: the serve command's parser loads neither uvicorn nor the app."""
    loaded = set(_loaded_by("import streamkit._cli"))
    assert "streamkit.serve._command" in loaded
    assert not {"uvicorn", "streamkit.serve._app", "streamkit.serve._proxy"} & loaded


def test_importing_streamkit_loads_no_http_client_and_no_validator() -> None:
    """``import streamkit`` pays for httpx, httpx2, jsonschema-rs and anyio only when they are used."""
    lazy = ("anyio", "httpx", "httpx2", "jsonschema_rs")
    code = f"import sys, streamkit; print(sorted(m for m in {lazy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


def _loaded_by(statement: str) -> list[str]:
    """The modules a fresh interpreter loads for ``statement`` beyond its own start."""
    code = f"import sys; before = set(sys.modules); {statement}; print(sorted(set(sys.modules) - before))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return list(ast.literal_eval(out.stdout))


def test_a_stream_of_one_provider_loads_that_provider_s_folder_alone() -> None:
    """The registry reads a provider's folder at its slug's first lookup: decoding Anthropic's
    stream imports no other provider's facts, stages or decoder."""
    start = b'data: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":1}}}\n\n'
    stop = b'data: {"type":"message_stop"}\n\n'
    statement = f"from streamkit import iter_tool_calls; list(iter_tool_calls([{start!r}, {stop!r}], 'anthropic'))"
    folders = [name for name in _loaded_by(statement) if name.startswith("streamkit.providers.")]
    assert [name for name in folders if name.count(".") >= 2 and "._" not in name] == [
        "streamkit.providers.anthropic",
        "streamkit.providers.anthropic.decode",
    ]


def test_importing_streamkit_loads_only_its_own_package_module() -> None:
    """Each public name's module is loaded at its first use: ``import streamkit`` alone is nearly free."""
    assert _loaded_by("import streamkit") == ["__future__", "streamkit"]


@pytest.mark.parametrize("name", ["adapters", "integrations", "providers"])
def test_each_subpackage_is_loaded_at_its_first_use(name: str) -> None:
    code = f"import streamkit; print(streamkit.{name}.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == f"streamkit.{name}\n"


def test_the_vocabulary_loads_no_stage() -> None:
    loaded = _loaded_by("from streamkit import ToolCall, Turn, StreamkitError, Limits")
    ours = [name for name in loaded if name.startswith("streamkit")]
    vocabulary = ["streamkit._errors", "streamkit._limits", "streamkit._turn_types", "streamkit._types"]
    assert ours == ["streamkit", *vocabulary, "streamkit._values"]
    assert not {"orjson", "logging", "hashlib"} & set(loaded)


def test_the_pipeline_loads_the_decoder_of_its_stream_alone() -> None:
    """No decoder, framer, validator or turn stage is loaded before a stream needs it; a stream loads its own."""
    stream = "list(iter_tool_calls([b'data: [DONE]\\n\\n'], 'openai_chat'))"
    for statement, decoders in (
        ("from streamkit import iter_tool_calls", []),
        (
            f"from streamkit import iter_tool_calls; {stream}",
            ["streamkit.providers.openai_chat", "streamkit.providers.openai_chat.decode"],
        ),
    ):
        loaded = _loaded_by(statement)
        assert [name for name in loaded if name.startswith("streamkit.providers.") and "._" not in name] == decoders
        assert not {"streamkit._validate", "streamkit._awsstream", "urllib.parse", "jsonschema_rs"} & set(loaded)
        assert not {"streamkit._turn", "streamkit._turn_types"} & set(loaded)  # loaded by a turn's first block
        assert not {"streamkit._json", "streamkit.providers._exact"} & set(loaded)  # the exact reading: loaded by
        # the first read orjson refuses or may get wrong
        assert "contextvars" not in loaded  # telemetry's: loaded when it is enabled
        assert "streamkit._previewing" not in loaded  # loaded by the first stream that asks for previews


@pytest.mark.parametrize(("module", "library", "other"), [("httpx", "httpx", "httpx2"), ("httpx2", "httpx2", "httpx")])
def test_each_integration_loads_its_own_library_alone(module: str, library: str, other: str) -> None:
    loaded = f"sorted(m for m in {(library, other)!r} if m in sys.modules)"
    code = f"import sys, streamkit.integrations.{module}; print({loaded})"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == f"[{library!r}]\n"
