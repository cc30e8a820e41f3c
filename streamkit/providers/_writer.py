"""What every writer of a client's answer shares: one stream (or body) written from values.

A writer turns the values another provider's stream was decoded to (``TextDelta``, ``ToolCall``,
``Thinking``, ``ResponseEnd``…) into the answer a client of its own format reads: SSE bytes as
they come (``values``), or the whole answer as a JSON body (``body``). It is what lets
``streamkit serve`` answer a client in one format from an upstream of another. Its ids, indexes
and sequence numbers are its own, numbered on from its first call; the text and arguments are
exactly the values'. An ``InvalidToolCall`` is never written: the proxy answers it upstream.

The stop reason a client reads is its own provider's (``stop_reason``, from its ``FACTS``).

A writer also writes the format's answers that are no model's: its model list, one model, and
a count of input tokens, and reads the list another server of its format answered
(``read_models``): the shape of each lives in one place, beside the answers'.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, Self

from .._errors import UsageError
from .._turn_types import ReasoningItem, Thinking
from .._types import Finish, ResponseEnd, TextDelta
from ._facts import Facts

__all__ = ("Model", "Writer", "created_at", "new_text", "reasoning_text", "stop_reason", "timestamp")


@dataclass(frozen=True, slots=True)
class Model:
    """One model of a model list, in no format's shape.

    Attributes:
        id: its name, as a request asks for it.
        created: when it was released (seconds since the epoch); 0 when not known.
        name: its name for people (Anthropic's ``display_name``), when one was given.
        owner: who serves it (OpenAI's ``owned_by``), when one was given.
    """

    id: str
    created: int = 0
    name: str | None = None
    owner: str | None = None


class Writer(ABC):
    """Writes one answer in a client's format from values, its start at the first ``values``.

    ``values`` may be called any number of times, each with the values that came since the
    last: the bytes are the same as from one call with all of them. A ``ResponseEnd`` ends the
    stream; a response continued by another (a bad call answered upstream) is written as one
    when its first ``ResponseEnd`` is not passed on.
    """

    #: The provider the client speaks: its stop reasons.
    facts: ClassVar[Facts]
    #: How the client's own response ids start (``msg_``, ``chatcmpl-``, ``resp_``).
    id_prefix: ClassVar[str]
    #: Whether the format carries several choices (OpenAI Chat's ``n``); else only choice 0 is written.
    choices: ClassVar[bool] = False

    def __init__(self, model: str, response_id: str | None = None, *, created: int | None = None) -> None:
        self.model = model
        self.response_id = response_id or f"{self.id_prefix}{secrets.token_hex(12)}"
        #: The answer's time (seconds since the epoch), where the format carries one.
        self.created = int(time.time()) if created is None else created
        self._token = hashlib.sha256(self.response_id.encode()).hexdigest()[:20]
        self._started = False
        self._ended = False
        self._calls = 0  # calls written: what a minted id is numbered by
        self._end: ResponseEnd | None = None  # the end written, for the final answer
        self._text: TextDelta | None = None  # the last delta of the open text block or item
        self.begin()

    @classmethod
    def model_info(cls, model: Model) -> dict[str, Any]:
        """One model, as the format's API describes it."""
        raise NotImplementedError(f"{cls.__name__} writes no model")

    @classmethod
    def model_list(cls, models: Sequence[Model]) -> dict[str, Any]:
        """The format's list of models: all of them, on one page."""
        raise NotImplementedError(f"{cls.__name__} writes no model list")

    @classmethod
    def read_models(cls, body: object) -> list[Model]:
        """The models of a list in the format's shape; an entry without an id is left out."""
        raise NotImplementedError(f"{cls.__name__} reads no model list")

    @classmethod
    def token_count(cls, tokens: int) -> dict[str, Any]:
        """The format's answer to a count of a request's input tokens."""
        raise NotImplementedError(f"{cls.__name__} writes no token count")

    @abstractmethod
    def begin(self) -> None:
        """A writer's own state, set up before anything is written."""

    def values(self, values: Sequence[object]) -> bytes:
        """The SSE bytes for ``values``, in order; the stream's start before the first."""
        out: list[bytes] = []
        if not self._started:
            self._started = True
            out += self.start()
        for value in values:
            if self._ended:
                raise UsageError(f"{type(value).__name__} after the ResponseEnd: the stream written has ended")
            if isinstance(value, ResponseEnd):
                self._ended = True
                out += self.end(value)
            elif self.choices or getattr(value, "choice", 0) == 0:
                out += self.write(value)
        return b"".join(out)

    def failed(self, kind: str, message: str, code: str) -> bytes | None:
        """The error that ends the stream after what was written, where the format's own ending
        needs what this writer wrote (its numbering, its response); ``None``: the encoder's
        ``error_event`` says it all."""
        return None

    def body(self, values: Sequence[object]) -> dict[str, Any]:
        """The same answer as a body that was not streamed, in the client's shape: written by a
        twin of this writer (the same ids), so that it holds exactly what the stream would."""
        twin = self.twin()
        twin.values(values)
        return twin.final()

    def twin(self) -> Self:
        return type(self)(self.model, self.response_id, created=self.created)

    def minted(self, prefix: str, number: int) -> str:
        """The id of the ``number``th item (call) the upstream gave none for, in the client's form:
        the same in the stream and the body of one writer."""
        return f"{prefix}{self._token}{number:04d}"

    @abstractmethod
    def start(self) -> list[bytes]:
        """The stream's start."""

    @abstractmethod
    def write(self, value: object) -> list[bytes]:
        """One value's events (none for a value the format has no place for)."""

    @abstractmethod
    def end(self, end: ResponseEnd) -> list[bytes]:
        """The stream's end: its stop reason and usage."""

    @abstractmethod
    def final(self) -> dict[str, Any]:
        """The answer written so far as one object (the body, Responses' final response)."""


def stop_reason(facts: Facts, finish: Finish, calls: bool) -> str:
    """The client's stop reason for ``finish``: the first of its reasons listed with it.

    ``tool_calls`` with no call written is a stop. A finish the client has no reason for, and
    ``other`` (a reason nobody knew, so none of the client's reasons with a meaning of its own
    — Anthropic's ``pause_turn`` says "send it back" — is true of it) is the plain stop's.
    """
    if finish == "tool_calls" and not calls:
        finish = "stop"
    listed = (reason for reason, its in facts.finish_reasons.items() if its == finish != "other")
    return next(listed, None) or next(reason for reason, its in facts.finish_reasons.items() if its == "stop")


def new_text(previous: TextDelta | None, delta: TextDelta) -> bool:
    """Whether ``delta`` starts a new text block (item) after ``previous``: none open, or the
    upstream's text moved to another block or item of its own."""
    return previous is None or (None not in (previous.index, delta.index) and previous.index != delta.index)


def reasoning_text(value: object) -> str | None:
    """The readable reasoning a value holds: a ``Thinking``'s text, a Responses reasoning item's
    summary; ``None`` for any other value."""
    if isinstance(value, Thinking):
        return value.text
    if isinstance(value, ReasoningItem):
        summary = value.item.get("summary")
        parts = summary if isinstance(summary, list) else []
        return "".join(str(part.get("text", "")) for part in parts if isinstance(part, dict))
    return None


def created_at(seconds: int) -> str:
    """A time in seconds since the epoch as RFC 3339, in UTC (``1970-01-01T00:00:00Z``)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def timestamp(value: object) -> int:
    """An RFC 3339 time as seconds since the epoch; 0 for anything else."""
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return 0
    return int((when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp())
