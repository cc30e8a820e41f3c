"""OpenAI Responses: its facts. Its stages are the modules beside this one."""

from dataclasses import replace

from .._facts import Paths, Stages
from ..openai_chat import FACTS as OPENAI_CHAT

#: OpenAI's platform (base URL, key, headers, SDK) is OpenAI Chat's; its path and stop reasons are its own.
FACTS = replace(
    OPENAI_CHAT,
    slug="openai_responses",
    finish_reasons={
        "completed": "stop",
        "max_output_tokens": "length",  # from incomplete_details.reason
        "content_filter": "content_filter",
        "incomplete": "other",  # incomplete with no reason given
    },
    paths=Paths("/responses", end="/responses", models=OPENAI_CHAT.paths.models),
    model_classes={"pydantic_ai": "OpenAIResponsesModel"},
    reasoning_items=True,
    history_key="input",
)

STAGES = Stages(
    "OpenAIResponsesDecoder",
    "OpenAIResponsesEncoder",
    body=True,
    request=True,
    writer="OpenAIResponsesWriter",
    asked=True,
)
