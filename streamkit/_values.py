"""How the vocabulary's classes are made: dataclasses, with the methods every one shares made once.

``dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` (and, frozen,
``__setattr__`` and ``__delattr__``) as source and compiles it with ``exec``, about a sixth of a
millisecond each: for the forty-odd classes the pipeline loads, most of its first use. Equality,
hash and repr say the same for every class given its fields, and so do a frozen class's
``__setattr__`` and ``__delattr__``, so here they are closures over the fields (read by one
``operator.attrgetter``). Only ``__init__`` must be the class's own: it is compiled here from a
shorter text than ``dataclass``'s (one function, its annotations set after) that makes the same
code. The classes stay dataclasses: ``fields``, ``replace``, ``asdict``, ``match``, ``KW_ONLY``,
pickling and ``__dataclass_params__`` work as before; equality leaves out ``compare=False`` fields
and repr ``repr=False`` ones, as generated methods do, and a method the class writes itself is
kept. A class whose annotations may name a ``ClassVar`` or an ``InitVar``, or with a dataclass
base not made here, or made here but not frozen as it is, is made by ``dataclass`` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from inspect import get_annotations, signature
from operator import attrgetter
from reprlib import recursive_repr
from typing import Any, TypeVar, dataclass_transform

__all__ = ("event", "value")

T = TypeVar("T")


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def value(cls: type[T]) -> type[T]:
    """A public value: a frozen, slotted dataclass (assigning a field raises ``FrozenInstanceError``)."""
    return _shared(_made(cls, frozen=True))


@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def event(cls: type[T]) -> type[T]:
    """An event passed between stages: a slotted dataclass, frozen for the type checker only. Events
    are built on the hot path, where a frozen ``__init__`` (``object.__setattr__`` for each field)
    costs about three times a plain one, and no caller ever holds one."""
    return _shared(_made(cls, frozen=False))


#: The classes made here: a base among them is frozen as its subclass is, and says so only after.
_MADE: set[type] = set()


def _made(cls: type[T], *, frozen: bool) -> type[T]:
    """``cls`` made a slotted dataclass without ``dataclass``'s ``__init__`` (or frozen methods),
    then given this module's."""
    bases: list[Any] = [base for base in cls.__mro__[1:] if "__dataclass_fields__" in base.__dict__]
    if not _plain(cls) or any(base not in _MADE or base.__dataclass_params__.frozen is not frozen for base in bases):
        return dataclass(frozen=frozen, slots=True, repr=False, eq=False)(cls)
    documented = bool(cls.__doc__)
    if not documented:  # dataclass would write one from a signature without the __init__: written below
        cls.__doc__ = cls.__name__
    for base in bases:  # ``dataclass`` is not asked to freeze ``cls``: its bases must not say they are frozen
        base.__dataclass_params__.frozen = False
    try:
        made: Any = dataclass(init=False, slots=True, repr=False, eq=False)(cls)
    finally:
        for base in bases:
            base.__dataclass_params__.frozen = frozen
    made.__dataclass_params__.init, made.__dataclass_params__.frozen = True, frozen  # what dataclass was not asked
    made.__init__ = _init(made, fields(made), frozen=frozen)
    _MADE.add(made)
    if frozen:
        _freeze(cls, made)
    if not documented:  # dataclass's text, from the __init__ it did not make
        made.__doc__ = made.__name__ + str(signature(made)).replace(" -> None", "")
    return made  # type: ignore[no-any-return]


def _plain(cls: type) -> bool:
    """Whether ``cls``'s annotations are strings naming no ``ClassVar`` or ``InitVar``: what this
    module's ``__init__`` and frozen methods need no more of ``dataclass`` to get right."""
    return all(
        isinstance(kind, str) and "ClassVar" not in kind and "InitVar" not in kind
        for kind in get_annotations(cls).values()
    )


class _Factory:
    """The default of a parameter whose field has a ``default_factory``, shown as ``dataclass`` shows it."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _init(cls: type, known: tuple[Field[Any], ...], *, frozen: bool) -> Callable[..., None]:
    """The ``__init__`` ``dataclass`` would write for ``known``: the same parameters, defaults and
    assignments (through ``object.__setattr__`` when frozen), then ``__post_init__`` if any."""
    me = "__dataclass_self__" if any(f.name == "self" for f in known) else "self"
    space: dict[str, Any] = {"__name__": cls.__module__, "__sk_set__": object.__setattr__, "__sk_factory__": _FACTORY}
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    seen_default = False
    for f in known:
        name, default = f.name, f"__sk_default_{f.name}__"
        if f.default_factory is not MISSING:
            space[default] = f.default_factory
            given = f"{default}() if {name} is __sk_factory__ else {name}" if f.init else f"{default}()"
            parameter = f"{name}=__sk_factory__"
        elif f.default is not MISSING:
            space[default] = f.default
            given = name if f.init else default
            parameter = f"{name}={default}"
        elif f.init:
            given = parameter = name
            if seen_default and not f.kw_only:
                raise TypeError(f"non-default argument {name!r} follows default argument")
        else:
            continue  # no value to give it: reading it raises AttributeError, as dataclass's leaves it
        if f.init:
            seen_default = seen_default or (parameter != name and not f.kw_only)
            (keywords if f.kw_only else positional).append(parameter)
        body.append(f"__sk_set__({me},{name!r},{given})" if frozen else f"{me}.{name}={given}")
    if hasattr(cls, "__post_init__"):
        body.append(f"{me}.__post_init__()")
    parameters = ", ".join([me, *positional, *(["*", *keywords] if keywords else [])])
    lines = "\n ".join(body or ["pass"])
    exec(f"def __init__({parameters}):\n {lines}", space)  # what dataclass does, shorter
    made: Callable[..., None] = space["__init__"]
    made.__qualname__ = f"{cls.__qualname__}.__init__"
    ordered = [f for f in known if f.init and not f.kw_only] + [f for f in known if f.init and f.kw_only]
    made.__annotations__ = {f.name: f.type for f in ordered} | {"return": None}
    return made


def _freeze(before: Any, cls: Any) -> None:
    """Give ``cls`` the ``__setattr__``, ``__delattr__`` and pickling a frozen dataclass gets.

    As ``dataclass``'s, they test the class as it was before its slots were added (``before``): a
    name that is no field then fails in ``super``, as it does on a class ``dataclass`` froze."""
    names = frozenset(f.name for f in fields(cls))

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is before or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(before, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is before or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(before, self).__delattr__(name)

    for method in (__setattr__, __delattr__):
        if method.__name__ in cls.__dict__:
            raise TypeError(f"Cannot overwrite attribute {method.__name__} in class {cls.__name__}")
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
        setattr(cls, method.__name__, method)
    body = cls.__dict__
    if "__getstate__" not in body:
        cls.__getstate__ = _getstate
    if "__setstate__" not in body:
        cls.__setstate__ = _setstate


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for known, given in zip(fields(self), state, strict=False):
        object.__setattr__(self, known.name, given)  # frozen: past ``__setattr__``


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

    def __repr__(self: Any) -> str:
        return f"{self.__class__.__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"

    body = cls.__dict__
    for method in (__eq__, __hash__, __repr__):
        name = method.__name__
        # A class's own ``__eq__`` leaves Python's implicit ``__hash__ = None``: no hash of its own.
        if name in body and (name != "__hash__" or body[name] is not None or "__eq__" not in body):
            continue
        if method is __repr__:
            method = recursive_repr()(method)
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)
    return cls
