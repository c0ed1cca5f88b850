"""Symbols per ``(commit, path)`` (edge): blobs through pygit2, trees through tree-sitter, cached.

The pure extraction lives in ``bot/plan/symbols.py``; this module adds reading, a parse cache with
incremental re-parsing, and the store-backed result cache (table ``plan_symbols``).
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from functools import lru_cache

from cachetools import LRUCache

from bot.model import CommitInfo, FileChange
from bot.plan import store as plan_store
from bot.plan.store import SYMBOLS_VERSION
from bot.plan.symbols import (
    PART_SHARE,
    PART_SHARE_FRESH,
    TOP_LEVEL,
    language_for,
    may_share_symbols,
    parser_for,
    reparse,
    symbols_of_change,
)

#: bump when symbol extraction changes meaning (cached rows of other versions are ignored)


#: the default of :class:`SymbolIndex`'s ``parts`` (benchmarks compare the two ways)
PARTS = True


class SymbolIndex:
    """Symbols per ``(commit, path)`` read through a pygit2 repository, cached in memory and,
    given a :class:`~bot.store.Store`, in its ``plan_symbols`` table (immutable per commit).

    ``repo`` must hold the commits' objects. Missing blobs (partial snapshots) give None for that
    file (the planner then works at file level), never an exception."""

    store_empty = False     # True: the store held no symbols when this index opened (skip lookups)

    def __init__(self, repo, tree_cache_size: int = 64, store=None, parts: bool | None = None):
        self.repo = repo
        # parse Python, MLIR and C++ by top-level parts (symbols.top_level_parts); None: PARTS
        self.parts = PARTS if parts is None else parts
        self.store = store
        if store is not None:
            store.migrate()
            if not plan_store.has_symbols(store):
                self.store_empty = True   # a cold cache: rows are only written (by flush), never read
        self._cache: dict[tuple[str, str], frozenset[str] | None] = {}
        self._loaded: set[str] = set()          # commits whose stored symbols are all in _cache/_raw (preload)
        self._raw: dict[tuple[str, str], str | None] = {}    # preloaded rows, JSON not yet decoded
        self._no_match: dict[str, set[tuple[str, str]]] = {}   # patterns digest -> (commit, path) pre-checked out
        self._new_no_match: list[str] = []      # plan_prechecks keys not yet written
        self._pending: list[dict] = []          # rows not yet written to the store (see flush)
        self._trees: LRUCache[tuple, tuple[bytes, object]] = LRUCache(max(1, tree_cache_size))
        self._parts: LRUCache[tuple, tuple[bytes, object]] = LRUCache(max(1, 4 * tree_cache_size))
        self._blobs: LRUCache[object, bytes | None] = LRUCache(max(1, tree_cache_size))   # blob id -> text
        self._commit_trees: dict[str, object] = {}    # commit sha -> its tree (a lookup costs ~0.1 ms)
        # reads of objects the repository lacks (a partial clone, a snapshot): symbols computed
        # without them are kept for this run but never stored, since they describe what the
        # repository lacked, and a plan after the blobs are fetched must read the real texts
        self.missing_reads = 0
        self._unreadable: set = set()
        self.parsed_files = 0        # file changes whose symbols were computed
        self.parses = 0              # tree-sitter parses run (a blob parsed once serves both sides)
        self.symbol_cpu = 0.0        # CPU seconds computing symbols (blob reads, parses, lookups; benchmarks)
        self.incremental_parses = 0  # of which incremental (from another version of the file)
        self.part_parses = 0         # of which of one top-level part of a file (symbols.top_level_parts)
        self.incremental = True
        self._last: dict[tuple[str, str], tuple[bytes, object]] = {}
        self._near: dict[tuple[str, str], list[tuple[float, bytes, object]]] = {}   # recent versions, by time

    def _parse(self, src: bytes, lang: str, path: str | None = None, when: float | None = None):
        """A parsed tree's root for ``src``: from a small LRU keyed by content (the old side of
        one commit is usually the new side of the previous commit to that file), else parsed
        *incrementally* from another version of ``path`` (tree-sitter reuses every subtree the
        edits between the two versions leave alone) — of the last few parsed, the one nearest in
        time to ``when`` (a commit time: a share check walks back and forth between a new commit
        and older chain commits; nearer versions differ less), else the last parsed — else
        parsed afresh. Any base gives the same tree; only the cost differs."""
        key, tree = _by_content(self._trees, src, lang)     # a hit is the newest entry now
        if tree is None and path:
            # the same text parsed before for this path and pushed out of the LRU since (the old
            # side of a commit is the new side of the previous commit to the file): no parse
            tree = next((v[2] for v in self._near.get((path, lang), ()) if v[1] is src or v[1] == src), None)
            if tree is None and (path, lang) in self._last and self._last[(path, lang)][0] == src:
                tree = self._last[(path, lang)][1]
            if tree is not None:
                self._trees[key] = (src, tree)
        if tree is None:
            last = self._last.get((path, lang)) if path else None
            near = self._near.get((path, lang)) if when is not None and path else None
            if near:
                last = min(near, key=lambda v: abs(v[0] - when))[1:]
            if last is not None and self.incremental:
                tree = reparse(parser_for(lang), last[0], last[1], src)
                self.incremental_parses += 1
            else:
                tree = parser_for(lang).parse(src)
            self.parses += 1
            self._trees[key] = (src, tree)
        if path:
            self._last[(path, lang)] = (src, tree)
            if when is not None:
                near = self._near.setdefault((path, lang), [])
                if all(v[1] is not src for v in near):
                    near.append((when, src, tree))
                    if len(near) > 6:
                        near.pop(0)
        return tree.root_node

    def _part_share(self, src: bytes, lang: str, path: str) -> float:
        """How small a share of ``src`` its changed parts must be for a parse by parts
        (``symbols._part_symbols``): :data:`~bot.plan.symbols.PART_SHARE` when a tree of this text or an
        earlier version of ``path`` is at hand (a re-parse of the whole file from it costs little),
        else :data:`~bot.plan.symbols.PART_SHARE_FRESH` (the whole file would be parsed from scratch,
        which costs more than parsing most of it by parts). Either way the symbols are the same."""
        if (path, lang) in self._last or _by_content(self._trees, src, lang)[1] is not None:
            return PART_SHARE
        return PART_SHARE_FRESH

    def _parse_part(self, text: bytes, lang: str):
        """A parsed tree's root for one top-level part of a file (``symbols.top_level_parts``):
        parsed afresh (a part is small), kept by content (the old side of a commit is the new
        side of the previous commit to the file, and most parts of a file do not change)."""
        key, tree = _by_content(self._parts, text, lang)
        if tree is not None:
            return tree.root_node
        tree = parser_for(lang).parse(text)
        self.parses += 1
        self.part_parses += 1
        self._parts[key] = (text, tree)
        return tree.root_node

    def _blob(self, commit_sha: str, path: str) -> bytes | None:
        """The text of ``path`` at ``commit_sha`` (None when absent or unreadable). Texts are
        cached by blob id (a commit's old side is an earlier commit's new side): the same bytes
        object then also hits the parse cache without hashing the text again."""
        try:
            tree = self._commit_trees.get(commit_sha)
            if tree is None:
                tree = self._commit_trees[commit_sha] = self.repo.get(commit_sha).tree
            entry = tree[path]
            oid = entry.id
        except (KeyError, AttributeError, ValueError):
            return None
        except Exception:   # pygit2.GitError for missing objects
            self.missing_reads += 1
            return None
        if oid in self._blobs:
            data = self._blobs[oid]
            if data is None and oid in self._unreadable:
                self.missing_reads += 1
            return data
        try:
            # read through the tree's entry: half the CPU of ``repo[oid]`` (a prefix lookup) on Triton
            data = entry.data
        except (AttributeError, ValueError):    # no blob (a gitlink, a folder)
            data = None
        except Exception:   # KeyError or pygit2.GitError: the tree names a blob the repository lacks
            data = None
            self._unreadable.add(oid)
            self.missing_reads += 1
        self._blobs[oid] = data
        return data

    def may_match(self, commit: CommitInfo, path: str, patterns) -> bool:
        """False only when no symbol ``commit`` touches in ``path`` can match any regex of
        ``patterns`` (a cheap, exact pre-check before a parse, used for divergent-area symbol
        patterns). Sound for patterns that can match word characters only (literals, ``\\d``,
        ``\\w``, groups, alternations, quantifiers, ``^``/``$``/``\\b`` anchors): a match then
        lies inside one component of the qualified name, and every component is a substring of
        the old or new text of the file (or ``<anonymous>`` / ``<top-level>``); the pattern with its
        anchors removed must then match that text. Other patterns, unsupported languages, missing
        blobs or non-UTF-8 text: True (ask the parser)."""
        patterns = tuple(patterns)
        relaxed = _relaxed_any(patterns)
        if relaxed is None or self._known(commit.sha, path):
            return True             # (known symbols: a lookup is cheaper than the pre-check)
        if relaxed is False:
            return False
        d = _patterns_digest(patterns)
        out = self._no_match.setdefault(d, set())
        if (commit.sha, path) in out:
            return False
        if self._may_match(commit, path, relaxed):
            return True
        out.add((commit.sha, path))
        if self.store is not None:
            self._new_no_match.append(f"{d}:{commit.sha}:{path}")
        return False

    def _may_match(self, commit: CommitInfo, path: str, relaxed) -> bool:
        """:meth:`may_match`'s textual test (its blob reads and searches)."""
        fc = next((f for f in commit.files if path in f.paths), None)
        if fc is None or language_for(fc.path) is None:
            return True
        texts = ["<anonymous>\n<top-level>"]
        for sha, pth, absent in ((commit.parents[0] if commit.parents else None, fc.old_path or fc.path, fc.status == "A"),
                                 (commit.sha, fc.path, fc.status == "D")):
            if absent or sha is None:
                continue
            data = self._blob(sha, pth)
            if data is None:
                return True
            try:
                texts.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                return True
        return any(_search_any(relaxed, t) for t in texts)

    def may_share(self, commit: CommitInfo, path: str, names) -> bool:
        """False only when the symbols ``commit`` touches in ``path`` (``self(commit, path)``) are a
        set holding none of ``names`` but :data:`~bot.plan.symbols.TOP_LEVEL`: known symbols are
        looked at, else (not computed yet, or unknown) the texts are searched without a parse
        (:func:`~bot.plan.symbols.may_share_symbols`, which never says False wrongly) — the same
        answer whether or not the symbols are cached, so a re-plan equals a plan from scratch."""
        fc = next((f for f in commit.files if path in f.paths), None)
        if fc is None:
            return True
        if self._known(commit.sha, fc.path):
            got = self._cache[(commit.sha, fc.path)]
            if got is not None:
                return any(n in got for n in names if n != TOP_LEVEL)
            # unknown symbols (a C++ parse in error there, a text too large): the text search
            # answers as it does before any parse, so a plan is the same whatever is cached
        c0 = time.process_time()
        old, new = self._texts(commit, fc)
        out = may_share_symbols(fc, old, new, names)
        self.symbol_cpu += time.process_time() - c0
        return out

    def preload(self, commits, patterns=()) -> None:
        """Read the stored symbols of every file of ``commits`` (and the pre-check results for
        ``patterns``) in bulk: a re-plan asks for many of them, one query each otherwise."""
        if self.store is None:
            return
        todo = [c for c in commits if c.sha not in self._loaded]
        keys = [f"{c.sha}:{p}" for c in todo for p in sorted(c.paths)]
        if not self.store_empty and keys:
            for k, v in plan_store.symbols_rows(self.store, keys).items():
                sha, path = k.split(":", 1)
                self._raw[(sha, path)] = v          # decoded when asked (most are never asked)
        self._loaded.update(c.sha for c in todo)
        if patterns and keys:
            d = _patterns_digest(tuple(patterns))
            found = plan_store.prechecks_of(self.store, [f"{d}:{k}" for k in keys])
            got = self._no_match.setdefault(d, set())
            for k in found:
                _, sha, path = k.split(":", 2)
                got.add((sha, path))

    def _known_here(self, sha: str, path: str) -> bool:
        """Whether the symbols of ``(sha, path)`` are in memory (decoded or preloaded); no query."""
        return (sha, path) in self._cache or (sha, path) in self._raw

    def _known(self, sha: str, path: str) -> bool:
        """Whether the symbols of ``(sha, path)`` are cached (memory or store); loads a store row."""
        if (sha, path) in self._cache:
            return True
        if (sha, path) in self._raw:
            v = self._raw.pop((sha, path))
            self._cache[(sha, path)] = None if v is None else frozenset(json.loads(v))
            return True
        if self.store is None or self.store_empty or sha in self._loaded:
            return False
        row = plan_store.symbols_row(self.store, f"{sha}:{path}")
        if row is not None:
            self._cache[(sha, path)] = None if row["symbols"] is None else frozenset(json.loads(row["symbols"]))
        return row is not None

    def _texts(self, commit: CommitInfo, fc: FileChange) -> tuple[bytes | None, bytes | None]:
        """``(old, new)``: the texts of ``fc`` before and after ``commit`` (None for the side of an
        added or deleted file, an unreadable blob, or a language without a parser: none is read)."""
        old = new = None
        if language_for(fc.path) is not None:
            if fc.status != "A" and commit.parents:
                old = self._blob(commit.parents[0], fc.old_path or fc.path)
            if fc.status != "D":
                new = self._blob(commit.sha, fc.path)
        return old, new

    def file_symbols(self, commit: CommitInfo, fc: FileChange) -> frozenset[str] | None:
        """Symbols ``fc`` of ``commit`` touches (see :func:`symbols_of_change`), or None."""
        key = (commit.sha, fc.path)
        if self._known(*key):                   # memory, else a store row (loaded into memory)
            return self._cache[key]
        c0 = time.process_time()
        misses = self.missing_reads
        old, new = self._texts(commit, fc)
        whole = self.missing_reads == misses
        if language_for(fc.path) is not None:
            self.parsed_files += 1
        when = float(commit.committer_time)
        res = symbols_of_change(fc, old, new, parse=lambda src, lg: self._parse(
            src, lg, fc.path, when - 0.5 if src is old else when), parse_part=self._parse_part if self.parts else None,
            part_share=lambda src, lg: self._part_share(src, lg, fc.path))
        self._cache[key] = res
        if self.store is not None and whole:
            self._pending.append({"key": f"{commit.sha}:{fc.path}", "version": SYMBOLS_VERSION,
                                  "symbols": None if res is None else json.dumps(sorted(res))})
        self.symbol_cpu += time.process_time() - c0
        return res

    def prefetch(self, items, workers: int = 2, min_parallel: int = 64) -> int:
        """Compute the symbols of many ``(commit, file change)`` pairs up front (the planner does
        this when divergent areas have symbol patterns: every supported file is then needed).
        Cached answers are read from the store in bulk; the rest is split by path over
        ``workers`` forked processes (each path's versions stay in one process, in order, so
        incremental re-parsing still applies; fewer than ``min_parallel`` pairs stay in this
        process). Returns the number computed."""
        todo = [(c, fc) for c, fc in items if not self._known_here(c.sha, fc.path) and language_for(fc.path)]
        if self.store is not None and not self.store_empty and todo:
            keys = [f"{c.sha}:{fc.path}" for c, fc in todo]
            found = {k: None if v is None else frozenset(json.loads(v))
                     for k, v in plan_store.symbols_rows(self.store, keys).items()}
            for (c, fc), k in zip(todo, keys):
                if k in found:
                    self._cache[(c.sha, fc.path)] = found[k]
            todo = [(c, fc) for c, fc in todo if (c.sha, fc.path) not in self._cache]
        if workers <= 1 or len(todo) < min_parallel:
            for c, fc in todo:
                self.file_symbols(c, fc)
            return len(todo)
        groups: dict[str, list] = {}
        for c, fc in todo:
            groups.setdefault(fc.path, []).append((c, fc))
        chunks: list[list] = [[] for _ in range(workers)]
        for g in sorted(groups.values(), key=len, reverse=True):
            min(chunks, key=len).extend(g)
        import multiprocessing

        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                results = pool.map(_prefetch_worker, [(self.repo.path, ch) for ch in chunks if ch])
        except OSError:                      # no fork here: compute serially
            for c, fc in todo:
                self.file_symbols(c, fc)
            return len(todo)
        for res in results:
            for (sha, path), syms, whole in res:
                self._cache[(sha, path)] = syms
                if self.store is not None and whole:
                    self._pending.append({"key": f"{sha}:{path}", "version": SYMBOLS_VERSION,
                                          "symbols": None if syms is None else json.dumps(sorted(syms))})
        self.parsed_files += len(todo)
        return len(todo)

    def flush(self) -> None:
        """Write the symbols computed since the last flush to the store, in one transaction (the
        store syncs every commit to disk: one write per file would cost a disk flush each)."""
        if self.store is None:
            return
        if self._new_no_match:
            keys, self._new_no_match = self._new_no_match, []
            plan_store.save_prechecks(self.store, keys)
        if not self._pending:
            return
        rows, self._pending = self._pending, []
        plan_store.save_symbols(self.store, rows)

    def __call__(self, commit: CommitInfo, path: str) -> frozenset[str] | None:
        """``symbols(commit, path)``: the planner's symbol source interface."""
        for fc in commit.files:
            if path in fc.paths:
                return self.file_symbols(commit, fc)
        return None


def _by_content(cache, text: bytes, lang: str):
    """``(key, tree or None)``: ``text``'s entry in a parse cache keyed by ``(len, hash, lang)``,
    confirmed by comparing the bytes (the same text, not just the same hash)."""
    key = (len(text), hash(text), lang)
    hit = cache.get(key)
    return key, (hit[1] if hit is not None and hit[0] == text else None)


_WORD_ONLY = re.compile(r"(?:[A-Za-z0-9_|()?*+{},^$]|\\[bdw])*")


@lru_cache(maxsize=256)
def _relaxed(pattern: str):
    """``pattern`` without its ``^``/``$``/``\\b`` anchors, compiled, when it can match word
    characters only (see :meth:`SymbolIndex.may_match`); else None."""
    body = pattern
    flags = re.match(r"\(\?[aiLmsux]+\)", body)
    if flags:
        if set(flags.group(0)[2:-1]) - {"i"}:
            return None
        body = body[flags.end():]
    body = body.replace("(?:", "(")
    if not _WORD_ONLY.fullmatch(body) or body.count("(") != body.count(")"):
        return None
    for a in ("\\b", "^", "$"):
        body = body.replace(a, "")
    try:
        return re.compile(body, re.IGNORECASE if flags else 0)
    except re.error:
        return None


@lru_cache(maxsize=64)
def _relaxed_any(patterns: tuple[str, ...]):
    """The relaxed forms of ``patterns`` as three alternations ``(case-sensitive ones,
    case-insensitive ones, the same lower-cased)`` (each None when empty): lower-cased ASCII text
    is searched case-sensitively, which Python's ``re`` does several times faster than with
    ``IGNORECASE``. False for no patterns; None when one of them has no relaxed form."""
    cs, ci = [], []
    for pat in patterns:
        r = _relaxed(pat)
        if r is None:
            return None
        (ci if r.flags & re.IGNORECASE else cs).append(r.pattern)
    if not cs and not ci:
        return False
    join = lambda ps, flags=0: re.compile("|".join(f"(?:{p})" for p in ps), flags) if ps else None  # noqa: E731
    return join(cs), join(ci, re.IGNORECASE), join([p.lower() for p in ci])


def _search_any(relaxed, text: str) -> bool:
    cs, ci, ci_low = relaxed
    if cs is not None and cs.search(text):
        return True
    if ci is None:
        return False
    return bool(ci_low.search(text.lower()) if text.isascii() else ci.search(text))


def _prefetch_worker(args):
    """In a forked process: symbols for one chunk of ``(commit, file change)`` pairs."""
    from bot.config.objects import open_repository  # lazy: pygit2 loads in the forked worker only

    path, chunk = args
    idx = SymbolIndex(open_repository(path))
    out = []
    for c, fc in chunk:
        misses = idx.missing_reads
        syms = idx.file_symbols(c, fc)
        out.append(((c.sha, fc.path), syms, idx.missing_reads == misses))   # whole: read without a missing object
    return out


@lru_cache(maxsize=64)
def _patterns_digest(patterns: tuple[str, ...]) -> str:
    """A short stable digest of the area symbol patterns (and the symbol version): the key of the
    pre-check's stored answers, which hold only for those patterns."""
    return hashlib.blake2b(json.dumps([SYMBOLS_VERSION, *patterns]).encode(), digest_size=8).hexdigest()
