"""Every model name the project sends is one of ``tests/models.py``'s, and none is retired."""

from __future__ import annotations

import re
import warnings

import pytest

from .helpers import ROOT
from .models import ANTHROPIC, GEMINI, MODELS, OPENAI

#: A model name of the families the frameworks judge (Bedrock's ``anthropic.claude-…`` included).
NAME = re.compile(r"\b(?:claude|gpt|gemini)-(?=[a-z.-]*[0-9])[0-9a-z.-]*[0-9a-z]")
#: Where names are written by us; the fixtures are recorded responses, kept as they came.
SCANNED = [
    ROOT / "README.md",
    *(ROOT / "docs").rglob("*.md"),
    *(ROOT / "streamkit").rglob("*.py"),
    *(path for path in (ROOT / "tests").rglob("*.py") if path.name != "test_models.py"),
    *(ROOT / "benchmarks").glob("*.py"),
]


#: The names the recorded responses carry (a test may assert what a fixture holds).
RECORDED = {
    match[0]
    for path in (ROOT / "fixtures").rglob("*")
    if path.is_file()
    for match in NAME.finditer(path.read_bytes().decode("utf-8", "replace"))
}


def named() -> list[tuple[str, str]]:
    found = []
    for path in SCANNED:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [(f"{path.relative_to(ROOT)}:{number}", match[0]) for match in NAME.finditer(line)]
    return found


def test_every_model_name_in_the_tree_is_the_tables() -> None:
    stray = [
        f"{where}: {name!r} (use {MODELS[name.split('-')[0]]!r})"
        for where, name in named()
        if name != MODELS[name.split("-")[0]] and not (where.startswith("tests/") and name in RECORDED)
    ]
    assert not stray, "model names outside tests/models.py:\n" + "\n".join(stray)
    assert set(MODELS.values()) <= {name for _, name in named()}  # the scan sees each one in use


def test_the_scan_finds_a_stray_name() -> None:
    line = 'model = AnthropicModel("claude-sonnet-4-5")  # and us.anthropic.claude-sonnet-4-20250514-v1:0'
    assert [m[0] for m in NAME.finditer(line)] == ["claude-sonnet-4-5", "claude-sonnet-4-20250514-v1"]


@pytest.mark.parametrize(
    ("module", "model_class", "provider_class", "name"),
    [
        ("anthropic", "AnthropicModel", "AnthropicProvider", ANTHROPIC),
        ("openai", "OpenAIChatModel", "OpenAIProvider", OPENAI),
        ("openai", "OpenAIResponsesModel", "OpenAIProvider", OPENAI),
        ("google", "GoogleModel", "GoogleProvider", GEMINI),
    ],
)
def test_pydantic_ai_knows_no_deprecation_of_the_model(
    module: str, model_class: str, provider_class: str, name: str
) -> None:
    """pydantic-ai carries the providers' deprecation tables: a retired name warns on every request."""
    models = pytest.importorskip(f"pydantic_ai.models.{module}", reason="the framework-tests extra")
    providers = pytest.importorskip(f"pydantic_ai.providers.{module}", reason="the framework-tests extra")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = getattr(models, model_class)(name, provider=getattr(providers, provider_class)(api_key="k"))
    deprecation = model.profile.get("deprecation")
    assert deprecation is None, f"{name!r} on {model_class}: {deprecation}"
