"""The byte template of a call's plain fragments (or of a choice's text), and its patterns."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

import orjson

from .._events import ArgumentsBatch, ArgumentsDelta, Event, Payloads, TextReceived

__all__ = ("NEVER", "Template", "unread")

#: A pattern that matches nothing: the stand-in for a template not learned.
NEVER = re.compile(b"(?!)").fullmatch
#: A JSON string token that is not empty, by its quotes and escapes; orjson then judges it.
_TOKEN = rb'("(?=[^"])[^"\\\n]*(?:\\[^\n][^"\\\n]*)*")'


def unread(suffix: bytes) -> tuple[int, int] | None:
    """The quotes of the last string value in a fragment's suffix, when it is one of ASCII
    letters and digits: a candidate for a string the decoder never reads."""
    close = suffix.rfind(b'"')
    opening = suffix.rfind(b'"', 1, close)
    if opening < 1 or suffix[opening - 1 : opening] != b":":
        return None
    value = suffix[opening + 1 : close]
    return (opening, close) if not value or value.isalnum() else None


@lru_cache(maxsize=256)
def _shapes(
    before: int, suffix: bytes, hole: int | None
) -> tuple[Callable[..., re.Match[bytes] | None], Callable[[bytes], list[bytes]]]:
    """A template's two patterns, which depend on its prefix only by length: a response's id,
    time and model sit in the prefix, so every new response has new prefix bytes, and a pattern
    holding them would be compiled anew for each (some 350 µs). The prefix is checked apart.
    ``suffix`` comes with its unread string left out (its opening quote at ``hole``), so the
    cache holds one entry per shape, escaped once: compiled patterns, immutable, shared by
    every stream."""
    if hole is None:
        rest = re.escape(suffix[1:])
    else:
        rest = re.escape(suffix[1 : hole + 1]) + rb"[A-Za-z0-9]*" + re.escape(suffix[hole + 1 :])
    whole = re.compile(_TOKEN + rest).fullmatch
    lines = re.compile(b"^[^\n]{%d}" % before + _TOKEN + rest + b"$", re.MULTILINE).findall
    return whole, lines


class Template:
    """The bytes around a call's plain fragment string, learned from one payload and proved.

    ``prefix`` runs up to and with the string's opening quote, ``suffix`` from its closing
    quote on. A suffix may hold one *unread* string (OpenAI's ``obfuscation`` padding, which
    changes on every chunk), of any ASCII letters and digits. A payload matches when it starts
    with the prefix and the rest is one JSON string token followed by the suffix; the token is
    then parsed strictly, alone.
    """

    __slots__ = (
        "choice",
        "event",
        "hits",
        "index",
        "is_text",
        "lines",
        "match",
        "most",
        "prefix",
        "rows",
        "start",
        "suffix",
    )

    def __init__(
        self,
        event: str | None,
        prefix: bytes,
        suffix: bytes,
        hole: tuple[int, int] | None,
        sample: ArgumentsDelta | TextReceived,
        most: int,
    ) -> None:
        self.event = event
        #: The longest payload read here: a longer one goes to the general path, which reads
        #: it within ``max_event_bytes``'s bound (``Decoder.feed``).
        self.most = most
        self.prefix = prefix
        self.start = len(prefix) - 1  # the token's opening quote
        #: The suffix, when it holds no unread string: a payload of this shape then ends with it
        #: exactly, and its token is the bytes between the two (``HotRead.take``).
        self.suffix = suffix if hole is None else None
        shape = suffix if hole is None else suffix[: hole[0] + 1] + suffix[hole[1] :]
        # The same shape, one payload a line: a whole batch is read with one search, once its
        # every line is seen to start with the prefix (``rows``).
        self.match, self.lines = _shapes(self.start, shape, None if hole is None else hole[0])
        self.rows = b"\n" + prefix[:-1]
        #: Whether the string is a piece of text (``TextReceived``) rather than a call's fragment.
        self.is_text = type(sample) is TextReceived
        self.index = sample.index
        self.choice = sample.choice
        self.hits = 0

    def text(self, data: bytes) -> str | None:
        """The fragment text of a payload of this shape, its string token parsed strictly; None
        for any other payload, which the general path then reads (and reports, if bad)."""
        if len(data) > self.most or not data.startswith(self.prefix):
            return None
        found = self.match(data, self.start)
        if found is None:
            return None
        try:
            return orjson.loads(found.group(1))  # type: ignore[no-any-return]  # a token in quotes is a str
        except orjson.JSONDecodeError:
            return None

    def whole(self, batch: Payloads) -> list[str] | None:
        """The fragment texts of a batch whose every payload has this shape, or None.

        Payloads hold no line end, so joined one a line, each is matched by at most one
        search result; as many results as payloads means that every one matched. The tokens
        are then parsed strictly, as one JSON array.
        """
        names, data = batch.events, batch.data
        if (self.event is not None or names is not None) and (names is None or names.count(self.event) != len(names)):
            return None
        joined = b"\n".join(data)
        if len(joined) > self.most:
            return None  # read payload by payload, so no one read of JSON is larger than an event's
        # A payload holds no line end, nor does the prefix: each "\n" + prefix found starts a line.
        if not joined.startswith(self.prefix) or joined.count(self.rows) != len(data) - 1:
            return None
        tokens = self.lines(joined)
        if len(tokens) != len(data):
            return None
        try:
            texts: list[str] = orjson.loads(b"[" + b",".join(tokens) + b"]")
        except orjson.JSONDecodeError:
            return None
        return texts

    def batch(self, texts: list[str]) -> list[Event]:
        """The events of a run of payloads of this shape: one ``ArgumentsBatch`` of a call's
        fragments, or a ``TextReceived`` for each piece of text."""
        self.hits += len(texts)
        if self.is_text:
            return [TextReceived(text, self.choice, self.index) for text in texts]
        assert self.index is not None  # a call's fragment always has its index
        return [ArgumentsBatch(self.index, texts, self.choice)]
