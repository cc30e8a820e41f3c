"""streamkit's debug records, without loading ``logging`` for them.

Every record streamkit writes is a ``DEBUG`` line about an anomaly. An application that never
imported ``logging`` cannot have configured a handler to see one, so a record is written only
when ``logging`` is already loaded: the first use of the pipeline does not pay for the module.
The package's logger gets a ``NullHandler`` then, quiet by default as a library's should be.
"""

from __future__ import annotations

import sys

__all__ = ("debug",)

_quieted = False


def debug(name: str, message: str, *args: object) -> None:
    """Write ``message % args`` at ``DEBUG`` to the logger ``name``, where anyone can see it."""
    global _quieted
    logging = sys.modules.get("logging")
    if logging is None:
        return
    if not _quieted:
        logging.getLogger(__package__).addHandler(logging.NullHandler())
        _quieted = True
    logging.getLogger(name).debug(message, *args)
