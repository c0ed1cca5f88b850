"""Upstream's branch moved back: which carried commits upstream no longer reaches are held and
which are dropped (a table of inputs and exact outputs for the pure rule), and the edge that reads
it off a real repository and keeps the tip moved back from."""
from dataclasses import replace
from pathlib import Path

import pygit2
import pytest

from bot.config.forksync import ForksyncConfig
from bot.model import InFlightBranch
from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.rewind import Rewind, degrades, held_to_recheck, held_units, landed_taken, moved_back, record, rewind
from bot.sync.service import REWOUND_REF, upstream_moved_back, upstream_rewind
from bot.sync.shrink import OpenUnit
from bot.sync.status import SyncStatus
from bot.sync.status_issue import render_status
from bot.validation.gate_inputs import upstream_rewound
from tests.support.github import commit_files, git, make_source_repo

# upstream's history:  O - A - B - C        (C: the tip forksync last synced)
#                           \    \- B2      (B2: a rewrite of C's place)
#                            \- D           (D: a new commit on the rewound tip A)
#                                    C - E  (E: upstream went on past C)
PARENTS = {"O": "", "A": "O", "B": "A", "C": "B", "E": "C", "D": "A", "B2": "B"}


def reaches(older: str, newer: str) -> bool:
    while newer:
        if newer == older:
            return True
        newer = PARENTS.get(newer, "")
    return False


GONE_BC = {"B": "subject B", "C": "subject C"}


@pytest.mark.parametrize("last,tip,gone,expected", [
    # a rewind: the tip moved back to an ancestor of the tip last synced; both commits it took are held
    ("C", "A", GONE_BC, Rewind("C", "A", GONE_BC, {})),
    # the same rewind seen again (``last`` is the tip it moved back from, kept while it holds)
    ("C", "A", {"C": "subject C", "B": "subject B"}, Rewind("C", "A", GONE_BC, {})),
    # moved back further while held: still the same rewind, from C
    ("C", "O", GONE_BC, Rewind("C", "O", GONE_BC, {})),
    # rewind, then upstream returns to C: nothing is gone, nothing held
    ("C", "C", {}, Rewind("", "C", {}, {})),
    # rewind, then upstream goes on past C
    ("C", "E", {}, Rewind("", "E", {}, {})),
    # rewind, then new commits on the rewound tip: the rewind was meant, B and C are dropped
    ("C", "D", GONE_BC, Rewind("", "D", {}, GONE_BC)),
    # a real rewrite (the new tip is no ancestor of the old): today's behaviour, dropped
    ("C", "B2", {"C": "subject C"}, Rewind("", "B2", {}, {"C": "subject C"})),
    # first sync: no tip synced before, nothing to compare with
    ("", "A", GONE_BC, Rewind("", "A", {}, GONE_BC)),
    # a rewind whose old tip reaches none of the gone commits (an earlier rewrite took them): dropped
    ("B", "A", {"X": "subject X"}, Rewind("", "A", {}, {"X": "subject X"})),
    # a rewind that takes back B only, while X (off C's history) was gone already: X stays dropped
    ("B", "A", {"B": "subject B", "X": "subject X"}, Rewind("B", "A", {"B": "subject B"}, {"X": "subject X"})),
    # the old tip unknown (its objects absent): no ancestry can be told, dropped as before
    ("Z", "A", GONE_BC, Rewind("", "A", {}, GONE_BC)),
])
def test_rewind(last, tip, gone, expected):
    assert rewind(last, tip, gone, reaches) == expected


def unit(uid: str, pr: int, *carried: str) -> OpenUnit:
    return OpenUnit(unit_id=uid, branch=f"forksync/{uid}", kind="bundle", pr=pr, carried=carried, ours=True)


def test_held_units_and_the_record_name_the_units_carrying_a_held_commit():
    r = rewind("C", "A", GONE_BC, reaches)
    units = [unit("bundle-b", 4, "A", "B"), unit("bundle-x", 5, "A"), unit("chain-c", 6, "C")]
    held = held_units(units, r.held)
    assert [u.unit_id for u in held] == ["bundle-b", "chain-c"]
    assert record(r, "main", held, 1000.0) == {
        "ref": "main", "from": "C", "to": "A",
        "commits": [{"sha": "B", "subject": "subject B"}, {"sha": "C", "subject": "subject C"}],
        "units": [{"id": "bundle-b", "branch": "forksync/bundle-b", "pr": 4, "shas": ["B"]},
                  {"id": "chain-c", "branch": "forksync/chain-c", "pr": 6, "shas": ["C"]}],
        "landed": [], "at": 1000.0}
    assert record(rewind("C", "D", GONE_BC, reaches), "main", held, 1000.0) is None


def test_upstream_rewind_reads_a_real_repository_and_keeps_the_old_tip_while_it_holds(tmp_path: Path):
    """Upstream's ``main`` in a real repository, moved back and then built on: the edge reads
    ancestry with libgit2 and keeps the tip moved back from under :data:`REWOUND_REF` only while
    the rewind holds (a gc would prune it otherwise)."""
    src = tmp_path / "up"
    o, a = make_source_repo(src, [{"a.py": "a = 0\n"}, {"a.py": "a = 1\n"}])
    b = commit_files(src, {"b.py": "b = 1\n"}, "Set b (#1)")
    c = commit_files(src, {"c.py": "c = 1\n"}, "Set c (#2)")
    bare = tmp_path / "work.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(bare))
    ref = "refs/remotes/upstream/main"
    git(bare, "update-ref", ref, c)
    branch = [InFlightBranch(name="forksync/chain-x", unit_id="chain-x", kind="chain", tip=None,
                             upstream_shas=(b, c))]
    assert upstream_rewind(bare, ref, branch, {}, c) == Rewind("", c, {}, {})
    git(bare, "update-ref", ref, a)
    r = upstream_rewind(bare, ref, branch, {}, c)
    assert r == Rewind(c, a, {b: "Set b (#1)", c: "Set c (#2)"}, {})
    assert str(pygit2.Repository(str(bare)).references[REWOUND_REF].target) == c
    git(bare, "update-ref", ref, o)          # further back, still the same rewind
    assert upstream_rewind(bare, ref, branch, {}, c).since == c
    git(src, "reset", "-q", "--hard", a)
    d = commit_files(src, {"d.py": "d = 1\n"}, "Set d (#3)")
    git(bare, "fetch", "-q", str(src), f"+refs/heads/main:{ref}")
    assert upstream_rewind(bare, ref, branch, {}, c) == Rewind("", d, {}, {b: "Set b (#1)", c: "Set c (#2)"})
    assert REWOUND_REF not in pygit2.Repository(str(bare)).references


RECORD = {"ref": "main", "from": "c" * 40, "to": "a" * 40,
          "commits": [{"sha": "b" * 40, "subject": "Set b (#1)"}, {"sha": "c" * 40, "subject": "Set c (#2)"}],
          "units": [{"id": "chain-x", "branch": "forksync/chain-x", "pr": 7, "shas": ["b" * 40, "c" * 40]}],
          "at": 1000.0}


def test_the_record_is_stored_and_read_back_and_makes_syncing_degraded(tmp_path: Path):
    """The status's ``rewound`` survives the store, and while it stands the fork's syncing is
    degraded (``/healthz`` and the dashboard warn, ``forksync_degraded``), saying from which tip to which."""
    store = Store(tmp_path / "s.db")
    sync_store.save_status(store, SyncStatus(repo="meta/fork", rewound=RECORD))
    st = sync_store.load_status(store, "meta/fork")
    assert st.rewound == RECORD
    assert st.degraded() == (f"upstream's main moved back from {'c' * 12} to {'a' * 12}: 1 unit(s) held, carrying 2 "
                             "commit(s) it no longer has, until upstream builds on the rewound history or returns")
    sync_store.save_status(store, replace(st, rewound=None))
    st = sync_store.load_status(store, "meta/fork")
    assert st.rewound is None and st.degraded() == ""


def test_the_gate_holds_only_the_held_units_pr():
    st = SyncStatus(repo="meta/fork", rewound=RECORD)
    said = upstream_rewound(st, 7)
    assert said.startswith(f"upstream's `main` moved back from `{'c' * 12}` to `{'a' * 12}`, and this branch carries "
                           f"2 commit(s) it no longer has (`{'b' * 12}`, `{'c' * 12}`)"), said
    assert upstream_rewound(st, 8) == "" and upstream_rewound(SyncStatus(repo="meta/fork"), 7) == "" \
        and upstream_rewound(None, 7) == ""


# the record of a rewind that holds B and C, moved back from C to A (the status's ``rewound``)
PRIOR = {"ref": "main", "from": "C", "to": "A",
         "commits": [{"sha": "B", "subject": "subject B"}, {"sha": "C", "subject": "subject C"}],
         "units": [{"id": "chain-c", "branch": "forksync/chain-c", "pr": 6, "shas": ["B", "C"]}], "at": 1000.0}


def reaches_without_bc(older: str, newer: str) -> bool:
    """The working repository cloned again after the rewind: B and C, which upstream no longer
    has, are absent, so no ancestry through them can be read."""
    return "B" not in (older, newer) and "C" not in (older, newer) and reaches(older, newer)


@pytest.mark.parametrize("tip,gone,expected", [
    # still at the rewound tip: the hold stands on its record (the commits cannot be read any more)
    ("A", {}, Rewind("C", "A", GONE_BC, {})),
    # moved back further: the same hold
    ("O", {}, Rewind("C", "O", GONE_BC, {})),
    # new commits on the rewound tip: the rewind was meant, the recorded commits are dropped
    ("D", {}, Rewind("", "D", {}, GONE_BC)),
])
def test_a_hold_stands_on_its_record_when_the_commits_it_holds_are_gone_from_the_repository(tip, gone, expected):
    """A working repository cloned again (after a crash, on a new host) no longer has the commits
    upstream took back, nor the tip it moved back from: what tells the rewind from a rewrite is
    gone with them. The hold must not end for that — its PRs would lose the gate's hold and could
    land a change upstream took back —, nor may its commits be forgotten once upstream builds on
    the rewound history (their units would never be closed)."""
    assert rewind("C", tip, gone, reaches_without_bc, PRIOR) == expected


def test_a_rewind_that_holds_no_open_unit_is_not_recorded():
    """Commits carried only by branches with no open unit (a kept branch, a refused PR) hold
    nothing: no warning "0 units held" stands on the status issue and /healthz."""
    r = rewind("C", "A", GONE_BC, reaches)
    assert r.since == "C" and record(r, "main", [], 1000.0) is None


def test_the_edge_keeps_no_ref_to_a_tip_the_repository_lacks(tmp_path: Path):
    """A hold standing on its record after the repository lost the tip moved back from: the ref
    that would keep that tip cannot point at a missing object, and the edge says the hold as before."""
    src = tmp_path / "up"
    o, a = make_source_repo(src, [{"a.py": "a = 0\n"}, {"a.py": "a = 1\n"}])
    bare = tmp_path / "work.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(bare))
    ref = "refs/remotes/upstream/main"
    git(bare, "update-ref", ref, a)
    b, c = "b" * 40, "c" * 40         # upstream took them back; this clone never had them
    branch = [InFlightBranch(name="forksync/chain-x", unit_id="chain-x", kind="chain", tip=None,
                             upstream_shas=(b, c))]
    prior = {**RECORD, "from": c, "to": a}
    assert upstream_rewind(bare, ref, branch, {}, c, prior) == Rewind(c, a, {b: "Set b (#1)", c: "Set c (#2)"}, {})
    assert REWOUND_REF not in pygit2.Repository(str(bare)).references


def test_the_rewind_is_stored_alone_as_soon_as_it_is_judged(tmp_path: Path):
    """The sync stores the rewind before it publishes (the gate reads it for every PR event),
    writing that column only: the rest of the status stays as stored until the sync saves it."""
    store = Store(tmp_path / "s.db")
    sync_store.save_status(store, SyncStatus(repo="meta/fork", upstream_head="c" * 40, days_behind=3.5))
    sync_store.save_rewound(store, "meta/fork", RECORD)
    st = sync_store.load_status(store, "meta/fork")
    assert (st.rewound, st.upstream_head, st.days_behind) == (RECORD, "c" * 40, 3.5)
    sync_store.save_rewound(store, "meta/fork", None)
    assert sync_store.load_status(store, "meta/fork").rewound is None


@pytest.mark.parametrize("last,tip,expected", [
    ("C", "A", True),        # moved back
    ("C", "C", False),       # the same tip
    ("C", "E", False),       # went on
    ("C", "D", False),       # built on the rewound history
    ("C", "B2", False),      # a rewrite
    ("", "A", False),        # the first sync
])
def test_moved_back_is_the_rewind_table_without_the_carried_commits(last, tip, expected):
    assert moved_back(last, tip, reaches) is expected


def test_moved_back_stands_on_its_record_where_the_repository_lost_the_tip():
    prior = {**NOTICE, "from": "C", "to": "A"}
    assert moved_back("C", "A", reaches_without_bc, prior) and moved_back("C", "O", reaches_without_bc, prior)
    assert not moved_back("C", "D", reaches_without_bc, prior)


def test_landed_taken_names_the_commits_the_fork_picked_by_full_or_abbreviated_sha():
    b, c, x = "b" * 40, "c" * 40, "cc" + "d" * 38
    taken = {b: "Set b (#1)", c: "Set c (#2)", x: "Set x (#3)"}
    assert landed_taken(taken, [c[:12], "e" * 40, "bbb"]) == {c: "Set c (#2)"}
    assert landed_taken(taken, [x, b]) == {b: "Set b (#1)", x: "Set x (#3)"}
    assert landed_taken(taken, []) == {}


NOTICE = {"ref": "main", "from": "c" * 40, "to": "a" * 40, "commits": [], "units": [], "landed": [], "at": 1000.0}


def test_a_rewind_that_holds_no_unit_is_a_notice_and_degrades_only_with_landed_picks():
    """Upstream moved back past nothing an open unit carries: recorded with no units (a notice on
    the status issue and the dashboard), not degraded — unless the fork landed picks of commits it
    took, which forksync cannot take back by itself."""
    r = rewind("C", "A", GONE_BC, reaches)
    assert record(r, "main", [], 1000.0, moved_from="C") == {**NOTICE, "from": "C", "to": "A"}
    landed = record(Rewind("", "A"), "main", [], 1000.0, moved_from="C", landed={"B": "subject B"})
    assert landed == {**NOTICE, "from": "C", "to": "A", "landed": [{"sha": "B", "subject": "subject B"}]}
    assert record(Rewind("", "A"), "main", [], 1000.0) is None
    assert not degrades(NOTICE) and degrades(landed) and degrades(RECORD) and not degrades(None)
    assert SyncStatus(repo="meta/fork", rewound=NOTICE).degraded() == ""
    assert SyncStatus(repo="meta/fork", rewound={**NOTICE, "landed": [{"sha": "b" * 40, "subject": "Set b"}]}).degraded() == (
        f"upstream's main moved back from {'c' * 12} to {'a' * 12}: the fork has landed 1 pick(s) of commits it no "
        f"longer has ({'b' * 12}), until upstream builds on the rewound history or returns")
    assert upstream_rewound(SyncStatus(repo="meta/fork", rewound=NOTICE), 7) == ""


def test_the_status_issue_says_a_notice_and_names_the_landed_picks():
    note = render_status(SyncStatus(repo="meta/fork", rewound=NOTICE, upstream_seen_at=1000.0), stale_after_s=1e9,
                         alarm_after_s=1e9, now=1000.0)
    assert "> [!NOTE]\n> **Upstream's `main` moved back** from `cccccccccccc` to `aaaaaaaaaaaa`" in note, note
    assert "nothing is held" in note and "already landed" not in note
    body = render_status(SyncStatus(repo="meta/fork", upstream_seen_at=1000.0, rewound={
        **NOTICE, "landed": [{"sha": "b" * 40, "subject": "Set b (#1)"}]}), stale_after_s=1e9, alarm_after_s=1e9, now=1000.0)
    assert "> [!WARNING]\n> **Upstream's `main` moved back**" in body and "**already landed**" in body, body
    assert "The fork has landed 1 pick of upstream commits `main` no longer has (upstream as of " in body
    assert "- `bbbbbbbbbbbb` Set b (#1)" in body


def held_row(unit: str, stop: str, held: str = "f" * 40, kind: str = "chain") -> dict:
    return {"unit_id": unit, "branch": f"forksync/{unit}", "kind": kind, "conflict_sha": stop, "held_head": held}


@pytest.mark.parametrize("rows, rec, reached, expected", [
    # the record still holds the chain (its stop commit, its branch): not yet
    ([held_row("chain-x", "b" * 40)], RECORD, set(), []),
    # upstream reaches the stop commit again: checked, whatever the record says
    ([held_row("chain-x", "b" * 40)], RECORD, {"b" * 40}, ["chain-x"]),
    # the record ended (upstream returned, or built on the rewound history): checked — also a
    # record lost by a failed sync, or one never made (no sync saw the rewind)
    ([held_row("chain-x", "b" * 40)], None, set(), ["chain-x"]),
    ([held_row("chain-x", "b" * 40)], NOTICE, set(), ["chain-x"]),
    # held by the record through its branch alone (stop commit unknown on the row): not yet
    ([held_row("chain-x", "")], RECORD, set(), []),
    # another unit's rewind record: this chain's commit is not held by it
    ([held_row("chain-y", "d" * 40)], RECORD, set(), ["chain-y"]),
    # no push answered "held", or not a chain: nothing to check
    ([held_row("chain-x", "b" * 40, held=""), held_row("bundle-z", "d" * 40, kind="bundle")], None, {"d" * 40}, []),
    # the rows' order is kept
    ([held_row("chain-y", "d" * 40), held_row("chain-x", "b" * 40), held_row("chain-w", "e" * 40)], RECORD,
     {"e" * 40}, ["chain-y", "chain-w"]),
])
def test_held_to_recheck_names_the_held_resolutions_no_standing_rewind_holds(rows, rec, reached, expected):
    assert [r["unit_id"] for r in held_to_recheck(rows, rec, reached)] == expected


def test_the_held_head_is_written_on_an_open_row_and_cleared_only_while_it_names_that_head(tmp_path: Path):
    store = Store(tmp_path / "s.db")
    sync_store.save_branch(store, repo="meta/fork", branch="forksync/chain-x", unit_id="chain-x", kind="chain",
                           state="open", pr=7, conflict_sha="b" * 40)
    assert not sync_store.branch_row(store, "meta/fork", "forksync/chain-x").get("held_head")   # NULL: none
    assert sync_store.set_held_head(store, "meta/fork", "forksync/chain-x", "1" * 40)
    assert not sync_store.clear_held_head(store, "meta/fork", "forksync/chain-x", "2" * 40)     # another head's
    assert sync_store.branch_row(store, "meta/fork", "forksync/chain-x")["held_head"] == "1" * 40
    assert sync_store.clear_held_head(store, "meta/fork", "forksync/chain-x", "1" * 40)
    assert sync_store.branch_row(store, "meta/fork", "forksync/chain-x")["held_head"] == ""
    sync_store.save_branch(store, repo="meta/fork", branch="forksync/chain-x", unit_id="chain-x", state="closed")
    assert not sync_store.set_held_head(store, "meta/fork", "forksync/chain-x", "1" * 40)       # ended: not written


def test_upstream_moved_back_names_what_the_fork_merged_or_picked_of_what_it_took(tmp_path: Path):
    """Upstream ``O - A - B - C - D`` moved back to ``A``: the fork (a branch off ``A``) merged
    ``B`` and picked ``C`` (its ``Upstream-Commit:`` trailer), and has neither of ``D``. The edge
    names ``B`` and ``C`` as landed, keeps ``D``'s tip as :data:`REWOUND_REF`, and says nothing
    once upstream builds on ``A``."""
    src = tmp_path / "up"
    o, a = make_source_repo(src, [{"a.py": "a = 0\n"}, {"a.py": "a = 1\n"}])
    b = commit_files(src, {"b.py": "b = 1\n"}, "Set b (#1)")
    c = commit_files(src, {"c.py": "c = 1\n"}, "Set c (#2)")
    d = commit_files(src, {"d.py": "d = 1\n"}, "Set d (#3)")
    git(src, "checkout", "-q", "-b", "fork", a)
    git(src, "merge", "-q", "--no-ff", "-m", "Merge b", b)
    commit_files(src, {"c.py": "c = 1\n"}, f"Set c (#2)\n\nUpstream-Commit: {c}\n")
    fork = git(src, "rev-parse", "HEAD")
    bare = tmp_path / "work.git"
    git(tmp_path, "clone", "-q", "--bare", "--no-single-branch", str(src), str(bare))
    ref = "refs/remotes/upstream/main"
    git(bare, "update-ref", ref, a)
    rules = ForksyncConfig().provenance
    assert upstream_moved_back(bare, ref, d, None, fork, rules) == (d, {c: "Set c (#2)", b: "Set b (#1)"})
    assert str(pygit2.Repository(str(bare)).references[REWOUND_REF].target) == d
    git(bare, "update-ref", ref, d)
    assert upstream_moved_back(bare, ref, d, None, fork, rules) == ("", {})
