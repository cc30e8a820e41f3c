"""Cohere's history, at its public path: written in ``providers/cohere/history.py``."""

from ..providers.cohere.history import *  # noqa: F403 (the same names, at their public path)
from ..providers.cohere.history import __all__ as __all__
