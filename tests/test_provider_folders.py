"""A provider is a folder: outside ``streamkit/providers/`` no module names a provider.

The generic code reads a provider's facts (``FACTS``) and calls its stages (``DECODERS``,
``HISTORIES``, ``ENCODERS``, ``BODIES``) by whatever slug it is given; a slug written out
(``"anthropic"``, ``openai_chat``…) is a provider's fact restated where the next provider will
not find it. The places that still name one are listed below with how many times they do; a
list that can only shrink: the test fails when a count grows, and when a place names fewer
slugs than listed (lower its count, or drop its entry).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamkit.providers import FACTS

PACKAGE = Path(__file__).resolve().parent.parent / "streamkit"
SLUGS = frozenset(FACTS)

#: Public names that are slugs by design, and stay: each history writer at its public path
#: (``streamkit.adapters.<slug>``), and ``streamkit.Provider``, the slugs as a ``Literal`` type
#: that a type checker reads (``tests/test_options.py`` holds it to the registry).
PUBLIC: dict[str, int] = {
    "_types.py": 14,  # Provider = Literal[...] (8), and Requested, those with a request.py (6)
    "adapters/__init__.py": 16,  # each slug's module: imported for type checkers, and in __all__
    **{f"adapters/{slug}.py": 2 for slug in SLUGS},  # the imports of its history writer and its names
}


def named(tree: ast.AST) -> Iterator[str]:
    """Every slug a module names: as a string, a name, an attribute, an argument or a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = [node.value]
        elif isinstance(node, ast.Name):
            found = [node.id]
        elif isinstance(node, ast.Attribute):
            found = [node.attr]
        elif isinstance(node, ast.arg | ast.keyword):
            found = [node.arg or ""]
        elif isinstance(node, ast.alias):
            found = [*node.name.split("."), node.asname or ""]
        elif isinstance(node, ast.ImportFrom):
            found = (node.module or "").split(".")
        else:
            continue
        yield from (name for name in found if name in SLUGS)


def counted(path: Path) -> int:
    return sum(Counter(named(ast.parse(path.read_text()))).values())


OUTSIDE = sorted(path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] != "providers")


@pytest.mark.parametrize("path", OUTSIDE, ids=[str(p.relative_to(PACKAGE)) for p in OUTSIDE])
def test_no_module_outside_the_providers_folders_names_a_provider(path: Path) -> None:
    where = str(path.relative_to(PACKAGE))
    assert counted(path) == PUBLIC.get(where, 0)


def test_every_listed_place_exists() -> None:
    assert {where for where in PUBLIC if not (PACKAGE / where).is_file()} == set()


def test_the_test_sees_each_way_of_naming_a_provider(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text(
        "from .providers.gemini import FACTS\n"
        "import streamkit.adapters.cohere as ollama\n"
        'if provider == "anthropic" or x.mistral or f(bedrock=1):\n'
        "    def g(openai_chat): ...\n"
        'LABEL = "openai_responses: the slug inside a longer text is prose, not a name"\n'
    )
    assert sorted(named(ast.parse(stray.read_text()))) == [
        "anthropic",
        "bedrock",
        "cohere",
        "gemini",
        "mistral",
        "ollama",
        "openai_chat",
    ]
