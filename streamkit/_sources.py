"""Source items -> the pipeline's three inputs: bytes, frames, or decoded payloads. No IO.

A stream reaches streamkit in whatever form the caller already holds, and each item is
recognized by its shape alone, so no SDK is ever imported:

- ``bytes`` (and ``bytearray``, ``memoryview``): wire bytes, chunked anyhow;
- ``str``: text lines, as a text file or ``text.splitlines(keepends=True)`` gives them; a line
  that ends with a line end, any that ``str.splitlines`` knows (U+2028 among them), is taken as
  it is, so lines cut inside a JSON string join back into the bytes they were cut from; a line
  without one gets ``\n``, so ``""`` is the blank line that ends an SSE event. Lines whose ends
  were stripped where a JSON string holds U+2028, U+2029 or U+0085 (httpx's ``iter_lines()``
  cuts there) cannot be joined back without guessing which end was lost: pass bytes instead;
- an object with string ``data`` and ``event`` attributes (httpx-sse's ``ServerSentEvent``):
  one SSE frame; its default event name ``"message"`` means no name, as in the SSE spec;
- a ``dict``: one already-decoded payload, as sent on the wire;
- an SDK's event object: anything with ``model_dump`` (pydantic v2: openai, anthropic,
  google-genai, mistral, cohere), ``to_dict`` or ``to_json_dict``. It is dumped by its wire
  names (``by_alias``: google-genai's ``functionCall``, not ``function_call``), and fields that
  are unset are left out: what is left is what the wire sent, its ``null`` members included
  (Vertex's ``"nullValue": null`` is a value, not an absence). The raw chunk inside the events of
  openai's ``.stream()`` helper is taken, not the helper's snapshot, and the chunk inside
  mistralai's ``CompletionEvent(data=...)``.

The kind is fixed by the first item; a source that switches kinds is a usage error, never
guessed at. The official SDKs consume OpenAI Chat's ``data: [DONE]`` and end without yielding
it, so the end of a source of objects or dicts is read as the end of the bytes: the response
is whole when every choice finished (see ``providers.openai_chat``), and cut otherwise.
boto3's ``converse_stream()`` events (``{"contentBlockDelta": {...}}``) are unwrapped into the
event name and its payload for decoders framed as an AWS event stream, just as the binary
frames carry them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._errors import UsageError
from ._events import Frame
from ._values import value

__all__ = ("Payload", "SourceAdapter")


@value
class Payload:
    """One decoded event payload and its event name (``None`` when the provider sends none)."""

    payload: Any
    event: str | None


SourceInput = bytes | Frame | Payload


class SourceAdapter:
    """Turns the items of one source into pipeline inputs; keeps the kind fixed by the first item.

    Args:
        provider: the decoder's slug.
        framing: the decoder's framing (``"sse"``, ``"ndjson"``, ``"eventstream"``).
    """

    def __init__(self, provider: str, framing: str) -> None:
        self._provider = provider
        self._framing = framing
        self.kind: str | None = None  # fixed by the first item
        self.count = 0  # items read: a driver that reads bytes past ``adapt`` counts them here

    def adapt(self, item: object) -> SourceInput:
        self.count += 1
        if type(item) is bytes:  # the hot path
            kind, value = "bytes", item
        else:
            kind, convert = _classify(item, self.count)
            value = convert(item)
        if kind != self.kind:
            if self.kind is not None:
                raise UsageError(
                    f"item {self.count} of the source is {_KIND_NAMES[kind]}, but the source began with "
                    f"{_KIND_NAMES[self.kind]}: one source yields one kind of item"
                )
            self.kind = kind
        if kind in ("object", "dict"):
            if self._framing == "eventstream":
                return _unwrap_eventstream(value, self.count)
            return Payload(value, _event_name(value))
        return value

    @property
    def drains_after_end(self) -> bool:
        """Whether the rest of the source is read after the end marker: SDK objects only."""
        return self.kind == "object"


_KIND_NAMES = {
    "bytes": "bytes",
    "text": "text",
    "frame": "an SSE event",
    "dict": "a dict",
    "object": "an SDK object",
}


def _classify(item: object, number: int) -> tuple[str, Callable[[Any], Any]]:
    if isinstance(item, bytes | bytearray | memoryview):
        return "bytes", bytes
    if isinstance(item, str):
        return "text", _line
    if isinstance(item, Frame):
        return "frame", _same
    if isinstance(item, dict):
        return "dict", _same
    if isinstance(getattr(item, "data", None), str) and hasattr(item, "event"):
        return "frame", _sse_event
    for method, dump in _DUMPERS:
        if callable(getattr(item, method, None)):
            return "object", _raw_event(dump)
    raise UsageError(
        f"item {number} of the source is a {type(item).__module__}.{type(item).__qualname__}: a source yields "
        "bytes, text lines, SSE events, dicts, or SDK event objects (with model_dump, to_dict or to_json_dict)"
    )


def _same(item: Any) -> Any:
    return item


#: Every character ``str.splitlines`` ends a line at: a line that ends with one kept its end.
_LINE_ENDS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _line(text: str) -> bytes:
    if not text.endswith(_LINE_ENDS):
        text += "\n"
    return text.encode("utf-8")


def _sse_event(item: Any) -> Frame:
    event = item.event
    if event is not None and not isinstance(event, str):
        raise UsageError(f"an SSE event's name must be a string, got {type(event).__name__}")
    return Frame(None if event in ("", "message") else event, item.data)


def _model_dump(item: Any) -> Any:
    # ``warnings=False``: a gateway's value the SDK types otherwise (openai's ``arguments`` as an
    # object where the type says string) is dumped as received, not warned about.
    return item.model_dump(mode="json", by_alias=True, exclude_unset=True, warnings=False)


def _to_dict(item: Any) -> Any:
    return item.to_dict()


def _to_json_dict(item: Any) -> Any:
    return item.to_json_dict()


_DUMPERS: tuple[tuple[str, Callable[[Any], Any]], ...] = (
    ("model_dump", _model_dump),
    ("to_dict", _to_dict),
    ("to_json_dict", _to_json_dict),
)


def _raw_event(dump: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Dump the raw event an SDK's event object wraps, or else the object itself.

    openai's ``chat.completions.stream()`` helper yields each raw chunk wrapped in a
    ``ChunkEvent`` (``type == "chunk"``, with the whole snapshot beside it), and events derived
    from the chunks, which carry no ``choices`` and mean nothing more. mistralai yields each
    chunk as the one member of a ``CompletionEvent(data=...)``.
    """

    def unwrap(item: Any) -> Any:
        if getattr(item, "type", None) == "chunk":
            inner = getattr(item, "chunk", None)
            if inner is not None:
                return dump(inner)
        payload = dump(item)
        if isinstance(payload, dict) and len(payload) == 1 and isinstance(payload.get("data"), dict):
            return payload["data"]
        return payload

    return unwrap


def _event_name(payload: Any) -> str | None:
    kind = payload.get("type") if isinstance(payload, dict) else None
    return kind if isinstance(kind, str) else None


def _unwrap_eventstream(value: Any, number: int) -> Payload:
    # boto3 yields each event-stream message as {event type: payload}.
    if isinstance(value, dict) and len(value) == 1:
        ((name, payload),) = value.items()
        if isinstance(name, str):
            return Payload(payload, name)
    shown = sorted(value) if isinstance(value, dict) else type(value).__name__
    raise UsageError(f"item {number} of the source must be one {{event type: payload}} pair, got {shown}")
