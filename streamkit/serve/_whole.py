"""A response that was not streamed: its calls read from the whole body, and checked as a stream's are.

Each format's body lists its calls in one place, read by its provider's ``body.py`` (which
also says which calls the output limit cut, as in a stream); each is normalized by the
pipeline's own normalizer (so its arguments are parsed by the same strict rules) and checked
against the request's tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._ending import finish_of, tokens_of
from .._limits import Limits
from .._normalize import normalize
from .._types import Call, ResponseEnd
from .._validate import Toolset
from ..providers import BODIES, DECODERS

__all__ = ("whole_calls", "whole_end")


def whole_calls(fmt: str, body: Any, toolset: Toolset | None, limits: Limits) -> list[Call]:
    """The calls of a whole response body (a JSON value), each normalized and checked."""
    if not isinstance(body, dict):
        return []
    calls = [normalize(raw, limits.max_depth) for raw in BODIES[fmt].calls(body)]
    return calls if toolset is None else [toolset.validate(call) for call in calls]


def whole_end(fmt: str, body: Any, calls: Sequence[Call]) -> ResponseEnd:
    """The end of a whole response body, as a stream's ``ResponseEnd`` says it (for telemetry):
    its stop reason, usage and token counts, by the format's decoder's own tables."""
    body = body if isinstance(body, dict) else {}
    stop = BODIES[fmt].stop_reason(body)
    stop = stop if isinstance(stop, str) else None
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
    decoder = DECODERS[fmt]
    finish = finish_of(decoder.finish_reasons, stop, bool(calls))
    return ResponseEnd(stop, usage, finish=finish, tokens=tokens_of(decoder.tokens, usage))
