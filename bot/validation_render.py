"""Renders the validation concern's templates (``templates/``) with jinja2.

StrictUndefined: a template that names a missing field fails loudly instead of printing blank.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                              autoescape=False)


def render(name: str, **context) -> str:
    """Render ``templates/<name>`` with ``context``; raises ``jinja2.TemplateNotFound`` /
    ``jinja2.UndefinedError`` naming the template and the missing field."""
    return _env().get_template(name).render(**context)
