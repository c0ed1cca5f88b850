"""The sync's own error, apart from the service so that the modules the service calls (landing)
can raise it too."""
from __future__ import annotations


class SyncError(RuntimeError):
    """A sync step failed; the message names the step and the fork (never a token)."""
