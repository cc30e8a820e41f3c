"""The "Guarantees" page (docs/guarantees.md) names tests that exist, so the promises stay checked."""

from __future__ import annotations

import ast
import re

from .helpers import ROOT


def test_every_test_the_guarantees_name_exists() -> None:
    page = (ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8")
    section = page.split("# Guarantees", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", section)
    assert len(named) > 20
    for path, name in named:
        source = ROOT / path
        assert source.is_file(), path
        if name:
            tree = ast.parse(source.read_text(encoding="utf-8"))
            functions = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
            assert name in functions, f"{path}::{name}"
