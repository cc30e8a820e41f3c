"""Google Gemini (and Vertex AI): calls as ``functionCall`` parts, results as ``functionResponse``.

The model turn holds the text part and one ``functionCall`` part per call, ``args`` an
object; all results of a turn go in one user turn. A ``functionResponse.response`` must be
an object: a result that is not one is wrapped as ``{"output": result}`` and an error as
``{"error": {"ok": false, "errors": [...]}}``, the keys the API documents for output and
error. An id is written only when the call has one (Gemini 2.5 gives none). A call Gemini could
not read (``MALFORMED_FUNCTION_CALL``) has no name, and a function part needs one: it has no part
in the model turn, and its errors go back as a text part. A result that holds
an image is its text as ``output`` and each image's bytes as ``inlineData`` in the
``functionResponse``'s own ``parts``, where Gemini 3 takes a tool's media (the guide's
multimodal function responses).
A turn another provider's client sends back keeps the signature its calls carry (the proxy
carries Gemini's in each call's id); a first call without one goes with the value Google
documents for a signature not known (``SKIP_SIGNATURE``), since Gemini 3 refuses a turn whose
first call has none.
Shapes: https://ai.google.dev/gemini-api/docs/function-calling
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..._errors import UsageError
from ..._turn_types import CallState, Parts, TextSignature, Thinking, Turn, TurnItem
from ..._types import CallRef, InvalidToolCall, JSONObject, TextDelta, ToolCall
from ...adapters._base import Call, Message, Ran, dumps, input_object, name_of, named, result_writers, text_and_calls
from ...adapters._history import TurnMessages, check_turn
from .request import inline

__all__ = ("assistant_message", "error_result_message", "tool_result_message", "tool_results_message", "turn_messages")


def assistant_message(calls: Iterable[Call], *, text: str | None = None) -> list[Message]:
    """The model turn that records ``calls`` (and the ``text`` before them) in the history.

    A call decoded from Gemini keeps its ``thoughtSignature`` (from its ``state``) on its part,
    as Gemini 3 requires of the calls of the current turn.
    """
    parts = text_and_calls(calls, text, _text, lambda call: _call_part(call, call.state.get("thoughtSignature")))
    parts = [part for part in parts if part]  # a call Gemini could not read has none
    return [{"role": "model", "parts": parts}] if parts else []


def _text(text: str) -> Message:
    return {"text": text}


def _call_part(call: Call, signature: str | None) -> Message:
    """A ``functionCall`` part, with the ``thoughtSignature`` the call came with; none (``{}``)
    for a call Gemini could not read, which has no name."""
    if not call.name:
        return {}
    part: Message = {"functionCall": _with_id(call, {"name": name_of(call), "args": input_object(call)})}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def _with_id(call: Call | CallRef, body: Message) -> Message:
    if call.id:
        body["id"] = call.id
    return body


def _result(call: Ran, result: Any) -> Message:
    if isinstance(result, Parts):
        return {"functionResponse": _with_id(call, {"name": name_of(call), **_media(call, result)})}
    response = result if isinstance(result, dict) else {"output": result}
    return {"functionResponse": _with_id(call, {"name": name_of(call), "response": response})}


def _media(call: Ran, result: Parts) -> Message:
    """A result's text as ``output`` and its images as ``inlineData`` parts; an image by URL is
    refused, as a user's is (``fileData`` needs a media type no client gives with a URL)."""
    if any(image.url is not None for image in result.images):  # said of the call, not of a user's request
        raise UsageError(
            f"the result of {named(call)} holds an image by URL, which Gemini takes only with its media type"
        )
    return {"response": {"output": result.text}, "parts": [inline(image) for image in result.images]}


def _error(call: Call | CallRef, payload: JSONObject) -> Message:
    """A bad call's errors as its ``functionResponse``; for a call Gemini could not read
    (``MALFORMED_FUNCTION_CALL``: no name, no part in the model turn), as a text part, since a
    function part needs its function's name, with the call as Gemini reported it (its
    ``finishMessage``): the history holds nothing else of it."""
    if not call.name:
        raw = call.raw if isinstance(call, InvalidToolCall) else None
        return {"text": dumps(payload if raw is None else {**payload, "call": raw})}
    return {"functionResponse": _with_id(call, {"name": name_of(call), "response": {"error": payload}})}


tool_results_message, tool_result_message, error_result_message = result_writers(
    _result, _error, into="parts", images=True
)


def turn_messages(turn: Turn) -> TurnMessages:
    """The model turn that records a whole ``Turn``, each ``thoughtSignature`` on its own part.

    For a turn decoded from Gemini: thought parts (``thought: true``, with their signature),
    text parts, and ``functionCall`` parts, each signature exactly where it came: on the call
    that carried it (with parallel calls, only the first has one, and none is added), on the
    thought, or on the text just before it (a signature that came with an empty text part after
    a call or another signature goes back as that empty part). Google requires the signatures
    back in the part they came with
    (https://ai.google.dev/gemini-api/docs/thought-signatures,
    https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures).
    Other providers' state is dropped, but a call's own ``thoughtSignature`` (Gemini's, carried
    back through a client of another format in the call's id); a turn whose first call has none
    has it signed by ``SKIP_SIGNATURE``.
    """
    checked = check_turn(turn)
    native = checked.provider == "gemini"
    parts: list[Message] = []
    dropped: list[TurnItem] = []
    text_open = False  # the last part is text that has no signature yet
    for item in checked.items:
        if isinstance(item, TextDelta):
            parts.append(_text(item.text))
            text_open = True
            continue
        if isinstance(item, ToolCall | InvalidToolCall):
            state = checked.call_state(item) if native else item.state  # another's: what the proxy carried
            part = _call_part(item, state.get("thoughtSignature"))
            parts += [part] if part else []
        elif native and isinstance(item, Thinking):
            thought: Message = {"text": item.text, "thought": True}
            if item.signature is not None:
                thought["thoughtSignature"] = item.signature
            parts.append(thought)
        elif native and isinstance(item, TextSignature):
            if text_open:
                parts[-1]["thoughtSignature"] = item.signature
            else:
                parts.append({"text": "", "thoughtSignature": item.signature})
        elif not (native and isinstance(item, CallState)):  # call state is written with its call
            dropped.append(item)
        text_open = False
    if not native:
        parts = _signed(parts)
    return TurnMessages([{"role": "model", "parts": parts}] if parts else [], dropped)


#: What Google documents to send as a call's ``thoughtSignature`` when the real one is not known
#: (a turn another model made, or one whose calls came without): Gemini 3 refuses a turn whose
#: first call has none (400, "Function call is missing a thought_signature"), and takes this.
SKIP_SIGNATURE = "skip_thought_signature_validator"


def _signed(parts: list[Message]) -> list[Message]:
    """``parts`` of a turn another provider made, its first ``functionCall`` part signed by
    ``SKIP_SIGNATURE`` where it has no signature of its own: the first call of a step is the one
    Gemini 3 checks (with parallel calls only the first has a signature), and refuses without
    one, whichever model made the turn."""
    first = next((part for part in parts if "functionCall" in part), None)
    if first is not None and "thoughtSignature" not in first:
        first["thoughtSignature"] = SKIP_SIGNATURE
    return parts
