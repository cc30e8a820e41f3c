"""Ollama: its facts. Its stages are the modules beside this one."""

from .._facts import BEARER, Facts, Paths, Stages

FACTS = Facts(
    "ollama",
    finish_reasons={"stop": "stop", "length": "length", "load": "other", "unload": "other"},
    base_url="http://localhost:11434",
    base_url_variable="OLLAMA_HOST",
    key_variables=("OLLAMA_API_KEY",),
    # A local server takes no key; ollama.com's API takes its key as a bearer token.
    auth=BEARER,
    key_optional=True,
    paths=Paths("/api/chat", end="/api/chat", models="/api/tags"),
    sdk_packages=("ollama",),  # the conventions list no name for it: its slug is its name,
    history_key="messages",
)

STAGES = Stages("OllamaDecoder", "OllamaEncoder", request=True, models=True)
