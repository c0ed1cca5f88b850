"""Adopting what the installation events missed: the worker lists the App's installations and
their repositories (GitHub REST ``GET /app/installations`` with the App's JWT, ``GET
/installation/repositories`` with each installation's token, both paginated) at start and then
every :data:`ADOPT_MISSED_EVERY_S`, and adopts each repository not yet tracked under its
installation exactly as ``installation.created`` would (:func:`bot.handlers.installation.adopt_all`:
a repository whose ``.github/forksync.yml`` names an upstream is tracked and synced, its status
issue opened; any other is left alone).

Why: GitHub sends ``installation.created`` / ``installation_repositories.added`` once and does
not retry a delivery that got no answer (its redelivery is manual), so an App installed on a fork
while forksync was down followed nothing, and nothing said so.

* A suspended installation (GitHub's ``suspended_at``) is skipped, its suspension recorded as
  ``installation.suspend`` would (:func:`bot.sync.store.set_suspended`; the poller lifts it).
* A repository tracked under its installation already is left alone (its event did the work, or
  an earlier pass); the tracked set is read again before each adoption, since a delivery may
  adopt it meanwhile. An event arriving after this pass adopted a repository adopts it again,
  which is idempotent (one sync that finds nothing new to push; the same PRs and status issue).
* Failures are visible and the rest goes on: a repository whose adoption fails is its failing
  ``adopt`` job (status issue, ``/healthz``, dashboard), as for the event, retried by the next
  pass; a listing GitHub refuses is the App's failing ``installations`` job (``/healthz``:
  :func:`bot.sync.store.record_app_job`), cleared by the next listing that succeeds.
* Token mode (``FORKSYNC_TOKEN``) has no App and so no installations to list: nothing is done.
"""
from __future__ import annotations

import logging

from bot.agents.redact import error_text
from bot.github.client import installation_suspended
from bot.handlers.installation import adopt_all
from bot.sync import store as sync_store

log = logging.getLogger(__name__)

#: Seconds between two passes after the one at start: installation events are rare, and a pass
#: reads each untracked repository's configuration again (a request or two each; an installation
#: on all of an organisation's repositories has many that are no fork).
ADOPT_MISSED_EVERY_S = 3600.0
#: The App's job (:func:`bot.sync.store.record_app_job`) a failed listing is kept as.
JOB = "installations"


def not_tracked(repositories: list[dict], tracked: list[dict], installation_id: int) -> list[dict]:
    """Pure: the repositories (GitHub's ``repository`` objects, ``full_name`` read) of installation
    ``installation_id`` not tracked under it (``tracked``: rows of
    :func:`bot.sync.store.tracked_forks`, ``fork`` and ``installation_id`` read), in the order given.
    A fork tracked under another installation (the App was reinstalled while forksync was down,
    both events missed) is not tracked under this one: it is adopted again, as the event would."""
    under = {r["fork"] for r in tracked if r["installation_id"] == installation_id}
    return [r for r in repositories if r["full_name"] not in under]


async def adopt_missed(store, app_gh, make_ctx, *, now: float, per_page: int = 100) -> list[str]:
    """One pass (see the module doc). ``app_gh``: the App's client (JWT); ``make_ctx(installation_id)``:
    a handler context for the installation (:meth:`bot.app.runtime.Runtime.make_ctx`); ``now``:
    epoch s, for the jobs and suspensions recorded; ``per_page``: GitHub's page size for both
    listings (at most 100), every page read. Returns notes, one per installation skipped or
    failing and one per repository adopted or failing; never raises for GitHub's or a
    repository's failure."""
    try:
        installations = [i async for i in app_gh.getiter("/app/installations{?per_page}", {"per_page": per_page})]
    except Exception as e:  # noqa: BLE001 - any failure is kept as the App's failing job, seen on /healthz
        why = f"GET /app/installations failed: {error_text(e, 250)}"
        sync_store.record_app_job(store, JOB, why, now)
        return [why]
    notes: list[str] = []
    failed: list[str] = []
    listed = followed = adopted = others = 0
    for inst in installations:
        inst_id = inst["id"]
        account = (inst.get("account") or {}).get("login") or str(inst_id)
        if inst.get("suspended_at"):
            by = (inst.get("suspended_by") or {}).get("login") or ""
            sync_store.set_suspended(store, inst_id, True, at=now, by=by)
            notes.append(f"installation {inst_id} ({account}): suspended, skipped")
            continue
        ctx = await make_ctx(inst_id)
        try:
            repos = [r async for r in ctx.gh.getiter("/installation/repositories{?per_page}", {"per_page": per_page},
                                                     iterable_key="repositories")]
        except Exception as e:  # noqa: BLE001 - kept as the App's failing job; the other installations go on
            if installation_suspended(e):       # suspended since it was listed
                sync_store.set_suspended(store, inst_id, True, at=now)
                notes.append(f"installation {inst_id} ({account}): suspended, skipped")
                continue
            failed.append(f"installation {inst_id} ({account}): GET /installation/repositories failed: "
                          f"{error_text(e, 200)}")
            notes.append(failed[-1])
            continue
        listed += len(repos)
        missing = not_tracked(repos, sync_store.tracked_forks(store), inst_id)
        followed += len(repos) - len(missing)
        for repo in missing:
            # read again: a delivery (installation.created, handled beside the poll loop in this
            # event loop) may have adopted it while the ones before were adopted
            if not not_tracked([repo], sync_store.tracked_forks(store), inst_id):
                followed += 1
                continue
            ctx = await make_ctx(inst_id)
            try:
                await adopt_all(ctx, [{"full_name": repo["full_name"]}])
            except Exception:  # noqa: BLE001, S110 - adopt_all kept it as the repository's failing adopt job
                notes += ctx.outcome
                continue
            if not_tracked([repo], sync_store.tracked_forks(store), inst_id):
                others += 1             # no upstream in its forksync.yml (or none): not a fork to sync
                continue
            adopted += 1
            notes += ctx.outcome
    sync_store.record_app_job(store, JOB, "; ".join(failed) if failed else None, now)
    return [*notes, f"{len(installations)} installation(s), {listed} repositories: {followed} followed already, "
                    f"{adopted} adopted now, {others} not a fork to sync, {len(failed)} listing(s) failed"]


__all__ = ["ADOPT_MISSED_EVERY_S", "JOB", "adopt_missed", "not_tracked"]
