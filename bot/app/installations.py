"""Making up for the installation events missed: the worker lists the App's installations and
their repositories (GitHub REST ``GET /app/installations`` with the App's JWT, ``GET
/installation/repositories`` with each installation's token, both paginated) at start and then
every :data:`ADOPT_MISSED_EVERY_S`, and

* adopts each repository not yet tracked under its installation exactly as
  ``installation.created`` would (:func:`bot.handlers.installation.adopt_all`: a repository whose
  ``.github/forksync.yml`` names an upstream is tracked and synced, its status issue opened; any
  other is left alone);
* when every page of both listings was read, stops following each fork the App is no longer
  installed on exactly as ``installation.deleted`` (its installation is not listed) or
  ``installation_repositories.removed`` (its installation is listed, the fork is not among its
  repositories) would (:func:`bot.handlers.installation.unfollow`: not tracked, its failing jobs
  cleared, the dashboard says why; the rule is :func:`no_longer_installed`).

Why: GitHub sends these events once and does not retry a delivery that got no answer (its
redelivery is manual), so an App installed on a fork while forksync was down followed nothing,
and one uninstalled meanwhile left a fork tracked whose polls fail for good (``/healthz``, the
dashboard and the status issue kept showing a fork forksync can no longer act on).

* A suspended installation (GitHub's ``suspended_at``, or its token refused as suspended) is
  skipped, its suspension recorded as ``installation.suspend`` would
  (:func:`bot.sync.store.set_suspended`; the poller lifts it); its forks stay tracked, paused
  (suspension is not removal).
* Only a complete listing unfollows: a repository absent from a page that was not read is not
  known to be gone, so when any page of either listing fails nothing is unfollowed in that pass
  (the failure is the App's failing job, below; the next complete pass does it). The candidates
  are the forks tracked before the listing began (one a delivery adopts meanwhile, under an
  installation created after the listing, is never one), and one listed under any installation
  is kept (tracked under an older one, the App reinstalled while forksync was down: adoption moves
  it, and its failing ``adopt`` job stays visible when that fails).
* Repository names are matched whatever their case, as GitHub matches them (``_name_key``): a fork
  listed renamed in case is neither unfollowed nor adopted a second time.
* A repository tracked under its installation already is left alone (its event did the work, or
  an earlier pass); the tracked set is read again before each adoption, since a delivery may
  adopt it meanwhile. An event arriving after this pass adopted a repository adopts it again,
  which is idempotent (one sync that finds nothing new to push; the same PRs and status issue).
* Failures are visible and the rest goes on: a repository whose adoption fails is its failing
  ``adopt`` job (status issue, ``/healthz``, dashboard), as for the event, retried by the next
  pass; a listing GitHub refuses is the App's failing ``installations`` job (``/healthz``:
  :func:`bot.sync.store.record_app_job`), cleared by the next listing that succeeds.
* A fork tracked with no installation (token mode) is never unfollowed: it is under no
  installation the App could be removed from.
* Token mode (``FORKSYNC_TOKEN``) has no App and so no installations to list: nothing is done.
"""
from __future__ import annotations

import logging

from bot.agents.redact import error_text
from bot.github.client import installation_suspended
from bot.handlers.installation import REMOVED, UNINSTALLED, adopt_all, unfollow
from bot.sync import store as sync_store

log = logging.getLogger(__name__)

#: Seconds between two passes after the one at start: installation events are rare, and a pass
#: reads each untracked repository's configuration again (a request or two each; an installation
#: on all of an organisation's repositories has many that are no fork).
ADOPT_MISSED_EVERY_S = 3600.0
#: The App's job (:func:`bot.sync.store.record_app_job`) a failed listing is kept as.
JOB = "installations"


def _name_key(full_name: str) -> str:
    """Pure: a repository's ``owner/name`` as GitHub compares it (not case-sensitive: a fork
    renamed in case, or listed in another case, is the same fork)."""
    return full_name.lower()


def not_tracked(repositories: list[dict], tracked: list[dict], installation_id: int) -> list[dict]:
    """Pure: the repositories (GitHub's ``repository`` objects, ``full_name`` read) of installation
    ``installation_id`` not tracked under it (``tracked``: rows of
    :func:`bot.sync.store.tracked_forks`, ``fork`` and ``installation_id`` read), in the order given,
    names matched whatever their case (:func:`_name_key`). A fork tracked under another
    installation (the App was reinstalled while forksync was down, both events missed) is not
    tracked under this one: it is adopted again, as the event would."""
    under = {_name_key(r["fork"]) for r in tracked if r["installation_id"] == installation_id}
    return [r for r in repositories if _name_key(r["full_name"]) not in under]


def no_longer_installed(tracked: list[dict], installed: set[int], suspended: set[int],
                        reachable: set[str]) -> list[tuple[dict, str]]:
    """Pure: the tracked forks a complete listing says the App is no longer installed on, each with
    ``"uninstalled"`` (its installation is not among ``installed``, the ids GitHub listed: what
    ``installation.deleted`` says) or ``"removed"`` (it is, but the fork is not among its
    repositories: what ``installation_repositories.removed`` says), in the order given.
    ``tracked``: rows of :func:`bot.sync.store.tracked_forks` (``fork`` and ``installation_id``
    read); ``suspended``: ids of the installations listed as suspended, whose repositories cannot
    be listed (their forks are kept: suspension is not removal); ``reachable``: the full names
    listed under every other installation, matched whatever their case (:func:`_name_key`). A fork
    listed under any installation is kept (tracked under an older one, the App reinstalled:
    adoption moves it); one tracked with no installation (token mode) too. The caller passes only
    a listing that read every page (the module doc)."""
    names = {_name_key(n) for n in reachable}
    out = []
    for row in tracked:
        inst = row["installation_id"]
        if inst is None or inst in suspended or _name_key(row["fork"]) in names:
            continue
        out.append((row, "removed" if inst in installed else "uninstalled"))
    return out


async def adopt_missed(store, app_gh, make_ctx, *, now: float, per_page: int = 100) -> list[str]:
    """One pass (see the module doc). ``app_gh``: the App's client (JWT); ``make_ctx(installation_id)``:
    a handler context for the installation (:meth:`bot.app.runtime.Runtime.make_ctx`); ``now``:
    epoch s, for the jobs, suspensions and unfollowings recorded; ``per_page``: GitHub's page size
    for both listings (at most 100), every page read. Returns notes, one per installation skipped
    or failing, one per repository adopted or failing and one per fork no longer followed, then
    the pass's counts; never raises for GitHub's or a repository's failure."""
    # before the listing: a fork adopted meanwhile (a delivery for an installation created after
    # the listing was read) is not in it, and must not look removed
    tracked_before = sync_store.tracked_forks(store)
    try:
        installations = [i async for i in app_gh.getiter("/app/installations{?per_page}", {"per_page": per_page})]
    except Exception as e:  # noqa: BLE001 - any failure is kept as the App's failing job, seen on /healthz
        why = f"GET /app/installations failed: {error_text(e, 250)}"
        sync_store.record_app_job(store, JOB, why, now)
        return [why]
    notes: list[str] = []
    failed: list[str] = []
    listed = followed = adopted = others = 0
    suspended: set[int] = set()
    reachable: set[str] = set()
    for inst in installations:
        inst_id = inst["id"]
        account = (inst.get("account") or {}).get("login") or str(inst_id)
        repos: list[dict] | None = None         # None: suspended (listed so, or since it was listed)
        if not inst.get("suspended_at"):
            ctx = await make_ctx(inst_id)
            try:
                repos = [r async for r in ctx.gh.getiter("/installation/repositories{?per_page}",
                                                         {"per_page": per_page}, iterable_key="repositories")]
            except Exception as e:  # noqa: BLE001 - kept as the App's failing job; the other installations go on
                if not installation_suspended(e):
                    failed.append(f"installation {inst_id} ({account}): GET /installation/repositories failed: "
                                  f"{error_text(e, 200)}")
                    notes.append(failed[-1])
                    continue
        if repos is None:
            sync_store.set_suspended(store, inst_id, True, at=now,
                                     by=(inst.get("suspended_by") or {}).get("login") or "")
            suspended.add(inst_id)
            notes.append(f"installation {inst_id} ({account}): suspended, skipped")
            continue
        listed += len(repos)
        reachable.update(r["full_name"] for r in repos)
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
    if failed:
        notes.append("nothing unfollowed: a fork missing from a listing that failed is not known to be gone")
    else:
        notes += _unfollow_gone(store, tracked_before, {i["id"] for i in installations}, suspended, reachable, now)
    sync_store.record_app_job(store, JOB, "; ".join(failed) if failed else None, now)
    return [*notes, f"{len(installations)} installation(s), {listed} repositories: {followed} followed already, "
                    f"{adopted} adopted now, {others} not a fork to sync, {len(failed)} listing(s) failed"]


def _unfollow_gone(store, tracked: list[dict], installed: set[int], suspended: set[int], reachable: set[str],
                   now: float) -> list[str]:
    """After a complete listing: what ``installation.deleted`` / ``installation_repositories.removed``
    would have done (:func:`no_longer_installed`), the suspension of an installation no longer
    listed forgotten as ``installation.deleted`` forgets it. Returns a note per fork unfollowed."""
    notes = []
    for row, why in no_longer_installed(tracked, installed, suspended, reachable):
        # untracked only if still tracked under that installation: a delivery may have moved it
        note = unfollow(store, row["fork"], row["installation_id"], UNINSTALLED if why == "uninstalled" else REMOVED,
                        now)
        if note:
            notes.append(note)
    for inst_id in set(sync_store.suspended(store)) - installed:
        sync_store.set_suspended(store, inst_id, False)
    return notes


__all__ = ["ADOPT_MISSED_EVERY_S", "JOB", "adopt_missed", "no_longer_installed", "not_tracked"]
