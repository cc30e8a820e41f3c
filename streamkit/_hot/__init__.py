"""The hot read: a stream's fast path, in one place.

Most of a token-streaming response is one more fragment of the call already open, or one more
piece of text, in a payload of the same bytes but for its string. ``TemplateReader`` reads a
stream's frames through its decoder and learns, and proves, that byte template (``Template``);
``HotRead`` reads a whole read of such events in one stage crossing, past the framer, the
decoder and the accumulator, once each has proved its part. The stages only declare and expose
what it needs: the decoder that a plain fragment changes none of its state (``plain_fragments``,
``plain_text``), the framer the bytes it holds (``SSEDecoder.release``), the accumulator a call
that takes fragments plainly, within its limit (``Accumulator.plain_call``).
"""

from __future__ import annotations

from ._learn import TemplateReader
from ._read import HotRead, arm, text_delta
from ._template import Template

__all__ = ("HotRead", "Template", "TemplateReader", "arm", "text_delta")
