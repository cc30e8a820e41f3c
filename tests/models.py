"""The model names the tests, the benchmarks and the docs' examples send: one place.

A provider retires a model every few months, and the frameworks warn when a request names a
retired one (pydantic-ai's ``DeprecatedModelWarning``, an error under our warning filters).
``tests/test_models.py`` holds every model name in the README, the docs, the package, the tests
and the benchmarks to this table, and asks pydantic-ai whether any of them is deprecated: when
one is, change it here and the test lists each line still naming the old one.
"""

from __future__ import annotations

#: Anthropic's Messages API; on Bedrock, with its ``anthropic.`` prefix.
ANTHROPIC = "claude-sonnet-5-5"
#: OpenAI's Chat Completions and Responses APIs.
OPENAI = "gpt-5.4"
#: Google's Gemini API.
GEMINI = "gemini-3.8-flash"

#: Each family's name, by the families a name is recognized by in the tree.
MODELS = {"claude": ANTHROPIC, "gpt": OPENAI, "gemini": GEMINI}
