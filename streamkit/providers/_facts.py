"""A provider's facts: what the generic code needs to know of a provider besides how to read
its stream, declared once, as data, in its folder's ``__init__.py`` (``FACTS``).

The decoders, the proxy, the transports, telemetry and the integrations read these rather than
naming a provider, so that the same answer means the same thing on every path: a body read
whole cuts a call on exactly the stop reasons a stream cuts it on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .._ending import cutting_reasons
from .._types import Finish

__all__ = ("Facts",)


@dataclass(frozen=True, slots=True, eq=False)
class Facts:
    """One provider's facts.

    Attributes:
        slug: its name everywhere: its folder, its fixtures, ``--provider``.
        finish_reasons: its stop reasons, each with its finish in the shared vocabulary
            (``ResponseEnd.finish``); those whose finish is one of ``CUTTING_FINISHES`` cut off
            a call being written (``cutting``), streamed or not.
        base_url: its API's base URL as its official SDK has it (OpenAI's and Mistral's with
            the ``/v1`` prefix, Anthropic's and Gemini's without).
        request_path: what a streamed request is sent to, appended to the base URL
            (``{model}`` stands for the model's name).
        path_end: how the path of a request to its API ends, below the version prefix: what
            names the provider when a stream's first events do not, and where the proxy serves
            its format (under ``/v1``). ``None`` when its path is another provider's.
    """

    slug: str
    finish_reasons: Mapping[str, Finish] = field(default_factory=dict)
    base_url: str | None = None
    request_path: str | None = None
    path_end: str | None = None
    cutting: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "finish_reasons", MappingProxyType(dict(self.finish_reasons)))
        object.__setattr__(self, "cutting", cutting_reasons(self.finish_reasons))
