"""Which HTTP library an object comes from, httpx or httpx2, without importing either.

Read from the object's class through ``sys.modules``: an object of a library that was never
imported cannot be one of its instances, so a program that uses one never loads the other, and
telling a response from any other source costs the pipeline no HTTP machinery.
"""

from __future__ import annotations

import sys
from types import ModuleType

__all__ = ("library", "response_library")

_LIBRARIES = frozenset({"httpx", "httpx2"})


def library(obj: object) -> ModuleType | None:
    """httpx or httpx2, when ``obj``'s class (or a base of it) is one of theirs, else None."""
    for cls in type(obj).__mro__:
        name = cls.__module__.partition(".")[0]
        if name in _LIBRARIES:
            return sys.modules.get(name)
    return None


def response_library(source: object) -> ModuleType | None:
    """httpx or httpx2, when ``source`` is one of their responses, else None."""
    found = library(source)
    return found if found is not None and isinstance(source, found.Response) else None
