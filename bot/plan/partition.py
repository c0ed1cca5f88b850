"""The risk partition: pending upstream commits → low-risk bundles and risky chains (pure core).

Input is plain data (``CommitInfo`` in upstream order, open ``InFlightBranch``es, config areas);
git enters only through two injected callables:

* a :class:`PickPredictor` (``bot/plan/predict.py``: an in-memory 3-way merge) that says whether a
  commit would cherry-pick cleanly onto the fork tip *plus the plan's earlier clean bundle picks*,
  and is told to :meth:`~PickPredictor.advance` when a clean pick joins a bundle;
* a :data:`SymbolSource` (``bot/plan/symbols.py``) that names the symbols a commit touches in one file,
  asked only where the answer changes the plan: files a commit shares with an open chain, and —
  for divergent-area symbol patterns — files the fork diverges on (``fork_paths``).

The walk (docs/plan.md has the full rules and their sources): each commit's pick
is predicted on the running tree, then

1. a commit that conflicts in a file an open risky chain changes (a chain of this plan or an open
   ``forksync/chain-*`` branch) *follows* it; one that touches the same symbols as an open chain
   (unknown symbols: the same file), or a ``divergent`` area's path, is *strongly* linked to it.
   A linked commit joins a chain that lands after all its links and holds fewer than
   ``chain_size_cap`` commits — the strongly linked chain itself, else a chain whose own running
   tree takes the pick cleanly, else the newest stacked chain — or starts a *stacked* chain whose
   ``Unit.depends_on`` names them (bot/plan/chains.py). Chains are never merged.
2. Otherwise: *clean* → the current bundle (a new one at ``bundle_size_cap``), unless a divergent
   area's symbol pattern matches in a file the fork diverges on (then a chain); *conflict* → a new
   chain listing the conflicted files; *empty* → a NO_OP candidate (``Plan.no_ops``); *unknown*
   (objects missing) → a chain, so a person looks at it.

Unit ids are ``bundle-<sha[:12]>`` / ``chain-<sha[:12]>`` of the unit's first upstream commit; a
commit that continues an open ``forksync/chain-*`` branch lands in a unit carrying *that branch's*
id (apply then appends to the branch). The same input always gives the same plan.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Protocol, Sequence

from bot.model import CommitInfo, InFlightBranch, Plan, PlanItem, Unit
from bot.plan.chains import Chain, Chains, SymbolSource, commit_overlap, divergent_path_hits, divergent_symbol_hits, expand, files_text, short  # noqa: F401

NO_OP_NOTE = "NO_OP candidate"


@dataclass(frozen=True)
class Prediction:
    """What a cherry-pick of one commit onto the running tree would give.

    ``outcome``: ``clean`` | ``conflict`` | ``empty`` (the pick changes nothing: already
    satisfied) | ``unknown`` (could not be computed, ``detail`` says why, e.g. missing objects).
    ``conflicts`` are the conflicted paths (sorted); ``result_tree`` the tree id after a clean pick.
    """

    outcome: str
    conflicts: tuple[str, ...] = ()
    result_tree: str | None = None
    detail: str = ""


class PickPredictor(Protocol):
    def predict(self, commit: CommitInfo) -> Prediction: ...

    def advance(self, commit: CommitInfo, prediction: Prediction) -> None: ...


@dataclass
class _Walk:
    """:func:`build_plan`'s walk after ``shas`` (a prefix of the pending commits): what a later
    plan with the same ``context`` continues from."""

    context: tuple
    shas: tuple[str, ...]
    chains: Chains
    bundles: list[list[PlanItem]]
    bundle_commits: list[list[CommitInfo]]
    picked_clean: int
    no_ops: list[PlanItem]
    notes: list[str]
    predictor: object


def unit_id(kind: str, first_sha: str) -> str:
    """The stable id of a unit: ``<kind>-<first upstream sha[:12]>``."""
    return f"{kind}-{first_sha[:12]}"


#: how a unit's reason begins its clause naming the bundles it lands after (a reader of a stored
#: reason drops such clauses once what it lands after has changed: bot.sync.service)
LANDS_AFTER = "lands after "


def build_plan(pending: Sequence[CommitInfo], *, predictor: PickPredictor,
               areas: Sequence = (), bundle_size_cap: int = 50,
               in_flight: Sequence[InFlightBranch] = (),
               commit_lookup: Mapping[str, CommitInfo] | None = None,
               symbols: SymbolSource | None = None,
               base: str | None = None, as_of: int | None = None,
               progress: Callable[[int, int], None] | None = None,
               chain_size_cap: int = 25, fork_paths: Iterable[str] | None = None,
               lookahead: int = 16, resume: dict | None = None) -> Plan:
    """Partition ``pending`` (PENDING upstream commits, oldest first) into bundles and chains.

    ``areas``: config :class:`~bot.config.forksync.Area` objects (``divergent`` ones force chains; all
    name ``Unit.areas``). ``in_flight``: open forksync branches; their commits must already be
    left out of ``pending`` (they are IN_FLIGHT), their footprint (the ``CommitInfo`` of their
    upstream shas from ``commit_lookup``, and at file level the ``InFlightBranch.paths`` none of
    those change: a person's commits, upstream commits not in ``commit_lookup``) makes later
    overlapping commits risky. ``commit_lookup``: upstream commits by sha, in upstream order (a
    pending commit older than an open chain branch's picks is never appended to it). ``bundle_size_cap``, ``chain_size_cap`` ≥ 1 (commits per
    unit; a full chain is continued by a *stacked* chain, ``Unit.depends_on``). ``fork_paths``:
    the files the fork changed since the merge base — divergent-area *symbol* patterns are checked
    only there (None: everywhere). ``predictor.predict_on(commit, tree)``, when the predictor has
    it, predicts chain items on the chain's own running tree. ``predictor.hint(commits)``, when
    the predictor has it, is told before each commit the next ``lookahead`` pending commits (a
    helper process may merge them ahead of time, ``bot/plan/helper.py``; the plan never depends
    on it; 0: no hints). ``resume``: a dict the caller keeps between plans of one fork; the walk's
    state after the last pending commit is kept there (under ``"walk"``), and a later call whose
    pending commits *start with* those same commits, with the same base, in-flight branches,
    areas, caps, fork paths and predictor settings (``predictor.walk_context()``), continues the
    walk from there instead of walking them again: the walk is a function of exactly those
    inputs, so the plan is the one made from scratch (tests/plan/test_incremental.py). Used
    where one process re-plans after upstream pushes (the App); predictors without
    ``walk_state``/``restore_walk`` never resume, and ``restore_walk(state, chain trees)``
    returning False (its repository lost a running tree the walk names) walks from the start. Returns a :class:`~bot.model.Plan`
    whose units come in upstream order of their first commit; NO_OP candidates are in
    ``Plan.no_ops``. Raises ``ValueError`` when a pending commit is also on an in-flight branch.
    """
    if bundle_size_cap < 1:
        raise ValueError("bundle_size_cap must be at least 1")
    if chain_size_cap < 1:
        raise ValueError("chain_size_cap must be at least 1")
    lookup = dict(commit_lookup or {})
    index = {c.sha: i for i, c in enumerate(pending)}
    scope = frozenset(fork_paths) if fork_paths is not None else None
    chains = Chains(chain_size_cap, getattr(predictor, "predict_on", None))
    notes: list[str] = []
    no_ops: list[PlanItem] = []
    bundles: list[list[PlanItem]] = []
    bundle_commits: list[list[CommitInfo]] = []
    picked_clean = 0
    start = 0
    resumable = resume is not None and all(hasattr(predictor, m) for m in ("walk_context", "walk_state", "restore_walk"))
    context = (predictor.walk_context(), base, bundle_size_cap, chain_size_cap, repr(list(areas)),
               repr(sorted(in_flight, key=lambda b: b.name)), scope) if resumable else None
    saved: _Walk | None = resume.get("walk") if resumable else None
    if saved is not None and (saved.context != context or len(saved.shas) > len(pending)
                              or any(pending[k].sha != s for k, s in enumerate(saved.shas))
                              or not predictor.restore_walk(saved.predictor, [ch.tree for ch in saved.chains.all if ch.tree])):
        saved = None

    glob_memo: dict[tuple[str, str], bool] = {}
    # open forksync branches: bundles and chains both make overlapping commits risky
    # (a branch's copies: the same patches in a rewritten upstream, the ledger's IN_FLIGHT too)
    expanded = {u: expand(u, lookup) for br in in_flight for u in (*br.upstream_shas, *br.copies)}
    in_flight_shas = {full or u for u, full in expanded.items()}
    # their chains, when a kept walk goes on, are in it
    for n, br in enumerate(sorted(in_flight, key=lambda b: b.name) if saved is None else ()):
        ch = chains.new(br.unit_id, -len(in_flight) + n, in_flight=br)
        known = [lookup[expanded[u]] for u in (*br.upstream_shas, *br.copies) if expanded[u] in lookup]
        for c in known:
            ch.add(c, None)
            # an open chain in a divergent area stays that area's tail: later commits there follow
            # it — an area by path, or by symbol pattern in the files the fork diverges on
            if br.kind == "chain":
                ch.areas.update(a for a, _ in divergent_path_hits(c, areas, glob_memo))
                ch.areas.update(a for a, _ in divergent_symbol_hits(c, areas, symbols, scope))
        # files no known upstream commit of it changes: a person's commit on the branch (adapting
        # the fork to the chain), or upstream commits whose data is missing — file level
        covered = set(ch.by_path)
        ch.paths_only = frozenset(p for p in br.paths if p not in covered)
    # upstream rank of each open branch's newest pick (``commit_lookup`` is in upstream order): an
    # older pending commit (a decision lifted after the branch was published) is never appended to it
    rank = {s: n for n, s in enumerate(lookup)} if in_flight else {}
    newest = {br.unit_id: max(rank[full] for u in br.upstream_shas if (full := expanded[u]) in rank)
              for br in in_flight if any(expanded[u] in rank for u in br.upstream_shas)}
    dup = [c.sha for c in pending if c.sha in in_flight_shas]
    if dup:
        raise ValueError(f"commit {dup[0]} is both PENDING and on an open forksync branch; "
                         "in-flight commits must be left out of the pending set")
    if saved is not None:
        chains = saved.chains.copy(getattr(predictor, "predict_on", None))
        bundles, bundle_commits = [list(b) for b in saved.bundles], [list(b) for b in saved.bundle_commits]
        picked_clean, no_ops, notes = saved.picked_clean, list(saved.no_ops), list(saved.notes)
        start = len(saved.shas)

    total = len(pending)
    hint_merges = getattr(predictor, "hint", None) if lookahead > 0 else None
    for i in range(start, total):
        c = pending[i]
        if progress:
            progress(i, total)
        if hint_merges is not None:     # a forecast for a helper process: it never changes the plan
            hint_merges(pending[i:i + lookahead])
        pred = predictor.predict(c)
        chains.follow_renames(c)
        clean_tree = pred.result_tree if pred.outcome == "clean" else None
        div = divergent_path_hits(c, areas, glob_memo)
        sharing = chains.sharing(c)
        links: list[tuple[Chain, str]] = []
        strong: set[str] = set()
        prefix, conflicts, is_strong = "", (), None
        if pred.outcome == "conflict" and sharing:
            # it conflicts where an open chain changed the file: it lands after that chain (the
            # running tree lacks it); a symbol shared in the conflicted files makes the link strong
            for ch in sorted(sharing, key=lambda ch: (ch.in_flight is None, ch.order)):
                where = next((p for p in pred.conflicts if ch.changes(p)), None)
                if where is None or not ch.extendable:     # an open bundle merges on its own: no follow link
                    continue
                moved = f" (upstream moved it from {ch.moved[where]})" if where in ch.moved else ""
                links.append((ch, f"follows {ch.label}, which changes {where}{moved}"))
            if links:   # a symbol shared in the conflicted files makes a follow link strong (asked lazily)
                is_strong = lambda ch, c=c, only=pred.conflicts: bool(commit_overlap(c, ch, symbols, only=only))  # noqa: E731
                prefix = f"predicted cherry-pick conflicts in {files_text(pred.conflicts)}; "
                conflicts = pred.conflicts
        if not links:
            for ch in sorted(sharing, key=lambda ch: (ch.in_flight is None, ch.order)):
                why = commit_overlap(c, ch, symbols)
                if why:
                    links.append((ch, f"touches {why} of {ch.label}"))
                    strong.add(ch.id)
        links += (area_links := _area_links(chains, div, links))
        strong |= {ch.id for ch, _ in area_links}
        if not links and not div and pred.outcome == "clean":
            # an otherwise bundled pick: divergent-area symbol patterns, in the files the fork diverges on
            div = divergent_symbol_hits(c, areas, symbols, scope)
            links = _area_links(chains, div, [])
            strong = {ch.id for ch, _ in links}
        if links:
            older = frozenset(ch.id for ch, _ in links if ch.in_flight is not None
                              and c.sha in rank and rank[c.sha] < newest.get(ch.id, -1))
            target = chains.place(c, links, strong, prefix, conflicts, unit_id("chain", c.sha), index[c.sha],
                                  clean_tree, is_strong, older)
            target.areas.update(a for a, _ in div)
            continue
        if div:
            area, what = div[0]
            ch = chains.new(unit_id("chain", c.sha), index[c.sha], tree=clean_tree)
            ch.add(c, PlanItem(c.sha, f"touches divergent area {area!r}: {what}"))
            ch.areas.update(a for a, _ in div)
            continue
        if pred.outcome == "clean":
            if not bundles or len(bundles[-1]) >= bundle_size_cap:
                bundles.append([])
                bundle_commits.append([])
            where = f"fork tip + {picked_clean} earlier bundle pick{'s' if picked_clean != 1 else ''}"
            detail = f" ({pred.detail})" if pred.detail else ""
            bundles[-1].append(PlanItem(c.sha, f"predicted clean pick onto the {where}{detail}"))
            bundle_commits[-1].append(c)
            predictor.advance(c, pred)
            picked_clean += 1
        elif pred.outcome == "empty":
            no_ops.append(PlanItem(c.sha, f"its pick would be empty on the fork tip + {picked_clean} "
                                          f"earlier bundle picks (already satisfied); record it as NO_OP"))
        elif pred.outcome == "conflict":
            ch = chains.new(unit_id("chain", c.sha), index[c.sha])
            ch.add(c, PlanItem(c.sha, f"predicted cherry-pick conflicts in {files_text(pred.conflicts)}",
                               pred.conflicts))
        else:
            ch = chains.new(unit_id("chain", c.sha), index[c.sha])
            ch.add(c, PlanItem(c.sha, f"pick cannot be predicted ({pred.detail or 'unknown'}); a person checks it"))
    if progress:
        progress(total, total)
    if resumable:
        resume["walk"] = _Walk(context, tuple(c.sha for c in pending), chains.copy(None),
                               [list(b) for b in bundles], [list(b) for b in bundle_commits], picked_clean,
                               list(no_ops), list(notes), predictor.walk_state())

    units: list[tuple[int, Unit]] = []
    after = _BundleOrder(bundle_commits, index)
    bundle_ids = [unit_id("bundle", items[0].sha) for items in bundles]
    first_of = {**{ch.id: ch.order for ch in chains.all}, **{b: index[items[0].sha] for b, items in zip(bundle_ids, bundles)}}

    # unit id -> the ids it lands after, itself included (chains in creation order: a chain's
    # dependencies were made before it)
    full = {bundle_ids[k]: frozenset(bundle_ids[j] for j in after.closure[k]) for k in range(len(bundles))}

    def lands_after(own: str, deps: Iterable[str], on: dict[int, str]) -> tuple[tuple[str, ...], str]:
        """``deps`` and the bundles of ``on`` (bundle number → a path both change) as
        ``Unit.depends_on`` of ``own`` (upstream order, minus those another of them already lands
        after), and the reason's words for those bundles."""
        every = set(deps) | {bundle_ids[k] for k in on}
        full[own] = frozenset({own}).union(*(full.get(d, frozenset({d})) for d in every))
        keep_ids = {d for d in every if not any(d != e and d in full.get(e, ()) for e in every)}
        keep = [k for k in after.minimal(on) if bundle_ids[k] in keep_ids]
        ids = sorted(keep_ids, key=lambda i: (first_of.get(i, 0), i))
        why = ", ".join(f"{bundle_ids[k]} ({on[k]})" for k in keep)
        them = "that bundle" if len(keep) == 1 else "those bundles"
        return tuple(ids), f"{LANDS_AFTER}{why}: predicted on the picks of {them}, which change the same files" if keep else ""

    for n, (items, commits) in enumerate(zip(bundles, bundle_commits), 1):
        paths = sorted({p for c in commits for p in c.paths})
        deps, why = lands_after(bundle_ids[n - 1], (), after.of_bundle(n - 1))
        units.append((index[items[0].sha], Unit(
            id=bundle_ids[n - 1], kind="bundle", items=tuple(items),
            areas=_areas_of(areas, paths, glob_memo),
            reason=f"bundle {n} of {len(bundles)}: {len(items)} commit{'s' if len(items) != 1 else ''} "
                   f"predicted to pick cleanly in order (cap {bundle_size_cap})" + (f"; {why}" if why else ""),
            depends_on=deps)))
    for ch in chains.all:
        if not ch.items:
            continue
        paths = sorted({p for c in ch.commits for p in c.paths})
        area_names = tuple(sorted(set(_areas_of(areas, paths, glob_memo)) | ch.areas))
        if ch.in_flight:
            n = len(ch.in_flight.upstream_shas)
            reason = f"continues {ch.in_flight.name} (in flight, {n} commit{'' if n == 1 else 's'} on it)"
        else:
            reason = ch.items[0].reason
        deps, why = lands_after(ch.id, ch.deps, after.before([pending[index[i.sha]] for i in ch.items]))
        notes_ = ch.notes + ([why] if why else [])
        if notes_:
            reason += "; " + "; ".join(notes_)
        units.append((index[ch.items[0].sha], Unit(id=ch.id, kind="chain", items=tuple(ch.items),
                                                   areas=area_names, reason=reason, depends_on=deps)))
    units.sort(key=lambda t: t[0])
    return Plan(units=tuple(u for _, u in units), notes=tuple(notes), as_of=as_of, base=base,
                no_ops=tuple(no_ops))


class _BundleOrder:
    """Which of the plan's bundles a unit lands after. A pick is predicted on the fork tip plus
    every earlier bundle pick (chain items too: a chain's running tree starts from that tree), so
    a unit whose commit changes a file an earlier bundle's pick changed was predicted on that
    pick: merged first, it would conflict there, or land upstream's changes of the file out of
    order. File level (symbols would need a blob read per pair); bundles touching other files
    stay independent and land in any order. Computed from the bundles after the walk, so a
    resumed walk needs no state of its own. ``bundle_commits``: the bundles' commits (walk
    order); ``index``: upstream index of each pending sha."""

    def __init__(self, bundle_commits: Sequence[Sequence[CommitInfo]], index: Mapping[str, int]):
        self.index = index
        self.picks: dict[str, list[tuple[int, int]]] = {}   # path -> [(upstream index, bundle number)]
        self.direct: list[dict[int, str]] = []              # bundle number -> {earlier bundle: a shared path}
        self.closure: list[frozenset[int]] = []
        for n, commits in enumerate(bundle_commits):
            on: dict[int, str] = {}
            for c in commits:
                for p in sorted(c.paths):
                    hist = self.picks.setdefault(p, [])
                    if hist and hist[-1][1] != n:
                        on.setdefault(hist[-1][1], p)
                    hist.append((index[c.sha], n))
            self.direct.append(on)
            self.closure.append(frozenset({n}).union(*(self.closure[k] for k in on)))

    def of_bundle(self, n: int) -> dict[int, str]:
        """The earlier bundles bundle ``n`` lands after: ``{bundle number: a path both change}``."""
        return self.direct[n]

    def before(self, commits: Iterable[CommitInfo]) -> dict[int, str]:
        """The bundles whose picks, before each of ``commits`` in upstream order, last changed a
        file it changes: ``{bundle number: the path}``."""
        on: dict[int, str] = {}
        for c in commits:
            for p in sorted(c.paths):
                hist = self.picks.get(p)
                k = bisect.bisect_left(hist, (self.index[c.sha],)) if hist else 0
                if k:
                    on.setdefault(hist[k - 1][1], p)
        return on

    def minimal(self, on: Iterable[int]) -> list[int]:
        """Bundle numbers of ``on`` that no other of them already lands after, oldest first."""
        on = set(on)
        return sorted(k for k in on if not any(j != k and k in self.closure[j] for j in on))


def _area_links(chains: Chains, div: list[tuple[str, str]], have: list[tuple[Chain, str]]) -> list[tuple[Chain, str]]:
    """Links to the newest chain of each divergent area ``div`` names (not already in ``have``)."""
    out: list[tuple[Chain, str]] = []
    for area, what in div:
        tail = chains.area_tail(area)
        if tail is not None and all(tail is not ch for ch, _ in have + out):
            out.append((tail, f"touches divergent area {area!r}: {what} of {tail.label}"))
    return out


def _areas_of(areas: Sequence, paths: Iterable[str], memo: dict | None = None) -> tuple[str, ...]:
    """The names of ``areas`` whose globs match one of ``paths``; ``memo`` caches
    ``(area name, path) -> bool`` (shared with :func:`divergent_path_hits`)."""
    paths = list(paths)
    if memo is None:
        return tuple(a.name for a in areas if any(a.matches_path(p) for p in paths))
    out = []
    for a in areas:
        for p in paths:
            k = (a.name, p)
            if k not in memo:
                memo[k] = a.matches_path(p)
            if memo[k]:
                out.append(a.name)
                break
    return tuple(out)


def no_op_candidates(plan: Plan) -> list[tuple[str, str]]:
    """``[(sha, reason)]`` of the plan's NO_OP candidates (``Plan.no_ops``; plans made before that
    field listed them in ``plan.notes`` as ``NO_OP candidate <sha>: <reason>``, also read)."""
    out = [(i.sha, i.reason) for i in plan.no_ops]
    for n in plan.notes:
        if n.startswith(NO_OP_NOTE + " "):
            sha, _, why = n[len(NO_OP_NOTE) + 1:].partition(": ")
            out.append((sha, why))
    return out


def find_unit(plan: Plan, unit: str) -> Unit | None:
    """The unit with id ``unit`` (or a unique unit whose id starts with it, e.g. ``chain-1a2b``)."""
    for u in plan.units:
        if u.id == unit:
            return u
    found = [u for u in plan.units if u.id.startswith(unit)]
    return found[0] if len(found) == 1 else None
