"""A client's request sent to an upstream of another format, and the answer written back in the
client's: any client on any model.

The request is read into streamkit's terms by the client format's folder (``ASKED``: system
text, the conversation's entries, the tools, the settings under OpenAI Chat's names) and written
as the upstream's by the same code the integrations send with (``_reemit._conversation.build``):
its history by the upstream's history writer, its settings at their places. A setting the
upstream has no place for is a ``RequestError`` naming it (the client gets a 400 in its own
shape); what the reader left out is named in the access log.

The answer is the upstream's stream, decoded by streamkit and written by the client format's
writer (``WRITERS``) from the values: text, reasoning, each call whole, the end with the stop
reason mapped. It goes through the same ``Session`` the same-format routes use, so the bad-call
policy is the same: a bad call is never written, and on ``tell`` the request is sent again in the
upstream's format with the turn and the call's error, the answer going on in the same response.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._reemit import request_toolset
from .._reemit._conversation import build, read_tools
from .._types import CustomToolCall, ResponseEnd, ToolCall
from .._validate import Toolset
from ..providers import ASKED, ENCODERS, FACTS, REQUESTS, WRITERS
from ..providers._encoder import Call, Encoder
from ..providers._facts import Facts
from ..providers._request import LEFT_OUT_SETTINGS, Asked, RequestError, merged, settings
from ..providers._writer import Writer
from ._formats import FORMATS
from ._fragments import ServeSession

__all__ = ("Translated", "TranslateSession", "Translating", "translate")


@dataclass(frozen=True)
class Translated:
    """A client's request as the upstream's: its body, path and the tools calls are checked against."""

    asked: Asked
    body: dict[str, Any]
    path: str
    toolset: Toolset | None


def translate(client: str, upstream: str, request: Mapping[str, Any]) -> Translated:
    """``request``, in ``client``'s format, as a streamed request of ``upstream``'s; what cannot be
    carried is a ``RequestError`` (or a ``UsageError`` for tools streamkit cannot read)."""
    asked = ASKED[client](request)
    writer = REQUESTS[upstream]
    given = asked.settings
    if asked.tool_choice == "none":  # no call to make: how many at once asks nothing
        given = {name: value for name, value in given.items() if name != "parallel_tool_calls"}
    fields, left = settings(writer, given)
    refused = [name for name in left if name not in LEFT_OUT_SETTINGS]
    if refused:
        raise RequestError(refused[0], f"the upstream's format ({upstream}) has no such setting")
    if left:
        asked = replace(asked, dropped=(*asked.dropped, *(LEFT_OUT_SETTINGS[name] for name in left)))
    extra = merged(fields, writer.choice(asked.tool_choice))
    tools = read_tools(asked.tools)
    written = build(upstream, asked.model, asked.entries, system=asked.system, tools=tools,
                    max_tokens=asked.limit, extra=extra, environ={})  # fmt: skip
    toolset = request_toolset({"tools": list(asked.tools)}) if asked.tools else None
    return Translated(asked, written.body, _path(upstream, asked.model), toolset)


def _path(upstream: str, model: str) -> str:
    """What the request goes to below the route's upstream: the same base URL (``.../v1``) as a
    route of the upstream's own format, so the path that format's route appends where it is
    served (Anthropic's ``/messages``, not its SDK's ``/v1/messages``)."""
    served = FORMATS.get(upstream)
    if served is not None:
        return served.upstream_path
    facts: Facts = FACTS[upstream]
    assert facts.paths.request is not None  # every provider with a request writer has one
    return facts.paths.request.format(model=model)


class Translating(Encoder):
    """The upstream's frames written as the client's stream: the values each frame gave, by the
    client's writer. ``values`` is set by the session before each frame (and at the body's end),
    and emptied once written; ``seen`` keeps them all for a client that asked for a body, not a
    stream.

    A response ends where the upstream's own encoder says its frame ends it, or where the values
    hold its end: a format whose last chunk carries the finish reason may give the end
    (``ResponseEnd``) only at the body's close, with no frame of its own (``rest``).
    """

    continues = True

    def __init__(
        self,
        upstream: type[Encoder],
        writer: Writer,
        client: type[Encoder],
        *,
        streamed: bool,
        back: tuple[str, ...] = (),
    ) -> None:
        self.framing = upstream.framing  # type: ignore[misc]  # the upstream's frames are read
        self.keep_invalid = False
        self.values: Sequence[object] = ()
        self.seen: list[object] = []
        self._upstream = upstream()
        self._writer, self._client, self._streamed = writer, client, streamed
        self._back = back  # the call state the upstream needs back, carried in each call's id

    def frame(self, frame: Any, calls: Sequence[Call]) -> list[bytes]:
        return [self._written(self.values)]

    def ends(self, frame: Any) -> bool:
        return self._upstream.ends(frame) or any(isinstance(value, ResponseEnd) for value in self.values)

    def unended(self, frame: Any, calls: Sequence[Call]) -> list[bytes]:
        return [self._written([value for value in self.values if not isinstance(value, ResponseEnd)])]

    def rest(self) -> bytes:
        """The values the body's end gave that no frame wrote (an end that came with no frame)."""
        return self._written(self.values) if self.values else b""

    def resume(self) -> None:
        """Nothing to drop: the writer writes values, and the next response's go on its stream."""

    def write(self, frame: Any) -> bytes:
        return b""  # after the provider's error: the client's stream has ended

    def provider_error(self, message: str) -> bytes:
        return self.ending("api_error", message, "upstream_error") if self._streamed else b""

    def ending(self, kind: str, message: str, code: str) -> bytes:
        return self._writer.failed(kind, message, code) or self._client.error_event(kind, message, code)

    def body(self) -> dict[str, Any]:
        """The whole answer as the client's body."""
        return self._writer.body(self.seen)

    def _written(self, values: Sequence[object]) -> bytes:
        self.values = ()
        values = [_kept(value, self._back) for value in values]
        self.seen += values
        return self._writer.values(values) if self._streamed else b""


class TranslateSession(ServeSession):
    """The proxy's session for a translated route: the upstream's stream read, the client's written."""

    def __init__(self, *args: Any, client: str, model: str, streamed: bool, **kwargs: Any) -> None:
        self._client, self._model, self._streamed = client, model, streamed
        super().__init__(*args, fragments=False, **kwargs)

    def _start(self, name: str | None) -> None:
        super()._start(name)
        if self.provider is not None:
            writer = WRITERS[self._client](self._model)
            self._encoder = Translating(
                ENCODERS[self.provider],
                writer,
                ENCODERS[self._client],
                streamed=self._streamed,
                back=FACTS[self.provider].call_state_back,
            )

    def _take(self, values: Sequence[object]) -> list[Call]:
        if isinstance(self._encoder, Translating):
            self._encoder.values = values
        return super()._take(values)

    def flush(self) -> bytes:
        out = super().flush()
        if self.stopped or not isinstance(getattr(self, "_encoder", None), Translating):
            return out
        return out + self.translating.rest()

    @property
    def translating(self) -> Translating:
        assert isinstance(self._encoder, Translating)
        return self._encoder


def _kept(value: object, keys: tuple[str, ...]) -> object:
    """A call with only the state its upstream needs back (``call_state_back``), which the
    client's writer carries in the call's id; any other value as it is."""
    if not isinstance(value, ToolCall | CustomToolCall) or not value.state:
        return value
    return replace(value, state={key: value.state[key] for key in keys if key in value.state})
