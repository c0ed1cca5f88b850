"""The dashboard's history: snapshot rows, retention, the ledger snapshot's queries and the backfill."""
from __future__ import annotations

import json
from datetime import date

import pytest

from bot.config.forksync import load_config
from bot.demo.scenario import build_scenario
from bot.model import CommitInfo, Disposition, Evidence, FileChange, LedgerEntry
from bot.store import Store
from bot.sync import snapshots
from bot.sync import store as sync_store
from bot.sync.status import SyncStatus


@pytest.mark.parametrize("paths, areas", [
    (["lib/Dialect/TritonGPU/IR/Ops.cpp", "README.md"], ("(root)", "lib/Dialect")),
    (["python/triton/compiler/compiler.py", "python/setup.py"], ("python", "python/triton")),
    ([], ()),
])
def test_areas_of(paths, areas):
    assert snapshots.areas_of(paths) == areas


def test_backfill_dates_end_at_the_last_day():
    assert snapshots.backfill_dates(date(2026, 1, 1), date(2026, 1, 20), 7) == ["2026-01-06", "2026-01-13", "2026-01-20"]
    assert snapshots.backfill_dates(date(2026, 1, 2), date(2026, 1, 1), 1) == []
    with pytest.raises(ValueError, match="at least 1 day"):
        snapshots.backfill_dates(date(2026, 1, 1), date(2026, 1, 2), 0)


def _entry(i: int, d: Disposition, subject: str, pr: int | None = None) -> LedgerEntry:
    return LedgerEntry(sha=f"{i:040x}", index=i, disposition=d, pr=pr, subject=subject, committer_time=1_700_000_000 + i * 86_400,
                       fork_commit="f" * 40 if d == Disposition.PICKED else None,
                       evidence=(Evidence("trailer:Upstream-Commit", "f" * 40, "Upstream-Commit: …"),) if d == Disposition.PICKED else ())


def test_ledger_snapshot_queries():
    store = Store()
    entries = [_entry(1, Disposition.PICKED, "[BACKEND] Fix the layout pass (#10)", 10),
               _entry(2, Disposition.PENDING, "[FRONTEND] Clone saved exception (#11)", 11),
               _entry(3, Disposition.DEFERRED_BLOCKED, "[BACKEND] 100% wider_tiles", 12)]
    commits = {e.sha: CommitInfo(e.sha, (), e.subject, files=(FileChange("lib/Dialect/x.cpp" if e.index != 2 else "python/triton/a.py"),))
               for e in entries}
    sync_store.replace_ledger(store, "o/f", snapshots.ledger_rows("o/f", entries, commits))
    sync_store.replace_ledger(store, "o/other", snapshots.ledger_rows("o/other", entries[:1], commits))
    total, rows = sync_store.query_ledger(store, "o/f")
    assert total == 3 and [r["idx"] for r in rows] == [1, 2, 3]
    assert sync_store.query_ledger(store, "o/f", dispositions=("PENDING", "PICKED"))[0] == 2
    assert [r["idx"] for r in sync_store.query_ledger(store, "o/f", area="python/triton")[1]] == [2]
    assert [r["idx"] for r in sync_store.query_ledger(store, "o/f", pr=12)[1]] == [3]
    assert [r["idx"] for r in sync_store.query_ledger(store, "o/f", words="backend layout")[1]] == [1]
    assert [r["idx"] for r in sync_store.query_ledger(store, "o/f", words="100%")[1]] == [3]
    assert sync_store.query_ledger(store, "o/f", words="1_0")[0] == 0          # LIKE wildcards are literal
    assert [r["idx"] for r in sync_store.query_ledger(store, "o/f", sha_prefix="0" * 39 + "2")[1]] == [2]
    assert [r["idx"] for r in sync_store.query_ledger(store, "o/f", since=1_700_000_000 + 2 * 86_400)[1]] == [2, 3]
    assert [r["idx"] for r in sync_store.query_ledger(store, "o/f", offset=1, limit=1)[1]] == [2]
    counts, areas = sync_store.ledger_summary(store, "o/f")
    assert counts == {"PICKED": 1, "PENDING": 1, "DEFERRED_BLOCKED": 1} and areas == ["lib/Dialect", "python/triton"]
    sync_store.replace_ledger(store, "o/f", [])
    assert sync_store.query_ledger(store, "o/f")[0] == 0 and sync_store.query_ledger(store, "o/other")[0] == 1


def test_a_commit_this_sync_pushed_is_in_flight_in_its_snapshot():
    """The ledger a sync computes comes before it publishes: what it then pushed on a sync branch
    is IN_FLIGHT in the stored ledger, as the next computation says (not PENDING until then)."""
    entries = [_entry(i, d, f"c{i}", i) for i, d in enumerate(
        (Disposition.PICKED, Disposition.PENDING, Disposition.PENDING, Disposition.DEFERRED_BLOCKED, Disposition.PENDING,
         Disposition.PENDING), start=1)]
    sha = {e.index: e.sha for e in entries}
    branches = [{"branch": "forksync/chain-a", "pushed_tip": "a" * 40, "conflict_sha": sha[3],
                 "shas_json": json.dumps([sha[2], sha[3], sha[4]])},        # stopped at 3: carries only 2
                {"branch": "forksync/bundle-d", "pushed_tip": "d" * 40, "conflict_sha": "",
                 "shas_json": json.dumps([sha[4], sha[5]])},               # 4 is decided: stays
                {"branch": "forksync/bundle-e", "pushed_tip": "", "conflict_sha": "",    # never pushed
                 "shas_json": json.dumps([sha[6]])}]
    out = snapshots.with_published(entries, branches)
    assert [e.disposition.value for e in out] == ["PICKED", "IN_FLIGHT", "PENDING", "DEFERRED_BLOCKED", "IN_FLIGHT", "PENDING"]
    assert (out[1].evidence[-1], out[4].evidence[-1]) == (Evidence("in-flight", None, "forksync/chain-a"),
                                                          Evidence("in-flight", None, "forksync/bundle-d"))
    assert out[0] is entries[0] and snapshots.with_published(entries, []) == entries


def test_snapshots_are_kept_for_the_configured_time_and_a_failed_fetch_keeps_the_last_numbers():
    store = Store()
    st = SyncStatus(repo="o/f", frontier="a" * 40, days_behind=2.5, backlog=7, not_reached=3, upstream_seen_at=1000.0,
                    units=({"id": "bundle-1"},))
    snapshots.record_sync(store, st, at=1000.0, contiguous_lag_days=4.0, ledger=[], keep_days=10)
    snapshots.record_sync(store, st, at=1000.0 + 5 * 86_400, contiguous_lag_days=4.5, ledger=[], keep_days=10)
    snapshots.record_sync(store, st, at=1000.0 + 6 * 86_400, keep_days=10)
    failed = SyncStatus(**{**st.__dict__, "last_fetch_error": "fetch failed: 502"})
    snapshots.record_sync(store, failed, at=1000.0 + 11 * 86_400, keep_days=10)
    rows = sync_store.snapshots(store, "o/f")
    assert [(r["at"], r["source"], r["contiguous_lag_days"], r["backlog"], r["open_units"]) for r in rows] == [
        (1000.0 + 5 * 86_400, "sync", 4.5, 7, 1), (1000.0 + 6 * 86_400, "refresh", 4.5, 7, 1),
        (1000.0 + 11 * 86_400, "fetch-failed", 4.5, 7, 1)]
    assert rows[-1]["fetch_error"] == "fetch failed: 502" and rows[-1]["upstream_as_of"] == 1000.0
    assert sync_store.last_snapshot(store, "o/f")["source"] == "fetch-failed"
    assert sync_store.last_snapshot(store, "o/none") is None


def test_backfill_computes_the_series_of_the_forks_history_once(tmp_path):
    s = build_scenario(tmp_path / "demo")
    cfg = load_config(str(s.config_path))
    store = Store()
    n = snapshots.backfill(store, "o/f", cfg, days=6, step_days=2, today=date(2026, 1, 8))
    rows = sync_store.snapshots(store, "o/f")
    # the scenario's histories begin on 2026-01-05: 01-02 and 01-04 have no point
    assert n == len(rows) == 2
    assert [r["at"] for r in rows] == [snapshots._end_of_day(d) for d in ("2026-01-06", "2026-01-08")]
    assert all(r["source"] == "backfill" for r in rows)
    last = rows[-1]
    assert len(last["frontier"]) == 40 and last["backlog"] >= 1
    total, _ = sync_store.query_ledger(store, "o/f")
    assert total == 18
    assert snapshots.backfill(store, "o/f", cfg, days=6, step_days=2, today=date(2026, 1, 8)) == 0


def test_backfill_marks_the_points_before_the_forks_first_own_commit(tmp_path):
    """The ledger scenario's fork makes its first own commit on 2026-01-31 (F + 1 s): before it its
    tip is upstream's merge base, and its growing lag (1, 11, 18 days) is upstream's own past. Those
    points are kept (git cannot tell whether the fork existed) but marked, so the plot leaves them
    out of the fork's lines; the point after the first own commit is an ordinary backfill."""
    from tests.support.ledger_scenario import build

    s = build(tmp_path / "repos")
    cfg_path = tmp_path / "forksync.yml"
    cfg_path.write_text(f"cache_dir: {tmp_path / 'cache'}\nupstream:\n  url: {s.up.path}\nfork:\n  url: {s.fork.path}\n")
    store = Store()
    assert snapshots.backfill(store, "o/f", load_config(str(cfg_path)), days=40, step_days=10, today=date(2026, 2, 1)) == 4
    rows = sync_store.snapshots(store, "o/f")
    assert [(r["at"], r["source"], r["days_behind"]) for r in rows] == [
        (snapshots._end_of_day("2026-01-02"), "backfill-before-fork", 1.0),
        (snapshots._end_of_day("2026-01-12"), "backfill-before-fork", 11.0),
        (snapshots._end_of_day("2026-01-22"), "backfill-before-fork", 18.0),
        (snapshots._end_of_day("2026-02-01"), "backfill", 2.0)]


def test_ledger_rows_name_the_configured_areas_when_there_are_some():
    """The ledger page's area filter offers the names the plan labels units with (``areas:`` in
    forksync.yml); a config without areas falls back to directories."""
    from bot.config.forksync import parse_config_text

    cfg = parse_config_text("areas:\n  - {name: amd, paths: ['third_party/amd/**']}\n"
                            "  - {name: layouts, paths: ['lib/Dialect/TritonGPU/**', 'include/**/Layout*.h']}\n")
    e = _entry(1, Disposition.PENDING, "AMD: layouts")
    c = CommitInfo(sha=e.sha, parents=("0" * 40,), message="AMD: layouts",
                   files=(FileChange("third_party/amd/lib/X.cpp"), FileChange("lib/Dialect/TritonGPU/IR/Y.cpp"),
                          FileChange("README.md")))
    [row] = snapshots.ledger_rows("o/f", [e], {e.sha: c}, cfg)
    assert row["areas"] == ",amd,layouts,"
    [row] = snapshots.ledger_rows("o/f", [e], {e.sha: c}, parse_config_text(""))
    assert row["areas"] == ",(root),lib/Dialect,third_party/amd,"
    [row] = snapshots.ledger_rows("o/f", [e], {e.sha: c})
    assert row["areas"] == ",(root),lib/Dialect,third_party/amd,"
