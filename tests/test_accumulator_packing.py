"""An open call's fragments are packed into bytes as they pile up; nothing about the call changes."""

from __future__ import annotations

import json

import pytest

from streamkit._accumulator import _PACK_AT, Accumulator
from streamkit._errors import ProviderProtocolError
from streamkit._events import ArgumentsDelta, ArgumentsRepeated, ArgumentsValue, CallEnded, CallOpened, RawCall

TEXT = json.dumps({"a": "é🚀\\" * 70, "lone": "\udc80"}, ensure_ascii=False)  # > _PACK_AT fragments


def stream(fragments: list[str], *, repeated: bool = False) -> Accumulator:
    accumulator = Accumulator("test")
    accumulator.feed(CallOpened(0, "c", "f"))
    for piece in fragments:
        accumulator.feed((ArgumentsRepeated if repeated else ArgumentsDelta)(0, piece))
    return accumulator


def end(accumulator: Accumulator) -> RawCall:
    (raw,) = accumulator.feed(CallEnded(0))
    assert isinstance(raw, RawCall)
    return raw


def test_packed_fragments_join_to_the_exact_text() -> None:
    assert len(TEXT) > 3 * _PACK_AT
    raw = end(stream(list(TEXT)))
    assert raw.arguments == TEXT
    assert raw.anomalies == ()


def test_arguments_resent_whole_after_packing_are_recognised() -> None:
    accumulator = stream(list(TEXT))
    accumulator.feed(ArgumentsRepeated(0, TEXT))
    raw = end(accumulator)
    assert raw.arguments == TEXT
    assert raw.anomalies == ("arguments_resent",)


def test_fragments_that_repeat_the_identity_still_append_after_packing() -> None:
    raw = end(stream(list(TEXT), repeated=True))
    assert raw.arguments == TEXT


def test_only_empty_fragments_then_a_whole_value_is_accepted() -> None:
    accumulator = stream([""] * (2 * _PACK_AT))
    accumulator.feed(ArgumentsValue(0, {"k": 1}))
    assert end(accumulator).arguments == {"k": 1}


def test_a_whole_value_after_packed_text_is_a_protocol_error() -> None:
    accumulator = stream(["x"] + [""] * (2 * _PACK_AT))
    with pytest.raises(ProviderProtocolError, match="a whole arguments value after text fragments"):
        accumulator.feed(ArgumentsValue(0, {"k": 1}))


def test_empty_fragments_carry_nothing_so_only_they_give_no_text() -> None:
    assert end(stream([""] * (2 * _PACK_AT))).arguments is None
    assert end(stream([])).arguments is None
    assert end(stream(["", "{}", ""] * _PACK_AT)).arguments == "{}" * _PACK_AT
