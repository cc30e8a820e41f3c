"""The limits that keep a hostile or broken stream from growing without bound.

Each limit has a ``DEFAULT_*`` constant, generous enough that no real response reaches it and
tight enough that memory stays bounded. ``Limits`` groups them; the pipeline hands each stage
the values it enforces. A stream that goes past ``max_argument_bytes``, ``max_open_calls``,
``max_calls``, ``max_choices`` or ``max_event_bytes`` stops with ``LimitExceededError`` naming the limit and its
value (the calls completed before are delivered, the open ones come with their raw text);
so does a turn whose state (reasoning, signatures, server tool input, usage) grows past
``max_turn_bytes``, counted by a ``TurnBudget`` that the stages holding such state share. A
call whose arguments nest deeper than ``max_depth`` is an ``InvalidToolCall`` of kind
``too_deep``: like any bad arguments, it is a value the model can be told about.

This module belongs to the vocabulary: every stage may import it, and it imports only
``_errors``.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, fields
from typing import Any

from ._errors import LimitExceededError, UsageError
from ._values import value

__all__ = (
    "DEFAULT_LIMITS",
    "DEFAULT_MAX_ARGUMENT_BYTES",
    "DEFAULT_MAX_CALLS",
    "DEFAULT_MAX_CHOICES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_OPEN_CALLS",
    "DEFAULT_MAX_TURN_BYTES",
    "EVENT_BYTES_PER_TOKEN",
    "KEY_BYTES",
    "MAX_DEPTH_CEILING",
    "MIN_EVENT_TOKENS",
    "Limits",
    "TurnBudget",
    "event_tokens",
    "held_size",
)

#: The largest argument text of one call, counted in characters (code points) as the fragments
#: arrive; for the ASCII text providers send, characters are bytes.
DEFAULT_MAX_ARGUMENT_BYTES = 8 * 1024 * 1024
#: The most calls open at once in one response (all choices together).
DEFAULT_MAX_OPEN_CALLS = 256
#: The most calls in one response, delivered or open.
DEFAULT_MAX_CALLS = 1024
#: The most choices in one response (OpenAI's ``n``) that carry anything: text, reasoning, calls
#: or a stop reason.
DEFAULT_MAX_CHOICES = 128
#: The deepest nesting of arrays and objects in one call's arguments (``{}`` is depth 1).
DEFAULT_MAX_DEPTH = 64
#: The highest ``max_depth`` accepted: every JSON reader and writer on the path (orjson, and the
#: standard library's exact fallback for big integers) handles this depth without recursing out.
MAX_DEPTH_CEILING = 512
#: The largest frame (an SSE event with all its lines, an NDJSON line) buffered before it ends.
DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024
#: An event's JSON may hold one token (a string, a bracket, a comma or a colon) per this many
#: bytes of ``max_event_bytes``, and ``MIN_EVENT_TOKENS`` whatever the limit. Reading JSON builds
#: an object per value, and a value of two or three bytes (``[],``) costs Python 60 to 90 bytes:
#: counted by tokens (at most 88 bytes a token, lists in lists), what an event's values hold stays
#: within 1.4 times the limit, whatever their shape.
EVENT_BYTES_PER_TOKEN = 64
MIN_EVENT_TOKENS = 4096
#: The most a response's turn state may hold at once: reasoning text and signatures, server tool
#: input and starts, usage, and the keys of its blocks (call arguments have their own limit).
DEFAULT_MAX_TURN_BYTES = 16 * 1024 * 1024
#: What one key of per-block state is counted as (the key, its entry, the block's own object).
KEY_BYTES = 128


@value
class Limits:
    """The limits for one response; every field is a positive integer.

    Attributes:
        max_argument_bytes: the largest argument text of one call, checked fragment by
            fragment, so a call is stopped as soon as it grows past it (characters of text;
            bytes for ASCII). A whole arguments value sent at once is bounded by
            ``max_event_bytes`` instead.
        max_open_calls: the most calls open at once.
        max_calls: the most calls in one response.
        max_choices: the most choices in one response that carry text, reasoning, calls or a
            stop reason: each one holds a little state, so their number is bounded too.
        max_depth: the deepest nesting of one call's arguments; deeper is ``too_deep``. At most
            ``MAX_DEPTH_CEILING`` (512).
        max_event_bytes: the largest frame buffered before its end arrives. It bounds what
            reading the frame's JSON builds too: at most one token (a string, a bracket, a
            comma or a colon) per ``EVENT_BYTES_PER_TOKEN`` (64) bytes of it, and at least
            ``MIN_EVENT_TOKENS`` (4096).
        max_turn_bytes: the most the turn's state beside the calls may hold at once: the text
            and signatures of reasoning blocks and the input of server tools until each block
            ends, each block's start and key (counted as ``KEY_BYTES`` for the key), and usage.
            Characters of text; other values by the size of their contents.
    """

    _: KW_ONLY
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES
    max_open_calls: int = DEFAULT_MAX_OPEN_CALLS
    max_calls: int = DEFAULT_MAX_CALLS
    max_choices: int = DEFAULT_MAX_CHOICES
    max_depth: int = DEFAULT_MAX_DEPTH
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    max_turn_bytes: int = DEFAULT_MAX_TURN_BYTES

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if type(value) is not int or value < 1:
                raise UsageError(f"Limits.{item.name} must be a positive integer, got {value!r}")
        if self.max_depth > MAX_DEPTH_CEILING:
            raise UsageError(f"Limits.max_depth must be at most {MAX_DEPTH_CEILING}, got {self.max_depth}")


DEFAULT_LIMITS = Limits()


class TurnBudget:
    """The bytes one response's turn state holds, counted against ``max_turn_bytes``.

    Every stage that keeps turn state until later (the turn stage its open blocks, the
    accumulator the usage) adds what it keeps and releases what it hands out, so the total is
    what is held at that moment. Going past the limit raises ``LimitExceededError``.
    """

    __slots__ = ("held", "limit")

    def __init__(self, limit: int = DEFAULT_MAX_TURN_BYTES) -> None:
        self.limit = limit
        self.held = 0

    def add(self, size: int, what: str, index: int | None = None) -> None:
        """Count ``size`` more bytes held for ``what`` (of block ``index``, when given)."""
        self.held += size
        if self.held > self.limit:
            of = "" if index is None else f" of block {index}"
            raise LimitExceededError(
                f"the turn's state grew to {self.held} bytes with {what}{of}", limit="max_turn_bytes", value=self.limit
            )

    def release(self, size: int) -> None:
        self.held -= size


def event_tokens(max_event_bytes: int) -> int:
    """The most JSON tokens one event may hold (``EVENT_BYTES_PER_TOKEN``). An event of no more
    characters than that cannot hold more, so only a longer one needs counting."""
    return max(MIN_EVENT_TOKENS, max_event_bytes // EVENT_BYTES_PER_TOKEN)


def held_size(value: Any, cap: int) -> int:
    """About how many bytes a JSON-like value holds: characters of text, 8 for any other value or
    entry. The walk stops once past ``cap`` (a value that contains itself never ends)."""
    total = 0
    stack = [value]
    while stack and total <= cap:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += 8 * len(item)
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            total += 8 * len(item)
            stack.extend(item)
        else:
            total += 8
    return total
