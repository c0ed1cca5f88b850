"""``forksync resolve`` on a chain stopped at a conflict, as people really finish one: looking at
the branch in their own clone meanwhile, or committing their resolution in the worktree instead
of leaving it staged."""
from __future__ import annotations

import re

import pytest

from bot.cli.main import main
from bot.demo.repobuilder import run_git

OPS = "lib/Dialect/Ops.cpp"


def resolve_markers(path, replacement: str) -> None:
    text = path.read_text()
    path.write_text(re.sub(r"<<<<<<< fork\n.*?>>>>>>> [^\n]*\n", replacement, text, flags=re.S))




def test_continue_never_moves_the_branch_checked_out_in_the_persons_clone(stopped, tmp_path, capsys):
    """The person looks at the stopped chain in their own clone (`git checkout
    forksync/chain-…`), resolves in forksync's worktree and runs `--continue`. What they see: the
    fold moves the branch under their checkout — `git status` in their clone now shows the
    conflict markers staged as a change against the folded pick (a `git commit -a` puts them
    back) — and only then apply refuses the checked-out branch (exit 2). What they should see:
    `--continue` refuses up front, as `forksync apply` does ("checked out in …"), and nothing
    moves (bot/cli/resolve.py _continue)."""
    pair, g, unit = stopped
    tip = run_git(pair.fork.path, "rev-parse", f"forksync/{unit}").strip()
    run_git(pair.fork.path, "checkout", "-q", f"forksync/{unit}")
    assert main(["resolve", unit, *g]) == 0
    resolve_markers(tmp_path / ".forksync-resolve" / unit / OPS, "  return r + 1 + 0 /* fork */;\n")
    capsys.readouterr()
    rc = main(["resolve", unit, "--continue", *g])
    err = capsys.readouterr().err
    assert run_git(pair.fork.path, "status", "--porcelain").strip() == ""      # the person's checkout untouched
    assert run_git(pair.fork.path, "rev-parse", f"forksync/{unit}").strip() == tip
    assert rc == 2 and "checked out in" in err


def test_a_resolution_committed_in_the_worktree_is_kept_with_its_reason(stopped, tmp_path, capsys):
    """The person commits their resolution in the worktree (`git commit -a`) with the File /
    Reason lines the docs ask for, then runs `--continue`. What they see: the fold is made from a
    commit forksync writes in its place ("Resolve the conflicts of upstream …"), so the folded
    pick says "Reason: resolved by … in <forksync's sha>" instead of theirs, and their own commit
    is kept nowhere (the worktree and its reflog are removed). What they should see: their
    commit used as the resolution commit (its Reason in the Conflict Resolution block) and kept
    under refs/forksync/resolutions/<unit>/, as `--abort` keeps commits made in the worktree."""
    pair, g, unit = stopped
    assert main(["resolve", unit, *g]) == 0
    wt = tmp_path / ".forksync-resolve" / unit
    resolve_markers(wt / OPS, "  return r + 1 + 0 /* fork */;\n")
    run_git(wt, "-c", "user.name=Res Olver", "-c", "user.email=res@fork.example", "commit", "-q", "-a", "-m",
            "Resolve foldMul\n\nFile: lib/Dialect/Ops.cpp\nReason: keep the fork's tuning on top of the overflow fix\n")
    mine = run_git(wt, "rev-parse", "HEAD").strip()
    capsys.readouterr()
    assert main(["resolve", unit, "--continue", *g]) == 1          # folded, then stopped again at u4
    out = capsys.readouterr().out
    assert "Reason: keep the fork's tuning on top of the overflow fix" in out
    body = run_git(pair.fork.path, "log", "-1", "--format=%B", f"forksync/{unit}~1")
    assert "keep the fork's tuning on top of the overflow fix" in body
    kept = run_git(pair.fork.path, "for-each-ref", "--contains", mine, "--format=%(refname)", "refs/forksync/").split()
    assert kept, "the person's resolution commit is referenced nowhere after --continue"


def test_a_conflict_commit_the_person_amended_gets_one_answer_not_two_contradicting_ones(stopped, capsys):
    """The person resolves the conflict by fixing the file and `git commit --amend`ing the
    conflict commit (keeping its message, so its `Forksync-Conflict:` trailer). What they see:
    `forksync apply` says the chain is stopped at "conflict commit <amended sha> … (diff3
    markers)" and to finish it with `forksync resolve`; `forksync resolve` says the branch "has no
    conflict to resolve … every commit on it is a pick" and to run `forksync apply` — each sends
    them to the other, and neither says the commit is theirs (an amended conflict commit, never
    folded) nor what to do with it. What they should see: `resolve` names their amended commit
    and how to go on, never that every commit is a pick (bot/cli/resolve.py cmd_resolve,
    bot/git/resolution.py find_stop vs bot/git/apply.py _read_branch)."""
    pair, g, unit = stopped
    run_git(pair.fork.path, "checkout", "-q", f"forksync/{unit}")
    resolve_markers(pair.fork.path / OPS, "  return r + 1 + 0 /* fork */;\n")
    run_git(pair.fork.path, "commit", "-q", "-a", "--amend", "--no-edit")
    amended = run_git(pair.fork.path, "rev-parse", "HEAD").strip()
    run_git(pair.fork.path, "checkout", "-q", "main")
    assert main(["apply", unit, *g]) == 1
    out = capsys.readouterr().out
    assert f"conflict commit {amended[:12]}" in out and f"forksync resolve {unit}" in out
    main(["resolve", unit, *g])
    err = capsys.readouterr().err
    assert "every commit on it is a pick" not in err
    assert amended[:12] in err


@pytest.mark.parametrize("argv, says", [
    (["--base-url", "http://127.0.0.1:9"], "--base-url only apply with --agent"),
    (["--db", "budget.db"], "--db only apply with --agent"),
    (["--push", "origin"], "--push only apply with --continue"),
    (["--reason", "a.py=kept the fork's side"], "--reason only apply with --continue"),
    (["--agent", "--push", "origin"], "--push only apply with --continue"),
])
def test_a_flag_given_without_the_one_it_goes_with_is_refused_not_ignored(argv, says, capsys):
    """`forksync resolve chain-… --push origin` (without --continue) opened the worktree and said
    nothing of the push, and `--base-url` without `--agent` was dropped: a person believes the
    resolution was pushed, or that the agent used their URL. Each is refused, naming the flag it
    goes with, before anything is read or written."""
    assert main(["resolve", "chain-0123456789ab", *argv]) == 2
    assert says in capsys.readouterr().err


def test_the_advice_for_a_fork_refs_amended_conflict_commit_names_that_fork_refs_branch(tmp_path, monkeypatch, capsys):
    """The chain is stopped for main and for release (forksync/<unit> and forksync/release/<unit>),
    and the person amends release's conflict commit. `resolve <unit> --fork-ref release` finds
    release's branch, but its advice (templates/cli/resolve.txt.j2 ``amended``) says
    `git checkout forksync/<unit> && git reset --soft <release's conflict commit>`: run as written it
    moves main's sync branch onto release's history (the template builds forksync/{{ unit }}; so do
    ``no_conflict``, ``commits_on_top`` and ``aborted``)."""
    from tests.support.plan_repos import with_release_branch
    pair, g, rel = with_release_branch(tmp_path)
    fork = pair.fork
    monkeypatch.chdir(tmp_path)
    unit = f"chain-{pair.u['u2'][:12]}"
    assert main(["apply", unit, *g]) == 1 and main(["apply", unit, *rel]) == 1     # both stop at u2
    run_git(fork.path, "checkout", "-q", f"forksync/release/{unit}")
    resolve_markers(fork.path / OPS, "  return r + 1 + 0 /* fork */;\n")
    run_git(fork.path, "commit", "-q", "-a", "--amend", "--no-edit")
    amended = run_git(fork.path, "rev-parse", "HEAD").strip()
    run_git(fork.path, "checkout", "-q", "main")
    capsys.readouterr()
    assert main(["resolve", unit, *rel]) == 2
    err = capsys.readouterr().err
    assert amended[:12] in err
    assert f"checkout forksync/release/{unit} " in err, err
    assert f"forksync/{unit}" not in err, err


def test_the_next_command_for_a_fork_refs_branch_given_whole_names_that_branch(tmp_path, monkeypatch, capsys):
    """`resolve forksync/release/<unit>` (the branch given whole, the way `plan` lists it; no
    --fork-ref) opens release's conflict, but its `next` advice says `forksync resolve <unit>
    --continue`: the unit id alone and no --fork-ref (``_ref_arg`` is set from ``args.fork_ref``
    only). Run as written it reads the default branch's forksync/<unit> (main has the same chain
    stopped): "no worktree", and that error's own advice, `forksync resolve <unit>`, opens main's."""
    from tests.support.plan_repos import T0, build_pair
    pair = build_pair(tmp_path)
    fork = pair.fork
    fork.checkout("main", new_branch="release")
    fork.commit("[release] pin the version", {"README.md": "release 3.2\n"}, when=T0 + 300)
    fork.checkout("main")
    monkeypatch.chdir(tmp_path)
    g = ["--fork", str(fork.path), "--upstream", str(pair.up.path)]
    unit = f"chain-{pair.u['u2'][:12]}"
    assert main(["apply", unit, *g]) == 1 and main(["apply", unit, *g, "--fork-ref", "release"]) == 1
    capsys.readouterr()
    assert main(["resolve", f"forksync/release/{unit}", *g]) == 0
    out = capsys.readouterr().out
    assert "/.forksync-resolve/release/" in out
    advice = re.search(r"then: forksync resolve (\S+(?: --fork-ref \S+)?) --continue", out)
    assert advice, out
    assert advice.group(1) in (f"{unit} --fork-ref release", f"forksync/release/{unit}"), out


def test_the_agent_finishing_a_fork_refs_chain_leaves_the_default_branchs_resolution_alone(tmp_path, monkeypatch,
                                                                                          capsys):
    """The chain is stopped for main and for release; the person is resolving main's in its
    worktree (``forksync resolve <unit>``) and asks the agent for release's (``--agent --fork-ref
    release``). Each branch keeps its resolution state under its own name
    (``forksync-resolve/<unit>.json``, ``forksync-resolve/release/<unit>.json``), but the agent's
    run cleared the unit id's — main's: its ``--continue`` then said there was no worktree."""
    from bot.fakeanthropic import FakeAnthropic, Reply
    from tests.support.plan_repos import with_release_branch
    pair, g, rel = with_release_branch(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "k")
    unit = f"chain-{pair.u['u2'][:12]}"
    assert main(["apply", unit, *g]) == 1 and main(["apply", unit, *rel]) == 1     # both stop at u2
    assert main(["resolve", unit, *g]) == 0
    state = pair.fork.path / ".git" / "forksync-resolve" / f"{unit}.json"
    wt = tmp_path / ".forksync-resolve" / unit
    assert state.exists() and (wt / OPS).exists()
    resolve_markers(wt / OPS, "  return r + 1 + 0 /* fork */;\n")
    resolved = (wt / OPS).read_text()
    reply = Reply(tool_uses=[{"name": "resolve_conflicts", "input": {
        "files": [{"path": OPS, "content": resolved, "action": "kept both changes", "reason": "independent"}],
        "summary": "kept both"}}])
    with FakeAnthropic([reply], api_key="k").in_thread() as ant:
        main(["resolve", unit, *rel, "--agent", "--base-url", ant.base_url, "--db", str(tmp_path / "f.db")])
    out = capsys.readouterr()
    assert "the agent's pick" in out.out, out
    assert state.exists()
    # main's resolution goes on where the person left it: folded, then stopped at the next conflict
    assert main(["resolve", unit, *g, "--continue"]) == 1
    assert "folded: conflict commit" in capsys.readouterr().out
