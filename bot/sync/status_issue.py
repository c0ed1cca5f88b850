"""The status issue: one issue on the fork, Renovate-dashboard style, kept current.

Found by the hidden marker ``<!-- forksync:status-issue -->`` in its body among open issues
created by the bot (so a redelivery or crash never makes a second one). Looked up and created
under the fork's claim on it (:mod:`bot.github.claims`, key ``status-issue``), so two renders at
once — worker 0's poller beside a delivery, or two workers — never both find none and both open
one. Duplicates made anyway (an older release, a create whose answer was lost) are harmless: the
oldest open one is the status issue; the others are closed as not planned once the claim is let
go, each with a note naming it (``templates/github/status_issue_duplicate.md.j2``). Ticking a
checkbox sends ``issues.edited``: ``<!-- replan -->`` → re-plan now; ``<!-- retry:<unit id> -->`` → rebuild that
unit. The bot then re-renders the body, which un-ticks the box. Only the live status issue acts:
a box ticked on a closed duplicate runs nothing, and the issue is told which one to tick.
"""
from __future__ import annotations

import re
import time

from bot.github.common import comment_once, render, split_repo
from bot.github.limits import fit_body, fit_title
from bot.sync.status import REPAIRED_SHOWN_S, SyncStatus, not_refreshed_text
from bot.templating import duration, utc_minute

MARK = "<!-- forksync:status-issue -->"
CLAIM = "status-issue"          # the key of the fork's claim on its status issue (bot.github.claims)
TICKED = re.compile(r"^\s*[-*] \[[xX]\] <!-- (replan|retry:([A-Za-z0-9_.\-]+)) -->", re.MULTILINE)


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    if seconds < 120:
        return f"{int(seconds)} s ago"
    if seconds < 7200:
        return f"{int(seconds // 60)} min ago"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h ago"
    return f"{seconds / 86400:.1f} days ago"


def render_status(st: SyncStatus, *, stale_after_s: float, alarm_after_s: float, now: float | None = None,
                  dead_letters: list[dict] = (), config_path: str = ".github/forksync.yml", login_unknown: str = "") -> str:
    """Pure: the issue body for a status snapshot. ``dead_letters``: the fork's dead-lettered
    deliveries (``[{"id","event","action","reason","at"}]``), each an alarm line;
    ``login_unknown``: why the worker does not know the bot's own login (``""``: it does)."""
    now = time.time() if now is None else now
    blocked = [{**b, "ago": _age(max(0.0, now - b["at"])) if b.get("at") else "?"} for b in st.blocked]
    dead = [{**d, "ago": _age(max(0.0, now - d["at"])) if d.get("at") else "?"} for d in dead_letters]
    jobs = [{**j, "ago": _age(max(0.0, now - j["since"]))} for j in st.failing_jobs]
    waits = [{**w, "age": duration(now - w["since"]) if w.get("since") else "an unknown time",
              "limit": duration(w.get("limit_s") or 0)} for w in st.check_waits]
    why = st.stale_reason(stale_after_s, now)
    repaired = st.repaired if st.repaired and now - st.repaired["at"] < REPAIRED_SHOWN_S else None
    rewound = {**st.rewound, "ago": _age(max(0.0, now - st.rewound["at"])) if st.rewound.get("at") else "?"} \
        if st.rewound else None
    return render("status_issue.md.j2", blocked=blocked, rewound=rewound,
                  repaired={**repaired, "ago": _age(max(0.0, now - repaired["at"]))} if repaired else None,
                  dead_letters=dead, config_path=config_path, failing_jobs=jobs,
                  check_waits=waits,
                  login_unknown=login_unknown,
                  stale=st.stale(stale_after_s, now), stale_reason=why,
                  seen_too=bool(st.upstream_seen_at and st.last_fetch_error),     # an age reason says it already
                  # a failed first refresh: its reason names the failure, not that nothing was ever seen
                  never_seen_too=not st.upstream_seen_at and not st.upstream_unknown and bool(st.last_fetch_error),
                  computed=bool(st.computed_at), upstream_seen=_age(st.upstream_age_s(now)),
                  # "longer than the alarm age" needs an age: a fork never seen (or whose upstream
                  # time is unknown) has none, however recently it was installed
                  alarm=bool(st.upstream_seen_at) and st.alarm(alarm_after_s, now),
                  alarm_age=_age(alarm_after_s).replace(" ago", ""), held=st.held,
                  upstream_head=st.upstream_head, frontier=st.frontier, contiguous_pin=st.contiguous_pin,
                  upstream_head_at=utc_minute(st.upstream_head_at), frontier_at=utc_minute(st.frontier_at),
                  contiguous_pin_at=utc_minute(st.contiguous_pin_at), contiguous_lag_days=st.contiguous_lag_days,
                  holder={"sha": st.holder, "pr": st.holder_pr, "disposition": st.holder_disposition} if st.holder else None,
                  upstream_as_of=utc_minute(st.upstream_seen_at) or "unknown", backlog_by=list(st.backlog_by),
                  not_reached_handled=st.not_reached_handled,
                  days_behind=st.days_behind, backlog=st.backlog, not_reached=st.not_reached,
                  # a row the last sync did not refresh says so, in words (bot.sync.status.not_refreshed)
                  units=[{**u, "not_refreshed": not_refreshed_text(u["not_refreshed"]) if u.get("not_refreshed") else ""}
                         for u in st.units if not u.get("waiting")],
                  waiting=[u for u in st.units if u.get("waiting")], deferred=list(st.deferred))


def ticked_actions(body: str) -> list[str]:
    """Pure: ``["replan", "retry:<unit>", …]`` for the ticked boxes of an issue body."""
    return [m.group(1) for m in TICKED.finditer(body or "")]


async def find_status_issues(gh, full_name: str, bot_login: str | None) -> list[dict]:
    """The open issues (not PRs) of ``full_name`` with the marker, created by ``bot_login`` (any
    creator when unknown), as GitHub lists them: newest first."""
    params = {**split_repo(full_name), "state": "open", "per_page": 100}
    url = "/repos/{owner}/{repo}/issues{?state,creator,per_page}"
    if bot_login:
        params["creator"] = bot_login
    return [issue async for issue in gh.getiter(url, params)
            if issue.get("pull_request") is None and MARK in (issue.get("body") or "")]


async def find_status_issue(gh, full_name: str, bot_login: str | None) -> dict | None:
    """The status issue: the oldest (lowest number) of :func:`find_status_issues`; None when none is open."""
    found = await find_status_issues(gh, full_name, bot_login)
    return _oldest(found) if found else None


def _oldest(issues: list[dict]) -> dict:
    """The status issue among open marked ``issues`` (non-empty): the oldest, lowest number."""
    return min(issues, key=lambda i: int(i["number"]))


async def close_duplicate(gh, full_name: str, number: int, keep: int) -> None:
    """Close status issue ``number`` (not planned) with a note that ``keep`` is the status issue;
    the note is said once (its marker), so a close that failed after it is retried without a second."""
    await comment_once(gh, full_name, number, f"status-duplicate:{keep}", render("status_issue_duplicate.md.j2", keep=keep))
    await gh.patch("/repos/{owner}/{repo}/issues/{number}", {**split_repo(full_name), "number": number},
                   data={"state": "closed", "state_reason": "not_planned"})


async def upsert_status_issue(gh, full_name: str, title: str, body: str, bot_login: str | None, *,
                              create: bool = True) -> tuple[int, str, list[int]]:
    """Create the status issue or update its body; the caller holds the fork's claim on it
    (:data:`CLAIM`, see the module doc). Returns ``(number, "created"|"updated"|"unchanged",
    duplicates)``, or ``(0, "absent", [])`` when there is none and ``create`` is off;
    ``duplicates``: the other open marked issues, newest first, for :func:`close_duplicates` once
    the claim is let go (each close says so in a comment, under that issue's own claim)."""
    rv = split_repo(full_name)
    title, body = fit_title(title), fit_body(body)     # as GitHub will hold them: compared as such below
    found = await find_status_issues(gh, full_name, bot_login)
    if not found and not create:
        return 0, "absent", []
    if not found:
        # a create whose answer GitHub lost (5xx) may have opened the issue: looked up, not sent again
        created = await gh.create("/repos/{owner}/{repo}/issues", rv, data={"title": title, "body": body},
                                  find=lambda: find_status_issue(gh, full_name, bot_login))
        return created["number"], "created", []
    issue = _oldest(found)
    what = "unchanged"
    if issue.get("body") != body or issue.get("title") != title:
        await gh.patch("/repos/{owner}/{repo}/issues/{number}", {**rv, "number": issue["number"]},
                       data={"title": title, "body": body})
        what = "updated"
    return issue["number"], what, [int(i["number"]) for i in found if i["number"] != issue["number"]]


async def close_duplicates(gh, full_name: str, duplicates: list[int], keep: int) -> str:
    """Close each of ``duplicates`` naming ``keep`` as the status issue (:func:`close_duplicate`),
    after the status issue is current: a close GitHub refuses fails the render (retried), the
    numbers already written. Returns ``""``, or ``"; N duplicate(s) closed (#a, #b)"``."""
    for n in duplicates:
        await close_duplicate(gh, full_name, n, keep)
    return f"; {len(duplicates)} duplicate(s) closed ({', '.join(f'#{n}' for n in duplicates)})" if duplicates else ""


async def on_ticked(ctx, sync, full_name: str, issue: dict) -> None:
    """Act on the ticked boxes of ``issue`` (GitHub's issue object of ``issues.edited``) when it is
    the live status issue (:func:`find_status_issue`): re-plan, or rebuild one unit; then re-render
    the issue (which un-ticks them). A body without the marker is not the status issue. Boxes
    ticked on another marked issue — a duplicate closed in favour of the oldest, a status issue a
    person closed, a person's copy — run nothing: that issue gets one comment (per live status
    issue, ``templates/github/status_issue_elsewhere.md.j2``) naming the issue to tick instead."""
    body = issue.get("body") or ""
    if MARK not in body:
        return
    actions = ticked_actions(body)
    if not actions:
        return
    number = int(issue["number"])
    live = await find_status_issue(ctx.gh, full_name, sync.bot_login)
    keep = int(live["number"]) if live else 0
    if keep != number:
        await comment_once(ctx.gh, full_name, number, f"status-elsewhere:{keep}",
                           render("status_issue_elsewhere.md.j2", closed=issue.get("state") == "closed", keep=keep,
                                  actions=actions))
        ctx.note(f"boxes ticked on #{number}, not the status issue "
                 f"({f'#{keep}' if keep else 'none open'}): nothing run, told where to tick")
        return
    for a in actions:
        if a == "replan":
            ctx.note(await sync.sync(ctx, full_name, reason="status issue: re-plan"))
        else:
            ctx.note(await sync.sync(ctx, full_name, reason=f"status issue: {a}", rebuild=a.split(":", 1)[1]))
    ctx.note(await sync.refresh_status_issue(ctx, full_name))
