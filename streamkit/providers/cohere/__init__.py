"""Cohere Chat v2: its facts. Its stages are the modules beside this one."""

from .._facts import BEARER, Facts, Paths, Stages

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
    base_url_variable="CO_API_URL",
    key_variables=("CO_API_KEY",),
    auth=BEARER,
    paths=Paths(end="/v2/chat"),
    sdk_packages=("cohere",),
    history_key="messages",
)

STAGES = Stages("CohereDecoder", "CohereEncoder")
