"""The handlers' pure rules, as tables of inputs and exact outputs."""
import pytest

from bot.model import Disposition, PlanItem, Unit
from bot.sync.landing import closer_disposition
from bot.sync.prs import verify_resolution
from bot.sync.service import _deps_first, scrub
from bot.sync.status import SyncStatus
from bot.sync.status_issue import render_status, ticked_actions
from bot.sync.upstream import due_for_poll

A, B = "a" * 40, "b" * 40


@pytest.mark.parametrize("log,markers,problems", [
    (f"x\n\nUpstream-Commit: {A}\n\0y\n\nUpstream-Commit: {B}\n", [], []),
    (f"Upstream-Commit: {A}\n", [],
     [f"`Upstream-Commit` trailers missing for `{B[:12]}` (keep one fork commit per upstream commit, with its trailer)"]),
    (f"Upstream-Commit: {A}\n\0\nUpstream-Commit: {B}\n", ["f.py", "g.py"], ["conflict markers remain in `f.py`, `g.py`"]),
    (f"x\n\nUpstream-Commit: {A}\nUpstream-Commit: {B}\n\0", [],
     [f"the commit \"x\" names 2 upstream commits (`{A[:12]}`, `{B[:12]}`): picks squashed into one commit land "
      "as one fork commit, no longer bisected or backed out one by one — keep one fork commit per upstream commit: "
      "reset the branch to the last commit forksync pushed and push your changes on top of it"]),
])
def test_verify_resolution(log, markers, problems):
    assert verify_resolution(log, markers, [A, B]) == problems


@pytest.mark.parametrize("reason,expected", [
    ("deferred: waits for LLVM", (Disposition.DEFERRED_BLOCKED, "waits for LLVM")),
    ("Defer - broken on MI300", (Disposition.DEFERRED_BLOCKED, "broken on MI300")),
    ("not needed anymore", (Disposition.PENDING, "not needed anymore")),
    ("", (Disposition.PENDING, "")),
    ("deferring is not a word here", (Disposition.PENDING, "deferring is not a word here")),
])
def test_closer_disposition(reason, expected):
    assert closer_disposition(reason) == expected


def test_ticked_actions():
    body = "- [x] <!-- retry:chain-0123456789ab --> retry\n- [ ] <!-- retry:bundle-1 --> r\n* [X] <!-- replan --> re-plan"
    assert ticked_actions(body) == ["retry:chain-0123456789ab", "replan"]
    assert ticked_actions(None) == []


def test_status_issue_says_stale_and_alarm():
    st = SyncStatus(repo="meta/triton", upstream_head=A, days_behind=2.5, backlog=7, upstream_seen_at=1000.0, computed_at=1000.0,
                    last_fetch_error="403 Forbidden", units=({"id": "bundle-x", "kind": "bundle", "pr": 4,
                                                            "url": "https://github.com/meta/triton/pull/4", "state": "open"},))
    body = render_status(st, stale_after_s=86400, alarm_after_s=3 * 86400, now=1000.0 + 4 * 86400)
    assert ("**These numbers are stale**: the last fetch of upstream failed: 403 Forbidden. Upstream was last seen "
            "4.0 days ago. That is longer than the alarm age (3.0 days).\n\n") in body
    assert "| Days Behind | 2.5 — the frontier's lag behind upstream head" in body
    assert "| Backlog | 7 commits behind the frontier not handled |" in body
    assert "- [ ] <!-- retry:bundle-x --> retry `bundle-x` (bundle, [#4](https://github.com/meta/triton/pull/4), open)" in body
    fresh = SyncStatus(repo="r", upstream_seen_at=1000.0)
    assert "stale" not in render_status(fresh, stale_after_s=86400, alarm_after_s=3 * 86400, now=2000.0)
    assert fresh.stale(86400, now=1000.0 + 86401) is True


def test_status_issue_of_a_fork_never_synced_claims_no_age():
    # just installed, and the first fetch of the fork failed: upstream was never seen, so no age
    # can be longer than the alarm age; the issue says it was never seen instead
    st = SyncStatus(repo="meta/triton", last_fetch_error="fetch of the fork meta/triton failed: git fetch -q --prune "
                                                         "failed (128): fatal: expected 'packfile'")
    body = render_status(st, stale_after_s=86400, alarm_after_s=3 * 86400, now=1000.0)
    assert ("> **These numbers are stale**: the last refresh failed: fetch of the fork meta/triton failed: git fetch -q "
            "--prune failed (128): fatal: expected 'packfile'. Upstream was never seen.\n\n") in body
    assert "alarm age" not in body
    never = render_status(SyncStatus(repo="meta/triton"), stale_after_s=86400, alarm_after_s=3 * 86400, now=1000.0)
    assert "> **These numbers are stale**: never synced: upstream was never seen.\n\n" in never


def test_due_for_poll():
    rows = [{"fork": "a", "poll_interval_s": 300, "last_poll_at": 0}, {"fork": "b", "poll_interval_s": 300,
            "last_poll_at": 900}, {"fork": "c", "poll_interval_s": 0, "last_poll_at": 0}]
    assert [r["fork"] for r in due_for_poll(rows, 1000)] == ["a"]


def test_scrub_removes_tokens():
    assert scrub("fatal: https://x-access-token:ghs_abc@github.com/o/r.git ghs_abc", ["ghs_abc"]) == \
        "fatal: https://***@github.com/o/r.git ***"


def test_a_body_refresh_keeps_the_agent_report():
    from bot.sync.prs import keep_agent_report
    report = "<!-- forksync:agent-report:start -->\nAgent resolved `a.td`\n<!-- forksync:agent-report:end -->"
    old = "old body\n\n" + report + "\n"
    assert keep_agent_report(old, "new body\n") == "new body\n\n" + report + "\n"
    assert keep_agent_report("old body", "new body") == "new body"
    assert keep_agent_report(old, "new\n" + report) == "new\n" + report


def test_a_refresh_rewrites_only_forksyncs_section_and_keeps_a_persons_text_and_title():
    from bot.sync.prs import own_section, refreshed, title_digest
    opened = own_section("<!-- forksync:unit:bundle-1 -->\n2 commits\n", title_digest("Sync 2 upstream commits"))
    mine = "Waiting for the ROCm bump, @bob.\n\n" + opened + "\n- [ ] benchmarked on MI300\n"
    # forksync's own title: replaced; the person's text above and below: kept
    title, body = refreshed("Sync 2 upstream commits", mine, "Sync 3 upstream commits", "<!-- forksync:unit:bundle-1 -->\n3 commits\n")
    assert title == "Sync 3 upstream commits"
    assert body.startswith("Waiting for the ROCm bump, @bob.\n\n<!-- forksync:body:start -->\n<!-- forksync:unit:bundle-1 -->\n3 commits\n")
    assert body.endswith("<!-- forksync:body:end -->\n\n- [ ] benchmarked on MI300\n") and "2 commits" not in body
    # a title the person gave: kept, now and at the refresh after
    title, body = refreshed("AMD perf sync (do not merge before Friday)", body, "Sync 4 upstream commits", "4 commits\n")
    assert title == "AMD perf sync (do not merge before Friday)" and "4 commits" in body
    title, body = refreshed(title, body, "Sync 5 upstream commits", "5 commits\n")
    assert title == "AMD perf sync (do not merge before Friday)" and "5 commits" in body and "4 commits" not in body
    # unchanged input: the same title and body (no PATCH)
    assert refreshed(title, body, "Sync 5 upstream commits", "5 commits\n") == (title, body)


def test_a_body_a_person_replaced_is_kept_and_a_body_from_before_sections_is_forksyncs():
    from bot.sync.prs import refreshed
    title, body = refreshed("t", "I rewrote this whole description.", "t2", "new\n")
    assert title == "t2" and body.startswith("I rewrote this whole description.\n\n<!-- forksync:body:start -->\nnew\n")
    report = "<!-- forksync:agent-report:start -->\nAgent resolved `a.td`\n<!-- forksync:agent-report:end -->"
    _, body = refreshed("t", "<!-- forksync:unit:chain-1 -->\nold body\n\n" + report + "\n", "t", "new\n")
    assert "old body" not in body and body.startswith("<!-- forksync:body:start -->\nnew\n") and body.endswith(report + "\n")


def test_a_body_saved_by_githubs_web_editor_with_crlf_line_ends_gets_its_section_replaced_not_repeated():
    from bot.sync.prs import own_section, refreshed, title_digest
    saved = ("Note from alice\n\n" + own_section("old\n", title_digest("t")) + "\nmore\n").replace("\n", "\r\n")
    _, body = refreshed("t", saved, "t", "new\n")
    assert body.count("<!-- forksync:body:start -->") == 1 and "old" not in body
    assert body.startswith("Note from alice\r\n\r\n<!-- forksync:body:start -->\nnew\n") and body.endswith("\r\nmore\r\n")


def test_a_persons_quote_of_forksyncs_section_is_not_taken_for_the_section():
    """A person asks about forksync's markers, pasting the section's source in a code fence above
    it: the section forksync refreshes is its own (the one the PR shows), not the quote, and the
    person's text stays as they wrote it."""
    from bot.sync.prs import own_section, refreshed, title_digest
    opened = own_section("<!-- forksync:unit:bundle-1 -->\n2 commits\n", title_digest("Sync 2 upstream commits"))
    theirs = "What are these comments for?\n```\n" + opened + "```\n\n"
    _, body = refreshed("Sync 2 upstream commits", theirs + opened, "Sync 3 upstream commits",
                        "<!-- forksync:unit:bundle-1 -->\n3 commits\n")
    assert body.startswith(theirs), body                        # the person's quote, untouched
    assert "3 commits" in body[len(theirs):], body             # forksync's own section is current


def test_a_section_whose_end_marker_a_person_deleted_is_replaced_once_and_their_text_below_stays():
    """alice edits the body on GitHub and drops the section's last line (``<!-- forksync:body:end -->``)
    while adding a note below it: refreshes must neither show forksync's section twice nor delete
    her note."""
    from bot.sync.prs import own_section, refreshed, title_digest
    opened = own_section("<!-- forksync:unit:bundle-1 -->\n2 commits\n", title_digest("Sync 2 upstream commits"))
    edited = "Holding for ROCm, @bob.\n\n" + opened.replace("<!-- forksync:body:end -->\n", "") + "\n- [ ] MI300 run green\n"
    title, body = refreshed("Sync 2 upstream commits", edited, "Sync 3 upstream commits", "3 commits\n")
    assert body.count("<!-- forksync:body:start -->") == 1 and "2 commits" not in body, body
    title, body = refreshed(title, body, "Sync 4 upstream commits", "4 commits\n")
    assert "- [ ] MI300 run green" in body and "Holding for ROCm, @bob." in body, body
    assert body.count("<!-- forksync:body:start -->") == 1 and "4 commits" in body, body


def test_a_section_whose_end_marker_a_person_deleted_neither_freezes_forksyncs_title_nor_drops_theirs():
    from bot.sync.prs import own_section, refreshed, title_digest
    opened = own_section("2 commits\n", title_digest("Sync 2 upstream commits"))
    cut = opened.replace("<!-- forksync:body:end -->\n", "")
    # forksync's own title goes on following what forksync renders
    title, body = refreshed("Sync 2 upstream commits", "Note above\n\n" + cut, "Sync 3 upstream commits", "3 commits\n")
    for n in (4, 5):
        title, body = refreshed(title, body, f"Sync {n} upstream commits", f"{n} commits\n")
    assert title == "Sync 5 upstream commits", (title, body)
    # a title the person gave the PR (the body still carries forksync's mark of its own) stays
    title, _ = refreshed("AMD perf sync (do not merge before Friday)", cut, "Sync 3 upstream commits", "3 commits\n")
    assert title == "AMD perf sync (do not merge before Friday)"


def test_a_pr_a_person_opened_on_a_units_branch_keeps_their_title_and_words_at_every_refresh():
    """A person's own PR from forksync's branch (``opened_by_person``): no mark says which title
    was forksync's, so none is taken for it — their title stays whatever it is, even one equal to
    a title forksync once set (copied from its closed PR), and their body is never taken for
    forksync's whole old-style body; forksync's section follows their text."""
    from bot.sync.prs import own_section, refreshed, title_digest
    title, body = refreshed("Port the AMD rework", "Opened by me.\r\n\r\ncc @bob", "[forksync] chain: 1", "1 commit\n",
                            opened_by_person=True)
    assert title == "Port the AMD rework"
    assert body == "Opened by me.\r\n\r\ncc @bob\n\n" + own_section("1 commit\n", title_digest("[forksync] chain: 1"))
    for n in (2, 3):
        title, body = refreshed(title, body, f"[forksync] chain: {n}", f"{n} commits\n", opened_by_person=True)
    assert title == "Port the AMD rework" and body.startswith("Opened by me.\r\n\r\ncc @bob\n\n<!-- forksync:body:start -->")
    assert "3 commits" in body and body.count("<!-- forksync:body:start -->") == 1
    assert refreshed(title, body, "[forksync] chain: 3", "3 commits\n", opened_by_person=True) == (title, body)
    # the title and section of forksync's closed PR, copied: the title is the person's now
    copied = own_section("1 commit\n", title_digest("[forksync] chain: 1"))
    title, body = refreshed("[forksync] chain: 1", "Reopened by hand.\n\n" + copied, "[forksync] chain: 2", "2 commits\n",
                            opened_by_person=True)
    assert title == "[forksync] chain: 1" and body.startswith("Reopened by hand.\n\n<!-- forksync:body:start -->\n2 commits")
    # a body that merely begins like forksync's old unmarked bodies is still the person's
    old = "<!-- forksync:unit:chain-1 -->\nmy notes on this chain\n"
    _, body = refreshed("mine", old, "[forksync] chain: 1", "1 commit\n", opened_by_person=True)
    assert body.startswith(old + "\n<!-- forksync:body:start -->\n1 commit"), body
    # an empty body holds nothing of theirs: forksync's section alone
    _, body = refreshed("mine", "", "[forksync] chain: 1", "1 commit\n", opened_by_person=True)
    assert body == own_section("1 commit\n", title_digest("[forksync] chain: 1"))


def test_units_are_published_after_the_units_they_land_after():
    # a chain whose later commit was predicted on a newer bundle's pick: the bundle goes first
    chain = Unit("chain-1", "chain", (PlanItem("1" * 40, ""),), depends_on=("bundle-2",))
    bundle = Unit("bundle-2", "bundle", (PlanItem("2" * 40, ""),))
    other = Unit("chain-3", "chain", (PlanItem("3" * 40, ""),), depends_on=("chain-gone",))
    assert [u.id for u in _deps_first([chain, bundle, other])] == ["bundle-2", "chain-1", "chain-3"]
