"""Benchmark and agreement check: symbols by top-level parts against whole-file parses, on real history.

``SymbolIndex`` parses Python, MLIR and C++ one top-level part at a time (``bot/plan/symbols.py``,
``top_level_parts``). This walks ``--count`` first-parent commits of ``--ref`` (oldest first, as a
plan asks), and for every changed file of those languages computes the symbols the change touches
twice: with a part-parsing index and with a whole-file index (incremental re-parses, as before
parts). It prints how many answers agree, each disagreement (commit, path, both answers), and the
CPU time of each index per language, measured in the same run (two indexes, alternating per file).

    PYTHONPATH=. .venv/bin/python bench/bench_symbol_parts.py \\
        --repo /work/.mirror/facebookexperimental+triton/repo --ref a4ce9c2a2 --count 2000
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pygit2  # noqa: E402

from bot.git import repo as gitio  # noqa: E402
from bot.plan.symbol_index import SymbolIndex  # noqa: E402
from bot.plan.symbols import language_for  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--ref", default="HEAD")
    ap.add_argument("--count", type=int, default=2000, help="first-parent commits back from --ref")
    ap.add_argument("--langs", default="python,mlir,cpp")
    ap.add_argument("--show", type=int, default=20, help="disagreements printed")
    args = ap.parse_args(argv)
    langs = set(args.langs.split(","))
    repo = pygit2.Repository(args.repo)
    tip = str(repo.revparse_single(args.ref).peel(pygit2.Commit).id)
    shas = gitio.rev_list(repo, tip, first_parent=True)[-args.count:]
    infos = gitio.commit_infos(repo, shas, renames=False, git_dir=args.repo)
    commits = [infos[s] for s in shas]
    parts, whole = SymbolIndex(repo, parts=True), SymbolIndex(repo, parts=False)
    cpu: dict[tuple[str, str], float] = collections.defaultdict(float)
    n = collections.Counter()
    differ = []
    load0 = os.getloadavg()[0]
    for c in commits:
        for fc in c.files:
            lang = language_for(fc.path)
            if lang not in langs:
                continue
            got = {}
            order = (parts, whole) if n[lang] % 2 else (whole, parts)     # alternate who goes first
            for idx in order:
                c0 = time.process_time()
                got[idx.parts] = idx.file_symbols(c, fc)
                cpu[(lang, "parts" if idx.parts else "whole")] += time.process_time() - c0
            n[lang] += 1
            if got[True] != got[False]:
                differ.append((c.sha, fc.path, got[False], got[True]))
    total = sum(n.values())
    print(f"{len(commits)} first-parent commits of {args.ref} ({tip[:12]}); {total} file changes in "
          f"{', '.join(sorted(langs))}; load {load0:.2f} -> {os.getloadavg()[0]:.2f}")
    print(f"agree: {total - len(differ)} / {total}; differ: {len(differ)}")
    for lang in sorted(n):
        w, p = cpu[(lang, "whole")], cpu[(lang, "parts")]
        print(f"  {lang}: {n[lang]} changes; whole-file {w:.2f} s CPU, parts {p:.2f} s CPU ({p / w:.2f}x)"
              if w else f"  {lang}: {n[lang]} changes")
    print(f"parses: whole-file index {whole.parses} ({whole.incremental_parses} incremental); parts index "
          f"{parts.parses} ({parts.part_parses} of parts)")
    for sha, path, w, p in differ[:args.show]:
        fmt = lambda s: "None" if s is None else ", ".join(sorted(s)[:6]) + (" …" if len(s) > 6 else "")  # noqa: E731
        print(f"  {sha[:12]} {path}\n    whole-file: {fmt(w)}\n    parts:      {fmt(p)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
