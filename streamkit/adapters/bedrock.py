"""Bedrock's history, at its public path: written in ``providers/bedrock/history.py``."""

from ..providers.bedrock.history import *  # noqa: F403 (the same names, at their public path)
from ..providers.bedrock.history import __all__ as __all__
