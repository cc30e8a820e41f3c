"""OpenAI Responses: its facts. Its stages are the modules beside this one."""

from .._facts import Facts

FACTS = Facts(
    "openai_responses",
    finish_reasons={
        "completed": "stop",
        "max_output_tokens": "length",  # from incomplete_details.reason
        "content_filter": "content_filter",
        "incomplete": "other",  # incomplete with no reason given
    },
    base_url="https://api.openai.com/v1",
    request_path="/responses",
    path_end="/responses",
    auth_header="Authorization",
    auth_value="Bearer {}",
    client_headers=("openai-organization", "openai-project", "openai-beta"),
    key_variables=("OPENAI_API_KEY",),
    base_url_variable="OPENAI_BASE_URL",
    telemetry_name="openai",
    sdk_packages=("openai",),
    model_classes={"pydantic_ai": "OpenAIResponsesModel"},
)
