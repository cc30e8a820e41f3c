"""Mistral's stream written back: it speaks OpenAI Chat chunks, so OpenAI Chat's re-emitter
writes it."""

from __future__ import annotations

from ..openai_chat.reemit import OpenAIChatEncoder as MistralEncoder

__all__ = ("MistralEncoder",)
