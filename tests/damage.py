"""Damage one value deep inside a JSON payload, for tests that feed decoders bad shapes."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

#: Any small JSON value, to put where a valid one was.
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-1, max_value=2) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=6,
)


def _slots(node: Any) -> Iterator[tuple[Any, Any]]:
    """Every (container, key) in a JSON value, depth first."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        yield node, key
        yield from _slots(child)


def damage(payload: Any, data: st.DataObject) -> Any:
    """A copy of ``payload`` with one value anywhere in it replaced by any JSON value, or one
    key removed; every place is equally likely, however deep."""
    payload = copy.deepcopy(payload)
    slots = list(_slots(payload))
    if not slots:
        return data.draw(JSON)
    container, key = data.draw(st.sampled_from(slots))
    if isinstance(container, dict) and data.draw(st.booleans()):
        del container[key]
    else:
        container[key] = data.draw(JSON)
    return payload
