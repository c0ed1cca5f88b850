"""Symbols per ``(commit, path)`` (edge): blobs through pygit2, trees through tree-sitter, cached.

The pure extraction lives in ``bot/symbols.py``; this module adds reading, a parse cache with
incremental re-parsing, and the store-backed result cache (table ``plan_symbols``).
"""
from __future__ import annotations

import hashlib
import json
from collections import OrderedDict

from bot.model import CommitInfo, FileChange
from bot.store import table
from bot.symbols import language_for, parser_for, reparse, symbols_of_change

#: bump when symbol extraction changes meaning (cached rows of other versions are ignored)
SYMBOLS_VERSION = 1
SYMBOLS_TABLE = table("plan_symbols", {"key": str, "version": int, "symbols": str}, pk="key")


class SymbolIndex:
    """Symbols per ``(commit, path)`` read through a pygit2 repository, cached in memory and,
    given a :class:`~bot.store.Store`, in its ``plan_symbols`` table (immutable per commit).

    ``repo`` must hold the commits' objects. Missing blobs (partial snapshots) give None for that
    file (the planner then works at file level), never an exception."""

    def __init__(self, repo, tree_cache_size: int = 64, store=None):
        self.repo = repo
        self.store = store
        if store is not None:
            store.migrate()
        self._cache: dict[tuple[str, str], frozenset[str] | None] = {}
        self._pending: list[dict] = []          # rows not yet written to the store (see flush)
        self._trees: OrderedDict[bytes, object] = OrderedDict()
        self._tree_cache_size = tree_cache_size
        self.parsed_files = 0        # file changes whose symbols were computed
        self.parses = 0              # tree-sitter parses run (a blob parsed once serves both sides)
        self.incremental_parses = 0  # of which incremental (from another version of the file)
        self.incremental = True
        self._last: dict[tuple[str, str], tuple[bytes, object]] = {}

    def _parse(self, src: bytes, lang: str, path: str | None = None):
        """A parsed tree's root for ``src``: from a small LRU keyed by content (the old side of
        one commit is usually the new side of the previous commit to that file), else parsed
        *incrementally* from the last tree parsed for ``path`` (tree-sitter reuses every subtree
        the edits between the two versions leave alone), else parsed afresh."""
        key = hashlib.blake2b(src, digest_size=16).digest() + lang.encode()
        tree = self._trees.get(key)
        if tree is not None:
            self._trees.move_to_end(key)
        else:
            last = self._last.get((path, lang)) if path else None
            if last is not None and self.incremental:
                tree = reparse(parser_for(lang), last[0], last[1], src)
                self.incremental_parses += 1
            else:
                tree = parser_for(lang).parse(src)
            self.parses += 1
            self._trees[key] = tree
            if len(self._trees) > self._tree_cache_size:
                self._trees.popitem(last=False)
        if path:
            self._last[(path, lang)] = (src, tree)
        return tree.root_node

    def _blob(self, commit_sha: str, path: str) -> bytes | None:
        try:
            return self.repo.get(commit_sha).tree[path].data
        except (KeyError, AttributeError, ValueError):
            return None
        except Exception:   # pygit2.GitError for missing objects
            return None

    def file_symbols(self, commit: CommitInfo, fc: FileChange) -> frozenset[str] | None:
        """Symbols ``fc`` of ``commit`` touches (see :func:`symbols_of_change`), or None."""
        key = (commit.sha, fc.path)
        if key in self._cache:
            return self._cache[key]
        if self.store is not None:
            rows = list(self.store.db.query("select symbols from plan_symbols where key = ? and version = ?",
                                            [f"{commit.sha}:{fc.path}", SYMBOLS_VERSION]))
            if rows:
                res = None if rows[0]["symbols"] is None else frozenset(json.loads(rows[0]["symbols"]))
                self._cache[key] = res
                return res
        old = new = None
        if language_for(fc.path) is not None:
            if fc.status != "A" and commit.parents:
                old = self._blob(commit.parents[0], fc.old_path or fc.path)
            if fc.status != "D":
                new = self._blob(commit.sha, fc.path)
            self.parsed_files += 1
        res = symbols_of_change(fc, old, new, parse=lambda src, lg: self._parse(src, lg, fc.path))
        self._cache[key] = res
        if self.store is not None:
            self._pending.append({"key": f"{commit.sha}:{fc.path}", "version": SYMBOLS_VERSION,
                                  "symbols": None if res is None else json.dumps(sorted(res))})
        return res

    def prefetch(self, items, workers: int = 2, min_parallel: int = 64) -> int:
        """Compute the symbols of many ``(commit, file change)`` pairs up front (the planner does
        this when divergent areas have symbol patterns: every supported file is then needed).
        Cached answers are read from the store in bulk; the rest is split by path over
        ``workers`` forked processes (each path's versions stay in one process, in order, so
        incremental re-parsing still applies; fewer than ``min_parallel`` pairs stay in this
        process). Returns the number computed."""
        todo = [(c, fc) for c, fc in items if (c.sha, fc.path) not in self._cache and language_for(fc.path)]
        if self.store is not None and todo:
            keys = [f"{c.sha}:{fc.path}" for c, fc in todo]
            found = {}
            for i in range(0, len(keys), 500):
                chunk = keys[i:i + 500]
                q = ",".join("?" * len(chunk))
                for r in self.store.db.query(f"select key, symbols from plan_symbols where version = ? and key in ({q})",
                                             [SYMBOLS_VERSION, *chunk]):
                    found[r["key"]] = None if r["symbols"] is None else frozenset(json.loads(r["symbols"]))
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
            for (sha, path), syms in res:
                self._cache[(sha, path)] = syms
                if self.store is not None:
                    self._pending.append({"key": f"{sha}:{path}", "version": SYMBOLS_VERSION,
                                          "symbols": None if syms is None else json.dumps(sorted(syms))})
        self.parsed_files += len(todo)
        return len(todo)

    def flush(self) -> None:
        """Write the symbols computed since the last flush to the store, in one transaction (the
        store syncs every commit to disk: one write per file would cost a disk flush each)."""
        if self.store is None or not self._pending:
            return
        rows, self._pending = self._pending, []
        with self.store.lock:
            self.store.db["plan_symbols"].insert_all(rows, pk="key", replace=True, batch_size=500)

    def __call__(self, commit: CommitInfo, path: str) -> frozenset[str] | None:
        """``symbols(commit, path)``: the planner's symbol source interface."""
        for fc in commit.files:
            if path in fc.paths:
                return self.file_symbols(commit, fc)
        return None


def _prefetch_worker(args):
    """In a forked process: symbols for one chunk of ``(commit, file change)`` pairs."""
    import pygit2

    path, chunk = args
    idx = SymbolIndex(pygit2.Repository(path))
    return [((c.sha, fc.path), idx.file_symbols(c, fc)) for c, fc in chunk]
