"""Gemini's history, at its public path: written in ``providers/gemini/history.py``."""

from ..providers.gemini.history import *  # noqa: F403 (the same names, at their public path)
from ..providers.gemini.history import __all__ as __all__
