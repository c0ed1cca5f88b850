"""Every command that reads the repository works on a blob-less partial clone whose promisor remote
is gone, from the objects it holds: no git command it runs tries to fetch an absent blob (that
would block on the network, or fail offline), and a blob a step needs gives a one-line error
naming it and its path, exit non-zero, no traceback, nothing lost."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from bot.cli.main import main
from bot.demo.repobuilder import run_git
from bot.git.apply import git_merge_tree
from tests.support.partial_clone import blobless_clone
from tests.support.plan_repos import T0, build_pair, ops
from tests.support.resolve_history import build_history

ROOT = Path(__file__).resolve().parents[2]


def blob_of(repo_path, rev: str, path: str) -> str:
    return str(pygit2.Repository(str(repo_path)).revparse_single(f"{rev}:{path}").id)


@pytest.fixture
def pair(tmp_path, monkeypatch):
    p = build_pair(tmp_path / "repos")
    monkeypatch.chdir(tmp_path)
    return p


def argv(part):
    return ["--upstream", str(part.path), "--upstream-ref", "upstream/main", "--fork", str(part.path)]


def resolve_markers(path, replacement: str) -> None:
    """Replace the file's one conflict block (diff3 markers) by ``replacement``."""
    path.write_text(re.sub(r"<<<<<<< fork\n.*?>>>>>>> [^\n]*\n", replacement, path.read_text(), flags=re.S))


def subjects(part, chain: str) -> list[str]:
    return run_git(part.path, "log", "--reverse", "--format=%s", f"forksync/{chain}", "^main").splitlines()


def fetched(part, text: str) -> str:
    """The blob of ``text`` written into the clone, as a fetch from its promisor remote would."""
    return run_git(part.path, "hash-object", "-w", "--stdin", input=text).strip()


def tree_entries(repo_path, rev: str) -> dict[str, tuple[int, str]]:
    """``{path: (file mode, object id)}`` of every blob and link of ``rev``'s tree (trees only read)."""
    repo = pygit2.Repository(str(repo_path))
    out = {}

    def walk(tree, prefix):
        for e in tree:
            if e.type_str == "tree":
                walk(repo[e.id], f"{prefix}{e.name}/")
            else:
                out[prefix + e.name] = (e.filemode, str(e.id))
    walk(repo.revparse_single(rev).peel(pygit2.Tree), "")
    return out


def test_plan_and_apply_never_fetch_and_work_without_a_blob_no_pick_reads(pair, tmp_path, capsys):
    """README.md's blob is absent: no pick reads it, so plan and apply work as on a full clone,
    and nothing is fetched."""
    readme = blob_of(pair.fork.path, "main", "README.md")
    part = blobless_clone(pair.fork.path, tmp_path / "part.git", missing=[readme])
    objects = part.objects()
    u = pair.u
    assert main([*argv(part), "plan", "--json"]) == 0
    units = {x["id"]: x for x in json.loads(capsys.readouterr().out)["units"]}
    assert set(units) == {f"bundle-{u['u1'][:12]}", f"chain-{u['u2'][:12]}", f"chain-{u['u5'][:12]}"}
    assert main([*argv(part), "apply", f"bundle-{u['u1'][:12]}"]) == 0
    assert capsys.readouterr().out.count("  picked ") == 5
    chain = f"chain-{u['u2'][:12]}"
    assert main([*argv(part), "apply", chain]) == 1                 # its conflict commit, as on a full clone
    assert "conflict (content, 1 hunk(s)): lib/Dialect/Ops.cpp" in capsys.readouterr().out
    assert part.attempts() == []
    assert part.objects() > objects            # the picks' commits and trees; still no README.md blob
    assert readme not in pygit2.Repository(str(part.path))


def test_resolve_leaves_out_a_file_whose_blob_is_absent_and_the_folds_keep_it(pair, tmp_path, capsys):
    """README.md's blob is absent and chain u2 neither conflicts in it nor changes it: the
    worktree `resolve` makes holds every other file (README.md left out, said in one line on
    stderr), --continue folds the resolution and moves the worktree to u4's conflict (still
    without it), and each folded pick's tree holds every path of its conflict commit, README.md
    with its blob id, the rest but Ops.cpp unchanged. Nothing is fetched."""
    readme = blob_of(pair.fork.path, "main", "README.md")
    part = blobless_clone(pair.fork.path, tmp_path / "part.git", missing=[readme])
    chain = f"chain-{pair.u['u2'][:12]}"
    wt = tmp_path / ".forksync-resolve" / chain
    assert main([*argv(part), "apply", chain]) == 1
    left_line = (f"forksync: 1 file(s) left out of the worktree: README.md; the repository lacks their blobs and "
                 f"resolving needs none of them (not conflicted, unchanged on forksync/{chain}); the resolution keeps "
                 "them as the conflict commit has them")
    for n, fix in enumerate(("  return r + 1 + 0 /* fork */;\n", "  return r + 2 + 0 /* fork */;\n")):
        cc = run_git(part.path, "rev-parse", f"forksync/{chain}").strip()
        if n == 0:
            capsys.readouterr()
            assert main([*argv(part), "resolve", chain]) == 0
            out, err = capsys.readouterr()
            assert err.splitlines() == [left_line], err
            assert f"worktree: {wt}" in out and "lib/Dialect/Ops.cpp: 1 conflicting hunk(s)" in out, out
        assert not (wt / "README.md").exists() and "<<<<<<< fork" in (wt / "lib/Dialect/Ops.cpp").read_text()
        assert sorted(p.relative_to(wt).as_posix() for p in wt.rglob("*") if p.is_file() and ".git" not in p.parts) \
            == sorted(set(tree_entries(part.path, cc)) - {"README.md"})
        assert run_git(wt, "status", "--porcelain") == ""          # the missing file is no deletion
        resolve_markers(wt / "lib/Dialect/Ops.cpp", fix)
        capsys.readouterr()
        assert main([*argv(part), "resolve", chain, "--continue"]) == (1 if n == 0 else 0)
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        folded = run_git(part.path, "rev-parse", f"forksync/{chain}" + ("~1" if n == 0 else "")).strip()
        before, after = tree_entries(part.path, cc), tree_entries(part.path, folded)
        assert set(after) == set(before) and after["README.md"] == (0o100644, readme)
        assert {p: x for p, x in after.items() if p != "lib/Dialect/Ops.cpp"} == \
            {p: x for p, x in before.items() if p != "lib/Dialect/Ops.cpp"}
        assert fix in run_git(part.path, "show", f"{folded}:lib/Dialect/Ops.cpp")
        if n == 0:
            assert err.splitlines() == [left_line], err
            assert f"stopped again at a conflict; the worktree {wt} is at it now" in out, out
    assert subjects(part, chain) == ["[RESOLVED] [dialect] fold mul overflow (#102)",
                                     "[RESOLVED] [dialect] fold mul again (#104)"]
    assert tree_entries(part.path, f"forksync/{chain}")["README.md"] == (0o100644, readme)
    assert not wt.exists() and part.attempts() == [] and readme not in pygit2.Repository(str(part.path))


def test_resolve_whose_conflicted_file_is_absent_names_it_and_makes_no_worktree(pair, tmp_path, capsys,
                                                                                 stopped_elsewhere):
    """The conflict commit's Ops.cpp (the file to resolve) and README.md are absent: only what
    resolving needs is named — Ops.cpp — exit 2, no worktree, nothing fetched."""
    chain = stopped_elsewhere
    tip = run_git(pair.fork.path, "rev-parse", f"forksync/{chain}").strip()
    gone = blob_of(pair.fork.path, tip, "lib/Dialect/Ops.cpp")
    part = blobless_clone(pair.fork.path, tmp_path / "part.git",
                          missing=[gone, blob_of(pair.fork.path, "main", "README.md")])
    assert main([*argv(part), "resolve", chain]) == 2
    assert capsys.readouterr() == ("", absent_line(
        part, f"the checkout of {tip[:12]}", "lib/Dialect/Ops.cpp", gone,
        "`forksync status --json` lists the missing objects it met (missing_objects)") + "\n")
    assert not (tmp_path / ".forksync-resolve").exists() and part.attempts() == []
    assert run_git(part.path, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert run_git(part.path, "rev-parse", f"forksync/{chain}").strip() == tip


def test_apply_of_a_pick_that_needs_an_absent_blob_names_it_and_writes_nothing_half_made(pair, tmp_path, capsys):
    """u2 changes foldMul in the file the fork changed too: its pick merges contents and needs
    u2's Ops.cpp. Without it the chain stops there with one line naming the blob, the path and
    what to do; no conflict commit is made up, the fork is untouched, nothing is fetched."""
    u = pair.u
    gone = blob_of(pair.up.path, u["u2"], "lib/Dialect/Ops.cpp")
    part = blobless_clone(pair.fork.path, tmp_path / "part.git", missing=[gone])
    fork_tip = str(pygit2.Repository(str(part.path)).references["refs/heads/main"].target)
    assert main([*argv(part), "plan", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    unit = next(x for x in plan["units"] if u["u2"] in [i["sha"] for i in x["items"]])
    rc = main([*argv(part), "apply", unit["id"]])
    out, err = capsys.readouterr()
    assert rc == 1 and "Traceback" not in out + err
    line = next(ln for ln in out.splitlines() if "error:" in ln)
    assert f"blob {gone[:12]}" in line and "lib/Dialect/Ops.cpp" in line and u["u2"][:12] in line, out
    assert "conflict commit" not in out and "resolve (keep an" not in out and "fetch" in out, out
    repo = pygit2.Repository(str(part.path))
    assert str(repo.references["refs/heads/main"].target) == fork_tip
    assert str(repo.references[f"refs/heads/forksync/{unit['id']}"].target) == fork_tip    # nothing picked
    assert part.attempts() == [] and gone not in repo


def test_git_merge_tree_on_an_absent_blob_reports_none_without_fetching(pair, tmp_path):
    """apply hands a conflict to ``git merge-tree``; a blob it needs that the clone lacks is
    "git cannot merge" (None: apply then builds the conflict from libgit2), never a fetch."""
    u = pair.u
    part = blobless_clone(pair.fork.path, tmp_path / "part.git",
                          missing=[blob_of(pair.up.path, u["u2"], "lib/Dialect/Ops.cpp")])
    repo = pygit2.Repository(str(part.path))
    assert git_merge_tree(repo, repo[u["u2"]].peel(pygit2.Commit), repo.revparse_single("main").peel(pygit2.Tree)) \
        is None
    assert part.attempts() == []


def test_bench_resolve_on_a_partial_clone_uses_what_is_there(tmp_path, monkeypatch, capsys):
    """bench resolve replays the fork's resolved picks; upstream's lag.txt of u2 is absent (the
    pick p_lag needs it): that file is set aside, the rest scored, nothing fetched."""
    h = build_history(tmp_path / "repo")
    lag = h.git("hash-object", "--stdin", input="alpha\nbeta two\ngamma\n")
    part = blobless_clone(h.path, tmp_path / "part.git", missing=[lag])
    monkeypatch.chdir(tmp_path)
    g = ["--fork", str(part.path), "--upstream", str(part.path), "--upstream-ref", "upstream", "--fork-ref", "main"]
    assert main([*g, "bench", "resolve", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["picks"]["all"] == 7 and doc["files_set_aside"]["paths"] == ["lag.txt"]
    assert part.attempts() == []


def test_a_clone_by_older_git_that_names_extensions_partialclone_opens(pair, tmp_path):
    """git 2.19–2.26 marked a partial clone with ``extensions.partialclone`` (format version 1),
    which libgit2 refuses to open unless told the extension is supported: every command stopped
    with a traceback. In a fresh process (the setting is process-wide), status and plan read such
    a clone, and fetch nothing."""
    part = blobless_clone(pair.fork.path, tmp_path / "old.git", missing=[])
    for key, value in (("core.repositoryformatversion", "1"), ("extensions.partialclone", "origin")):
        subprocess.run(["git", "-C", str(part.path), "config", key, value], check=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for command in (["status", "--json"], ["plan", "--json"]):
        p = subprocess.run([sys.executable, str(ROOT / "app.py"), *argv(part), *command], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        assert json.loads(p.stdout)
    assert part.attempts() == []


def test_continue_to_a_conflict_whose_checkout_needs_an_absent_blob_names_it_and_keeps_the_fold(pair, tmp_path,
                                                                                                  capsys):
    """The chain u2, u4, u10 stops at each pick (each changes foldMul, which the fork changed too);
    u10 also adds docs/fold.md, whose blob the clone lacks. The picks need only Ops.cpp, so apply
    and the folds work; moving the worktree to u10's conflict commit needs docs/fold.md. Instead of
    git's own words: the fold is kept, the line names the blob, its path and what to do, no
    worktree is left half moved, and once the blob is there the chain is finished as usual."""
    u = pair.u
    u10 = pair.up.commit("[dialect] fold mul thrice (#110)", {"lib/Dialect/Ops.cpp": ops(add=" + 1", mul=" + 3"),
                                                               "docs/fold.md": "fold notes\n"}, when=T0 + 2000)
    run_git(pair.fork.path, "fetch", "-q", "upstream")
    note = blob_of(pair.up.path, u10, "docs/fold.md")
    part = blobless_clone(pair.fork.path, tmp_path / "part.git", missing=[note])
    chain = f"chain-{u['u2'][:12]}"
    wt = tmp_path / ".forksync-resolve" / chain
    assert main([*argv(part), "apply", chain]) == 1
    assert main([*argv(part), "resolve", chain]) == 0
    resolve_markers(wt / "lib/Dialect/Ops.cpp", "  return r + 1 + 0 /* fork */;\n")
    assert main([*argv(part), "resolve", chain, "--continue"]) == 1         # folded; the worktree is at u4's now
    resolve_markers(wt / "lib/Dialect/Ops.cpp", "  return r + 2 + 0 /* fork */;\n")
    capsys.readouterr()
    assert main([*argv(part), "resolve", chain, "--continue"]) == 1         # folded; stopped again at u10
    out, err = capsys.readouterr()
    repo = pygit2.Repository(str(part.path))
    cc = str(repo.references[f"refs/heads/forksync/{chain}"].target)
    assert "Traceback" not in out + err and "fatal:" not in err, err
    assert err.splitlines()[-1] == (
        f"forksync: stopped again at a conflict in upstream {u10} (conflict commit {cc[:12]}), but the worktree "
        f"cannot move there: the repository lacks objects the checkout of {cc[:12]} needs: docs/fold.md (blob "
        f"{note[:12]}) (a partial clone or snapshot?); in a partial clone `git -C {part.path} cat-file -e {note}` "
        "fetches it from its promisor remote (a plain `git fetch` keeps the clone's filter), else use a complete "
        f"clone; then `forksync resolve {chain}` sets up a worktree at it")
    assert subjects(part, chain) == ["[RESOLVED] [dialect] fold mul overflow (#102)",
                                     "[RESOLVED] [dialect] fold mul again (#104)", "[CONFLICT] [dialect] fold mul thrice"]
    assert len(run_git(part.path, "for-each-ref", f"refs/forksync/resolutions/{chain}").splitlines()) == 2
    assert not wt.exists() and not (part.path / "forksync-resolve" / f"{chain}.json").exists()
    assert run_git(part.path, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert part.attempts() == []
    assert main([*argv(part), "resolve", chain]) == 2        # u10 adds it: the marker check reads it
    assert capsys.readouterr().err == absent_line(
        part, f"the checkout of {cc[:12]}", "docs/fold.md", note,
        "`forksync status --json` lists the missing objects it met (missing_objects)") + "\n"
    assert not wt.exists() and part.attempts() == []
    assert fetched(part, "fold notes\n") == note
    assert main([*argv(part), "resolve", chain]) == 0
    resolve_markers(wt / "lib/Dialect/Ops.cpp", "  return r + 3 + 0 /* fork */;\n")
    assert main([*argv(part), "resolve", chain, "--continue"]) == 0
    assert subjects(part, chain)[2:] == ["[RESOLVED] [dialect] fold mul thrice (#110)"]
    assert (wt.exists(), part.attempts()) == (False, [])


def test_continue_whose_next_pick_needs_an_absent_blob_says_so_and_keeps_the_fold(pair, tmp_path, capsys):
    """u4's Ops.cpp is absent: the fold of u2's resolution works, the pick of u4 after it cannot be
    made. That is no conflict to resolve: the line apply writes (the blob, its path, what to do)
    and the command that goes on once it is there, never "stopped again at a conflict"."""
    u = pair.u
    gone = blob_of(pair.up.path, u["u4"], "lib/Dialect/Ops.cpp")
    part = blobless_clone(pair.fork.path, tmp_path / "part.git", missing=[gone])
    chain = f"chain-{u['u2'][:12]}"
    wt = tmp_path / ".forksync-resolve" / chain
    assert main([*argv(part), "apply", chain]) == 1
    assert main([*argv(part), "resolve", chain]) == 0
    resolve_markers(wt / "lib/Dialect/Ops.cpp", "  return r + 1 + 0 /* fork */;\n")
    capsys.readouterr()
    assert main([*argv(part), "resolve", chain, "--continue"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-2:] == [
        f"  error: cannot pick {u['u4'][:12]}: the repository lacks blob {gone[:12]} of lib/Dialect/Ops.cpp (a partial "
        f"clone or snapshot?); in a partial clone `git -C {part.path} cat-file -e {gone}` fetches it from its promisor "
        "remote (a plain `git fetch` keeps the clone's filter), else use a complete clone; then apply again",
        f"  1 commit(s) not applied; nothing was written for {u['u4'][:12]}: `forksync apply {chain}` once the error "
        "is fixed"]
    assert "stopped again" not in out
    assert subjects(part, chain) == ["[RESOLVED] [dialect] fold mul overflow (#102)"]
    assert not wt.exists() and part.attempts() == []
    assert fetched(part, ops(add=" + 1", mul=" + 2")) == gone
    assert main([*argv(part), "apply", chain]) == 1                  # u4 conflicts, as on a full clone
    assert subjects(part, chain)[1:] == ["[CONFLICT] [dialect] fold mul again"]


def absent_line(part, what: str, path: str, blob: str, then: str) -> str:
    """The one line ``forksync resolve`` prints for a blob its step needs that the clone lacks."""
    return (f"forksync: the repository lacks objects {what} needs: {path} (blob {blob[:12]}) (a partial clone or "
            f"snapshot?); in a partial clone `git -C {part.path} cat-file -e {blob}` fetches it from its promisor "
            f"remote (a plain `git fetch` keeps the clone's filter), else use a complete clone; {then}")


@pytest.fixture
def stopped_elsewhere(pair, capsys):
    """The chain u2 stopped at its conflict commit in the full repository (where the App applied
    it): a blob-less clone of that is what a person resolving it locally has."""
    chain = f"chain-{pair.u['u2'][:12]}"
    assert main(["--fork", str(pair.fork.path), "--upstream", str(pair.up.path), "apply", chain]) == 1
    capsys.readouterr()
    return chain


@pytest.mark.parametrize("side", ["base", "upstream", "fork"])
def test_resolve_whose_conflict_needs_an_absent_blob_names_it_then_resolves_once_it_is_there(pair, tmp_path, capsys,
                                                                                             stopped_elsewhere, side):
    """To know which files u2 conflicts in (and so what the resolution may change), resolve merges
    u2 onto the conflict commit's parent again: it reads the three Ops.cpp (u2's parent's,
    u2's, the fork's), which the conflict commit's checkout does not. With one absent: one line
    naming it — not "upstream is not in this repository" (the commit is there) nor a traceback —,
    exit 2, no worktree; once the blob is there, resolve and --continue as on a full clone."""
    u, chain = pair.u, stopped_elsewhere
    src, rev = {"base": (pair.up.path, f"{u['u2']}^"), "upstream": (pair.up.path, u["u2"]),
                "fork": (pair.fork.path, "main")}[side]
    gone = blob_of(src, rev, "lib/Dialect/Ops.cpp")
    part = blobless_clone(pair.fork.path, tmp_path / "part.git", missing=[gone])
    tip = str(pygit2.Repository(str(part.path)).references[f"refs/heads/forksync/{chain}"].target)
    wt = tmp_path / ".forksync-resolve" / chain
    assert main([*argv(part), "resolve", chain]) == 2
    assert capsys.readouterr() == ("", absent_line(
        part, f"the pick of upstream {u['u2'][:12]} onto {pair.fork_tip[:12]}", "lib/Dialect/Ops.cpp", gone,
        f"nothing was changed; run `forksync resolve {chain}` again once it is there") + "\n")
    assert str(pygit2.Repository(str(part.path)).references[f"refs/heads/forksync/{chain}"].target) == tip
    assert not (tmp_path / ".forksync-resolve").exists() and part.attempts() == []
    assert fetched(part, run_git(src, "cat-file", "blob", gone)) == gone
    assert main([*argv(part), "resolve", chain]) == 0
    resolve_markers(wt / "lib/Dialect/Ops.cpp", "  return r + 1 + 0 /* fork */;\n")
    assert main([*argv(part), "resolve", chain, "--continue"]) == 1       # folded; stopped again at u4
    assert subjects(part, chain) == ["[RESOLVED] [dialect] fold mul overflow (#102)", "[CONFLICT] [dialect] fold mul again"]
    assert part.attempts() == []


def test_continue_whose_pushed_resolution_needs_an_absent_blob_names_it_and_keeps_it(pair, tmp_path, capsys,
                                                                                     stopped_elsewhere):
    """A resolution pushed on the conflict commit from elsewhere and fetched into a blob-less clone:
    --continue checks it for markers, which reads its Ops.cpp. Absent: one line naming it, exit
    2, the branch as it was; once the blob is there the same --continue folds it."""
    chain = stopped_elsewhere
    elsewhere = tmp_path / "elsewhere"
    run_git(pair.fork.path, "worktree", "add", "-q", str(elsewhere), f"forksync/{chain}")
    resolve_markers(elsewhere / "lib/Dialect/Ops.cpp", "  return r + 1 + 0 /* fork */;\n")
    run_git(elsewhere, "commit", "-qam", "Resolve foldMul")
    resolved = blob_of(pair.fork.path, f"forksync/{chain}", "lib/Dialect/Ops.cpp")
    head = run_git(pair.fork.path, "rev-parse", f"forksync/{chain}").strip()
    part = blobless_clone(pair.fork.path, tmp_path / "part.git", missing=[resolved])
    assert main([*argv(part), "resolve", chain, "--continue"]) == 2
    assert capsys.readouterr() == ("", absent_line(
        part, f"the conflict-marker check of {head[:12]}", "lib/Dialect/Ops.cpp", resolved,
        f"nothing was changed; run `forksync resolve {chain} --continue` again once it is there") + "\n")
    assert str(pygit2.Repository(str(part.path)).references[f"refs/heads/forksync/{chain}"].target) == head
    assert part.attempts() == []
    assert fetched(part, run_git(pair.fork.path, "cat-file", "blob", resolved)) == resolved
    assert main([*argv(part), "resolve", chain, "--continue"]) == 1       # folded; stopped again at u4
    assert subjects(part, chain) == ["[RESOLVED] [dialect] fold mul overflow (#102)", "[CONFLICT] [dialect] fold mul again"]
    assert part.attempts() == []
