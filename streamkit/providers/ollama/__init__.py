"""Ollama: its facts. Its stages are the modules beside this one."""

from .._facts import Facts

FACTS = Facts(
    "ollama",
    finish_reasons={"stop": "stop", "length": "length", "load": "other", "unload": "other"},
    path_end="/api/chat",
    models_path="/api/tags",
    sdk_packages=("ollama",),  # the conventions list no name for it: its slug is its name,
    history_key="messages",
)
