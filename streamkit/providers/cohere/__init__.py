"""Cohere Chat v2: its facts. Its stages are the modules beside this one."""

from .._facts import Facts

FACTS = Facts(
    "cohere",
    finish_reasons={
        "COMPLETE": "stop",
        "STOP_SEQUENCE": "stop",
        "TOOL_CALL": "tool_calls",
        "MAX_TOKENS": "length",
        "ERROR_LIMIT": "length",
        "ERROR_TOXIC": "content_filter",
    },
    path_end="/v2/chat",
    auth_header="Authorization",
    auth_value="Bearer {}",
    key_variables=("CO_API_KEY",),
    base_url_variable="CO_API_URL",
    sdk_packages=("cohere",),
    history_key="messages",
)
