"""OpenTelemetry for streamed tool calls: a span per stream, an event per call, ``execute_tool``
spans from ``run_tools``, and two histograms. Off unless ``enable`` is called.

Install the extra (``pip install 'streamkit-toolcalls[otel]'``, which needs only
``opentelemetry-api``) and call ``streamkit.telemetry.enable()``; the application's own SDK
setup (``TracerProvider``, ``MeterProvider``, exporters) decides where the data goes. Until
then nothing here is imported and a stream reads no clock for it.

The names follow the OpenTelemetry GenAI semantic conventions where they define one
(``gen_ai.operation.name``, ``gen_ai.provider.name``, ``gen_ai.request.stream``,
``gen_ai.response.time_to_first_chunk``, ``gen_ai.response.finish_reasons``,
``gen_ai.usage.*``, ``gen_ai.tool.*``, ``error.type``); what they do not define (a call inside a
stream, its outcome, its raw text) is under ``streamkit.``. The raw text of a call and the
arguments and result of a tool are recorded only with ``capture_content=True``, scrubbed of the
request's secrets and of those given to ``enable``.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Iterable, Sequence
from typing import Any, TypeVar

try:
    from opentelemetry import metrics, trace
    from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode
except ModuleNotFoundError as exc:  # the one hint a user needs, not a bare import error
    if not (exc.name or "").startswith("opentelemetry"):
        raise
    raise ModuleNotFoundError(
        "streamkit.telemetry needs OpenTelemetry's API, which is not installed: "
        "pip install 'streamkit-toolcalls[otel]'",
        name=exc.name,
    ) from None

from . import _observe, _redact
from ._errors import StreamkitError
from ._types import Call, CallTimes, CustomToolCall, InvalidToolCall, ResponseEnd, ToolCall, ToolResult
from .providers import FACTS

__all__ = (
    "CALL_EVENT",
    "FIRST_CALL_METRIC",
    "PROVIDER_NAMES",
    "STREAMING_METRIC",
    "TIME_TO_FIRST_CHUNK_METRIC",
    "disable",
    "enable",
    "enabled",
)

#: ``gen_ai.provider.name`` for each provider slug, from its facts: the conventions' well-known
#: values, and the slug itself for a provider they do not list (Ollama).
PROVIDER_NAMES = {slug: facts.telemetry_name for slug, facts in FACTS.items()}

#: The span event each call adds to its stream's span, at its end marker.
CALL_EVENT = "streamkit.tool_call"
#: Seconds from the start of a stream to its first completed call (valid or not).
FIRST_CALL_METRIC = "streamkit.client.time_to_first_tool_call"
#: Seconds from a call's first fragment to its end marker.
STREAMING_METRIC = "streamkit.tool_call.streaming_duration"
#: The conventions' own histogram: seconds from the start of a stream to its first bytes.
TIME_TO_FIRST_CHUNK_METRIC = "gen_ai.client.operation.time_to_first_chunk"

T = TypeVar("T")

_SCOPE = "streamkit"
#: What a failed span says of a streamkit error beside its class, whatever ``capture_content``
#: says: the fields that hold a number or one of streamkit's own names, never text the stream
#: or the caller gave (its message, an excerpt, the provider's error text).
_ERROR_FIELDS = (
    ("streamkit.error.offset", "offset"),  # FramingError: the byte
    ("streamkit.error.index", "index"),  # the call index
    ("streamkit.error.state", "state"),  # the call's or block's state in its table
    ("streamkit.error.limit", "limit"),  # LimitExceededError: the limit's name and value
    ("streamkit.error.limit_value", "value"),
    ("http.response.status_code", "status_code"),  # HTTPStatusError
)
#: Calls remembered for their ``execute_tool`` links, the oldest forgotten first: each costs
#: about 600 bytes (its ``CallTimes``, the entry, and its stream's span context when it is the
#: stream's only call), so the whole at most about 2.4 MiB, whatever the calls' arguments.
_LINKS_KEPT = 4096


def enable(
    tracer_provider: trace.TracerProvider | None = None,
    meter_provider: metrics.MeterProvider | None = None,
    *,
    capture_content: bool = False,
    secrets: Iterable[str] = (),
) -> None:
    """Record every stream read from now on (the global providers unless given others).

    Args:
        tracer_provider, meter_provider: where spans and measurements go; OpenTelemetry's
            global ones when ``None``.
        capture_content: also record a call's raw text (``streamkit.tool_call.raw``) and each
            tool's arguments and result (``gen_ai.tool.call.arguments``, ``.result``).
        secrets: strings scrubbed from that content, beside the request's own.
    """
    from . import __version__

    tracer = trace.get_tracer(_SCOPE, __version__, tracer_provider)
    meter = metrics.get_meter(_SCOPE, __version__, meter_provider=meter_provider)
    _observe.install(_Telemetry(tracer, meter, capture_content=capture_content, secrets=tuple(secrets)))


def disable() -> None:
    """Stop recording: the streams made from now on cost nothing again."""
    _observe.install(None)


def enabled() -> bool:
    return _observe.watcher() is not None


class _Telemetry:
    """The ``_observe.Watcher`` that ``enable`` installs."""

    def __init__(self, tracer: trace.Tracer, meter: metrics.Meter, *, capture_content: bool, secrets: tuple[str, ...]):
        self.tracer = tracer
        self.capture = capture_content
        self.secrets = secrets
        self.first_chunk = meter.create_histogram(
            TIME_TO_FIRST_CHUNK_METRIC, unit="s", description="Time to the first bytes of a streamed response."
        )
        self.first_call = meter.create_histogram(
            FIRST_CALL_METRIC, unit="s", description="Time from the start of a stream to its first completed tool call."
        )
        self.streaming = meter.create_histogram(
            STREAMING_METRIC, unit="s", description="Time from a tool call's first fragment to its end marker."
        )
        #: The span of each call recently delivered, for its ``execute_tool`` span's link: keyed by
        #: the identity of the call's ``CallTimes`` (each call gets its own; a copy of the call made
        #: with ``replace`` keeps it), which is held so that the identity is never reused. Never the
        #: call itself, whose arguments would outlive its stream.
        self.links: OrderedDict[int, tuple[CallTimes, SpanContext]] = OrderedDict()

    def stream(self, provider: str, request: _observe.Request | None) -> _Stream:
        return _Stream(self, provider, request)

    def remember(self, call: ToolCall | CustomToolCall, context: SpanContext) -> None:
        times = call.times
        if times is None:  # a call made by hand after the stream: never delivered, never linked
            return
        self.links[id(times)] = (times, context)
        if len(self.links) > _LINKS_KEPT:
            self.links.popitem(last=False)

    def link_of(self, call: ToolCall | CustomToolCall) -> list[Link]:
        held = None if call.times is None else self.links.get(id(call.times))
        if held is None or held[0] is not call.times:
            return []
        return [Link(held[1], {"gen_ai.tool.call.id": call.id or ""})]

    async def tool(self, call: ToolCall | CustomToolCall, run: Awaitable[T]) -> T:
        """``await run`` in an ``execute_tool`` span: an error result or an exception marks it failed."""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.type": "function",
        }
        if call.id is not None:
            attributes["gen_ai.tool.call.id"] = call.id
        if self.capture:
            attributes["gen_ai.tool.call.arguments"] = self.scrub(_json(call.input), ())
        name = f"execute_tool {call.name}"
        with self.tracer.start_as_current_span(
            name,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=self.link_of(call),
            record_exception=False,  # its message may quote the arguments: ``failed`` says what it may
            set_status_on_exception=False,
        ) as span:
            try:
                result = await run
            except BaseException as exc:
                if self.capture:
                    span.record_exception(exc, {"exception.message": self.scrub(str(exc), ())})
                self.failed(span, exc, f"{type(exc).__name__}: {exc}", ())
                raise
            if not isinstance(result, ToolResult):
                if self.capture:
                    span.set_attribute("gen_ai.tool.call.result", self.scrub(_json(result), ()))
            elif result.error is not None:
                kind = type(result.exception).__qualname__ if result.exception is not None else "tool_error"
                span.set_attribute("error.type", kind)
                span.set_status(Status(StatusCode.ERROR, self.content(_first_message(result.error), ())))
            elif self.capture:
                span.set_attribute("gen_ai.tool.call.result", self.scrub(_json(result.output), ()))
        return result

    def failed(self, span: trace.Span, error: BaseException, message: str, secrets: Sequence[str]) -> None:
        """Mark ``span`` failed by ``error``: its class and the fields of it that hold no content
        (``_ERROR_FIELDS``); its message, which may quote what the stream or the tool was given,
        only with ``capture_content``, scrubbed."""
        span.set_attribute("error.type", type(error).__qualname__)
        if isinstance(error, StreamkitError):
            for attribute, name in _ERROR_FIELDS:
                value = getattr(error, name, None)
                if isinstance(value, int | str) and not isinstance(value, bool):
                    span.set_attribute(attribute, value)
        span.set_status(Status(StatusCode.ERROR, self.content(message, secrets)))

    def content(self, text: str, secrets: Sequence[str]) -> str | None:
        """``text`` scrubbed, for a span, with ``capture_content``; else nothing."""
        return self.scrub(text, secrets) if self.capture else None

    def scrub(self, text: str, secrets: Sequence[str]) -> str:
        every = (*self.secrets, *secrets)
        return _redact.scrub(text, every) if every else text


class _Stream:
    """One stream's span, from the watch's making to its end, failure or close."""

    def __init__(self, telemetry: _Telemetry, provider: str, request: _observe.Request | None) -> None:
        self.telemetry = telemetry
        self.provider = PROVIDER_NAMES.get(provider, provider)
        self.secrets = () if request is None else request.secrets
        self.started = time.time_ns()
        self.first_call_seen = False
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.request.stream": True,
            "streamkit.provider": provider,
        }
        if request is not None and request.address is not None:
            attributes["server.address"] = request.address
            if request.port is not None:
                attributes["server.port"] = request.port
        self.span: trace.Span | None = telemetry.tracer.start_span(
            "chat", kind=SpanKind.CLIENT, attributes=attributes, start_time=self.started
        )
        self.metric_attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": self.provider}

    def first_input(self) -> None:
        seconds = (time.time_ns() - self.started) / 1e9
        if self.span is not None:
            self.span.set_attribute("gen_ai.response.time_to_first_chunk", seconds)
        self.telemetry.first_chunk.record(seconds, self.metric_attributes)

    def call(self, call: Call) -> None:
        outcome = "invalid" if isinstance(call, InvalidToolCall) else "valid"
        if isinstance(call, InvalidToolCall) and call.truncated:
            outcome = "cut"
        self._event(call, outcome)
        if not self.first_call_seen and call.times is not None and outcome != "cut":
            self.first_call_seen = True
            self.telemetry.first_call.record((call.times.delivered - self.started) / 1e9, self.metric_attributes)
        if self.span is not None and not isinstance(call, InvalidToolCall):  # never run: never linked
            self.telemetry.remember(call, self.span.get_span_context())

    def end(self, end: ResponseEnd) -> None:
        span = self.span
        if span is None:
            return
        span.set_attribute("gen_ai.response.finish_reasons", [end.stop_reason or end.finish])
        span.set_attribute("streamkit.finish", end.finish)
        tokens = end.tokens
        if tokens is not None:
            for name, value in (
                ("gen_ai.usage.input_tokens", tokens.input_tokens),
                ("gen_ai.usage.output_tokens", tokens.output_tokens),
                ("gen_ai.usage.cache_read.input_tokens", tokens.cache_read_tokens),
                ("gen_ai.usage.reasoning.output_tokens", tokens.reasoning_tokens),
            ):
                if value is not None:
                    span.set_attribute(name, value)
        self._close()

    def fail(self, error: BaseException, unfinished: Sequence[InvalidToolCall]) -> None:
        for call in unfinished:
            self._event(call, "cut")
        span = self.span
        if span is None:
            return
        self.telemetry.failed(span, error, str(error), self.secrets)
        self._close()

    def close(self) -> None:
        """The reader stopped before the end: the span ends as it is, marked so."""
        if self.span is not None:
            self.span.set_attribute("streamkit.abandoned", True)
            self._close()

    def _close(self) -> None:
        assert self.span is not None
        self.span.end()
        self.span = None

    def _event(self, call: Call, outcome: str) -> None:
        attributes: dict[str, Any] = {
            "streamkit.tool_call.index": call.index,
            "streamkit.tool_call.choice": call.choice,
            "streamkit.tool_call.outcome": outcome,
        }
        if call.id is not None:
            attributes["gen_ai.tool.call.id"] = call.id
        if call.name is not None:
            attributes["gen_ai.tool.name"] = call.name
        if isinstance(call, InvalidToolCall):
            attributes["streamkit.tool_call.issues"] = [issue.kind for issue in call.errors]
            if self.telemetry.capture:
                attributes["streamkit.tool_call.raw"] = self.telemetry.scrub(call.raw, self.secrets)
        elif self.telemetry.capture:
            attributes["gen_ai.tool.call.arguments"] = self.telemetry.scrub(_json(call.input), self.secrets)
        times = call.times
        at = None
        if times is not None:
            at = times.end_marker
            attributes["streamkit.tool_call.first_fragment_time"] = times.first_fragment
            attributes["streamkit.tool_call.end_marker_time"] = times.end_marker
            attributes["streamkit.tool_call.delivered_time"] = times.delivered
            streaming = {**self.metric_attributes, "streamkit.tool_call.outcome": outcome}
            if call.name is not None:
                streaming["gen_ai.tool.name"] = call.name
            self.telemetry.streaming.record((times.end_marker - times.first_fragment) / 1e9, streaming)
        if self.span is not None:
            self.span.add_event(CALL_EVENT, attributes, timestamp=at)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def _first_message(error: dict[str, Any]) -> str:
    errors = error.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], dict):
        return str(errors[0].get("message", ""))
    return ""
