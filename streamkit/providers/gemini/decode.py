"""Google Gemini API and Vertex AI stream (``streamGenerateContent?alt=sse``).

Each ``data:`` event is a whole ``GenerateContentResponse``. A ``functionCall`` part is one
whole call: its ``args`` object is the arguments (absent means none), and several calls may
share a chunk. The call's index is its position among the response's calls (per candidate);
its id is the part's ``id`` when non-empty, else ``None`` (Gemini 2.5 and Vertex give none, and
parallel calls may share a name, so the position is the only identity).

Vertex's streamed arguments (``streamFunctionCallArguments``) spread one call over parts: it
opens with ``{name, willContinue: true}``; ``partialArgs`` entries (a JSONPath and one typed
value; string pieces joined while ``willContinue``) build its object; bare
``{willContinue: true}`` parts do nothing; it ends with an empty ``functionCall: {}`` or with a
``partialArgs`` part whose ``functionCall.willContinue`` is not true. The object is delivered
then, whole. A piece that cannot be placed exactly is a protocol error. A streamed call cut
before its last piece is truncated, and its raw text is the object built so far, as JSON.
Its pieces count against ``max_argument_bytes`` as they arrive (each path and string, in
characters), as text fragments do; the candidates against ``max_choices``.

There is no per-call end marker beyond the part itself and no end-of-stream event: the last
chunk carries ``finishReason`` and then the connection closes, so ``flush()`` ends the response
when every candidate had a finish reason, and a stream without one is incomplete. Any
``finishReason`` cuts a streamed call still open (``MAX_TOKENS`` is the usual one);
``MALFORMED_FUNCTION_CALL`` means the model tried a call the API could not read, delivered as an
invalid call whose raw text is the provider's ``finishMessage``. An ``{"error": …}`` chunk is a
provider error. Gemini 3's closing ``{"text": ""}`` part is neither text nor a call, and thought
parts are not answer text.
Thought signatures are carried beside the calls, each tied to the part it came with, to be
sent back unchanged: on a ``functionCall`` part as that call's state (with parallel calls only
the first part has one, and none is ever invented), on a text part right after that part's
text (even an empty one, as Gemini 3 ends a stream with), on a thought part as that thought's
signature. Neighbouring thought parts make one ``Thinking``, closed by a signature or by the
next part that is not a thought.
Docs: https://ai.google.dev/gemini-api/docs/thought-signatures,
https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures,
https://ai.google.dev/api/generate-content,
https://docs.cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling#streaming-fc
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import _events as ev
from ..._types import TokenUsage
from .._base import Decoder, ErrorShape, count, field, optional, total, usage_received
from .._jsonpath import PathAssembler, PathError
from . import FACTS

__all__ = ("GeminiDecoder",)

_VALUE_KEYS = ("stringValue", "numberValue", "boolValue", "nullValue")


class _Candidate:
    """One candidate's calls: how many so far, and the streamed call still open."""

    __slots__ = ("calls", "finished", "open", "open_index", "thought", "thoughts")

    def __init__(self) -> None:
        self.thoughts = 0  # thought runs so far: their block keys
        self.thought: int | None = None  # the thought run still open
        self.calls = 0
        self.finished = False
        self.open: PathAssembler | None = None
        self.open_index = 0


class GeminiDecoder(Decoder):
    slug = "gemini"
    errors = ErrorShape(type_fields=("status", "code"))  # {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}
    finish_reasons = FACTS.finish_reasons
    payload_keys = ("candidates", "promptFeedback")
    value_paths = (("candidates", None, "content", "parts", None, "functionCall", "args"),)

    @classmethod
    def tokens(cls, usage: Mapping[str, Any]) -> TokenUsage:
        """Thoughts are counted apart from ``candidatesTokenCount``, and a tool's prompt apart from
        ``promptTokenCount``: added up here."""
        thoughts = count(usage, "thoughtsTokenCount")
        return TokenUsage(
            total(count(usage, "promptTokenCount"), count(usage, "toolUsePromptTokenCount")),
            total(count(usage, "candidatesTokenCount"), thoughts),
            count(usage, "cachedContentTokenCount"),
            thoughts,
        )

    def __init__(self, *, early_close: bool = False) -> None:
        super().__init__(early_close=early_close)
        self._candidates: dict[int, _Candidate] = {}
        self._blocked = False

    def feed_payload(self, payload: Any, event: str | None = None) -> list[ev.Event]:
        if not isinstance(payload, dict):
            raise self.error(f"a chunk must be a JSON object, got {type(payload).__name__}", event=event)
        error = payload.get("error")
        if error is not None:
            return [*self._cut_all(), self.errors.received(error)]
        out: list[ev.Event] = []
        candidates = optional(payload, "candidates", list, "$", self, event) or []
        for number, candidate in enumerate(candidates):
            self._candidate(candidate, number, out, event)
        feedback = optional(payload, "promptFeedback", dict, "$", self, event)
        if not candidates and feedback is not None and feedback.get("blockReason"):
            self._blocked = True  # the prompt was refused: no candidate will come
            out.append(ev.StopReceived(str(feedback["blockReason"]), cut_open_calls=True))
        out += usage_received(payload, "usageMetadata", "$", self, event)
        return out

    def flush(self) -> list[ev.Event]:
        states = self._candidates.values()
        if (states or self._blocked) and all(state.finished for state in states):
            return [ev.ResponseEnded()]
        return self._cut_all()  # no finishReason: the stream was cut, and the pipeline says so

    def _candidate(self, candidate: Any, number: int, out: list[ev.Event], event: str | None) -> None:
        where = f"$.candidates[{number}]"
        if not isinstance(candidate, dict):
            raise self.error(f"{where} must be an object", event=event)
        choice = optional(candidate, "index", int, where, self, event)
        choice = number if choice is None else choice
        state = self._candidates.get(choice)
        if state is None:
            if len(self._candidates) >= self.limits.max_choices:  # each holds a little state
                raise self.past_limit("max_choices", f"too many candidates (candidate {choice})")
            state = self._candidates[choice] = _Candidate()
        content = optional(candidate, "content", dict, where, self, event) or {}
        parts = optional(content, "parts", list, f"{where}.content", self, event) or []
        for position, part in enumerate(parts):
            path = f"{where}.content.parts[{position}]"
            if not isinstance(part, dict):
                raise self.error(f"{path} must be an object", event=event)
            signature = optional(part, "thoughtSignature", str, path, self, event)
            if part.get("thought") and "functionCall" not in part:
                self._thought(state, choice, optional(part, "text", str, path, self, event), signature, out)
                continue
            self._end_thought(state, choice, out)
            call = part.get("functionCall")
            if call is not None:
                if not isinstance(call, dict):
                    raise self.error(f"{path}.functionCall must be an object", event=event)
                if signature is not None:  # before the call: it ends with this part
                    index = state.open_index if state.open is not None else state.calls
                    out.append(ev.CallDetail(index, "thoughtSignature", signature, choice))
                self._call(state, choice, call, f"{path}.functionCall", out, event)
            else:
                text = optional(part, "text", str, path, self, event)
                if text:
                    out.append(ev.TextReceived(text, choice))
                if signature is not None:
                    out.append(ev.BlockReceived("text_signature", {"signature": signature}, choice))
        reason = optional(candidate, "finishReason", str, where, self, event)
        if reason is not None:
            self._end_thought(state, choice, out)
            self._finish(state, choice, reason, candidate, where, out, event)

    def _thought(
        self, state: _Candidate, choice: int, text: str | None, signature: str | None, out: list[ev.Event]
    ) -> None:
        if state.thought is None:
            state.thought = state.thoughts
            state.thoughts += 1
            out.append(ev.BlockStarted(state.thought, "thinking", {}, choice))
        if text:
            out.append(ev.BlockDelta(state.thought, "text", text, choice))
        if signature is not None:  # a signature closes the part it came with
            out.append(ev.BlockDelta(state.thought, "signature", signature, choice))
            self._end_thought(state, choice, out)

    def _end_thought(self, state: _Candidate, choice: int, out: list[ev.Event]) -> None:
        if state.thought is not None:
            out.append(ev.BlockEnded(state.thought, choice))
            state.thought = None

    def _call(
        self, state: _Candidate, choice: int, call: dict[str, Any], where: str, out: list[ev.Event], event: str | None
    ) -> None:
        name = optional(call, "name", str, where, self, event) or None
        partial = optional(call, "partialArgs", list, where, self, event)
        continues = optional(call, "willContinue", bool, where, self, event) or False
        if state.open is not None:
            if name is not None or "args" in call:
                raise self.error(
                    f"{where} starts a call while the streamed call at index {state.open_index} is open", event=event
                )
            self._pieces(state.open, partial or [], where, event, state.open_index)
            if not continues:  # an empty functionCall, or the last partialArgs part
                out += self._close(state.open, state.open_index, choice, where, event)
                state.open = None
            return
        if name is None and partial is None and "args" not in call:
            raise self.error(f"{where} has no name, and no streamed call is open", event=event)
        index = state.calls
        state.calls += 1
        call_id = optional(call, "id", str, where, self, event) or None
        if partial is None and not continues:
            out.append(ev.CallReceived(index, call_id, name, call.get("args"), choice))  # the usual whole call
            return
        if "args" in call:
            raise self.error(f"{where} has both args and streamed arguments", event=event)
        assembler = PathAssembler()
        self._pieces(assembler, partial or [], where, event, index)
        out.append(ev.CallOpened(index, call_id, name, choice))
        if continues:
            state.open, state.open_index = assembler, index
        else:
            out += self._close(assembler, index, choice, where, event)

    def _close(
        self, assembler: PathAssembler, index: int, choice: int, where: str, event: str | None
    ) -> list[ev.Event]:
        """The end of a streamed call: its object, whole, unless a string was promised more."""
        if assembler.open_path is not None:
            raise self.error(
                f"{where} ends the call while a string piece said more would follow", event=event, index=index
            )
        return [ev.ArgumentsValue(index, assembler.value, choice), ev.CallEnded(index, choice)]

    def _pieces(self, assembler: PathAssembler, pieces: list[Any], where: str, event: str | None, index: int) -> None:
        for number, piece in enumerate(pieces):
            path = f"{where}.partialArgs[{number}]"
            if not isinstance(piece, dict):
                raise self.error(f"{path} must be an object", event=event)
            json_path = field(piece, "jsonPath", str, path, self, event)
            keys = [key for key in _VALUE_KEYS if key in piece]
            if len(keys) != 1:
                raise self.error(f"{path} must have exactly one of {', '.join(_VALUE_KEYS)}", event=event)
            value = piece[keys[0]]
            if keys[0] == "nullValue":
                value = None  # JSON null, or the enum name "NULL_VALUE"
            elif not isinstance(value, (str, bool, int, float)):
                raise self.error(f"{path}.{keys[0]} must be a JSON scalar", event=event)
            try:
                assembler.add(json_path, value, continues=bool(piece.get("willContinue")))
            except PathError as exc:
                raise self.error(f"{path}: {exc}", event=event, index=index) from None
            if assembler.size > self.limits.max_argument_bytes:
                message = f"the streamed arguments grew to {assembler.size} characters"
                raise self.past_limit("max_argument_bytes", message, index=index)

    def _finish(
        self,
        state: _Candidate,
        choice: int,
        reason: str,
        candidate: dict[str, Any],
        where: str,
        out: list[ev.Event],
        event: str | None,
    ) -> None:
        state.finished = True
        out += self._cut(state, choice)
        if reason == "MALFORMED_FUNCTION_CALL":
            message = optional(candidate, "finishMessage", str, where, self, event) or ""
            index = state.calls
            state.calls += 1
            out += [ev.CallOpened(index, None, None, choice), ev.AnomalyNoted(index, "malformed_function_call", choice)]
            if message:
                out.append(ev.ArgumentsDelta(index, message, choice))
            out.append(ev.CallEnded(index, choice))
        # Calls here are whole parts or end with their own last piece: one still open was cut off.
        out.append(ev.StopReceived(reason, cut_open_calls=True, choice=choice))

    def _cut(self, state: _Candidate, choice: int) -> list[ev.Event]:
        """Hand the accumulator what a cut streamed call had, so its raw text shows it."""
        if state.open is None:
            return []
        value, state.open = state.open.value, None
        return [ev.ArgumentsValue(state.open_index, value, choice)]

    def _cut_all(self) -> list[ev.Event]:
        return [event for choice, state in self._candidates.items() for event in self._cut(state, choice)]
