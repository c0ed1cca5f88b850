"""``forksync triage nightly`` and ``triage extract`` on report files: the deployed nightly path in
local mode (issues kept in the store), and against the local GitHub over HTTP."""
from __future__ import annotations

import json

import pytest

from bot.cli.main import main

DOT = "python.test.unit.language.test_core"
LLVM = "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32"
SMEM = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, "
        "Hardware limit: 232448. Reducing block sizes or `num_stages` may help.")


def junit(cases: dict[str, str | None]) -> str:
    """JUnit XML as pytest writes it: ``name → failure text`` (None: passed)."""
    rows = []
    for name, fail in cases.items():
        inner = f'<failure message="{fail.splitlines()[-1][:80]}">{fail}</failure>' if fail else ""
        rows.append(f'<testcase classname="{DOT}" name="{name}" time="0.5">{inner}</testcase>')
    return ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="%d">%s'
            "</testsuite></testsuites>" % (len(rows), "".join(rows)))


CASES = [f"test_dot[{n}-{d}]" for n in (16, 32, 64, 128) for d in ("fp16", "fp32")]


def night(tmp_path, name, failing: dict[str, str]):
    p = tmp_path / f"{name}.xml"
    p.write_text(junit({c: failing.get(c) for c in CASES + ["test_add"]}))
    return p


def triage(tmp_path, capsys, run, date, *reports, extra=()):
    rc = main(["triage", "nightly", "--db", str(tmp_path / "t.db"), "--run", run, "--date", date,
               "--commit", f"{int(date[-2:]):040x}", "--platform", "h200", *extra, *map(str, reports)])
    out = capsys.readouterr().out
    assert rc == 0, out
    return json.loads(out)


def brief(out):
    return {k: sorted((x["key"] if k != "updated" else (x["key"], x["failed"])) for x in v)
            for k, v in out.items() if isinstance(v, list) and v}


def test_three_nights_in_local_mode(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # night 1: an LLVM crash in 4 of test_dot's 8 cases, shared memory in 2 others, and a log with no GPU
    fail1 = {**{c: LLVM for c in CASES[:4]}, **{c: SMEM for c in CASES[4:6]}}
    log = tmp_path / "lit-h200.log"
    log.write_text("2026-12-01T00:00:01Z + python3 -m pytest\n2026-12-01T00:00:02Z RuntimeError: No CUDA GPUs are available\n")
    out = triage(tmp_path, capsys, "n1", "2026-12-01", night(tmp_path, "n1", fail1), log)
    assert out["records"] == 10 and out["commit"] == f"{1:040x}"
    (opened,) = out["opened"]
    assert opened["class"] == "real" and opened["issue"] == 1
    assert opened["tests"] == [f"python/test/unit/language/test_core.py::{c}" for c in sorted(CASES[:4])]
    assert opened["title"] == "[nightly crash] test_dot (4 cases): LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.bfly.i32"
    assert [x["class"] for x in out["pending"]] == ["real"] and len(out["pending"][0]["tests"]) == 2
    assert [(x["class"], x["tests"]) for x in out["infrastructure"]] == [("infrastructure", ["job:lit-h200"])]
    # night 2: the crash is fixed, shared memory persists (opens: second nightly), a new crash in test_add
    fail2 = {**{c: SMEM for c in CASES[4:6]}, "test_add": "Fatal Python error: Segmentation fault"}
    out = triage(tmp_path, capsys, "n2", "2026-12-02", night(tmp_path, "n2", fail2))
    assert len(out["opened"]) == 2 and [x["failed"] for x in out["updated"]] == [False]
    assert {x["tests"][0].rsplit("::", 1)[1] for x in out["opened"]} == {"test_add", "test_dot[64-fp16]"}
    # night 3: all fixed; the same run again changes nothing
    for date in ("2026-12-03",):
        out = triage(tmp_path, capsys, "n3", date, night(tmp_path, "n3", {}))
    assert [x["failed"] for x in out["updated"]] == [False, False, False] and out["closed"] == []
    again = triage(tmp_path, capsys, "n3", "2026-12-03", night(tmp_path, "n3", {}))
    assert again["already_processed"] and brief(again) == {}
    # two more clean nights: the LLVM fault (fixed on night 2) closes on night 4 though test_dot's
    # other cases failed with another fault on night 2; the others close on night 5
    out = triage(tmp_path, capsys, "n4", "2026-12-04", night(tmp_path, "n4", {}))
    assert [x["issue"] for x in out["closed"]] == [1]
    out = triage(tmp_path, capsys, "n5", "2026-12-05", night(tmp_path, "n5", {}))
    assert sorted(x["issue"] for x in out["closed"]) == [2, 3]
    assert main(["triage", "status", "--db", str(tmp_path / "t.db")]) == 0
    status = capsys.readouterr().out
    assert status.count(" closed ") == 3 and "5 nightly run(s) processed" in status


async def test_nightly_against_the_local_github(tmp_path, fake_github, capsys, monkeypatch):
    import asyncio

    from tests.support.github import make_source_repo

    monkeypatch.chdir(tmp_path)
    make_source_repo(tmp_path / "src", [{"README.md": "fork\n"}])
    repo = fake_github.create_repo("meta/triton", source=tmp_path / "src")
    fake_github.add_collaborator(repo, "alice", "write")
    fake_github.add_token("alice-token", "alice")
    url, token = fake_github.url, "alice-token"
    args = ["triage", "nightly", "--db", str(tmp_path / "g.db"), "--run", "n1", "--date", "2026-12-01",
            "--commit", "a" * 40, "--repo", "meta/triton", "--github-url", url, "--token", token,
            str(night(tmp_path, "n1", {CASES[0]: LLVM}))]
    rc = await asyncio.to_thread(main, args)
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["opened"][0]["issue"] == 1
    import aiohttp

    from bot.github.client import token_client
    async with aiohttp.ClientSession() as session:
        gh = token_client(session, token, base_url=url)
        issues = [i async for i in gh.getiter("/repos/meta/triton/issues?state=all")]
    assert [i["title"] for i in issues] == ["[nightly crash] test_dot[16-fp16]: " + LLVM]


def test_extract_keeps_run_commit_platform_and_every_error(tmp_path, capsys):
    log = tmp_path / "ci.log"
    log.write_text("\n".join([
        "2026-12-01T00:00:00.1Z ____________________ test_dot[64-fp16] ____________________",
        "2026-12-01T00:00:00.2Z E   " + SMEM,
        "2026-12-01T00:00:00.3Z ____________________ test_add ____________________",
        "2026-12-01T00:00:00.4Z E   AssertionError: Tensor-likes are not close!",
        "2026-12-01T00:00:00.5Z =========================== short test summary info ============================",
        "2026-12-01T00:00:00.6Z FAILED python/test/unit/language/test_core.py::test_dot[64-fp16] - OutOfResources: out of resource",
        "2026-12-01T00:00:00.7Z FAILED python/test/unit/language/test_core.py::test_add - AssertionError: Tensor-likes are not close!",
        "2026-12-01T00:00:00.8Z ========================= 2 failed, 5 passed in 3.2s =========================",
    ]))
    assert main(["triage", "extract", str(log), "--run", "nightly-7", "--commit", "c" * 40, "--platform", "h200"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(r["test"], r["outcome"], r["run"], r["commit"], r["platform"]) for r in rows] == [
        ("python/test/unit/language/test_core.py::test_dot[64-fp16]", "failed", "nightly-7", "c" * 40, "h200"),
        ("python/test/unit/language/test_core.py::test_add", "failed", "nightly-7", "c" * 40, "h200")]
    assert "Required: 262144" in rows[0]["text"] and "Tensor-likes are not close!" in rows[1]["text"]


@pytest.mark.parametrize("date,error", [("2026-13-01", "expected YYYY-MM-DD"), ("yesterday", "expected YYYY-MM-DD")])
def test_nightly_rejects_a_bad_date(tmp_path, capsys, date, error):
    rc = main(["triage", "nightly", "--db", str(tmp_path / "t.db"), "--run", "n", "--date", date, str(tmp_path / "x")])
    assert rc == 2 and error in capsys.readouterr().err


def test_an_older_nightly_is_refused_a_resent_one_is_a_no_op_and_two_on_one_day_both_count(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    crash = {c: LLVM for c in CASES[:2]}
    triage(tmp_path, capsys, "n2", "2026-12-02T06:00", night(tmp_path, "n2", crash), extra=("--repo", "meta/a"))
    rc = main(["triage", "nightly", "--db", str(tmp_path / "t.db"), "--run", "n1", "--date", "2026-12-02",
               "--repo", "meta/a", str(night(tmp_path, "n1", {}))])
    assert rc == 2 and capsys.readouterr().err.startswith(
        "forksync: nightly n1 (2026-12-02) is older than n2 (2026-12-02T06:00), the newest nightly already triaged for meta/a;")
    # another fork's nightlies have their own order
    assert brief(triage(tmp_path, capsys, "b1", "2026-12-01", night(tmp_path, "b1", {}), extra=("--repo", "meta/b"))) == {}
    # the newest nightly re-sent: idempotent as ever
    again = triage(tmp_path, capsys, "n2", "2026-12-02T06:00", night(tmp_path, "n2", crash), extra=("--repo", "meta/a"))
    assert again["already_processed"] and all(again[k] == [] for k in ("opened", "updated", "closed", "reopened"))
    # a second nightly of the same time (two on one day, dated alike) is not older: it counts
    out = triage(tmp_path, capsys, "n2b", "2026-12-02T06:00", night(tmp_path, "n2b", crash), extra=("--repo", "meta/a"))
    assert [(x["issue"], x["failed"]) for x in out["updated"]] == [(1, True)]
    assert main(["triage", "status", "--db", str(tmp_path / "t.db"), "--repo", "meta/a"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[-4:] == ["2", "2", "2026-12-02", "2026-12-02"]
    assert lines[-1] == "1 root cause(s) of meta/a; 2 nightly run(s) processed"


def test_a_store_from_before_nightlies_kept_their_time_still_refuses_an_older_one(tmp_path, capsys, monkeypatch):
    # a store written before each processed nightly's time was kept: the versioned step finds the
    # times again where they are still written (a root cause's failing nightlies, a test's last green)
    from bot.store import Store

    monkeypatch.chdir(tmp_path)
    for run, failing in (("n2", {c: LLVM for c in CASES[:2]}), ("n3", {})):
        triage(tmp_path, capsys, run, f"2026-12-0{run[1]}", night(tmp_path, run, failing), extra=("--repo", "meta/a"))
    with Store(tmp_path / "t.db") as store:
        store.conn.execute("UPDATE triage_runs SET nightly_at = NULL")
        store.conn.execute("DELETE FROM _sqlite_migrations WHERE name = '0003_triage_runs_know_when_they_ran'")
    with Store(tmp_path / "t.db") as store:
        assert sorted(store.conn.execute("SELECT run, nightly_at FROM triage_runs")) == [
            ("n2", 1_796_169_600), ("n3", 1_796_256_000)]
    rc = main(["triage", "nightly", "--db", str(tmp_path / "t.db"), "--run", "n1", "--date", "2026-12-01",
               "--repo", "meta/a", str(night(tmp_path, "n1", {}))])
    assert rc == 2 and "is older than n3 (2026-12-03)" in capsys.readouterr().err


def test_a_nightly_without_a_commit_names_none_in_the_status(tmp_path, capsys, monkeypatch):
    # JUnit reports name no commit and --commit is optional: the status says nothing of a commit
    # rather than showing empty backticks
    from bot.store import Store
    from bot.triage.local_issues import ISSUES

    monkeypatch.chdir(tmp_path)
    assert main(["triage", "nightly", "--db", str(tmp_path / "t.db"), "--run", "n1", "--date", "2026-12-01",
                 "--repo", "meta/a", str(night(tmp_path, "n1", {c: LLVM for c in CASES[:2]}))]) == 0
    with Store(tmp_path / "t.db") as store:
        (body,) = [r["body"] for r in store.db[ISSUES.name].rows]
    assert "Latest nightly: `n1` (2026-12-01 00:00): **failed**." in body and "| `n1` | — | 2026-12-01 00:00 |" in body
    for i in (2, 3, 4):                 # three clean nightlies close it, the comment naming no commit
        capsys.readouterr()
        assert main(["triage", "nightly", "--db", str(tmp_path / "t.db"), "--run", f"n{i}", "--date", f"2026-12-0{i}",
                     "--repo", "meta/a", str(night(tmp_path, f"n{i}", {}))]) == 0
    assert [x["issue"] for x in json.loads(capsys.readouterr().out)["closed"]] == [1]
    with Store(tmp_path / "t.db") as store:
        (comments,) = [json.loads(r["comments"]) for r in store.db[ISSUES.name].rows]
    assert comments[-1].startswith("Closing: the affected tests ran and passed on 3 consecutive nightlies (latest `n4`).")


def test_each_fork_has_its_own_root_causes(tmp_path, capsys, monkeypatch):
    # two forks' nightlies in one store: the same test failing on one fork and passing on the other
    # are two stories — the other fork's clean nightlies neither update nor close this fork's cause
    monkeypatch.chdir(tmp_path)
    fail = {c: LLVM for c in CASES[:2]}
    out = triage(tmp_path, capsys, "a1", "2026-12-01", night(tmp_path, "a1", fail), extra=("--repo", "meta/a"))
    assert [x["issue"] for x in out["opened"]] == [1]
    for i in (1, 2, 3):
        out = triage(tmp_path, capsys, f"b{i}", f"2026-12-0{i}", night(tmp_path, f"b{i}", {}), extra=("--repo", "meta/b"))
        assert brief(out) == {}
    # the same run id on another fork is another nightly (dated after that fork's newest: not older)
    out = triage(tmp_path, capsys, "a1", "2026-12-04", night(tmp_path, "a1b", fail), extra=("--repo", "meta/b"))
    assert not out.get("already_processed") and [x["issue"] for x in out["opened"]] == [1]
    assert main(["triage", "status", "--db", str(tmp_path / "t.db"), "--repo", "meta/a"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[1:4] == ["real", "open", "#1"] and lines[-1] == "1 root cause(s) of meta/a; 1 nightly run(s) processed"
    assert main(["triage", "status", "--db", str(tmp_path / "t.db"), "--repo", "meta/b"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 root cause(s) of meta/b; 4 nightly run(s) processed"


def test_the_configured_fork_is_the_default_and_takes_unassigned_rows(tmp_path, capsys, monkeypatch):
    # rows of a store written before nightlies named their fork (repo = "") and its local issues
    # (kept under the old default name local/fork) go to the configured fork on its next nightly
    from bot.store import Store
    from bot.triage import store as triage_store
    from bot.triage.local_issues import ISSUES

    monkeypatch.chdir(tmp_path)
    (tmp_path / "forksync.yml").write_text("upstream: {url: https://github.com/triton-lang/triton}\n"
                                           "fork: {url: https://github.com/meta/triton}\n")
    first = triage(tmp_path, capsys, "n1", "2026-12-01", night(tmp_path, "n1", {c: LLVM for c in CASES[:2]}),
                   extra=("--repo", "local/fork"))
    (key,) = [x["key"] for x in first["opened"]]
    with Store(tmp_path / "t.db") as store:
        for t in ("triage_tracked", "triage_runs", "triage_meta", "triage_green"):
            store.conn.execute(f"UPDATE {t} SET repo = ''")
        assert triage_store.repos(store) == [""]
    out = triage(tmp_path, capsys, "n2", "2026-12-02", night(tmp_path, "n2", {c: LLVM for c in CASES[:2]}))
    assert out["updated"] == [{**out["updated"][0], "key": key, "issue": 1, "failed": True}] and out["opened"] == []
    with Store(tmp_path / "t.db") as store:
        assert triage_store.repos(store) == ["meta/triton"]
        assert [r["repo"] for r in store.db[ISSUES.name].rows] == ["meta/triton"]
    assert main(["triage", "status", "--db", str(tmp_path / "t.db")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 root cause(s) of meta/triton; 2 nightly run(s) processed"
