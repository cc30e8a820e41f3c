"""OpenAI Responses's history, at its public path: written in ``providers/openai_responses/history.py``."""

from ..providers.openai_responses.history import *  # noqa: F403 (the same names, at their public path)
from ..providers.openai_responses.history import __all__ as __all__
