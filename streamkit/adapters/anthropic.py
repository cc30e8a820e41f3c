"""Anthropic's history, at its public path: written in ``providers/anthropic/history.py``."""

from ..providers.anthropic.history import *  # noqa: F403 (the same names, at their public path)
from ..providers.anthropic.history import __all__ as __all__
