"""The vocabulary's classes behave as the dataclasses ``dataclass`` would generate.

``_values.value`` and ``_values.event`` share equality, hash and repr across classes instead of
compiling them per class; a twin made by ``dataclass(frozen=True, slots=True)`` is the reference.
"""

from __future__ import annotations

import dataclasses
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

import streamkit
from streamkit._values import event, value


@value
class Point:
    x: int
    tags: tuple[str, ...]
    _: KW_ONLY
    note: str = field(default="", compare=False)
    secret: int = field(default=0, repr=False)


@dataclass(frozen=True, slots=True)
class Twin:
    x: int
    tags: tuple[str, ...]
    _: KW_ONLY
    note: str = field(default="", compare=False)
    secret: int = field(default=0, repr=False)


@value
class Shown:
    x: int

    def __repr__(self) -> str:
        return "mine"


@event
class Moved:
    index: int
    text: str
    choice: int = 0


@value
class Empty:
    pass


fields_of = st.tuples(st.integers(-2, 2), st.lists(st.sampled_from("ab"), max_size=2).map(tuple), st.text(max_size=2))


@given(one=fields_of, other=fields_of, secret=st.integers(0, 1))
def test_equality_hash_and_repr_are_the_generated_ones(one: Any, other: Any, secret: int) -> None:
    (x, tags, note), (y, more, other_note) = one, other
    ours = Point(x, tags, note=note, secret=secret), Point(y, more, note=other_note)
    theirs = Twin(x, tags, note=note, secret=secret), Twin(y, more, note=other_note)
    assert (ours[0] == ours[1]) is (theirs[0] == theirs[1])
    assert (ours[0] != ours[1]) is (theirs[0] != theirs[1])
    assert repr(ours[0]) == repr(theirs[0]).replace("Twin", "Point", 1)
    if ours[0] == ours[1]:
        assert hash(ours[0]) == hash(ours[1])


def test_another_class_is_never_equal() -> None:
    other: object = Twin(1, ())
    assert Point(1, ()) != other
    assert Point(1, ()).__eq__(other) is NotImplemented
    assert Moved(0, "a") != cast(object, (0, "a", 0))


def test_they_stay_dataclasses() -> None:
    point = Point(1, ("a",), note="n", secret=2)
    assert [f.name for f in dataclasses.fields(point)] == [f.name for f in dataclasses.fields(Twin)]
    assert dataclasses.asdict(point) == {"x": 1, "tags": ("a",), "note": "n", "secret": 2}
    assert dataclasses.replace(point, x=5) == Point(5, ("a",), secret=2)
    assert Point.__match_args__ == ("x", "tags")
    match Moved(3, "t"):
        case Moved(index, text):
            assert (index, text) == (3, "t")
    assert not hasattr(point, "__dict__")  # slotted
    assert Point.__eq__.__qualname__ == "Point.__eq__"


def test_a_value_is_frozen_and_an_event_is_plain() -> None:
    point = Point(1, ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x
    assert Point.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert not Moved.__dataclass_params__.frozen  # type: ignore[attr-defined]  # frozen for mypy alone


def test_a_class_keeps_its_own_repr_and_an_empty_one_compares() -> None:
    assert repr(Shown(1)) == "mine"
    assert Shown(1) == Shown(1) != Shown(2)
    assert Empty() == Empty()
    assert hash(Empty()) == hash(())
    assert repr(Empty()) == "Empty()"


def test_an_unhashable_field_is_unhashable_as_generated() -> None:
    with pytest.raises(TypeError, match="unhashable type: 'list'"):
        hash(Moved(0, []))  # type: ignore[arg-type]
    call = streamkit.ToolCall(0, "a", "f", {"k": 1})
    with pytest.raises(TypeError, match="unhashable type: 'dict'"):
        hash(call)


def test_the_public_values_print_and_compare_as_before() -> None:
    call = streamkit.ToolCall(0, "a", "f", {"k": 1}, times=streamkit.CallTimes(1, 2, 3))
    assert call == streamkit.ToolCall(0, "a", "f", {"k": 1})  # times is not compared
    usage = "TokenUsage(input_tokens=1, output_tokens=2, cache_read_tokens=None, reasoning_tokens=None)"
    assert repr(streamkit.TokenUsage(1, 2)) == usage
    assert repr(streamkit.CallTimes(1, 2, 3)) == "CallTimes(first_fragment=1, end_marker=2, delivered=3)"


@value
class Kept:
    x: int
    state: dict[str, str] = field(default_factory=dict)
    _: KW_ONLY
    seen: list[int] = field(default_factory=list, compare=False)
    left: int = field(default=7, init=False)

    def __post_init__(self) -> None:
        self.seen.append(self.x)


@dataclass(frozen=True, slots=True)
class KeptTwin:
    x: int
    state: dict[str, str] = field(default_factory=dict)
    _: KW_ONLY
    seen: list[int] = field(default_factory=list, compare=False)
    left: int = field(default=7, init=False)

    def __post_init__(self) -> None:
        self.seen.append(self.x)


def _undocumented() -> type:
    """A class without a docstring: ``dataclass`` writes one from its signature."""
    return type("Undocumented", (), {"__annotations__": {"x": "int"}, "x": 0, "__module__": __name__})


def test_the_init_is_the_generated_one() -> None:
    import inspect
    import pickle

    assert str(inspect.signature(Kept)) == str(inspect.signature(KeptTwin))
    assert Kept.__init__.__annotations__ == KeptTwin.__init__.__annotations__
    assert Kept.__init__.__qualname__ == "Kept.__init__"
    assert Kept.__init__.__module__ == __name__
    kept, twin = Kept(3), KeptTwin(3)
    assert (kept.state, kept.seen, kept.left) == (twin.state, twin.seen, twin.left) == ({}, [3], 7)
    assert Kept(1).state is not Kept(1).state  # one object per call from the factory
    assert Kept(1, {"a": "b"}, seen=[0]).seen == [0, 1]
    assert pickle.loads(pickle.dumps(kept)) == kept
    params = Kept.__dataclass_params__  # type: ignore[attr-defined]
    assert (params.init, params.frozen) == (True, True)
    undocumented: type = value(_undocumented())
    assert (
        undocumented.__doc__
        == dataclass(frozen=True, slots=True)(_undocumented()).__doc__
        == "Undocumented(x: 'int' = 0)"
    )
    with pytest.raises(TypeError, match="non-default argument 'y' follows default argument"):

        @value
        class Wrong:
            x: int = 0
            y: int  # type: ignore[misc]


@value
class Longer(Point):
    more: int = 0


def test_a_subclass_is_frozen_as_its_base_and_subclassed_as_a_frozen_dataclass() -> None:
    longer = Longer(1, ("a",), more=2)
    assert dataclasses.replace(longer, x=3) == Longer(3, ("a",), more=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        longer.more = 1  # type: ignore[misc]
    assert Point.__dataclass_params__.frozen and Longer.__dataclass_params__.frozen  # type: ignore[attr-defined]

    @dataclass(frozen=True)
    class Theirs(streamkit.ToolCall):
        extra: int = 0

    assert Theirs(0, "a", "f", {}, extra=1).extra == 1
    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):

        @dataclass
        class Thawed(streamkit.ToolCall):  # type: ignore[misc]
            extra: int = 0

    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):

        @event
        class Moving(Point):
            more: int = 0
