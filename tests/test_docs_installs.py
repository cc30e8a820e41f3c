"""Each example names what to install: a copied block says which extra and packages it needs.

An example that imports anything beyond the standard library and streamkit's own dependencies
opens with a ``# pip install ...`` line, and what that line installs (the extras' requirements,
then theirs, as the installed packages declare them) provides every module the block imports.
"""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import sys
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .helpers import ROOT
from .test_docs import EXAMPLES, Example, imported

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
OURS = canonicalize_name(PROJECT["name"])
#: What ``pip install streamkit-toolcalls`` gives: the core dependencies, importable by every example.
CORE = {"streamkit", "orjson", "jsonschema_rs", "httpx", "anyio"}
INSTALL = re.compile(r"\A# pip install (?P<what>[^\n]+)\n")
MODULE_DISTRIBUTIONS = importlib.metadata.packages_distributions()


def installed(what: str) -> set[str]:
    """Every distribution a ``pip install`` of ``what`` brings, as far as the installed metadata tells."""
    pending = [Requirement(token) for token in shlex.split(what)]
    seen: set[str] = set()
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        key = f"{name}[{','.join(sorted(requirement.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        for extra in requirement.extras:
            if name == OURS and extra not in PROJECT["optional-dependencies"]:
                pytest.fail(f"{what!r}: streamkit-toolcalls has no extra {extra!r}")
        pending += [Requirement(text) for text in _requires(name, requirement.extras)]
    return {key.split("[")[0] for key in seen}


def _requires(name: str, extras: set[str]) -> list[str]:
    if name == OURS:  # this checkout's own, whichever streamkit is installed
        own = list(PROJECT["dependencies"])
        return own + [text for extra in sorted(extras) for text in PROJECT["optional-dependencies"][extra]]
    try:
        declared = importlib.metadata.requires(name) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    wanted = []
    for text in declared:
        marker = Requirement(text).marker
        if marker is None or any(marker.evaluate({"extra": extra}) for extra in {"", *extras}):
            wanted.append(text)
    return wanted


def needs(example: Example) -> set[str]:
    return imported(example.code) - CORE - set(sys.stdlib_module_names)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_the_example_names_what_it_needs(example: Example) -> None:
    line = INSTALL.match(example.code)
    wanted = needs(example)
    if not wanted:
        return
    assert line is not None, f"{example.name} imports {sorted(wanted)}: it must open with '# pip install ...'"
    given = installed(line["what"])
    for module in sorted(wanted):
        providers = {canonicalize_name(name) for name in MODULE_DISTRIBUTIONS.get(module, [])}
        if not providers:
            continue  # not installed here: the example itself skips, saying which extra
        if not providers & given and _unknown(given):
            pytest.skip(f"{sorted(_unknown(given))} not installed here: what they bring is not known")
        assert providers & given, f"{example.name}: {line[0].strip()!r} installs nothing that provides {module!r}"


def _unknown(names: set[str]) -> set[str]:
    """The distributions whose requirements are not known here, for not being installed."""
    unknown = set()
    for name in names - {OURS}:
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            unknown.add(name)
    return unknown


def test_the_check_sees_a_missing_package() -> None:
    """``[otel]`` is the API alone: an example of the SDK's exporters must name the SDK too."""
    pytest.importorskip("opentelemetry.sdk", reason="the test extra")
    assert "opentelemetry-sdk" not in installed("'streamkit-toolcalls[otel]'")
    assert "opentelemetry-sdk" in installed("'streamkit-toolcalls[otel]' opentelemetry-sdk")
    assert {"pytest", "httpx"} <= installed("'streamkit-toolcalls[testing]'")
