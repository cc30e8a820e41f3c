"""Mistral: its facts. Its stages are the modules beside this one."""

from .._facts import Facts, Paths, Stages
from ..openai_chat import FACTS as OPENAI_CHAT

FACTS = Facts(
    "mistral",
    finish_reasons={**OPENAI_CHAT.finish_reasons, "model_length": "length"},
    base_url="https://api.mistral.ai/v1",
    base_url_variable="MISTRAL_BASE_URL",
    key_variables=("MISTRAL_API_KEY",),
    auth=OPENAI_CHAT.auth,
    # OpenAI Chat's path, without its ``end``: a request's path does not tell them apart.
    paths=Paths("/chat/completions"),
    telemetry_name="mistral_ai",
    sdk_packages=("mistralai",),
    history_key="messages",
)

STAGES = Stages("MistralDecoder", "MistralEncoder", request=True)
