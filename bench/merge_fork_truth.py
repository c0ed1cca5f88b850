"""Days Behind and Backlog of a fork that syncs by *merging* upstream, rebuilt from plain git
(``git log``/``git rev-list`` only; no forksync code), to check ``forksync status --series``.

For each date D (end of day UTC):

* ``U`` = upstream's newest first-parent commit committed by then, ``F`` the fork branch's;
* **frontier** = the newest commit of U's first-parent chain that is an ancestor of F (what the
  fork has merged); Days Behind = (time(U) − time(frontier)) / 86400;
* **holes** = upstream commits of that chain, at or before the frontier, that a fork commit of
  ``F ^U`` (merges included: a PR merge can reland) reverts (``This reverts commit <sha>``, an
  abbreviation as ``git rev-parse`` resolves it, or the commit's URL on the next line; or
  ``git revert -m 1`` of a fork merge: every commit ``rev-list M^2 ^M^1`` lists) and that are not
  back: no later fork commit reverts that revert (by sha, or ``Revert "<the revert's subject>"``),
  reverts the PR merge that held it, re-picks it (``cherry picked from commit <sha>``,
  ``Upstream-Commit: <sha>``, a subject holding the upstream subject and citing its ``(#N)``
  outside quotes, the same
  ``git patch-id --stable``) or relands it (``Reapply``/``Reland``/``[Reland]`` naming its subject,
  a quoted ``(#N)`` its PR, its PR or its sha; not ``Reland partial``), and upstream's own revert
  of it (``This reverts commit``, ``Reverts owner/repo#<PR>``, or ``Revert "<subject>"`` when it
  names neither, a quoted ``(#N)`` its PR) is not merged; Backlog = holes
  (everything else at or before the frontier came in by the merge).
  These are forksync's own hole rules (docs/core.md) restated in plain git, not an independent
  definition: agreement checks the implementation (ancestry, ordering, the walk), not the rules;
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


_REVERTS = re.compile(r"^This reverts commit(?: |\s*\n<?https?://\S+?/commit/)([0-9a-f]{7,40})", re.M)
FILES: dict[str, frozenset[str]] = {}   # fork commit -> the paths it changes (filled once in main)
_FULL: dict[str, str | None] = {}
_PID: dict[str, str | None] = {}


def full_sha(repo: str, ref: str) -> str | None:
    """``git rev-parse`` of an abbreviated sha: the commit, or None when it is ambiguous or unknown."""
    if len(ref) == 40:
        return ref
    if ref not in _FULL:
        r = subprocess.run(["git", "-C", repo, "rev-parse", "-q", "--verify", ref + "^{commit}"], capture_output=True, text=True)
        _FULL[ref] = r.stdout.strip() if r.returncode == 0 else None
    return _FULL[ref]


def changed_paths(repo: str, *args: str) -> dict[str, frozenset[str]]:
    """``{commit: paths}`` of ``git log --name-only --no-merges args`` (trees only: no blob needed)."""
    out: dict[str, frozenset[str]] = {}
    for rec in git(repo, "log", "--no-merges", "--name-only", "--format=%x02%H", *args).split("\x02")[1:]:
        sha, *paths = rec.split()
        out[sha] = frozenset(paths)
    return out


def upstream_paths(repo: str, sha: str) -> frozenset[str] | None:
    if sha not in FILES:
        FILES.update(changed_paths(repo, "-1", sha))
    return FILES.get(sha)


def patch_id(repo: str, sha: str) -> str | None:
    """``git show <sha> | git patch-id --stable`` (None when a blob is missing from the snapshot)."""
    if sha not in _PID:
        show = subprocess.run(["git", "-C", repo, "show", "--format=", sha], capture_output=True)
        pid = subprocess.run(["git", "-C", repo, "patch-id", "--stable"], input=show.stdout, capture_output=True).stdout.split()
        _PID[sha] = pid[0].decode() if show.returncode == 0 and pid else None
    return _PID[sha]


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
    subj_of = {sha: subj for sha, _, subj, _ in own}
    merge_shas = [sha for sha, n, _, _ in own if n > 1]
    for sha, _, subj, body in own:
        names = [full_sha(repo, t) or t for t in _REVERTS.findall(body)]
        m = re.match(r'^Revert "(Revert ".*")"', strip_pr(subj))     # a squash-merged PR: no sha line
        if m:
            names += [v for v in set(reverted.values()) if strip_pr(subj_of[v]) == strip_pr(m.group(1))]
        for t in names:
            merge = next((x for x in merge_shas if x.startswith(t)), None)
            brought = git(repo, "rev-list", merge + "^2", "^" + merge + "^1").split() if merge else []
            if t in at_or_before:
                reverted[t] = sha
                back.discard(t)
            elif brought:                                 # git revert -m 1 <merge>: what it brought is out
                for b in brought:
                    if b in at_or_before:
                        reverted[b] = sha
                        back.discard(b)
                back.update(k for k, v in reverted.items() if v in brought)   # the PR merge held a revert
            else:                                         # a revert of the fork's revert: relanded
                back.update(k for k, v in reverted.items() if v.startswith(t))
        for t in re.findall(r"^\(cherry picked from commit ([0-9a-f]{40})\)|^Upstream-Commit: ([0-9a-f]{40})", body, re.M):
            t = t[0] or t[1]
            if t in reverted:
                back.add(t)
        m = re.match(r'^(?:\[Reland\]|(?:Reapply|Reland)\b)\s*(.*)$', strip_pr(subj), re.I)
        if m and not m.group(1).lower().startswith("partial"):     # the fork's own reland
            rest = m.group(1).strip()
            for t in reverted:
                pr = re.search(r"\(#(\d+)\)\s*$", at_or_before[t][2])
                quoted = re.search(r"\(#(\d+)\)\s*$", rest.strip('"'))     # names which commit of those words
                if (strip_pr(at_or_before[t][2]).lower() == strip_pr(rest.strip('"')).lower()
                        and not (quoted and pr and quoted.group(1) != pr.group(1))
                        or (pr and pr.group(1) in re.findall(r"#(\d+)\b", rest))
                        or any(t.startswith(h) for h in re.findall(r"\b[0-9a-f]{7,40}\b", body))):
                    back.add(t)
        for t, v in reverted.items():                     # re-picked: the upstream subject and PR, or its patch
            us = at_or_before[t][2]
            pr = re.search(r"\(#(\d+)\)\s*$", us)
            # the PR cited outside quotes: 'Reland partial "X (#9668)" (#6552)' cites only its own #6552
            if v != sha and ((pr and f"#{pr.group(1)}" in re.sub(r'"[^"]*"', " ", subj) and strip_pr(us).lower() in subj.lower())
                             or (FILES.get(sha) and FILES[sha] == upstream_paths(repo, t)
                                 and patch_id(repo, sha) and patch_id(repo, sha) == patch_id(repo, t))):
                back.add(t)
    pos = {c[0]: i for i, c in enumerate(chain)}          # newest first
    for c in chain[fidx:]:                                # upstream's own revert, merged
        named = re.findall(r"^This reverts commit ([0-9a-f]{40})", c[3], re.M)
        prs = re.findall(r"^Reverts [\w.-]+/[\w.-]+#(\d+)\b", c[3], re.M)     # GitHub's revert button
        m = re.match(r'^Revert "(.*)"', c[2])
        # the subject alone only when the revert names no commit and no PR, and a (#N) it quotes is the commit's
        alone = m and not prs and not re.search(r"^This reverts commit [0-9a-f]{7,40}", c[3], re.M)
        quoted = re.search(r"\(#(\d+)\)\s*$", m.group(1)) if m else None
        for t in reverted:
            pr = re.search(r"\(#(\d+)\)\s*$", at_or_before[t][2])
            if c[0] in in_f and pos[c[0]] < pos[t] and (
                    t in named or (pr and pr.group(1) in prs)
                    or (alone and strip_pr(m.group(1)).lower() == strip_pr(at_or_before[t][2]).lower()
                        and not (quoted and pr and quoted.group(1) != pr.group(1)))):
                back.add(t)
    holes = sorted(t for t in reverted if t not in back)
    ahead = [s for s, nparents, subj, _ in own if nparents == 1 and strip_pr(subj) in newer_subjects]
    return {"upstream_tip": u[0], "fork_tip": f[0], "frontier": frontier[0],
            "days_behind": round((u[1] - frontier[1]) / 86400, 2), "backlog": len(holes), "holes": holes,
            "picks_ahead": len(ahead)}


def main(argv: list[str]) -> int:
    repo, up_tip, fork_ref, start, end, step = argv[:6]
    up, fork = first_parent(repo, up_tip), first_parent(repo, fork_ref)
    FILES.update(changed_paths(repo, fork_ref, "^" + up_tip))
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
