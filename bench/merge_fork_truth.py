"""Days Behind and Backlog of a fork that syncs by *merging* upstream, rebuilt from plain git
(``git log``/``git rev-list`` only; no forksync code), to check ``forksync status --series``.

For each date D (end of day UTC):

* ``U`` = upstream's newest first-parent commit committed by then, ``F`` the fork branch's;
* **frontier** = the newest commit of U's first-parent chain that is an ancestor of F (what the
  fork has merged); Days Behind = (time(U) − time(frontier)) / 86400;
* **holes** = upstream commits of that chain, at or before the frontier, that a fork commit of
  ``F ^U`` (merges included: a PR merge can reland) reverts (``This reverts commit <sha>``) and that are not back: no later fork commit
  reverts that revert, re-picks it (``cherry picked from commit <sha>``) or ``Reapply "<subject>"``s
  it, and upstream's own revert of it is not merged; Backlog = holes (everything else at or
  before the frontier came in by the merge);
* **picks ahead** = fork commits of ``F ^U`` (no merges) that carry the subject of an upstream
  commit newer than the frontier (cherry-picks taken before the merge reaches them).

Usage: python bench/merge_fork_truth.py REPO UPSTREAM_TIP FORK_REF START END STEP_DAYS [--json]
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import date, datetime, timedelta, timezone


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True,
                          errors="replace").stdout


def first_parent(repo: str, tip: str) -> list[tuple[str, int, str, str]]:
    """(sha, committer time, subject, body) newest first."""
    out = []
    for rec in git(repo, "log", "--first-parent", "--format=%H%x01%ct%x01%s%x01%B%x02", tip).split("\x02"):
        rec = rec.strip("\n")
        if rec:
            sha, ct, subj, body = rec.split("\x01", 3)
            out.append((sha, int(ct), subj, body))
    return out


def strip_pr(s: str) -> str:
    return re.sub(r"(\s*\(#\d+\))+\s*$", "", s.strip())


def point(repo: str, up: list, fork: list, cutoff: int) -> dict | None:
    u = next((c for c in up if c[1] <= cutoff), None)
    f = next((c for c in fork if c[1] <= cutoff), None)
    if u is None or f is None:
        return None
    in_f = set(git(repo, "rev-list", f[0]).split())
    chain = [c for c in up if c[1] <= u[1]]
    chain = chain[chain.index(u):]                       # U and older, newest first
    frontier = next((c for c in chain if c[0] in in_f), None)
    fidx = chain.index(frontier)
    at_or_before = {c[0]: c for c in chain[fidx:]}
    newer_subjects = {strip_pr(c[2]): c[0] for c in chain[:fidx]}
    own = []
    for rec in git(repo, "log", "--topo-order", "--format=%H%x01%P%x01%s%x01%B%x02", f[0], "^" + u[0]).split("\x02"):
        rec = rec.strip("\n")
        if rec:
            sha, parents, subj, body = rec.split("\x01", 3)
            own.append((sha, len(parents.split()), subj, body))
    own.reverse()                                         # oldest first
    reverted: dict[str, str] = {}                         # upstream sha -> the fork's revert
    back: set[str] = set()
    for sha, _, subj, body in own:
        for t in re.findall(r"^This reverts commit ([0-9a-f]{7,40})", body, re.M):
            if t in at_or_before:
                reverted[t] = sha
                back.discard(t)
            else:                                         # a revert of the fork's revert: relanded
                back.update(k for k, v in reverted.items() if v.startswith(t))
        for t in re.findall(r"^\(cherry picked from commit ([0-9a-f]{40})\)", body, re.M):
            if t in reverted:
                back.add(t)
        m = re.match(r'^(?:Reapply|Reland)\s+"(.*)"', strip_pr(subj))
        if m:
            for t in reverted:
                if strip_pr(at_or_before[t][2]) == strip_pr(m.group(1)):
                    back.add(t)
    for c in chain[fidx:]:                                # upstream's own revert, merged
        for t in re.findall(r"^This reverts commit ([0-9a-f]{40})", c[3], re.M):
            if t in reverted and c[0] in in_f:
                back.add(t)
    holes = sorted(t for t in reverted if t not in back)
    ahead = [s for s, nparents, subj, _ in own if nparents == 1 and strip_pr(subj) in newer_subjects]
    return {"upstream_tip": u[0], "fork_tip": f[0], "frontier": frontier[0],
            "days_behind": round((u[1] - frontier[1]) / 86400, 2), "backlog": len(holes), "holes": holes,
            "picks_ahead": len(ahead)}


def main(argv: list[str]) -> int:
    repo, up_tip, fork_ref, start, end, step = argv[:6]
    up, fork = first_parent(repo, up_tip), first_parent(repo, fork_ref)
    d, stop = date.fromisoformat(start), date.fromisoformat(end)
    rows = []
    while d <= stop:
        cutoff = int(datetime(d.year, d.month, d.day, tzinfo=timezone.utc).timestamp()) + 86399
        p = point(repo, up, fork, cutoff)
        if p:
            rows.append({"date": d.isoformat(), **p})
        d += timedelta(days=int(step))
    if "--json" in argv:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['date']}  frontier {r['frontier'][:10]}  Days Behind {r['days_behind']:7.2f}  "
                  f"Backlog {r['backlog']:3d}  picks ahead {r['picks_ahead']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
