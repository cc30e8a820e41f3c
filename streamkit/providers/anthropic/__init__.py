"""Anthropic Messages: its facts. Its stages are the modules beside this one."""

from .._facts import Facts, Paths, Stages

FACTS = Facts(
    "anthropic",
    finish_reasons={
        "end_turn": "stop",
        "stop_sequence": "stop",
        "tool_use": "tool_calls",
        "max_tokens": "length",
        "model_context_window_exceeded": "length",
        "refusal": "content_filter",
        "pause_turn": "other",  # a server tool paused the turn: send it back to continue
    },
    base_url="https://api.anthropic.com",
    base_url_variable="ANTHROPIC_BASE_URL",
    key_variables=("ANTHROPIC_API_KEY",),
    auth="x-api-key: {}",
    request_headers={"anthropic-version": "2023-06-01"},
    client_headers=("anthropic-version", "anthropic-beta"),
    paths=Paths("/v1/messages", end="/messages", models="/models?limit=1000", count="/messages/count_tokens"),
    sdk_packages=("anthropic",),
    model_classes={"pydantic_ai": "AnthropicModel"},
    signature_deltas=True,
    history_key="messages",
)

STAGES = Stages("AnthropicDecoder", "AnthropicEncoder", body=True, request=True, writer="AnthropicWriter", asked=True)
