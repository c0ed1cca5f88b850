"""The nightly triage's issues as a person watching the fork sees them: a failure that comes back
after a person closed its issue, a person's notes near GitHub's body limit, secrets in failing lines.

Each test here failed on the code it was written against.
Fixtures: the real SQLite store and the local GitHub over HTTP, as in ``test_issues.py``.
"""
from __future__ import annotations

from bot.config.triage import TriageSettings
from bot.github.limits import BODY_LIMIT
from bot.store import Store
from bot.triage.group import Grouper
from bot.triage.issues import marker
from bot.triage.records import FailureRecord, normalize_test_id
from bot.triage.rules import RulesTable
from bot.triage.service import triage_nightly
from tests.triage.test_issues import ALLOC, DAY, DOT, OWNER, REPO, T0, issues_of, nightly, service, world  # noqa: F401

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


# --------------------------------------------------------------------------- issue lifecycle
async def test_a_failure_that_recurs_after_a_person_closed_its_issue_is_visible_again(world, github_app, tmp_path):  # noqa: F811
    """A person closes the issue ("fixed by #123"), but the next nightly fails the same way: the
    root cause must be on an open issue again (reopened, or a new one) — not only written into a
    closed issue nobody looks at."""
    fake, inst, fork, good, culprit, bad = world
    gh = github_app.installation(inst.id)
    svc = service(Store(tmp_path / "db.sqlite"), gh, fork)
    await svc.process(nightly(1, bad, {DOT: ALLOC}))                  # a crash: opens at once
    (issue,) = await issues_of(gh)
    await gh.patch(f"/repos/{OWNER}/{REPO}/issues/{issue['number']}", data={"state": "closed", "state_reason": "completed"})

    actions = await svc.process(nightly(2, bad, {DOT: ALLOC}))        # still failing
    assert actions, "the recurrence must be acted on"
    key = actions[0].keys[0]
    open_ones = [i for i in await issues_of(gh) if i["state"] == "open" and marker(key) in (i["body"] or "")]
    assert open_ones, f"the recurring failure has no open issue: actions {[a.kind for a in actions]}"


async def test_a_persons_notes_at_the_end_survive_when_the_status_grows_past_the_body_limit(world, github_app, tmp_path):  # noqa: F811
    """A person's investigation notes (a pasted log) bring the issue body near GitHub's limit —
    GitHub accepted that body. The next nightly's status refresh must not cut the person's text
    off the end of the body (forksync should shorten its own text instead)."""
    fake, inst, fork, good, culprit, bad = world
    gh = github_app.installation(inst.id)
    svc = service(Store(tmp_path / "db.sqlite"), gh, fork)
    await svc.process(nightly(1, bad, {DOT: ALLOC}))
    (issue,) = await issues_of(gh)
    sign_off = "-- end of my notes, please keep them (a person)"
    filler = "\n".join(f"notes {i:05d}: python/test/unit/language/test_core.py::test_dot still aborts here"
                       for i in range(600))
    body = issue["body"] + "\n\n### My investigation\n```text\n" + filler + "\n```\n"
    body += "\n" * (BODY_LIMIT - 300 - len(body) - len(sign_off)) + sign_off + "\n"
    assert BODY_LIMIT - 400 < len(body) <= BODY_LIMIT - 200           # GitHub accepts it
    await gh.patch(f"/repos/{OWNER}/{REPO}/issues/{issue['number']}", data={"body": body})

    # the fault fails in more cases on the next nightlies: the status section grows
    cases = tuple(f"python/test/unit/language/test_core.py::test_dot[{m}-{n}-{k}-4-none-fp16-float32]"
                  for m in (16, 32, 64, 128) for n in (16, 32, 64, 128) for k in (32, 64))
    for i in (2, 3):
        await svc.process(nightly(i, bad, {c: ALLOC for c in cases} | {DOT: ALLOC}, tests=cases + (DOT,)))
    (issue,) = await issues_of(gh)
    assert "<!-- forksync:status:end -->" in issue["body"]
    assert sign_off in issue["body"], "the person's notes were cut off the end of the issue"


async def test_the_status_section_stays_current_when_a_persons_notes_precede_it_near_the_limit(world, github_app, tmp_path):  # noqa: F811
    """A person writes long notes at the top of the issue (under forksync's marker; GitHub accepted
    the body). When the fault spreads to more tests, the refreshed status must still be in the
    body on the following nightlies: its end marker must survive the cut, and the status must not
    be appended a second time only to be cut away."""
    fake, inst, fork, good, culprit, bad = world
    gh = github_app.installation(inst.id)
    svc = service(Store(tmp_path / "db.sqlite"), gh, fork)
    await svc.process(nightly(1, bad, {DOT: ALLOC}))
    (issue,) = await issues_of(gh)
    first, rest = issue["body"].split("\n", 1)
    notes = "\n".join(f"- note {i:04d}: bisected by hand on the H200 box, still aborts in getCvtOrder"
                       for i in range(900))
    room = BODY_LIMIT - 400 - len(issue["body"]) - len("\n### Notes (a person)\n\n")
    body = first + "\n### Notes (a person)\n" + notes[:room] + "\n" + rest
    assert len(body) <= BODY_LIMIT - 300                              # GitHub accepts it
    await gh.patch(f"/repos/{OWNER}/{REPO}/issues/{issue['number']}", data={"body": body})

    # the fault spreads: 12 test functions × 16 cases each
    cases = tuple(f"python/test/unit/language/test_core.py::test_op{f:02d}[{m}-{n}-4-none-fp16-float32-True]"
                  for f in range(12) for m in (16, 32, 64, 128) for n in (16, 32, 64, 128))
    for i in (2, 3):
        await svc.process(nightly(i, bad, {c: ALLOC for c in cases} | {DOT: ALLOC}, tests=cases + (DOT,)))
    (issue,) = await issues_of(gh)
    b = issue["body"]
    assert b.count("<!-- forksync:status:start -->") == 1 and b.count("<!-- forksync:status:end -->") == 1
    assert "Latest nightly: `nightly-3`" in b, "the status shown is not the latest nightly's"


# --------------------------------------------------------------------------- secrets
async def test_a_token_in_the_failing_line_never_reaches_the_issue_title_or_body(world, github_app, tmp_path):  # noqa: F811
    """A test that clones a cache repository fails, and the exception names the clone URL with
    its token. The sample output is redacted, but the title, the signature row and the suggested
    rule must not show the token either."""
    fake, inst, fork, good, culprit, bad = world
    gh = github_app.installation(inst.id)
    store = Store(tmp_path / "svc.db")
    failures = {
        "python/test/unit/runtime/test_cache.py::test_remote_cache[redis]":
            ("E   requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: "
             f"https://artifacts.example.com/triton-cache.tar?token={TOKEN}\n"
             "python/test/unit/runtime/test_cache.py:88: HTTPError"),
        "python/test/unit/runtime/test_cache.py::test_clone_cache":
            ("E   subprocess.CalledProcessError: Command '['git', 'clone', "
             f"'https://x-access-token:{TOKEN}@github.com/meta/kc.git', '/tmp/kc']' returned non-zero exit status 128."),
    }
    for i in (1, 2):                                  # a non-crash opens on its second nightly
        recs = [FailureRecord(test=normalize_test_id(t), raw_test=t, outcome="failed", text=text,
                              run=f"nightly-{i}", commit=bad, time=T0 + i * DAY, platform="h200")
                for t, text in failures.items()]
        await triage_nightly(store=store, gh=gh, owner=OWNER, repo=REPO, settings=TriageSettings(),
                             table=RulesTable(), run=f"nightly-{i}", time=T0 + i * DAY, commit=bad, records=recs)
    issues = await issues_of(gh)
    assert len(issues) == 2
    leaks = [(i["number"], where) for i in issues for where in ("title", "body") if TOKEN[4:24] in i[where]]
    assert not leaks, f"the token is in {leaks}"


async def test_a_token_cut_by_the_sample_window_is_still_redacted():
    """The sample kept for issues and prompts is the output's last 4,000 characters, redacted. A
    token that straddles that window must not survive as a long fragment (most of the secret)."""
    line = f"export GITHUB_TOKEN={TOKEN}\n"
    tail = "E   RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered\n"
    # the 4,000-character window starts 4 characters into the token
    pad = "x" * (4000 + 4 - len(TOKEN) - 1 - len(tail) - 1) + "\n"
    text = "env dump:\n" + line + pad + tail
    assert len(text) - text.index(TOKEN) - 4 <= 4000 < len(text) - text.index(TOKEN)
    r = FailureRecord(test="k.py::test_dot", raw_test="k.py::test_dot[1]", outcome="failed", text=text)
    (g,) = Grouper().group([r])
    (sample,) = g.logs(1)
    assert TOKEN[4:] not in sample, "all 36 secret characters of the token (all but its ghp_ prefix) reached the sample"
