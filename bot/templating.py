"""The one jinja2 environment for every text a person reads (``templates/``).

StrictUndefined: a template that names a field the caller did not pass raises
``jinja2.UndefinedError`` naming it, instead of rendering a blank. No autoescape: the output is
Markdown for GitHub; agent text is sanitised by ``bot.agents.textrails`` before it gets here.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)


@lru_cache(maxsize=1)
def html_environment() -> jinja2.Environment:
    """The environment for the dashboard's HTML pages (``templates/dashboard/``): the same loader
    and strictness, with autoescape, since every value on a page is data (subjects, reasons)."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, autoescape=True)


def render_html(name: str, **context) -> str:
    """Render the HTML template ``templates/<name>`` with autoescape; errors as :func:`render`."""
    return html_environment().get_template(name).render(**context)


def render(name: str, **context) -> str:
    """Render ``templates/<name>`` with ``context``; raises ``jinja2.TemplateNotFound`` /
    ``jinja2.UndefinedError`` naming the template and the missing field."""
    return environment().get_template(name).render(**context)
