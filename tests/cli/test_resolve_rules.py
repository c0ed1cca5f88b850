"""``forksync apply`` and ``resolve --continue`` put each fresh conflict to the configured rules,
as the App does: a delete/modify conflict the person just resolved by keeping the fork's deletion
is decided by ``fork-deleted`` at the chain's next picks, said on the terminal and in each pick's
File / Action / Reason block (real git repositories)."""
from __future__ import annotations

import json

import pytest

from bot.cli.main import main
from bot.demo.repobuilder import run_git
from tests.support.deleted_chain import PATH, build_deleted_chain


def _log(h, branch):
    out = run_git(h.fork.path, "log", "--reverse", "--format=%B%x1e", branch, "^main")
    return [e.strip("\n") for e in out.split("\x1e") if e.strip()]


@pytest.fixture
def deleted_chain(tmp_path, monkeypatch, capsys):
    h = build_deleted_chain(tmp_path)
    monkeypatch.chdir(tmp_path)
    g = ["--fork", str(h.fork.path), "--upstream", str(h.up.path)]
    return h, g


def test_a_deletion_kept_once_is_kept_by_the_rule_at_the_chains_next_picks(deleted_chain, tmp_path, capsys):
    h, g = deleted_chain
    unit = h.unit
    assert main(["apply", unit, *g]) == 1        # the fork's history never met it: a person decides
    out = capsys.readouterr().out
    assert f"stopped at {h.u['u1']}" in out and f"conflict (delete/modify): {PATH}" in out
    assert main(["resolve", unit, *g]) == 0
    capsys.readouterr()
    wt = tmp_path / ".forksync-resolve" / unit
    (wt / PATH).unlink()
    assert main(["resolve", unit, "--continue", "--reason", f"{PATH}=the fork dropped the legacy backend", *g]) == 0
    out = capsys.readouterr().out
    assert f"File: {PATH}  Action: deleted  Reason: the fork dropped the legacy backend" in out
    # the next two picks: the same decision, by the rule, and the terminal says so
    for u in ("u2", "u3"):
        assert f"rules resolved the conflict of upstream {h.u[u][:12]}" in out
    assert "(rule fork-deleted)" in out and f"forksync/{unit} is whole" in out and not wt.exists()
    log = _log(h, f"forksync/{unit}")
    assert len(log) == 3
    for entry, u in zip(log[1:], ("u2", "u3")):
        assert entry.startswith(f"[RESOLVED] [legacy] tweak {u[1]} (#10{u[1]})")
        assert f"- File: {PATH}\n  Action: deleted\n  Reason: the fork deleted this file and kept it deleted" in entry
        assert "(rule `fork-deleted`)" in entry
        assert "Resolved-by: forksync rules (fork-deleted)" in entry and f"Upstream-Commit: {h.u[u]}" in entry
    tree = run_git(h.fork.path, "ls-tree", "-r", "--name-only", f"forksync/{unit}")
    assert PATH not in tree.split()
    grep = run_git(h.fork.path, "grep", "-c", "<<<<<<<", f"forksync/{unit}", check=False)
    assert not grep.strip()


def test_apply_puts_a_fresh_conflict_to_the_rules(deleted_chain, capsys):
    """The fork's landed history kept the deletion once (a resolved pick of u1): `forksync apply`
    asks the rules before it stops, and the chain of u2, u3 is whole without a person."""
    h, g = deleted_chain
    h.fork.commit(f"[RESOLVED] [legacy] tweak 1 (#101)\n\nConflict Resolution:\n- File: {PATH}\n  Action: deleted\n"
                  f"  Reason: the fork dropped it\n\nUpstream-Commit: {h.u['u1']}\n", when=h_time(h), allow_empty=True)
    unit = f"chain-{h.u['u2'][:12]}"
    assert main(["apply", unit, *g]) == 0
    out = capsys.readouterr().out
    assert f"rules resolved the conflict of upstream {h.u['u2'][:12]}" in out
    assert f"rules resolved the conflict of upstream {h.u['u3'][:12]}" in out
    assert "stopped at" not in out
    log = _log(h, f"forksync/{unit}")
    assert len(log) == 2 and all("Resolved-by: forksync rules (fork-deleted)" in e for e in log)


def h_time(h) -> int:
    return int(run_git(h.fork.path, "log", "-1", "--format=%ct").strip()) + 10


def test_a_resolution_that_keeps_the_fork_everywhere_is_recorded_as_no_op(deleted_chain, tmp_path, capsys):
    h, g = deleted_chain
    unit = h.unit
    assert main(["apply", unit, *g]) == 1
    assert main(["resolve", unit, *g]) == 0
    (tmp_path / ".forksync-resolve" / unit / PATH).unlink()
    assert main(["resolve", unit, "--continue", *g]) == 0
    out = capsys.readouterr().out
    # the terminal says before landing what the ledger will record, for the person's pick and the rules'
    picks = run_git(h.fork.path, "rev-list", "--reverse", f"forksync/{unit}", "^" + h.fork_tip).split()
    for f, u in zip(picks, ("u1", "u2", "u3")):
        assert (f"  pick {f[:12]} changes nothing in the fork: once it lands, the ledger records upstream "
                f"{h.u[u][:12]} NO_OP") in out
    assert out.count("changes nothing in the fork") == 3
    run_git(h.fork.path, "merge", "-q", "--ff-only", f"forksync/{unit}")      # the chain lands
    assert main(["ledger", "export", "--compact", *g]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = {e["sha"]: e for e in doc["entries"]}
    first = run_git(h.fork.path, "rev-list", "--reverse", f"forksync/{unit}", "^" + h.fork_tip).split()[0]
    entry = got[h.u["u1"]]
    assert (entry["disposition"], entry["fork_commit"]) == ("NO_OP", first)
    resolver = run_git(h.fork.path, "log", "-1", "--format=%(trailers:key=Resolved-by,valueonly)", first).strip()
    assert resolver and entry["reason"] == f"its pick {first[:12]} changes nothing in the fork (resolved by {resolver})"
    # the rules kept the fork's deletion at the next picks: each changes nothing, each is NO_OP too
    assert [got[h.u[u]]["disposition"] for u in ("u2", "u3")] == ["NO_OP", "NO_OP"]
