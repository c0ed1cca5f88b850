"""Chains of a plan (pure core, used by :func:`bot.plan.partition.build_plan`): their footprint, their
dependencies (stacked chains), their running trees, and where a risky commit goes.

Rules and their reasons are in docs/plan.md ("Chains: links, stacking, the chain's own tree").
In short, a risky commit has *links*: the chains it must land after. A link is *strong* when the
commit shares a symbol (or, symbols unknown, a file) with the chain or touches the chain's
divergent area; it is a *follow* link when the commit merely conflicts in a file the chain
changes. The commit joins a chain that already lands after every link (its *closure* covers them)
and is not full (``chain_size_cap``): the strongly linked chain itself, else a chain whose own
running tree takes the pick cleanly, else the newest *stacked* chain; otherwise it starts a new
chain whose ``depends_on`` lists the links. Chains are never merged, so dependencies always point
from a newer chain to older ones (no cycles), and ids stay those of their first commit.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

from bot.model import CommitInfo, InFlightBranch, PlanItem
from bot.plan.symbols import TOP_LEVEL

#: ``symbols(commit, path) -> frozenset[str] | None`` (None: unknown, compare at file level).
SymbolSource = Callable[[CommitInfo, str], "frozenset[str] | None"]


def short(sha: str) -> str:
    return sha[:12]


def files_text(paths: Sequence[str]) -> str:
    return ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


@dataclass
class Chain:
    """A chain being built (or an open forksync branch: ``in_flight``)."""

    id: str
    order: int                                     # upstream index of its first commit (in-flight: negative)
    created: int = 0                               # creation counter: "newest" means highest
    items: list[PlanItem] = field(default_factory=list)
    commits: list[CommitInfo] = field(default_factory=list)
    by_path: dict[str, list[CommitInfo]] = field(default_factory=dict)
    paths_only: frozenset[str] = frozenset()      # in-flight paths with no commit data (file level)
    areas: set[str] = field(default_factory=set)
    in_flight: InFlightBranch | None = None
    notes: list[str] = field(default_factory=list)
    deps: tuple[str, ...] = ()                     # unit ids it lands after (Unit.depends_on)
    closure: frozenset[str] = frozenset()          # its id and every id it lands after, transitively
    tree: str | None = None                        # its running tree while every pick so far was clean
    index: dict | None = field(default=None, repr=False, compare=False)   # Chains' path -> chains changing it
    moved: dict[str, str] = field(default_factory=dict)   # a path upstream moved a file it changes to -> the old path

    @property
    def label(self) -> str:
        return f"{self.in_flight.name} (in flight)" if self.in_flight else self.id

    @property
    def extendable(self) -> bool:
        """Plan chains and open chain branches take more commits; an open bundle branch does not."""
        return self.in_flight is None or self.in_flight.kind == "chain"

    def size(self) -> int:
        return len(self.items) + (len(self.in_flight.upstream_shas) if self.in_flight else 0)

    def changes(self, path: str) -> bool:
        return path in self.by_path or path in self.paths_only

    def add(self, commit: CommitInfo, item: PlanItem | None) -> None:
        if item is not None:
            self.items.append(item)
        self.commits.append(commit)
        for p in commit.paths:
            if p not in self.by_path and self.index is not None:
                self.index.setdefault(p, []).append(self)
            self.by_path.setdefault(p, []).append(commit)

    def follow(self, old: str, new: str) -> None:
        """Upstream moved ``old``, a file this chain changes, to ``new``: the chain changes
        ``new`` too (its changes are there now), so a later change at ``new`` shares it."""
        if old in self.paths_only:
            self.paths_only |= {new}
        commits = self.by_path.get(old)
        if not commits or new == old:
            return
        if new not in self.by_path and self.index is not None:
            self.index.setdefault(new, []).append(self)
        have = self.by_path.setdefault(new, [])
        have.extend(c for c in commits if c not in have)
        self.moved.setdefault(new, old)

    def path_in(self, commit: CommitInfo, path: str) -> str:
        """The path ``commit`` (one of this chain's) changed that is ``path`` now, after the moves
        the chain followed (``path`` itself when it changed that)."""
        seen = {path}
        while path not in commit.paths and self.moved.get(path, path) not in seen:
            path = self.moved[path]
            seen.add(path)
        return path


def commit_overlap(commit: CommitInfo, chain: Chain, symbols: SymbolSource | None,
                   only: Iterable[str] | None = None) -> str | None:
    """Why ``commit`` overlaps ``chain`` (first reason found, deterministic) or None. ``only``
    restricts the files looked at (e.g. the files a pick conflicts in)."""
    paths = sorted(commit.paths if only is None else set(only) & set(commit.paths))
    may_share = getattr(symbols, "may_share", None)   # a textual pre-check that never says no wrongly
    for path in paths:
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
            if may_share is not None and not may_share(other, chain.path_in(other, path), mine):
                continue        # no common symbol, told without parsing the other's texts
            theirs = symbols(other, chain.path_in(other, path))
            if theirs is None:
                return f"{path} (file) like {short(other.sha)}"
            common = (mine & theirs) - {TOP_LEVEL}
            if common:
                return f"{path} ({', '.join(sorted(common)[:3])}) like {short(other.sha)}"
    return None


def divergent_path_hits(commit: CommitInfo, areas: Sequence, memo: dict) -> list[tuple[str, str]]:
    """``[(area name, path)]``: the divergent areas whose globs match a path of ``commit``.
    ``memo`` caches ``(area name, path) -> bool`` across commits."""
    out = []
    for a in areas:
        if not getattr(a, "divergent", False):
            continue
        for p in sorted(commit.paths):
            k = (a.name, p)
            if k not in memo:
                memo[k] = a.matches_path(p)
            if memo[k]:
                out.append((a.name, p))
                break
    return out


def divergent_symbol_hits(commit: CommitInfo, areas: Sequence, symbols: SymbolSource | None,
                          scope: frozenset[str] | None) -> list[tuple[str, str]]:
    """``[(area name, "path (symbol)")]``: divergent areas whose ``symbols`` patterns match a
    symbol ``commit`` touches, looked for only in files of ``scope`` (the files the fork diverges
    on; None = every file). Elsewhere the fork's file equals upstream's at the merge base, so a pick
    cannot collide with fork code there (docs/plan.md, "Symbol scope")."""
    if symbols is None:
        return []
    paths = sorted(p for p in commit.paths if scope is None or p in scope)
    out = []
    patterns = [s for a in areas if getattr(a, "divergent", False) for s in a.symbols]
    may_match = getattr(symbols, "may_match", None)   # a textual pre-check that never says no wrongly
    hopeless = {p for p in paths if may_match is not None and not may_match(commit, p, patterns)}
    for a in areas:
        if not getattr(a, "divergent", False) or not a.symbols:
            continue
        for p in paths:
            syms = frozenset() if p in hopeless else (symbols(commit, p) or frozenset())
            s = next((s for s in sorted(syms) if a.matches_symbol(s)), None)
            if s is not None:
                out.append((a.name, f"{p} ({s})"))
                break
    return out


class Chains:
    """The open chains of one plan walk: in-flight branches first, then plan chains by creation.

    ``cap``: ``chain_size_cap`` (a chain with that many commits, its in-flight ones included,
    takes no more). ``predict_on(commit, tree) -> Prediction`` (optional): predicts a pick onto a
    chain's own running tree; without it chains keep no running tree."""

    def __init__(self, cap: int, predict_on: Callable | None):
        self.cap = cap
        self.predict_on = predict_on
        self.all: list[Chain] = []
        self.by_id: dict[str, Chain] = {}
        self._by_path: dict[str, list[Chain]] = {}     # path -> the chains changing it (creation order)

    def new(self, chain_id: str, order: int, *, deps: Sequence[str] = (), tree: str | None = None,
            in_flight: InFlightBranch | None = None) -> Chain:
        ch = Chain(id=chain_id, order=order, created=len(self.all), in_flight=in_flight,
                   deps=tuple(deps), tree=tree if self.predict_on else None, index=self._by_path)
        ch.closure = frozenset({chain_id}).union(*(self.by_id[d].closure for d in deps))
        self.all.append(ch)
        self.by_id[chain_id] = ch
        return ch

    def copy(self, predict_on: Callable | None) -> "Chains":
        """An independent copy (its chains' lists, maps and sets copied; commits, items and
        in-flight branches are immutable and shared) predicting with ``predict_on``: the state of a
        walk kept to be resumed (``build_plan``'s ``resume``: kept with None, so that it holds no
        predictor)."""
        new = Chains(self.cap, predict_on)
        for ch in self.all:
            c = Chain(id=ch.id, order=ch.order, created=ch.created, items=list(ch.items), commits=list(ch.commits),
                      by_path={p: list(v) for p, v in ch.by_path.items()}, paths_only=ch.paths_only,
                      areas=set(ch.areas), in_flight=ch.in_flight, notes=list(ch.notes), deps=ch.deps,
                      closure=ch.closure, tree=ch.tree, index=new._by_path, moved=dict(ch.moved))
            for p in c.by_path:
                new._by_path.setdefault(p, []).append(c)
            new.all.append(c)
            new.by_id[c.id] = c
        return new

    def sharing(self, commit: CommitInfo) -> list[Chain]:
        """The chains changing a file ``commit`` changes (creation order)."""
        ps = commit.paths
        found = {ch.created: ch for p in ps for ch in self._by_path.get(p, ())}
        for ch in self.all:            # in-flight branches known only by their paths (few)
            if ch.in_flight is None:
                break
            if ch.paths_only and ch.created not in found and not ps.isdisjoint(ch.paths_only):
                found[ch.created] = ch
        return [found[k] for k in sorted(found)]

    def follow_renames(self, commit: CommitInfo) -> None:
        """The chains changing a file ``commit`` renames follow it to its new path (asked for
        every commit of the walk, before its links: a later change at the new path lands after
        the chains that changed the file at the old one)."""
        for f in commit.files:
            if f.status.startswith("R") and f.old_path and f.old_path != f.path:
                for ch in list(self._by_path.get(f.old_path, ())) + [
                        ch for ch in self.all if ch.in_flight is not None and f.old_path in ch.paths_only]:
                    ch.follow(f.old_path, f.path)

    def area_tail(self, area: str) -> Chain | None:
        """The newest chain carrying divergent area ``area`` (a commit touching the area lands after it)."""
        return next((ch for ch in reversed(self.all) if area in ch.areas), None)

    def minimal(self, ids: Iterable[str]) -> tuple[str, ...]:
        """``ids`` without those another of them already lands after; in upstream order."""
        ids = set(ids)
        keep = [i for i in ids if not any(i != j and i in self.by_id[j].closure for j in ids)]
        return tuple(sorted(keep, key=lambda i: (self.by_id[i].order, i)))

    def place(self, commit: CommitInfo, links: list[tuple[Chain, str]], strong: set[str], prefix: str,
              conflicts: tuple[str, ...], new_id: str, order: int, clean_tree: str | None,
              is_strong: Callable[[Chain], bool] | None = None, older: frozenset[str] = frozenset()) -> Chain:
        """Put ``commit`` into a chain that lands after every chain of ``links`` (see the module
        docstring), or into a new chain ``new_id`` depending on them. ``links``: ``(chain, phrase)``,
        the phrase saying why (``follows chain-…, which changes F``); the item's reason is
        ``prefix`` + the phrase of the chain it joins (else of its first link). ``conflicts``: its
        predicted conflicts on the plan's running tree; ``clean_tree``: the tree of a clean pick
        there (a new chain's running tree). ``is_strong(chain)``: asked, only where the answer
        changes the placement, whether a link not in ``strong`` is strong (symbols are costly).
        ``older``: ids of open chain branches carrying picks newer than ``commit`` (a decision on
        it lifted after they were published): it never joins them — apply would pick it after
        those picks — but lands after them, and its reason says it is out of upstream order.
        Returns the chain."""
        need = {ch.id for ch, _ in links}
        phrase = {}
        for ch, text in links:
            phrase.setdefault(ch.id, text)
        ordered = sorted({id(ch): ch for ch, _ in links}.values(), key=lambda ch: (ch.in_flight is None, ch.order))
        reason = prefix + phrase[ordered[0].id]
        full = [ch for ch in ordered if (ch.id in strong or ch.deps) and ch.extendable and ch.size() >= self.cap]
        target, pre = None, None
        stacked = [ch for ch in self.all if ch.deps and ch.size() < self.cap and need <= ch.closure]
        newest = max(stacked, key=lambda ch: ch.created) if stacked else None
        eligible = [ch for ch in ordered if ch.extendable and ch.id not in older and ch.size() < self.cap
                    and need <= ch.closure]
        if eligible == [newest]:
            is_strong = None          # step 3 picks the same chain: no need to ask for symbols
        for ch in eligible:                                  # 1. the strongly linked chain itself
            if ch.id in strong or (is_strong is not None and is_strong(ch)):
                target = ch
                break
        if target is None and self.predict_on:                # 2. a chain whose running tree takes it cleanly
            for ch in ordered:
                if ch.tree and ch.extendable and ch.id not in older and ch.size() < self.cap and need <= ch.closure:
                    p = self.predict_on(commit, ch.tree)
                    if p.outcome in ("clean", "empty"):
                        target, pre = ch, p
                        break
        if target is None:                                    # 3. the newest stacked chain covering them
            target = newest
        if full and target is not None and target.id in need:
            full = []
        suffix = "".join(f"; {ch.label} is full (cap {self.cap})" for ch in full)
        suffix += "".join(f"; older than the picks of {ch.label}: not appended after them, lands after them out of "
                          "upstream order" for ch in ordered if ch.id in older)
        if target is None:
            deps = self.minimal(need)
            ch = self.new(new_id, order, deps=deps, tree=clean_tree)
            ch.add(commit, PlanItem(commit.sha, reason + suffix + f"; stacked on {', '.join(deps)}",
                                    conflicts))
            return ch
        if target.id in need:
            reason = prefix + phrase[target.id]
        else:
            suffix += f"; in {target.id}, stacked on {', '.join(target.deps)}"
        if target.tree and self.predict_on:
            p = pre or self.predict_on(commit, target.tree)
            if p.outcome == "clean":
                target.tree = p.result_tree
                suffix, conflicts = suffix + "; picks cleanly after the chain's earlier picks", ()
                reason = reason.replace("predicted cherry-pick conflicts in ", "predicted conflicts without the chain in ", 1)
            elif p.outcome == "empty":
                suffix, conflicts = suffix + "; its pick would be empty after the chain's earlier picks", ()
            elif p.outcome == "conflict":
                target.tree = None
                suffix += f"; predicted cherry-pick conflicts in {files_text(p.conflicts)} after the chain's earlier picks"
                conflicts = p.conflicts
            else:
                target.tree = None
        target.add(commit, PlanItem(commit.sha, reason + suffix, conflicts))
        return target


def expand(sha: str, lookup: Mapping[str, CommitInfo]) -> str | None:
    if len(sha) == 40:
        return sha
    found = [s for s in lookup if s.startswith(sha)]
    return found[0] if len(found) == 1 else None
