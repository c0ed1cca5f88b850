"""The adapters that wire the nightly loop and the conflict agent into the running bot: stored
nightly results (``suite_results``) → triage once all expected results are in; a chain stopped at
a conflict → the agent, with ``sync_branches.pushed_tip`` kept in step, or nothing when agents
are off."""
from __future__ import annotations

from types import SimpleNamespace

from conftest_github import fake_github, github_app  # noqa: F401
from test_agents_github import BRANCH, SETTINGS, honest, remote_refs
from test_agents_github import FULL as AG_FULL
from test_agents_github import world as chain_world  # noqa: F401
from test_nightly_triage import DAY, FULL, PASS_FILE, T0, issues_of, results, world  # noqa: F401

from bot.agents.client import AgentClient
from bot.config.forksync import ForksyncConfig
from bot.config.suites import SuiteConfig
from bot.fakeanthropic import FakeAnthropic
from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.agents import on_chain_conflict
from bot.triage.nightly import triage_stored_nightly
from bot.validation import store as vstore

SUITE = SuiteConfig.model_validate({"name": "kernels", "level": "L1", "command": f"! grep -q BROKEN {PASS_FILE}",
                                    "report": {"format": "junit", "path": "out/k.xml"}, "expected_tests": 3,
                                    "platforms": ["h200", "h100"]})
EXPECTED = [("kernels", "h200"), ("kernels", "h100")]


async def test_stored_nightly_is_triaged_once_all_results_are_in(world, github_app, tmp_path):
    fake, inst, fork, good, culprit, bad = world
    ctx = SimpleNamespace(store=Store(tmp_path / "s.db"), gh=github_app.installation(inst.id))
    ctx.store.migrate()
    kw = dict(cfg=ForksyncConfig(), suites=[SUITE], fork_git_dir=fork / ".git", agents=None)
    for i, sha, broken in ((0, good, False), (1, bad, True)):
        row = {"key": f"{FULL}@{sha}@{T0 + i * DAY}", "sha": sha, "dispatched_at": float(T0 + i * DAY)}
        h200, h100 = results(sha, broken=broken, busy=broken, t=T0 + i * DAY)
        vstore.record(ctx.store, repo=FULL, pr=0, result=h200, now=T0 + i * DAY)
        assert await triage_stored_nightly(ctx, FULL, row, EXPECTED, **kw) == []        # h100 still missing
        vstore.record(ctx.store, repo=FULL, pr=0, result=h100, now=T0 + i * DAY)
        notes = await triage_stored_nightly(ctx, FULL, row, EXPECTED, **kw)
    (issue,) = await issues_of(ctx.gh)
    assert notes[0].startswith(f"nightly triage {bad[:12]}: open ") and \
        notes[1] == f"nightly triage {bad[:12]}: {notes[0].split(': open ')[1]}: culprit {culprit[:12]} written into #{issue['number']}"
    assert await triage_stored_nightly(ctx, FULL, row, EXPECTED, **kw) == []              # the tick again: no-op


async def test_chain_conflict_hook(chain_world, github_app, tmp_path, monkeypatch):
    fork, inst, work, tip, up = chain_world("[ops] rename line 3 and fix line 15")
    ctx = SimpleNamespace(store=Store(tmp_path / "s.db"), gh=github_app.installation(inst.id))
    ctx.store.migrate()
    sync_store.save_branch(ctx.store, repo=AG_FULL, branch=BRANCH, unit_id=BRANCH[9:], kind="chain", pushed_tip=tip,
                         verified_tip="", pr=0, state="open", shas_json="[]", base_sha=tip)
    for var in ("FORKSYNC_ANTHROPIC_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    before = remote_refs(fork.path)
    assert await on_chain_conflict(ctx, AG_FULL, git_dir=work, cfg=ForksyncConfig(), branch=BRANCH, upstream_sha=up,
                                   remote_url=str(fork.path)) == ""                       # no key: agents off
    assert remote_refs(fork.path) == before
    async with FakeAnthropic([honest()], api_key="k") as ant:
        async with AgentClient(SETTINGS, ctx.store, api_key="k", base_url=ant.base_url) as client:
            note = await on_chain_conflict(ctx, AG_FULL, git_dir=work, cfg=ForksyncConfig(), branch=BRANCH,
                                           upstream_sha=up, remote_url=str(fork.path), client=client)
    head = remote_refs(fork.path)[f"refs/heads/{BRANCH}"]
    assert note == f"agent resolution of {up[:12]} on {BRANCH}: committed ({head[:12]}, PR #1 draft)"
    assert sync_store.branch_row(ctx.store, AG_FULL, BRANCH)["pushed_tip"] == head
