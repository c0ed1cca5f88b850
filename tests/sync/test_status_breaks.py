"""Breaking the status reporting: the status issue, /healthz and /metrics as a person reads them.

Each test here failed on the code it was written against; each names the defect it shows."""
from __future__ import annotations

import re
from types import SimpleNamespace

import gidgethub
from prometheus_client import generate_latest

from bot.app.metrics import AppMetrics
from bot.app.web import app_facts
from bot.config.forksync import IsolatedPickRules
from bot.core.pins import compute_pins
from bot.model import Disposition, LedgerEntry
from bot.store import Store
from bot.sync import store as sync_store
from bot.sync.status import SyncStatus
from bot.sync.status_issue import render_status
from bot.sync.upstream import poll_once

NOW = 1_780_000_000.0
DAY = 86_400.0


def _fresh(**kw) -> SyncStatus:
    base = dict(repo="meta/fork", upstream="up/triton", upstream_head="a" * 40, fork_head="b" * 40, frontier="c" * 40,
                contiguous_pin="c" * 40, days_behind=1.5, backlog=3, upstream_seen_at=NOW - 60, computed_at=NOW - 60,
                last_fetch_at=NOW - 60)
    base.update(kw)
    return SyncStatus(**base)


def _body(st: SyncStatus, **kw) -> str:
    return render_status(st, stale_after_s=DAY, alarm_after_s=3 * DAY, now=NOW, **kw)


def _visible(markdown: str) -> str:
    """What GitHub shows of a Markdown body: HTML comments are hidden (an unclosed one hides the rest)."""
    return re.sub(r"<!--.*?(-->|\Z)", "", markdown, flags=re.S)


# ------------------------------------------------------------------ status issue: text from git
def test_a_deferred_upstream_subject_cannot_hide_the_rest_of_the_status_issue():
    """An upstream subject (anyone's text) with ``<!--`` opens an HTML comment in the issue body
    that runs to forksync's next marker: the Deferred list after it, the "Actions" heading and the
    re-plan box vanish from the issue. (status_issue.md.j2 puts ``d.subject`` in raw.)"""
    st = _fresh(deferred=({"sha": "d" * 40, "subject": "[AMD] keep <!-- the old layout", "reason": "needs the AMD backend"},
                          {"sha": "e" * 40, "subject": "[NVIDIA] second deferred", "reason": "waits for the first"}))
    shown = _visible(_body(st))
    assert "[NVIDIA] second deferred" in shown, shown[-600:]
    assert "## Actions" in shown and "re-plan now" in shown, shown[-600:]


def test_mentions_in_upstream_text_on_the_status_issue_ping_no_one():
    """A deferred upstream subject or reason ``cc @triton-lang/core @ptillet`` is written into the
    fork's status issue as a live mention: every render (each sync) pings those people and teams
    of *upstream* from the fork's issue. Text from git should be inert (a code span, or the
    ``@`` neutralised as the agent rails and command replies do)."""
    st = _fresh(deferred=({"sha": "d" * 40, "subject": "Revert layout change, cc @ptillet", "reason": "asked by @triton-lang/core"},))
    body = _body(st)
    live = [m for line in body.splitlines() for m in re.findall(r"(?<![`\w])@[A-Za-z0-9][\w/-]*", re.sub(r"`[^`]*`", "", line))]
    assert live == [], live


def test_upstream_pr_numbers_in_subjects_do_not_link_the_forks_own_issues():
    """Triton's subjects end with the *upstream* PR number: ``Fix the MMA layout (#4567)``. Put raw
    in the fork's status issue, GitHub links ``#4567`` to the fork's own issue/PR #4567 (another
    thing entirely) and adds a cross-reference to that item's timeline. It should name upstream's
    PR (``up/triton#4567`` or a link) or be inert."""
    st = _fresh(deferred=({"sha": "d" * 40, "subject": "Fix the MMA layout (#4567)", "reason": "blocked"},))
    body = re.sub(r"`[^`]*`", "", _body(st))
    assert not re.search(r"(?<![\w/#\[])#4567\b", body), [ln for ln in body.splitlines() if "4567" in ln]


# ------------------------------------------------------------------ status issue: why stale
def test_numbers_stale_by_age_are_not_said_to_come_from_a_failed_fetch():
    """Upstream last seen 2 days ago, every fetch succeeded (no error): the issue's banner says
    "The last fetch of upstream failed", which is false — the dashboard says "upstream was last
    seen 48.0 h ago (limit 24 h)". (status_issue.md.j2's stale banner has one wording for all causes.)"""
    body = _body(_fresh(upstream_seen_at=NOW - 2 * DAY))
    assert "stale" in body
    assert "fetch of upstream failed" not in body, body[:500]


def test_a_pinned_upstream_says_why_it_is_stale_not_that_a_fetch_failed():
    """Upstream pinned to a sha (``upstream_unknown`` set, no fetch error): the dashboard shows
    "STALE — upstream pinned to …"; the status issue says "The last fetch of upstream failed;
    upstream was last seen never" — neither true nor the reason. ``render_status`` never passes
    ``upstream_unknown`` to the template."""
    why = "upstream pinned to 0123456789ab, committed 2026-05-01 10:00 UTC"
    body = _body(_fresh(upstream_seen_at=0.0, upstream_unknown=why))
    assert "fetch of upstream failed" not in body, body[:500]
    assert "upstream pinned to 0123456789ab" in body, body[:500]


# ------------------------------------------------------------------ a failed refresh reaches /healthz
class _Svc:
    def __init__(self):
        self.synced = []

    async def sync(self, ctx, full, *, reason):
        self.synced.append(full)
        return f"{full}: synced"

    async def refresh_status_issue(self, ctx, full, **_):
        return "status issue refreshed"


async def test_upstream_polls_that_github_keeps_failing_make_healthz_unhealthy(tmp_path):
    """GitHub answers 502 to every poll of upstream's branch: the status issue turns stale, but the
    poll is never recorded as a failing scheduled job (``poll_once``'s error branch skips
    ``job_ended``), so ``/healthz`` (and the dashboard's health status) stays "ok" however many
    ticks fail — the rule "a fork's scheduled job (poll, …) failed on its last ``job_failures``
    ticks" never fires for the poll's own failure."""
    from http import HTTPStatus
    store = Store(tmp_path / "s.db")
    sync_store.track(store, "meta/fork", "up/triton", "main", 1, poll_interval_s=60)
    sync_store.save_status(store, _fresh())

    class GH:
        async def getitem(self, url, params=None):
            raise gidgethub.HTTPException(HTTPStatus.BAD_GATEWAY, "Bad Gateway")

    async def make_ctx(_inst):
        return SimpleNamespace(gh=GH(), store=store)

    for i in range(4):
        notes = await poll_once(store, _Svc(), make_ctx, now=NOW + 120 * (i + 1))
        assert any("poll failed" in n for n in notes), notes
    assert sync_store.load_status(store, "meta/fork").last_fetch_error       # stale on the issue and dashboard
    facts = app_facts(store, NOW + 600)
    assert facts["status"] != "ok" or facts["warnings"], facts["problems"]


# ------------------------------------------------------------------ /metrics
def _scrape(store: Store) -> dict[str, float]:
    text = generate_latest(AppMetrics(lambda: store).registry).decode()
    return {m.group(1): float(m.group(2)) for m in re.finditer(r'^(forksync_\w+\{repo="meta/fork"\}) (\S+)$', text, re.M)}


def test_a_fork_never_computed_has_no_days_behind_or_backlog_in_metrics(tmp_path):
    """The first fetch of a newly adopted fork failed: nothing was ever computed (``computed_at``
    0). ``/metrics`` still exports ``forksync_days_behind 0`` and ``forksync_backlog 0`` — a fork
    "in sync" on every graph and alert threshold — where the dashboard says null. The gauges
    should be absent (or NaN) until numbers exist."""
    store = Store(tmp_path / "s.db")
    sync_store.save_status(store, SyncStatus(repo="meta/fork", upstream="up/triton", last_fetch_at=NOW,
                                             last_fetch_error="git fetch failed (128): fatal: could not read"))
    got = _scrape(store)
    assert got.get('forksync_metrics_stale{repo="meta/fork"}') == 1.0
    days, backlog = got.get('forksync_days_behind{repo="meta/fork"}'), got.get('forksync_backlog{repo="meta/fork"}')
    assert days is None or days != days, f"days_behind exported as {days} for a fork never computed"
    assert backlog is None or backlog != backlog, f"backlog exported as {backlog} for a fork never computed"


# ------------------------------------------------------------------ Days Behind under clock skew
def test_days_behind_is_never_negative_when_committer_dates_go_backwards():
    """Upstream's tip was committed (by a skewed clock) a day *before* the commit the fork is
    pinned at: Days Behind comes out -1.0 — a fork "ahead" of upstream on the issue, dashboard and
    metrics. (``compute_pins``'s ``lag`` subtracts committer times as they are.)"""
    entries = [LedgerEntry("a" * 40, 0, Disposition.PICKED, committer_time=int(NOW)),
               LedgerEntry("b" * 40, 1, Disposition.PENDING, committer_time=int(NOW - DAY))]
    pins = compute_pins(entries, base_sha="0" * 40, base_time=int(NOW - 10 * DAY), rules=IsolatedPickRules())
    assert pins.frontier.sha == "a" * 40 and pins.not_reached == 1
    assert pins.days_behind >= 0.0, pins.days_behind


# ------------------------------------------------------------------ status issue: layout of its alerts
def test_the_stale_warning_does_not_swallow_the_alert_after_it():
    """A fetch failed and the poll job is failing (they go together): the stale ``> [!WARNING]``
    block has no blank line after it (``trim_blocks`` eats the newline after the inline
    ``{% endif %}`` that ends its line), so the ``> [!CAUTION]`` of the failing jobs (or of blocked
    units, or the hold notice) continues the same blockquote: GitHub shows "[!CAUTION]" as text inside
    the stale warning instead of a second alert."""
    st = _fresh(upstream_seen_at=NOW - 1000, last_fetch_error="git fetch failed (128): fatal: unable to access",
                failing_jobs=({"job": "poll", "error": "sync failed: GitHub answered 502", "since": NOW - 900,
                               "at": NOW - 900, "count": 1},))
    lines = _body(st).splitlines()
    i = next(n for n, ln in enumerate(lines) if "These numbers are stale" in ln)
    assert not lines[i + 1].startswith(">"), lines[i:i + 3]


def test_a_fork_never_computed_shows_no_numbers_on_its_status_issue():
    """Adopted, but the first fetch failed: nothing was ever computed (``computed_at`` 0). The issue
    still shows "Days Behind | 0.0" and "Backlog | 0 commits" — the numbers of a fork in sync —
    where the dashboard shows none ("synced": false, days_behind null)."""
    st = SyncStatus(repo="meta/fork", upstream="up/triton", last_fetch_at=NOW,
                    last_fetch_error="git fetch failed (128): fatal: could not read Username")
    body = _body(st)
    assert "| Days Behind | 0.0" not in body and "| Backlog | 0 commits" not in body, body


# ------------------------------------------------------------------ a failed refresh is stale everywhere
async def test_a_polled_sync_that_failed_leaves_the_numbers_stale_not_current(tmp_path):
    """The poll saw upstream at a new head; the sync that should count it failed (GitHub 502). The
    stored numbers are of the old head, yet the dashboard (``stale_of``) and the status issue show
    them as current until ``stale_after_s`` (a day) passes: only a failing "poll" job is recorded,
    no fetch error, and nothing marks the numbers as behind the head the poll saw."""
    from bot.dashboard import views
    store = Store(tmp_path / "s.db")
    sync_store.track(store, "meta/fork", "up/triton", "main", 1, poll_interval_s=60)
    sync_store.save_status(store, _fresh())

    class GH:
        async def getitem(self, url, params=None):
            return {"commit": {"sha": "f" * 40}}        # upstream moved past "a" * 40

    class Svc(_Svc):
        async def sync(self, ctx, full, *, reason):
            raise RuntimeError("GitHub answered 502")

    async def make_ctx(_inst):
        return SimpleNamespace(gh=GH(), store=store)

    notes = await poll_once(store, Svc(), make_ctx, now=NOW + 120)
    assert any("sync failed" in n for n in notes), notes
    st = sync_store.load_status(store, "meta/fork")
    assert st.upstream_head == "a" * 40                          # the numbers are still the old head's
    assert views.stale_of(st, NOW + 180, views.Policy())["stale"], "dashboard shows the old head's numbers as current"
    assert "stale" in _body(st).split("## Where")[0].lower(), "status issue shows them as current"


def test_metrics_judge_staleness_by_the_forks_own_stale_after_s(tmp_path, monkeypatch):
    """A fork configures ``github.stale_after_s: 3600``; upstream was last seen 2 h ago. The status
    issue and the dashboard (the fork's recorded limit) say stale; ``forksync_metrics_stale`` says 0,
    judged by the App-wide default of a day — docs/dashboard.md promises "the same rule as
    ``forksync_metrics_stale`` in /metrics and the status issue"."""
    from bot.dashboard import views
    from bot.sync import snapshots
    store = Store(tmp_path / "s.db")
    now = NOW
    monkeypatch.setattr("bot.app.metrics.time.time", lambda: NOW)     # the collector reads time.time() itself
    st = _fresh(upstream_seen_at=now - 7200, computed_at=now - 7200, last_fetch_at=now - 7200)
    sync_store.save_status(store, st)
    snapshots.record_sync(store, st, at=now - 7200, keep_days=30, stale_after_s=3600)
    assert views.stale_of(st, now, views.fork_policy(store, "meta/fork", views.Policy()))["stale"]
    assert "These numbers are stale" in render_status(st, stale_after_s=3600, alarm_after_s=3 * DAY, now=now)
    assert _scrape(store)['forksync_metrics_stale{repo="meta/fork"}'] == 1.0


def test_the_status_issue_does_not_freeze_a_relative_age_as_current():
    """The issue body is written once per sync and read for as long as it stands: its heading said
    "upstream last seen 1 min ago". When the worker stops (down for a day, the poller with it),
    nothing renders the issue again and a reader the next day is told upstream was seen a minute
    ago — a figure presented as current. A body read later must say *when*, not how long ago."""
    from bot.templating import utc_minute
    body = _body(_fresh())
    heading = next(line for line in body.splitlines() if line.startswith("## Where the fork stands"))
    assert " ago" not in heading, heading
    assert utc_minute(NOW - 60) in heading, heading


def test_numbers_seen_in_the_future_are_not_current(tmp_path, monkeypatch):
    """The worker's clock ran two days fast when it last saw upstream, then was set back (NTP, a
    VM restored): ``upstream_seen_at`` lies two days after now. Its age is clamped to 0, so the
    dashboard, ``/metrics`` and the status issue call numbers of unknown age current — for two
    days more than the stale limit if the poller is down meanwhile. Their age cannot be known:
    they are stale until upstream is seen again (the poller's own rule treats a last poll in the
    future as due, :func:`bot.sync.upstream.due_for_poll`)."""
    from bot.dashboard import views
    st = _fresh(upstream_seen_at=NOW + 2 * DAY, computed_at=NOW + 2 * DAY, last_fetch_at=NOW + 2 * DAY)
    stale = views.stale_of(st, NOW, views.Policy())
    assert stale["stale"] and "later than" in stale["reason"], stale
    assert "These numbers are stale" in _body(st)
    store = Store(tmp_path / "s.db")
    sync_store.save_status(store, st)
    monkeypatch.setattr("bot.app.metrics.time.time", lambda: NOW)     # the collector reads time.time() itself
    assert _scrape(store)['forksync_metrics_stale{repo="meta/fork"}'] == 1.0


async def test_a_polled_sync_that_computed_a_newer_head_then_failed_is_not_marked_behind(tmp_path):
    """The poll saw ``f…``; by the time the sync fetched, upstream was at ``e…`` and the sync
    computed the numbers of ``e…``, then failed later (a PR GitHub refused). The numbers are the
    newest there are: they must not be marked "upstream moved to f…; its sync failed"."""
    from dataclasses import replace

    from bot.dashboard import views
    store = Store(tmp_path / "s.db")
    sync_store.track(store, "meta/fork", "up/triton", "main", 1, poll_interval_s=60)
    sync_store.save_status(store, _fresh())

    class GH:
        async def getitem(self, url, params=None):
            return {"commit": {"sha": "f" * 40}}

    class Svc(_Svc):
        async def sync(self, ctx, full, *, reason):
            sync_store.save_status(store, replace(_fresh(), upstream_head="e" * 40, upstream_seen_at=NOW + 110,
                                                  computed_at=NOW + 110, last_fetch_at=NOW + 110))
            raise RuntimeError("GitHub answered 502 to the pull request")

    async def make_ctx(_inst):
        return SimpleNamespace(gh=GH(), store=store)

    await poll_once(store, Svc(), make_ctx, now=NOW + 120)
    st = sync_store.load_status(store, "meta/fork")
    assert st.upstream_head == "e" * 40 and not st.last_fetch_error, st.last_fetch_error
    assert not views.stale_of(st, NOW + 180, views.Policy())["stale"]
