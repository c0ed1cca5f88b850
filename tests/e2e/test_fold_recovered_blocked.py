"""A fold pushed by a worker that died before recording it, whose next pick fails without a
conflict: whichever comes first after the restart — the re-run of the person's push or the
poller's sync — records it, and the unit's blocked state (step ``apply``) is what the fork's
status and its status issue show, end to end on the local GitHub."""
from __future__ import annotations

import pytest

from bot.git import apply as apply_mod
from bot.sync import store as sync_store
from tests.support.crash import Killed, dies_saving_branch, restart
from tests.support.sync_world import fork_git, push_resolution, status_body, stop_chain, world  # noqa: F401 (the fixture)
from tests.support.validation_world import tick_ctx


@pytest.mark.parametrize("first", ["delivery", "poll"])
async def test_a_recovered_fold_whose_next_pick_fails_shows_the_unit_blocked(world, tmp_path, monkeypatch, first):  # noqa: F811
    w, up_src, upstream = world
    chain, branch, c2, c3 = await stop_chain(w, up_src, upstream, then_z=True)
    unit_id = branch.removeprefix("forksync/")
    real = apply_mod.apply_unit

    def apply_unit(git_dir, unit, **kw):
        if unit.id == unit_id:
            raise apply_mod.ApplyError(f"could not fetch upstream commit {c3}")
        return real(git_dir, unit, **kw)

    monkeypatch.setattr(apply_mod, "apply_unit", apply_unit)
    killed = dies_saving_branch(monkeypatch, branch, "verified_tip")
    push_resolution(w, tmp_path, branch)
    with pytest.raises(Killed):
        await w.bot.settle()
    assert fork_git(w, "rev-parse", branch) == killed[0]

    assert await restart(w, tmp_path)
    if first == "poll":
        await w.bot.svc.sync(await tick_ctx(w), "meta/triton", reason="poll")
    await w.bot.settle()
    row = sync_store.branch_row(w.bot.store, "meta/triton", branch)
    assert (row["pushed_tip"], row["blocked_step"]) == (killed[0], "apply"), row
    st = sync_store.load_status(w.bot.store, "meta/triton")
    assert [b["id"] for b in st.blocked] == [unit_id], st.blocked
    body = await status_body(w)
    assert f"`{unit_id}` ([#{chain['number']}](" in body and "could not fetch upstream commit" in body, body
    assert "stopped at a conflict" not in body, body
