"""The latency benchmark's Google ADK row: an ``LlmAgent`` over ``StreamkitLlm``, run by a ``Runner``.

ADK runs a turn's calls after the model's whole response, together (see
docs/frameworks/google_adk.md). Then it asks the model again: the timed model answers that
request itself, with no request sent, so one request is timed, as for the other rows.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from google.adk.agents import LlmAgent, RunConfig
from google.adk.agents._streaming_mode import StreamingMode
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types
from pydantic import PrivateAttr

from streamkit import ToolCall, ToolResult
from streamkit.integrations.google_adk import StreamkitLlm
from tests.models import ANTHROPIC

__all__ = ("adk_runner",)


@dataclass
class _Watch:
    """When the model's first response ended."""

    clock: Callable[[], float]
    ended: list[float] = field(default_factory=list)


class _Timed(StreamkitLlm):
    """A ``StreamkitLlm`` that notes when its first response ended, and ends the run after the
    tools without a request."""

    _watch: _Watch = PrivateAttr(default_factory=lambda: _Watch(lambda: 0.0))

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        if self._watch.ended:  # the request after the tools: not timed
            usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=1, candidates_token_count=1)
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="Done.")]), usage_metadata=usage
            )
            return
        async for response in super().generate_content_async(llm_request, stream):
            if not response.partial:  # the whole turn: ADK runs its calls before asking for more
                self._watch.ended.append(self._watch.clock())
            yield response


async def adk_runner(
    client: httpx.AsyncClient, url: str, tools: dict[str, Any], clock: Callable[[], float]
) -> tuple[list[ToolResult], float]:
    """``Runner.run_async`` on the turn, streaming: ADK runs the tools after the whole response."""
    base = url.removesuffix("/v1/messages")
    model = _Timed(provider="anthropic", model=ANTHROPIC, base_url=base, api_key="k", http_async_client=client)
    model._watch = _Watch(clock)
    runner = InMemoryRunner(agent=LlmAgent(name="forecaster", model=model, tools=list(tools.values())), app_name="b")
    session = await runner.session_service.create_session(app_name="b", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="Weather in three cities")])
    config = RunConfig(streaming_mode=StreamingMode.SSE, max_llm_calls=2)
    calls: list[ToolCall] = []
    outputs: dict[str | None, Any] = {}
    try:
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message, run_config=config):
            for function in event.get_function_calls():
                calls.append(ToolCall(len(calls) + 1, function.id or "", function.name or "", function.args or {}))
            outputs.update((answer.id, answer.response) for answer in event.get_function_responses())
    finally:
        await runner.close()
    return [ToolResult(call, outputs[call.id]) for call in calls], model._watch.ended[0]  # a KeyError: a tool never ran
