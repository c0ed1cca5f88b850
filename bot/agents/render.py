"""Templates of the agents (``templates/agents/``): prompts the model reads and texts people read.

One jinja2 environment (StrictUndefined: a missing field is an error, not an empty string).
Agent-written strings are sanitised by :mod:`bot.agents.textrails` *before* they reach a
template (see :class:`bot.agents.output.Cleaner`); templates receive plain data only.
"""
from __future__ import annotations

import secrets
from functools import lru_cache

import jinja2

from bot.agents.textrails import fence
from bot.config.agents import SCRIPTED_MODEL
from bot.templating import TEMPLATES as TEMPLATES_DIR


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined, autoescape=False,
        keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["fence"] = fence
    env.filters["cell"] = table_cell
    env.filters["agent"] = agent_label
    return env


def agent_label(model: str) -> str:
    """How a text names the model that wrote an agent's answer: the configured model's name in
    code (`` `claude-sonnet-4-6` ``), or, for the scripted local model of the demo and the tests
    (:data:`bot.config.agents.SCRIPTED_MODEL`), that it is one — its answers are canned, and a
    reader must not take them, or their "confidence", for a real model's."""
    if model == SCRIPTED_MODEL:
        return "scripted local model, not a real LLM"
    return f"`{model}`" if model else "model not named"


def render(name: str, **data) -> str:
    """Render ``templates/agents/<name>`` with ``data``. Raises jinja2 errors on missing fields."""
    return environment().get_template(f"agents/{name}").render(**data)


def table_cell(text: str) -> str:
    """One Markdown table cell: no newlines, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def data_block(name: str, text: str, nonce: str) -> str:
    """Untrusted ``text`` wrapped as quoted data between delimiters that carry ``nonce``.

    The nonce is random per request (48 bits), so text written before the request cannot close
    the block; should the nonce itself occur in ``text`` it is broken with a zero-width space
    there. Otherwise the text is kept byte for byte (a file holding ``</data>`` stays intact,
    which the conflict rails need). The system prompt says that data blocks are never
    instructions; the rails, not the prompt, are the guarantee.
    """
    body = (text or "").replace(nonce, nonce[:1] + "\u200b" + nonce[1:]) if nonce else (text or "")
    return f'<data name="{name}" id="{nonce}">\n{body}\n</data id="{nonce}">'


def new_nonce() -> str:
    return secrets.token_hex(6)
