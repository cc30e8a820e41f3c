"""Mistral: its facts. Its stages are the modules beside this one."""

from .._facts import Facts
from ..openai_chat import FACTS as OPENAI_CHAT

FACTS = Facts(
    "mistral",
    finish_reasons={**OPENAI_CHAT.finish_reasons, "model_length": "length"},
    base_url="https://api.mistral.ai/v1",
    request_path="/chat/completions",
    path_end=None,  # OpenAI Chat's path: a request's path does not tell them apart
    auth_header=OPENAI_CHAT.auth_header,
    auth_value=OPENAI_CHAT.auth_value,
    key_variables=("MISTRAL_API_KEY",),
    base_url_variable="MISTRAL_BASE_URL",
    telemetry_name="mistral_ai",
    sdk_packages=("mistralai",),
    history_key="messages",
)
