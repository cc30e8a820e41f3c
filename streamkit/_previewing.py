"""The accumulator that previews: an ``Accumulator`` that also hands on, now and then, a
``RawPreview`` of an open call's text so far. A part of the accumulator, in a module of its own
so that only a stream that asks for previews loads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict, Unpack, cast

from ._accumulator import _UNSET, Accumulator, Output
from ._events import ArgumentsDelta, ArgumentsRepeated, Event, RawCall, RawPreview, TextReceived
from ._limits import DEFAULT_LIMITS, Limits, TurnBudget

__all__ = ("PreviewingAccumulator",)


class _Options(TypedDict, total=False):
    """``Accumulator``'s keyword options, which ``PreviewingAccumulator`` passes on as given."""

    fragments: bool
    timed: bool
    sequential: bool
    early_close: bool
    cutting: frozenset[str]


class PreviewingAccumulator(Accumulator):
    """An ``Accumulator`` that also emits a ``RawPreview`` of each open call's text as it grows.

    A preview is due once a call's text has grown by ``every`` characters since the last one and
    to ``growth`` times its length then (the larger threshold wins). ``every=1, growth=1.0`` is a
    preview on every fragment, whose total cost grows with the square of the text; a ``growth``
    above 1 spaces previews geometrically, so their total cost stays in proportion to the text.
    The text is joined once per preview, and kept joined, so parts never pile up twice.
    """

    def __init__(
        self,
        provider: str,
        limits: Limits = DEFAULT_LIMITS,
        budget: TurnBudget | None = None,
        *,
        every: int = 1,
        growth: float = 1.0,
        **options: Unpack[_Options],
    ) -> None:
        super().__init__(provider, limits, budget, **options)
        self._every = every
        self._growth = growth
        self._progress: dict[tuple[int, int], list[int]] = {}  # key -> [length, next due length]

    def feed(self, event: Event) -> Sequence[Output]:
        out = super().feed(event)
        kind = type(event)
        if kind is ArgumentsDelta or kind is ArgumentsRepeated:
            fragment = cast(ArgumentsDelta | ArgumentsRepeated, event)
            key = (fragment.choice, fragment.index)
            progress = self._progress.get(key)
            if progress is None:
                progress = self._progress[key] = [0, self._every]
            progress[0] += len(fragment.text)  # a dropped repeat over-counts
            if progress[0] >= progress[1]:
                preview = self._preview(key, progress)
                if preview is not None:
                    return (*out, preview)
        elif out and kind is not TextReceived:
            for item in out:
                if type(item) is RawCall:
                    self._progress.pop((item.choice, item.index), None)
        return out

    def _preview(self, key: tuple[int, int], progress: list[int]) -> RawPreview | None:
        slot = self._open.get(key)
        if slot is None or slot.value is not _UNSET:
            return None
        text = slot.text()
        if text is None:
            return None
        slot.packed = None
        slot.parts[:] = [text]
        progress[0] = size = len(text)  # exact again
        if size < progress[1]:
            return None
        progress[1] = max(size + self._every, int(size * self._growth))
        return RawPreview(slot.index, slot.id, slot.name, text, key[0])
