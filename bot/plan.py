"""The risk partition: pending upstream commits → low-risk bundles and risky chains (pure core).

Input is plain data (``CommitInfo`` in upstream order, open ``InFlightBranch``es, config areas);
git enters only through two injected callables:

* a :class:`PickPredictor` (``bot/predict.py``: an in-memory 3-way merge) that says whether a
  commit would cherry-pick cleanly onto the fork tip *plus the plan's earlier clean bundle picks*,
  and is told to :meth:`~PickPredictor.advance` when a clean pick joins a bundle;
* a :data:`SymbolSource` (``bot/symbols.py``) that names the symbols a commit touches in one file,
  asked only when two commits already share that file.

The walk (docs/plan.md has the full rules and their sources, issue 2 item 6):

1. A commit that touches the files **and** symbols of an open risky chain — a chain of this plan
   or an open ``forksync/*`` branch — or a path/symbol of a ``divergent`` area joins that chain
   (or starts one). Same file but disjoint symbols is *not* an overlap; unknown symbols (binary,
   missing blob, no grammar and no hunk header) fall back to file level. If it overlaps several
   plan chains they are merged into the one whose first commit is oldest (upstream order kept).
2. Otherwise its pick is predicted: *clean* → the current bundle (a new one when the current holds
   ``bundle_size_cap`` commits); *conflict* → a new chain listing the conflicted files; *empty* →
   a NO_OP candidate (reported in ``Plan.notes``, not bundled); *unknown* (objects missing) → a
   chain, so a person looks at it.

Unit ids are ``bundle-<sha[:12]>`` / ``chain-<sha[:12]>`` of the unit's first upstream commit; a
commit that continues an open ``forksync/chain-*`` branch lands in a unit carrying *that branch's*
id (apply then appends to the branch). The same input always gives the same plan.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Protocol, Sequence

from bot.model import CommitInfo, InFlightBranch, Plan, PlanItem, Unit
from bot.symbols import TOP_LEVEL

#: ``symbols(commit, path) -> frozenset[str] | None`` (None: unknown, compare at file level).
SymbolSource = Callable[[CommitInfo, str], "frozenset[str] | None"]

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


def unit_id(kind: str, first_sha: str) -> str:
    """The stable id of a unit: ``<kind>-<first upstream sha[:12]>``."""
    return f"{kind}-{first_sha[:12]}"


def short(sha: str) -> str:
    return sha[:12]


@dataclass
class _Chain:
    id: str
    order: int                                     # upstream index of its first commit (in-flight: -1…)
    items: list[PlanItem] = field(default_factory=list)
    commits: list[CommitInfo] = field(default_factory=list)
    by_path: dict[str, list[CommitInfo]] = field(default_factory=dict)
    paths_only: frozenset[str] = frozenset()      # in-flight paths with no commit data (file level)
    areas: set[str] = field(default_factory=set)
    in_flight: InFlightBranch | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"forksync/{self.id} (in flight)" if self.in_flight else self.id

    def add(self, commit: CommitInfo, item: PlanItem | None) -> None:
        if item is not None:
            self.items.append(item)
        self.commits.append(commit)
        for p in commit.paths:
            self.by_path.setdefault(p, []).append(commit)


@dataclass
class _Overlap:
    chain: _Chain
    what: str          # human text: "lib/a.cpp (Foo::bar) like 1234abcd5678"


def _commit_overlap(commit: CommitInfo, chain: _Chain, symbols: SymbolSource | None) -> str | None:
    """Why ``commit`` overlaps ``chain`` (first reason found, deterministic) or None."""
    for path in sorted(commit.paths):
        if path in chain.paths_only:
            return f"{path} (file)"
        others = chain.by_path.get(path)
        if not others:
            continue
        mine = symbols(commit, path) if symbols else None
        if mine is not None and not mine - {TOP_LEVEL}:
            continue            # only file-scope lines: left to the textual merge, whatever the others did
        for other in others:
            if mine is None:
                return f"{path} (file) like {short(other.sha)}"
            theirs = symbols(other, path)
            if theirs is None:
                return f"{path} (file) like {short(other.sha)}"
            common = (mine & theirs) - {TOP_LEVEL}
            if common:
                return f"{path} ({', '.join(sorted(common)[:3])}) like {short(other.sha)}"
    return None


def _divergent_hits(commit: CommitInfo, areas: Sequence, symbols: SymbolSource | None,
                    memo: dict | None = None) -> list[tuple[str, str]]:
    """``[(area name, what)]`` for the divergent areas ``commit`` touches (by path, then symbol).
    ``memo`` caches ``(area name, path) -> bool`` glob matches across commits."""
    out = []
    memo = {} if memo is None else memo

    def matches(a, p):
        k = (a.name, p)
        if k not in memo:
            memo[k] = a.matches_path(p)
        return memo[k]

    for a in areas:
        if not getattr(a, "divergent", False):
            continue
        hit = next((p for p in sorted(commit.paths) if matches(a, p)), None)
        if hit is not None:
            out.append((a.name, hit))
            continue
        if a.symbols and symbols is not None:
            for p in sorted(commit.paths):
                syms = symbols(commit, p) or frozenset()
                s = next((s for s in sorted(syms) if a.matches_symbol(s)), None)
                if s is not None:
                    out.append((a.name, f"{p} ({s})"))
                    break
    return out


def build_plan(pending: Sequence[CommitInfo], *, predictor: PickPredictor,
               areas: Sequence = (), bundle_size_cap: int = 50,
               in_flight: Sequence[InFlightBranch] = (),
               commit_lookup: Mapping[str, CommitInfo] | None = None,
               symbols: SymbolSource | None = None,
               base: str | None = None, as_of: int | None = None,
               progress: Callable[[int, int], None] | None = None) -> Plan:
    """Partition ``pending`` (PENDING upstream commits, oldest first) into bundles and chains.

    ``areas``: config :class:`~bot.config.Area` objects (``divergent`` ones force chains; all
    name ``Unit.areas``). ``in_flight``: open forksync branches; their commits must already be
    left out of ``pending`` (they are IN_FLIGHT), their footprint (the ``CommitInfo`` of their
    upstream shas from ``commit_lookup``, else ``InFlightBranch.paths`` at file level) makes
    later overlapping commits risky. ``bundle_size_cap`` ≥ 1. Returns a :class:`~bot.model.Plan`
    whose units come in upstream order of their first commit; NO_OP candidates and merges are
    listed in ``Plan.notes`` (NO_OP lines start with :data:`NO_OP_NOTE` and carry the full sha).
    Raises ``ValueError`` when a pending commit is also on an in-flight branch.
    """
    if bundle_size_cap < 1:
        raise ValueError("bundle_size_cap must be at least 1")
    lookup = dict(commit_lookup or {})
    index = {c.sha: i for i, c in enumerate(pending)}
    chains: list[_Chain] = []
    notes: list[str] = []

    # open forksync branches: bundles and chains both make overlapping commits risky
    in_flight_shas: set[str] = set()
    for n, br in enumerate(sorted(in_flight, key=lambda b: b.name)):
        ch = _Chain(id=br.unit_id, order=-len(in_flight) + n, in_flight=br)
        known = []
        for u in br.upstream_shas:
            full = _expand(u, lookup)
            in_flight_shas.add(full or u)
            if full and full in lookup:
                known.append(lookup[full])
        for c in known:
            ch.add(c, None)
        covered = set(ch.by_path)
        ch.paths_only = frozenset(p for p in br.paths if p not in covered) if not known else frozenset()
        chains.append(ch)
    dup = [c.sha for c in pending if c.sha in in_flight_shas]
    if dup:
        raise ValueError(f"commit {dup[0]} is both PENDING and on an open forksync branch; "
                         "in-flight commits must be left out of the pending set")

    glob_memo: dict[tuple[str, str], bool] = {}
    bundles: list[list[PlanItem]] = []
    bundle_commits: list[list[CommitInfo]] = []
    picked_clean = 0
    total = len(pending)
    for i, c in enumerate(pending):
        if progress:
            progress(i, total)
        div = _divergent_hits(c, areas, symbols, glob_memo)
        area_hits = [(ch, f"divergent area {area!r}: {what}") for area, what in div for ch in chains if area in ch.areas]
        sharing = [ch for ch in chains if any(p in ch.by_path or p in ch.paths_only for p in c.paths)]
        pred = None
        if sharing:
            # predict first: a conflict in a file an open chain changes settles it without symbols
            pred = predictor.predict(c)
            if pred.outcome == "conflict":
                owners = [ch for ch in sharing if (ch.in_flight is None or ch.in_flight.kind == "chain")
                          and any(p in ch.by_path or p in ch.paths_only for p in pred.conflicts)]
                if owners:
                    # it conflicts where an open chain changed the file: most likely it builds on
                    # that chain (the running tree lacks it), so it follows the chain
                    hits = [(ch, next(p for p in pred.conflicts if p in ch.by_path or p in ch.paths_only))
                            for ch in owners]
                    hits += [h for h in area_hits if all(h[0] is not o for o in owners)]
                    target, _ = _join(c, hits, chains, notes, index)
                    where = next(p for p in pred.conflicts if p in target.by_path or p in target.paths_only)
                    target.add(c, PlanItem(c.sha, f"predicted cherry-pick conflicts in {_files(pred.conflicts)}; "
                                                  f"follows {target.label}, which changes {where}", pred.conflicts))
                    target.areas.update(a for a, _ in div)
                    continue
        hits = []
        for ch in sharing:
            why = _commit_overlap(c, ch, symbols)
            if why:
                hits.append((ch, why))
        hits += [h for h in area_hits if all(h[0] is not x[0] for x in hits)]
        if hits:
            target, reason = _join(c, hits, chains, notes, index)
            target.add(c, PlanItem(c.sha, reason))
            target.areas.update(a for a, _ in div)
            continue
        if div:
            area, what = div[0]
            ch = _Chain(id=unit_id("chain", c.sha), order=index[c.sha])
            ch.add(c, PlanItem(c.sha, f"touches divergent area {area!r}: {what}"))
            ch.areas.update(a for a, _ in div)
            chains.append(ch)
            continue
        if pred is None:
            pred = predictor.predict(c)
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
            notes.append(f"{NO_OP_NOTE} {c.sha}: its pick would be empty on the fork tip + {picked_clean} "
                         f"earlier bundle picks (already satisfied); record it as NO_OP")
        elif pred.outcome == "conflict":
            ch = _Chain(id=unit_id("chain", c.sha), order=index[c.sha])
            ch.add(c, PlanItem(c.sha, f"predicted cherry-pick conflicts in {_files(pred.conflicts)}", pred.conflicts))
            chains.append(ch)
        else:
            ch = _Chain(id=unit_id("chain", c.sha), order=index[c.sha])
            ch.add(c, PlanItem(c.sha, f"pick cannot be predicted ({pred.detail or 'unknown'}); a person checks it"))
            chains.append(ch)
    if progress:
        progress(total, total)

    units: list[tuple[int, Unit]] = []
    for n, (items, commits) in enumerate(zip(bundles, bundle_commits), 1):
        paths = sorted({p for c in commits for p in c.paths})
        units.append((index[items[0].sha], Unit(
            id=unit_id("bundle", items[0].sha), kind="bundle", items=tuple(items),
            areas=_areas_of(areas, paths),
            reason=f"bundle {n} of {len(bundles)}: {len(items)} commit{'s' if len(items) != 1 else ''} "
                   f"predicted to pick cleanly in order (cap {bundle_size_cap})")))
    for ch in chains:
        if not ch.items:
            continue
        paths = sorted({p for c in ch.commits for p in c.paths})
        area_names = tuple(sorted(set(_areas_of(areas, paths)) | ch.areas))
        if ch.in_flight:
            reason = f"continues forksync/{ch.id} (in flight, {len(ch.in_flight.upstream_shas)} commits on it)"
        else:
            reason = ch.items[0].reason
        if ch.notes:
            reason += "; " + "; ".join(ch.notes)
        units.append((index[ch.items[0].sha], Unit(id=ch.id, kind="chain", items=tuple(ch.items),
                                                   areas=area_names, reason=reason)))
    units.sort(key=lambda t: t[0])
    return Plan(units=tuple(u for _, u in units), notes=tuple(notes), as_of=as_of, base=base)


def _join(c: CommitInfo, hits: list[tuple[_Chain, str]], chains: list[_Chain], notes: list[str],
          index: Mapping[str, int]) -> tuple[_Chain, str]:
    """Pick the chain ``c`` joins; merge other overlapped *plan* chains into it (deterministic:
    an in-flight continuation first, then the chain whose first commit is oldest)."""
    hits = sorted(hits, key=lambda h: (h[0].in_flight is None, h[0].order, h[0].id))
    extendable = [h for h in hits if h[0].in_flight is None or h[0].in_flight.kind == "chain"]
    first = None
    if extendable:
        target, why = extendable[0]
        reason = f"touches {why} of {target.label}"
    else:
        # only open *bundles* overlapped: a bundle is not extended; start a chain that depends on it
        first, why = hits[0]
        target = _Chain(id=unit_id("chain", c.sha), order=index[c.sha])
        chains.append(target)
        reason = f"touches {why} of {first.label}"
    for ch, _ in hits:
        if ch is target or ch is first:
            continue
        if ch.in_flight is not None:
            dep = f"depends on {ch.label}"
            if dep not in target.notes:
                target.notes.append(dep)
            continue
        # merge plan chain ch into target, keeping upstream order
        merged = sorted(target.items + ch.items, key=lambda it: index.get(it.sha, -1))
        target.items[:] = merged
        for cc in ch.commits:
            target.add(cc, None)
        target.areas |= ch.areas
        target.notes.extend(n for n in ch.notes if n not in target.notes)
        chains.remove(ch)
        msg = f"merged {ch.id} into {target.id}: {short(c.sha)} touches both"
        target.notes.append(msg)
        notes.append(msg)
    return target, reason


def _files(paths: Sequence[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def _areas_of(areas: Sequence, paths: Iterable[str]) -> tuple[str, ...]:
    paths = list(paths)
    return tuple(a.name for a in areas if any(a.matches_path(p) for p in paths))


def _expand(sha: str, lookup: Mapping[str, CommitInfo]) -> str | None:
    if len(sha) == 40:
        return sha
    found = [s for s in lookup if s.startswith(sha)]
    return found[0] if len(found) == 1 else None


def no_op_candidates(plan: Plan) -> list[tuple[str, str]]:
    """``[(sha, reason)]`` of the NO_OP candidates listed in ``plan.notes``."""
    out = []
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
