"""Google Gemini: its facts. Its stages are the modules beside this one."""

from .._facts import Facts, Paths, Stages

#: The reasons a candidate or a prompt was blocked by a filter.
_FILTERS = (
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
)

FACTS = Facts(
    "gemini",
    finish_reasons={
        "STOP": "stop",
        "MAX_TOKENS": "length",
        **dict.fromkeys(_FILTERS, "content_filter"),  # finishReason, and a prompt's blockReason
        "MALFORMED_FUNCTION_CALL": "error",
        "UNEXPECTED_TOOL_CALL": "error",
        "TOO_MANY_TOOL_CALLS": "error",
        "FINISH_REASON_UNSPECIFIED": "other",
        "BLOCKED_REASON_UNSPECIFIED": "other",
        "LANGUAGE": "other",
        "OTHER": "other",
    },
    base_url="https://generativelanguage.googleapis.com",
    base_url_variable="GOOGLE_GEMINI_BASE_URL",
    # google-genai falls back to GOOGLE_API_KEY when GEMINI_API_KEY is unset.
    key_variables=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    auth="x-goog-api-key: {}",
    paths=Paths(
        "/v1beta/models/{model}:streamGenerateContent?alt=sse",
        end=":streamGenerateContent",
        models="/v1beta/models?pageSize=1000",
    ),
    telemetry_name="gcp.gemini",
    sdk_packages=("google",),
    model_classes={"pydantic_ai": "GoogleModel"},
    history_key="contents",
    call_state_back=("thoughtSignature",),
)

STAGES = Stages("GeminiDecoder", "GeminiEncoder", request=True, models=True)
