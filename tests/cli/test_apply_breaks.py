"""``forksync apply`` on a person's own clone of the fork: nothing but the branch asked for (and
the objects it needs) may change in that repository."""
from __future__ import annotations

from bot.cli.main import main
from bot.demo.repobuilder import RepoBuilder, run_git
from tests.support.plan_repos import build_pair


def test_apply_leaves_the_persons_fetch_head_alone(tmp_path, monkeypatch, capsys):
    """A person's clone of the fork that lacks upstream's objects: apply fetches the unit's
    commits into it. What they see: `.git/FETCH_HEAD` — what their own last `git fetch origin
    feature` left, which `git merge FETCH_HEAD` / `git checkout FETCH_HEAD` reads next — is
    replaced by forksync's list of upstream shas "of …/.forksync-cache/combined-….git". What they
    should see: the branch forksync/<unit> and the objects, nothing else written
    (bot/git/apply.py _ensure_objects: `git fetch --no-write-fetch-head`)."""
    pair = build_pair(tmp_path)
    clone = RepoBuilder(tmp_path / "clone")
    run_git(tmp_path, "clone", "-q", "--no-local", str(pair.fork.path), str(clone.path))
    mine = "1234567890abcdef1234567890abcdef12345678\t\tbranch 'feature' of https://github.com/ORG/triton\n"
    (clone.path / ".git" / "FETCH_HEAD").write_text(mine)
    refs_before = run_git(clone.path, "for-each-ref", "--format=%(refname) %(objectname)")
    monkeypatch.chdir(tmp_path)
    unit = f"bundle-{pair.u['u1'][:12]}"
    assert main(["apply", unit, "--fork", str(clone.path), "--upstream", str(pair.up.path)]) == 0
    assert f"forksync/{unit} created" in capsys.readouterr().out
    refs_after = run_git(clone.path, "for-each-ref", "--format=%(refname) %(objectname)")
    assert set(refs_after.splitlines()) - set(refs_before.splitlines()) == {
        f"refs/heads/forksync/{unit} {run_git(clone.path, 'rev-parse', f'forksync/{unit}').strip()}"}
    assert (clone.path / ".git" / "FETCH_HEAD").read_text() == mine


def test_apply_whose_pick_cannot_be_written_names_the_commit_and_keeps_the_picks_before_it(tmp_path, monkeypatch, capsys):
    """Writing the bundle's second pick fails (the disk is full). What the person saw: a
    traceback, the branch not moved, and no word of which upstream commit it was at. What they
    should see: the upstream commit and the cause, the picks before it on the branch, exit 1, and
    nothing of the failed pick referenced."""
    from bot.git import apply as apply_mod

    pair = build_pair(tmp_path)
    clone = RepoBuilder(tmp_path / "clone")
    run_git(tmp_path, "clone", "-q", "--no-local", str(pair.fork.path), str(clone.path))
    monkeypatch.chdir(tmp_path)
    unit = f"bundle-{pair.u['u1'][:12]}"
    real = apply_mod._commit
    calls = []

    def commit(repo, author, signer, msg, tree_id, head):
        calls.append(msg)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(repo, author, signer, msg, tree_id, head)

    monkeypatch.setattr(apply_mod, "_commit", commit)
    rc = main(["apply", unit, "--fork", str(clone.path), "--upstream", str(pair.up.path)])
    out, err = capsys.readouterr()
    second = calls[1].split("Upstream-Commit: ")[1][:40]
    assert rc == 1 and "Traceback" not in out + err, out + err
    assert f"  error: cannot pick {second[:12]}: [Errno 28] No space left on device" in out, out
    assert f"nothing was written for {second[:12]}" in out, out
    log = run_git(clone.path, "log", "--format=%B", f"main..forksync/{unit}")
    assert log.count("Upstream-Commit: ") == 1 and second not in log
