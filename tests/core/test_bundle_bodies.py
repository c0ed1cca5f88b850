"""What a bundle body says about each member decides its disposition (real messages of the Triton
fork, shortened), and reverts named by Phabricator ids (tables of messages and exact claims)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.config.forksync import ProvenanceRules
from bot.core.ledger import build_ledger
from bot.core.provenance import claims, reverted_diffs
from bot.model import CommitInfo, Disposition, FileChange

RULES = ProvenanceRules(pr_citation_pattern=r"(?<![\w/])(?:triton-lang/triton)?#(\d{3,6})\b")

B1872 = ("[triton][beta] [Cherry-pick][BUNDLE] Cherry-pick 5 upstream commits (#9552, #9653, #9655, #9645, #9688) (#1872)\n\n"
         "Summary:\nPull Request resolved: https://github.com/facebookexperimental/triton/pull/1872\n\n"
         "Reactor-Bundle (applied, 1 with code):\n- #9552 LLVM bump 27d654c4 (RESOLVED AMD TDM + Proton).\n"
         "Pin-advance only (no beta code): #9653 (llvm hash, beta uses llvm-info.json), #9688 (revert of #9653).\n"
         "Inapplicable (beta lacks fpsan; pin-advance): #9655, #9645.\n\n"
         "Deferred (recorded; focused follow-up required):\n"
         "- #9511 (RemoveLayoutConversions fork) and #9136 (LivenessAnalysis vs beta WS) — declined; reconcile.\n")
B1771 = ("[triton][beta] [Cherry-pick][BUNDLE] Cherry-pick 3 upstream commits (#9219, #9361, #9396) (#1771)\n\n"
         "Reactor-Bundle:\n"
         "- [1] 483327f0 PR #9219 '[BACKEND] Improve and simplify ReduceOp lowering' — NO-OP (reduce refactor not adopted)\n"
         "- [5] 97c02ff4 PR #9361 '[Gluon] CLC support for Blackwell' — ADOPTED (additive)\n"
         "- [6] 80c62227 PR #9396 '[TritonGPU] Run Gluon canonicalizer' — CLEAN/ADOPTED\n")
B2234 = ("[triton][beta] [Cherry-pick][BUNDLE] tensordesc migration (#9851 #9984 ...) (#2234)\n\n"
         "## Summary\n\nFolded bundle. Built on the earlier 3-pick bundle (#9954, #10031, #10013). Validated as one diff.\n\n"
         "### Dependents applied\n- **#9792** [AMD] Add pass — re-migrated onto the post-#9851 API.\n\n"
         "### Dependents already satisfied in beta (frontier advance only)\n- **#9982** consan.mlir already carries it.\n\n"
         "### Still deferred (kept in OAI_UPSTREAM_DEFERRED)\n- **#9974** Add multicast flag — depends on #9977.\n")
B2031 = ("[triton][beta] [Cherry-pick][BUNDLE] Cherry-pick 2 upstream(#10124 #10120... (#2031)\n\n## Summary\n\n"
         "### Picked (2)\n#10124 [Gluon] Update configs; #10120 Python typing followup to #10048.\n\n"
         "### Won't-port (2) — CI-only, no beta equivalent\n#10161 [AMD][CI] Allow continue-on-error; #10146 [AMD][CI] Switch.\n")


@pytest.mark.parametrize("msg, expected", [
    (B1872, [("pick", "#9552"), ("no-op", "#9653"), ("no-op", "#9688"), ("skip", "#9655"), ("skip", "#9645"),
             ("wont-port", "#9511"), ("wont-port", "#9136")]),
    (B1771, [("pick", "#9361"), ("pick", "#9396"), ("no-op", "#9219")]),
    (B2234, [("pick", "#9851"), ("pick", "#9984"), ("pick", "#9954"), ("pick", "#10031"), ("pick", "#10013"),
             ("pick", "#9792"), ("no-op", "#9982"), ("defer", "#9974")]),
    (B2031, [("pick", "#10124"), ("pick", "#10120"), ("wont-port", "#10161"), ("wont-port", "#10146")]),
    # a PR number inside the quoted upstream title is that title's reference, not a pick
    ("[triton][beta] [Cherry-pick][RESOLVED] 'Reapply \"[NVIDIA] Add native MXFP FP8 (#7918)\" (#8029) (#8129)' (#890)",
     [("pick", "#8129")]),
    ("[beta] [Cherry-pick] 'Revert \"Fix Axis analysis\" (#8166)' (#932)", [("pick", "#8166")]),
    ("[beta] [Cherry-pick] 'Partially revert swiglu optimization from #8801 (#8905)'", [("pick", "#8905")]),
])
def test_bundle_body_items_decide_the_members(msg, expected):
    assert [(c.kind, c.ref) for c in claims(msg, RULES)] == expected


def test_the_forks_own_words_are_the_reason():
    by_ref = {c.ref: c for c in claims(B1771 + B1872[B1872.index("\n"):], RULES)}
    assert by_ref["#9219"].reason.endswith("— NO-OP (reduce refactor not adopted)")
    assert by_ref["#9653"].reason.startswith("Pin-advance only (no beta code): #9653")
    [earlier] = [c for c in claims(B2234, RULES) if c.ref == "#9954"]
    assert earlier.reason == "Built on the earlier 3-pick bundle (#9954, #10031, #10013)"


def _up(i, pr, subject, message_extra=""):
    return CommitInfo(f"{i:x}" * 40, (f"{i - 1:x}" * 40,), f"{subject} (#{pr})" + message_extra, committer_time=i,
                      files=(FileChange(f"f{i}"),), pr=pr)


def test_bundle_items_in_the_ledger_with_a_later_pick():
    """A member the bundle declared NO-OP stays NO_OP with the bundle's words; a later pick of a
    member declared deferred makes it PICKED (a landed change is a fact)."""
    ups = [_up(1, 9219, "Improve ReduceOp"), _up(2, 9361, "CLC"), _up(3, 9396, "Canon"), _up(4, 9511, "Remat")]
    f1 = CommitInfo("a" * 40, (), B1771, committer_time=10)
    f2 = CommitInfo("b" * 40, (), "[Cherry-pick] 'Remat (#9511)' (#1900)", committer_time=11)
    led = build_ledger(ups, [f1, f2])
    assert [(e.pr, e.disposition.value) for e in led.entries] == [
        (9219, "NO_OP"), (9361, "PICKED"), (9396, "PICKED"), (9511, "PICKED")]
    assert led.entries[0].reason.startswith("[1] 483327f0 PR #9219")


@pytest.mark.parametrize("msg, diffs", [
    ("Revert D92486154 (#869)\n\nThis diff reverts D92486154\nOriginally D92336232 was the culprit", ["D92486154"]),
    ("Revert D92336232: [triton][beta] [Cherry-pick] 'x (#7771)'", ["D92336232"]),
    ("Back out D1234567\n", ["D1234567"]),
    ("Fix D1234567 follow-up\n\nDifferential Revision: D7654321", []),
])
def test_reverted_diffs(msg, diffs):
    assert reverted_diffs(msg) == diffs


def test_revert_of_a_back_out_named_only_by_its_differential_id_relands():
    """Real case (fork #869): pick #7771 (D92336232), back-out "Revert D92336232: …", then
    "Revert D92486154 (#869)" whose body names the original D92336232: #7771 is PICKED again."""
    up = _up(1, 7771, "native specialize")
    pick = CommitInfo("a" * 40, (), "[beta] [Cherry-pick][RESOLVED] 'native specialize (#7771)' (#845)\n\n"
                                    "Differential Revision: D92336232\n", committer_time=10)
    out = CommitInfo("b" * 40, (), "Revert D92336232: [beta] [Cherry-pick][RESOLVED] 'native specialize (#7771)'\n\n"
                                   "Differential Revision:\nD92336232\n", committer_time=11)
    back = CommitInfo("c" * 40, (), "Revert D92486154 (#869)\n\nThis diff reverts D92486154\n"
                                    "Originally D92336232 was thought to be the culprit.\n\nDifferential Revision: D92763334\n",
                      committer_time=12)
    assert build_ledger([up], [pick, out]).entries[0].disposition is Disposition.REVERTED
    [e] = build_ledger([up], [pick, out, back]).entries
    assert e.disposition is Disposition.PICKED and e.fork_commit == "c" * 40


def test_back_out_of_a_revert_behind_tags_relands():
    """Real case (#7987): 'Revert D86123088 (#649)' backs the pick out; '[triton][PR] [triton][Fix]
    Back out "Revert D86123088", Fix old TMA API' lands it again."""
    up = _up(1, 7987, "reduce launch overhead")
    pick = CommitInfo("a" * 40, (), "[Cherry-pick][RESOLVED] reduce launch overhead (#7987) (#626)\n\n"
                                    "Differential Revision: D86123088\n", committer_time=10)
    out = CommitInfo("b" * 40, (), "Revert D86123088 (#649)\n\nThis diff reverts D86123088\n", committer_time=11)
    again = CommitInfo("c" * 40, (), '[triton][PR] [triton][Fix] Back out "Revert D86123088", Fix old TMA API\n',
                       committer_time=12)
    assert build_ledger([up], [pick, out]).entries[0].disposition is Disposition.REVERTED
    [e] = build_ledger([up], [pick, out, again]).entries
    assert e.disposition is Disposition.PICKED and e.fork_commit == "c" * 40


def test_upstream_revert_cancelled_by_its_picked_reland_is_no_op():
    """Real case: #8029 reverts #7918 (kept by the fork); #8129 'Reapply "… (#7918)" (#8029)' is picked."""
    x = _up(1, 7918, "[NVIDIA] Add native MXFP FP8")
    v = CommitInfo("2" * 40, ("1" * 40,), 'Revert "[NVIDIA] Add native MXFP FP8 (#7918)" (#8029)\n\nThis reverts commit '
                   + "1" * 40 + ".", committer_time=2, files=(FileChange("f1"),), pr=8029)
    r = CommitInfo("3" * 40, ("2" * 40,), 'Reapply "[NVIDIA] Add native MXFP FP8 (#7918)" (#8029) (#8129)', committer_time=3,
                   files=(FileChange("f1"),), pr=8129)
    p1 = CommitInfo("a" * 40, (), "[Cherry-pick] [NVIDIA] Add native MXFP FP8 (#7918) (#550)", committer_time=10)
    p2 = CommitInfo("b" * 40, (), "[beta] [Cherry-pick][RESOLVED] 'Reapply \"[NVIDIA] Add native MXFP FP8 (#7918)\" "
                                  "(#8029) (#8129)' (#890)", committer_time=11)
    led = build_ledger([x, v, r], [p1, p2])
    assert [(e.pr, e.disposition.value, e.fork_commit) for e in led.entries] == [
        (7918, "PICKED", "a" * 40), (8029, "NO_OP", None), (8129, "PICKED", "b" * 40)]
    # without the reland's pick the revert is still to do
    led = build_ledger([x, v, r], [p1])
    assert [e.disposition.value for e in led.entries] == ["PICKED", "PENDING", "PENDING"]


# ---- fork PR numbers are not upstream citations -----------------------------------------------------

def _ledger(fork_msgs, *, fork_files=(), fork_pid=None):
    x = CommitInfo("1" * 40, ("0" * 40,), "[BACKEND] Fix X (#40)", committer_time=1, files=(FileChange("lib/x.cpp"),),
                   pr=40, patch_id="p" * 40)
    z = CommitInfo("2" * 40, ("1" * 40,), "Refactor Z (#88)", committer_time=2, files=(FileChange("lib/z.cpp"),), pr=88)
    y = CommitInfo("3" * 40, ("2" * 40,), "[AMD] Tune Y (#8975)", committer_time=3, files=(FileChange("amd/y.cpp"),),
                   pr=8975)
    fork = [CommitInfo(f"{i + 10:x}" * 40, (), m, committer_time=10 + i, files=tuple(FileChange(p) for p in fork_files),
                       patch_id=fork_pid) for i, m in enumerate(fork_msgs)]
    return {e.pr: e.disposition.value for e in build_ledger([x, z, y], fork).entries}


@pytest.mark.parametrize("msg, files, pid, expected", [
    # a squash-merged fork PR: its number is the fork's, and an unrelated upstream #88 stays PENDING
    ("Sync upstream (#88)", ("lib/x.cpp", "lib/q.cpp"), None, {40: "PENDING", 88: "PENDING", 8975: "PENDING"}),
    # forksync's own PR title squash-merged by a person: the pick is found by its patch, not by #88
    ("[forksync] bundle: 1 upstream commit (111111111111) (#88)", ("lib/x.cpp",), "p" * 40,
     {40: "PICKED", 88: "PENDING", 8975: "PENDING"}),
    # "[Cherry-pick] … (#8975) (#890)": #8975 is upstream's, #890 the fork's
    ("[Cherry-pick] Tune Y for gfx950 (#8975) (#890)", ("amd/y.cpp",), None, {40: "PENDING", 88: "PENDING", 8975: "PICKED"}),
    # a lone trailing number is confirmed by the upstream subject …
    ("[Cherry-pick] [AMD] Tune Y (#8975)", (), None, {40: "PENDING", 88: "PENDING", 8975: "PICKED"}),
    # … or by the same paths
    ("[Cherry-pick] gfx950 tuning (#8975)", ("amd/y.cpp",), None, {40: "PENDING", 88: "PENDING", 8975: "PICKED"}),
    # … and nothing else confirms it
    ("[Cherry-pick] gfx950 tuning (#8975)", ("amd/y.cpp", "amd/w.cpp"), None, {40: "PENDING", 88: "PENDING", 8975: "PENDING"}),
])
def test_a_lone_trailing_number_claims_a_commit_only_when_confirmed(msg, files, pid, expected):
    assert _ledger([msg], fork_files=files, fork_pid=pid) == expected


def test_lone_trailing_number_is_a_weak_claim():
    [c] = claims("Sync upstream (#88)", ProvenanceRules())
    assert (c.ref, c.weak) == ("#88", True)
    [c] = claims("[Cherry-pick] Tune Y (#8975) (#890)", RULES)
    assert (c.ref, c.weak) == ("#8975", False)


def test_a_dangling_cherry_picked_from_line_is_reported_like_a_dangling_trailer():
    up = _up(1, 4000, "Fix X")
    other = CommitInfo("e" * 40, (), "Local fix", committer_time=9)
    fx = CommitInfo("a" * 40, (), "Fix X\n\n(cherry picked from commit " + "9" * 40 + ")", committer_time=10)
    fork_internal = CommitInfo("b" * 40, (), "Local fix again\n\n(cherry picked from commit " + "e" * 12 + ")", committer_time=11)
    tr = CommitInfo("c" * 40, (), "Fix\n\nUpstream-Commit: " + "8" * 40, committer_time=12)
    led = build_ledger([up], [other, fx, fork_internal, tr])
    assert led.unresolved == (("9" * 40, "a" * 40, "cherry-picked-from"), ("8" * 40, "c" * 40, "trailer:Upstream-Commit"))


@pytest.mark.parametrize("msg, refs", [
    ("[CI] Fix pre-commit and wheel builds (#2982)\n\nSummary:\n- Sync upstream commit 5900ea6b2 by dropping the wheel.\n",
     [("pick", "5900ea6b2", "upstream-commit-prose")]),
    ("Port upstream commit ABCDEF1234 to the XPU backend", [("pick", "abcdef1234", "upstream-commit-prose")]),
    ("Fix X\n\n> Sync upstream commit 5900ea6b2 (quoted)\n", []),
    ("Fix X\n\nThe upstream commit 5900ea6b2 broke this.\n", []),
])
def test_prose_naming_the_upstream_sha_it_took(msg, refs):
    assert [(c.kind, c.ref, c.rule) for c in claims(msg, RULES) if c.rule != "pr-citation"] == refs


# ---- properties ----------------------------------------------------------------------------------

_SECTIONS = {"pick": "Reactor-Bundle (applied, {n} with code):", "no-op": "Pin-advance only (no beta code):",
             "skip": "Inapplicable (beta lacks fpsan; pin-advance):", "defer": "Deferred ({n}):",
             "wont-port": "Won't-port ({n}):"}
_ITEMS = {"no-op": "NO-OP (not adopted)", "pick": "ADOPTED", "wont-port": "declined; reconcile later",
          "defer": "deferred until the owner lands it", "skip": "inapplicable to beta"}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(sorted(_SECTIONS)), min_size=1, max_size=12), st.data())
def test_every_member_gets_what_its_section_or_item_says(kinds, data):
    """A bundle whose subject lists every member, and whose body says per section (heading lines)
    or per item (a ' — ANNOTATION' after the member) what became of each: each member's claim is
    exactly what the body says, and never also a pick when the body says otherwise."""
    prs = [9000 + 7 * i for i in range(len(kinds))]
    by_item = data.draw(st.lists(st.booleans(), min_size=len(kinds), max_size=len(kinds)))
    subject = "[beta] [Cherry-pick][BUNDLE] Cherry-pick upstream commits (" + ", ".join(f"#{p}" for p in prs) + ") (#1872)"
    body = ["Summary:", ""]
    items = [f"- [{i}] abcdef0{i} PR #{p} 'Upstream title' — {_ITEMS[k]}" for i, (p, k, b) in
             enumerate(zip(prs, kinds, by_item)) if b]
    if items:
        body += ["Reactor-Bundle:", *items, ""]
    for k in sorted(_SECTIONS):
        members = [p for p, kk, b in zip(prs, kinds, by_item) if kk == k and not b]
        if members:
            body += [_SECTIONS[k].format(n=len(members)) + " " + ", ".join(f"#{p}" for p in members) + ".", ""]
    got = {}
    for c in claims(subject + "\n\n" + "\n".join(body), RULES):
        got.setdefault(int(c.ref[1:]), []).append(c.kind)
    assert got == {p: [k] for p, k in zip(prs, kinds)}


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=30),
       st.sampled_from(["", "Sync upstream: ", "[forksync] bundle: ", "[Cherry-pick] ", "Backport "]),
       st.integers(100, 99999))
def test_a_fork_pr_number_never_claims_an_unrelated_upstream_commit(title, lead, n):
    """Whatever the fork subject says, its squash-merge number equal to an upstream PR claims that
    upstream commit only when the upstream subject is in it (paths and patch differ here)."""
    up = CommitInfo("1" * 40, ("0" * 40,), f"Refactor zeta (#{n})", committer_time=1, files=(FileChange("lib/zeta.cpp"),),
                    pr=n, patch_id="a" * 40)
    f = CommitInfo("2" * 40, (), f"{lead}{title} (#{n})", committer_time=2, files=(FileChange("lib/other.cpp"),),
                   patch_id="b" * 40)
    [e] = build_ledger([up], [f]).entries
    want = Disposition.PICKED if "refactor zeta" in f.subject.lower() else Disposition.PENDING
    assert e.disposition is want
