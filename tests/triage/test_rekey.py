"""A signature change never orphans an issue: a root cause filed under an older signature version
is found by its marker (or, with the store lost, by the sample output in its body), re-keyed with
the old key kept as an alias, and updated — never filed twice. On the local GitHub (HTTP)."""
from __future__ import annotations

import pytest

from bot.config.triage import TriageSettings
from bot.store import Store
from bot.triage.group import Grouper
from bot.triage.issues import TriageIssues, load_state, marker, render, save_state
from bot.triage.lifecycle import Tracked, TriageState, nightly_from_groups, rekey
from bot.triage.records import FailureRecord
from bot.triage.signature import SIGNATURE_VERSION
from tests.support.github import make_source_repo

OWNER, REPO = "meta", "triton"
T0 = 1_764_460_800
DAY = 86_400
MM = "examples/kernels/test_kernels.py::test_matmul"
# the text the first-version signature keyed as "compile|OutOfResources|out of resource: shared memory,
# Required: <n>, Hardware limit: <n>. Reducing block sizes or `num_stages` may help"
SMEM = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 262144, Hardware limit: 232448. "
        "Reducing block sizes or `num_stages` may help.")
OLD = "sig-3b1e4bfc2c0a"          # a first-version key: not what any current signature gives


@pytest.fixture
def gh(fake_github, github_app, tmp_path):
    make_source_repo(tmp_path / "src", [{"README.md": "fork\n"}])
    fake_github.create_repo(f"{OWNER}/{REPO}", source=tmp_path / "src")
    return github_app.installation(fake_github.install(OWNER).id)


def key_of(grouper: Grouper):
    return lambda text, test: grouper.table.group_id(grouper.signature(text, test))


def nightly(i: int, failures: dict[str, str], grouper: Grouper):
    run, t = f"nightly-{i}", T0 + i * DAY
    recs = [FailureRecord(test=x, outcome="failed", raw_test=x, text=text, run=run, commit="c" * 40, time=t,
                          platform="h200") for x, text in failures.items()]
    return nightly_from_groups(run, t, "c" * 40, grouper.group(recs), recs)


async def old_issue(gh) -> dict:
    """An open issue as the first signature version filed it: its marker is the old key."""
    body = render("issue.md.j2", marker=marker(OLD), key=OLD, rule_title="", cls="real", crash=False,
                  signature="compile|OutOfResources|out of resource: shared memory, Required: <n>",
                  status=f"<!-- forksync:status:start -->\n**Affected tests (1)**\n- `{MM}`\n<!-- forksync:status:end -->",
                  blame="", sample=SMEM, suggested_rule=None)
    return await gh.post(f"/repos/{OWNER}/{REPO}/issues", data={"title": "[nightly] out of resource", "body": body,
                                                                 "labels": ["nightly-failure"]})


async def all_issues(gh) -> list[dict]:
    return [i async for i in gh.getiter(f"/repos/{OWNER}/{REPO}/issues?state=all")]


async def test_an_issue_filed_under_the_old_signature_is_rekeyed_and_updated_not_filed_again(gh, tmp_path):
    issue = await old_issue(gh)
    store = Store(tmp_path / "forksync.db")
    old = Tracked(OLD, "real", "out of resource", "compile|OutOfResources|…", state="open", issue=issue["number"],
                  fail_runs=(("nightly-0", T0, "c" * 40),), tests=frozenset({MM}), first_seen=T0, last_seen=T0,
                  sample=SMEM, version=1)
    save_state(store, f"{OWNER}/{REPO}", TriageState({OLD: old}), "nightly-0", [], T0)
    grouper = Grouper()
    new_key = key_of(grouper)(SMEM, MM)
    assert new_key != OLD

    svc = TriageIssues(store, gh, OWNER, REPO, TriageSettings(), key_of=key_of(grouper))
    actions = await svc.process(nightly(1, {MM: SMEM}, grouper))

    assert [(a.kind, a.keys) for a in actions] == [("update", (new_key,))]
    issues = await all_issues(gh)
    assert [i["number"] for i in issues] == [issue["number"]]           # no second issue
    body = issues[0]["body"]
    assert marker(new_key) in body and marker(OLD) in body              # found by either marker from now on
    state = load_state(store, f"{OWNER}/{REPO}")
    assert list(state.tracked) == [new_key]
    t = state.tracked[new_key]
    assert (t.issue, t.aliases, t.version, t.runs, t.state) == (issue["number"], (OLD,), SIGNATURE_VERSION, 2, "open")


async def test_with_the_store_lost_the_old_issue_is_found_through_its_sample(gh, tmp_path):
    issue = await old_issue(gh)
    store = Store(tmp_path / "forksync.db")             # nothing tracked: the database was lost
    grouper = Grouper()
    svc = TriageIssues(store, gh, OWNER, REPO, TriageSettings(open_after_nights=1), key_of=key_of(grouper))
    actions = await svc.process(nightly(1, {MM: SMEM}, grouper))

    new_key = key_of(grouper)(SMEM, MM)
    assert [(a.kind, a.keys) for a in actions] == [("open", (new_key,))]   # decided to open: it reuses the old issue
    issues = await all_issues(gh)
    assert [i["number"] for i in issues] == [issue["number"]]
    assert marker(new_key) in issues[0]["body"]
    assert load_state(store, f"{OWNER}/{REPO}").tracked[new_key].issue == issue["number"]


def test_rekey_merges_two_old_causes_that_are_one_fault_now():
    a = Tracked("sig-aaaaaaaaaaaa", "real", "a", "s", state="open", issue=7, tests=frozenset({"t.py::a"}),
                fail_runs=(("n1", 1, "c"),), first_seen=1, last_seen=1, sample="x", version=1)
    b = Tracked("sig-bbbbbbbbbbbb", "real", "b", "s", state="pending", tests=frozenset({"t.py::b"}),
                fail_runs=(("n2", 2, "c"),), first_seen=2, last_seen=2, sample="y", version=1)
    rule = Tracked("smem-overflow", "real", "r", "s", version=1)
    state = rekey(TriageState({a.key: a, b.key: b, rule.key: rule}), lambda t: "sig-cccccccccccc", 2)
    assert sorted(state.tracked) == ["sig-cccccccccccc", "smem-overflow"]      # a rule id is never re-keyed
    merged = state.tracked["sig-cccccccccccc"]
    assert (merged.issue, merged.state, set(merged.aliases), merged.tests, merged.runs) == \
        (7, "open", {"sig-aaaaaaaaaaaa", "sig-bbbbbbbbbbbb"}, frozenset({"t.py::a", "t.py::b"}), 2)
    assert state.tracked["smem-overflow"].version == 2
    assert rekey(state, lambda t: "other", 2) is state                          # already current: unchanged
