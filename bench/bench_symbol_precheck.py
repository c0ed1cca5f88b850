"""Benchmark: the shared-symbol pre-check (``symbols.may_share_symbols``) on real pairs of changes —
how often it says "none shared" without a parse, and that it is never wrong (docs/plan.md,
"A Python name's outer definitions" and "A C++ name's enclosing blocks").

For every file of ``--languages`` that a commit among the last ``--commits`` first-parent,
single-parent commits of ``--ref`` modifies, the changes to that file are paired (each with up to
``--partners`` others, drawn with a fixed seed); for each pair ``(A, B)`` the pre-check is asked
whether B's change may share a symbol with A's symbols (``symbols_of_change``), and every "no" is
checked against B's parsed symbols, both as a whole-file parse gives them and as the planner's parse
by top-level parts does (parts up to ``PART_SHARE_FRESH`` of the text, the most the planner parses
that way). Prints the pairs, the "no"s, the wrong "no"s and the pre-check's own CPU; exits 1 on a
wrong one.

    PYTHONPATH=. .venv/bin/python bench/bench_symbol_precheck.py \\
        --repo /work/.mirror/facebookexperimental+triton/repo --ref a4ce9c2a2 --languages python,cpp
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import pygit2  # noqa: E402

from bot.git.repo import commit_info  # noqa: E402
from bot.plan.symbols import PART_SHARE_FRESH, TOP_LEVEL, language_for, may_share_symbols, parser_for, symbols_of_change  # noqa: E402


def by_parts(fc, old: bytes, new: bytes):
    """The symbols of ``fc`` as the planner's parse by top-level parts gives them."""
    return symbols_of_change(fc, old, new, parse_part=lambda text, lang: parser_for(lang).parse(text).root_node,
                             part_share=lambda text, lang: PART_SHARE_FRESH)


def changes_by_path(repo: pygit2.Repository, ref: str, commits: int, languages: set[str]) -> dict[str, list]:
    """``{path: [(FileChange, old text, new text, commit sha)]}`` of the modified files of ``languages``."""
    walker = repo.walk(repo.revparse_single(ref).peel(pygit2.Commit).id, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()
    out: dict[str, list] = defaultdict(list)
    for i, c in enumerate(walker):
        if i >= commits:
            break
        if len(c.parents) != 1:
            continue
        for fc in commit_info(repo, str(c.id), renames=False).files:
            if fc.status == "M" and language_for(fc.path) in languages:
                out[fc.path].append((fc, c.parents[0].tree[fc.path].data, c.tree[fc.path].data, str(c.id)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, help="a repository holding the commits (bare or not)")
    ap.add_argument("--ref", required=True, help="the newest commit; its first-parent history is read")
    ap.add_argument("--commits", type=int, default=2500)
    ap.add_argument("--partners", type=int, default=6)
    ap.add_argument("--languages", default="python", help="comma-separated: python, cpp, mlir, tablegen")
    args = ap.parse_args(argv)
    repo = pygit2.Repository(args.repo)
    t0 = time.perf_counter()
    by_path = changes_by_path(repo, args.ref, args.commits, set(args.languages.split(",")))
    rnd = random.Random(0)
    pairs = no = wrong = 0
    cpu = 0.0
    by_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path, changes in sorted(by_path.items()):
        syms = [symbols_of_change(fc, old, new) for fc, old, new, _ in changes]
        parts: dict[int, frozenset | None] = {}
        for i in range(len(changes)):
            for j in rnd.sample(range(len(changes)), min(args.partners, len(changes))):
                if i == j or syms[i] is None or syms[j] is None:
                    continue
                fc, old, new, sha = changes[j]
                pairs += 1
                by_lang[language_for(path)][0] += 1
                c0 = time.process_time()
                maybe = may_share_symbols(fc, old, new, syms[i])
                cpu += time.process_time() - c0
                if not maybe:
                    no += 1
                    by_lang[language_for(path)][1] += 1
                    if j not in parts:
                        parts[j] = by_parts(fc, old, new)
                    for theirs in (syms[j], parts[j]):
                        if theirs is None or (syms[i] & theirs) - {TOP_LEVEL}:
                            wrong += 1
                            print(f"wrong: {path} {sha[:12]}: {sorted(syms[i])[:4]} against {sorted(theirs or ())[:4]}")
                            break
    langs = ", ".join(f"{lang} {n} pairs, {k} none shared" for lang, (n, k) in sorted(by_lang.items()))
    print(f"{args.ref} ({args.languages}): {len(by_path)} files, {pairs} pairs ({langs}), {no} said none shared, "
          f"{wrong} wrong; pre-check CPU {cpu:.1f} s; {time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.2f}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
