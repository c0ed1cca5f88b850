"""``forksync status`` / ``ledger export`` / ``ledger show`` end to end on the scenario repos."""
from __future__ import annotations

import json

import pytest

from tests.support.cli import run
from tests.support.ledger_scenario import EXPECTED, build
from tests.support.ref_times import set_ref_times


@pytest.fixture(scope="module")
def scn(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    s = build(tmp / "repos")
    cfg = tmp / "forksync.yml"
    cfg.write_text(
        "provenance:\n  trailers:\n    - name: reactor\n"
        "      pattern: '^Reactor Cherry-pick Revision:\\s*(?P<sha>[0-9a-f]{7,40})'\n"
        f"cache_dir: {tmp / 'cache'}\n")
    s.argv = ["--config", str(cfg), "--upstream", str(s.up.path), "--fork", str(s.fork.path)]
    return s


def test_status_json(scn, capsys):
    rc, out, err = run(capsys, [*scn.argv, "status", "--json"])
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "forksync.status/1" and doc["as_of"] is None
    assert doc["commits_in_range"] == 18
    want = {d: list(EXPECTED.values()).count(d) for d in set(EXPECTED.values())}
    assert {k: v for k, v in doc["counts"].items() if v} == want
    assert doc["frontier"] == {"sha": scn.u["u16"], "pr": 116, "date": "2026-01-17T00:00:00Z",
                               "subject": "Change sixteen (#116)", "index": 15, "is_base": False}
    assert doc["contiguous_pin"]["sha"] == scn.u["u8"] and doc["contiguous_pin"]["date"] == "2026-01-09T00:00:00Z"
    assert doc["days_behind"] == 2.0 and doc["contiguous_lag_days"] == 10.0
    assert doc["backlog"] == {"total": 4, "by_disposition": {"IN_FLIGHT": 1, "PENDING": 2, "REVERTED": 1},
                              "reverted_after_merge": [], "holes": []} and doc["merge_based"] is False
    assert doc["not_reached"] == {"total": 2, "handled": 1}
    assert doc["isolated_picks"] == [scn.u["u18"]]
    assert doc["merge_base"]["sha"] == scn.base and doc["missing_objects"] == {}


def test_status_human_and_as_of(scn, capsys):
    rc, out, _ = run(capsys, [*scn.argv, "status"])
    assert rc == 0 and "Days Behind Upstream" in out and "2.00" in out and "#116" in out
    rc, out, _ = run(capsys, [*scn.argv, "status", "--as-of", "2026-01-10", "--json"])
    doc = json.loads(out)
    assert doc["as_of"] == "2026-01-10T23:59:59Z" and doc["commits_in_range"] == 9
    assert doc["frontier"]["is_base"] and doc["days_behind"] == 9.0


def test_status_series(scn, capsys):
    rc, out, _ = run(capsys, [*scn.argv, "status", "--series", "2026-01-05", "2026-03-01", "--step", "30", "--json"])
    pts = json.loads(out)["points"]
    # from START to END: END is the last point even where the step does not land on it
    assert [(p["date"], p["commits_in_range"], p["days_behind"], p["backlog"]) for p in pts] == [
        ("2026-01-05", 4, 4.0, 0), ("2026-02-04", 18, 2.0, 4), ("2026-03-01", 18, 2.0, 4)]  # u9 PENDING in the past
    # each point's upstream is as of its date (or of the last change to the copy, when older)
    assert [p["upstream_as_of"] for p in pts] == ["2026-01-05T23:59:59Z", "2026-02-04T23:59:59Z",
                                                  "2026-03-01T23:59:59Z"]
    rc, out, _ = run(capsys, [*scn.argv, "status", "--series", "2026-01-05", "2026-01-07", "--step", "1", "--json"])
    assert [p["date"] for p in json.loads(out)["points"]] == ["2026-01-05", "2026-01-06", "2026-01-07"]


def test_series_marks_the_points_before_the_forks_first_own_commit(scn, capsys):
    """The scenario's fork has no commit of its own by 2026-01-05: its tip is the merge base, one of
    upstream's commits, so that point's 4 days are upstream's own past. The point is kept (git
    cannot tell whether the fork existed then) and marked, in the JSON and in the table."""
    rc, out, _ = run(capsys, [*scn.argv, "status", "--series", "2026-01-05", "2026-03-01", "--step", "30", "--json"])
    pts = json.loads(out)["points"]
    assert [(p["date"], p["before_first_own_commit"]) for p in pts] == [
        ("2026-01-05", True), ("2026-02-04", False), ("2026-03-01", False)]
    rc, out, _ = run(capsys, [*scn.argv, "status", "--series", "2026-01-05", "2026-03-01", "--step", "30"])
    assert rc == 0 and "2026-01-05 *" in out and "2026-02-04 *" not in out
    assert "* marks a date before the fork's first own commit" in " ".join(out.split())
    # a series that starts after it has no mark and no footnote
    rc, out, _ = run(capsys, [*scn.argv, "status", "--series", "2026-02-04", "2026-03-01", "--step", "30"])
    assert rc == 0 and "*" not in out


def test_status_step_needs_series(scn, capsys):
    assert run(capsys, [*scn.argv, "status", "--step", "3"]) == (
        2, "", "forksync: --step needs --series START END (it is the days between series points)\n")


def test_ledger_export(scn, capsys):
    rc, out, _ = run(capsys, [*scn.argv, "ledger", "export", "--json"])
    doc = json.loads(out)
    assert doc["schema"] == "forksync.ledger/1" and len(doc["entries"]) == 18
    first = doc["entries"][0]
    assert set(first) == {"index", "sha", "pr", "subject", "date", "disposition", "fork_commit", "reason",
                          "isolated", "evidence"}
    assert first["sha"] == scn.u["u1"] and len(first["sha"]) == 40 and first["fork_commit"] == scn.f["p1"]
    assert first["evidence"] == [{"rule": "trailer:Upstream-Commit", "fork_commit": scn.f["p1"],
                                  "detail": f"{scn.u['u1']} in {scn.f['p1'][:12]} 'Change one (#101)'"}]
    assert [e["disposition"] for e in doc["entries"]] == list(EXPECTED.values())


def test_ledger_show(scn, capsys):
    rc, out, _ = run(capsys, [*scn.argv, "ledger", "show", "#111"])
    assert rc == 0 and "REVERTED" in out and scn.u["u11"] in out and "revert" in out
    rc, out, _ = run(capsys, [*scn.argv, "ledger", "show", scn.u["u10"][:10], "--json"])
    [e] = json.loads(out)["entries"]
    assert e["disposition"] == "PICKED" and e["evidence"][0]["rule"] == "patch-id"
    rc, _, err = run(capsys, [*scn.argv, "ledger", "show", "#4242"])
    assert rc == 2 and "names no upstream commit" in err
    # a prefix under 4 hex digits is never looked up: say so rather than "names no upstream commit"
    short = next(sha[:3] for sha in scn.u.values() if not sha[:3].isdigit())     # digits alone are a PR number
    rc, _, err = run(capsys, [*scn.argv, "ledger", "show", short])
    assert rc == 2 and "at least 4 hex digits" in err and "names no upstream commit" not in err


def test_clear_errors(scn, capsys, tmp_path):
    rc, _, err = run(capsys, [*scn.argv, "--fork-ref", "nope", "status"])
    assert rc == 2 and "'nope'" in err and str(scn.fork.path) in err
    for command in ("status", "plan"):      # the same words from every command that reads the state
        rc, _, err = run(capsys, [*scn.argv, command, "--as-of", "2026-13-01"])
        assert rc == 2 and "forksync: --as-of: not a date" in err, err
    rc, _, err = run(capsys, [*scn.argv, "--fork-ref", "nope", "plan"])
    assert rc == 2 and "'nope'" in err and str(scn.fork.path) in err
    bad = tmp_path / "bad.yml"
    bad.write_text("provenance:\n  trailers:\n    - name: x\n      pattern: '(no sha group)'\n")
    rc, _, err = run(capsys, ["--config", str(bad), "status"])
    assert rc == 2 and "bad.yml:4:16: provenance.trailers[x].pattern: the pattern needs a named group" in err
    rc, _, err = run(capsys, ["--upstream", str(tmp_path / "missing"), "--fork", str(scn.fork.path), "status"])
    assert rc == 2 and "does not exist" in err


def test_missing_objects_are_reported_not_fatal(tmp_path, capsys, monkeypatch):
    import os

    import pygit2

    from bot.demo.repobuilder import RepoBuilder
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=1_767_225_600)
    fork = up.clone(tmp_path / "fork")
    big = up.commit("Add a large file (#2)", {"big.bin": "x" * 4096}, when=1_767_225_700)
    up.commit("Small (#3)", {"b.txt": "b\n"}, when=1_767_225_800)
    blob = str(pygit2.Repository(str(up.path / ".git"))[big].tree["big.bin"].id)
    os.remove(up.path / ".git" / "objects" / blob[:2] / blob[2:])
    argv = ["--upstream", str(up.path), "--fork", str(fork.path)]
    monkeypatch.chdir(tmp_path)          # no forksync.yml here; the cache goes to ./.forksync-cache
    rc, out, err = run(capsys, [*argv, "status", "--json"])
    doc = json.loads(out)
    assert rc == 0 and doc["missing_objects"] == {big: [f"blob {blob} (big.bin)"]}
    assert "forksync: warning: 1 object(s) missing" in err          # stderr: stdout holds the document alone
    assert doc["counts"]["PENDING"] == 2
    rc, _, err = run(capsys, [*argv, "status"])
    assert rc == 0 and ("forksync: warning: 1 object(s) missing (a partial clone or snapshot?); 1 commit(s) analysed "
                        f"from their trees only, without a patch-id: big.bin (blob {blob[:12]}, 1 commit); all in "
                        "`status --json` missing_objects.\n") in err


def test_series_with_dates_reversed_is_an_error(scn, capsys):
    rc, out, err = run(capsys, [*scn.argv, "status", "--series", "2026-03-01", "2026-01-05"])
    assert rc == 2 and out == ""
    assert "START is after END" in err
    rc, _, err = run(capsys, [*scn.argv, "status", "--series", "2026-01-05", "March"])
    assert rc == 2 and "dates must be YYYY-MM-DD" in err


def test_status_names_what_holds_the_contiguous_pin(scn, capsys):
    rc, out, _ = run(capsys, [*scn.argv, "status", "--json"])
    h = json.loads(out)["contiguous_pin_held_by"]
    assert (h["sha"], h["index"], h["disposition"], h["date"]) == (scn.u["u9"], 8, "IN_FLIGHT", "2026-01-10T00:00:00Z")
    rc, out, _ = run(capsys, [*scn.argv, "status"])
    assert "contiguous pin held by" in out and "IN_FLIGHT since" in out  # rich wraps the rest


def test_status_counts_isolated_picks_on_their_own_row(scn, capsys):
    """"not yet reached" is what lies past the frontier; isolated picks behind it are no part of
    that count, so they get their own row instead of a place in its parentheses."""
    rc, out, _ = run(capsys, [*scn.argv, "status", "--json"])
    doc = json.loads(out)
    nr, iso = doc["not_reached"], len(doc["isolated_picks"])
    rc, out, _ = run(capsys, [*scn.argv, "status"])
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in out.splitlines() if line.count("│") == 3}
    assert rc == 0 and rows["not yet reached"] == f"{nr['total']}  ({nr['handled']} handled)"
    assert rows["isolated picks"].startswith(f"{iso}  (picked on their own")


def test_upstream_and_fork_at_one_commit_is_warned(scn, capsys, tmp_path, monkeypatch):
    """Upstream's history in the fork's repository without --upstream-ref: upstream's default ref
    is then the fork's own branch, which looks like a fork fully in sync."""
    monkeypatch.chdir(tmp_path)          # no forksync.yml here; the cache goes to ./.forksync-cache
    argv = ["--upstream", str(scn.fork.path), "--fork", str(scn.fork.path)]
    for cmd in (["status"], ["status", "--json"], ["ledger", "export"]):
        rc, out, err = run(capsys, [*argv, *cmd])
        assert rc == 0, err
        assert err.count("forksync: warning: upstream and the fork resolve to the same commit ") == 1, cmd
        assert "name upstream's ref with --upstream-ref (or upstream.ref)" in err
    rc, _, err = run(capsys, [*scn.argv, "status"])
    assert rc == 0 and "same commit" not in err


def test_a_fork_level_with_upstream_is_not_warned(scn, capsys, tmp_path, monkeypatch):
    """Two refs at one commit are a fork level with upstream (fast-forwarded, or merging upstream
    with nothing of its own since), not a missing --upstream-ref: no warning."""
    from tests.support.github import git

    monkeypatch.chdir(tmp_path)          # no forksync.yml here; the cache goes to ./.forksync-cache
    level = tmp_path / "level.git"
    git(tmp_path, "clone", "-q", "--bare", str(scn.up.path), str(level))
    git(level, "branch", "upstream-main", "main")
    for argv in (["--upstream", str(scn.up.path), "--fork", str(level)],
                 ["--upstream", str(level), "--upstream-ref", "upstream-main", "--fork", str(level)]):
        rc, out, err = run(capsys, [*argv, "status", "--json"])
        assert rc == 0, err
        assert json.loads(out)["commits_in_range"] == 0
        assert "same commit" not in err, argv


def test_as_of_in_the_future_is_an_error(scn, capsys):
    # a date nobody has seen yet has no state: showing today's numbers under it would claim
    # to know upstream's state then
    rc, out, err = run(capsys, [*scn.argv, "status", "--as-of", "2999-01-01"])
    assert rc == 2 and out == "" and "2999-01-01" in err and "in the future" in err
    rc, out, err = run(capsys, [*scn.argv, "status", "--series", "2026-01-05", "2999-01-01", "--json"])
    assert rc == 2 and out == "" and "in the future" in err


def test_a_blobless_partial_clone_is_read_without_fetching(tmp_path, capsys, monkeypatch):
    """A ``--filter=blob:none`` clone: git would fetch every blob ``log -p`` needs from the promisor
    remote, one batch per commit (8 minutes instead of 11 s on the Intel fork, writing into a
    repository forksync promises to read only); the blobs are reported missing instead."""
    from bot.demo.repobuilder import RepoBuilder
    from tests.support.partial_clone import blobless_clone
    up = RepoBuilder.init(tmp_path / "up")
    up.commit("Base (#1)", {"a.txt": "a\n"}, when=1_767_225_600)
    fork = up.clone(tmp_path / "fork")
    fork.commit("Fork work", {"f.txt": "f\n"}, when=1_767_225_650)
    up.commit("Two (#2)", {"b.txt": "b\n"}, when=1_767_225_700)
    up.commit("Three (#3)", {"c.txt": "c\n"}, when=1_767_225_800)
    fork.git("fetch", "-q", "origin")
    fork.merge("origin/main", when=1_767_225_900, message="Merge upstream")
    part = blobless_clone(fork.path, tmp_path / "partial.git")
    objects = part.objects()
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, ["--upstream", str(part.path), "--upstream-ref", "origin/main", "--fork", str(part.path),
                                "status", "--json"])
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["merge_based"] and doc["days_behind"] == 0.0 and doc["missing_objects"]
    assert "object(s) missing" in err
    assert part.objects() == objects and part.attempts() == []        # nothing fetched into it, nothing tried


def test_status_says_when_upstream_was_last_seen(scn, capsys):
    """Days Behind is measured to the upstream tip the repository holds: read from a local copy
    last updated months ago it is that old, so `status` says as of when (the newest change to
    the copy's refs); with --as-of, never later than that date."""
    import time

    from bot.git.repo import git_dir_of
    gd = git_dir_of(scn.up.path)
    seen = 1_768_867_200                      # 2026-01-20T00:00:00Z
    set_ref_times(gd, seen)
    try:
        rc, out, err = run(capsys, [*scn.argv, "status", "--json"])
        assert rc == 0, err
        assert json.loads(out)["upstream"]["as_of"] == "2026-01-20T00:00:00Z"
        rc, out, _ = run(capsys, [*scn.argv, "status"])
        assert "upstream as of" in out and "2026-01-20T00:00:00Z" in out
        rc, out, _ = run(capsys, [*scn.argv, "status", "--as-of", "2026-01-10", "--json"])
        assert json.loads(out)["upstream"]["as_of"] == "2026-01-10T23:59:59Z"
    finally:
        set_ref_times(gd, time.time())


def merged_then_reverted(tmp_path):
    """A fork that merged upstream's u0..u2, then reverted u1 (a hole of the Backlog); upstream
    moved on by u3. ``(argv, {name: sha}, the fork's revert)``."""
    from bot.demo.repobuilder import RepoBuilder
    up = RepoBuilder.init(tmp_path / "up")
    u0 = up.commit("Base (#1)", {"a.txt": "a\n"}, when=1_767_225_600)
    fork = up.clone(tmp_path / "fork")
    fork.commit("Fork feature (#500)", {"f.txt": "f\n"}, when=1_767_230_000)
    u1 = up.commit("One (#11)", {"b.txt": "b\n"}, when=1_767_312_000)
    u2 = up.commit("Two (#12)", {"c.txt": "c\n"}, when=1_767_398_400)
    fork.add_remote("upstream", up.path)
    fork.merge("upstream/main", when=1_767_484_800)
    rv = fork.revert(u1, when=1_767_571_200)
    u3 = up.commit("Three (#13)", {"d.txt": "d\n"}, when=1_767_657_600)
    return ["--upstream", str(up.path), "--fork", str(fork.path)], {"u0": u0, "u1": u1, "u2": u2, "u3": u3}, rv


def test_ledger_show_answers_for_upstream_commits_a_merge_brought_in(tmp_path, capsys, monkeypatch):
    """On a fork that merges upstream the range is the few commits since the last merge; the rest
    of upstream came in by merges, and the Backlog's REVERTED holes are among them: `ledger show`
    explains those instead of calling them no upstream commit (exit 2)."""
    argv, u, rv = merged_then_reverted(tmp_path)
    u1, u2 = u["u1"], u["u2"]
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, [*argv, "ledger", "show", "#11", "--json"])
    assert rc == 0, err
    [e] = json.loads(out)["entries"]
    assert (e["sha"], e["disposition"], e["fork_commit"], e["index"]) == (u1, "REVERTED", rv, -1)
    assert e["evidence"][0]["rule"] == "revert"
    rc, out, err = run(capsys, [*argv, "ledger", "show", u2[:10], "--json"])
    [e] = json.loads(out)["entries"]
    assert rc == 0 and (e["sha"], e["disposition"], e["evidence"][0]["rule"]) == (u2, "PICKED", "ancestry")
    rc, out, _ = run(capsys, [*argv, "ledger", "show", "#12"])
    assert rc == 0 and "PICKED" in out and "merge base" in out
    rc, _, err = run(capsys, [*argv, "ledger", "show", "#4242"])
    assert rc == 2 and "names no upstream commit" in err


def test_a_cache_dir_that_cannot_be_created_is_a_clear_error(scn, capsys, tmp_path):
    # a configuration in a read-only checkout (its cache_dir is relative to it), or a cache_dir
    # that names a file: every command stopped with an OSError traceback from the store
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cfg = tmp_path / "forksync.yml"
    cfg.write_text(f"cache_dir: {blocker / 'cache'}\n")
    argv = ["--config", str(cfg), "--upstream", str(scn.up.path), "--fork", str(scn.fork.path)]
    for cmd in (["status"], ["plan"], ["ledger", "show", "#111"]):
        rc, out, err = run(capsys, [*argv, *cmd])
        assert rc == 2 and out == "", cmd
        assert f"cache_dir {blocker / 'cache'}" in err and "writable" in err and "Traceback" not in err, err


def test_plan_no_cache_needs_no_cache_dir(scn, capsys, tmp_path):
    # --no-cache neither reads nor writes the cache: an unusable cache_dir is no reason to stop
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    good, bad = tmp_path / "good.yml", tmp_path / "bad.yml"
    good.write_text(f"cache_dir: {tmp_path / 'cache'}\n")
    bad.write_text(f"cache_dir: {blocker / 'cache'}\n")
    argv = ["--upstream", str(scn.up.path), "--fork", str(scn.fork.path), "plan", "--no-cache", "--json"]
    rc, expected, _ = run(capsys, ["--config", str(good), *argv])
    assert rc == 0 and not (tmp_path / "cache").exists()
    rc, out, err = run(capsys, ["--config", str(bad), *argv])
    assert (rc, out, err) == (0, expected, "")


def test_a_contiguous_pin_before_the_merge_base_is_not_called_the_merge_base(tmp_path, capsys, monkeypatch):
    # the merged, then reverted u1 holds the contiguous pin at u0, before the merge base u2:
    # status printed "(merge base)" beside u0 (Intel's fork: a 2024 commit beside a 2026 base)
    argv, u, _ = merged_then_reverted(tmp_path)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, [*argv, "status", "--json"])
    doc = json.loads(out)
    assert rc == 0 and doc["merge_base"]["sha"] == u["u2"] and doc["backlog"]["reverted_after_merge"] == [u["u1"]]
    assert doc["frontier"]["sha"] == u["u2"] and doc["frontier"]["is_base"]
    assert doc["contiguous_pin"]["sha"] == u["u0"] and not doc["contiguous_pin"]["is_base"]
    rc, out, _ = run(capsys, [*argv, "status"])
    row = " ".join(out[out.index("contiguous pin "):out.index("Days Behind")].replace("│", " ").split())  # wrapped
    assert rc == 0 and u["u0"][:12] in row and "(merge base)" not in row and "(before the merge base)" in row


def no_merge_base(tmp_path):
    """A fork whose history shares no commit with upstream's (a re-rooted import) and that
    cherry-picked upstream's newest commit u2: the range is all of upstream, the frontier u2, and
    nothing holds the contiguous pin. ``(argv, {name: sha})``."""
    from bot.demo.repobuilder import RepoBuilder
    up = RepoBuilder.init(tmp_path / "up")
    u0 = up.commit("Base (#1)", {"a.txt": "a\n"}, when=1_767_225_600)
    u1 = up.commit("One (#11)", {"b.txt": "b\n"}, when=1_767_312_000)
    u2 = up.commit("Two (#12)", {"c.txt": "c\n"}, when=1_767_398_400)
    fork = RepoBuilder.init(tmp_path / "fork")
    fork.commit("Fork root", {"f.txt": "f\n"}, when=1_767_230_000)
    fork.commit(f"Two (#12)\n\n(cherry picked from commit {u2})", {"c.txt": "c\n"}, when=1_767_500_000)
    return ["--upstream", str(up.path), "--fork", str(fork.path)], {"u0": u0, "u1": u1, "u2": u2}


def test_a_pin_without_a_merge_base_is_called_so(tmp_path, capsys, monkeypatch):
    """Without a merge base a pin no entry holds is no commit at all (sha None): status called it
    "(merge base)" with a 1970 date, and JSON said ``is_base`` true; ``ledger show`` named the
    range "..<tip>" with nothing before the dots."""
    argv, u = no_merge_base(tmp_path)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, [*argv, "status", "--json"])
    doc = json.loads(out)
    assert rc == 0 and doc["merge_base"] == {"sha": None, "date": None} and doc["commits_in_range"] == 3
    assert doc["frontier"] == {"sha": u["u2"], "pr": 12, "date": "2026-01-03T00:00:00Z", "subject": "Two (#12)",
                               "index": 2, "is_base": False}
    assert doc["contiguous_pin"] == {"sha": None, "pr": None, "date": None, "subject": "", "index": -1,
                                     "is_base": False}
    rc, out, _ = run(capsys, [*argv, "status"])
    rows = {r.split("│")[1].strip(): " ".join(r.split("│")[2].split()) for r in out.splitlines() if r.count("│") == 3}
    assert rc == 0 and rows["merge base"] == "- (the fork and upstream share no history)"
    assert rows["frontier"] == f"{u['u2'][:12]} #12 2026-01-03T00:00:00Z"
    assert rows["contiguous pin"] == "- (no merge base)"
    rc, _, err = run(capsys, [*argv, "ledger", "show", "#4242"])
    assert rc == 2 and err == (f"forksync: '#4242' names no upstream commit in upstream's first-parent history up to "
                               f"{u['u2'][:12]} (no merge base: the fork and upstream share no history; use a sha, a "
                               "prefix or #PR)\n")


def _twin_prefix_upstream(tmp_path):
    """An upstream whose last two commits share their first 4 hex digits (found by varying a
    word of the second one's message), and a fork cloned before them."""
    import hashlib

    import pygit2

    from bot.demo.repobuilder import RepoBuilder

    up = RepoBuilder.init(tmp_path / "upstream")
    up.commit("Initial import (#1)", {"README.md": "upstream\n"}, when=1_767_225_600)
    fork = up.clone(tmp_path / "fork")
    repo = pygit2.Repository(str(up.path))

    def raw(parent, message, when):
        who = f"Up Dev <up@example.com> {when} +0000"
        body = (f"tree {repo[parent].tree_id}\nparent {parent}\nauthor {who}\ncommitter {who}\n\n{message}\n").encode()
        return body, hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()

    body, first = raw(str(repo.head.target), "Tune the scheduler (#2)", 1_767_312_000)
    repo.odb.write(pygit2.GIT_OBJECT_COMMIT, body)
    n = 0
    while True:
        body, second = raw(first, f"Tune the allocator, take {n} (#3)", 1_767_398_400)
        if second[:4] == first[:4]:
            break
        n += 1
    repo.odb.write(pygit2.GIT_OBJECT_COMMIT, body)
    repo.references["refs/heads/main"].set_target(second)
    return ["--upstream", str(up.path), "--fork", str(fork.path)], first, second, n


def test_ledger_show_says_how_many_commits_a_prefix_matches(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv, first, second, n = _twin_prefix_upstream(tmp_path)
    rc, out, err = run(capsys, [*argv, "ledger", "show", first[:4]])
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == f"2 commits match {first[:4]}"
    assert [line.split()[0] for line in lines if line.startswith(first[:4])] == [first, second]
    rc, out, _ = run(capsys, [*argv, "ledger", "show", second[:12]])
    assert rc == 0 and "match" not in out.splitlines()[0]


def test_ledger_show_names_a_commit_newer_than_the_as_of_date(scn, capsys):
    rc, out, err = run(capsys, [*scn.argv, "ledger", "show", "#116", "--as-of", "2026-01-10"])
    assert (rc, out) == (2, "")
    assert err == (f"forksync: '#116' names upstream commit {scn.u['u16'][:12]} 'Change sixteen (#116)', committed "
                   "on 2026-01-17, after the as-of date 2026-01-10: the ledger as of then does not hold it (give a "
                   "later --as-of, or none)\n")
    rc, _, err = run(capsys, [*scn.argv, "ledger", "show", scn.u["u16"][:10], "--as-of", "2026-01-10"])
    assert rc == 2 and f"names upstream commit {scn.u['u16'][:12]} 'Change sixteen (#116)', committed on 2026-01-17" in err


def test_upstream_pinned_to_a_sha_has_no_as_of(tmp_path, capsys, monkeypatch):
    """``--upstream-ref <sha>`` on a bare ``--shared`` clone holding fork and upstream: "upstream as
    of" showed the clone's time (packed-refs), and moved to the time of a branch deletion in the
    same repository. A sha names no ref: nothing says when upstream was last seen, so it is
    unknown and the pinned commit and its date are shown instead, before and after the deletion."""
    import subprocess

    argv, u, _ = merged_then_reverted(tmp_path)
    bare = tmp_path / "copy.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--shared", argv[3], str(bare)], check=True)
    subprocess.run(["git", f"--git-dir={bare}", "branch", "scratch", u["u0"]], check=True)
    subprocess.run(["git", f"--git-dir={bare}", "pack-refs", "--all"], check=True)
    set_ref_times(str(bare), 1_000_000)
    monkeypatch.chdir(tmp_path)
    argv = ["--upstream", str(bare), "--fork", str(bare), "--upstream-ref", u["u2"][:10]]
    why = f"upstream pinned to {u['u2'][:12]}, committed 2026-01-03T00:00:00Z"
    for _ in range(2):
        rc, out, err = run(capsys, [*argv, "status", "--json"])
        up = json.loads(out)["upstream"]
        assert rc == 0, err
        assert (up["as_of"], up["pinned"], up["tip"]["sha"]) == (None, True, u["u2"])
        assert up["as_of_unknown"].startswith(why)
        rc, out, _ = run(capsys, [*argv, "status"])
        assert rc == 0 and "upstream as of" in out and "unknown (upstream pinned to" in " ".join(out.split())
        subprocess.run(["git", f"--git-dir={bare}", "branch", "-D", "scratch"], check=True)   # rewrites packed-refs
        subprocess.run(["git", f"--git-dir={bare}", "branch", "scratch", u["u0"]], check=True)
        subprocess.run(["git", f"--git-dir={bare}", "pack-refs", "--all"], check=True)
    rc, out, _ = run(capsys, [*argv[:4], "--upstream-ref", "main", "status", "--json"])
    up = json.loads(out)["upstream"]
    # a branch, but only in packed-refs (a bare clone keeps no reflog, nothing was fetched): unknown too
    assert rc == 0 and (up["pinned"], up["as_of"]) == (False, None) and "packed-refs" in up["as_of_unknown"]


def test_holes_are_listed_by_status_and_export_with_the_forks_revert(tmp_path, capsys, monkeypatch):
    """A merge-based fork's Backlog counts the merged upstream commits it reverted (holes, before
    the range) as REVERTED, but the dispositions table said REVERTED 0 and the export listed only
    the range: both list them, with the fork's revert; the hole holds the contiguous pin since
    that revert, not since upstream committed it."""
    argv, u, rv = merged_then_reverted(tmp_path)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, [*argv, "status", "--json"])
    doc = json.loads(out)
    assert rc == 0, err
    assert doc["backlog"]["by_disposition"] == {"REVERTED": 1} and doc["counts"]["REVERTED"] == 0
    assert doc["backlog"]["holes"] == [{"sha": u["u1"], "pr": 11, "subject": "One (#11)", "date": "2026-01-02T00:00:00Z",
                                        "fork_commit": rv, "fork_commit_date": "2026-01-05T00:00:00Z"}]
    h = doc["contiguous_pin_held_by"]
    assert (h["sha"], h["date"], h["since"], h["fork_commit"]) == (u["u1"], "2026-01-02T00:00:00Z", "2026-01-05T00:00:00Z", rv)
    rc, out, _ = run(capsys, [*argv, "status"])
    flat = " ".join(out.replace("│", " ").replace("┃", " ").split())
    assert rc == 0 and "REVERTED since 2026-01-05T00:00:00Z" in flat
    assert "in the fork's history, then reverted (before the range) 1" in flat
    # off a terminal (80 columns) one line per hole, which a table would squeeze
    assert f"{u['u1'][:12]} #11 committed 2026-01-02 reverted by {rv[:12]} on 2026-01-05: One (#11)" in flat
    rc, out, _ = run(capsys, [*argv, "ledger", "export", "--json"])
    ex = json.loads(out)
    assert rc == 0 and [e["sha"] for e in ex["entries"]] == [u["u3"]]
    [hole] = ex["holes"]
    assert {k: hole[k] for k in ("index", "sha", "pr", "subject", "date", "disposition", "fork_commit", "fork_commit_date")} == {
        "index": -1, "sha": u["u1"], "pr": 11, "subject": "One (#11)", "date": "2026-01-02T00:00:00Z",
        "disposition": "REVERTED", "fork_commit": rv, "fork_commit_date": "2026-01-05T00:00:00Z"}
    assert hole["evidence"][0]["rule"] == "revert" and hole["evidence"][0]["fork_commit"] == rv


def test_an_area_glob_that_matches_no_file_is_warned(scn, capsys, tmp_path):
    """A typo in an area's path (or a folder that moved) makes the area cover nothing: a divergent
    one then sends no upstream commit to a chain, with nothing said. A glob that matches a file at
    the fork's tip or upstream's is fine; one that matches neither is named with its area."""
    cfg = tmp_path / "forksync.yml"
    cfg.write_text("areas:\n"
                   "  - name: core\n    paths: ['lib/**', 'README.md']\n    divergent: true\n"
                   "  - name: tlx\n    paths: ['lbi/core.cpp', 'third_party/tlx/**']\n    divergent: true\n"
                   f"cache_dir: {tmp_path / 'cache'}\n")
    argv = ["--config", str(cfg), "--upstream", str(scn.up.path), "--fork", str(scn.fork.path)]
    for cmd in (["status"], ["plan"]):
        rc, _, err = run(capsys, [*argv, *cmd])
        assert rc == 0, err
        said = [line for line in err.splitlines() if "areas[" in line]
        assert said == ["forksync: warning: areas[tlx].paths: no file at the fork's tip or upstream's matches "
                        "'lbi/core.cpp' or 'third_party/tlx/**' (a typo, or a folder that moved?): the area covers "
                        "no file through them"], err
    rc, _, err = run(capsys, [*scn.argv, "status"])
    assert rc == 0 and "areas[" not in err
