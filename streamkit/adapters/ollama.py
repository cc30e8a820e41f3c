"""Ollama's history, at its public path: written in ``providers/ollama/history.py``."""

from ..providers.ollama.history import *  # noqa: F403 (the same names, at their public path)
from ..providers.ollama.history import __all__ as __all__
