"""L3 queue and sign-off records: store tables and plain functions.

``/forksync l3 <workload>`` queues a heavy run (an ``L3`` suite) for a PR on the suite's
platform; its result is recorded when the runner reports. ``/forksync signoff <area|metric>``
from one of the configured owners is recorded; the gate counts it through :func:`bot.validation.gate.is_signed_off`.
The comment handlers (GitHub side) call these functions; nothing here talks to GitHub.

Errors: :class:`SignoffError` (a person's mistake: not an owner, unknown target, unknown
workload) with a message that says what to do.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot import store as store_mod
from bot.core.logins import among, is_app_bot
from bot.validation import store as vstore
from bot.validation.gate import SignOff, is_signed_off  # noqa: F401 - the rule the gate applies
from bot.validation.store import L3Run

L3_STATUSES = ("queued", "running", "done", "cancelled")


class SignoffError(ValueError):
    """A sign-off or L3 request that cannot be recorded; the message is shown to the commenter."""


def signoff_owners(target: str, areas, pr_areas: tuple[str, ...], metrics: tuple[str, ...] | None = None
                   ) -> tuple[str, ...]:
    """Who may sign off ``target``: the owners of the area named ``target``; for a metric, the
    owners of the areas the PR touches. ``areas`` are ``bot.config.forksync.Area`` or
    :class:`bot.validation.gate.AreaPolicy` values. ``metrics``: when given, the metrics the PR's
    L3 runs flagged (``PRState.metrics_needing_signoff``) — a target that is neither an area nor
    one of them is refused, since no gate rule would ever read it (a mistyped area name would
    otherwise be "recorded" and the real area stay unsigned). Raises :class:`SignoffError` for a
    target that is neither a configured area nor a metric name (``<benchmark>`` or
    ``<benchmark>:<shape>…``) while the PR touches no owned area, or not a flagged metric."""
    by_name = {a.name: a for a in areas}
    if target in by_name:
        return tuple(by_name[target].owners)
    if metrics is not None and target not in metrics:
        raise SignoffError(f"`{target}` is not a configured area, and no L3 run on this PR flagged a metric by "
                           f"that name; areas: {', '.join(sorted(by_name)) or '(none)'}"
                           + (f"; flagged metrics: {', '.join(metrics)}" if metrics else ""))
    owners = tuple(sorted({o for n in pr_areas if n in by_name for o in by_name[n].owners}))
    if not owners:
        raise SignoffError(f"`{target}` is not a configured area, and this PR touches no area with owners "
                           f"who could sign off a metric; areas: {', '.join(sorted(by_name)) or '(none)'}")
    return owners


def record_signoff(db: "store_mod.Store", repo: str, pr: int, head_sha: str, target: str, by: str,
                   owners, time: int, comment_url: str = "") -> SignOff:
    """Record ``by``'s sign-off of ``target`` on PR ``repo#pr``. Raises :class:`SignoffError`
    when ``by`` is not one of ``owners`` (in any case: :func:`bot.core.logins.among`), or is an
    App's bot account (``name[bot]``) even when listed among them."""
    if is_app_bot(by):
        # a sign-off is a person's word that they read the L3 result, as an approval is a
        # person's review (the gate counts neither from an App)
        people = [o for o in owners if not is_app_bot(o)]
        raise SignoffError(f"@{by} is an App's bot account: a sign-off of `{target}` is a person's word; ask one of "
                           + (", ".join(f"@{o}" for o in sorted(people)) or "the owners (none is a person)"))
    if not among(by, owners):
        raise SignoffError(f"@{by} is not an owner of `{target}`; owners: "
                           + (", ".join(f"@{o}" for o in sorted(owners)) or "(none configured)"))
    vstore.insert_signoff(db, {"repo": repo, "pr": pr, "head_sha": head_sha, "target": target,
                               "by": by, "time": time, "comment_url": comment_url})
    return SignOff(target, by, time)


def withdraw_signoff(db: "store_mod.Store", repo: str, pr: int, target: str, by: str, comment_url: str) -> int:
    """Take back ``by``'s sign-off of ``target`` on ``repo#pr`` written in the comment (or review)
    at ``comment_url`` — its line removed by an edit, or the comment deleted. Returns how many
    recorded sign-offs went (0: none was recorded from there)."""
    return vstore.withdraw_signoffs(db, repo, pr, target, by, comment_url)


def signoffs_for(db: "store_mod.Store", repo: str, pr: int) -> tuple[SignOff, ...]:
    """All sign-offs recorded on ``repo#pr``, oldest first (the gate's ``PRState.signoffs``)."""
    return tuple(SignOff(r["target"], r["by"], r["time"]) for r in vstore.signoff_rows(db, repo, pr))


def queue_l3(db: "store_mod.Store", repo: str, pr: int, head_sha: str, workload: str, suites,
             requested_by: str, time: int) -> tuple[L3Run, ...]:
    """Queue L3 suite ``workload`` (one run per platform of the suite) for ``repo#pr`` at
    ``head_sha``. ``suites`` are the trusted ``SuiteConfig`` values. A run already queued or
    running for the same head, workload and platform is returned, not duplicated. Raises
    :class:`SignoffError` when no L3 suite has that name."""
    return request_l3(db, repo, pr, head_sha, workload, suites, requested_by, time).runs


@dataclass(frozen=True)
class L3Request:
    """What a ``/forksync l3`` request did: ``runs``, one per platform of the suite, and ``new``,
    those it queued — the others were already queued or running for that head (a new head sha is
    a new run)."""

    runs: tuple[L3Run, ...]
    new: tuple[L3Run, ...]


def request_l3(db: "store_mod.Store", repo: str, pr: int, head_sha: str, workload: str, suites,
               requested_by: str, time: int, platform: str = "") -> L3Request:
    """:func:`queue_l3`, saying which runs this request queued: on every platform of the suite, or
    on ``platform`` only (one check run's Re-run). Raises :class:`SignoffError` when no L3 suite
    has that name, or the suite does not run on ``platform``."""
    l3 = {s.name: s for s in suites if s.level == "L3"}
    if workload not in l3:
        raise SignoffError(f"no L3 suite named `{workload}`; L3 suites: {', '.join(sorted(l3)) or '(none configured)'}")
    platforms = l3[workload].platforms
    if platform:
        if platform not in platforms:
            raise SignoffError(f"L3 suite `{workload}` does not run on `{platform}`; its platforms: "
                               f"{', '.join(platforms)}")
        platforms = [platform]
    marked = vstore.queue_l3_runs_marked(db, repo, pr, head_sha, workload, platforms, requested_by, time)
    return L3Request(runs=tuple(r for r, _ in marked), new=tuple(r for r, fresh in marked if fresh))


def next_l3(db: "store_mod.Store", platform: str) -> L3Run | None:
    """Claim the oldest queued L3 run for ``platform`` (status → running), or None."""
    return vstore.claim_l3(db, platform)


def finish_l3(db: "store_mod.Store", run_id: int, verdict: str, result_url: str, time: int) -> L3Run:
    """Record an L3 run's verdict (``pass``/``fail``/``error``). Raises :class:`SignoffError` for an
    unknown id."""
    run = vstore.finish_l3_run(db, run_id, verdict, result_url, time)
    if run is None:
        raise SignoffError(f"no L3 run with id {run_id}")
    return run


def l3_runs_for(db: "store_mod.Store", repo: str, pr: int) -> tuple[L3Run, ...]:
    return vstore.l3_runs_of(db, repo, pr)
