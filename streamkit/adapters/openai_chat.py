"""OpenAI Chat's history, at its public path: written in ``providers/openai_chat/history.py``."""

from ..providers.openai_chat.history import *  # noqa: F403 (the same names, at their public path)
from ..providers.openai_chat.history import __all__ as __all__
