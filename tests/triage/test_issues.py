"""The issue lifecycle end to end on the local GitHub (HTTP), with a real fork repository for the
suspects: open, update, blame, close, reopen, flood cap, restart and a lost store."""
from __future__ import annotations

import pytest

from bot.config.triage import TriageSettings
from bot.store import Store
from bot.triage.group import Grouper
from bot.triage.issues import TriageIssues, marker
from bot.triage.lifecycle import nightly_from_groups
from bot.triage.records import FailureRecord
from bot.triage.suspects import FailureContext, author_mention, commits_between, confirm, rank_suspects
from tests.support.github import commit_files, git, make_source_repo

OWNER, REPO = "meta", "triton"
T0 = 1_764_460_800
DAY = 86_400
ALLOC = ("python: /project/lib/Analysis/Allocation.cpp:43: std::pair<> mlir::triton::getCvtOrder(mlir::Attribute, "
         "mlir::Attribute): Assertion `!(srcMmaLayout && dstMmaLayout && !srcMmaLayout.isAmpere()) && "
         "\"mma -> mma layout conversion is only supported on Ampere\"' failed.\nAborted (core dumped)")
SMEM = ("triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: {n}, Hardware limit: 232448. "
        "Reducing block sizes or `num_stages` may help.")
BUSY = "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable"
DOT = "python/test/unit/language/test_core.py::test_dot[64-64-64-8-chain-dot]"
MM = "examples/kernels/test_kernels.py::test_matmul[128-bf16]"
ADD = "examples/kernels/test_kernels.py::test_add[small-fp32]"


@pytest.fixture
def world(fake_github, tmp_path):
    make_source_repo(tmp_path / "src", [{"README.md": "fork\n"}])
    fake_github.create_repo(f"{OWNER}/{REPO}", source=tmp_path / "src")
    inst = fake_github.install(OWNER)
    # the fork's history the nightlies ran on: good → three commits → bad
    fork = tmp_path / "fork"
    good = make_source_repo(fork, [{"lib/Analysis/Allocation.cpp": "int getCvtOrder() { return 0; }\n",
                                    "python/test/unit/language/test_core.py": "def test_dot(): pass\n",
                                    "docs/index.md": "docs\n"}])[0]
    commit_files(fork, {"docs/index.md": "docs v2\n"}, "Docs: reword")
    (fork / "lib/Analysis/Allocation.cpp").write_text("int getCvtOrder() {\n  return 1;\n}\n")
    git(fork, "add", "-A")
    git(fork, "commit", "-q", "--author", "Alice <12345+alice@users.noreply.github.com>", "-m",
        "[Analysis] Allow mma -> mma conversions (#4321)\n\nUpstream-Commit: " + "c" * 40)
    culprit = git(fork, "rev-parse", "HEAD")
    bad = commit_files(fork, {"python/tutorials/README.rst": "tutorials\n"}, "Tutorials: fix a link")
    return fake_github, inst, fork, good, culprit, bad


def rec(test, outcome, text="", *, run, commit, t):
    return FailureRecord(test=test, outcome=outcome, raw_test=test, text=text, run=run, commit=commit, time=t,
                         platform="h200")


def nightly(i, commit, failures: dict[str, str], tests=(DOT, MM, ADD), grouper=Grouper()):
    run, t = f"nightly-{i}", T0 + i * DAY
    from bot.triage.records import normalize_test_id
    recs = [FailureRecord(test=normalize_test_id(x), outcome="failed" if x in failures else "passed", raw_test=x,
                          text=failures.get(x, ""), run=run, commit=commit, time=t, platform="h200") for x in tests]
    return nightly_from_groups(run, t, commit, grouper.group(recs), recs)


async def issues_of(gh):
    return [i async for i in gh.getiter(f"/repos/{OWNER}/{REPO}/issues?state=all")]


def service(store, gh, fork, settings=TriageSettings()):
    async def suspects_for(t):
        commits = commits_between(str(fork / ".git"), t.last_green, t.first_red)
        ctx = FailureContext(tuple(sorted(t.tests)), (t.sample,))
        return rank_suspects(commits, ctx), t.last_green, t.first_red
    return TriageIssues(store, gh, OWNER, REPO, settings, suspects_for=suspects_for)


async def test_lifecycle_end_to_end(world, github_app, tmp_path):
    fake, inst, fork, good, culprit, bad = world
    gh = github_app.installation(inst.id)
    store = Store(tmp_path / "forksync.db")
    svc = service(store, gh, fork)

    # nightly 0 on the good commit: all green
    assert await svc.process(nightly(0, good, {})) == []
    # nightly 1: a compiler crash (opens at once), a shared-memory failure (needs 2 nightlies),
    # and a busy GPU (infrastructure: never an issue)
    n1 = nightly(1, bad, {DOT: ALLOC, MM: SMEM.format(n=262144), ADD: BUSY})
    actions = await svc.process(n1)
    assert [(a.kind, len(a.keys)) for a in actions] == [("open", 1)]
    (issue,) = await issues_of(gh)
    assert issue["title"].startswith("[nightly crash] test_dot[64-64-64-8-chain-dot]: Allocation.cpp: Assertion `!(srcMmaLayout")
    assert sorted(label["name"] for label in issue["labels"]) == ["crash", "nightly-failure"]
    body = issue["body"]
    key = actions[0].keys[0]
    assert marker(key) in body and "| 1 | h200 |" in body and "`python/test/unit/language/test_core.py::test_dot`" in body
    # suspects shown at once: the commit that changed Allocation.cpp (named in the error) ranks first
    blame = body.split("<!-- forksync:blame:start -->")[1]
    first_row = [line for line in blame.splitlines() if line.startswith("| 1 |")][0]
    assert culprit[:12] in first_row and f"upstream {'c' * 12}" in first_row and "Allocation.cpp named in the error" in first_row
    assert "busy" not in body

    # redelivery of the same nightly: nothing
    assert await svc.process(n1) == []
    # nightly 2: both fail again → crash issue updated, shared-memory issue opens
    actions = await svc.process(nightly(2, bad, {DOT: ALLOC, MM: SMEM.format(n=98304), ADD: BUSY}))
    assert sorted(a.kind for a in actions) == ["open", "update"]
    issues = await issues_of(gh)
    assert len(issues) == 2
    crash = next(i for i in issues if "crash" in i["title"])
    assert "| 2 | h200 |" in crash["body"]

    # a person writes notes; bisection confirms the culprit (blame section written)
    number = crash["number"]
    await gh.patch(f"/repos/{OWNER}/{REPO}/issues/{number}", data={"body": crash["body"] + "\nNotes from a person: looking.\n"})

    async def bisect(g, b):            # the bisection service, through a plain function parameter
        assert (g, b) == (good, bad)
        return culprit
    commits = commits_between(str(fork / ".git"), good, bad)
    ranked = rank_suspects(commits, FailureContext((DOT,), (ALLOC,)))
    found = await confirm(ranked, good, bad, bisect)
    assert found.sha == culprit and found.upstream == "c" * 40
    mention = author_mention(found.commit)
    assert mention == "@alice"
    await svc.write_blame(key, found, mention=mention, suspects=ranked, good=good, bad=bad)

    # nightly 3: still failing → status refreshed; blame and the person's notes are kept
    await svc.process(nightly(3, bad, {DOT: ALLOC, MM: SMEM.format(n=1)}))
    body = (await gh.getitem(f"/repos/{OWNER}/{REPO}/issues/{number}"))["body"]
    assert "| 3 | h200 |" in body
    assert f"**Culprit (confirmed by bisection):** {culprit[:12]}" in body and "sync pick of upstream cccccccccccc" in body
    assert "Notes from a person: looking." in body
    comments = [c async for c in gh.getiter(f"/repos/{OWNER}/{REPO}/issues/{number}/comments")]
    assert any("@alice, could you take a look?" in c["body"] for c in comments)

    # restart: a new service on the same store repeats nothing
    svc2 = service(Store(tmp_path / "forksync.db"), gh, fork)
    assert await svc2.process(nightly(3, bad, {DOT: ALLOC, MM: SMEM.format(n=1)})) == []

    # three green nightlies in which the tests ran → both close; then the crash comes back → reopen
    for i in (4, 5, 6):
        actions = await svc2.process(nightly(i, bad, {}))
    assert sorted(a.kind for a in actions) == ["close", "close"]
    issues = await issues_of(gh)
    assert {i["state"] for i in issues} == {"closed"} and len(issues) == 2
    actions = await svc2.process(nightly(7, bad, {DOT: ALLOC}))
    assert [a.kind for a in actions] == ["reopen"]
    crash = await gh.getitem(f"/repos/{OWNER}/{REPO}/issues/{number}")
    assert crash["state"] == "open" and "**Culprit (confirmed by bisection):**" in crash["body"]
    assert len(await issues_of(gh)) == 2

    # a lost store: the next crash finds its issue again by the hidden marker, no duplicate
    svc3 = service(Store(tmp_path / "fresh.db"), gh, fork)
    await svc3.process(nightly(8, bad, {DOT: ALLOC}))
    assert len(await issues_of(gh)) == 2


async def test_the_flood_files_the_largest_causes_links_them_and_closes_when_over(world, github_app, tmp_path):
    fake, inst, fork, good, culprit, bad = world
    gh = github_app.installation(inst.id)
    svc = service(Store(tmp_path / "db.sqlite"), gh, fork, TriageSettings(max_new_issues_per_run=2))
    # four LLVM crashes: t0 in 3 cases of test_dot (largest), the others in one case each
    tests = [f"k.py::test_dot[{p}]" for p in ("16-fp16", "32-fp16", "64-fp16")] + [f"k.py::t{i}" for i in (1, 2, 3)]
    fault = {t: "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.op{}".format(0 if "dot" in t else t[-1]) for t in tests}
    n1 = nightly(1, bad, fault, tests=tests + ["k.py::test_dot[128-fp16]"])
    actions = await svc.process(n1)
    assert [(a.kind, len(a.keys)) for a in actions] == [("open", 1), ("open", 1), ("flood", 2)]
    issues = {i["title"]: i for i in await issues_of(gh)}
    # test_dot's cause is the largest (3 cases): it gets its own issue first; ties go to the newest, then the id
    assert len(issues) == 3 and "[nightly] Flood: 2 new root causes in nightly-1" in issues
    assert "[nightly crash] test_dot (3 cases): LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.op0" in issues
    dot = issues["[nightly crash] test_dot (3 cases): LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.op0"]
    assert "- `k.py::test_dot` — 3 of 4 cases: `[16-fp16]`, `[32-fp16]`, `[64-fp16]`" in dot["body"]
    assert "**Affected tests (3 cases)**" in dot["body"]
    flood = issues["[nightly] Flood: 2 new root causes in nightly-1"]
    assert "nightly-flood" in [label["name"] for label in flood["labels"]]
    assert f"- #{dot['number']} — test_dot (3 cases): LLVM ERROR" in flood["body"]
    assert flood["body"].count("| `sig-") == 2 and flood["body"].count(" (1 case) | LLVM ERROR") == 2
    # the flood goes on: the same issue refreshed, one more cause opens (cap 2: t2, t3)
    actions = await svc.process(nightly(2, bad, fault, tests=tests))
    assert [a.kind for a in actions if a.kind != "refresh"] == ["update", "update", "open", "open", "flood-close"]
    flood = await gh.getitem(f"/repos/{OWNER}/{REPO}/issues/{flood['number']}")
    assert flood["state"] == "closed"
    comments = [c async for c in gh.getiter(f"/repos/{OWNER}/{REPO}/issues/{flood['number']}/comments")]
    assert comments[-1]["body"].startswith("Closing: the flood is over")
    assert len(await issues_of(gh)) == 5
    # a clean nightly refreshes every open issue's status table
    await svc.process(nightly(3, bad, {}, tests=tests))
    dot = await gh.getitem(f"/repos/{OWNER}/{REPO}/issues/{dot['number']}")
    assert "Latest nightly: `nightly-3`" in dot["body"] and "**passed**" in dot["body"] and "| 2 | h200 |" in dot["body"]
    assert "| 2 | h200 | 2025-12-01 00:00 | 2025-12-02 00:00 | 1 / 3 |" in dot["body"]


async def test_titles_are_unique_and_name_the_last_green_nightly(world, github_app, tmp_path):
    fake, inst, fork, good, culprit, bad = world
    gh = github_app.installation(inst.id)
    svc = service(Store(tmp_path / "db.sqlite"), gh, fork)
    # two faults with the same headline in the same test case, told apart only by the signature's test
    a = "python/test/unit/language/test_core.py::test_dot[a]"
    b = "python/test/unit/language/test_core.py::test_dot[b]"
    await svc.process(nightly(0, good, {}, tests=(a, b)))
    sig = "Fatal Python error: Segmentation fault"
    fails = {a: sig, b: sig}
    await svc.process(nightly(1, bad, fails, tests=(a, b)))
    titles = [i["title"] for i in await issues_of(gh)]
    assert len(titles) == len(set(titles))
    (issue,) = await issues_of(gh)
    assert "`nightly-0` at `" + good[:12] + "`" in issue["body"]
    assert "``" not in issue["body"].replace("```", "")


async def test_triage_nightly_service_blames_and_feeds_the_agent(world, github_app, tmp_path):
    from bot.agents.fix import FixRequest, SuspectDiff
    from bot.config.triage import TriageRule
    from bot.triage.records import normalize_test_id
    from bot.triage.rules import RulesTable
    from bot.triage.service import triage_nightly

    fake, inst, fork, good, culprit, bad = world
    gh = github_app.installation(inst.id)
    store = Store(tmp_path / "svc.db")
    table = RulesTable((TriageRule(id="mma-mma-conversion", title="mma → mma layout conversion asserts",
                                   pattern=r"mma -> mma layout conversion", labels=("area:layouts",)),))
    calls = []

    async def bisect(g, b):
        calls.append((g, b))
        return culprit

    async def one(i, commit, failures):
        recs = [rec(normalize_test_id(x), "failed" if x in failures else "passed", failures.get(x, ""),
                    run=f"nightly-{i}", commit=commit, t=T0 + i * DAY) for x in (DOT, MM, ADD)]
        return await triage_nightly(store=store, gh=gh, owner=OWNER, repo=REPO, settings=TriageSettings(),
                                    table=table, run=f"nightly-{i}", time=T0 + i * DAY, commit=commit, records=recs,
                                    fork_git_dir=str(fork / ".git"), bisect=bisect)

    await one(0, good, {})
    report = await one(1, bad, {DOT: ALLOC, ADD: BUSY})
    assert [(a.kind, a.keys) for a in report.actions] == [("open", ("mma-mma-conversion",))]
    assert {g.id: g.cls for g in report.groups} == {"mma-mma-conversion": "real",
                                                    next(g.id for g in report.groups if g.cls != "real"): "infrastructure"}
    assert calls == [(good, bad)] and report.culprits["mma-mma-conversion"].sha == culprit
    number = report.issues["mma-mma-conversion"]
    issue = await gh.getitem(f"/repos/{OWNER}/{REPO}/issues/{number}")
    assert issue["title"] == "[nightly crash] test_dot: mma → mma layout conversion asserts"
    assert sorted(label["name"] for label in issue["labels"]) == ["area:layouts", "crash", "nightly-failure"]
    assert "**Culprit (confirmed by bisection):** " + culprit[:12] in issue["body"]
    # the agent's input, as plain data its own parser accepts
    inp = report.agent_inputs["mma-mma-conversion"]
    req = FixRequest.from_group(inp, logs=inp["logs"], suspects=[SuspectDiff(**d) for d in inp["suspects"]])
    assert req.group == "mma-mma-conversion" and req.klass == "real"
    assert req.suspects[0].sha == culprit and "Allocation.cpp" in req.suspects[0].diff
    assert req.suspects[0].upstream_sha == "c" * 40


async def test_a_failure_half_way_is_redone_without_duplicates(world, github_app, tmp_path):
    from bot.github.client import GitHubAPIError

    fake, inst, fork, good, culprit, bad = world
    gh = github_app.installation(inst.id)
    svc = service(Store(tmp_path / "db.sqlite"), gh, fork)
    await svc.process(nightly(1, bad, {DOT: ALLOC}))                       # a crash: opens at once
    for i in (2, 3):
        await svc.process(nightly(i, bad, {}))
    # the closing nightly fails half-way: status refreshed, then the close comment is refused
    fake.faults.unprocessable(f"/repos/{OWNER}/{REPO}/issues/*/comments", method="POST")
    with pytest.raises(GitHubAPIError):
        await svc.process(nightly(4, bad, {}))
    (issue,) = await issues_of(gh)
    assert issue["state"] == "open"
    # the same nightly again (a redelivery, or the worker's retry): closes once, one comment
    actions = await svc.process(nightly(4, bad, {}))
    assert [a.kind for a in actions] == ["close"]
    (issue,) = await issues_of(gh)
    comments = [c async for c in gh.getiter(f"/repos/{OWNER}/{REPO}/issues/{issue['number']}/comments")]
    assert issue["state"] == "closed" and len(comments) == 1 and comments[0]["body"].startswith("Closing:")
    assert await svc.process(nightly(4, bad, {})) == []


def test_a_title_clash_gets_the_root_cause_appended_and_titles_keep_masked_words(tmp_path):
    from bot.triage.lifecycle import Tracked, TriageState

    svc = TriageIssues(Store(tmp_path / "t.db"), None, OWNER, REPO, TriageSettings())
    a = Tracked("sig-a", "real", "LLVM ERROR: Cannot select", "s", tests=frozenset({"k.py::test_dot[1]"}),
                issue=1, issue_title="[nightly] test_dot[1]: LLVM ERROR: Cannot select")
    b = Tracked("sig-b", "real", "LLVM ERROR: Cannot select", "s2", tests=frozenset({"k.py::test_dot[1]"}))
    state = TriageState({"sig-a": a, "sig-b": b})
    assert svc._title(b, state) == "[nightly] test_dot[1]: LLVM ERROR: Cannot select (sig-b)"
    # the title is the line as the log wrote it: masking (for identity) drops directories, not title words
    recs = [FailureRecord(test="k.py::test_x", raw_test="k.py::test_x[a]", outcome="failed",
                          text="RuntimeError: operation not supported on global/shared address space")]
    (g,) = Grouper().group(recs)
    assert g.title == "RuntimeError: operation not supported on global/shared address space"
