"""Amazon Bedrock ConverseStream: its facts. Its stages are the modules beside this one."""

from .._facts import Facts, Stages
from ..anthropic import FACTS as ANTHROPIC

FACTS = Facts(
    "bedrock",
    finish_reasons={
        **ANTHROPIC.finish_reasons,  # Claude's, through Converse
        "guardrail_intervened": "content_filter",
        "content_filtered": "content_filter",
        "malformed_model_output": "error",
        "malformed_tool_use": "error",
    },
    signed=True,
    telemetry_name="aws.bedrock",
    sdk_packages=("botocore", "aiobotocore"),
    history_key="messages",
)

STAGES = Stages("BedrockDecoder")  # binary frames: boto3 decodes them, nothing writes them back
