"""Gathering the merge gate's input (:class:`bot.validation.gate.PRState`) from GitHub and the store.

Pure helpers turn API objects into gate values (:func:`latest_reviews`, :func:`unit_updated_at`,
:func:`diff_of_files`, :func:`pr_areas`, :func:`pr_kind`); :func:`gather` is the edge that calls
the API: the PR, the base branch's tip (``repos/get-branch``), ``compare base...head`` (does the
head contain the current base?), the PR's files (areas, conflict markers), commits (when the unit's
own commits last changed: merge commits — the bot's base merges — do not count), reviews with each
reviewer's permission, other check runs (the no-suites fallback), holds, sign-offs, retest grants
and the suite results on the head and the base.
"""
from __future__ import annotations

from datetime import datetime

from bot.github.common import WRITE_LEVELS, permission, split_repo
from bot.sync import store as sync_store
from bot.validation import signoff
from bot.validation import store as vstore
from bot.validation.checks import L1_PREFIX
from bot.validation.gate import GATE_CHECK, Check, PRState, Review, conflict_marker_files


def epoch(iso: str | None) -> int:
    if not iso:
        return 0
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp())


def latest_reviews(reviews: list[dict]) -> list[dict]:
    """Each reviewer's latest review that counts (APPROVED, CHANGES_REQUESTED or DISMISSED; a
    plain comment neither approves nor withdraws), in time order."""
    latest: dict[str, dict] = {}
    for rv in reviews:
        state = (rv.get("state") or "").upper()
        if state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED") and rv.get("user"):
            latest[rv["user"]["login"]] = {**rv, "state": state}
    return sorted(latest.values(), key=lambda r: (epoch(r.get("submitted_at")), r["user"]["login"]))


def unit_updated_at(commits: list[dict]) -> int:
    """When the unit's own commits last changed: the newest committer date among the PR's
    non-merge commits (the bot's base merges are merge commits and keep approvals valid)."""
    times = [epoch((c.get("commit") or {}).get("committer", {}).get("date")) for c in commits
             if len(c.get("parents") or []) < 2]
    return max(times, default=0)


def diff_of_files(files: list[dict]) -> str:
    """A unified diff assembled from ``pulls/list-files`` entries (their ``patch``)."""
    parts = []
    for f in files:
        if f.get("patch"):
            parts.append(f"--- a/{f['filename']}\n+++ b/{f['filename']}\n{f['patch']}")
    return "\n".join(parts)


def pr_areas(cfg, labels: list[str], files: list[str]) -> tuple[str, ...]:
    """Areas the PR touches: the ``area:<name>`` labels the bot set, and the areas of its files."""
    prefix = cfg.github.labels.area_prefix
    known = {a.name for a in cfg.areas}
    from_labels = {n[len(prefix):] for n in labels if prefix and n.startswith(prefix)}
    return tuple(sorted((from_labels & known) | set(cfg.areas_for_paths(files))))


def pr_kind(cfg, labels: list[str]) -> str:
    lab = cfg.github.labels
    return "chain" if lab.chain in labels else "bundle" if lab.bundle in labels else "other"


async def base_tip(gh, full: str, ref: str) -> str:
    br = await gh.getitem("/repos/{owner}/{repo}/branches/{branch}", {**split_repo(full), "branch": ref})
    return br["commit"]["sha"]


async def head_contains(gh, full: str, base: str, head: str) -> bool:
    """True when ``base`` is an ancestor of ``head`` (compare: nothing behind)."""
    if base == head:
        return True
    cmp = await gh.getitem("/repos/{owner}/{repo}/compare/{basehead}", {**split_repo(full), "basehead": f"{base}...{head}"})
    return int(cmp.get("behind_by", 1)) == 0


async def is_trusted_author(gh, full: str, login: str, bot_login: str | None) -> bool:
    """The bot itself, or a collaborator with write access (whose code may run on GPU runners)."""
    if bot_login and login == bot_login:
        return True
    return await permission(gh, full, login) in WRITE_LEVELS


async def gather(gh, store, full: str, pr: dict, cfg, *, bot_login: str | None, own_checks: set[str]) -> PRState:
    """The gate's :class:`PRState` for ``pr`` (a ``pulls/get`` object). ``own_checks``: names of
    forksync's suite check runs (not counted as other checks in the fallback)."""
    rv = {**split_repo(full), "number": pr["number"]}
    head = pr["head"]["sha"]
    base = await base_tip(gh, full, pr["base"]["ref"])
    files = [f async for f in gh.getiter("/repos/{owner}/{repo}/pulls/{number}/files", rv)]
    commits = [c async for c in gh.getiter("/repos/{owner}/{repo}/pulls/{number}/commits", rv)]
    reviews = latest_reviews([r async for r in gh.getiter("/repos/{owner}/{repo}/pulls/{number}/reviews", rv)])
    labels = [lab["name"] for lab in pr.get("labels") or []]
    author = (pr.get("user") or {}).get("login", "")
    holds = []
    st = sync_store.load_status(store, full)
    if st and st.held:
        holds.append("`/forksync hold` on this fork")
    if cfg.github.labels.hold in labels:
        holds.append(f"the `{cfg.github.labels.hold}` label")
    checks = []
    async for c in gh.getiter("/repos/{owner}/{repo}/commits/{ref}/check-runs", {**split_repo(full), "ref": head},
                              iterable_key="check_runs"):
        if c["name"] == GATE_CHECK or c["name"] in own_checks or c["name"].startswith(L1_PREFIX):
            continue
        checks.append(Check(c["name"], c.get("conclusion") if c.get("status") == "completed" else None))
    rows = vstore.rows_for(store, full, shas=(head, base), pr=pr["number"])
    results = tuple(vstore.outcome(r) for r in rows if r["sha"] != base or r["sha"] == head)
    base_results = tuple(vstore.outcome(r) for r in rows if r["sha"] == base and r["status"] == "done")
    rev = []
    for r in reviews:
        login = r["user"]["login"]
        rev.append(Review(login, r["state"], epoch(r.get("submitted_at")),
                          await permission(gh, full, login) in WRITE_LEVELS))
    return PRState(
        number=pr["number"], head_sha=head, base_sha=base, head_contains_base=await head_contains(gh, full, base, head),
        kind=pr_kind(cfg, labels), areas=pr_areas(cfg, labels, [f["filename"] for f in files]), author=author,
        author_is_collaborator=await is_trusted_author(gh, full, author, bot_login),
        retest_by_writer_on=vstore.retest_shas(store, full, pr["number"]),
        conflict_marker_files=conflict_marker_files(diff_of_files(files)), holds=tuple(holds), results=results,
        base_results=base_results, reviews=tuple(rev), checks=tuple(checks),
        signoffs=signoff.signoffs_for(store, full, pr["number"]), unit_updated_at=unit_updated_at(commits))
