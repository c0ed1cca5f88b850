"""L3 queue and sign-off records on the real SQLite store."""
from __future__ import annotations

import pytest

from bot.config.forksync import parse_config_text
from bot.store import Store
from bot.validation.gate import AreaPolicy, SignOff
from bot.validation.signoff import (
    SignoffError,
    finish_l3,
    is_signed_off,
    l3_runs_for,
    next_l3,
    queue_l3,
    record_signoff,
    signoff_owners,
    signoffs_for,
)

CFG = parse_config_text("""
areas:
  - {name: llvm-pin, paths: [cmake/llvm-hash.txt], owners: [alice, bob], requires_l3: true}
  - {name: amd, paths: [third_party/amd/], owners: [carol]}
suites:
  - {name: e2e, level: L3, command: x, report: {format: junit, path: r}, min_tests: 1, platforms: [h200, mi350]}
  - {name: kernels, command: x, report: {format: junit, path: r}, min_tests: 1}
""")
H = "h" * 40


@pytest.fixture
def db(tmp_path):
    with Store(tmp_path / "forksync.db") as s:
        yield s


def test_signoff_by_owner_is_recorded_and_counted(db):
    owners = signoff_owners("llvm-pin", CFG.areas, ())
    assert owners == ("alice", "bob")
    record_signoff(db, "o/fork", 7, H, "llvm-pin", "bob", owners, time=300, comment_url="u")
    assert signoffs_for(db, "o/fork", 7) == (SignOff("llvm-pin", "bob", 300),)
    assert signoffs_for(db, "o/fork", 8) == ()
    assert is_signed_off("llvm-pin", owners, signoffs_for(db, "o/fork", 7), since=100) == "bob"
    assert is_signed_off("llvm-pin", owners, signoffs_for(db, "o/fork", 7), since=301) is None


def test_signoff_by_non_owner_is_refused(db):
    with pytest.raises(SignoffError, match=r"@dave is not an owner of `llvm-pin`; owners: @alice, @bob"):
        record_signoff(db, "o/fork", 7, H, "llvm-pin", "dave", ("alice", "bob"), time=1)
    assert signoffs_for(db, "o/fork", 7) == ()


def test_metric_owners_are_the_touched_areas_owners():
    assert signoff_owners("matmul:4096:bf16", CFG.areas, ("amd", "llvm-pin")) == ("alice", "bob", "carol")
    with pytest.raises(SignoffError, match="not a configured area"):
        signoff_owners("matmul:4096:bf16", CFG.areas, ())
    assert signoff_owners("amd", [AreaPolicy("amd", ("carol",))], ()) == ("carol",)
    assert signoff_owners("matmul:4096:bf16", CFG.areas, ("amd",), metrics=("matmul:4096:bf16",)) == ("carol",)
    with pytest.raises(SignoffError, match="no L3 run on this PR flagged a metric by that name; areas: amd, llvm-pin"):
        signoff_owners("llvm", CFG.areas, ("llvm-pin",), metrics=())


def test_l3_queue_lifecycle(db):
    runs = queue_l3(db, "o/fork", 7, H, "e2e", CFG.suites, "alice", time=10)
    assert [(r.platform, r.status) for r in runs] == [("h200", "queued"), ("mi350", "queued")]
    again = queue_l3(db, "o/fork", 7, H, "e2e", CFG.suites, "bob", time=11)
    assert [r.id for r in again] == [r.id for r in runs]          # not duplicated
    claimed = next_l3(db, "h200")
    assert claimed.id == runs[0].id and claimed.status == "running"
    assert next_l3(db, "h200") is None
    done = finish_l3(db, claimed.id, "pass", "https://x/runs/1", time=99)
    assert (done.status, done.verdict, done.finished_at) == ("done", "pass", 99)
    assert [(r.platform, r.status) for r in l3_runs_for(db, "o/fork", 7)] == [("h200", "done"), ("mi350", "queued")]
    with pytest.raises(SignoffError, match="no L3 suite named `kernels`; L3 suites: e2e"):
        queue_l3(db, "o/fork", 7, H, "kernels", CFG.suites, "alice", time=12)
    with pytest.raises(SignoffError, match="no L3 run with id 999"):
        finish_l3(db, 999, "pass", "", 1)


def test_an_owner_is_the_account_whatever_the_case_either_is_written_in(db):
    """forksync.yml may write an owner as ``Bob``; GitHub gives the commenter as ``bob``: one account."""
    record_signoff(db, "o/fork", 7, H, "llvm-pin", "bob", ("alice", "Bob"), time=300)
    record_signoff(db, "o/fork", 7, H, "llvm-pin", "ALICE", ("alice", "Bob"), time=301)
    assert signoffs_for(db, "o/fork", 7) == (SignOff("llvm-pin", "bob", 300), SignOff("llvm-pin", "ALICE", 301))
    assert is_signed_off("llvm-pin", ("Bob",), signoffs_for(db, "o/fork", 7), since=300) == "bob"
    with pytest.raises(SignoffError, match=r"@bobby is not an owner of `llvm-pin`"):
        record_signoff(db, "o/fork", 7, H, "llvm-pin", "bobby", ("Bob",), time=302)


def test_a_claimed_l3_run_is_put_back_or_claimed_again_once_stale(db):
    """A claim is a lease: a tick that failed puts its run back (release), and a run a dead worker
    left ``running`` is claimed again once its claim is older than ``stale_before`` — the clock
    is the caller's (no waiting in tests)."""
    from bot.validation import store as vstore
    from bot.validation.l3 import claim_lease_s

    [run, _] = queue_l3(db, "o/fork", 7, H, "e2e", CFG.suites, "alice", time=10)
    claimed = vstore.claim_l3(db, "h200", repo="o/fork", now=1000.0)
    assert (claimed.id, claimed.claimed_at) == (run.id, 1000.0)
    assert vstore.release_l3(db, run.id) is True
    assert vstore.claim_l3(db, "h200", repo="o/fork", now=2000.0).id == run.id
    lease = claim_lease_s(CFG.suites)
    assert lease == 3600 * 2 + 3600 + 120                      # the suite's default timeout, one retry, the grace
    assert vstore.claim_l3(db, "h200", repo="o/fork", now=2000.0 + lease - 1, stale_before=1999.0) is None
    again = vstore.claim_l3(db, "h200", repo="o/fork", now=2000.0 + lease + 1, stale_before=2001.0)
    assert (again.id, again.status, again.claimed_at) == (run.id, "running", 2000.0 + lease + 1)
    finish_l3(db, run.id, "pass", "", time=5000)
    assert vstore.release_l3(db, run.id) is False              # a finished run stays finished
    assert vstore.claim_l3(db, "h200", repo="o/fork", now=10 ** 9, stale_before=10 ** 9) is None
