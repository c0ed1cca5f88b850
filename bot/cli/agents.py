"""``forksync agents status``: see whether agents are on and what they spent.

* ``forksync agents status [--db FILE]`` — on/off with the reason, model, tokens used today.

The conflict agent is asked through ``forksync resolve UNIT --agent`` (one command for finishing a
conflicted chain, :mod:`bot.cli.resolve`).

The API key comes from ``FORKSYNC_ANTHROPIC_KEY`` or ``ANTHROPIC_API_KEY`` (never a flag: flags
end up in shell history and process lists).
"""
from __future__ import annotations

import argparse
import os

from bot.agents.client import AgentClient
from bot.cli.main import config_from_args
from bot.cli.text import say
from bot.store import Store


def register(sub, common) -> None:
    p = sub.add_parser("agents", parents=[common], help="LLM agents behind rails: are they on, what they spent")
    asub = p.add_subparsers(dest="agents_command", metavar="ACTION", required=True)
    st = asub.add_parser("status", parents=[common], help="are agents on, which model, tokens used today")
    st.add_argument("--db", default=os.environ.get("FORKSYNC_DB", "forksync.db"), help="SQLite database [FORKSYNC_DB]")
    st.set_defaults(func=_status)


def _client(args):
    cfg = config_from_args(args)
    return AgentClient.from_env(cfg.agents, Store(args.db), base_url=getattr(args, "base_url", None))


def _status(args: argparse.Namespace) -> int:
    c = _client(args)
    s = c.settings
    cut_calls, estimated = c.estimated_today()
    say("agents", "status", off_reason=c.off_reason, model=s.model, used=c.tokens_used(), budget=s.daily_token_budget,
        cut_calls=cut_calls, estimated=estimated)
    return 0
