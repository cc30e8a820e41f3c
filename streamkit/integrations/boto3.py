"""Bedrock through boto3: each tool call of ``converse_stream`` once, whole, checked: ``install``.

::

    client = boto3.client("bedrock-runtime")
    install(client)  # Strands Agents: install(BedrockModel(...).client)

boto3 sends through urllib3 and decodes the AWS event stream itself, so no HTTP transport can
sit under it; what its callers read is ``converse_stream(...)["stream"]``, an iterator of event
dicts (``{"contentBlockDelta": {...}}``). ``install`` registers a botocore event handler on the
client (``after-call.bedrock-runtime.ConverseStream``) that replaces that ``stream`` with a
``ToolCallStream`` over it: the same events, as botocore parsed them, except a tool call's.
Each client call's block (its ``contentBlockStart``, ``toolUse`` input fragments and
``contentBlockStop``) is held back and given at its stop, whole: the start as sent, one
``contentBlockDelta`` with all of the input as compact JSON, the stop; so a caller that joins
the fragments and parses them at the stop (Strands, pydantic-ai's Bedrock model, a loop of its
own) reads each call once, complete and valid.

A call that is not valid (cut off by ``max_tokens``, input that is not a JSON object, failing its
tool's schema given as ``tools``, a tool not offered) is left out with its block's events: it
goes to ``on_call`` and ``invalid_calls(response)``, and ``messageStop`` keeps the provider's
``stopReason``. Text, reasoning, server tools and ``metadata`` pass through as they came. An
exception event is raised by botocore itself (``EventStreamError``) after the calls completed
before it, the call it cut reported as cut off (to ``on_call`` and ``invalid_calls``); a stream
streamkit cannot decode (a limit passed, an event out of order) or one that ends with a call
still open raises botocore's ``ResponseStreamingError`` there, as a connection cut while reading
does, with streamkit's error as its cause.

For a loop of your own, ``streamkit.iter_tool_calls(response["stream"], "bedrock")`` reads the
same events into calls without ``install``.
"""

from __future__ import annotations

import functools
from collections.abc import Generator, Iterable, Iterator, Mapping
from typing import Any, cast
from urllib.parse import urlsplit

from botocore.exceptions import ResponseStreamingError

from .. import _observe
from .._assembler import Assembler
from .._errors import StreamError, UsageError
from .._foreign import translated
from .._limits import Limits
from .._reemit import OnCall, Options
from .._types import CallStarted, InvalidToolCall, Provider, ToolCall
from .._validate import Toolset
from ..providers import FACTS
from ..providers._encoder import dumps

__all__ = ("EVENT", "ToolCallStream", "install", "invalid_calls", "uninstall")

#: The botocore event ``install`` handles: a ConverseStream response, parsed, not yet read.
#: The provider whose SDK is botocore: the one whose stream boto3 decodes itself.
_PROVIDER = cast(Provider, next(slug for slug, facts in FACTS.items() if "botocore" in facts.sdk_packages))
EVENT = "after-call.bedrock-runtime.ConverseStream"
_HANDLER_ID = "streamkit.integrations.boto3"

Event = dict[str, Any]


def install(
    client: Any,
    *,
    tools: Toolset | Iterable[Any] | Mapping[str, Any] | None = None,
    on_call: OnCall | None = None,
    limits: Limits | None = None,
) -> None:
    """Give every ``converse_stream`` response of ``client`` (a ``bedrock-runtime`` client) a
    ``ToolCallStream``; installing again replaces the options.

    Args:
        tools: the request's tools (``toolConfig["tools"]``, or any format ``Toolset`` reads):
            each call is checked against its tool's schema.
        on_call: called with each ``ToolCall`` or ``InvalidToolCall`` the moment it completes.
        limits: the ``streamkit.Limits`` one response may reach.
    """
    service = getattr(getattr(getattr(client, "meta", None), "service_model", None), "service_name", None)
    if service != "bedrock-runtime":
        raise UsageError(f"install takes a boto3 'bedrock-runtime' client, got {type(client).__name__} ({service})")
    options = Options(None, tools, on_call, limits, asynchronous=False)

    def wrap(parsed: dict[str, Any], http_response: Any = None, **_: Any) -> None:
        if "stream" in parsed:
            parsed["stream"] = ToolCallStream(parsed["stream"], options, _answered(http_response))

    uninstall(client)
    client.meta.events.register(EVENT, wrap, unique_id=_HANDLER_ID)


def _answered(http_response: Any) -> _observe.Request | None:
    """What telemetry records of the request (its server), while telemetry is on."""
    if _observe.watcher() is None or http_response is None:
        return None
    url = urlsplit(http_response.url)
    return _observe.Request((), url.hostname, url.port)


def uninstall(client: Any) -> None:
    """Hand ``client``'s streams out as botocore parses them again."""
    client.meta.events.unregister(EVENT, unique_id=_HANDLER_ID)


def invalid_calls(response: Mapping[str, Any]) -> list[InvalidToolCall]:
    """The invalid calls left out of ``response["stream"]``: those read so far, all of them once
    the stream is read."""
    stream = response.get("stream")
    if not isinstance(stream, ToolCallStream):
        raise UsageError("this response's stream is not streamkit's: call install(client) before converse_stream")
    return list(stream.invalid_calls)


class ToolCallStream:
    """botocore's ConverseStream events, each client tool call given whole at its stop.

    An iterator, as botocore's ``EventStream`` is; ``close`` closes that stream too.

    Attributes:
        invalid_calls: the calls left out so far, in order.
    """

    def __init__(self, events: Iterable[Event], options: Options, request: _observe.Request | None = None) -> None:
        self._inner = events
        self._on_call = options.on_call
        # fragments: the pipeline names each call's block as it opens (CallStarted), so the
        # rule of which blocks are client calls lives in the decoder alone
        make = functools.partial(Assembler, _PROVIDER, tools=options.toolset, limits=options.limits, fragments=True)
        self._assembler = _observe.within(request, make)
        self._held: dict[int, list[Event]] = {}  # an open call's block index -> its events so far
        self.invalid_calls: list[InvalidToolCall] = []
        self._events = self._run()

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def close(self) -> None:
        self._events.close()
        self._close_inner()

    def _close_inner(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()

    def _run(self) -> Generator[Event, None, None]:
        assembler = self._assembler
        try:
            for event in self._events_read():
                yield from self._read(event, assembler.feed_payload(event))
                if assembler.error is not None:
                    raise assembler.error
            yield from self._read(None, assembler.flush())
        except StreamError as exc:
            self._read(None, list(exc.unfinished))  # the calls it cut: reported, never given
            raise ResponseStreamingError(error=exc) from exc
        finally:  # however it ends: botocore leaves the connection open when its stream raises
            self._close_inner()
            assembler.close()

    def _events_read(self) -> Iterator[Event]:
        """botocore's events; what its stream raises (an exception event, a read that failed)
        fails the stream as the pipeline's drivers fail it (``translated``: the span ends failed),
        the calls it cut are reported as the others are, and botocore's exception goes on."""
        events = iter(self._inner)
        while True:
            try:
                event = next(events)
            except StopIteration:
                return
            except Exception as exc:
                failure = translated(exc, self._assembler)
                self._read(None, list(getattr(failure, "unfinished", ())))
                raise
            yield event

    def _read(self, event: Event | None, values: list[Any]) -> list[Event]:
        """The events to give for ``event`` (``None``: the end), which made ``values``."""
        held = False
        for value in values:
            if type(value) is CallStarted:
                self._held[value.index] = []
        if event is not None:
            held = self._hold(event)
        out: list[Event] = []
        for value in values:
            if isinstance(value, ToolCall | InvalidToolCall):
                out += self._call(value)
        if event is not None and not held:
            out.append(event)
        return out

    def _hold(self, event: Event) -> bool:
        """Whether ``event`` belongs to an open call's block (and is given with the call)."""
        body = next(iter(event.values())) if isinstance(event, dict) and len(event) == 1 else None
        index = body.get("contentBlockIndex") if isinstance(body, dict) else None
        if index not in self._held:
            return False
        self._held[index].append(event)
        return True

    def _call(self, call: ToolCall | InvalidToolCall) -> list[Event]:
        held = self._held.pop(call.index, [])
        if self._on_call is not None:
            self._on_call(call)
        if isinstance(call, InvalidToolCall):
            self.invalid_calls.append(call)
            return []
        start, stop = held[0], held[-1]  # held from its contentBlockStart; a valid call ended at its stop
        delta = {"delta": {"toolUse": {"input": dumps(call.input)}}, "contentBlockIndex": call.index}
        return [start, {"contentBlockDelta": delta}, stop]
