"""Cutting a stream into frames: the framers' base and the rule every reader of bytes shares.

The rule: when a read turns out bad after part of it was finished (frames, messages, values),
the finished part is returned and the error is kept and raised by the next call. So how the
bytes were chunked never changes the outcome, nothing finished is lost to an error, and bad
bytes after the provider's end-of-stream marker are never read. ``Deferred`` holds it once;
the text framers (``Framer``), the event-stream framer and the ``Assembler`` each keep one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import ClassVar, TypeVar

from ._errors import StreamError
from ._events import Frame, Payloads

__all__ = ("Deferred", "Flushed", "Framer")

A = TypeVar("A")
T = TypeVar("T")


class Deferred:
    """The error a read found after finishing part of it, raised by the next call.

    ``noted`` is called with each error as it is caught, and what it returns is kept (the
    ``Assembler`` adds what the stream knows: the provider, the calls left open).
    """

    __slots__ = ("_noted", "failure")

    def __init__(self, noted: Callable[[StreamError], StreamError] | None = None) -> None:
        self.failure: StreamError | None = None
        self._noted = noted

    def check(self) -> None:
        """Raise the kept error, if there is one."""
        if self.failure is not None:
            raise self.failure

    def run(self, step: Callable[[A, list[T]], None], arg: A) -> list[T]:
        """What ``step(arg, out)`` appended to ``out``; its error raised now if it appended
        nothing, else by the next call."""
        if self.failure is not None:
            raise self.failure
        out: list[T] = []
        try:
            step(arg, out)
        except StreamError as exc:
            self.fail(exc)
            if not out:
                raise
        return out

    def fail(self, exc: StreamError) -> StreamError:
        """Keep ``exc`` (as ``noted`` makes it) for every later call, and return it."""
        self.failure = exc if self._noted is None else self._noted(exc)
        return self.failure


class Flushed(list[Frame]):
    """The frames the end of input completed, and whether the input ended cleanly.

    ``clean`` is false when the framer dropped a frame the input ended inside (an SSE event
    with no blank line after it, which the spec discards): a provider whose end is the end of
    input then did not send its whole response.
    """

    clean: bool

    def __init__(self, frames: Iterable[Frame] = (), *, clean: bool = True) -> None:
        super().__init__(frames)
        self.clean = clean


class Framer(ABC):
    """Base of the framers (bytes -> ``Frame``s), holding the deferred-error rule once."""

    #: The content type a stream in this framing is served with, for the framings a stream is
    #: written back in (SSE, NDJSON).
    content_type: ClassVar[str]

    def __init__(self) -> None:
        self._deferred = Deferred()

    def feed(self, chunk: bytes) -> list[Frame]:
        out: list[Frame] = []
        for item in self.feed_batch(chunk):
            if type(item) is Payloads:
                out += item.frames()
            else:
                assert isinstance(item, Frame)
                out.append(item)
        return out

    def feed_batch(self, chunk: bytes) -> list[Frame | Payloads]:
        """``feed``, with the events of the common shape in ``Payloads``: the pipeline's read."""
        return self._deferred.run(self._feed, chunk)

    def flush(self) -> Flushed:
        """End of input: the frames it completes, and whether nothing was cut off."""
        self._deferred.check()
        return self._flush()

    @abstractmethod
    def _feed(self, chunk: bytes, out: list[Frame | Payloads]) -> None:
        """Append the frames ``chunk`` completes to ``out``; raise on bad bytes."""

    @abstractmethod
    def _flush(self) -> Flushed:
        """The frames (or the error) that the end of input means."""
