"""Ollama: its facts. Its stages are the modules beside this one."""

from .._facts import Facts

FACTS = Facts(
    "ollama",
    finish_reasons={"stop": "stop", "length": "length", "load": "other", "unload": "other"},
    base_url="http://localhost:11434",
    request_path="/api/chat",
    path_end="/api/chat",
    models_path="/api/tags",
    # A local server takes no key; ollama.com's API takes its key as a bearer token.
    auth_header="Authorization",
    auth_value="Bearer {}",
    key_optional=True,
    key_variables=("OLLAMA_API_KEY",),
    base_url_variable="OLLAMA_HOST",
    sdk_packages=("ollama",),  # the conventions list no name for it: its slug is its name,
    history_key="messages",
)
