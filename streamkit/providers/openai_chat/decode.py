"""OpenAI Chat Completions stream, and the OpenAI-compatible servers and gateways.

There is no per-call end event: a choice's ``finish_reason`` (whatever its value) ends all of
that choice's calls open when it arrives, and ``data: [DONE]`` ends the stream. Some servers
never send ``[DONE]`` (Cerebras): input that ends once every choice that carried anything has a
``finish_reason``, with nothing opened since, is a whole response; else it was cut. Calls are
keyed by (choice index, tool-call index), so ``n > 1`` works.

A choice's calls stream one after another (``call_order = "sequential"``): the accumulator takes
a call that a later call of its choice followed as complete, so a ``length`` finish truncates
only the call still being written. With ``early_close=True`` such a call is delivered when the
next one starts, once its arguments came (never before); a fragment for it after that is then a
protocol error, never appended.

Compatible servers bend the format; each rule below is recorded on the call as an anomaly
(the gateways' own documentation and issue trackers are the sources):

- ``index`` missing: a fragment with no id and no name continues the open call; one with a new
  id or name starts the next call (``index_missing``).
- A new non-empty id on an occupied index starts a new call (vLLM, SGLang, Ollama's ``/v1``
  send every parallel call at index 0) and ends the old one (``index_reused``).
- An id or name repeated on later fragments is set once (``id_repeated``, ``name_repeated``);
  ``""`` and ``"null"`` ids and ``""`` names are placeholders that never replace a value
  (``id_placeholder``, ``name_placeholder``: vLLM, Qwen, LM Studio, Mistral-hosted models).
- ``arguments`` as a JSON object rather than a string is taken whole (``arguments_object``).
- The full arguments re-sent after the deltas are recognized and dropped
  (``arguments_resent``), never glued into ``{...}{...}``.
- A second ``finish_reason`` for a choice ends only the calls opened since the first (DeepInfra
  and Z.ai send each parallel call whole in its own chunk, each with ``finish_reason``; Together
  sends ``tool_calls``, ``tool_calls``, ``stop``): each call is delivered once, the first reason
  is the stop reason, and the later ones are listed on the response (``stop_reason_repeated``).
- Chunks with empty ``choices`` (usage, Azure's prompt filter results) and choices without a
  ``delta`` (Azure's asynchronous filter annotations) carry no call data.

``delta.reasoning_content`` (DeepSeek's thinking mode, and compatible servers) is carried as the
choice's ``Thinking``, closed by the first content, call or finish of the choice: DeepSeek asks
for it back on the assistant message when the turn made a tool call.
Docs: https://api-docs.deepseek.com/guides/thinking_mode
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import _events as ev
from ..._types import CUTTING_FINISHES, TokenUsage
from .._base import Decoder, ErrorShape, count, optional
from . import FACTS

__all__ = ("OpenAIChatDecoder",)

_PLACEHOLDER_IDS = frozenset({"", "null"})
_NOTHING: list[ev.Event] = []


def _path(number: int, position: int | None = None) -> str:
    """The JSON path of a chunk's choice (and of its tool-call entry), built for an error only:
    a chunk read well formats none."""
    return f"$.choices[{number}]" + ("" if position is None else f".delta.tool_calls[{position}]")


class _Choice:
    """The calls of one choice: wire index -> the call now using it."""

    __slots__ = ("finished", "ids", "last", "names", "pending", "slots", "thinking", "thoughts", "top", "used")

    def __init__(self) -> None:
        self.thinking: int | None = None  # the open reasoning block
        self.thoughts = 0
        self.slots: dict[int, int] = {}  # wire index -> logical index of its current call
        self.ids: dict[int, str | None] = {}  # logical index -> call id
        self.names: dict[int, str | None] = {}
        self.pending = False  # a call opened since the choice's last finish_reason
        self.used: set[int] = set()
        self.top = 0  # the largest index used, once one is: kept, as finding it each time costs the square
        self.last: int | None = None
        self.finished = False

    def next_free(self, wanted: int) -> int:
        return wanted if wanted not in self.used else self.top + 1

    def use(self, index: int) -> None:
        self.top = max(self.top, index) if self.used else index
        self.used.add(index)

    @property
    def settled(self) -> bool:
        """Finished, with nothing opened since: the end of input cuts nothing off."""
        return self.finished and not self.pending and self.thinking is None


def _unindexed_slot(
    state: _Choice, ci: int, call_id: str | None, name: str | None, out: list[ev.Event]
) -> tuple[int, bool] | None:
    """The slot of an entry that has no index (and whether it starts a call): the open call it
    continues, or a new one; ``None`` when it names no call and none is open."""
    last = state.last
    continues = last is not None and (
        (call_id is None and name is None)
        or (call_id is not None and call_id == state.ids.get(last))
        or (call_id is None and name == state.names.get(last))
    )
    if continues and last is not None:
        out.append(ev.AnomalyNoted(last, "index_missing", ci))
        return last, False
    if call_id is None and name is None:
        return None
    if last is not None:
        out.append(ev.CallDisplaced(last, ci))
    index = state.next_free(0 if last is None else last + 1)
    out.append(ev.AnomalyNoted(index, "index_missing", ci))
    return index, True


class OpenAIChatDecoder(Decoder):
    slug = "openai_chat"
    supports_early_close = True
    call_order = "sequential"  # a choice's calls stream one after another: the accumulator's rule 9
    value_paths = (("choices", None, "delta", "tool_calls", None, "function", "arguments"),)  # a gateway's object
    done = "[DONE]"
    errors = ErrorShape(type_fields=("type", "code"))
    finish_reasons = FACTS.finish_reasons
    payload_keys = ("choices",)
    plain_fragments = True  # a continuation chunk is read without a change of state
    plain_text = True  # a text chunk after the choice's first, outside reasoning, changes no state

    @classmethod
    def tokens(cls, usage: Mapping[str, Any]) -> TokenUsage:
        cached = count(usage, "prompt_tokens_details", "cached_tokens")
        return TokenUsage(
            count(usage, "prompt_tokens"),
            count(usage, "completion_tokens"),
            cached if cached is not None else count(usage, "prompt_cache_hit_tokens"),  # DeepSeek
            count(usage, "completion_tokens_details", "reasoning_tokens"),
        )

    def __init__(self, *, early_close: bool = False) -> None:
        super().__init__(early_close=early_close)
        self._choices: dict[int, _Choice] = {}
        self._done = False

    def feed(self, frame: ev.Frame) -> list[ev.Event]:
        if self._done:
            return _NOTHING  # anything after [DONE] is ignored
        if frame.data == self.done:
            self._done = True
            return [ev.ResponseEnded()]
        return super().feed(frame)

    def flush(self) -> list[ev.Event]:
        if not self._done and self._choices and all(state.settled for state in self._choices.values()):
            self._done = True
            return [ev.ResponseEnded()]  # no [DONE], but every choice finished: the response is whole
        return _NOTHING

    def feed_payload(self, payload: Any, event: str | None = None) -> list[ev.Event]:
        return self._chunk(payload, event)

    def _chunk(self, payload: Any, event: str | None) -> list[ev.Event]:
        """The general path: any chunk, every shape checked."""
        if not isinstance(payload, dict):
            raise self.error(f"a chunk must be a JSON object, got {type(payload).__name__}", event=event)
        error = self.error_in(payload)
        if error is not None:
            return [error]  # before the choices: an error chunk's finish_reason proves nothing
        out: list[ev.Event] = []
        choices = payload.get("choices")
        if choices:
            if not isinstance(choices, list):
                raise self.error("$.choices must be a list", event=event)
            for number, choice in enumerate(choices):
                self._choice(choice, number, out, event)
        groq = payload.get("x_groq")  # Groq puts usage in x_groq
        usage = payload.get("usage") or (groq.get("usage") if isinstance(groq, dict) else None)
        if isinstance(usage, dict):
            out.append(ev.UsageReceived(usage))
        return out

    @classmethod
    def error_in(cls, payload: dict[str, Any]) -> ev.ErrorReceived | None:
        """The error a chunk carries, if it is an error chunk: its ``error``, or the chunk
        itself in vLLM's mid-stream shape (``"object": "error"``)."""
        error = payload.get("error")
        if isinstance(error, dict) or (isinstance(error, str) and error):
            return cls.errors.received(error)
        if payload.get("object") == "error":
            return cls.errors.received(payload)
        return None

    def _choice(self, choice: Any, number: int, out: list[ev.Event], event: str | None) -> None:
        if not isinstance(choice, dict):
            raise self.error(f"{_path(number)} must be an object", event=event)
        ci = choice.get("index", 0)
        if not isinstance(ci, int):
            raise self.error(f"{_path(number)}.index must be int", event=event)
        delta = choice.get("delta")
        state = self._choices.get(ci)
        if isinstance(delta, dict):
            reasoning = delta.get("reasoning_content")
            if reasoning is not None:
                reasoning = optional(delta, "reasoning_content", str, f"{_path(number)}.delta", self, event)
            if reasoning:
                state = self._state(ci)
                if state.thinking is None:
                    state.thinking, state.thoughts = state.thoughts, state.thoughts + 1
                    out.append(ev.BlockStarted(state.thinking, "thinking", {}, ci))
                out.append(ev.BlockDelta(state.thinking, "text", reasoning, ci))
            content = self._content(delta.get("content"), number, event)
            tool_calls = delta.get("tool_calls")
            if state is not None and state.thinking is not None and (content or tool_calls):
                out.append(ev.BlockEnded(state.thinking, ci))
                state.thinking = None
            if content:
                if state is None:
                    state = self._state(ci)  # a choice with text must finish too
                out.append(ev.TextReceived(content, ci))
            if tool_calls:
                if not isinstance(tool_calls, list):
                    raise self.error(f"{_path(number)}.delta.tool_calls must be a list", event=event)
                for position, entry in enumerate(tool_calls):
                    self._entry(ci, entry, (number, position), out, event)
        elif delta is not None:
            raise self.error(f"{_path(number)}.delta must be an object", event=event)
        reason = choice.get("finish_reason")
        if reason is not None and not isinstance(reason, str):
            raise self.error(
                f"{_path(number)}.finish_reason must be a string, got {type(reason).__name__}", event=event
            )
        if reason is None:
            return
        state = self._state(ci)
        if state.thinking is not None:
            out.append(ev.BlockEnded(state.thinking, ci))
            state.thinking = None
        # Every finish_reason goes on: the accumulator takes the first as the choice's end and
        # stop reason, and a later one ends only the calls opened since.
        state.finished = True
        state.pending = False
        out.append(ev.StopReceived(reason, self.finish_reasons.get(reason) in CUTTING_FINISHES, ci))

    def _content(self, content: Any, number: int, event: str | None) -> str | None:
        """The text in ``delta.content``: a string, or null (the same as ``""``)."""
        if content is None or isinstance(content, str):
            return content
        raise self.error(f"{_path(number)}.delta.content must be a string", event=event)

    def _state(self, ci: int) -> _Choice:
        """A choice's state, made only when an event for that choice follows, so that the
        accumulator's ``max_choices`` bounds how many there are."""
        state = self._choices.get(ci)
        if state is None:
            state = self._choices[ci] = _Choice()
        return state

    def _entry(self, ci: int, entry: Any, at: tuple[int, int], out: list[ev.Event], event: str | None) -> None:
        if not isinstance(entry, dict):
            raise self.error(f"{_path(*at)} must be an object", event=event)
        function = entry.get("function") or {}
        if not isinstance(function, dict):
            raise self.error(f"{_path(*at)}.function must be an object", event=event)
        call_id = entry.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise self.error(f"{_path(*at)}.id must be a string", event=event)
        id_placeholder = call_id in _PLACEHOLDER_IDS
        if id_placeholder:
            call_id = None
        name = function.get("name")
        if name is not None and not isinstance(name, str):
            raise self.error(f"{_path(*at)}.function.name must be a string", event=event)
        name_placeholder = name == ""
        name = name or None
        arguments = function.get("arguments")
        if call_id is None and name is None and arguments in (None, ""):
            return  # an entry that carries nothing (LM Studio sends such)
        state = self._state(ci)
        index, new = self._slot(state, ci, entry.get("index"), call_id, name, at, out, event)
        if id_placeholder:
            out.append(ev.AnomalyNoted(index, "id_placeholder", ci))
        if name_placeholder:
            out.append(ev.AnomalyNoted(index, "name_placeholder", ci))
        if new:
            state.use(index)
            state.pending = True
            state.ids[index] = call_id
            state.names[index] = name
            state.last = index
            out.append(ev.CallOpened(index, call_id, name, ci))
        elif call_id is not None or name is not None:
            out.append(ev.CallOpened(index, call_id, name, ci))  # the accumulator sets them once
            state.ids[index] = state.ids[index] or call_id
            state.names[index] = state.names[index] or name
        if isinstance(arguments, str):
            if arguments:
                repeat = not new and (call_id is not None or name is not None)
                out.append((ev.ArgumentsRepeated if repeat else ev.ArgumentsDelta)(index, arguments, ci))
        elif arguments is not None:
            out.append(ev.ArgumentsValue(index, arguments, ci))
            out.append(ev.AnomalyNoted(index, "arguments_object", ci))

    def _slot(
        self,
        state: _Choice,
        ci: int,
        wire: Any,
        call_id: str | None,
        name: str | None,
        at: tuple[int, int],
        out: list[ev.Event],
        event: str | None,
    ) -> tuple[int, bool]:
        """Which call this entry belongs to, and whether it starts that call."""
        if wire is None:
            slot = _unindexed_slot(state, ci, call_id, name, out)
            if slot is None:
                raise self.error(f"{_path(*at)} has no index, id or name and no call is open", event=event)
            return slot
        if not isinstance(wire, int) or isinstance(wire, bool):
            raise self.error(f"{_path(*at)}.index must be int, got {type(wire).__name__}", event=event)
        index = state.slots.get(wire)
        if index is None:
            index = state.next_free(wire)
            state.slots[wire] = index
            if index != wire:
                out.append(ev.AnomalyNoted(index, "index_reused", ci))
            return index, True
        known = state.ids.get(index)
        if call_id is not None and known is not None and call_id != known:
            # A new id on an occupied index: a new call (vLLM, SGLang, Ollama /v1, Gemini proxies).
            out.append(ev.CallDisplaced(index, ci))
            fresh = state.next_free(wire)
            state.slots[wire] = fresh
            out.append(ev.AnomalyNoted(fresh, "index_reused", ci))
            return fresh, True
        return index, False
