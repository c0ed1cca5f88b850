"""Apply: in-memory cherry-picks into ``forksync/<unit>`` branches, one fork commit per upstream commit."""
from __future__ import annotations

import pytest

from bot.demo.repobuilder import RepoBuilder, run_git
from bot.git.apply import COMMITTER, ApplyError, apply_unit, apply_urgent
from bot.model import ConflictFile, PlanItem, Unit
from tests.support.plan_repos import T0, build_pair, ops


def log(repo_path, rev, fmt="%H"):
    return run_git(repo_path, "log", "--reverse", f"--format={fmt}%x1e", rev, "^main").split("\x1e\n")


def unit(kind, pair, *names):
    shas = tuple(pair.u[n] for n in names)
    return Unit(id=f"{kind}-{shas[0][:12]}", kind=kind, items=tuple(PlanItem(s, "test") for s in shas))


def worktrees(path) -> int:
    return run_git(path, "worktree", "list", "--porcelain").count("worktree ")


@pytest.fixture
def pair(tmp_path):
    return build_pair(tmp_path)


def test_bundle_branch_has_one_commit_per_upstream_commit(pair):
    infos = {c.sha: c for c in pair.infos()}
    u = unit("bundle", pair, "u1", "u3", "u9")
    res = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    assert res.created and res.conflict is None and res.branch == f"forksync/{u.id}"
    assert [up for up, _ in res.picked] == list(u.shas)
    rows = [r.split("|", 4) for r in log(pair.fork.path, res.branch, "%an|%ae|%at|%cn|%B") if r.strip()]
    assert [(r[0], r[1], int(r[2]), r[3]) for r in rows] == [
        ("Upstream Dev", "dev@upstream.example", T0 + 1000, "forksync"),
        ("Other Dev", "other@upstream.example", T0 + 1020, "forksync"),
        ("Upstream Dev", "dev@upstream.example", T0 + 1080, "forksync")]
    assert rows[0][4].strip() == (f"[python] add: keep ints (#101)\n\nUpstream-Commit: {pair.u['u1']}\n"
                                  f"Forksync-Unit: {u.id}")
    assert [s for s in log(pair.fork.path, res.branch) if s.strip()] == [f for _, f in res.picked]
    assert res.tip == res.picked[-1][1]
    # the fork's own branch and work tree are untouched; the temporary worktree is gone
    assert pair.fork.head() == pair.fork_tip and worktrees(pair.fork.path) == 1
    assert run_git(pair.fork.path, "status", "--porcelain") == ""
    run_git(pair.fork.path, "fsck", "--strict", "--no-dangling")     # the pack apply wrote is sound


def test_conflict_ends_the_chain_with_a_conflict_commit(pair):
    infos = {c.sha: c for c in pair.infos()}
    u = unit("chain", pair, "u1", "u2", "u4")
    res = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    assert res.conflict == pair.u["u2"] and res.conflict_files == ("lib/Dialect/Ops.cpp",)
    assert [up for up, _ in res.picked] == [pair.u["u1"]]
    assert res.remaining == (pair.u["u2"], pair.u["u4"])
    assert res.stopped and res.error == ""
    hunk = (f"<<<<<<< fork\n  return r + 0 /* fork */;\n||||||| upstream parent {pair.u['u1'][:12]}\n  return r;\n"
            f"=======\n  return r + 1;\n>>>>>>> upstream {pair.u['u2'][:12]} ([dialect] fold mul overflow (#102))")
    assert res.conflicts == (ConflictFile("lib/Dialect/Ops.cpp", "content", (hunk,)),)
    # the branch: the clean pick of u1, then u2's conflict commit (its parent), at the tip
    assert [s for s in log(pair.fork.path, res.branch) if s.strip()] == [res.picked[0][1], res.conflict_commit]
    assert res.tip == res.conflict_commit
    assert run_git(pair.fork.path, "diff", "--name-only", pair.fork_tip, res.picked[0][1]).split() == [
        "python/triton/language.py"]
    assert run_git(pair.fork.path, "diff", "--name-only", res.picked[0][1], res.tip).split() == ["lib/Dialect/Ops.cpp"]
    text = run_git(pair.fork.path, "show", f"{res.tip}:lib/Dialect/Ops.cpp")
    assert text == ops().replace("  int r = a * b;\n  return r;\n", f"  int r = a * b;\n{hunk}\n")
    author, committer, msg = run_git(pair.fork.path, "log", "-1", "--format=%an|%ae|%at%x00%cn|%ce|%ct%x00%B",
                                     res.tip).split("\x00")
    assert author == f"Upstream Dev|dev@upstream.example|{T0 + 1010}"
    assert committer == f"forksync|forksync@users.noreply.github.com|{T0 + 9000}"
    lines = msg.strip().splitlines()
    assert lines[0] == "[CONFLICT] [dialect] fold mul overflow"
    assert "- lib/Dialect/Ops.cpp (content)" in lines
    assert lines[-2:] == [f"Forksync-Conflict: {pair.u['u2']}", f"Forksync-Unit: {u.id}"]
    assert not any(ln.startswith(("Upstream-Commit", "(cherry picked")) for ln in lines)
    assert pair.fork.head() == pair.fork_tip and worktrees(pair.fork.path) == 1
    assert run_git(pair.fork.path, "status", "--porcelain") == ""
    # applying again appends nothing and reports the same conflict
    again = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9100)
    assert (again.conflict, again.conflict_commit, again.tip, again.picked) == (pair.u["u2"], res.tip, res.tip, ())
    assert again.conflicts == res.conflicts and again.already == (pair.u["u1"],) and again.kept == ()
    assert again.remaining == (pair.u["u2"], pair.u["u4"])


def test_a_first_pick_conflict_gets_a_branch_with_its_conflict_commit(pair):
    infos = {c.sha: c for c in pair.infos()}
    first = unit("chain", pair, "u2")
    res = apply_unit(pair.fork.path, first, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    assert res.conflict == pair.u["u2"] and res.created and res.picked == ()
    assert res.tip == res.conflict_commit and res.tip != pair.fork_tip
    assert run_git(pair.fork.path, "rev-parse", f"{res.tip}^").strip() == pair.fork_tip
    assert run_git(pair.fork.path, "rev-parse", f"refs/heads/forksync/{first.id}").strip() == res.tip
    assert run_git(pair.fork.path, "status", "--porcelain") == "" and worktrees(pair.fork.path) == 1


def test_on_conflict_stop_writes_no_conflict_commit(pair):
    infos = {c.sha: c for c in pair.infos()}
    u = unit("chain", pair, "u1", "u2", "u4")
    res = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9000, on_conflict="stop")
    assert res.conflict == pair.u["u2"] and res.conflict_commit is None and len(res.conflicts) == 1
    assert run_git(pair.fork.path, "rev-parse", res.branch).strip() == res.picked[0][1] == res.tip
    # a chain whose first pick conflicts gets its branch at the base (a place to resolve), no commit
    first = unit("chain", pair, "u2")
    res2 = apply_unit(pair.fork.path, first, base=pair.fork_tip, commits=infos, on_conflict="stop")
    assert res2.conflict == pair.u["u2"] and res2.tip == pair.fork_tip and res2.created and res2.picked == ()
    with pytest.raises(ValueError, match="on_conflict"):
        apply_unit(pair.fork.path, first, base=pair.fork_tip, commits=infos, on_conflict="abort")


def resolve_in_worktree(pair, tmp_path, branch, *, fold: bool):
    """A person resolves u2 on ``branch``: by a commit on top of the conflict commit (``fold``
    False) or by replacing the conflict commit with the resolved pick (``fold`` True)."""
    wt = tmp_path / "person"
    run_git(pair.fork.path, "worktree", "add", "-q", str(wt), branch)
    person = RepoBuilder(wt, ("Fork Dev", "dev@fork.example"))
    if fold:
        run_git(wt, "reset", "-q", "--hard", "HEAD^")
    resolved = person.commit(f"[dialect] fold mul overflow (#102) [RESOLVED]\n\nUpstream-Commit: {pair.u['u2']}\n",
                             {"lib/Dialect/Ops.cpp": ops(mul=" + 1 + 0 /* fork */")}, when=T0 + 9100)
    run_git(wt, "checkout", "-q", "--detach")
    return resolved


def test_reapply_keeps_a_persons_resolution_and_continues(pair, tmp_path):
    infos = {c.sha: c for c in pair.infos()}
    u = unit("chain", pair, "u1", "u2", "u4")
    res = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    assert res.conflict == pair.u["u2"]
    # a person resolves u2 on the branch, after the conflict commit (their own commit, with the trailer)
    resolved = resolve_in_worktree(pair, tmp_path, res.branch, fold=False)
    again = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9200)
    assert again.already == (pair.u["u1"], pair.u["u2"])
    assert again.kept == (resolved,)
    assert again.start == resolved and not again.created
    # u4 changes the line the person resolved: it conflicts, and its conflict commit follows theirs
    assert again.conflict == pair.u["u4"] and again.conflict_commit == again.tip
    assert run_git(pair.fork.path, "rev-parse", f"{again.tip}^").strip() == resolved
    # a third apply changes nothing that exists
    third = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9300)
    assert third.kept == (resolved,) and third.picked == () and third.tip == again.tip
    assert third.conflict == pair.u["u4"] and third.conflict_commit == again.tip
    shas = [s for s in log(pair.fork.path, res.branch) if s.strip()]
    assert shas == [res.picked[0][1], res.conflict_commit, resolved, again.tip]


def test_a_fold_that_replaces_the_conflict_commit_lets_the_chain_go_on(pair, tmp_path):
    infos = {c.sha: c for c in pair.infos()}
    u = unit("chain", pair, "u1", "u2", "u3")
    res = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    assert res.conflict == pair.u["u2"] and res.remaining == (pair.u["u2"], pair.u["u3"])
    resolved = resolve_in_worktree(pair, tmp_path, res.branch, fold=True)
    again = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9200)
    assert again.already == (pair.u["u1"], pair.u["u2"]) and again.conflict is None
    assert [up for up, _ in again.picked] == [pair.u["u3"]]
    assert [s for s in log(pair.fork.path, res.branch) if s.strip()] == [res.picked[0][1], resolved, again.tip]
    assert run_git(pair.fork.path, "show", f"{again.tip}:lib/Dialect/Ops.cpp") == ops(add=" + 1", mul=" + 1 + 0 /* fork */")


def test_reapply_appends_after_existing_picks(pair):
    infos = {c.sha: c for c in pair.infos()}
    part = unit("bundle", pair, "u1", "u3")
    first = apply_unit(pair.fork.path, part, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    whole = Unit(id=part.id, kind="bundle", items=part.items + (PlanItem(pair.u["u6"], "test"),))
    second = apply_unit(pair.fork.path, whole, base=pair.fork_tip, commits=infos, when=T0 + 9100)
    assert second.already == part.shas and second.kept == ()
    assert [up for up, _ in second.picked] == [pair.u["u6"]]
    assert [s for s in log(pair.fork.path, second.branch) if s.strip()] == [f for _, f in first.picked] + [second.tip]


def test_urgent_pick_carries_its_trailer(pair):
    info = {c.sha: c for c in pair.infos(["u6"])}[pair.u["u6"]]
    res = apply_urgent(pair.fork.path, info, "security fix needed now", base=pair.fork_tip, when=T0 + 9000)
    assert res.branch == f"forksync/chain-{pair.u['u6'][:12]}"
    msg = run_git(pair.fork.path, "log", "-1", "--format=%B", res.branch)
    assert msg.strip().splitlines()[-3:] == [f"Upstream-Commit: {pair.u['u6']}",
                                            "Upstream-Urgent: security fix needed now",
                                            f"Forksync-Unit: chain-{pair.u['u6'][:12]}"]
    with pytest.raises(ValueError, match="needs a reason"):
        apply_urgent(pair.fork.path, info, " ", base=pair.fork_tip)


def test_refusals(pair, tmp_path):
    infos = {c.sha: c for c in pair.infos()}
    u = unit("bundle", pair, "u1")
    run_git(pair.fork.path, "branch", f"forksync/{u.id}", pair.fork_tip)
    run_git(pair.fork.path, "worktree", "add", "-q", str(tmp_path / "busy"), f"forksync/{u.id}")
    with pytest.raises(ApplyError, match="is checked out in .*busy"):
        apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos)
    with pytest.raises(ApplyError, match="no commit data"):
        apply_unit(pair.fork.path, unit("chain", pair, "u2"), base=pair.fork_tip, commits={})


def test_upstream_objects_are_fetched_from_a_separate_repository(tmp_path, pair):
    infos = {c.sha: c for c in pair.infos()}
    lone = RepoBuilder(tmp_path / "lone")
    run_git(tmp_path, "clone", "-q", "--no-local", str(pair.fork.path), str(lone.path))
    run_git(lone.path, "remote", "remove", "origin")
    u = unit("bundle", pair, "u1", "u3")
    with pytest.raises(ApplyError, match="give the upstream repository"):
        apply_unit(lone.path, u, base=pair.fork_tip, commits=infos)
    res = apply_unit(lone.path, u, base=pair.fork_tip, commits=infos, upstream_git_dir=pair.up.path,
                     committer=COMMITTER, when=T0 + 9000)
    assert [up for up, _ in res.picked] == list(u.shas)
    assert run_git(lone.path, "for-each-ref", "--format=%(refname)").split() == [
        "refs/heads/forksync/" + u.id, "refs/heads/main"]


def test_a_branch_moved_during_apply_is_not_overwritten(pair, monkeypatch):
    """The branch moves by compare-and-swap against the value read at the start."""
    from bot.git import apply as apply_mod
    infos = {c.sha: c for c in pair.infos()}
    part = unit("bundle", pair, "u1")
    first = apply_unit(pair.fork.path, part, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    whole = Unit(id=part.id, kind="bundle", items=part.items + (PlanItem(pair.u["u3"], "test"),))
    real_commit = apply_mod._commit

    def someone_else_moves_it(*args):
        run_git(pair.fork.path, "update-ref", f"refs/heads/{first.branch}", pair.fork_tip)
        return real_commit(*args)

    monkeypatch.setattr(apply_mod, "_commit", someone_else_moves_it)
    with pytest.raises(ApplyError, match=r"moved while apply ran \(it was at " + first.tip[:12]):
        apply_unit(pair.fork.path, whole, base=pair.fork_tip, commits=infos, when=T0 + 9100)
    assert run_git(pair.fork.path, "rev-parse", first.branch).strip() == pair.fork_tip
    # a branch that appears meanwhile is not overwritten either
    fresh = unit("bundle", pair, "u6")
    monkeypatch.setattr(apply_mod, "_commit", lambda *a: (run_git(pair.fork.path, "branch", f"forksync/{fresh.id}",
                                                                  pair.fork_tip), real_commit(*a))[1])
    with pytest.raises(ApplyError, match="it was absent"):
        apply_unit(pair.fork.path, fresh, base=pair.fork_tip, commits=infos, when=T0 + 9100)
    assert run_git(pair.fork.path, "rev-parse", f"forksync/{fresh.id}").strip() == pair.fork_tip


def test_hunks_are_marker_blocks_capped_for_a_pr_body():
    from bot.git.apply import hunks_of
    text = "a\n<<<<<<< fork\nx\n||||||| upstream parent p\ny\n=======\nz\n>>>>>>> upstream s (t)\nb\n"
    assert hunks_of(text) == ("<<<<<<< fork\nx\n||||||| upstream parent p\ny\n=======\nz\n>>>>>>> upstream s (t)",)
    long = "<<<<<<< fork\n" + "".join(f"l{i}\n" for i in range(100)) + ">>>>>>> upstream s\n" + text
    first, second = hunks_of(long.encode(), cap=10)
    assert first.split("\n") == ["<<<<<<< fork"] + [f"l{i}" for i in range(9)] + ["… 92 more lines"]
    assert second == hunks_of(text)[0]
    assert hunks_of("no markers\n<<<<<<< unterminated\n") == ()


@pytest.mark.parametrize("subject, want", [
    ("[dialect] fold mul overflow (#102)", "[CONFLICT] [dialect] fold mul overflow"),
    ("Reland \"x\" (#9552, #9642) (#1872)", "[CONFLICT] Reland \"x\" (#9552, #9642)"),
    ("no number", "[CONFLICT] no number")])
def test_conflict_message_names_no_pick(subject, want):
    from bot.config.forksync import ProvenanceRules
    from bot.core.provenance import claims, is_conflict_commit
    from bot.git.apply import render_conflict_message
    from bot.model import CommitInfo
    c = CommitInfo(sha="a" * 40, parents=("b" * 40,), message=f"{subject}\n\nbody\n\nUpstream-Commit: {'c' * 40}\n")
    msg = render_conflict_message(c, (ConflictFile("x.py", "content"), ConflictFile("y.bin", "binary")), unit_id="chain-x")
    lines = msg.splitlines()
    assert lines[0] == want and "- x.py (content)" in lines and "- y.bin (binary)" in lines
    assert lines[-2:] == [f"Forksync-Conflict: {'a' * 40}", "Forksync-Unit: chain-x"]
    # the upstream body (and its trailers) is not copied; no line starts a pick trailer
    assert not any(ln.startswith(("Upstream-", "(cherry picked")) for ln in lines)
    assert is_conflict_commit(msg) and claims(msg, ProvenanceRules()) == []


def test_forksyncs_rule_commit_on_the_conflict_is_its_own_not_a_persons(pair):
    """The deterministic rules' commit on a conflict commit (``Forksync-Rules:``, committed by
    forksync) is forksync's own: applying again keeps no "person's" commit (which would comment
    on the PR that the branch holds foreign commits, and refuse a retry)."""
    import pygit2
    infos = {c.sha: c for c in pair.infos()}
    u = unit("chain", pair, "u1", "u2", "u4")
    res = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    repo = pygit2.Repository(str(pair.fork.path))
    sig = pygit2.Signature(*COMMITTER, T0 + 9050, 0)
    msg = (f"Resolve 1 of 1 conflicted file of upstream {pair.u['u2'][:12]} by forksync's rules\n\n"
           f"File: lib/Dialect/Ops.cpp\nAction: kept the fork's file\nReason: r (rule `fork-ahead`)\n\n"
           f"Forksync-Rules: {pair.u['u2']}\n")
    rules = repo.create_commit(None, sig, sig, msg, repo[res.tip].peel(pygit2.Commit).tree.id, [pygit2.Oid(hex=res.tip)])
    repo.references[f"refs/heads/{res.branch}"].set_target(rules)
    again = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9100)
    assert (again.conflict, again.conflict_commit, again.tip) == (pair.u["u2"], res.tip, str(rules))
    assert again.kept == ()


def test_a_first_pick_that_fails_without_a_conflict_writes_no_commit(pair, monkeypatch):
    """libgit2 cannot merge the first pick (an object it needs is unreadable): the unit stops there
    with the cause and no conflict commit; the new branch is at the fork tip, as for any first pick
    that stops (tests/cli/test_partial_clone.py), with nothing on it."""
    import pygit2

    from bot.git import apply as apply_mod

    def merge(self, commit, ours):
        raise pygit2.GitError("object not found - no match for id (0badc0de)")

    monkeypatch.setattr(apply_mod._Merger, "merge", merge)
    infos = {c.sha: c for c in pair.infos()}
    u = unit("chain", pair, "u1", "u2")
    res = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    assert (res.conflict, res.conflict_commit, res.picked, res.tip) == (pair.u["u1"], None, (), pair.fork_tip)
    assert res.error == f"cannot merge {pair.u['u1'][:12]}: object not found - no match for id (0badc0de)"
    assert res.remaining == (pair.u["u1"], pair.u["u2"])
    assert run_git(pair.fork.path, "rev-parse", res.branch).strip() == pair.fork_tip


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), None])
def test_a_later_pick_that_cannot_be_written_keeps_the_picks_before_it(pair, monkeypatch, error):
    """Writing the second pick's commit fails (an error apply does not expect there): the unit
    stops at that upstream commit with the cause, the clean pick before it is on the branch, and
    nothing of the failed pick is referenced — never a traceback that leaves the branch unknown."""
    import pygit2

    from bot.git import apply as apply_mod

    error = error or pygit2.GitError("failed to write object")
    real = apply_mod._commit
    infos = {c.sha: c for c in pair.infos()}
    u = unit("chain", pair, "u1", "u3")

    def commit(repo, author, signer, msg, tree_id, head):
        if f"Upstream-Commit: {pair.u['u3']}" in msg:
            raise error
        return real(repo, author, signer, msg, tree_id, head)

    monkeypatch.setattr(apply_mod, "_commit", commit)
    res = apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    assert [up for up, _ in res.picked] == [pair.u["u1"]]
    assert (res.conflict, res.conflict_commit, res.tip, res.remaining) == (pair.u["u3"], None, res.picked[0][1],
                                                                          (pair.u["u3"],))
    assert res.error.startswith(f"cannot pick {pair.u['u3'][:12]}: ") and str(error) in res.error, res.error
    assert [s for s in log(pair.fork.path, res.branch) if s.strip()] == [res.picked[0][1]]


def test_a_branch_left_at_an_older_fork_tip_by_a_failed_first_pick_starts_on_the_fork_tip(pair, monkeypatch):
    """The first pick failed (no commit: the branch was made at the fork tip of that run), the fork
    moved, and the pick passes now. What a person running ``forksync apply`` again saw: the unit
    built on the older fork tip the empty branch was left at. What they should see: a branch
    holding nothing of its own starts on the fork tip it is applied onto (moved forward), and one
    that fails again is left there with nothing on it — never at the older tip."""
    import pygit2

    from bot.git import apply as apply_mod

    failing = [True]
    real = apply_mod._Merger.merge

    def merge(self, commit, ours):
        if failing[0]:
            raise pygit2.GitError("object not found - no match for id (0badc0de)")
        return real(self, commit, ours)

    monkeypatch.setattr(apply_mod._Merger, "merge", merge)
    infos = {c.sha: c for c in pair.infos()}
    u = unit("chain", pair, "u1", "u3")
    apply_unit(pair.fork.path, u, base=pair.fork_tip, commits=infos, when=T0 + 9000)
    run_git(pair.fork.path, "commit", "-q", "--allow-empty", "-m", "fork: moves on")
    moved = run_git(pair.fork.path, "rev-parse", "main").strip()
    assert moved != pair.fork_tip
    again = apply_unit(pair.fork.path, u, base=moved, commits=infos, when=T0 + 9100)
    assert (again.error != "", again.picked, again.tip) == (True, (), moved)
    assert run_git(pair.fork.path, "rev-parse", again.branch).strip() == moved
    failing[0] = False
    res = apply_unit(pair.fork.path, u, base=moved, commits=infos, when=T0 + 9200)
    assert [up for up, _ in res.picked] == list(u.shas) and res.conflict is None
    assert run_git(pair.fork.path, "rev-parse", f"{res.picked[0][1]}^").strip() == moved
