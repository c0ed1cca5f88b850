"""Helpers for the end-to-end tests on the local GitHub (their ``world`` fixture is in
``tests/e2e/conftest.py``): the fork's config, listing sync PRs and the status issue, and adopting
the fork then moving upstream."""
from __future__ import annotations

from tests.support.github import commit_files, git

CONFIG = """\
upstream:
  url: triton-lang/triton
  ref: main
fork:
  ref: main
areas:
  - name: amd
    paths: ["third_party/amd/**"]
    divergent: true
    owners: [carol]
"""


async def open_sync_prs(gh):
    return sorted([p async for p in gh.getiter("/repos/meta/triton/pulls?state=open")], key=lambda p: p["head"]["ref"])


async def status_issue(gh):
    return [i async for i in gh.getiter("/repos/meta/triton/issues?state=open")
            if "<!-- forksync:status-issue -->" in (i.get("body") or "")]


async def install_on_fork(fake, bot, fork, inst_id: int) -> None:
    """Deliver ``installation.created`` for the fork (meta/triton) and let the bot settle."""
    payload = fake.webhooks.build("installation", "created", {
        "installation": {"id": inst_id, "app_slug": "forksync", "created_at": "2026-11-30T00:00:00Z",
                         "updated_at": "2026-11-30T00:00:00Z"},
        "repositories": [{"id": fork.id, "name": "triton", "full_name": "meta/triton", "private": False,
                          "node_id": "R_1"}]})
    await fake.webhooks.deliver("installation", payload)
    await bot.settle()


async def adopt_and_move_upstream(fake, bot, alice, up_src, upstream, fork, inst):
    await install_on_fork(fake, bot, fork, inst.id)
    shas = [commit_files(up_src, {"python/a.py": "a = 2\n"}, "Speed up a (#101)"),
            commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n"}, "AMD: new x (#102)")]
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    return shas
