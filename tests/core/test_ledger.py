"""The ledger on a real upstream/fork pair (every rule, exact values) and its parsing rules."""
from __future__ import annotations

import pytest

from bot.config.forksync import ProvenanceRules, TrailerRule, load_config
from bot.core.ledger import build_ledger
from bot.core.merged import upstream_reverts
from bot.core.provenance import claims, own_prs, reverted_targets
from bot.git.notes import format_decision, parse_note
from bot.model import CommitInfo, Decision, Disposition, FileChange
from bot.store import Store
from bot.sync.ingest import load_state
from tests.support.ledger_scenario import DAY, EXPECTED, T0, build

REACTOR = [{"name": "reactor", "pattern": r"^Reactor Cherry-pick Revision:\s*(?P<sha>[0-9a-f]{7,40})"}]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    return build(tmp_path_factory.mktemp("scn"))


def _cfg(s, tmp, **prov):
    cfg = load_config(None, s.cfg_overrides())
    p = cfg.provenance.model_copy(update={"trailers": [TrailerRule(**t) for t in REACTOR], **prov})
    return cfg.model_copy(update={"provenance": p, "cache_dir": str(tmp / "cache")})


@pytest.fixture(scope="module")
def state(scenario, tmp_path_factory):
    return load_state(_cfg(scenario, tmp_path_factory.mktemp("c")), store=Store())


def test_every_rule_gives_the_true_disposition(scenario, state):
    got = {name: state.ledger.by_sha[sha].disposition.value for name, sha in scenario.u.items()}
    assert got == EXPECTED
    assert state.merge_base == scenario.base and len(state.ledger.entries) == 18


def test_evidence_names_rule_and_fork_commit(scenario, state):
    u, f = scenario.u, scenario.f
    e = {n: state.ledger.by_sha[s] for n, s in u.items()}
    assert [(x.rule, x.fork_commit) for x in e["u1"].evidence] == [("trailer:Upstream-Commit", f["p1"])]
    assert [(x.rule, x.fork_commit) for x in e["u2"].evidence] == [("cherry-picked-from", f["p2"])]
    assert [(x.rule, x.fork_commit) for x in e["u3"].evidence] == [("trailer:reactor", f["p3"])]
    assert e["u4"].fork_commit == f["bundle"] and e["u8"].fork_commit == f["bundle"]
    assert [x.rule for x in e["u4"].evidence] == ["pr-citation"]
    assert [(x.rule, x.fork_commit) for x in e["u10"].evidence] == [("patch-id", f["p10"])]
    assert [(x.rule, x.fork_commit) for x in e["u11"].evidence] == [("trailer:Upstream-Commit", f["p11"]),
                                                                    ("revert", f["r11"])]
    assert e["u11"].reason == 'Revert "Change eleven (#111)"'
    assert [(x.rule, x.fork_commit) for x in e["u12"].evidence] == [
        ("trailer:Upstream-Commit", f["p12"]), ("revert", f["r12"]), ("revert", f["rr12"])]
    assert e["u12"].fork_commit == f["rr12"]       # the re-landing commit carries it now
    assert [x.rule for x in e["u13"].evidence] == ["note", "note"]
    assert e["u14"].reason == "CI only" and e["u14"].evidence[0].detail == "wont-port by bob: CI only"
    assert e["u16"].reason == "needs the new base" and e["u16"].evidence[0].fork_commit == f["skip16"]
    assert e["u5"].evidence[0].rule == "empty"
    assert [x.rule for x in e["u6"].evidence] == ["revert-pair"] and e["u7"].reason.startswith("reverts")
    assert e["u9"].evidence[-1].detail == f"forksync/chain-{u['u9'][:12]}"
    assert e["u18"].isolated and not e["u1"].isolated


def test_lookup_by_pr_and_prefix(scenario, state):
    [e] = state.ledger.find("#104")
    assert e.sha == scenario.u["u4"]
    assert state.ledger.find(scenario.u["u4"][:10]) == [e]
    assert state.ledger.find("#999") == []


def test_rules_can_be_switched_off(scenario, tmp_path):
    st = load_state(_cfg(scenario, tmp_path, patch_id=False, pr_citations=False), store=Store())
    d = {n: st.ledger.by_sha[s].disposition.value for n, s in scenario.u.items()}
    assert d["u10"] == "PENDING" and d["u4"] == "PENDING" and d["u8"] == "PENDING" and d["u1"] == "PICKED"


def test_as_of_uses_state_at_end_of_day(scenario, tmp_path):
    # 2026-01-10: upstream has u1..u9 (u10 lands on Jan 11), the fork has no sync commit yet
    st = load_state(_cfg(scenario, tmp_path), store=Store(), as_of="2026-01-10")
    assert st.upstream_tip == scenario.u["u9"] and st.fork_tip == scenario.base
    assert st.as_of == T0 + 10 * DAY - 1
    counts = {k.value: v for k, v in st.ledger.counts().items() if v}
    assert counts == {"NO_OP": 3, "PENDING": 6}           # in-flight branches are not used as of a date


def test_warm_rebuild_uses_the_cache(scenario, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    a = load_state(_cfg(scenario, tmp_path), store=store)
    n = store.db["commit_analysis"].count
    b = load_state(_cfg(scenario, tmp_path), store=store)
    assert n == len(a.upstream) + len(a.fork_commits)
    assert [e.disposition for e in a.ledger.entries] == [e.disposition for e in b.ledger.entries]
    assert b.upstream == a.upstream
    assert store.db["pin_history"].count == 2


# ---- pure parsing rules ---------------------------------------------------------------------------

RULES = ProvenanceRules()


def test_bundle_subject_with_own_pr_and_body_sections():
    msg = ("[triton][beta] [Cherry-pick][BUNDLE] Cherry-pick 3 upstream commits (#9552, #9642, #9649) (#1872)\n\n"
           "Summary:\nPull Request resolved: https://github.com/org/fork/pull/1872\n\n"
           "Net pin = abc (#9552): #9653 bumped and #9688 reverts it.\n\n"
           "Deferred (recorded):\n- #9615 — needs unlanded work #9700.\n"
           "- #9668 (rewrite) + dependents #9669, #9677 — apply together.\n\n"
           "Won't-port (1): #10054 CI only\n\nReviewed By: x\n")
    cl = claims(msg, RULES)
    assert [(c.kind, c.ref) for c in cl] == [
        ("pick", "#9552"), ("pick", "#9642"), ("pick", "#9649"),
        ("defer", "#9615"), ("defer", "#9668"), ("defer", "#9669"), ("defer", "#9677"), ("wont-port", "#10054")]
    assert cl[3].reason == "#9615 — needs unlanded work #9700."
    assert own_prs(msg, RULES) == {1872}


def test_subject_cut_with_ellipsis_continues_in_body():
    msg = ("[Cherry-pick][BUNDLE] Cherry-pick 5 upstream(#101 #102 #103... (#2334)\n\nSummary:\n"
           "Pull Request resolved: https://github.com/o/f/pull/2334\n\n...#104 #105\n\nNotable: #106 was hard\n")
    assert [c.ref for c in claims(msg, RULES)] == ["#101", "#102", "#103", "#104", "#105"]


def test_bare_numbers_and_url_lists_in_a_picked_section():
    msg = ("[Cherry-pick][BUNDLE] 3 upstream commits (#7)\n\nApplied (2): 9720 9725\n\n"
           "Upstream PRs:\nhttps://github.com/triton-lang/triton/pull/9730\n")
    assert [c.ref for c in claims(msg, RULES)] == ["#9720", "#9725", "#9730"]


def test_weak_citation_without_marker_needs_the_upstream_subject():
    up = CommitInfo("a" * 40, ("0" * 40,), "[Frontend] Promote x to public (#10095)", committer_time=1,
                    files=(FileChange("f"),), pr=10095)
    up2 = CommitInfo("b" * 40, ("a" * 40,), "Refactor warp specialization (#9133)", committer_time=2,
                     files=(FileChange("g"),), pr=9133)
    f1 = CommitInfo("c" * 40, ("9" * 40,), "[Triton][Frontend] Promote x to public (#10095) (#1822)", committer_time=3,
                    files=(FileChange("python/f"),))
    f2 = CommitInfo("d" * 40, ("c" * 40,), "[TLX] Fix captures after upstream refactor (#9133) (#1380)", committer_time=4)
    led = build_ledger([up, up2], [f1, f2])
    assert [e.disposition for e in led.entries] == [Disposition.PICKED, Disposition.PENDING]


def test_quoted_upstream_revert_text_is_not_a_fork_revert():
    up = CommitInfo("a" * 40, ("0" * 40,), "Add y (#5)", committer_time=1, files=(FileChange("y"),), pr=55)
    upr = CommitInfo("b" * 40, ("a" * 40,), 'Revert "Add y (#55)" (#56)\n\nThis reverts commit ' + "a" * 40 + ".",
                     committer_time=2, files=(FileChange("y"),), pr=56)
    f1 = CommitInfo("c" * 40, (), "Sync\n\nUpstream-Commit: " + "a" * 40, committer_time=3)
    f2 = CommitInfo("d" * 40, (), 'Revert "Add y (#55)" (#56)\n\nThis reverts commit ' + "a" * 40 +
                    ".\n\n(cherry picked from commit " + "b" * 40 + ")", committer_time=4)
    led = build_ledger([up, upr], [f1, f2])
    assert [e.disposition for e in led.entries] == [Disposition.PICKED, Disposition.PICKED]


def test_back_out_by_quoted_subject_and_reland():
    up = CommitInfo("a" * 40, ("0" * 40,), "Bump LLVM (#9264)", committer_time=1, files=(FileChange("h"),), pr=9264)
    pick = CommitInfo("1" * 40, (), "[beta] [Cherry-pick] 'Bump LLVM (#9264)'\n\nRev: x", committer_time=10)
    out = CommitInfo("2" * 40, (), "Back out \"[beta] [Cherry-pick] 'Bump LLVM (#9264)'\"\n\nbreaks trunk", committer_time=11)
    led = build_ledger([up], [pick, out])
    [e] = led.entries
    assert e.disposition is Disposition.REVERTED and e.fork_commit == "1" * 40
    assert [x.rule for x in e.evidence] == ["pr-citation", "revert"]
    again = CommitInfo("3" * 40, (), "[beta] [Cherry-pick] 'Bump LLVM (#9264)' (#1500)", committer_time=12)
    [e2] = build_ledger([up], [pick, out, again]).entries
    assert e2.disposition is Disposition.PICKED and e2.fork_commit == "3" * 40


def test_notes_format_round_trip_and_decision_precedence():
    text = format_decision(Disposition.DEFERRED_BLOCKED, "needs  LLVM\nbump", by="al", time=T0)
    assert text == "forksync-decision: DEFERRED_BLOCKED needs LLVM bump\nforksync-by: al\nforksync-date: 2026-01-01T00:00:00Z\n"
    [d] = parse_note("a" * 40, text)
    assert d == Decision("a" * 40, Disposition.DEFERRED_BLOCKED, "needs LLVM bump", "al", T0, "note")
    assert parse_note("a" * 40, "free text\nforksync-decision: bogus x\nforksync-decision: reconsider ok") == [
        Decision("a" * 40, None, "ok", "", 0, "note")]
    up = CommitInfo("a" * 40, ("0" * 40,), "X (#1)", committer_time=1, files=(FileChange("x"),))
    pick = CommitInfo("1" * 40, (), "Sync\n\nUpstream-Commit: " + "a" * 7, committer_time=10)
    # a defer decision never overrides a landed pick
    [e] = build_ledger([up], [pick], decisions=[Decision("a" * 40, Disposition.DEFERRED_BLOCKED, "late", time=20)]).entries
    assert e.disposition is Disposition.PICKED and [x.rule for x in e.evidence] == ["trailer:Upstream-Commit", "note"]


def test_reverted_targets():
    assert reverted_targets('Revert "Fix x (#1)"\n\nThis reverts commit abcdef0123.') == (["abcdef0123"], ["Fix x (#1)"])
    assert reverted_targets("Revert D123: [x] y") == ([], ["[x] y"])
    assert reverted_targets("Pick\n\n> This reverts commit abcdef0123.") == ([], [])


def test_back_out_whose_quoted_subject_differs_from_the_landed_one():
    """Real case (fork #8846): landed as "[beta] [Cherry-pick][RESOLVED] '…'", backed out as
    'Back out "[beta] [RESOLVED] '…'"': the cited PR finds the latest earlier pick."""
    up = CommitInfo("a" * 40, ("0" * 40,), "Avoid find_paths_if (#8846)", committer_time=1, files=(FileChange("h"),),
                    pr=8846)
    pick = CommitInfo("1" * 40, (), "[beta] [Cherry-pick][RESOLVED] 'Avoid find_paths_if (#8846)'\n\n"
                                    "Upstream-Commit: " + "a" * 40, committer_time=10)
    out = CommitInfo("2" * 40, (), "Back out \"[beta] [RESOLVED] 'Avoid find_paths_if (#8846)'\"", committer_time=11)
    [e] = build_ledger([up], [pick, out]).entries
    assert e.disposition is Disposition.REVERTED
    assert [(x.rule, x.fork_commit) for x in e.evidence] == [("trailer:Upstream-Commit", "1" * 40), ("revert", "2" * 40)]


def test_merge_syncing_fork_with_no_config(tmp_path, capsys, monkeypatch):
    """Defaults + flags only: a fork that syncs by merging upstream; ancestry makes merged
    upstream commits PICKED, a fork revert of one makes it REVERTED, trailers record decisions."""
    import json

    from bot.cli.main import main
    from bot.demo.repobuilder import RepoBuilder
    up = RepoBuilder.init(tmp_path / "up")
    base = up.commit("Base (#1)", {"a.txt": "a\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    u1 = up.commit("One (#11)", {"b.txt": "b\n"}, when=T0 + DAY)
    u2 = up.commit("Two (#12)", {"c.txt": "c\n"}, when=T0 + 2 * DAY)
    fork.add_remote("upstream", up.path)
    fork.merge("upstream/main", when=T0 + 3 * DAY)
    fork.revert(u1, when=T0 + 4 * DAY)
    u3 = up.commit("Three (#13)", {"d.txt": "d\n"}, when=T0 + 5 * DAY)
    u4 = up.commit("Four (#14)", {"e.txt": "e\n"}, when=T0 + 6 * DAY)
    fork.commit(f"Record\n\nUpstream-Wont-Port: {u4[:10]} CI only\nUpstream-Deferred: {u3} later\n",
                {"n.txt": "n\n"}, when=T0 + 7 * DAY)
    argv = ["--upstream", str(up.path), "--fork", str(fork.path)]
    cache = tmp_path / "cache"
    monkeypatch.chdir(tmp_path)          # no ./forksync.yml here: defaults apply, cache in ./.forksync-cache
    assert main([*argv, "ledger", "export", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["merge_base"] == u2 and [(e["sha"], e["disposition"]) for e in doc["entries"]] == [
        (u3, "DEFERRED_BLOCKED"), (u4, "WONT_PORT")]
    from bot.config.forksync import load_config
    st = load_state(load_config(None, {"upstream.url": str(up.path), "fork.url": str(fork.path)}),
                    store=Store(), since=base)
    got = [(e.sha, e.disposition.value, [x.rule for x in e.evidence]) for e in st.ledger.entries]
    assert got == [(u1, "REVERTED", ["ancestry", "revert"]), (u2, "PICKED", ["ancestry"]),
                   (u3, "DEFERRED_BLOCKED", ["trailer:Upstream-Deferred"]),
                   (u4, "WONT_PORT", ["trailer:Upstream-Wont-Port"])]
    assert st.ledger.by_sha[u3].reason == "later"
    assert not cache.exists() and (tmp_path / ".forksync-cache").is_dir()


def test_subject_and_n_more_reads_the_bodys_leading_bullets():
    msg = ("[Cherry-pick][BUNDLE] Beta bundle: refactor + kernels (#9709 and 3 more) (#1985)\n\n"
           "== Group 1: #9709 refactor ==\n\nConflict resolution:\n- lib/x.cpp: kept ours (see #9000)\n\n"
           "== Group 2 ==\n\n10 deferred upstream PRs. Review order (bottom to top):\n"
           "- #9778 no-op for beta — depends on #9001\n- #9745 kernels\n\n== Group 3 ==\n\n- #9626 plugins — base.\n")
    assert [(c.kind, c.ref) for c in claims(msg, RULES)] == [
        ("pick", "#9709"), ("pick", "#9778"), ("pick", "#9745"), ("pick", "#9626")]


def test_write_and_read_decisions_in_git(tmp_path):
    import pygit2

    from bot.demo.repobuilder import RepoBuilder
    from bot.git.notes import read_decisions, write_decision
    b = RepoBuilder.init(tmp_path / "r")
    c = b.commit("X (#1)", {"x": "x\n"}, when=T0)
    gd = str(b.path / ".git")
    write_decision(gd, c, format_decision(Disposition.WONT_PORT, "CI only", by="al", time=T0 + 5))
    write_decision(gd, c, format_decision(None, "changed our mind", by="bo", time=T0 + 9))
    got = read_decisions(pygit2.Repository(gd))
    assert got == [Decision(c, Disposition.WONT_PORT, "CI only", "al", T0 + 5, "note"),
                   Decision(c, None, "changed our mind", "bo", T0 + 9, "note")]
    assert read_decisions(pygit2.Repository(gd), "refs/notes/other") == []


def _conflict_case(with_trailer: bool):
    up = CommitInfo(sha="c" * 40, parents=("b" * 40,), message="[dialect] fold mul overflow (#102)\n",
                    committer_time=T0, files=(FileChange("lib/Ops.cpp"),), patch_id="p" * 40, pr=102)
    msg = ("[CONFLICT] cherry-pick: [dialect] fold mul overflow (#102)\n\nUpstream PRs:\n- #102\n\n"
           + (f"Forksync-Conflict: {'c' * 40}\n" if with_trailer else ""))
    fork = CommitInfo(sha="f" * 40, parents=("e" * 40,), message=msg, committer_time=T0 + DAY,
                      files=(FileChange("lib/Ops.cpp"),), patch_id="p" * 40)
    return build_ledger([up], [fork]).by_sha["c" * 40]


def test_a_conflict_commit_is_never_a_pick():
    # a subject citation with a pick marker, a body list and the same patch-id: all ignored
    assert _conflict_case(with_trailer=True).disposition is Disposition.PENDING
    assert _conflict_case(with_trailer=True).evidence == ()
    assert claims(f"Revert \"x (#5)\"\n\nThis reverts commit {'a' * 40}.\n\nForksync-Conflict: {'c' * 40}\n",
                  ProvenanceRules()) == []
    # the same message without the trailer is read as a pick (the rule above is what keeps it out)
    assert _conflict_case(with_trailer=False).disposition is Disposition.PICKED


def test_a_merged_conflict_commit_leaves_its_upstream_commit_unpicked(tmp_path):
    from bot.demo.repobuilder import run_git
    from bot.git.apply import apply_unit
    from bot.model import PlanItem, Unit
    from tests.support.plan_repos import T0 as PT0
    from tests.support.plan_repos import build_pair

    pair = build_pair(tmp_path)
    infos = {c.sha: c for c in pair.infos()}
    u2 = pair.u["u2"]
    res = apply_unit(pair.fork.path, Unit(id=f"chain-{u2[:12]}", kind="chain", items=(PlanItem(u2, "t"),)),
                     base=pair.fork_tip, commits=infos, when=PT0 + 9000)
    assert res.conflict_commit == res.tip
    run_git(pair.fork.path, "merge", "-q", "--no-ff", "-m", "Merge the chain as it is", res.branch)
    run_git(pair.fork.path, "branch", "-q", "-D", res.branch)
    cfg = load_config(None, {"fork.url": str(pair.fork.path), "upstream.url": str(pair.up.path),
                             "upstream.ref": pair.up.head(), "fork.ref": "main"})
    st = load_state(cfg.model_copy(update={"cache_dir": str(tmp_path / "cache")}), store=Store())
    assert res.conflict_commit in {c.sha for c in st.fork_commits}
    assert st.ledger.by_sha[u2].disposition is Disposition.PENDING and st.ledger.by_sha[u2].evidence == ()
    assert st.ledger.by_sha[pair.u["u1"]].disposition is Disposition.PENDING


def test_a_no_op_note_decides_a_pending_commit_but_never_a_landed_pick():
    text = format_decision(Disposition.NO_OP, "already in the fork: picking it onto abc changes nothing", by="forksync",
                           time=T0)
    [d] = parse_note("a" * 40, text)
    assert (d.disposition, d.reason, d.by) == (Disposition.NO_OP, "already in the fork: picking it onto abc changes nothing",
                                               "forksync")
    up = CommitInfo("a" * 40, ("0" * 40,), "X (#1)", committer_time=1, files=(FileChange("x"),))
    [e] = build_ledger([up], [], decisions=[d]).entries
    assert e.disposition is Disposition.NO_OP and e.reason == "already in the fork: picking it onto abc changes nothing"
    pick = CommitInfo("1" * 40, (), "Sync\n\nUpstream-Commit: " + "a" * 7, committer_time=10)
    [e] = build_ledger([up], [pick], decisions=[d]).entries
    assert e.disposition is Disposition.PICKED


def test_an_empty_resolved_pick_is_no_op_with_its_fork_commit_and_resolver():
    """A person resolved the pick by keeping the fork's files everywhere: the fork commit carries
    ``Upstream-Commit:`` but changes nothing, so the upstream commit brought nothing to the fork."""
    up = CommitInfo("a" * 40, ("0" * 40,), "Tweak legacy (#101)", committer_time=1, files=(FileChange("x"),), pr=101)
    msg = ("[RESOLVED] Tweak legacy (#101)\n\nConflict Resolution:\n- File: x\n  Action: kept fork\n"
           "  Reason: the fork dropped the legacy backend\n\n"
           f"Upstream-Commit: {'a' * 40}\nResolved-by: Ada Lovelace <ada@example.com>\n")
    empty = CommitInfo("1" * 40, ("9" * 40,), msg, committer_time=10)
    [e] = build_ledger([up], [empty]).entries
    assert e.disposition is Disposition.NO_OP and e.fork_commit == "1" * 40
    assert e.reason == "its pick 111111111111 changes nothing in the fork (resolved by Ada Lovelace <ada@example.com>)"
    assert [(x.rule, x.fork_commit) for x in e.evidence] == [("trailer:Upstream-Commit", "1" * 40)]
    # the same commit with a change is a pick; an empty re-pick never undoes a landed one
    changed = CommitInfo("2" * 40, ("9" * 40,), msg, committer_time=5, files=(FileChange("x"),))
    assert build_ledger([up], [changed]).entries[0].disposition is Disposition.PICKED
    [e] = build_ledger([up], [changed, empty]).entries
    assert e.disposition is Disposition.PICKED and e.fork_commit == "2" * 40
    # a commit git could not read in full is not known to be empty
    unread = CommitInfo("3" * 40, ("9" * 40,), msg, committer_time=10, missing=("blob 1a2b (x)",))
    assert build_ledger([up], [unread]).entries[0].disposition is Disposition.PICKED


@pytest.mark.parametrize("line, reverts", [
    ("Reverts triton-lang/triton#11", True),            # GitHub's revert button (triton-lang/triton 23719b7c8a)
    ("Reverts triton-lang/triton#11.", True),
    ("Reverts triton-lang/triton#11abc", False),        # not a reference: GitHub links no #11abc
    ("Reverts triton-lang/triton#11_2", False),
    ("> Reverts triton-lang/triton#11", False),         # quoted
])
def test_githubs_revert_line_names_a_pr_only_as_github_links_it(line, reverts):
    """The ledger and the merged fork's pins read ``Reverts owner/repo#<PR>`` alike: the number
    ends where GitHub's reference ends, so ``#11abc`` reverts nothing."""
    x = CommitInfo("a" * 40, ("0" * 40,), "Tune the matmul (#11)", committer_time=1, files=(FileChange("y"),), pr=11)
    y = CommitInfo("b" * 40, ("a" * 40,), f"Undo the tuning (#14)\n\n{line}\n", committer_time=2,
                   files=(FileChange("y"),), pr=14)
    led = build_ledger([x, y], [])
    assert [e.disposition for e in led.entries] == [Disposition.NO_OP if reverts else Disposition.PENDING] * 2
    assert upstream_reverts(y, x) is reverts
