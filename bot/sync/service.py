"""The seam between GitHub events and the core: fetch → ingest → plan → apply → push → PRs.

:class:`SyncService` owns one bare working repository per fork
(``<workdir>/<owner>+<repo>.git``): the fork's branches are fetched into ``refs/heads/*``
(pruned, so a deleted sync branch disappears) and upstream's branch into
``refs/remotes/upstream/<ref>``. The core then runs on plain data (:mod:`bot.sync.ingest`,
:mod:`bot.plan.partition`), :func:`bot.git.apply.apply_unit` materializes ``forksync/<unit id>`` branches,
and they are pushed *without force* (apply only appends after the branch tip, so a person's
commits pushed meanwhile make the push fail instead of being overwritten; the next sync picks
them up). PRs are opened/updated by :mod:`bot.sync.prs`; the status issue and
``sync_status`` row are refreshed after every run.

What runs concurrently: one sync per fork at a time (the fork's claim, :mod:`bot.github.claims`:
an asyncio lock per fork in this process and a ``flock`` across the workers; git work runs in a
thread so the worker's event loop stays responsive). The status issue and the service's marked
comments are looked up and written under claims of their own (docs/design.md, "What runs
concurrently").

Fetch failures (403, network, rewritten history) are recorded in ``sync_status``
(``last_fetch_error``) so metrics and the status issue say the numbers are stale, then
re-raised so the delivery is retried.
"""
from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import hashlib
import itertools
import json
import logging
import re
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Mapping, Sequence

import gidgethub
import pygit2

from bot.agents.client import AgentClient
from bot.agents.redact import scrub as redact_scrub
from bot.config.forksync import ForksyncConfig
from bot.config.objects import open_repository, remove_partial_packs
from bot.core import commands as cm
from bot.core.provenance import claims
from bot.git import apply as apply_mod
from bot.git import notes, resolution
from bot.git import repo as gitio
from bot.git.markers import files_with_markers
from bot.github.claims import Claims, log_wait
from bot.github.client import authenticated_remote, refused_request
from bot.github.common import comment_once, render, split_repo
from bot.github.fork_config import last_valid_config, load_fork_config
from bot.github.limits import shown_hunks
from bot.model import CommitInfo, Disposition, InFlightBranch, Plan, PlanItem, Unit
from bot.plan.partition import LANDS_AFTER
from bot.plan.planner import plan_state
from bot.plan.predict import scratch_dir
from bot.sync import blocked as blocked_mod
from bot.sync import landing, snapshots
from bot.sync import owed as owed_mod
from bot.sync import prs as sync_prs
from bot.sync import rebuild as rebuild_mod
from bot.sync import rewind as rewind_mod
from bot.sync import rules as rules_mod
from bot.sync import shrink as shrink_mod
from bot.sync import status as sync_status
from bot.sync import store as sync_store
from bot.sync.agents import agent_would_run, on_chain_conflict
from bot.sync.errors import SyncError
from bot.sync.ingest import default_store, load_state
from bot.sync.status_issue import CLAIM as STATUS_CLAIM
from bot.sync.status_issue import close_duplicates, render_status, upsert_status_issue
from bot.templating import render_part

GIT_TIMEOUT_S = 600
log = logging.getLogger(__name__)
#: a sync's own words: its summary lines, the status issue's unit states, command replies
TEXTS = "github/sync_texts.txt.j2"
MAX_AGENT_ROUNDS = 25        # conflicts the agent may resolve in one publish before the chain waits for the next sync
#: The default delivery limit (``QueuePolicy.delivery_timeout_s``, ``FORKSYNC_DELIVERY_TIMEOUT_S``).
DELIVERY_TIMEOUT_S = 6 * 3600.0


def agent_deadline(delivery_timeout_s: float, configured_s: float = 0.0) -> float:
    """Seconds of one sync the conflict agent may work in: ``configured_s`` when above 0, else half
    of ``delivery_timeout_s``. No call starts past it and a call still running then is cut there
    (:meth:`SyncService._ask_agent`; one call may otherwise take about 3,100 s, 5 attempts of up
    to 570 s each, bot/agents/client.py), so the rest of the sync has the other half of the
    delivery's limit (6 h: 3 h for the agent), and the delivery is never cancelled and
    dead-lettered with the answers it got half-applied."""
    return float(configured_s) if configured_s > 0 else float(delivery_timeout_s) / 2.0


def _committed(core: "CoreResult", sha: str) -> float:
    """Committer time (epoch s) of upstream commit ``sha`` of ``core`` (0.0 when unknown)."""
    c = core.commits.get(sha) if sha else None
    return float(c.committer_time) if c is not None and c.committer_time else 0.0


@dataclass
class CoreResult:
    """What ingest + plan gave for one fork (plain data for the status issue and PRs)."""

    upstream_head: str
    fork_head: str
    plan: Plan
    commits: dict[str, CommitInfo]
    frontier: str = ""
    contiguous_pin: str = ""
    days_behind: float = 0.0
    backlog: int = 0
    not_reached: int = 0
    deferred: list[dict] = field(default_factory=list)
    wont_port: list[dict] = field(default_factory=list)
    in_flight: list = field(default_factory=list)      # bot.model.InFlightBranch
    contiguous_lag_days: float = 0.0
    contiguous_pin_at: float = 0.0                       # committer time of contiguous_pin (epoch s; 0 unknown)
    holder: dict = field(default_factory=dict)          # what holds the contiguous pin: {"sha","pr","disposition"}; {} none
    backlog_by: dict = field(default_factory=dict)      # the Backlog per disposition: {"PENDING": 24, …}
    not_reached_handled: int = 0
    ledger: tuple = ()                                   # bot.model.LedgerEntry, upstream order (for the dashboard)
    plan_work: dict = field(default_factory=dict)       # the plan's merges computed / read from the cache, symbols computed

    def units_to_publish(self, cfg: ForksyncConfig, rows: Sequence[dict] = (), ended: Sequence[dict] = ()) -> list[Unit]:
        """The plan's units, plus every in-flight ``forksync/*`` branch the plan does not extend:
        such a branch may have been pushed by a run that failed before its PR was opened, so its
        PR is ensured (and its body refreshed) too. A unit comes after the units it lands after
        (plan order otherwise): a chain's later commit may land after a bundle whose first commit
        is newer than the chain's, and its PR names the dependency's PR.

        A planned unit that continues an in-flight branch (the plan extends an open chain, or
        :func:`bot.sync.owed.keep_owed` folded what a stopped chain owes back into it) lists only
        the commits still to pick; the unit published lists every upstream commit its branch
        carries (clean picks, a conflicted one) as well, in upstream order (``ledger``; an unknown
        sha keeps its place after the known ones): the PR body counts and names them, and its
        ``sync_branches.shas_json`` is what the gate (picks missing or squashed) and landing (picks
        a squash merge lost) hold the PR to.

        ``rows``: the fork's in-flight ``sync_branches`` rows. An open unit keeps the units its row
        says it lands after (``depends_json``) while they are planned or in flight: the plan makes
        ``depends_on`` for the commits it places only, so a branch it re-lists (nothing added) or
        extends with commits of no dependency would otherwise lose it — a chain stopped at a pick
        that needs an open bundle's pick (docs/plan.md "Landing after earlier bundles") would no
        longer say it waits for that bundle, nor be published after it.

        ``ended``: the rows of units those rows land after that were closed without merging
        (:func:`bot.sync.store.ended_deps`): a unit waits for their commits planned again, or
        keeps waiting on them when its branch holds a person's work (:func:`_kept_after`)."""
        flying = {b.unit_id: b for b in self.in_flight}
        rank = {e.sha: n for n, e in enumerate(self.ledger)}
        units = [self._with_carried(u, flying.get(u.id), rank, cfg) for u in self.plan.units]
        planned = {u.id for u in units}
        for b in self.in_flight:
            if b.unit_id in planned or not b.upstream_shas or any(s not in self.commits for s in b.upstream_shas):
                continue
            paths = set().union(*(self.commits[s].paths for s in b.upstream_shas))
            units.append(Unit(id=b.unit_id, kind=b.kind, items=_in_flight_items(b.upstream_shas),
                              areas=cfg.areas_for_paths(sorted(paths))))
        picked = {e.sha for e in self.ledger if e.disposition == Disposition.PICKED}
        return _deps_first(_kept_after(units, rows, set(flying), ended=ended,
                                       tips={b.unit_id: b.tip for b in self.in_flight}, picked=picked))

    def _with_carried(self, unit: Unit, branch: InFlightBranch | None, rank: Mapping[str, int],
                      cfg: ForksyncConfig) -> Unit:
        """``unit`` with the upstream commits ``branch`` (its in-flight branch, None when it has
        none) carries and the unit does not list, merged in upstream order; its areas grow by theirs."""
        carried = [s for s in (branch.upstream_shas if branch else ()) if s in self.commits and s not in unit.shas]
        if not carried:
            return unit
        last = len(rank)
        items = unit.items + _in_flight_items(carried)
        order = {i.sha: n for n, i in enumerate(items)}
        paths = set().union(*(self.commits[s].paths for s in carried))
        return replace(unit, items=tuple(sorted(items, key=lambda i: (rank.get(i.sha, last), order[i.sha]))),
                       areas=tuple(sorted(set(unit.areas) | set(cfg.areas_for_paths(sorted(paths))))))


def _kept_after(units: list[Unit], rows: Sequence[dict], flying: set[str], *, ended: Sequence[dict] = (),
                tips: Mapping[str, str | None] | None = None, picked: set[str] | frozenset = frozenset()) -> list[Unit]:
    """Pure: ``units`` with each one's ``depends_on`` grown by the ids its row (``rows`` by
    ``unit_id``) last published (``depends_json``; for a row written before it, every older
    in-flight unit: :func:`bot.sync.store.depends_of`) that are still live — a unit of ``units``
    or an in-flight branch (``flying``: unit ids) — and land after nothing of its own (no pair of
    units made to land after each other).

    A unit it lands after that was closed without merging (``ended``: its row, state ``closed``
    or ``decided``, :func:`bot.sync.store.ended_deps`) is followed to its commits (the row's
    ``shas_json``): the units of ``units`` carrying any of them now (planned again under another
    id) are landed after instead — the unit's picks were predicted on theirs. None carrying them,
    the closed unit itself is kept only while the unit's branch holds a person's work
    (:func:`bot.sync.store.person_work`, ``tips``: branch tip by unit id) and not every one of its
    commits is ``picked`` (PICKED in the ledger: picked by hand is landed): a resolution made
    while those picks were to land first may carry their changes, so it waits for a person
    (the gate's ``lands-after``, docs/plan.md "Landing after earlier bundles"). A branch of
    forksync's own picks was built on the fork tip: it is the fork as it is, and waits no more."""
    stored = {r.get("unit_id"): sync_store.depends_of(r, rows) for r in rows}
    row_of = {r.get("unit_id"): r for r in rows}
    closed = {e.get("unit_id"): e for e in ended}
    live = {u.id for u in units} | flying
    deps = {u.id: set(u.depends_on) for u in units}
    carrier: dict[str, str] = {}
    for u in units:
        for sha in u.shas:
            carrier.setdefault(sha, u.id)
    out = []
    for u in units:
        more: list[str] = []
        for d in stored.get(u.id, ()):
            if d in live:
                now = [d]
            elif d in closed:
                shas = json.loads(closed[d].get("shas_json") or "[]")
                now = list(dict.fromkeys(carrier[s] for s in shas if s in carrier))
                if not now and sync_store.person_work(row_of.get(u.id) or {}, (tips or {}).get(u.id)) \
                        and not all(s in picked for s in shas):
                    now = [d]
            else:
                now = []
            more += [x for x in now if x != u.id and x not in u.depends_on and x not in more
                     and u.id not in deps.get(x, ())]
        out.append(replace(u, depends_on=u.depends_on + tuple(more)) if more else u)
    return out


def _deps_first(units: Sequence[Unit]) -> list[Unit]:
    """``units`` in their order, except that each comes after those of its ``depends_on`` among them."""
    by_id = {u.id: u for u in units}
    out: list[Unit] = []
    done: set[str] = set()

    def visit(u: Unit) -> None:
        if u.id in done:
            return
        done.add(u.id)          # depends_on never cycles (bot/plan/chains.py); this also guards it
        for d in u.depends_on:
            if d in by_id:
                visit(by_id[d])
        out.append(u)

    for u in units:
        visit(u)
    return out


def scrub(text: str, secrets: list[str]) -> str:
    """A git error for people: ``secrets`` (the installation token) and then, with
    :func:`bot.agents.redact.scrub`, every URL's userinfo and every registered secret — a clone URL
    may carry credentials of its own (``FORKSYNC_GIT_URL``) and git's argv is quoted."""
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return redact_scrub(text)


def _in_flight_items(shas: Iterable[str]) -> tuple[PlanItem, ...]:
    """Plan items for upstream commits an open branch carries that the plan does not list, each
    with the "in flight" reason (its words rendered once, not per commit)."""
    why = render_part(TEXTS, "in_flight")
    return tuple(PlanItem(s, why) for s in shas)


#: the failing job a status issue GitHub cannot hold is recorded as (bot.sync.store.record_job)
STATUS_ISSUE_JOB = "status-issue"


def dropped_from_upstream(git_dir: Path, upstream_ref: str, in_flight, ledger) -> dict[str, str]:
    """Full sha → subject of the upstream commits open ``forksync/*`` branches carry
    (``in_flight``: :class:`bot.model.InFlightBranch`) that upstream's history no longer has: not
    in ``ledger`` (the range, sha → entry), not reached from ``upstream_ref`` in ``git_dir`` (a
    commit older than the range is reached), and on a branch with no rewritten copy (a rewrite
    that kept the change leaves it IN_FLIGHT under its new sha: docs/core.md, "Rewritten upstream
    history"; a branch with one is left alone whole, its old shas cannot be told apart). A commit
    whose objects are absent is not claimed. Empty without the upstream ref. Read by
    :func:`bot.sync.shrink.shrinks`, which closes or rebuilds the units that carry one."""
    repo = open_repository(str(git_dir))
    try:
        tip = repo.references[upstream_ref].target
    except KeyError:
        return {}
    out: dict[str, str] = {}
    for b in in_flight:
        if b.copies:
            continue
        for sha in b.upstream_shas:
            if len(sha) != 40 or sha in ledger or sha in out or sha not in repo:
                continue
            if str(tip) == sha or repo.descendant_of(tip, sha):
                continue
            out[sha] = (repo[sha].message.splitlines() or [""])[0]
    return out

#: the working repository's ref that keeps the tip upstream's branch moved back from while a
#: rewind holds units or stands as a notice (its commits are no branch's any more: a gc would
#: prune them, and with them what tells the rewind apart from a rewrite)
REWOUND_REF = "refs/forksync/rewound"


def upstream_rewind(git_dir: Path, upstream_ref: str, in_flight, ledger, last: str,
                    prior: dict | None = None) -> rewind_mod.Rewind:
    """:func:`dropped_from_upstream`, split by :func:`bot.sync.rewind.rewind` against ``last``
    (the tip forksync last synced, or the one a rewind that still holds moved back from; ``""``
    none) and ``prior`` (that rewind's record, :attr:`bot.sync.status.SyncStatus.rewound`) into the
    commits a rewind holds and those dropped. :data:`REWOUND_REF` is set to the tip moved back from
    while a rewind holds and the repository has it, and removed otherwise."""
    gone = dropped_from_upstream(git_dir, upstream_ref, in_flight, ledger)
    repo = open_repository(str(git_dir))
    r = rewind_mod.rewind(last, _tip_of(repo, upstream_ref), gone, _reaches(repo), prior)
    _keep_rewound(repo, r.since)
    return r


def _keep_rewound(repo, since: str) -> None:
    """Point ``repo``'s :data:`REWOUND_REF` at ``since`` (the tip a standing rewind moved back
    from) where ``repo`` has that commit; otherwise (``""``: no rewind stands, or a clone made
    since lost it) remove the ref, if there is one."""
    if since and since in repo:
        repo.references.create(REWOUND_REF, since, force=True)
    elif REWOUND_REF in repo.references:
        repo.references.delete(REWOUND_REF)


#: how many commits :func:`upstream_moved_back` reads on each side (the commits a rewind took, the
#: fork's own since upstream's tip now): a rewind of more is no mistaken push, and the notice
#: names the landed picks it found within them
MOVED_BACK_WALK = 20_000


def upstream_moved_back(git_dir: Path, upstream_ref: str, last: str, prior: dict | None, fork_head: str,
                        rules) -> tuple[str, dict[str, str]]:
    """Whether upstream's ``upstream_ref`` moved back from ``last`` (the tip last synced, or the
    one the standing record ``prior`` moved back from), and what of it the fork landed:
    ``(last, {sha: subject})`` — the commits reached from ``last`` and not from the tip now that
    the fork holds (merged) or a fork commit since that tip picks (``rules``: the fork's
    provenance rules; at most
    :data:`MOVED_BACK_WALK` commits each side) — or ``("", {})`` when it did not move back
    (:func:`bot.sync.rewind.moved_back`). Where the repository lost ``last`` (cloned again), the
    landed commits are the record's. Keeps ``last`` as :data:`REWOUND_REF` while it stands."""
    repo = open_repository(str(git_dir))
    tip = _tip_of(repo, upstream_ref)
    if not rewind_mod.moved_back(last, tip, _reaches(repo), prior):
        return "", {}
    if last not in repo:
        return last, {c["sha"]: c.get("subject", "") for c in (prior or {}).get("landed", ())}
    _keep_rewound(repo, last)

    def walk(start: str):
        w = repo.walk(start, pygit2.enums.SortMode.TOPOLOGICAL)
        if tip:
            w.hide(tip)
        return itertools.islice(w, MOVED_BACK_WALK)
    taken = {str(c.id): (c.message.splitlines() or [""])[0] for c in walk(last)}
    picked: list[str] = []
    for f in walk(fork_head) if fork_head and fork_head in repo else ():
        # a fork that merges upstream holds the commits themselves; one that picks, its claims
        picked.append(str(f.id))
        picked += [c.ref for c in claims(f.message, rules) if c.kind == "pick" and not c.ref.startswith("#")]
    return last, rewind_mod.landed_taken(taken, picked)


def _tip_of(repo, ref: str) -> str:
    """The commit ``ref`` of ``repo`` names, ``""`` when it has no such ref."""
    try:
        return str(repo.references[ref].target)
    except KeyError:
        return ""


def _reached_by(git_dir: Path, ref: str, shas: Sequence[str]) -> set[str]:
    """The commits of ``shas`` that ``ref`` of the repository at ``git_dir`` reaches (itself or an
    ancestor); an unknown commit or ref reaches nothing. Reads only."""
    shas = [s for s in shas if s]
    if not shas:
        return set()
    repo = open_repository(str(git_dir))
    tip, reaches = _tip_of(repo, ref), _reaches(repo)
    return {s for s in shas if tip and reaches(s, tip)}


def _reaches(repo) -> rewind_mod.Reaches:
    """:class:`bot.sync.rewind.Reaches` over ``repo``'s objects."""
    def reaches(older: str, newer: str) -> bool:
        try:
            return older in repo and newer in repo and (older == newer or repo.descendant_of(newer, older))
        except (KeyError, ValueError, pygit2.GitError):
            return False
    return reaches


def rewound_past(git_dir: Path, upstream_ref: str, sha: str, st) -> rewind_mod.Rewind | None:
    """The rewind that holds upstream commit ``sha`` (one upstream's ``upstream_ref`` no longer
    reaches), judged as :func:`upstream_rewind` judges it at the next sync — against the tip the
    rewind that holds moved back from, else the tip last synced (``st``: the fork's
    :class:`bot.sync.status.SyncStatus`, None before its first sync) — so that a push handled
    before that sync is answered as the sync will decide. None: upstream dropped ``sha`` (a
    rewrite, or history built on the rewound tip), or nothing was synced before. Reads only."""
    prior = st.rewound if st else None
    last = (prior or {}).get("from") or (st.upstream_head if st else "")
    repo = open_repository(str(git_dir))
    r = rewind_mod.rewind(last, _tip_of(repo, upstream_ref), {sha: ""}, _reaches(repo), prior)
    return r if sha in r.held else None


_RESOLVED_BY = re.compile(r"^Resolved-by:[ \t]*(.+?)[ \t]*$", re.MULTILINE | re.IGNORECASE)


def _resolved_by_people(git_dir: Path, base: str, tip: str) -> bool:
    """Does ``base..tip`` in ``git_dir`` hold a pick that folds a person's conflict resolution (a
    ``Resolved-by:`` trailer naming someone other than forksync's rules,
    ``templates/commit/resolved_pick.txt.j2``)? Such a pick is forksync's commit, but what it
    resolved is theirs: picked again, it stops at its conflict. False when either commit is absent."""
    repo = open_repository(str(git_dir))
    try:
        walker = repo.walk(repo.revparse_single(tip).peel(pygit2.Commit).id)
        walker.hide(repo.revparse_single(base).peel(pygit2.Commit).id)
        return any(not by.startswith(rules_mod.RULES_BY) for c in walker for by in _RESOLVED_BY.findall(c.message))
    except (KeyError, ValueError, pygit2.GitError):
        return False


class SyncService:
    """``git_url``: clone URL template with ``{owner}`` and ``{repo}`` (an ``https://`` URL gets
    the installation token as ``x-access-token``); ``token_for(installation_id)`` returns that
    token (awaitable); ``client_for(installation_id)`` a GitHub client; ``dead_letters(store, fork)``
    the fork's dead-lettered deliveries (``[{"id","event","action","reason","at"}]``, newest
    first; :func:`bot.app.queue.dead_letters`), shown as an alarm on the status issue.
    ``bot_login`` and ``login_unknown`` (why the login is unknown, ``""`` when known) are set
    again by the runtime when token mode learns the login after start-up
    (:meth:`bot.app.runtime.Clients.learn_login`); the status issue says ``login_unknown``.
    ``claims``: the worker process's claims (:mod:`bot.github.claims`; the runtime passes those
    its GitHub clients carry); None: its own on ``<workdir>/locks``. ``agent_client(settings,
    store, **kw)`` builds the conflict agent's client for one chain's conflict in a sync
    (:meth:`bot.agents.client.AgentClient.from_env` by default; tests give it their clock)."""

    def __init__(self, *, workdir: str | Path, git_url: str, bot_login: str | None = None,
                 token_for: Callable[[int | None], Awaitable[str]] | None = None,
                 client_for: Callable[[int | None], Awaitable[Any]] | None = None,
                 now: Callable[[], float] = time.time,
                 dead_letters: Callable[[Any, str], list[dict]] | None = None, claims: Claims | None = None,
                 agent_deadline_s: float = agent_deadline(DELIVERY_TIMEOUT_S),
                 agent_client: Callable[..., AgentClient] = AgentClient.from_env):
        self.workdir = Path(workdir)
        self.git_url = git_url
        self.bot_login = bot_login
        self.login_unknown = ""
        self.token_for = token_for
        self.client_for = client_for
        self.now = now
        self.dead_letters = dead_letters
        # the fork lock (key "") and the claims on the fork's GitHub objects, shared by the
        # worker processes on this workdir (the runtime passes its GitHub clients' own)
        self.claims = claims if claims is not None else Claims(self.workdir / "locks", on_wait=log_wait)
        self._memory = rules_mod.MemoryCache()
        self._walks: dict[str, dict] = {}      # working repo -> the last plan's walk (continued after a push)
        # the conflict agent's time in one sync (:func:`agent_deadline`), and per fork the clock
        # time the agent work of the sync running now ends
        self.agent_deadline_s = agent_deadline_s
        self.agent_client = agent_client
        self._agent_until: dict[str, float] = {}
        # per fork, during its sync's publishing: each unit's PR text as published (by unit id),
        # rendered again for a unit whose dependency the sync closes after (_retell_lands_after)
        self._pr_texts: dict[str, dict[str, _PrText]] = {}
        # this service's start (wall clock: file times are compared with it), the forks whose
        # repositories were checked since for what an unclean stop left (_lock), and the repairs
        # that made, until a sync puts them on the fork's status issue
        self.started_at = time.time()
        self._checked: set[str] = set()
        self._repaired: dict[str, dict] = {}

    # ------------------------------------------------------------------ git edge
    def repo_dir(self, full_name: str) -> Path:
        return self.workdir / (full_name.replace("/", "+") + ".git")

    async def remote_url(self, full_name: str, installation_id: int | None) -> tuple[str, list[str]]:
        rv = split_repo(full_name)
        url = self.git_url.format(owner=rv["owner"], repo=rv["repo"])
        secrets: list[str] = []
        if url.startswith(("https://", "http://")) and self.token_for is not None:
            tok = await self.token_for(installation_id)
            if tok:
                url = authenticated_remote(url, tok)
                secrets.append(tok)
        return url, secrets

    async def _git(self, git_dir: Path, *argv: str, secrets: list[str] = (), check: bool = True) -> str:
        # past GIT_TIMEOUT_S, or cancelled (the worker stops): the git goes too, never left
        # writing the working repository once the fork lock is released
        code, out, err = await gitio.run_locked_git(git_dir, *argv, env=gitio.git_env(), timeout_s=GIT_TIMEOUT_S)
        if check and code != 0:
            # stderr scrubbed whole, then cut: a cut through a token leaves a part no scrub knows
            why = scrub(err.decode(errors="replace").strip(), list(secrets))[:500]
            raise SyncError(scrub(f"git {' '.join(argv[:3])} failed ({code}): {why}", list(secrets)))
        return out.decode(errors="replace")

    async def ensure_repo(self, full_name: str) -> Path:
        """The fork's bare working repository (created on first use, with forksync's identity)."""
        d = self.repo_dir(full_name)
        if not (d / "HEAD").exists():
            d.mkdir(parents=True, exist_ok=True)
            await self._git(d, "init", "--bare", "-q")
            await self._git(d, "config", "user.name", "forksync")
            await self._git(d, "config", "user.email", "forksync@users.noreply.github.com")
        return d

    async def fetch(self, full_name: str, installation_id: int | None, upstream: str, upstream_ref: str) -> Path:
        """Fetch the fork's branches and notes, and upstream's ``upstream_ref``, into the working repo."""
        d = await self.ensure_repo(full_name)
        url, secrets = await self.remote_url(full_name, installation_id)
        try:
            await self._git(d, "fetch", "-q", "--prune", "--no-tags", url, "+refs/heads/*:refs/heads/*",
                            "+refs/notes/*:refs/notes/*", secrets=secrets)
        except SyncError as e:
            # said as the fork's, not upstream's: its access is what to fix (upstream was not fetched)
            raise SyncError(f"{sync_status.FORK_FETCH_FAILED}{full_name} failed: {e}") from None
        up_url, up_secrets = await self._upstream_url(upstream, installation_id)
        await self._git(d, "fetch", "-q", "--no-tags", up_url,
                        f"+refs/heads/{upstream_ref}:refs/remotes/upstream/{upstream_ref}", secrets=up_secrets)
        return d

    async def _upstream_url(self, upstream: str, installation_id: int | None) -> tuple[str, list[str]]:
        if re.match(r"^[\w.\-]+/[\w.\-]+$", upstream):
            return await self.remote_url(upstream, installation_id)
        return upstream, []

    # ------------------------------------------------------------------ core seam
    def compute(self, git_dir: Path, cfg: ForksyncConfig, upstream_ref: str, fork_ref: str) -> CoreResult:
        """ingest (ledger, pins) → plan, over the working repository (blocking; run in a thread).

        The core reads everything from the one working repository: the fork's branches and notes
        as fetched, upstream as ``refs/remotes/upstream/<ref>``."""

        local = cfg.model_copy(update={
            "upstream": cfg.upstream.model_copy(update={"url": "", "ref": f"refs/remotes/upstream/{upstream_ref}"}),
            "fork": cfg.fork.model_copy(update={"url": str(git_dir), "ref": f"refs/heads/{fork_ref}"}),
            "cache_dir": str(self.workdir / "cache"),
        })
        # one store for the commit analysis and the plan's caches (predictions keyed by what they
        # read, symbols per commit): the re-plan after an upstream push or a landing then merges
        # and parses only what the change reaches, as `forksync plan` does with the same store;
        # after a push (the same fork tip, new commits after the old ones) the last plan's walk
        # goes on from where it ended
        store = default_store(local)
        # the App follows one fork ref per repository and names its sync branches forksync/<unit>
        # (bot.model.sync_branch): that fork ref is the default one here, whatever HEAD says
        state = load_state(local, store=store, fetch=False, default_branch=fork_ref)
        # the same planning path as `forksync plan` (caps, symbol scope, stacked chains)
        run = plan_state(state, store=store, resume=self._walks.setdefault(str(git_dir), {}))
        plan = run.plan
        log.info("%s: planned %d pending commit(s) into %d unit(s): %d merge(s) computed, %d read from the "
                 "cache, %d file change(s)' symbols computed, %.2f s", fork_ref, len(run.pending),
                 len(plan.units), run.merges, run.cache_hits, run.parsed_files, run.seconds)

        def listed(d: Disposition) -> list[dict]:
            return [{"sha": e.sha, "subject": e.subject, "reason": e.reason} for e in state.ledger.entries
                    if e.disposition == d]

        p = state.pins
        return CoreResult(state.upstream_tip, state.fork_tip, plan, dict(state.upstream),
                          frontier=p.frontier.sha or "", contiguous_pin=p.contiguous.sha or "",
                          days_behind=float(p.days_behind), backlog=int(p.backlog), not_reached=int(p.not_reached),
                          deferred=listed(Disposition.DEFERRED_BLOCKED), wont_port=listed(Disposition.WONT_PORT),
                          in_flight=list(state.in_flight), contiguous_lag_days=float(p.contiguous_lag_days),
                          contiguous_pin_at=float(p.contiguous.committer_time or 0),
                          holder={"sha": p.holder.sha or "", "pr": p.holder.pr or 0, "disposition": p.holder_disposition}
                          if p.holder else {},
                          backlog_by=dict(p.backlog_by_disposition), not_reached_handled=int(p.not_reached_handled),
                          ledger=tuple(state.ledger.entries),
                          plan_work={"merges": run.merges, "cached": run.cache_hits, "symbols": run.parsed_files})

    # ------------------------------------------------------------------ orchestration
    @contextlib.asynccontextmanager
    async def _lock(self, full_name: str):
        """One sync (or other change of the fork's working repository) at a time per fork: the
        claim on the fork itself (:mod:`bot.github.claims`: an asyncio lock within this process,
        then an exclusive ``flock`` on ``<workdir>/locks/<owner>+<repo>.lock`` across the worker
        processes sharing the workdir, ``serve --workers N``); git in one repository from two
        processes at once fails on its own lock files or interleaves pushes. Every git that writes
        the working repository runs under it, in the foreground (no detached gc:
        :data:`bot.git.repo.NO_DETACHED_GC`), so a git lock file found there once it is held was
        left by a git killed mid-run (its worker stopped or crashed, however recently): removed,
        and logged, before anything else runs."""
        async with self.claims.hold(full_name):
            left = gitio.clear_stale_locks(self.repo_dir(full_name), self.now(), max_age_s=None)
            if left:
                log.warning("%s: removed git lock file(s) a git killed mid-run left: %s", full_name, ", ".join(left))
            if full_name not in self._checked:
                self._checked.add(full_name)
                self._clear_partial_packs(full_name)
                self._repair(full_name)
            yield

    def _repair(self, full_name: str) -> None:
        """Once per fork in this service's life, under the fork lock: mend the fork's working
        repository when an unclean stop (a power loss) left files in it empty or cut short
        (:func:`bot.git.repo.damaged_files`). It is a copy of what GitHub holds (every ref is
        fetched with ``+``): damaged refs are removed, and the sync's fetch brings them back; a
        damaged object (or ``HEAD``, ``config``, a ref to an object it lacks) removes the whole
        repository, cloned again by the fetch (git cannot fetch one object it believes it has).
        Chosen over fsyncing every write (``pygit2.settings.enable_fsync_gitdir``): the gits of
        the fetches write loose objects and refs unsynced too (git's ``core.fsync`` default), and
        docs/design.md gives the measured cost. Recorded for the status issue; logged."""
        work = self.repo_dir(full_name)
        refs, others = gitio.damaged_files(work)
        if not refs and not others:
            return
        if others:
            shutil.rmtree(work)
        else:
            for rel in refs:
                (work / rel).unlink(missing_ok=True)
        self._repaired[full_name] = {"files": refs + others, "rebuilt": bool(others), "at": self.now()}
        log.warning("%s: the working repository was damaged (%s); %s", full_name, ", ".join((refs + others)[:10]),
                    "removed, to be cloned again" if others else "the damaged refs removed, to be fetched again")

    def _clear_partial_packs(self, full_name: str) -> None:
        """Once per fork in this service's life, under the fork lock: remove the temporary pack
        files and the packs without their index that a writer killed mid-write left in the fork's
        working repository and in its planner's scratch repository, those older than this
        service's start (:func:`bot.config.objects.remove_partial_packs`); logged."""
        work = self.repo_dir(full_name)
        for repo in (work, scratch_dir(work, self.workdir / "cache")):
            gone = remove_partial_packs(repo / "objects", self.started_at)
            if gone:
                log.warning("%s: removed what a pack writer killed mid-write left in %s: %s", full_name, repo.name,
                            ", ".join(gone))

    async def fork_config(self, ctx, full_name: str) -> ForksyncConfig:
        return await load_fork_config(ctx, full_name)

    def upstream_of(self, cfg: ForksyncConfig) -> tuple[str, str]:
        up = cfg.upstream.url
        m = re.match(r"^https://github\.com/([\w.\-]+/[\w.\-]+?)(?:\.git)?/?$", up or "")
        return (m.group(1) if m else up), cfg.upstream.ref

    async def sync(self, ctx, full_name: str, *, reason: str, rebuild: str | None = None,
                   cfg: ForksyncConfig | None = None) -> str:
        """Run fetch → ingest → plan → apply → push → PRs → status for one fork. Returns a summary."""
        cfg = cfg or await self.fork_config(ctx, full_name)
        upstream, up_ref = self.upstream_of(cfg)
        if not upstream:
            await self._save_blocked(ctx, full_name)
            return render_part(TEXTS, "no_upstream", repo=full_name)
        landed = await self.land_closed(ctx, full_name)
        sync_store.update_tracking(ctx.store, full_name, poll_interval_s=cfg.github.poll_interval_s,
                                   keep_days=cfg.github.metrics_keep_days)
        async with self._lock(full_name):
            # read once the lock is held: a row another sync published while this one waited for
            # it is older than this sync's start, so a unit this sync leaves alone (held) is shown
            # as not refreshed, and its blocked rows are not taken for this sync's own
            started = self.now()
            # the units in flight as this sync begins: one of them landed or closed while it plans
            # (its landing does not wait for the lock) is no unit of this plan's to publish again
            live = {r["branch"] for r in sync_store.open_branches(ctx.store, full_name)
                    + sync_store.blocked_only_branches(ctx.store, full_name)}
            st = sync_store.load_status(ctx.store, full_name) or sync_status.SyncStatus(repo=full_name, upstream=upstream)
            if full_name in self._repaired:
                st = _replace(st, repaired=self._repaired.pop(full_name))
            try:
                git_dir = await self.fetch(full_name, ctx.installation_id, upstream, up_ref)
            except SyncError as e:
                st = _replace(st, last_fetch_at=self.now(), last_fetch_error=redact_scrub(str(e))[:300])
                sync_store.save_status(ctx.store, st)
                snapshots.record_sync(ctx.store, st, at=self.now(), keep_days=cfg.github.metrics_keep_days,
                                      stale_after_s=cfg.github.stale_after_s)
                await self.refresh_status_issue(ctx, full_name, cfg=cfg)
                raise
            core = await asyncio.to_thread(self.compute, git_dir, cfg, up_ref, cfg.fork.ref)
            lines = []
            no_ops = await asyncio.to_thread(self._already_in_fork, git_dir, core)
            if no_ops:
                # decided at plan time and recorded in git (a note), so the ledger stays a
                # function of git alone; then the numbers are computed again with them
                await self._record_decisions(ctx, full_name, no_ops, Disposition.NO_OP,
                                            render_part(TEXTS, "no_op_reason", fork_head=core.fork_head[:12]),
                                            "forksync")
                core = await asyncio.to_thread(self.compute, git_dir, cfg, up_ref, cfg.fork.ref)
                lines.append(render_part(TEXTS, "no_ops", n=len(no_ops)))
            # a chain whose later pick failed keeps that pick (the plan alone would make it a unit
            # of its own): its row says which commit it stopped at
            core.plan, kept = owed_mod.keep_owed(core.plan, sync_store.open_branches(ctx.store, full_name),
                                                 {e.sha: n for n, e in enumerate(core.ledger)})
            lines += kept
            lines[:0] = [render_part(TEXTS, "planned", repo=full_name, reason=reason, n=len(core.plan.units))] + landed
            waiting: list[Unit] = []
            unclosed: list[str] = []         # units whose commits were all decided, not closed on GitHub
            # carried commits upstream's branch no longer has: dropped, or held while it only moved
            # back (pure rule, bot.sync.rewind), judged against the tip last synced — also on hold,
            # so that a rewind seen then is not taken for a rewrite after `/forksync unhold`
            ledger = {e.sha: e for e in core.ledger}
            last = (st.rewound or {}).get("from") or st.upstream_head
            rw = await asyncio.to_thread(upstream_rewind, git_dir, f"refs/remotes/upstream/{up_ref}", core.in_flight,
                                         ledger, last, st.rewound)
            # a rewind that holds no unit is still said (a notice; a warning when the fork landed
            # picks of what it took): upstream is behind what was synced
            moved, landed_back = await asyncio.to_thread(upstream_moved_back, git_dir, f"refs/remotes/upstream/{up_ref}",
                                                         last, st.rewound, core.fork_head, cfg.provenance)
            open_units = self._open_for_shrink(ctx, full_name, core)
            held = rewind_mod.held_units(open_units, rw.held)
            same = st.rewound and st.rewound.get("from") == (rw.since or moved)     # the same rewind, seen again
            rewound = rewind_mod.record(rw, up_ref, held, (same and st.rewound.get("at")) or self.now(),
                                        moved_from=moved, landed=landed_back)
            if rewound and rewound["units"]:
                lines.append(render_part(TEXTS, "rewound", ref=up_ref, since=rw.since[:12], tip=rw.tip[:12],
                                         held=len(held), carried=len(rw.held)))
            if rewound != st.rewound:
                # the gate holds the held units' PRs from now, not from the end of this sync
                sync_store.save_rewound(ctx.store, full_name, rewound)
            held_ids = {u.unit_id for u in held}
            # read again: a `/forksync hold` may have come in while the plan was computed
            on_hold = bool((sync_store.load_status(ctx.store, full_name) or st).held)
            if not on_hold:
                published = set()
                cap = cfg.github.max_open_sync_prs
                # open units whose commits were decided while their PR was open (pure rule); a
                # held unit is left whole, neither closed nor rebuilt
                shrunk = {s.unit.unit_id: s for s in shrink_mod.shrinks(
                    [u for u in open_units if u.unit_id not in held_ids], ledger, rw.dropped)}
                # the conflict agent starts no call past this (the order makes the units whose
                # conflict the agent did not reach last time first, oldest wait first: none is
                # starved; dependencies still before their dependents, plan order otherwise)
                self._agent_until[full_name] = started + self.agent_deadline_s
                rows = sync_store.open_branches(ctx.store, full_name)
                # whose branch holds a person's work, judged before publishing (a push moves the
                # tip forksync pushed) at the tips fetched, as _kept_after judges it
                tips = {b.unit_id: b.tip for b in core.in_flight}
                worked = {r["unit_id"] for r in rows + sync_store.blocked_only_branches(ctx.store, full_name)
                          if sync_store.person_work(r, tips.get(r["unit_id"]))}
                waits = {r["unit_id"]: r.get("agent_waiting_since") or 0.0 for r in rows}
                ended = sync_store.ended_deps(ctx.store, full_name, rows)
                order = _deps_first(sorted(core.units_to_publish(cfg, rows, ended),
                                           key=lambda u: (not waits.get(u.id), waits.get(u.id) or 0.0)))
                self._pr_texts[full_name] = {}
                try:
                    for unit in order:
                        published.add(unit.id)
                        now_row = sync_store.branch_row(ctx.store, full_name, f"forksync/{unit.id}")
                        if f"forksync/{unit.id}" in live and sync_store.ended(now_row):
                            # planned from the fork as fetched before it landed: pushing its branch
                            # again would bring back what the landing deleted, and ask GitHub for a
                            # PR of commits main holds; the landing's own sync plans what is left
                            lines.append(render_part(TEXTS, "ended_while_planned", unit=unit.id, state=now_row.get("state"),
                                                     pr=now_row.get("pr") or 0))
                            continue
                        if unit.id in held_ids:
                            # upstream moved back past its commits: kept as it is until upstream
                            # builds on the rewound history or returns
                            lines.append(render_part(TEXTS, "held", unit=unit.id, ref=up_ref))
                            continue
                        s = shrunk.get(unit.id)
                        if s is not None and s.action == shrink_mod.CLOSE:
                            continue            # closed below: nothing of it is left to publish
                        if _is_new(sync_store.branch_row(ctx.store, full_name, f"forksync/{unit.id}")) \
                                and len(sync_store.open_branches(ctx.store, full_name)) >= cap:
                            # a unit with no branch yet waits for a free slot; units already open are
                            # always refreshed, and oldest first is the order the frontier needs
                            waiting.append(unit)
                            continue
                        if s is not None and s.action == shrink_mod.REBUILD:
                            lines.append(await self._rebuild_shrunk(ctx, full_name, git_dir, cfg, core, unit, upstream, s))
                            continue
                        lines.append(await self.publish(ctx, full_name, git_dir, cfg, core, unit, upstream,
                                                        rebuild=(rebuild == unit.id)))
                        if s is not None:       # TELL: a person's commits are on the branch
                            lines.append(await self._tell_shrunk(ctx, full_name, s))
                    for s in shrunk.values():
                        # a branch carrying a commit upstream's history no longer has is not among
                        # the units to publish (its commits are not all in the range): rebuilt or
                        # told here, from what it keeps
                        if s.unit.unit_id in published or s.action == shrink_mod.CLOSE:
                            continue
                        published.add(s.unit.unit_id)
                        now_row = sync_store.branch_row(ctx.store, full_name, s.unit.branch)
                        if sync_store.ended(now_row):
                            # landed or closed since the open units were read (its landing does
                            # not wait for the fork's lock): as for a planned unit above, its
                            # branch is not pushed again and its row keeps how it ended
                            lines.append(render_part(TEXTS, "ended_while_running", unit=s.unit.unit_id,
                                                     state=now_row.get("state"), pr=now_row.get("pr") or 0))
                            continue
                        if s.action == shrink_mod.TELL:
                            lines.append(await self._tell_shrunk(ctx, full_name, s))
                            continue
                        paths = sorted(set().union(*(core.commits[k].paths for k in s.keep if k in core.commits)))
                        # it keeps the units it lands after that are still live (its row's
                        # depends_json), as a re-listed open unit does (CoreResult.units_to_publish)
                        unit = _kept_after([Unit(id=s.unit.unit_id, kind=s.unit.kind, items=(),
                                                 areas=cfg.areas_for_paths(paths)), *order],
                                           rows, {b.unit_id for b in core.in_flight})[0]
                        lines.append(await self._rebuild_shrunk(ctx, full_name, git_dir, cfg, core, unit, upstream, s))
                finally:
                    self._agent_until.pop(full_name, None)
                    texts = self._pr_texts.pop(full_name, {})
                closed: dict[str, list[str]] = {}
                for s in shrunk.values():
                    if s.action == shrink_mod.CLOSE:
                        row = sync_store.branch_row(ctx.store, full_name, s.unit.branch)
                        try:
                            lines.append(await landing.close_decided(ctx, full_name, row, [asdict(d) for d in s.decided]))
                        except gidgethub.HTTPException as e:
                            # the rest of the sync goes on (status, issue); the delivery is
                            # retried after it, and dead-lettered (an alarm) if GitHub keeps refusing
                            unclosed.append(f"#{row['pr']} ({s.unit.unit_id}): {redact_scrub(str(e))[:200]}")
                        now_row = sync_store.branch_row(ctx.store, full_name, s.unit.branch) or {}
                        if now_row.get("state") == sync_store.DECIDED:
                            closed[s.unit.unit_id] = json.loads(now_row.get("shas_json") or "[]")
                if closed:
                    # the units published above while these were live name them; no later sync
                    # follows from forksync's own close, so what the next one would drop goes now:
                    # the status issue and the gate (lands-after-closed) read the same rows
                    after = sync_store.open_branches(ctx.store, full_name) + sync_store.blocked_only_branches(ctx.store, full_name)
                    was = {r["branch"]: r.get("depends_json") or "" for r in after}
                    picked = {e.sha for e in core.ledger if e.disposition == Disposition.PICKED}
                    for r in sync_store.without_closed(after, closed, worked, picked):
                        sync_store.save_depends(ctx.store, full_name, r["branch"], r["depends_json"], was=was[r["branch"]])
                    # their PRs said "Lands after" the closed units: said again now, from the rows
                    lines += await self._retell_lands_after(ctx, full_name, cfg, core, texts, closed)
                if waiting:
                    lines.append(render_part(TEXTS, "units_wait", n=len(waiting), cap=cap))
                for r in sync_store.blocked_only_branches(ctx.store, full_name):
                    if r["unit_id"] not in published:      # re-planned (or landed) under another unit
                        sync_store.save_branch(ctx.store, **{**r, "state": "replanned", **blocked_mod.CLEAR})
            # the units this sync did not publish (on hold, held by a rewind, skipped or refused)
            # say so on the status issue and the dashboard, with their last publish's time
            synced = _replace(st, rewound=rewound, synced_at=started, synced_on_hold=on_hold)
            units_state = await self._open_units(ctx, full_name, synced) + [
                {"id": u.id, "kind": u.kind, "pr": 0, "url": "", "waiting": True, "cap": cfg.github.max_open_sync_prs,
                 "state": render_part(TEXTS, "waiting_state", cap=cfg.github.max_open_sync_prs)} for u in waiting]
            blocked = [blocked_mod.as_dict(r, full_name) for r in sync_store.blocked_branches(ctx.store, full_name)]
            st = _replace(st, blocked=tuple(blocked), upstream=upstream, upstream_head=core.upstream_head, fork_head=core.fork_head,
                          frontier=core.frontier, contiguous_pin=core.contiguous_pin, days_behind=core.days_behind,
                          upstream_head_at=_committed(core, core.upstream_head), frontier_at=_committed(core, core.frontier),
                          backlog=core.backlog, not_reached=core.not_reached, upstream_seen_at=self.now(), computed_at=self.now(),
                          last_fetch_at=self.now(), last_fetch_error="", deferred=tuple(core.deferred),
                          units=tuple(units_state), contiguous_pin_at=core.contiguous_pin_at,
                          contiguous_lag_days=core.contiguous_lag_days, holder=core.holder.get("sha", ""),
                          holder_pr=core.holder.get("pr", 0), holder_disposition=core.holder.get("disposition", ""),
                          backlog_by=tuple(core.backlog_by.items()), not_reached_handled=core.not_reached_handled,
                          rewound=rewound, synced_at=started, synced_on_hold=on_hold)
            sync_store.save_status(ctx.store, st)
            snapshots.record_sync(ctx.store, st, at=self.now(), contiguous_lag_days=core.contiguous_lag_days,
                                  ledger=snapshots.ledger_rows(full_name, snapshots.with_published(
                                      core.ledger, sync_store.open_branches(ctx.store, full_name)), core.commits, cfg),
                                  plan=snapshots.plan_units(core.plan), keep_days=cfg.github.metrics_keep_days,
                                  stale_after_s=cfg.github.stale_after_s)
        # a failed pick (step apply) is no delivery's to retry: the next sync applies it again
        retry = [b for b in blocked if not b["requires"] and b["at"] >= started and b["step"] != "apply"]
        if not unclosed and not retry:
            # the fork is synced to upstream's head as fetched now: a poll whose own sync failed
            # holds nothing back any more, whichever event brought this sync (upstream's push
            # delivered the same update); a failing read of upstream's branch through GitHub's API
            # is none of this sync's (it fetched with git) and stays counted until a poll reaches it
            sync_store.record_job(ctx.store, full_name, sync_store.POLL_JOB, None, self.now(), unless=sync_store.POLL_READ)
        lines.append(await self.refresh_status_issue(ctx, full_name, cfg=cfg))
        # a person's push answered "held" while upstream stood moved back is checked now, as its
        # own event would have checked it (outside the fork's lock: a fold syncs again): the chains
        # whose rows remember that answer and no standing rewind holds (bot.sync.rewind.held_to_recheck:
        # also after a failed sync, or a rewind no sync recorded)
        held_rows = [r for r in sync_store.open_branches(ctx.store, full_name) if r.get("held_head")]
        reached = await asyncio.to_thread(_reached_by, git_dir, f"refs/remotes/upstream/{up_ref}",
                                          [r.get("conflict_sha") or "" for r in held_rows])
        again = [{"id": r["unit_id"], "branch": r["branch"]}
                 for r in rewind_mod.held_to_recheck(held_rows, rewound, reached)]
        lines += await self._recheck_released(ctx, full_name, cfg, again)
        if unclosed:
            raise SyncError(render_part(TEXTS, "unclosed", repo=full_name, errors="; ".join(unclosed)))
        if retry:
            # a refusal that may pass on its own (network, 5xx, a push raced): the delivery is
            # retried (and, past its attempts, dead-lettered: an alarm) — after the others went on
            raise SyncError(render_part(TEXTS, "retrying", repo=full_name, n=len(retry),
                                        reasons="; ".join(f"{b['id']}: {b['reason']}" for b in retry)))
        return "; ".join(lines)

    async def _recheck_released(self, ctx, full_name: str, cfg: ForksyncConfig, units: list[dict]) -> list[str]:
        """Check again the person's push on each of ``units`` (``{"id","branch"}``: chains whose
        push was answered "held" by a rewind that no longer holds them,
        :func:`bot.sync.rewind.held_to_recheck`), as the
        push's own event would have (:func:`bot.sync.prs.on_pushed`: a conflict resolution is
        folded, the chain goes on; L1 and approval as for any fold). A unit that ended, has no open
        PR, whose PR's head is forksync's own push or one checked already, or moved on from the
        head answered "held" (that push is checked by its own event) is left alone. The row's
        ``held_head`` is cleared once checked — folded, refused with a reason, or answered "held"
        again (which marks it anew) — and kept when GitHub or git failed the check, for the next
        sync to try again. Returns the sync's notes."""
        notes_: list[str] = []
        for u in units:
            row = sync_store.branch_row(ctx.store, full_name, u["branch"])
            held = (row or {}).get("held_head") or ""
            if not row or sync_store.ended(row) or row.get("kind") != "chain" or not int(row.get("pr") or 0):
                if held:
                    sync_store.clear_held_head(ctx.store, full_name, u["branch"], held)
                continue
            pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}",
                                      {**split_repo(full_name), "number": int(row["pr"])})
            head = pr["head"]["sha"]
            if pr.get("state") != "open" or head in (row.get("pushed_tip"), row.get("verified_tip")) \
                    or (held and head != held):
                if held:
                    sync_store.clear_held_head(ctx.store, full_name, u["branch"], held)
                continue
            if held:
                # cleared before the check: a check that answers "held" again marks the row anew
                sync_store.clear_held_head(ctx.store, full_name, u["branch"], held)
            try:
                done = await sync_prs.on_pushed(ctx, self, full_name, pr, fork_ref=cfg.fork.ref)
            except (gidgethub.HTTPException, SyncError) as e:
                # the others are checked all the same; this push is checked again by the next
                # sync (its row remembers it), or when it is pushed anew
                log.warning("%s: %s held by a rewind could not be checked on its release: %s", full_name,
                            u["branch"], redact_scrub(str(e))[:200])
                sync_store.set_held_head(ctx.store, full_name, u["branch"], head)
                done = redact_scrub(str(e))[:200]
            notes_.append(render_part(TEXTS, "released", unit=u["id"], head=head[:12], what=done))
        return notes_

    async def land_closed(self, ctx, full_name: str) -> list[str]:
        """Land the units whose PR GitHub shows closed (merged or not) while their rows still say
        open (:func:`bot.sync.landing.on_closed`, as its ``pull_request.closed`` would have, with
        the merger or closer as sender): GitHub does not redeliver a failed delivery by itself, and
        without this a sync would open a new PR for a unit a person closed, and never record their
        reason. GitHub is the truth for sync PRs (docs/github.md). One ``pulls/list`` of the open
        PRs, then ``pulls/get`` and ``issues/get`` for each unit's PR missing from it. Returns notes."""
        rows = [r for r in sync_store.open_branches(ctx.store, full_name) if int(r.get("pr") or 0)]
        if not rows:
            return []
        rv = split_repo(full_name)
        open_now = {int(p["number"]) async for p in ctx.gh.getiter("/repos/{owner}/{repo}/pulls{?state,per_page}",
                                                                    {**rv, "state": "open", "per_page": 100})}
        notes_: list[str] = []
        for r in rows:
            if int(r["pr"]) in open_now:
                continue
            number = {**rv, "number": int(r["pr"])}
            pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", number)
            if pr.get("state") != "closed":
                continue
            # pulls/get names the merger; the closer of an unmerged PR is on its issue
            sender = pr.get("merged_by") if pr.get("merged") else \
                (await ctx.gh.getitem("/repos/{owner}/{repo}/issues/{number}", number)).get("closed_by")
            await landing.on_closed(ctx, self, full_name, pr, sender=sender or {}, refresh=False)
            notes_.append(render_part(TEXTS, "found_closed", pr=r["pr"], merged=bool(pr.get("merged")), unit=r["unit_id"]))
        return notes_

    async def refresh(self, ctx, full_name: str, *, reason: str) -> str:
        """After a landing: recompute ledger/pins/metrics (and plan the next units)."""
        return await self.sync(ctx, full_name, reason=reason)

    async def publish(self, ctx, full_name: str, git_dir: Path, cfg: ForksyncConfig, core: CoreResult,
                      unit: Unit, upstream: str, *, rebuild: bool = False, urgent_reason: str | None = None,
                      agent_round: int = 0, earlier_rules: tuple = ()) -> str:
        """Apply one unit to its branch, push it (fast-forward only) and open/update its PR. When
        the conflict agent resolved the pick the chain stopped at, the chain goes on with its
        next picks at once (as after a person's resolution), up to :data:`MAX_AGENT_ROUNDS` times.
        A unit apply cannot make (:class:`bot.git.apply.ApplyError`, an error writing its
        objects) is blocked at step ``apply`` with the error, and the other units go on."""
        try:
            return await self._publish(ctx, full_name, git_dir, cfg, core, unit, upstream, rebuild=rebuild,
                                       urgent_reason=urgent_reason, agent_round=agent_round,
                                       earlier_rules=earlier_rules)
        except _ApplyFailed as e:
            branch = f"forksync/{unit.id}"
            row = sync_store.branch_row(ctx.store, full_name, branch)
            tip = (await self._git(git_dir, "for-each-ref", "--format=%(objectname)", f"refs/heads/{branch}")).strip()
            return await self._block(ctx, full_name, cfg, unit, branch, row, core, _Tip(tip, e.upstream_sha),
                                     blocked_mod.pick_failed(str(e)), step="apply")

    async def _publish(self, ctx, full_name: str, git_dir: Path, cfg: ForksyncConfig, core: CoreResult,
                       unit: Unit, upstream: str, *, rebuild: bool = False, urgent_reason: str | None = None,
                       agent_round: int = 0, earlier_rules: tuple = ()) -> str:
        branch = f"forksync/{unit.id}"
        fold = await self._fold_pushed_unrecorded(ctx, full_name, git_dir, branch)
        if fold is not None:        # this sync came before the next event of the branch
            await comment_once(ctx.gh, full_name, fold["pr"], fold["key"], fold["said"])
        row = sync_store.branch_row(ctx.store, full_name, branch)
        # a unit that ended on this branch (landed, closed, re-planned) is history: the unit
        # planned again under its id starts afresh — none of its PR, verified tip or refusal —
        # and its PR is listed as an earlier one, never taken for the new unit's
        prior = None if sync_store.ended(row) else row
        # the tip whose commits apply checks (fetched when the sync started), read before apply
        # moves the ref: a rebuild's lease is on it, never on what GitHub shows just before the
        # push — a person's push since the fetch was never checked
        checked_tip = (await self._git(git_dir, "for-each-ref", "--format=%(objectname)",
                                       f"refs/heads/{branch}")).strip()
        res = await self._apply(git_dir, cfg, unit, core.fork_head, core.commits, urgent_reason)
        url, secrets = await self.remote_url(full_name, ctx.installation_id)
        remote_tip = (await self._git(git_dir, "ls-remote", url, f"refs/heads/{branch}", secrets=secrets)).split()
        remote_tip = remote_tip[0] if remote_tip else None
        if remote_tip and not await self._has_commit(git_dir, remote_tip):
            # someone pushed to the branch after this sync fetched it (a person's resolution while
            # the plan was computed): its commits were never read here, so nothing is pushed over
            # them (git would refuse the push, and a refusal is no truth about GitHub) — their
            # push's own event and the next sync take it from there
            return render_part(TEXTS, "moved_on_github", unit=unit.id, branch=branch, tip=remote_tip[:12])
        force = False
        # the rebuild of a resolved chain refused at this fork and branch tip (kept while both stay)
        refused = (prior or {}).get("rebuild_refused") or ""
        dropped, foreign = await asyncio.to_thread(apply_mod.rewritten_base, git_dir, f"refs/heads/{branch}",
                                                  core.fork_head)
        # what happens to the branch before it is published: bot.sync.rebuild's table, over what git
        # and the store say of it; the costly facts are read only where its rules reach them
        facts = rebuild_mod.BranchFacts(
            retry=rebuild, dropped=len(dropped), foreign=len(foreign), tip=res.tip or "", kept=len(res.kept),
            conflict_commit=bool(res.conflict_commit), error=bool(res.error), fork_head=core.fork_head,
            remote_tip=remote_tip,
            prior=None if not prior else rebuild_mod.Prior(
                pushed_tip=prior.get("pushed_tip"), verified_tip=prior.get("verified_tip"),
                base_sha=prior.get("base_sha"), rebuild_refused=prior.get("rebuild_refused")))
        decision = rebuild_mod.decide(facts)
        while isinstance(decision, rebuild_mod.Ask):
            facts = replace(facts, **{decision.fact: await self._rebuild_fact(git_dir, decision.fact, core.fork_head,
                                                                               res.tip, dropped)})
            decision = rebuild_mod.decide(facts)
        path = decision.path
        if path is rebuild_mod.Path.BLOCKED:
            # the fork's history was rewritten (force push) under a branch holding a person's
            # commits or resolution: never rebuilt over them, never merged with the dropped
            # commits — blocked
            return await self._block(ctx, full_name, cfg, unit, branch, row, core, res,
                                     blocked_mod.rewritten_under(len(dropped), cfg.fork.ref, len(foreign),
                                                                 resolved_by_hand=decision.resolved_by_hand),
                                     step="push")
        if decision.retry_kept and prior and prior.get("pr"):
            # "retry" from the status issue on a branch folding a person's resolution: left as it
            # is, and said once per tip
            await comment_once(ctx.gh, full_name, int(prior["pr"]), f"retry-kept:{res.tip}",
                               render("unit_retry_kept.md.j2", unit_id=unit.id, branch=branch, tip=res.tip))
        if decision.forget_kept:
            # rewritten under forksync's own commits: what apply kept as not forksync's are the
            # fork commits the force push removed, which the PR must never carry back to the fork
            res = replace(res, kept=())
        if path in (rebuild_mod.Path.REBUILD_REWRITTEN, rebuild_mod.Path.REBUILD_RETRY):
            # rebuilt on the current fork tip — only a branch that holds nothing but forksync's
            # own commits; pushed with a lease on the tip we saw
            await self._git(git_dir, "update-ref", "-d", f"refs/heads/{branch}")
            res = await self._apply(git_dir, cfg, unit, core.fork_head, core.commits, urgent_reason)
            force = res.tip is not None and res.tip != remote_tip
        elif path is rebuild_mod.Path.REBUILD_STOPPED:
            # a chain stopped at a conflict, holding nothing but forksync's commits, while the fork
            # moved (a chain it is stacked on landed, say): the conflict may have been only the
            # missing dependency. Built again on the new fork tip, and taken only when it gets
            # past that pick, so a person resolving the same conflict is not raced by a new one
            stopped = res
            # the plan leaves out what is in flight on the branch (its picks, the stopped one):
            # the rebuild picks them all again — every pick the branch carries, also those a
            # re-plan's unit does not list (it extended the branch with later commits only)
            carried = await self._branch_picks(git_dir, core.fork_head, res.tip, core.commits)
            whole = list(dict.fromkeys((*carried, *res.already, *res.remaining)))
            items = {i.sha: i for i in unit.items}
            again = replace(unit, items=tuple(items.get(s) or PlanItem(s, "chain") for s in whole))
            if all(s in core.commits for s in whole):
                await self._git(git_dir, "update-ref", "-d", f"refs/heads/{branch}")
                res = await self._apply(git_dir, cfg, again, core.fork_head, core.commits, urgent_reason)
            at = {sha: n for n, sha in enumerate(whole)}
            if res.tip is None or (res.conflict is not None and at.get(res.conflict, -1) <= at.get(stopped.conflict, -1)):
                await self._git(git_dir, "update-ref", f"refs/heads/{branch}", stopped.tip)
                res = stopped
            force = res.tip != remote_tip
        elif path is rebuild_mod.Path.REBUILD_RESOLVED:
            # a chain a person's resolution finished (folded: nothing but forksync's commits on
            # it) while the fork moved under it (a bundle it lands after landed, say), and merging
            # the fork into it conflicts: where the resolution stood in for what the fork now has.
            # (One that merges cleanly is left as it is: the gate merges the base in, and new
            # picks would cost the approvals its own commits have.)
            # Built again on the new fork tip, and taken only when every pick goes through and the
            # result is the branch with the fork merged in, the person's resolution wherever that
            # merge conflicts (resolution.rebuild_keeps): nothing of theirs is lost, and their
            # commits stay kept under the ref the fold wrote
            resolved = res
            carried = await self._branch_picks(git_dir, core.fork_head, res.tip, core.commits)
            whole = list(dict.fromkeys((*carried, *res.already, *res.remaining)))
            items = {i.sha: i for i in unit.items}
            again = replace(unit, items=tuple(items.get(s) or PlanItem(s, "chain") for s in whole))
            if whole and all(s in core.commits for s in whole):
                await self._git(git_dir, "update-ref", "-d", f"refs/heads/{branch}")
                try:
                    res = await self._apply(git_dir, cfg, again, core.fork_head, core.commits, urgent_reason)
                except _ApplyFailed:
                    res = resolved
            if res is not resolved and not (res.tip and res.conflict is None and not res.error and await asyncio.to_thread(
                    resolution.rebuild_keeps, str(git_dir), resolved.tip, core.fork_head, res.tip)):
                res = resolved
            if res is resolved:
                await self._git(git_dir, "update-ref", f"refs/heads/{branch}", resolved.tip)
                # the same picks on the same fork tip build the same tree: not tried again until
                # the fork or the branch moves (a sync per poll would redo every pick and merge)
                refused = rebuild_mod.refusal_key(core.fork_head, resolved.tip)
            force = res.tip != remote_tip
        rules_done: list[rules_mod.RuleOutcome] = list(earlier_rules)    # the PR body keeps every round's rules
        for _ in range(rules_mod.MAX_RULE_ROUNDS):
            # a fresh conflict (not on GitHub yet) is first put to the deterministic rules
            if not (res.conflict_commit and res.tip == res.conflict_commit) \
                    or await self._on_remote(git_dir, res.conflict_commit, remote_tip):
                break
            out = await asyncio.to_thread(self._apply_rules, git_dir, cfg, unit, res, core)
            if out is not None:
                rules_done.append(out)
            if out is None or out.commit is None:
                break
            await self._git(git_dir, "update-ref", f"refs/heads/{branch}", out.folded or out.commit, res.tip)
            if not out.folded:
                res = replace(res, tip=out.commit)
                break
            res = await self._apply(git_dir, cfg, unit, core.fork_head, core.commits, urgent_reason)
        if res.error and not remote_tip and res.tip in (None, core.fork_head):
            # its first pick failed for another reason than a conflict (nothing was written, there
            # is nothing to resolve, and GitHub refuses a PR with no commits): blocked — stored,
            # on the status issue, the dashboard and /healthz — and applied again by the next sync
            return await self._block(ctx, full_name, cfg, unit, branch, row, core, res,
                                     blocked_mod.pick_failed(res.error), step="apply")
        if res.tip is None:
            return render_part(TEXTS, "nothing_applied", unit=unit.id, conflict=(res.conflict or "")[:12], error=res.error)
        if res.tip == core.fork_head and not remote_tip:
            # nothing to show (a failed first pick is blocked above; a conflict leaves a conflict
            # commit, so a chain stopped at its first pick still gets a draft PR); GitHub refuses a
            # PR with no commits (422), so nothing is pushed
            files = ", ".join(res.conflict_files)
            if res.conflict:    # the conflict agent, only when configured ("" when agents are off)
                agent = await self._ask_agent(ctx, full_name, git_dir, cfg, unit, branch, res.conflict, url, secrets)
                if agent:
                    return f"{unit.id}: {agent}"
            return render_part(TEXTS, "first_commit_blocked", unit=unit.id, sha=(res.conflict or "")[:12], files=files)
        held_for_person = self._person_paths_hit(cfg, core, unit) if remote_tip != res.tip else ""
        if held_for_person:
            return await self._block(ctx, full_name, cfg, unit, branch, row, core, res,
                                     blocked_mod.held_for_person(held_for_person), step="push")
        pushed = remote_tip != res.tip
        # GitHub holds the tip a push began by an earlier run had sent (that run's worker died
        # before recording it, or the push's answer was lost): forksync's own push all the same
        resumed = not pushed and bool(res.tip) and (sync_store.begun_push(ctx.store, full_name, branch) or {}).get("tip") == res.tip
        if pushed:
            lease = [f"--force-with-lease=refs/heads/{branch}:{checked_tip}"] if force else []
            # written before the push: a worker killed between the push and the row below leaves
            # it, and the next sync (``resumed``) still knows this tip for forksync's own
            sync_store.begin_push(ctx.store, full_name, branch, res.tip, self.now())
            try:
                await self._git(git_dir, "push", "-q", *lease, url, f"refs/heads/{branch}:refs/heads/{branch}",
                                secrets=secrets)
            except SyncError as e:
                # GitHub refused this unit's push: the unit is blocked (stored, shown), the others go on
                return await self._block(ctx, full_name, cfg, unit, branch, row, core, res,
                                         blocked_mod.classify(str(e)), step="push")
        # only a tip this sync pushed is forksync's: a branch it left as it was may end in a
        # person's commits (a resolution, a rewritten conflict commit), and taken for forksync's
        # own they would be dropped as its push, folded, or deleted unkept on a close
        sync_store.save_branch(ctx.store, repo=full_name, branch=branch, unit_id=unit.id, kind=unit.kind,
                             pushed_tip=res.tip if pushed or resumed else (prior or {}).get("pushed_tip", ""),
                             verified_tip=(prior or {}).get("verified_tip", ""),
                             pr=(prior or {}).get("pr", 0), state="open", shas_json=json.dumps(list(unit.shas)),
                             depends_json=json.dumps(list(unit.depends_on)),
                             rebuild_refused=refused if refused == rebuild_mod.refusal_key(core.fork_head, res.tip) else "",
                             base_sha=core.fork_head, base=cfg.fork.ref, conflict_sha=res.conflict or "",
                             earlier_prs=json.dumps(sync_store.earlier_prs(row)),
                             agent_waiting_since=(prior or {}).get("agent_waiting_since") or 0.0,
                             agent_cut_at=(prior or {}).get("agent_cut_at") or 0.0,
                             **(blocked_mod.row_fields(blocked_mod.pick_failed(res.error), step="apply", at=self.now(),
                                                       tip=res.tip or "") if res.error
                                else {} if _merge_refused_at(prior, res.tip) else blocked_mod.CLEAR))
        sync_store.end_push(ctx.store, full_name, branch)
        commits = [{"sha": s, "subject": core.commits[s].subject, "pr": core.commits[s].pr,
                    "conflicts": list(next((i.conflicts for i in unit.items if i.sha == s), ()))}
                   for s in unit.shas]
        up_url = f"https://github.com/{upstream}" if re.match(r"^[\w.\-]+/[\w.\-]+$", upstream) else upstream
        title = render("sync_pr_title.txt.j2", unit=unit, commits=commits).strip()
        stopped = None
        if res.conflict:
            up_c = core.commits.get(res.conflict)
            stopped = {"sha": res.conflict, "subject": up_c.subject if up_c else "", "pr": up_c.pr if up_c else None,
                       "commit": getattr(res, "conflict_commit", None) or "",
                       "error": blocked_mod.pick_failed(res.error).reason if res.error else "",
                       "files": shown_hunks([{"path": f.path, "kind": f.kind, "hunks": list(f.hunks), "old_path": f.old_path}
                                             for f in getattr(res, "conflicts", ()) or ()]
                                            or [{"path": f, "kind": "content", "hunks": [], "old_path": ""}
                                                for f in res.conflict_files]),
                       "renames_skipped": getattr(res, "renames_skipped", ""),
                       "remaining": len(res.remaining)}
        by_rules = [{"sha": o.upstream_sha, "folded": o.folded or "", "commit": o.commit or "",
                     "decided": [{"path": p, "action": d.action, "reason": d.reason, "rule": d.rule} for p, d in o.decided],
                     "declined": [p for p, _ in o.declined]} for o in rules_done if o.decided]
        published = sync_store.branch_row(ctx.store, full_name, branch) or {}
        if res.tip:
            # rules that ran in an earlier sync: what they decided is on the branch as long as
            # their commit (or the pick it was folded into) is, and the PR keeps saying so
            fresh = {r["sha"] for r in by_rules}
            by_rules = [r for r in json.loads(published.get("by_rules_json") or "[]") if r.get("sha") not in fresh
                        and await self._on_remote(git_dir, r.get("folded") or r.get("commit") or "", res.tip)] + by_rules
        # why the unit is a bundle or a chain was said when it was planned; a later plan that only
        # finds its branch in flight (its reason names the unit's own branch: "continues
        # forksync/<itself> …", bot.plan.partition, bot.sync.owed) or none at all has no better word
        reason = unit.reason
        if not reason or reason.split()[1:2] in ([f"forksync/{unit.id}"], [f"forksync/{unit.id}:"]):
            # without its "lands after <bundle> …" clauses (bot.plan.partition): what it lands after
            # now is the body's own "Lands after", read from its row, and that bundle may have closed
            kept = "; ".join(p for p in (published.get("reason") or "").split("; ") if not p.startswith(LANDS_AFTER))
            reason = kept or reason
        # picks on the branch that change nothing (a rule or a person kept the fork's side of every
        # conflicted file, or the fork already had the change): they land as empty commits, and
        # the ledger records their upstream commits NO_OP (bot.core.ledger), which the body says
        empty = await self._empty_picks(git_dir, core.fork_head, res.tip, unit.shas) if res.tip else {}
        told = _PrText(unit=replace(unit, reason=reason), branch=branch, title=title, tip=res.tip or "",
                       conflict=res.conflict or "",
                       body_kw={"commits": commits, "upstream": upstream, "upstream_url": up_url, "by_rules": by_rules,
                                "empty": empty,
                                "deferred": core.deferred, "wont_port": core.wont_port,
                                "merge_method": cfg.github.merge_method, "stopped": stopped, "branch": branch,
                                "agents": bool(cfg.agents and cfg.agents.conflict_resolution)})
        body = self._pr_body(ctx, full_name, core, told)
        lab = cfg.github.labels
        labels = [lab.bundle if unit.kind == "bundle" else lab.chain] + [lab.area_prefix + a for a in unit.areas]
        try:
            pr, what = await sync_prs.open_or_update_pr(ctx.gh, full_name, branch=branch, base=cfg.fork.ref,
                                                        title=title, body=body, labels=labels,
                                                        draft=res.conflict is not None or bool(by_rules),
                                                        bot_login=self.bot_login)
        except gidgethub.HTTPException as e:
            # GitHub refused this PR (403 a missing permission, 422 a validation): blocked, the
            # others go on; credentials, rate limits and 5xx are the delivery's to retry
            if not refused_request(e):
                raise
            return await self._block(ctx, full_name, cfg, unit, branch, sync_store.branch_row(ctx.store, full_name, branch),
                                     core, res, blocked_mod.classify(blocked_mod.github_words(e)), step="pr")
        # only a draft forksync opened is forksync's to take out of draft: a PR a person opened
        # on the unit's branch is theirs to mark ready, whatever the row said of forksync's
        # earlier PR (the gate holds it while a person keeps it a draft)
        # (a PR its row last saw ready that is a draft now: a person converted it, forksync never does)
        row = sync_store.branch_row(ctx.store, full_name, branch) or {}
        drafted = ({"draft_by_forksync": 0} if sync_prs.opened_by_person(pr, self.bot_login)
                   else {"draft_by_forksync": int(bool(pr.get("draft")))} if what == "opened"
                   else {"draft_by_forksync": 0} if sync_store.drafted_since_seen_ready(row, pr.get("draft")) else {})
        sync_store.save_branch(ctx.store, **{**row, "pr": pr["number"],
                                             "published_at": self.now(), "reason": reason,
                                             "by_rules_json": json.dumps(by_rules), **drafted,
                                             "pr_draft": int(bool(pr.get("draft")))})
        if full_name in self._pr_texts:     # within a sync: what a dependency's close renders again
            self._pr_texts[full_name][unit.id] = told
        if res.kept:
            await comment_once(ctx.gh, full_name, pr["number"], f"kept:{res.tip}",
                               render("person_commits.md.j2", unit_id=unit.id, foreign=list(res.kept)))
        if dropped:
            await comment_once(ctx.gh, full_name, pr["number"], f"rebuilt:{res.tip}",
                               render("unit_rebuilt.md.j2", branch=branch, fork_ref=cfg.fork.ref, base=core.fork_head,
                                      dropped=dropped, tip=res.tip or ""))
        agent = ""
        if res.conflict and not res.error:      # the conflict agent, only when configured ("" when agents are off)
            agent = await self._ask_agent(ctx, full_name, git_dir, cfg, unit, branch, res.conflict, url, secrets,
                                          pr=pr["number"])
        note = render_part(TEXTS, "published", unit=unit.id, pr=pr["number"], what=what, conflict=(res.conflict or "")[:12],
                           reason=blocked_mod.pick_failed(res.error).reason if res.error else None, agent=agent)
        if res.conflict and agent_round < MAX_AGENT_ROUNDS and await self._branch_moved(git_dir, branch, res.tip):
            # the agent's pick took the conflict's place (pushed, draft until L1): apply the rest
            more = await self.publish(ctx, full_name, git_dir, cfg, core, unit, upstream, urgent_reason=urgent_reason,
                                      agent_round=agent_round + 1, earlier_rules=tuple(rules_done))
            note += render_part(TEXTS, "then", note=more.removeprefix(unit.id + ": "))
        return note

    def _open_for_shrink(self, ctx, full_name: str, core: CoreResult) -> list[shrink_mod.OpenUnit]:
        """The fork's open units with a PR, as :func:`bot.sync.shrink.shrinks` reads them: what
        each branch carries as fetched when the sync started (``core.in_flight``), and whether its
        tip is the one forksync pushed (anything else may hold a person's commits)."""
        fly = {b.name: b for b in core.in_flight}
        out = []
        for r in sync_store.open_branches(ctx.store, full_name):
            b = fly.get(r["branch"])
            if b is None or r.get("kind") not in ("bundle", "chain"):
                continue
            pushed = bool(b.tip) and b.tip == r.get("pushed_tip")
            by_hand = pushed and _resolved_by_people(self.repo_dir(full_name), core.fork_head, b.tip)
            out.append(shrink_mod.OpenUnit(unit_id=r["unit_id"], branch=r["branch"], kind=r["kind"],
                                           pr=int(r.get("pr") or 0), carried=tuple(b.upstream_shas),
                                           ours=pushed, resolved_by_hand=by_hand))
        return out

    async def _rebuild_shrunk(self, ctx, full_name: str, git_dir: Path, cfg: ForksyncConfig, core: CoreResult,
                              unit: Unit, upstream: str, s: shrink_mod.Shrink) -> str:
        """Publish ``unit`` rebuilt on the fork tip without ``s``'s decided commits (the status
        issue's retry rebuild: only a branch holding nothing but forksync's commits, pushed with a
        lease on the tip that was checked), then say so on its PR once per new tip."""
        gone = {d.sha for d in s.decided}
        own = {i.sha for i in unit.items}
        items = _in_flight_items(sha for sha in s.keep if sha not in own) \
            + tuple(i for i in unit.items if i.sha not in gone)
        if not items:           # the plan left nothing of it: the next sync closes it
            return render_part(TEXTS, "decided_all", unit=unit.id)
        before = (sync_store.branch_row(ctx.store, full_name, s.unit.branch) or {}).get("pushed_tip", "")
        note = await self.publish(ctx, full_name, git_dir, cfg, core, replace(unit, items=items), upstream, rebuild=True)
        row = sync_store.branch_row(ctx.store, full_name, s.unit.branch) or {}
        tip = row.get("pushed_tip") or ""
        if row.get("state") == "open" and row.get("pr") and tip and tip != before:
            await comment_once(ctx.gh, full_name, int(row["pr"]), f"shrunk:{tip}",
                               render("unit_shrunk.md.j2", unit_id=unit.id, branch=s.unit.branch, rebuilt=True,
                                      decided=[asdict(d) for d in s.decided], keep=[i.sha for i in items],
                                      base=core.fork_head, tip=tip))
            note += render_part(TEXTS, "rebuilt_without", n=len(gone))
        return note

    async def _tell_shrunk(self, ctx, full_name: str, s: shrink_mod.Shrink) -> str:
        """Say once on ``s``'s PR which of its commits were decided and that its branch, which
        holds a person's commits, still carries them (keyed by the decided commits: a later sync
        says nothing new, another decision says it again)."""
        key = hashlib.sha1(" ".join(sorted(d.sha for d in s.decided)).encode()).hexdigest()[:12]
        what = await comment_once(ctx.gh, full_name, s.unit.pr, f"decided-kept:{key}",
                                  render("unit_shrunk.md.j2", unit_id=s.unit.unit_id, branch=s.unit.branch, rebuilt=False,
                                         resolved_by_hand=s.unit.resolved_by_hand,
                                         decided=[asdict(d) for d in s.decided], keep=list(s.keep), base="", tip=""))
        return render_part(TEXTS, "decided_kept", unit=s.unit.unit_id, n=len(s.decided), said=what == "created")

    async def _ask_agent(self, ctx, full_name: str, git_dir: Path, cfg: ForksyncConfig, unit: Unit, branch: str,
                         upstream_sha: str, url: str, secrets: list[str], *, pr: int = 0) -> str:
        """The conflict agent on the pick of ``upstream_sha`` that stopped ``unit`` (its note, ``""``
        when agents are off), within what is left of this sync's agent time (:attr:`agent_deadline_s`):
        a call still running when it runs out is cut there (its request, the stall waits and the
        retries are bounded by it, :class:`bot.agents.client.AgentClient` ``within_s``), and
        nothing of it lands. When the time is spent — before the call, or by cutting it — the
        unit's row keeps since when it waits for the agent (``agent_waiting_since``, epoch s; the
        next sync publishes the waiting units first, oldest first; ``agent_cut_at``, epoch s, when
        its call was cut), its PR ``pr`` (0: none yet), the status issue and the dashboard say the
        agent has not resolved it yet — not yet tried, or its call cut — and the conflict stays a
        person's meanwhile. Outside a sync (``/forksync pick``) there is no deadline."""
        until = self._agent_until.get(full_name)
        row = sync_store.branch_row(ctx.store, full_name, branch)
        since = (row or {}).get("agent_waiting_since") or 0.0
        cut = False
        if not agent_would_run(cfg):
            if since:
                sync_store.save_branch(ctx.store, repo=full_name, branch=branch, agent_waiting_since=0.0,
                                       agent_cut_at=0.0)
            return ""
        if until is None or self.now() < until:
            asked = self.now()
            within = None if until is None else until - asked
            async with self.agent_client(cfg.agents, ctx.store, within_s=within) as client:
                note = await on_chain_conflict(ctx, full_name, git_dir=git_dir, cfg=cfg, branch=branch,
                                               upstream_sha=upstream_sha, remote_url=url, secrets=secrets,
                                               client=client, now=self.now)
            if not client.out_of_time:
                if since or (row or {}).get("agent_cut_at"):
                    sync_store.save_branch(ctx.store, repo=full_name, branch=branch, agent_waiting_since=0.0,
                                           agent_cut_at=0.0)
                return note
            # cut: it waits for the agent since its call began, so that the next sync asks the
            # chains in the order this one reached them; when it was cut tells a person it was tried
            cut, since = True, since or asked
            if row:
                sync_store.save_branch(ctx.store, repo=full_name, branch=branch, agent_waiting_since=since,
                                       agent_cut_at=self.now())
        if row and not since:
            sync_store.save_branch(ctx.store, repo=full_name, branch=branch, agent_waiting_since=self.now())
        if pr:
            await comment_once(ctx.gh, full_name, pr, f"agent-not-reached:{upstream_sha}",
                               render("agent_not_reached.md.j2", upstream_sha=upstream_sha, branch=branch,
                                      deadline_s=self.agent_deadline_s, cut=cut))
        if cut:
            return render_part(TEXTS, "agent_cut", deadline=f"{self.agent_deadline_s:g}")
        return render_part(TEXTS, "agent_not_tried", deadline=f"{self.agent_deadline_s:g}")

    async def _branch_moved(self, git_dir: Path, branch: str, tip: str | None) -> bool:
        """Did ``refs/heads/<branch>`` move away from ``tip`` (the agent published its pick)?"""
        out = await self._git(git_dir, "rev-parse", "-q", "--verify", f"refs/heads/{branch}", check=False)
        return bool(tip) and out.strip() not in ("", tip)

    def _pr_body(self, ctx, full_name: str, core: CoreResult, told: "_PrText") -> str:
        """The body of the PR of ``told``'s unit (``templates/github/sync_pr_body.md.j2``): what
        :meth:`publish` made of its branch, and what the unit lands after as the rows say now
        (:meth:`_dependencies`)."""
        return render("sync_pr_body.md.j2", unit=told.unit, deps=self._dependencies(ctx, full_name, core, told.unit),
                      **told.body_kw)

    async def _retell_lands_after(self, ctx, full_name: str, cfg: ForksyncConfig, core: CoreResult,
                                  texts: Mapping[str, "_PrText"], closed: Mapping[str, Sequence[str]]) -> list[str]:
        """Render again the body of each open PR this sync published (``texts``: unit id →
        :class:`_PrText`) whose unit lands after a unit the sync then closed itself (``closed``:
        unit id → its upstream shas, every commit decided: :func:`bot.sync.landing.close_decided`),
        once its row's ``depends_json`` was written (:func:`bot.sync.store.without_closed`). No
        later sync follows from forksync's own close, and the body published while that unit was
        live says "Lands after" a PR that will never land: the unit's body now lands after what its
        row names (the closed unit dropped, or named as closed unmerged where a person's work keeps
        it). The PR's title and what a person wrote stay (:func:`bot.sync.prs.refresh_pr`); a body
        already right is not written. GitHub refusing the write (:func:`bot.github.client.refused_request`)
        blocks the unit at step ``pr``, as a refused PR of :meth:`publish` is (its row, the status
        issue, ``/healthz``; the next sync tries again), and the others go on; GitHub failing for a
        while (a 5xx, a 401, a rate limit) is raised, as :meth:`publish` raises it, so the delivery
        is retried. Returns the sync's notes. Raises :class:`gidgethub.HTTPException` (not a
        refusal)."""
        notes_: list[str] = []
        for uid, told in texts.items():
            if not set(told.unit.depends_on) & set(closed):
                continue
            row = sync_store.branch_row(ctx.store, full_name, told.branch)
            if not row or row.get("state") != "open" or not int(row.get("pr") or 0):
                continue            # landed or closed meanwhile: no body to say it in
            unit = replace(told.unit, depends_on=tuple(json.loads(row.get("depends_json") or "[]")))
            body = self._pr_body(ctx, full_name, core, replace(told, unit=unit))
            try:
                pr = await sync_prs.find_open_pr(ctx.gh, full_name, told.branch, cfg.fork.ref)
                if pr is None or int(pr["number"]) != int(row["pr"]):
                    continue        # closed on GitHub meanwhile: its own event lands it
                _, what = await sync_prs.refresh_pr(ctx.gh, full_name, pr, title=told.title, body=body,
                                                    bot_login=self.bot_login)
            except gidgethub.HTTPException as e:
                if not refused_request(e):
                    # GitHub failing for a while (5xx, credentials, a rate limit) refused nothing:
                    # the delivery is retried, as publish's is, and its sync writes the body then
                    raise
                refusal = blocked_mod.classify(blocked_mod.github_words(e))
                try:
                    notes_.append(await self._block(ctx, full_name, cfg, unit, told.branch, row, core,
                                                    _Tip(told.tip, told.conflict or None), refusal, step="pr"))
                except gidgethub.HTTPException:
                    # the refusal is stored (the row is written before its PR is told): the status
                    # issue and /healthz say it, and the next sync tells the PR
                    notes_.append(render_part(TEXTS, "blocked", unit=uid, what=blocked_mod.what({"blocked_step": "pr"}),
                                              reason=refusal.reason))
                continue
            notes_.append(render_part(TEXTS, "lands_after_retold", unit=uid, pr=int(row["pr"]), what=what))
        return notes_

    def _dependencies(self, ctx, full_name: str, core: CoreResult, unit: Unit) -> list[dict]:
        """What ``unit`` lands after, as the PR body names it: ``[{"id", "pr" (0 when it has no pull
        request), "blocked" (GitHub's refusal, "" when none or when its pick failed), "first" (its first upstream sha, "" when
        unknown), "subject", "kind" (``bundle`` | ``chain``), "closed" (its upstream shas when it was closed without
        merging and this unit keeps waiting on it, :func:`_kept_after`; ``[]`` otherwise), "held" (``{"ref",
        "from", "shas"}`` when a rewind holds it: upstream's branch, the tip it moved back from and the dependency's
        commits it no longer has, from the status's record, :attr:`bot.sync.status.SyncStatus.rewound`; ``{}``
        otherwise)}]``. Dependencies are published before their dependents, so a missing PR is a real one: blocked
        by GitHub, or a first pick that does not apply. A held dependency is neither merged, closed nor rebuilt
        until upstream returns or builds on the rewound history (:mod:`bot.sync.rewind`): "merged once it has
        landed" alone would promise a landing that waits on upstream."""
        units = {u.id: u for u in core.plan.units}
        out = []
        # written before this sync publishes (sync_store.save_rewound), so the held units are this sync's
        st = sync_store.load_status(ctx.store, full_name) if unit.depends_on else None
        rewound = st.rewound if st else None
        held = {u["id"]: {"ref": rewound.get("ref", ""), "from": rewound.get("from", ""), "shas": list(u.get("shas", ()))}
                for u in (rewound or {}).get("units", ())}
        for d in unit.depends_on:
            row = sync_store.branch_row(ctx.store, full_name, f"forksync/{d}") or {}
            first = units[d].shas[0] if d in units and units[d].shas else ""
            c = core.commits.get(first)
            # a dependency whose first pick failed (step apply) does not apply: said as such below
            refused = row.get("blocked_step") != "apply"
            closed = json.loads(row.get("shas_json") or "[]") if row.get("state") in sync_store.CLOSED_UNMERGED else []
            out.append({"id": d, "pr": int(row.get("pr") or 0), "blocked": refused and row.get("blocked_reason") or "",
                        "first": first, "subject": c.subject if c else "",
                        "kind": units[d].kind if d in units else d.partition("-")[0], "closed": closed,
                        "held": held.get(d, {})})
        return out

    def _person_paths_hit(self, cfg: ForksyncConfig, core: CoreResult, unit: Unit) -> str:
        """The first path of ``unit``'s commits that ``github.person_paths`` keeps for a person ("" when none)."""
        globs = cfg.github.person_paths
        if not globs:
            return ""
        for s in unit.shas:
            c = core.commits.get(s)
            for p in sorted(c.paths) if c else ():
                if any(fnmatch.fnmatchcase(p, g) for g in globs):
                    return p
        return ""

    async def _block(self, ctx, full_name: str, cfg: ForksyncConfig, unit: Unit, branch: str, row: dict | None,
                     core: CoreResult, res, refusal: blocked_mod.Refusal, *, step: str) -> str:
        """Record that GitHub refused ``unit``'s ``step`` (``push`` | ``pr`` | ``merge``): the unit's
        row gets GitHub's reason and the time (a unit GitHub never had gets a row in state
        ``blocked``), and its PR, when it has one, a comment naming the setting to change.
        Returns the sync line; the other units go on."""
        fields = blocked_mod.row_fields(refusal, step=step, at=self.now(), tip=res.tip or "")
        if row and row.get("state") == "open":
            # what it lands after as this sync planned it (a unit closed unmerged since is kept
            # only under a person's work: _kept_after), as a published unit's row says — the gate's
            # `lands-after` and the status issue read it; a refused merge's unit is made from the
            # row, and its row keeps what it says
            planned = {} if step == "merge" else {"depends_json": json.dumps(list(unit.depends_on))}
            sync_store.save_branch(ctx.store, **{**row, **fields, **planned})
        else:
            # a unit that ended on this branch left nothing there (its branch was deleted): only
            # its PR, as an earlier one
            sync_store.save_branch(ctx.store, repo=full_name, branch=branch, unit_id=unit.id, kind=unit.kind,
                                   pushed_tip="" if sync_store.ended(row) else (row or {}).get("pushed_tip", ""),
                                   verified_tip="", pr=0, state="blocked", shas_json=json.dumps(list(unit.shas)),
                                   depends_json=json.dumps(list(unit.depends_on)),
                                   base_sha=core.fork_head, base=cfg.fork.ref, conflict_sha=res.conflict or "",
                                   earlier_prs=json.dumps(sync_store.earlier_prs(row)), **fields)
        pr = (row or {}).get("pr") or 0
        if pr and (row or {}).get("state") == "open":
            # once per refusal of this unit's commits (a re-apply makes a new tip sha, not a new refusal)
            key = f"blocked:{step}:{unit.shas[-1][:12] if unit.shas else ''}:{hashlib.sha1(refusal.reason.encode()).hexdigest()[:12]}"
            await comment_once(ctx.gh, full_name, pr, key,
                               render("unit_blocked.md.j2", unit_id=unit.id, step=step, tip=res.tip or "",
                                      b=blocked_mod.as_dict(sync_store.branch_row(ctx.store, full_name, branch), full_name),
                                      config_path=cfg.github.config_path))
        return render_part(TEXTS, "blocked", unit=unit.id, what=blocked_mod.what({**fields, "conflict_sha": res.conflict or ""}),
                           reason=refusal.reason)

    def _already_in_fork(self, git_dir: Path, core: CoreResult) -> list[str]:
        """The plan's NO_OP candidates whose pick onto the fork tip itself changes nothing (a
        candidate may be empty only because of an earlier bundle pick: that one is not decided)."""
        out = []
        for item in core.plan.no_ops:
            try:
                if apply_mod.already_in(git_dir, core.fork_head, item.sha):
                    out.append(item.sha)
            except ValueError:
                continue
        return out

    async def merge_refused(self, ctx, full_name: str, branch: str, head: str, error: str) -> str:
        """GitHub refused to merge the sync PR of ``branch`` at ``head`` (``error``: its answer):
        the unit is blocked like a refused push (row, PR comment, status issue, metrics) until a
        merge goes through; the reconcile tick tries again. "" for a branch forksync did not push."""
        row = sync_store.branch_row(ctx.store, full_name, branch)
        if row is None or row.get("state") != "open":
            return ""
        refusal = blocked_mod.classify(error)
        shas = json.loads(row.get("shas_json") or "[]")
        unit = Unit(id=row["unit_id"], kind=row["kind"], items=tuple(PlanItem(s, row["kind"]) for s in shas))
        res = _Tip(head)
        cfg = await self.fork_config(ctx, full_name)
        line = await self._block(ctx, full_name, cfg, unit, branch, row, CoreResult("", row.get("base_sha") or "", Plan(units=()), {}),
                                 res, refusal, step="merge")
        await self.refresh_status_issue(ctx, full_name, cfg=cfg)
        return line

    async def _save_blocked(self, ctx, full_name: str) -> None:
        st = sync_store.load_status(ctx.store, full_name) or sync_status.SyncStatus(repo=full_name)
        blocked = [blocked_mod.as_dict(r, full_name) for r in sync_store.blocked_branches(ctx.store, full_name)]
        units = await self._open_units(ctx, full_name, st)
        opened = {u["id"] for u in units}
        # the units the last sync left waiting for a slot stay listed until a sync opens them
        units += [u for u in st.units if u.get("waiting") and u["id"] not in opened]
        sync_store.save_status(ctx.store, _replace(st, blocked=tuple(blocked), units=tuple(units)))

    async def _apply(self, git_dir: Path, cfg: ForksyncConfig, unit: Unit, base: str, commits: dict,
                     urgent_reason: str | None = None):
        """:func:`bot.git.apply.apply_unit` off the event loop, with the fork's rename limit. Raises
        :class:`_ApplyFailed` where apply cannot make the unit (its :class:`bot.git.apply.ApplyError`,
        or an error reading or writing the repository)."""
        try:
            return await asyncio.to_thread(apply_mod.apply_unit, str(git_dir), unit, base=base, commits=commits,
                                           urgent_reason=urgent_reason, rename_limit=cfg.rename_limit)
        except (apply_mod.ApplyError, KeyError, ValueError, OSError, pygit2.GitError) as e:
            raise _ApplyFailed(f"applying {unit.id} failed: {str(e).strip() or type(e).__name__}",
                               unit.shas[0] if unit.shas else "") from e

    async def _branch_picks(self, git_dir: Path, base: str, tip: str, commits: Mapping[str, CommitInfo]) -> list[str]:
        """The upstream commits ``base..tip`` picks (its commits' ``Upstream-Commit`` trailers, full
        shas as ``commits`` knows them), oldest first; a trailer ``commits`` does not know is left out."""
        out = await self._git(git_dir, "log", "--reverse", "--no-merges",
                              "--format=%(trailers:key=Upstream-Commit,valueonly)", f"{base}..{tip}")
        picks = []
        for u in out.split():
            full = u.lower() if u.lower() in commits else next((s for s in commits if s.startswith(u.lower())), None)
            if full and full not in picks:
                picks.append(full)
        return picks

    async def _empty_picks(self, git_dir: Path, base: str, tip: str, shas: Sequence[str]) -> dict[str, str]:
        """The picks of ``base..tip`` that change nothing: ``{upstream sha: fork sha}`` for each
        non-merge commit whose ``Upstream-Commit`` trailer names one of ``shas`` (full upstream shas,
        a trailer may abbreviate) and whose tree is its parent's — the ledger's empty pick
        (:mod:`bot.core.ledger`: one parent, no files), which lands NO_OP. A conflict commit or a
        rule commit carries no ``Upstream-Commit`` and is never counted."""
        # --ignore-submodules=none: a gitlink move is a change, as the ledger reads it (commit_infos),
        # whatever a person's diff.ignoreSubmodules says
        out = await self._git(git_dir, "log", "--no-merges", "--no-renames", "--ignore-submodules=none", "--name-only",
                              "--format=%x00%H%x01%(trailers:key=Upstream-Commit,valueonly,separator=%x01)",
                              f"{base}..{tip}")
        empty: dict[str, str] = {}
        for rec in out.split("\0")[1:]:
            head, _, files = rec.partition("\n")
            fork_sha, *named = head.split("\x01")
            if files.strip():
                continue
            for u in filter(None, (n.strip().lower() for n in named)):
                full = next((s for s in shas if s.startswith(u)), None)
                if full:
                    empty.setdefault(full, fork_sha)
        return empty

    async def _remote_tip(self, git_dir: Path, url: str, ref: str, secrets: list[str]) -> str | None:
        """The sha GitHub's ``ref`` is at now (ls-remote): ``""`` when it has no such ref, None when
        GitHub could not be asked (nothing is known)."""
        try:
            out = (await self._git(git_dir, "ls-remote", url, ref, secrets=secrets)).split()
        except SyncError:
            return None
        return out[0] if out else ""

    async def _has_commit(self, git_dir: Path, sha: str) -> bool:
        """Does the working repository hold commit ``sha`` (fetched, or written here)?"""
        out = await self._git(git_dir, "rev-parse", "-q", "--verify", f"{sha}^{{commit}}", check=False)
        return bool(out.strip())

    async def _on_remote(self, git_dir: Path, sha: str, remote_tip: str | None) -> bool:
        """Is ``sha`` already on GitHub's branch (its tip or an ancestor of it)?"""
        if not remote_tip:
            return False
        if remote_tip == sha:
            return True
        proc = await asyncio.create_subprocess_exec("git", f"--git-dir={git_dir}", "merge-base", "--is-ancestor", sha,
                                                    remote_tip, env=gitio.git_env(), stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.DEVNULL)
        return await asyncio.wait_for(proc.wait(), GIT_TIMEOUT_S) == 0

    async def _rebuild_fact(self, git_dir: Path, fact: str, fork_head: str, tip: str, dropped: Sequence[str]) -> bool:
        """One costly fact :func:`bot.sync.rebuild.decide` asked for, of the branch at ``tip``:
        ``resolved_by_hand`` — a pick above its fork base (the last fork commit a force push
        dropped, else ``fork_head``) folds a person's conflict resolution: forksync's commit, but
        what it resolved is theirs, and a rebuild from scratch would pick it again, back at its
        conflict, leaving their resolution only under ``refs/forksync/resolutions/``;
        ``holds_fork_tip`` — ``fork_head`` is ``tip`` or an ancestor of it; ``merge_conflicts`` —
        merging ``fork_head`` into ``tip`` conflicts."""
        if fact == rebuild_mod.RESOLVED_BY_HAND:
            return await asyncio.to_thread(_resolved_by_people, git_dir, dropped[-1] if dropped else fork_head, tip)
        if fact == rebuild_mod.HOLDS_FORK_TIP:
            return await self._on_remote(git_dir, fork_head, tip)
        if fact == rebuild_mod.MERGE_CONFLICTS:
            return bool(await asyncio.to_thread(resolution.merge_conflicts, str(git_dir), tip, fork_head))
        raise ValueError(f"bot.sync.rebuild asked for an unknown fact {fact!r}")

    def _apply_rules(self, git_dir: Path, cfg: ForksyncConfig, unit: Unit, res, core: CoreResult):
        """The deterministic rules on ``res``'s fresh conflict commit (blocking; run in a thread)."""
        if not cfg.resolve.rules or not res.conflict:
            return None
        repo = open_repository(str(git_dir))
        up = core.commits.get(res.conflict) or gitio.commit_info(repo, res.conflict)
        up_tip = core.upstream_head or res.conflict
        memory = None
        if rules_mod.MEMORY_RULES & set(cfg.resolve.rules):
            memory = self._memory.get(str(git_dir), core.fork_head, up_tip, cfg)
        try:
            return rules_mod.apply_rules(str(git_dir), cfg, unit_id=unit.id, base=core.fork_head, tip=res.tip, upstream=up,
                                         upstream_tip=up_tip, memory=memory, committer=apply_mod.COMMITTER,
                                         when=int(self.now()))
        except (ValueError, pygit2.GitError, OSError) as e:
            # e.g. upstream's objects are not all here: the conflict stays for a person, and says why
            log.warning("deterministic rules skipped on %s at %s: %s", unit.id, (res.conflict or "")[:12], e)
            return None

    async def _open_units(self, ctx, full_name: str, st: sync_status.SyncStatus) -> list[dict]:
        """The fork's units in flight as the status issue lists them; ``st``: the fork's status as
        the last sync left it — its record of a rewind that holds units
        (:attr:`bot.sync.status.SyncStatus.rewound`), and when that sync began and whether on
        hold, which tell the units it did not refresh (``not_refreshed``,
        :func:`bot.sync.status.not_refreshed`)."""
        rewound = st.rewound
        held = {u["id"]: u["shas"] for u in (rewound or {}).get("units", ())}
        live = sync_store.open_branches(ctx.store, full_name) + sync_store.blocked_only_branches(ctx.store, full_name)
        rows = sorted(live, key=lambda r: r["branch"])

        def state(r: dict) -> str:
            if r.get("blocked_requires") == "person":
                return render_part(TEXTS, "state_person")
            if r.get("blocked_requires") == "rebase":
                return render_part(TEXTS, "state_rebase")
            if r.get("blocked_reason"):
                return render_part(TEXTS, "state_blocked", what=blocked_mod.what(r))
            if r["unit_id"] in held:
                return render_part("github/upstream_rewound.txt.j2", "unit", r=rewound, shas=held[r["unit_id"]])
            if r.get("conflict_sha"):
                return render_part(TEXTS, "state_conflict", sha=r["conflict_sha"][:12])
            if r.get("pr_draft"):
                # forksync's own draft leaves draft when the gate finds it whole and L1 green; a
                # person's stays one until they mark it ready (bot.validation.gate_inputs.person_draft)
                return render_part(TEXTS, "state_draft", person=r.get("draft_by_forksync") == 0)
            return "open"

        def agent(r: dict) -> str:
            # a chain at a conflict that waits for the conflict agent (the sync's agent time ran
            # out): "cut" when its call was stopped before it had an answer, "waiting" when its
            # turn came after the deadline; the status issue's template says which
            if r.get("blocked_requires") in ("person", "rebase") or r.get("blocked_reason") \
                    or not (r.get("conflict_sha") and r.get("agent_waiting_since")):
                return ""
            return "cut" if r.get("agent_cut_at") else "waiting"
        # what each unit lands after and is not landed yet (the gate's `lands-after`), and how
        # many wait for it: a maintainer asking why a unit has not landed reads it here
        waits = sync_store.waits(ctx.store, full_name, live)
        # a unit waited for that a rewind holds lands only once upstream returns or builds on the
        # rewound history: its waiting units' lines say so, as their PR bodies do (_dependencies)
        for w in waits.values():
            for d in w["waits_for"]:
                if d["state"] == "open" and d["id"] in held:
                    d["held"] = {"ref": rewound.get("ref", ""), "from": rewound.get("from", ""), "shas": list(held[d["id"]])}
        return [{"id": r["unit_id"], "kind": r["kind"], "pr": r["pr"],
                 "url": f"https://github.com/{full_name}/pull/{r['pr']}" if r["pr"] else "", "state": state(r),
                 "agent": agent(r), "not_refreshed": sync_status.not_refreshed(r, st),
                 **waits.get(r["unit_id"], {"waits_for": [], "waited_by": 0})}
                for r in rows]

    async def refresh_status_issue(self, ctx, full_name: str, *, cfg: ForksyncConfig | None = None,
                                   create: bool = True) -> str:
        """Render ``full_name``'s status issue from the store; ``create`` off: only update the one
        that is open (none there → ``"status issue absent"``, nothing opened)."""
        if cfg is None:
            try:
                cfg = await self.fork_config(ctx, full_name)
            except (gidgethub.HTTPException, OSError):
                # GitHub failing the config read is often what the issue must report (a dead
                # letter, a stale fetch): render with the last valid configuration instead
                cfg = last_valid_config(ctx, full_name)
        # rendered and written under the claim on the fork's status issue: two renders at once
        # (the poller beside a delivery, two workers) would both find none and both open one, and
        # the later render is the one left on GitHub
        async with self.claims.hold(full_name, STATUS_CLAIM):
            await self._save_blocked(ctx, full_name)         # the units' rows are the truth (a merge may have cleared one)
            st = sync_store.load_status(ctx.store, full_name) or sync_status.SyncStatus(repo=full_name)
            dead: list[dict] = []
            if self.dead_letters:       # the fork's own deliveries and its upstream's pushes
                for repo in dict.fromkeys([full_name] + ([st.upstream] if re.match(r"^[\w.\-]+/[\w.\-]+$", st.upstream) else [])):
                    dead += self.dead_letters(ctx.store, repo)
                dead.sort(key=lambda d: -d["at"])
            body = render_status(st, stale_after_s=cfg.github.stale_after_s, alarm_after_s=cfg.github.alarm_after_s,
                                 now=self.now(), dead_letters=dead, config_path=cfg.github.config_path,
                                 login_unknown="" if self.bot_login else self.login_unknown)
            try:
                number, what, dups = await upsert_status_issue(ctx.gh, full_name, cfg.github.status_issue_title, body,
                                                               self.bot_login, create=create)
            except gidgethub.HTTPException as e:
                if int(e.status_code) != 410:
                    raise
                # GitHub turns Issues off on a new fork: the sync goes on, and /healthz and the
                # dashboard's status say where the status issue went (a failing job until it is back)
                sync_store.record_job(ctx.store, full_name, STATUS_ISSUE_JOB, render_part(TEXTS, "issues_off", repo=full_name), self.now())
                return render_part(TEXTS, "status_off")
        # duplicates (an older release's) are closed once the claim is let go: each close's note is
        # a comment, claimed on that issue's comments, and claims on objects are leaves
        what += await close_duplicates(ctx.gh, full_name, dups, number)
        if any(j["job"] == STATUS_ISSUE_JOB for j in st.failing_jobs):
            sync_store.record_job(ctx.store, full_name, STATUS_ISSUE_JOB, None, self.now())
        return render_part(TEXTS, "status_issue", number=number, what=what) if number else render_part(TEXTS, "status_absent")

    async def check_resolution(self, ctx, full_name: str, branch: str, head: str, base: str,
                               shas: list[str]) -> tuple[list[str], list[str]]:
        """Fetch a person's push to a chain branch and verify it (see ``sync_prs.verify_resolution``),
        holding the fork's lock: the forced fetch of the branch would reset it under a sync that
        applied the unit and has not pushed it yet."""
        d = await self.ensure_repo(full_name)
        url, secrets = await self.remote_url(full_name, ctx.installation_id)
        async with self._lock(full_name):
            await self._git(d, "fetch", "-q", "--no-tags", url, f"+refs/heads/{branch}:refs/heads/{branch}",
                            secrets=secrets)
            log = await self._git(d, "log", "--format=%B%x00", f"{base}..{head}")
            hits = await asyncio.to_thread(files_with_markers, str(d), base, head)
        problems = sync_prs.verify_resolution(log, [h.path for h in hits], shas)
        return problems, sorted(set(sync_prs.TRAILER.findall(log)) & set(shas))

    async def finish_conflict(self, ctx, full_name: str, branch: str, head: str, row: dict, pr: dict) -> str:
        """A person's push to a chain that carries a conflict commit: check it, fold the conflict
        commit and the resolution commits into one pick (:mod:`bot.git.resolution`), keep the
        originals under ``refs/forksync/resolutions/<unit>/<old head sha12>`` (pushed too), apply the
        chain's next picks, and push with a lease on the person's head — the one documented
        exception to "never overwrite a person's commits" (docs/github.md). A next pick that
        fails without a conflict (apply's error, or an apply that refuses the unit) still pushes
        the fold, and blocks the unit at step ``apply`` as :meth:`publish` does. Comments what it
        did or why the unit waits. Returns ``folded`` / ``waiting`` / ``raced``, ``stale`` (nothing done:
        the branch is no longer at ``head``, a later push's event follows), or ``""`` when
        forksync's last push holds no conflict commit (a plain resolution; a conflict commit only
        ``head`` holds is a person's and is never folded). A fold pushed by a run whose worker died
        before recording it (the branch found at the tip :func:`bot.sync.store.begin_push` wrote
        down) is recorded and said now, as that run would have, whichever push's event comes first."""
        d = await self.ensure_repo(full_name)
        url, secrets = await self.remote_url(full_name, ctx.installation_id)
        async with self._lock(full_name):
            await self._git(d, "fetch", "-q", "--no-tags", url, f"+refs/heads/{branch}:refs/heads/{branch}",
                            secrets=secrets)
            fold = await self._fold_pushed_unrecorded(ctx, full_name, d, branch)
            if fold is None:
                base = row["base_sha"]
                chk = await asyncio.to_thread(resolution.check, str(d), base, head)
                unit_id = row["unit_id"]
                had = None
                if row.get("pushed_tip"):
                    had = await asyncio.to_thread(_stop_or_none, str(d), base, row["pushed_tip"])
                # only the conflict commit forksync pushed is folded: one with forksync's committer
                # but another sha (a history rewrite that keeps committers, or a forged identity) is
                # a person's commit, and its own changes were never checked — also when forksync's
                # last push carries no conflict commit at all
                if chk.stop is None or had is None or chk.stop.conflict_commit != had.conflict_commit:
                    if had is None:
                        return ""
                    keep = resolution.keep_ref(unit_id, had.conflict_commit)
                    await self._git(d, "update-ref", keep, row["pushed_tip"])
                    await self._git(d, "push", "-q", url, f"{keep}:{keep}", secrets=secrets)
                    await comment_once(ctx.gh, full_name, pr["number"], f"resolution:{head}",
                                       render("resolution_check.md.j2", ok=False, head=head, kept=[], problems=[
                                           render_part(TEXTS, "conflict_commit_gone", commit=had.conflict_commit[:12],
                                                       upstream=had.upstream_sha[:12], keep=keep)]))
                    return "waiting"
                if not chk.ok:
                    await comment_once(ctx.gh, full_name, pr["number"], f"resolution:{head}",
                                       render("resolution_check.md.j2", ok=False, head=head, kept=[],
                                              problems=list(chk.problems)))
                    return "waiting"
                tip = (await self._git(d, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False)).strip()
                if tip != head:
                    # the branch moved on since this push (GitHub sends one synchronize per push, and
                    # they are handled later, in order): the push that moved it brings its own event,
                    # which checks what the branch holds now; a fold of this head would drop it
                    return "stale"
                cfg = await self.fork_config(ctx, full_name)
                shas = json.loads(row["shas_json"])
                # upstream may have rewritten its history since the chain stopped: a pick of a commit
                # it no longer has must not be made (it would land, and the rewritten one be picked again)
                gone = await self._not_upstream(ctx, d, cfg, [chk.stop.upstream_sha, *shas])
                if chk.stop.upstream_sha in gone:
                    moved = await asyncio.to_thread(rewound_past, d, f"refs/remotes/upstream/{self.upstream_of(cfg)[1]}",
                                                    chk.stop.upstream_sha, sync_store.load_status(ctx.store, full_name))
                    if moved is not None:
                        # upstream's branch only moved back past it: the person's push is kept as it
                        # is, and the sync that sees upstream return checks and folds it — a
                        # rewind may be undone, a rewrite is not —, remembered on the row, not
                        # only in the rewind's record: a sync that
                        # fails once upstream returned, or a rewind no sync recorded, still
                        # leaves it to be checked (rewind_mod.held_to_recheck)
                        sync_store.set_held_head(ctx.store, full_name, branch, head)
                        await comment_once(ctx.gh, full_name, pr["number"], f"resolution:{head}",
                                           render("resolution_held.md.j2", head=head, sha=chk.stop.upstream_sha,
                                                  ref=cfg.upstream.ref, since=moved.since, tip=moved.tip))
                        return "waiting"
                    await comment_once(ctx.gh, full_name, pr["number"], f"resolution:{head}",
                                       render("resolution_check.md.j2", ok=False, head=head, kept=[], problems=[
                                           render_part(TEXTS, "upstream_rewritten", sha=chk.stop.upstream_sha[:12],
                                                       ref=cfg.upstream.ref)]))
                    return "waiting"
                repo = open_repository(str(d))
                upstream = gitio.commit_info(repo, chk.stop.upstream_sha)
                folded = await asyncio.to_thread(resolution.fold, str(d), chk, upstream, unit_id=unit_id,
                                                 when=int(self.now()))
                keep = resolution.keep_ref(unit_id, head)
                # the person kept the fork's side everywhere: said now, as the ledger will record it (NO_OP)
                fc = open_repository(str(d))[folded.commit].peel(pygit2.Commit)
                empty = fc.tree_id == fc.parents[0].tree_id
                ref = f"refs/heads/{branch}"
                await self._git(d, "update-ref", keep, head)
                await self._git(d, "update-ref", ref, folded.commit, head)
                infos = gitio.commit_infos(repo, [s for s in shas if s in repo and s not in gone])
                unit = Unit(id=unit_id, kind="chain", items=tuple(PlanItem(s, "chain") for s in shas if s in infos))
                try:
                    res = await self._apply(d, cfg, unit, base, infos)
                except _ApplyFailed as e:
                    # apply refused the rest of the chain: the fold is the person's resolution, so it
                    # is pushed as the tip all the same and the unit blocked at apply, as a sync's
                    # publish blocks it (docs/github.md, "A pick that fails without a conflict")
                    await self._git(d, "update-ref", ref, folded.commit)
                    after = shas[shas.index(chk.stop.upstream_sha) + 1:] if chk.stop.upstream_sha in shas else shas
                    res = apply_mod.ApplyResult(unit_id, branch, base, folded.commit, created=False, tip=folded.commit,
                                                conflict=next((s for s in after if s in infos), e.upstream_sha),
                                                error=str(e), remaining=tuple(s for s in after if s in infos))
                tip = res.tip or folded.commit
                failed = blocked_mod.pick_failed(res.error) if res.error else None
                # what recording the fold does, written down before the push: a worker killed
                # between the push and the row leaves it for the next event of the branch
                # (:meth:`_fold_pushed_unrecorded`), which records and says it as this run would
                fold = {"row": {**row, "pushed_tip": tip, "verified_tip": head, "conflict_sha": res.conflict or "",
                                "held_head": "",
                                **(blocked_mod.row_fields(failed, step="apply", at=self.now(), tip=tip)
                                   if failed else {})},
                        "pr": int(pr["number"]), "key": f"resolution-folded:{head}", "blocked": bool(failed),
                        "upstream_sha": chk.stop.upstream_sha,
                        "said": render("resolution_folded.md.j2", raced=False, head=head, branch=branch, fold=folded,
                                       keep=keep, upstream=upstream, empty=empty, tip=tip,
                                       picked=[s for s, _ in res.picked], conflict=res.conflict or "",
                                       conflicts=list(getattr(res, "conflicts", ()) or ()),
                                       remaining=len(res.remaining), failed=failed.reason if failed else "")}
                sync_store.begin_push(ctx.store, full_name, branch, tip, self.now(), record=fold)
                try:
                    await self._git(d, "push", "-q", "--atomic", f"--force-with-lease={ref}:{head}", url,
                                    f"{ref}:{ref}", f"{keep}:{keep}", secrets=secrets)
                except SyncError as e:
                    at = await self._remote_tip(d, url, ref, secrets)
                    if at != tip:
                        # someone pushed meanwhile (the lease failed) or the push was refused: the
                        # branch on GitHub is untouched; the next push is checked again from
                        # scratch. The push written down above is ended once GitHub's branch shows
                        # it never arrived (ls-remote); while that is unknown (None) it stays, for
                        # the next event to record it should it have arrived after all
                        await self._git(d, "update-ref", ref, head)
                        if at is not None:
                            sync_store.end_push(ctx.store, full_name, branch)
                        await comment_once(ctx.gh, full_name, pr["number"], f"resolution-raced:{head}",
                                           render("resolution_folded.md.j2", raced=True, head=head, branch=branch,
                                                  error=str(e)[:300]))
                        return "raced"
                    # GitHub has the fold though git's answer said otherwise (a lost answer): it is
                    # forksync's push, recorded and said as any fold
                    log.warning("%s: %s is at the fold %s although its push failed (%s); recorded", full_name,
                                branch, tip[:12], redact_scrub(str(e))[:200])
                sync_store.save_branch(ctx.store, **fold["row"])
                sync_store.end_push(ctx.store, full_name, branch)
        if fold["blocked"]:
            await self._save_blocked(ctx, full_name)
        await comment_once(ctx.gh, full_name, fold["pr"], fold["key"], fold["said"])
        await self.sync(ctx, full_name, reason=render_part(TEXTS, "folded_reason", sha=fold["upstream_sha"][:12], branch=branch))
        return "folded"

    async def _fold_pushed_unrecorded(self, ctx, full_name: str, git_dir: Path, branch: str) -> dict | None:
        """The fold of ``branch`` that an earlier run pushed and did not record (its worker died
        between the push and the row), found as that run wrote it down before pushing
        (:func:`bot.sync.store.begin_push`) with the branch just fetched at its tip: its row is
        saved now and it is returned (``{"row", "pr", "key", "blocked", "upstream_sha", "said"}``)
        for the caller to say and sync as that run would have. None when there is none, or
        GitHub's branch is elsewhere (the push never reached it). Under the fork lock."""
        begun = sync_store.begun_push(ctx.store, full_name, branch)
        if not begun or not begun["record"]:
            return None
        tip = (await self._git(git_dir, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False)).strip()
        if tip != begun["tip"]:
            return None
        log.warning("%s: %s is at %s, the fold a run that stopped before recording it pushed; recorded now",
                    full_name, branch, tip[:12])
        sync_store.save_branch(ctx.store, **begun["record"]["row"])
        sync_store.end_push(ctx.store, full_name, branch)
        return begun["record"]

    async def _not_upstream(self, ctx, git_dir: Path, cfg: ForksyncConfig, shas: list[str]) -> set[str]:
        """The ``shas`` upstream's branch no longer reaches (fetched now: a force push may not have
        been synced yet). Empty when the fork follows no upstream."""
        upstream, up_ref = self.upstream_of(cfg)
        if not upstream:
            return set()
        up_url, up_secrets = await self._upstream_url(upstream, ctx.installation_id)
        ref = f"refs/remotes/upstream/{up_ref}"
        await self._git(git_dir, "fetch", "-q", "--no-tags", up_url, f"+refs/heads/{up_ref}:{ref}", secrets=up_secrets)
        repo = open_repository(str(git_dir))
        tip = repo.references[ref].target
        return {s for s in shas if s not in repo or (str(tip) != s and not repo.descendant_of(tip, s))}

    async def agent_resolve(self, ctx, full_name: str, number: int, cfg: ForksyncConfig) -> str:
        """``/forksync resolve`` on a chain PR: ask the conflict agent for the conflict the chain
        stopped at (:func:`bot.sync.agents.on_chain_conflict`; its pick takes the conflict commit's
        place behind the agent's rails), then sync so the chain goes on. Returns the reply text.
        PR ``number`` must be the chain's own (:func:`bot.sync.prs.not_forksyncs`; ``cfg``'s
        ``fork.ref`` is the unit's base when its row records none): a person's PR from the chain's
        branch into another base asks nothing of the chain."""
        pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", {**split_repo(full_name), "number": number})
        branch = pr["head"]["ref"]
        row = sync_store.branch_row(ctx.store, full_name, branch)
        if row is None or row["kind"] != "chain" \
                or sync_prs.row_reason(pr, full_name, row, bot_login=self.bot_login, fork_ref=cfg.fork.ref):
            return render_part(TEXTS, "resolve_not_chain")
        if not row.get("conflict_sha"):
            return render_part(TEXTS, "resolve_not_stopped")
        upstream, up_ref = self.upstream_of(cfg)
        async with self._lock(full_name):
            git_dir = await self.fetch(full_name, ctx.installation_id, upstream, up_ref)
            url, secrets = await self.remote_url(full_name, ctx.installation_id)
            note = await on_chain_conflict(ctx, full_name, git_dir=git_dir, cfg=cfg, branch=branch,
                                           upstream_sha=row["conflict_sha"], remote_url=url, secrets=secrets)
        if not note:
            return render_part(TEXTS, "resolve_no_agent")
        if ": committed" in note:
            await self.sync(ctx, full_name, reason=render_part(TEXTS, "agent_reason", branch=branch), cfg=cfg)
        return note

    async def plan_preview(self, ctx, full_name: str, *, user: str, cfg: ForksyncConfig, line: str) -> str:
        """``/forksync plan``: the plan as a comment body; nothing is applied or pushed."""
        upstream, up_ref = self.upstream_of(cfg)
        if not upstream:        # answered, not retried: no fetch can succeed without an upstream
            return render_part(TEXTS, "no_plan", user=user)
        async with self._lock(full_name):
            git_dir = await self.fetch(full_name, ctx.installation_id, upstream, up_ref)
            core = await asyncio.to_thread(self.compute, git_dir, cfg, up_ref, cfg.fork.ref)
        return render("plan_preview.md.j2", user=user, base=core.fork_head, upstream_head=core.upstream_head,
                      units=list(core.plan.units), notes=list(core.plan.notes), no_ops=list(core.plan.no_ops))

    async def resolve_target(self, ctx, full_name: str, target: cm.Target, cfg: ForksyncConfig) -> list[str]:
        """Upstream shas a command target names: a sha prefix, or the commits of upstream PR #N
        (a trailing ``(#N)`` in the subject) within upstream's branch. [] when unknown."""
        upstream, up_ref = self.upstream_of(cfg)
        if not upstream:
            return []
        async with self._lock(full_name):      # its fetch resets the fork's branches a sync may be pushing
            return await self._resolve_target(ctx, full_name, target, upstream, up_ref)

    async def _resolve_target(self, ctx, full_name: str, target: cm.Target, upstream: str, up_ref: str) -> list[str]:
        git_dir = await self.fetch(full_name, ctx.installation_id, upstream, up_ref)
        ref = f"refs/remotes/upstream/{up_ref}"
        if target.sha:
            out = await self._git(git_dir, "rev-parse", "--verify", "-q", f"{target.sha}^{{commit}}", check=False)
            sha = out.strip()
            if not sha:
                return []
            # on upstream's branch: nothing of it lies outside the branch
            outside = (await self._git(git_dir, "rev-list", "-1", sha, f"^{ref}", check=False)).strip()
            return [sha] if not outside else []
        out = await self._git(git_dir, "log", "--first-parent", "--format=%H %s", ref)
        pat = re.compile(rf"\(#{target.pr}\)\s*$")
        found = [ln.split(" ", 1)[0] for ln in reversed(out.splitlines()) if pat.search(ln)]
        if found or not re.match(r"^[\w.\-]+/[\w.\-]+$", upstream):
            return found
        return await self._merged_pr_commits(ctx, git_dir, upstream, target.pr, ref, out)

    async def _merged_pr_commits(self, ctx, git_dir: Path, upstream: str, number: int, ref: str,
                                 first_parent_log: str) -> list[str]:
        """The commits upstream PR ``number`` landed, from GitHub's own record when the subjects do
        not carry ``(#N)`` (a rebase merge keeps the PR's titles): ``pulls/get`` gives the landed
        ``merge_commit_sha`` and the PR's ``commits`` count — a merge commit stands alone, a rebase
        merge is that many first-parent commits ending at it, a squash is one. [] when GitHub does
        not know the PR, it is not merged, or what it names is not on upstream's branch."""
        try:
            pr = await ctx.gh.getitem("/repos/{owner}/{repo}/pulls/{number}", {**split_repo(upstream), "number": number})
        except Exception:  # noqa: BLE001 - an unknown or unreadable PR names no commit
            return []
        sha, count = pr.get("merge_commit_sha") or "", int(pr.get("commits") or 0)
        if not pr.get("merged_at") or not sha:
            return []
        line = [ln.split(" ", 1)[0] for ln in first_parent_log.splitlines()]
        if sha not in line:
            return []
        parents = (await self._git(git_dir, "rev-list", "--parents", "-n", "1", sha)).split()
        if len(parents) > 2:
            return [sha]
        at = line.index(sha)
        return list(reversed(line[at:at + max(count, 1)]))

    async def urgent_pick(self, ctx, full_name: str, target: cm.Target, cfg: ForksyncConfig, user: str) -> str:
        """``/forksync pick``: an isolated pick PR (``Upstream-Urgent``); the frontier does not move."""
        shas = await self.resolve_target(ctx, full_name, target, cfg)
        if len(shas) != 1:
            return render_part(TEXTS, "pick_not_one", target=target, n=len(shas))
        upstream, _ = self.upstream_of(cfg)
        git_dir = self.repo_dir(full_name)
        repo = open_repository(str(git_dir))
        commit = gitio.commit_info(repo, shas[0])
        fork_tip = str(repo.revparse_single(f"refs/heads/{cfg.fork.ref}").peel(pygit2.Commit).id)
        reason = render_part(TEXTS, "requested_by", user=user)
        unit = apply_mod.urgent_unit(commit, reason)
        core = CoreResult(upstream_head="", fork_head=fork_tip, plan=Plan(units=(unit,)), commits={commit.sha: commit})
        async with self._lock(full_name):
            return await self.publish(ctx, full_name, git_dir, cfg, core, unit, upstream, urgent_reason=reason)

    async def record_close(self, ctx, full_name: str, shas: list[str], disposition: Disposition,
                           reason: str, by: str) -> None:
        """Record a closed-unmerged unit's commits in ``refs/notes/forksync`` on the fork."""
        await self.record_decisions(ctx, full_name, shas, disposition, reason, by)

    async def record_decisions(self, ctx, full_name: str, shas: list[str], disposition: Disposition | None,
                               reason: str, by: str) -> str:
        """Write decisions as git notes (``bot.git.notes``) in the working repo and push the notes ref,
        holding the fork's lock (:meth:`_lock`): a sync's fetch of the fork between the note's write
        and its push would put the notes ref back to GitHub's, and the push would send nothing."""
        async with self._lock(full_name):
            return await self._record_decisions(ctx, full_name, shas, disposition, reason, by)

    async def _record_decisions(self, ctx, full_name: str, shas: list[str], disposition: Disposition | None,
                                reason: str, by: str) -> str:
        """:meth:`record_decisions` for a caller that holds the fork's lock already."""
        d = await self.ensure_repo(full_name)
        url, secrets = await self.remote_url(full_name, ctx.installation_id)
        ref = "refs/notes/forksync"
        await self._git(d, "fetch", "-q", url, f"+{ref}:{ref}", secrets=secrets, check=False)
        disp = None if disposition in (None, Disposition.PENDING) else disposition
        text = notes.format_decision(disp, reason, by, int(self.now()))
        for s in shas:
            await asyncio.to_thread(notes.write_decision, str(d), s, text)
        await self._git(d, "push", "-q", url, f"{ref}:{ref}", secrets=secrets)
        return f"recorded {len(shas)} decision(s)"


class _ApplyFailed(Exception):
    """Apply could not make a unit (:meth:`SyncService._apply`); ``upstream_sha``: the unit's first
    upstream commit (apply names the one it met in the message)."""

    def __init__(self, message: str, upstream_sha: str):
        super().__init__(message)
        self.upstream_sha = upstream_sha


@dataclass(frozen=True)
class _PrText:
    """What :meth:`SyncService.publish` rendered a unit's PR from, but what the unit lands after
    (read from the rows at each render): ``body_kw`` the body template's other values, ``tip``
    and ``conflict`` (``""`` none) the branch as published."""

    unit: Unit
    branch: str
    title: str
    tip: str
    conflict: str
    body_kw: dict


@dataclass(frozen=True)
class _Tip:
    """The part of an apply result :meth:`SyncService._block` reads, for a refused merge."""

    tip: str
    conflict: str | None = None


def _stop_or_none(git_dir: str, base: str, tip: str):
    try:
        return resolution.find_stop(git_dir, base, tip)
    except ValueError:
        return None


def _is_new(row: dict | None) -> bool:
    """A unit with no sync branch on GitHub yet (none stored, or its last one closed, landed or
    re-planned): opening it takes one of ``github.max_open_sync_prs``' slots."""
    return row is None or row.get("state") not in ("open", "blocked")


def _merge_refused_at(row: dict | None, tip: str) -> bool:
    """Is ``row`` blocked by a refused merge of ``tip`` (a publish that changes nothing keeps that)?"""
    return bool(row and row.get("blocked_step") == "merge" and row.get("blocked_tip") == tip)


def _replace(st: sync_status.SyncStatus, **kw) -> sync_status.SyncStatus:
    return replace(st, **kw)


__all__ = ["SyncService", "SyncError", "CoreResult", "scrub"]
