"""Per-fork sync status as last computed (stored in table ``sync_status`` by :mod:`bot.sync.store`): pins, Days Behind, Backlog and
*when upstream was last seen*, so that old numbers are never shown as current.

Written by :mod:`bot.sync.service` after every ingest (and when a fetch of upstream fails); read
by ``/metrics`` (:mod:`bot.app.metrics`) and the status issue (:mod:`bot.sync.status_issue`).

Staleness rule: the numbers are *stale* when the last fetch of upstream failed
after the last success (or the fork's fetch, or the sync of a head upstream moved to), upstream
was last seen more than ``github.stale_after_s`` seconds ago (default 1 day) or more than
:data:`FUTURE_SLACK_S` after now (a clock set back: their age is unknown); an *alarm* is raised past ``github.alarm_after_s`` (default 3 days).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from bot.sync.rewind import degrades as rewind_degrades
from bot.templating import render_part, utc_minute

#: how ``last_fetch_error`` begins when the fork's own fetch failed (:meth:`bot.sync.service.SyncService.fetch`)
FORK_FETCH_FAILED = "fetch of the fork "
#: how it begins when a sync of an upstream head GitHub announced failed (:func:`bot.sync.upstream.mark_behind`)
UPSTREAM_MOVED = "upstream moved to "
#: how far after now (s) "upstream last seen" may lie before its age counts as unknown: clocks of
#: the worker and the web process differ a little; more than this, the clock was set back since
FUTURE_SLACK_S = 300.0
#: how long (s) the status issue says that the working repository was repaired
REPAIRED_SHOWN_S = 86_400.0
#: errors that are no failed fetch of upstream: :meth:`SyncStatus.stale_reason` does not call them one
NOT_UPSTREAMS_FETCH = (FORK_FETCH_FAILED, UPSTREAM_MOVED)


@dataclass(frozen=True)
class SyncStatus:
    repo: str
    upstream: str = ""
    upstream_head: str = ""
    fork_head: str = ""
    frontier: str = ""
    contiguous_pin: str = ""
    days_behind: float = 0.0
    backlog: int = 0
    not_reached: int = 0
    upstream_seen_at: float = 0.0
    computed_at: float = 0.0
    last_fetch_at: float = 0.0
    last_fetch_error: str = ""
    held: bool = False
    deferred: tuple[dict, ...] = ()
    units: tuple[dict, ...] = ()
    etag: str = ""
    blocked: tuple[dict, ...] = ()      # units GitHub refused: {"id","branch","pr","url","reason","requires","path","step","at"}
    held_by: str = ""                   # the comment that last set ``held``: "<created_at>#<id, 20 digits>" ("" none)
    failing_jobs: tuple[dict, ...] = ()  # scheduled jobs failing now: {"job","error","since","at","count"[,"step"]} (epoch s)
    upstream_head_at: float = 0.0       # committer time of upstream_head (epoch s; 0 unknown): Days Behind's "now"
    frontier_at: float = 0.0            # committer time of frontier (epoch s; 0 unknown)
    #: why ``upstream_seen_at`` is 0 although the numbers were computed ("" when it is known or
    #: never computed): upstream pinned to a sha, or a local copy nothing dates. Stale, never current
    upstream_unknown: str = ""
    contiguous_pin_at: float = 0.0      # committer time of contiguous_pin (epoch s; 0 unknown)
    contiguous_lag_days: float = 0.0    # (upstream_head_at - contiguous_pin_at) / 86400, as Days Behind for the pin
    #: the oldest upstream commit not handled, which holds the contiguous pin ("" / 0 when none)
    holder: str = ""
    holder_pr: int = 0
    holder_disposition: str = ""
    backlog_by: tuple[tuple[str, int], ...] = ()   # the Backlog per disposition: (("PENDING", 24), …)
    not_reached_handled: int = 0        # of not_reached: handled already (isolated picks, no-ops, decisions)
    #: sync PRs whose gate waits on required checks with no run or status on the head (written by
    #: the gate, :func:`bot.sync.store.record_check_waits`): {"pr","branch","unit","head","checks",
    #: "since" (epoch s: forksync first saw the head),"overdue" (past ``gate.unreported_after_s``),"limit_s"}
    check_waits: tuple[dict, ...] = ()
    #: the working repository found damaged at a worker's start and repaired (None: never):
    #: {"files": [paths relative to it], "rebuilt": removed and cloned again (else the damaged
    #: refs were removed and fetched again), "at": epoch s}; shown on the status issue for
    #: :data:`REPAIRED_SHOWN_S` (:meth:`bot.sync.service.SyncService._repair`)
    repaired: dict | None = None
    #: upstream's branch moved back to an ancestor of the tip forksync last synced: open units that
    #: carry commits it no longer has are held, neither closed nor merged, until upstream builds on
    #: the rewound history or returns; with no unit held, a notice (:func:`bot.sync.rewind.record`:
    #: {"ref","from","to","commits": [{"sha","subject"}],"units": [{"id","branch","pr","shas"}],
    #: "landed": [{"sha","subject"}] (the fork's landed picks of commits it took),"at" (epoch s)});
    #: None when upstream has not moved back
    rewound: dict | None = None
    #: when (epoch s) the last sync that got past its fetch began (0 none yet): an open unit last
    #: published before it was not refreshed by it (:func:`not_refreshed`)
    synced_at: float = 0.0
    #: that sync found the fork on hold (``/forksync hold``), so it published no unit
    synced_on_hold: bool = False

    def degraded(self) -> str:
        """Why syncing is degraded ("" when it is not): units whose push, PR or merge GitHub refused, or
        whose pick failed without a conflict (step ``apply``); units whose gate waits on a required
        check never reported on their head (``check_waits`` overdue: it will not come by itself);
        units held because upstream's branch moved back, or picks it took back landed in the fork
        (``rewound``, :func:`bot.sync.rewind.degrades`; a rewind with neither is only a notice)."""
        why = []
        if rewind_degrades(self.rewound):
            why.append(render_part("github/upstream_rewound.txt.j2", "degraded", r=self.rewound))
        if self.blocked:
            first = self.blocked[0]
            more = f" (and {len(self.blocked) - 1} more)" if len(self.blocked) > 1 else ""
            why.append(f"{len(self.blocked)} unit(s) blocked: {first['id']}: {first['reason']}{more}")
        overdue = [w for w in self.check_waits if w.get("overdue")]
        if overdue:
            why.append(render_part("validation/check_wait.txt.j2", "degraded", waits=overdue, first=overdue[0],
                                   since=utc_minute(overdue[0].get("since") or 0) or "unknown"))
        return "; ".join(why)

    def stale(self, max_age_s: float | None = None, now: float | None = None) -> bool:
        """The last upstream fetch failed after the last success, upstream was never seen, or
        (with ``max_age_s``) it was last seen longer ago than that."""
        if self.last_fetch_error or not self.upstream_seen_at or self.seen_in_future(now):
            return True
        return max_age_s is not None and (self.upstream_age_s(now) or 0.0) > max_age_s

    def seen_in_future(self, now: float | None = None) -> bool:
        """Upstream was last seen more than :data:`FUTURE_SLACK_S` after ``now`` (epoch s): the
        clock was set back since (it ran fast, NTP or a restored VM corrected it), so how old the
        numbers are is unknown — stale until upstream is seen again."""
        now = time.time() if now is None else now
        return bool(self.upstream_seen_at) and self.upstream_seen_at - now > FUTURE_SLACK_S

    def stale_reason(self, max_age_s: float | None = None, now: float | None = None) -> str:
        """Why the numbers are stale (:meth:`stale`), as a person reads it ("" when they are current):
        the failed fetch of upstream with its error (or the failed refresh, when the error is of the
        fork's fetch or of a sync after upstream moved: :data:`NOT_UPSTREAMS_FETCH`), why upstream's
        time is unknown (pinned to a sha, a local copy), that upstream was never seen, that it was
        last seen after ``now`` (:meth:`seen_in_future`), or how long ago it was last seen against
        ``max_age_s``. The one wording of the status issue, the dashboard and its JSON."""
        if self.last_fetch_error.startswith(NOT_UPSTREAMS_FETCH):
            # upstream may have been fetched well (the fork's fetch failed, or the sync after it):
            # the error names what failed
            return f"the last refresh failed: {self.last_fetch_error}"
        if self.last_fetch_error:
            return f"the last fetch of upstream failed: {self.last_fetch_error}"
        if not self.upstream_seen_at:
            return self.upstream_unknown or "never synced: upstream was never seen"
        if self.seen_in_future(now):
            return (f"upstream was last seen at {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(self.upstream_seen_at))}, "
                    "later than this clock's now: the clock was set back since, so how old the numbers are is unknown")
        age = self.upstream_age_s(now) or 0.0
        if max_age_s is not None and age > max_age_s:
            return f"upstream was last seen {age / 3600:.1f} h ago (limit {max_age_s / 3600:g} h)"
        return ""

    def upstream_age_s(self, now: float | None = None) -> float | None:
        if not self.upstream_seen_at:
            return None
        return max(0.0, (time.time() if now is None else now) - self.upstream_seen_at)

    def alarm(self, max_age_s: float, now: float | None = None) -> bool:
        age = self.upstream_age_s(now)
        return age is None or age > max_age_s


def not_refreshed(row: Mapping, st: SyncStatus | None) -> dict | None:
    """Pure: whether the last sync (``st.synced_at``) left the unit of ``row`` (a ``sync_branches``
    row) as an earlier publish made it — its PR, and its row on the status issue and the
    dashboard: ``{"since": its last publish (``published_at``, epoch s; 0.0 when it was published
    before forksync recorded that time), "synced_at": the sync's start (epoch s), "why": "hold"
    (the fork was on hold: no unit was published) | "rewind" (held while upstream's branch stands
    moved back past its commits: ``st.rewound``, :mod:`bot.sync.rewind`) | "" (its publish was
    skipped or refused: its state says why where it is known)}``. None when that sync published
    it (or a command did since) and GitHub refused no write of its PR after that publish, when no sync recorded its start yet (a store of an earlier
    release), and for a unit with no PR (nothing of it is shown as published). Rule: "a stale or
    failed refresh is shown as stale, never as current" (docs/design.md)."""
    if st is None or not st.synced_at or not int(row.get("pr") or 0) or row.get("state") not in ("open", "blocked"):
        return None
    since = float(row.get("published_at") or 0.0)
    # GitHub refused a write of its PR after that publish (the sync rewriting its body once a unit
    # it lands after closed): the PR still says what the publish said, not what forksync meant
    refused_since = row.get("blocked_step") == "pr" and float(row.get("blocked_at") or 0.0) >= since
    if since >= st.synced_at and not refused_since:
        return None
    held = {u.get("id") for u in (st.rewound or {}).get("units", ())}
    why = "hold" if st.synced_on_hold else "rewind" if row.get("unit_id") in held else ""
    return {"since": since, "synced_at": st.synced_at, "why": why}


def not_refreshed_text(mark: Mapping) -> str:
    """The words of a :func:`not_refreshed` mark, as the status issue and the dashboard say them
    (``templates/github/unit_not_refreshed.txt.j2``): the sync's and the last publish's UTC times."""
    return render_part("github/unit_not_refreshed.txt.j2", "line", why=mark["why"],
                       synced=utc_minute(mark["synced_at"]), since=utc_minute(mark["since"]))


__all__ = ["FORK_FETCH_FAILED", "FUTURE_SLACK_S", "NOT_UPSTREAMS_FETCH", "SUSPENDED_TEXT", "SyncStatus", "UPSTREAM_MOVED",
           "followed", "not_refreshed", "not_refreshed_text"]


#: Why a fork's work stopped on an owner's decision, as the dashboard and ``/healthz`` say it.
SUSPENDED_TEXT = "paused: the App's installation is suspended"


def followed(fork: str, *, paused: set[str] | frozenset[str] = frozenset(), unfollowed: dict[str, str] | None = None) -> str:
    """Pure: why ``fork`` is not being synced though forksync knows it — ``paused: …`` while its
    installation is suspended (``paused``: those forks), ``no longer followed: <reason>`` once the
    App lost it (``unfollowed``: ``{fork: reason}``, :func:`bot.sync.store.unfollowed`); "" when
    it is followed. Its numbers are then not stale: nothing is failing, an owner chose this."""
    if fork in paused:
        return SUSPENDED_TEXT
    why = (unfollowed or {}).get(fork)
    return f"no longer followed: {why}" if why else ""
