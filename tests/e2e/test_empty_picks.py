"""A sync PR whose picks change nothing says so: the fork already holds upstream's later x.cpp,
the ``fork-ahead`` rule keeps the fork's file, and the chain's picks of the changes it already has
are empty commits. Its body must not promise a change it does not bring; once it lands the ledger
records those upstream commits NO_OP (:mod:`bot.core.ledger`: an empty pick), as the body said."""
from __future__ import annotations

from bot.app import schedules
from bot.sync import store as sync_store
from tests.support.github import commit_files, git
from tests.support.sync_world import MIDDLE, fork_git, open_prs, the_rules_resolve_the_amd_chain
from tests.support.validation_world import tick_ctx


async def test_a_chain_whose_picks_all_change_nothing_says_so_and_lands_as_no_op(ahead_world):
    """Both upstream changes are in the fork already (it took upstream's x = 3 early): the rule keeps
    the fork's file at the first pick, the second applies cleanly to the same file, and neither
    pick changes anything."""
    w, up_src, upstream = ahead_world
    c2, c3, chain = await the_rules_resolve_the_amd_chain(w, up_src, upstream)
    branch = f"forksync/chain-{c2[:12]}"
    assert chain["head"]["ref"] == branch and "## Resolved by forksync's rules" in chain["body"]
    first, second = fork_git(w, "log", "--reverse", "--format=%H", f"main..{branch}").split()
    assert fork_git(w, "diff", "--stat", f"{first}~1", first) == fork_git(w, "diff", "--stat", f"{second}~1", second) == ""
    body = chain["body"]
    assert "This chain brings 2 upstream commits" not in body
    assert ("This chain changes nothing in the fork: its 2 upstream commits from `triton-lang/triton` are each picked as "
            "an empty commit (one fork commit per upstream commit, each carries `Upstream-Commit: <sha>`). Once it "
            "lands, the ledger records them NO_OP, each naming its pick.") in body
    assert "(#\u200d102) | empty pick: changes nothing |" in body
    assert "(#\u200d103) | empty pick: changes nothing |" in body
    # L1 on the head, then a person's approval: it lands, and the ledger says what the body said
    await schedules.reconcile_tick(await tick_ctx(w), "meta/triton")
    await w.people["carol"].post(f"/repos/meta/triton/pulls/{chain['number']}/reviews", data={"event": "APPROVE"})
    await w.bot.settle()
    assert (await w.pr(chain["number"]))["merged"] is True
    _, rows = sync_store.query_ledger(w.bot.store, "meta/triton", limit=1000)
    got = {r["sha"]: r for r in rows}
    up3, landed3, up2, landed2 = fork_git(w, "log", "-2", "--no-merges",
                                          "--format=%(trailers:key=Upstream-Commit,valueonly) %H", "main").split()
    assert (up2, up3) == (c2, c3)
    assert (got[c2]["disposition"], got[c2]["fork_commit"]) == ("NO_OP", landed2)
    assert got[c2]["reason"] == (f"its pick {landed2[:12]} changes nothing in the fork "
                                 "(resolved by forksync rules (fork-ahead))")
    assert (got[c3]["disposition"], got[c3]["fork_commit"]) == ("NO_OP", landed3)


async def test_a_chain_with_an_empty_pick_among_others_names_it(ahead_world):
    w, up_src, upstream = ahead_world
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: x = 2 (#102)")
    commit_files(up_src, {"third_party/amd/x.cpp": "int x = 3;\n" + MIDDLE + "int z;\n"}, "AMD: x = 3 (#103)")
    commit_files(up_src, {"third_party/amd/x.cpp": "int x = 3;\n" + MIDDLE + "int z = 1;\n"}, "AMD: z = 1 (#104)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [chain] = await open_prs(w.alice)
    branch = f"forksync/chain-{c2[:12]}"
    assert chain["head"]["ref"] == branch
    picks = fork_git(w, "log", "--reverse", "--format=%H", f"main..{branch}").split()
    assert [fork_git(w, "diff", "--name-only", f"{p}~1", p) for p in picks] == ["", "", "third_party/amd/x.cpp"]
    body = chain["body"]
    assert ("This chain brings 3 upstream commits from `triton-lang/triton` into the fork, one fork commit per upstream "
            "commit (each carries `Upstream-Commit: <sha>`). 2 of them change nothing in the fork: their picks are "
            "empty commits, marked below, and once it lands the ledger records them NO_OP, each naming its pick.") in body
    assert "(#\u200d102) | empty pick: changes nothing |" in body
    assert "(#\u200d103) | empty pick: changes nothing |" in body
    assert "(#\u200d104) | picked |" in body


async def test_a_pick_that_only_moves_a_submodule_is_no_empty_pick_whatever_the_git_config(tmp_path, monkeypatch):
    """The ledger reads a pick's files with ``--ignore-submodules=none`` (:func:`bot.git.repo.commit_infos`:
    ``diff.ignoreSubmodules=all`` in a user's config leaves gitlink changes out), so a pick that moves
    a submodule is a change there. The PR body's empty-pick count read ``git log --name-only`` under the
    user's config: with that setting the pick was "empty: changes nothing", which the ledger never says."""
    import pygit2

    from bot.git.repo import commit_infos
    from bot.sync.service import SyncService

    cfg = tmp_path / "gitconfig"
    cfg.write_text("[diff]\n\tignoreSubmodules = all\n")
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    up = "2" * 40
    git(repo, "update-index", "--add", "--cacheinfo", "160000," + "1" * 40 + ",third_party/sub")
    git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m",
        f"Bump the submodule\n\nUpstream-Commit: {up}")
    tip = git(repo, "rev-parse", "HEAD").strip()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))     # the user's config, as the service's git reads it
    assert [f.path for f in commit_infos(pygit2.Repository(str(repo)), [tip])[tip].files] == ["third_party/sub"]
    assert await SyncService._empty_picks(SyncService.__new__(SyncService), repo / ".git", base, tip, [up]) == {}
