"""Mistral's history, at its public path: written in ``providers/mistral/history.py``."""

from ..providers.mistral.history import *  # noqa: F403 (the same names, at their public path)
from ..providers.mistral.history import __all__ as __all__
