"""``forksync agents …``: see whether agents are on and what they spent; try the conflict agent.

* ``forksync agents status [--db FILE]`` — on/off with the reason, model, tokens used today.
* ``forksync agents resolve --repo PATH --onto REV --pick SHA --branch forksync/chain-… [--base-url URL]``
  — replay one upstream commit onto REV; if it conflicts, ask the agent, run the rails, and on
  success commit onto the proposal branch (created at REV when missing). Prints the PR-body
  section. Exit 0: committed or clean pick; 1: rejected or skipped.

The API key comes from ``FORKSYNC_ANTHROPIC_KEY`` or ``ANTHROPIC_API_KEY`` (never a flag: flags
end up in shell history and process lists).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys

from bot.agents.client import AgentClient
from bot.agents.conflict import resolve_pick
from bot.agents.conflict_git import conflict_case
from bot.cli.main import config_from_args
from bot.config.forksync import UserError
from bot.store import Store


def register(sub, common) -> None:
    p = sub.add_parser("agents", parents=[common], help="LLM agents behind rails: status, try a conflict resolution")
    asub = p.add_subparsers(dest="agents_command", metavar="ACTION", required=True)
    st = asub.add_parser("status", parents=[common], help="are agents on, which model, tokens used today")
    st.add_argument("--db", default=os.environ.get("FORKSYNC_DB", "forksync.db"), help="SQLite database [FORKSYNC_DB]")
    st.set_defaults(func=_status)
    rs = asub.add_parser("resolve", parents=[common], help="resolve one conflicting pick with the agent")
    rs.add_argument("--repo", required=True, help="repository holding both the fork and upstream history")
    rs.add_argument("--onto", required=True, help="fork commit (chain tip) the pick goes onto")
    rs.add_argument("--pick", required=True, metavar="SHA", help="upstream commit to pick")
    rs.add_argument("--branch", required=True, help="proposal branch to commit to (forksync/…)")
    rs.add_argument("--base-url", help="Anthropic API URL (e.g. a local bot.fakeanthropic) [agents.base_url]")
    rs.add_argument("--db", default=os.environ.get("FORKSYNC_DB", "forksync.db"), help="SQLite database [FORKSYNC_DB]")
    rs.set_defaults(func=_resolve)


def _client(args):
    cfg = config_from_args(args)
    return AgentClient.from_env(cfg.agents, Store(args.db), base_url=getattr(args, "base_url", None))


def _status(args: argparse.Namespace) -> int:
    c = _client(args)
    s = c.settings
    print(f"agents: {'on' if c.off_reason is None else 'off'}" + (f" ({c.off_reason})" if c.off_reason else ""))
    print(f"model: {s.model}")
    print(f"tokens used today (UTC): {c.tokens_used():,} of {s.daily_token_budget:,}")
    return 0


def _resolve(args: argparse.Namespace) -> int:
    import pygit2


    try:
        case = conflict_case(args.repo, args.onto, args.pick)
    except (ValueError, pygit2.GitError) as e:
        raise UserError(str(e)) from None
    if case is None:
        print(f"upstream {args.pick} picks cleanly onto {args.onto}: nothing for the agent to do")
        return 0
    repo = pygit2.Repository(args.repo)
    ref = repo.references.get(f"refs/heads/{args.branch}")
    old = str(ref.target) if ref is not None else None

    async def run():
        async with _client(args) as c:
            return await resolve_pick(c, case, args.repo, args.branch, branch_old=old)

    try:
        out = asyncio.run(run())
    except ValueError as e:
        raise UserError(str(e)) from None
    sys.stdout.write(out.body)
    return 0 if out.status == "committed" else 1
