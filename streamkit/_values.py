"""How the vocabulary's classes are made: dataclasses, with the methods every one shares made once.

``dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` (and, frozen,
``__setattr__`` and ``__delattr__``) as source and compiles it with ``exec``, about a sixth of a
millisecond each: for the forty-odd classes the pipeline loads, most of its first use. Equality,
hash and repr say the same for every class given its fields, so here they are closures over the
fields (read by one ``operator.attrgetter``), and only what must be the class's own is compiled.
The classes stay dataclasses: ``fields``, ``replace``, ``asdict``, ``match`` and ``KW_ONLY`` work as
before; equality leaves out ``compare=False`` fields and repr ``repr=False`` ones, as generated
methods do, and a method the class writes itself is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields
from operator import attrgetter
from reprlib import recursive_repr
from typing import Any, TypeVar, dataclass_transform

__all__ = ("event", "value")

T = TypeVar("T")


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def value(cls: type[T]) -> type[T]:
    """A public value: a frozen, slotted dataclass (assigning a field raises ``FrozenInstanceError``)."""
    return _shared(dataclass(frozen=True, slots=True, repr=False, eq=False)(cls))


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def event(cls: type[T]) -> type[T]:
    """An event passed between stages: a slotted dataclass, frozen for the type checker only. Events
    are built on the hot path, where a frozen ``__init__`` (``object.__setattr__`` for each field)
    costs about three times a plain one, and no caller ever holds one."""
    return _shared(dataclass(slots=True, repr=False, eq=False)(cls))


def _getter(names: list[str]) -> Callable[[Any], Any]:
    return attrgetter(*names) if names else _nothing


def _nothing(_: object) -> tuple[()]:
    return ()


def _shared(cls: type[T]) -> type[T]:
    """Give ``cls`` the equality, hash and repr a frozen dataclass generates, unless it has its own."""
    known = fields(cls)  # type: ignore[arg-type]  # a dataclass, just made
    compared = _getter([f.name for f in known if f.compare])
    hashed = _getter([f.name for f in known if (f.compare if f.hash is None else f.hash)])
    shown = tuple(f.name for f in known if f.repr)

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)  # type: ignore[no-any-return]
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(hashed(self))

    @recursive_repr()
    def __repr__(self: Any) -> str:
        return f"{self.__class__.__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"

    body = cls.__dict__
    # A class's own ``__eq__`` leaves Python's implicit ``__hash__ = None``: no hash of its own.
    own = {name for name in body if name != "__hash__" or body[name] is not None or "__eq__" not in body}
    for method in (__eq__, __hash__, __repr__):
        if method.__name__ not in own:
            method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
            setattr(cls, method.__name__, method)
    return cls
