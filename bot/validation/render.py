"""Renders the validation concern's templates (``templates/``) through the shared environment (:mod:`bot.templating`).

StrictUndefined: a template that names a missing field fails loudly instead of printing blank.
"""
from __future__ import annotations

from bot.templating import TEMPLATES, render  # noqa: F401  (the shared environment)
