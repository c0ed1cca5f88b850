"""A fork whose config names no upstream: commands are answered, never retried into a dead letter."""
from __future__ import annotations

from types import SimpleNamespace

from bot.config.forksync import load_config
from bot.core.commands import Target
from bot.sync.service import SyncService


async def test_plan_and_targets_without_an_upstream_are_answered(tmp_path):
    svc = SyncService(workdir=tmp_path, git_url=str(tmp_path / "{owner}+{repo}.git"))
    cfg = load_config(None, {})
    assert cfg.upstream.url == ""
    ctx = SimpleNamespace(installation_id=None)
    text = await svc.plan_preview(ctx, "meta/triton", user="alice", cfg=cfg, line="/forksync plan")
    assert text == ("@alice: no plan — this fork names no upstream (`upstream.url` in `.github/forksync.yml` on the "
                    "default branch).")
    assert await svc.resolve_target(ctx, "meta/triton", Target(sha="abcdef1"), cfg) == []
