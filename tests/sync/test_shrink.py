"""Which open sync units lost upstream commits to a decision while their PR was open, and what
forksync does with each: a table of inputs and exact outputs for the pure rule."""
from dataclasses import replace

import pytest

from bot.model import Disposition, Evidence, LedgerEntry
from bot.sync.shrink import CLOSE, NOT_UPSTREAM, NOT_UPSTREAM_REASON, REBUILD, TELL, Decided, OpenUnit, Shrink, decided_of, shrinks

A, B, C, F = "a" * 40, "b" * 40, "c" * 40, "f" * 40


def entry(sha: str, disposition: Disposition, reason: str = "", evidence: tuple = (), fork_commit=None,
          subject: str = "") -> LedgerEntry:
    return LedgerEntry(sha=sha, index=0, disposition=disposition, reason=reason, evidence=evidence,
                       fork_commit=fork_commit, subject=subject or f"subject {sha[:1]}")


IN_FLIGHT = Evidence("in-flight", None, "forksync/bundle-x")
DEFER_A = entry(A, Disposition.DEFERRED_BLOCKED, "waits for LLVM",
                (Evidence("note", None, "defer by fiona: waits for LLVM"),))
SKIP_B = entry(B, Disposition.SKIP_FOR_CURRENT_BASE, "not on this base",
               (Evidence("trailer:Upstream-Skipped", F, "not on this base"),))
PICKED_B = entry(B, Disposition.PICKED, "", (Evidence("trailer:Upstream-Commit", F, ""),), fork_commit=F)
NO_OP_C = entry(C, Disposition.NO_OP, "already in the fork",
                (Evidence("note", None, "no-op by forksync: already in the fork"),))


@pytest.mark.parametrize("e,expected", [
    (DEFER_A, Decided(A, "subject a", "DEFERRED_BLOCKED", "waits for LLVM", "fiona", "")),
    (SKIP_B, Decided(B, "subject b", "SKIP_FOR_CURRENT_BASE", "not on this base", "", F)),
    (PICKED_B, Decided(B, "subject b", "PICKED", "", "", F)),
    (NO_OP_C, Decided(C, "subject c", "NO_OP", "already in the fork", "forksync", "")),
    # a reconsidered and decided-again commit: the newest note speaks
    (entry(A, Disposition.WONT_PORT, "never", (Evidence("note", None, "defer by fiona: later"),
                                               Evidence("note", None, "reconsider by gus"),
                                               Evidence("note", None, "wont-port by hal: never"))),
     Decided(A, "subject a", "WONT_PORT", "never", "hal", "")),
])
def test_decided_of_reads_who_and_where_from_the_evidence(e, expected):
    assert decided_of(e) == expected


def unit(carried, *, ours=True, pr=4, uid="chain-x"):
    return OpenUnit(unit_id=uid, branch=f"forksync/{uid}", kind=uid.split("-")[0], pr=pr, carried=tuple(carried),
                    ours=ours)


def ledger(*entries):
    return {e.sha: e for e in entries}


#: forksync's own branch (its tip the one it pushed) whose picks fold a person's resolution
HAND_X = replace(unit([A, B, C], uid="bundle-x"), resolved_by_hand=True)
FLY = {s: entry(s, Disposition.IN_FLIGHT, "", (IN_FLIGHT,)) for s in (A, B, C)}


@pytest.mark.parametrize("units,led,expected", [
    # nothing decided: nothing to do
    ([unit([A, B])], ledger(FLY[A], FLY[B]), []),
    # the chain's only commit deferred: closed
    ([unit([A])], ledger(DEFER_A), [Shrink(unit([A]), CLOSE, (decided_of(DEFER_A),), ())]),
    # every commit decided (a deferral, a hand pick): closed, even over a person's commits
    ([unit([A, B], ours=False)], ledger(DEFER_A, PICKED_B),
     [Shrink(unit([A, B], ours=False), CLOSE, (decided_of(DEFER_A), decided_of(PICKED_B)), ())]),
    # one of three decided, forksync's own branch: rebuilt without it, order kept
    ([unit([A, B, C], uid="bundle-x")], ledger(FLY[A], SKIP_B, FLY[C]),
     [Shrink(unit([A, B, C], uid="bundle-x"), REBUILD, (decided_of(SKIP_B),), (A, C))]),
    # the same with a person's commit on the branch: told, not touched
    ([unit([A, B, C], ours=False, uid="bundle-x")], ledger(FLY[A], SKIP_B, FLY[C]),
     [Shrink(unit([A, B, C], ours=False, uid="bundle-x"), TELL, (decided_of(SKIP_B),), (A, C))]),
    # forksync's own commits, one a pick folding a person's conflict resolution: told, never rebuilt
    # (picked again it would stop back at its conflict); every commit decided: closed all the same
    ([HAND_X], ledger(FLY[A], SKIP_B, FLY[C]), [Shrink(HAND_X, TELL, (decided_of(SKIP_B),), (A, C))]),
    ([HAND_X], ledger(DEFER_A, SKIP_B, NO_OP_C),
     [Shrink(HAND_X, CLOSE, (decided_of(DEFER_A), decided_of(SKIP_B), decided_of(NO_OP_C)), ())]),
    # a commit the ledger does not know (a rewritten upstream) or reads PENDING is not taken for decided
    ([unit([A, B])], ledger(FLY[A], entry(B, Disposition.PENDING)), []),
    ([unit([A, B])], ledger(DEFER_A), [Shrink(unit([A, B]), REBUILD, (decided_of(DEFER_A),), (B,))]),
    # a unit with no PR (refused before one opened) or carrying nothing is left to the plan
    ([unit([A], pr=0), unit([], uid="chain-y")], ledger(DEFER_A), []),
    # several units: each on its own, in the order given
    ([unit([A], uid="chain-x"), unit([B, C], uid="bundle-y")], ledger(DEFER_A, NO_OP_C, FLY[B]),
     [Shrink(unit([A], uid="chain-x"), CLOSE, (decided_of(DEFER_A),), ()),
      Shrink(unit([B, C], uid="bundle-y"), REBUILD, (decided_of(NO_OP_C),), (B,))]),
])
def test_shrinks(units, led, expected):
    assert shrinks(units, led) == expected


GONE_B = Decided(B, "Speed up b (#7)", NOT_UPSTREAM, NOT_UPSTREAM_REASON, "", "")


@pytest.mark.parametrize("units,led,dropped,expected", [
    # upstream force-pushed without the only commit the unit carries: closed
    ([unit([B])], ledger(), {B: "Speed up b (#7)"}, [Shrink(unit([B]), CLOSE, (GONE_B,), ())]),
    # one of two dropped on forksync's own branch: rebuilt without it; on a person's: told
    ([unit([A, B])], ledger(FLY[A]), {B: "Speed up b (#7)"}, [Shrink(unit([A, B]), REBUILD, (GONE_B,), (A,))]),
    ([unit([A, B], ours=False)], ledger(FLY[A]), {B: "Speed up b (#7)"},
     [Shrink(unit([A, B], ours=False), TELL, (GONE_B,), (A,))]),
    # a dropped commit and a deferred one: both decided, in the branch's order
    ([unit([B, A])], ledger(DEFER_A), {B: "Speed up b (#7)"},
     [Shrink(unit([B, A]), CLOSE, (GONE_B, decided_of(DEFER_A)), ())]),
    # a sha the ledger holds is the ledger's, whatever the caller says
    ([unit([A])], ledger(FLY[A]), {A: "subject a"}, []),
])
def test_shrinks_takes_commits_upstream_no_longer_has_for_decided(units, led, dropped, expected):
    assert shrinks(units, led, dropped) == expected
