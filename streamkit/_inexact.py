"""Whether orjson's read of JSON text may hold an integer it read inexactly: the check every
read of a call's arguments pays, apart from the exact reader (``_json``), which only a read it
finds needs.

This module belongs to the vocabulary: every stage may import it, and it imports nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = ("INEXACT_FLOAT", "may_be_inexact")

#: orjson reads an integer beyond the 64-bit range as a float; such a float is at least this big.
INEXACT_FLOAT = 9.2e18


def may_be_inexact(value: Any) -> bool:
    """Whether a value orjson read holds a float that may be an integer it read inexactly."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is float and (item >= INEXACT_FLOAT or item <= -INEXACT_FLOAT):
            return True
    return False
