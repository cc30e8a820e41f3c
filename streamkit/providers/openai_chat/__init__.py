"""OpenAI Chat Completions: its facts. Its stages are the modules beside this one."""

from .._facts import BEARER, Facts, Paths, Stages

FACTS = Facts(
    "openai_chat",
    finish_reasons={
        "stop": "stop",
        "tool_calls": "tool_calls",
        "function_call": "tool_calls",  # the deprecated single-function form
        "length": "length",
        "content_filter": "content_filter",
        "error": "error",  # OpenRouter and other gateways
        "insufficient_system_resource": "error",  # DeepSeek
    },
    base_url="https://api.openai.com/v1",
    base_url_variable="OPENAI_BASE_URL",
    key_variables=("OPENAI_API_KEY",),
    auth=BEARER,
    client_headers=("openai-organization", "openai-project", "openai-beta"),
    paths=Paths("/chat/completions", end="/chat/completions", models="/models"),
    telemetry_name="openai",
    sdk_packages=("openai",),
    model_classes={"pydantic_ai": "OpenAIChatModel"},
    history_key="messages",
)

STAGES = Stages(
    "OpenAIChatDecoder",
    "OpenAIChatEncoder",
    body=True,
    request=True,
    writer="OpenAIChatWriter",
    asked=True,
    messages=True,
)
