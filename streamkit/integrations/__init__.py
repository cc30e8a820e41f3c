"""Drop-in pieces for the code around an SDK: ``streamkit.integrations.httpx`` and ``.httpx2``.

Each integration module imports its own HTTP library; ``import streamkit`` imports none of them.
"""

from __future__ import annotations

__all__ = ()
