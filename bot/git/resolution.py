"""Finishing a chain stopped at a conflict (edge, pygit2, in memory): find the conflict commit,
check a resolution pushed on top of it, and fold the two into one pick commit.

A chain that stops at a conflicting pick carries that pick as a *conflict commit*
(``Forksync-Conflict: <upstream sha>``, diff3 markers in the conflicted files, no
``Upstream-Commit:``; written by :func:`bot.git.apply.apply_unit`). A person (or an agent, or a
deterministic resolver) finishes it by adding *resolution commits* directly on top. A commit
with markers must never land — bisection would stop on an unbuildable commit — so this module
folds the conflict commit and the resolution commits that follow it into **one** pick commit:

* parent: the conflict commit's parent (the chain's clean prefix), tree: the resolution's;
* author and author date: the upstream commit's (as every pick);
* message: ``templates/commit/resolved_pick.txt.j2`` — ``[RESOLVED] <upstream subject>`` (the
  fork's own convention for a pick that needed a resolution), the upstream message, a
  ``Conflict Resolution`` block (File / Action / Reason per conflicted file), then
  ``Upstream-Commit:``, one ``Resolved-by:`` per person and ``Forksync-Unit:``.

This is the one documented exception to "never overwrite a person's commits" (docs/github.md,
"Finishing a conflicted chain"): the originals are kept under
``refs/forksync/resolutions/<unit>/<old tip sha12>`` (:func:`keep_ref`) so nothing is lost, and
only commits that *are* a resolution are folded. Anything else on top of the conflict commit
(a merge, a commit touching a file the conflict did not need) makes :func:`check` report a
problem; the unit then waits and says why, and no commit is rewritten.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pygit2

from bot.config.objects import open_repository
from bot.git.apply import COMMITTER, absent_blob, conflicts_of
from bot.git.markers import files_with_markers
from bot.git.repo import AbsentObjectsError, absent_entries
from bot.model import CommitInfo
from bot.templating import render, render_part

CONFLICT_TRAILER = re.compile(r"^Forksync-Conflict:\s*([0-9a-f]{40})\s*$", re.MULTILINE | re.IGNORECASE)
RESOLUTIONS_NS = "refs/forksync/resolutions"

#: How a conflicted file was finished, by comparing the resolved file with both sides.
TOOK_UPSTREAM, KEPT_FORK, BY_HAND, DELETED = "took upstream", "kept fork", "merged by hand", "deleted"


@dataclass(frozen=True)
class ConflictStop:
    """An unresolved conflict commit on a branch. ``after``: the commits on top of it, oldest
    first (candidate resolution commits); ``files``: the paths the pick conflicted in (where the
    upstream commit is not in the repository — a clone of the fork alone — ``upstream_known`` is
    False and ``files`` are those the conflict commit left markers in). A file one side renamed
    is named at the path git left it at (the conflict commit's list, which the PR body shows),
    its old path in ``renamed`` (``(path, old path)``); ``touches``: every other path the pick
    may need to change (those old paths, and libgit2's conflicted paths without rename detection)."""

    conflict_commit: str
    upstream_sha: str
    parent: str
    after: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    upstream_known: bool = True
    renamed: tuple[tuple[str, str], ...] = ()
    touches: tuple[str, ...] = ()


@dataclass(frozen=True)
class FileOutcome:
    """One conflicted file of a fold: ``action`` one of :data:`TOOK_UPSTREAM`,
    :data:`KEPT_FORK`, :data:`BY_HAND`, :data:`DELETED`; ``reason`` a person's words (or the
    rule's), shown in the File / Action / Reason block."""

    path: str
    action: str
    reason: str


@dataclass(frozen=True)
class ResolutionCheck:
    """What :func:`check` found. ``problems`` empty = the resolution may be folded."""

    stop: ConflictStop | None
    head: str
    problems: tuple[str, ...] = ()
    marker_files: tuple[str, ...] = ()
    extra_files: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.stop is not None and bool(self.stop.after) and not self.problems


@dataclass(frozen=True)
class Fold:
    """A folded pick: ``commit`` replaces ``stop.conflict_commit`` and ``stop.after``."""

    commit: str
    stop: ConflictStop
    files: tuple[FileOutcome, ...]
    resolved_by: tuple[str, ...] = field(default=())


def _commit(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as e:
        raise ValueError(f"{rev!r} is not a commit in {repo.path}") from e


def _linear(repo: pygit2.Repository, base: str, head: str) -> list[pygit2.Commit]:
    """``base..head`` along first parents, oldest first: from ``head`` back to the merge base of
    the two (``base`` itself when the branch starts there; the fork may have moved on since)."""
    b, c = _commit(repo, base), _commit(repo, head)
    mb = repo.merge_base(b.id, c.id)
    stop = str(mb) if mb is not None else str(b.id)
    out: list[pygit2.Commit] = []
    while str(c.id) != stop:
        out.append(c)
        if not c.parents:
            break
        c = c.parents[0]
    return list(reversed(out))


def conflicted_paths(repo: pygit2.Repository, onto: pygit2.Commit, upstream: pygit2.Commit) -> tuple[str, ...]:
    """Paths where picking ``upstream`` onto ``onto`` conflicts (the 3-way merge ``git
    cherry-pick`` performs, first parent as the ancestor; no rename detection, as the planner)."""
    if not upstream.parents:
        return ()
    idx = repo.merge_trees(upstream.parents[0].tree, onto.tree, upstream.tree, flags=0)
    if idx.conflicts is None:
        return ()
    paths = set()
    for anc, ours, theirs in idx.conflicts:
        for e in (anc, ours, theirs):
            if e is not None:
                paths.add(e.path)
    return tuple(sorted(paths))


def find_stop(repo_path: str, base: str, head: str, *, committer_email: str = COMMITTER[1]) -> ConflictStop | None:
    """The first conflict commit in ``base..head`` (first parents) and the commits after it, or
    None. A conflict commit carries ``Forksync-Conflict: <upstream sha>`` **and** was committed by
    forksync (``committer_email``, :data:`bot.git.apply.COMMITTER`), as
    :func:`bot.git.apply.apply_unit` writes it. A commit with the trailer that someone else
    committed — a person's ``git commit --amend`` of the conflict commit, or a cherry-pick of one,
    both of which keep its message — is theirs: folding it would rewrite a person's commit and
    carry whatever it changes into the pick unchecked (the "only the conflicted files" rule reads
    what follows the conflict commit, never the conflict commit's own changes). The merge gate
    still blocks on such a commit (:func:`bot.git.markers.conflict_commits` reads the trailer
    alone), so it cannot land either. Raises ValueError for an unknown revision,
    :class:`bot.git.repo.AbsentObjectsError` for a blob the upstream commit's merge (or the
    marker scan) reads that the repository lacks (a partial clone)."""
    repo = open_repository(repo_path)
    commits = _linear(repo, base, head)
    for n, c in enumerate(commits):
        m = CONFLICT_TRAILER.search(c.message)
        if not m or c.committer.email.lower() != committer_email.lower():
            continue
        up_sha = m.group(1).lower()
        files: tuple[str, ...] = ()
        after = tuple(str(x.id) for x in commits[n + 1:])
        upstream = None
        try:
            upstream = repo[up_sha].peel(pygit2.Commit)
            files = conflicted_paths(repo, c.parents[0], upstream)
        except (KeyError, ValueError, pygit2.GitError):
            absent = absent_blob(repo, upstream, c.parents[0].tree) if upstream is not None else None
            if absent is not None:
                # the commit is here and a blob its merge reads is not (a partial clone): that
                # blob is what to fetch, where "upstream is not here" would send a person
                # looking for a commit they have
                raise AbsentObjectsError(f"the pick of upstream {up_sha[:12]} onto {str(c.parents[0].id)[:12]}",
                                         [absent], repo_path) from None
            # upstream's objects are not here (a clone of the fork alone): the files the conflict
            # commit left markers in; the check then says it cannot tell which files the conflict needed
            files = tuple(sorted(h.path for h in files_with_markers(repo_path, str(c.parents[0].id), str(c.id))))
            return ConflictStop(str(c.id), up_sha, str(c.parents[0].id), tuple(str(x.id) for x in commits[n + 1:]),
                                files, upstream_known=False)
        # the conflict commit lists the files as git left them: a file one side renamed conflicts
        # at its new path, which libgit2's merge without rename detection (above) names only by
        # its old one — the person resolves, and the fold names, the path git left the markers at
        listed = conflicts_of(repo, c)
        if not listed:
            return ConflictStop(str(c.id), up_sha, str(c.parents[0].id), after, files)
        named = tuple(sorted({f.path for f in listed}))
        renamed = tuple((f.path, f.old_path) for f in listed if f.old_path)
        touches = tuple(sorted((set(files) | {old for _, old in renamed}) - set(named)))
        return ConflictStop(str(c.id), up_sha, str(c.parents[0].id), after, named, renamed=renamed, touches=touches)
    return None


@dataclass(frozen=True)
class AmendedConflict:
    """A commit of a branch that carries ``Forksync-Conflict: <upstream sha>`` but that forksync
    did not commit: a person's ``git commit --amend`` of the conflict commit (or a cherry-pick of
    one), which :func:`find_stop` never takes as a conflict commit and apply still reports as the
    chain's open conflict. ``committer``: ``Name <e-mail>``; ``original``: the conflict commit
    forksync wrote in its place, from the branch's reflog (None where the reflog holds none)."""

    commit: str
    upstream_sha: str
    committer: str
    original: str | None


def find_amended(repo_path: str, base: str, head: str, ref: str, *,
                 committer_email: str = COMMITTER[1]) -> AmendedConflict | None:
    """The first commit of ``base..head`` (first parents) with the ``Forksync-Conflict:`` trailer
    and another committer than forksync, or None; its original looked up in ``ref``'s reflog (a
    commit forksync committed with the same trailer and the same parent). Raises ValueError for an
    unknown revision."""
    repo = open_repository(repo_path)
    for c in _linear(repo, base, head):
        m = CONFLICT_TRAILER.search(c.message)
        if not m or c.committer.email.lower() == committer_email.lower():
            continue
        original = None
        try:
            for entry in repo.references[ref].log():
                o = repo.get(entry.oid_new)
                if (isinstance(o, pygit2.Commit) and o.id != c.id and o.parent_ids[:1] == c.parent_ids[:1]
                        and o.committer.email.lower() == committer_email.lower()
                        and (mo := CONFLICT_TRAILER.search(o.message)) and mo.group(1).lower() == m.group(1).lower()):
                    original = str(o.id)
                    break
        except (KeyError, ValueError, pygit2.GitError):
            pass
        return AmendedConflict(str(c.id), m.group(1).lower(), person(c.committer), original)
    return None


def _changed(repo: pygit2.Repository, a: pygit2.Tree, b: pygit2.Tree) -> set[str]:
    out = set()
    for d in repo.diff(a, b, flags=0).deltas:
        out.add(d.old_file.path)
        out.add(d.new_file.path)
    return out


def check(repo_path: str, base: str, head: str) -> ResolutionCheck:
    """Is ``head`` a resolution of the conflict commit on ``base..head`` that may be folded?

    Rules (each a problem, in this order): there is a conflict commit; something was pushed on
    top of it; no commit after it is a merge; together they change only the files the conflict
    needed (the conflicted paths); no conflict marker remains anywhere in the unit
    (:func:`bot.git.markers.files_with_markers` over ``base..head``: the gate's rule).
    Raises ValueError for an unknown revision, :class:`bot.git.repo.AbsentObjectsError` for
    blobs it reads that the repository lacks."""
    repo = open_repository(repo_path)
    stop = find_stop(repo_path, base, head)
    if stop is None:
        return ResolutionCheck(None, head, ("there is no conflict commit (`Forksync-Conflict:`) on this branch",))
    problems: list[str] = []
    if not stop.after:
        problems.append(f"nothing was pushed on top of the conflict commit `{stop.conflict_commit[:12]}` yet")
    if not stop.upstream_known:
        problems.append(f"upstream commit `{stop.upstream_sha[:12]}` is not in this repository; it cannot check "
                        "which files the conflict needed")
    merges = [s for s in stop.after if len(repo[s].parents) > 1]
    if merges:
        problems.append("merge commits on top of the conflict commit (" + ", ".join(f"`{s[:12]}`" for s in merges)
                        + "): push the resolution as plain commits on the conflict commit")
    extra: list[str] = []
    if stop.after and stop.files:
        changed = _changed(repo, repo[stop.conflict_commit].tree, repo[head].peel(pygit2.Commit).tree)
        extra = sorted(changed - set(stop.files) - set(stop.touches))
        if extra:
            problems.append("the resolution changes files the conflict did not need: " + ", ".join(f"`{p}`" for p in extra)
                            + " — put other changes in a PR of their own")
    hits = files_with_markers(repo_path, base, head)
    marker_files = tuple(sorted({h.path for h in hits}))
    if marker_files and stop.after:
        problems.append("conflict markers remain in " + ", ".join(f"`{p}`" for p in marker_files))
    return ResolutionCheck(stop, head, tuple(problems), marker_files, tuple(extra))


@dataclass(frozen=True)
class CheckoutGaps:
    """The blobs a checkout of a branch at its conflict lacks (a partial clone or snapshot).
    ``needed`` ``(path, sha)``: those resolving it reads — the conflicted paths and those the
    pick may touch, every path the branch changes since its merge base with the fork (the marker
    check reads them), and any missing subtree (an index cannot hold what it never read);
    ``left_out`` ``(path, file mode, blob sha)``: the rest, files the resolution neither reads
    nor may change, which a worktree can leave unwritten while its index keeps them as they are."""

    needed: tuple[tuple[str, str], ...] = ()
    left_out: tuple[tuple[str, int, str], ...] = ()


def checkout_gaps(repo_path: str, base: str, tip: str, stop: ConflictStop) -> CheckoutGaps:
    """Split the blobs the checkout of ``tip`` lacks into :class:`CheckoutGaps` (reads trees only;
    nothing is fetched). ``base``: the fork tip the branch started from, as :func:`check` gets it."""
    repo = open_repository(repo_path)
    t = _commit(repo, tip)
    try:
        absent = list(absent_entries(repo, t.tree))
    except (KeyError, pygit2.GitError):
        return CheckoutGaps()          # its tree itself is absent: the checkout's own error names it
    if not absent:
        return CheckoutGaps()
    mb = repo.merge_base(_commit(repo, base).id, t.id)
    changed = _changed(repo, repo[mb].peel(pygit2.Tree), t.tree) if mb is not None else None
    keep = set(stop.files) | set(stop.touches)
    needed, left = [], []
    for path, mode, sha in absent:
        if path.endswith("/") or path in keep or changed is None or path in changed:
            needed.append((path, sha))
        else:
            left.append((path, mode, sha))
    return CheckoutGaps(tuple(needed), tuple(left))


_BLOCK_FILE = re.compile(r"^\s*[-*]?\s*File:\s*`?([^`\n]+?)`?\s*$", re.IGNORECASE)
_BLOCK_REASON = re.compile(r"^\s*Reason:\s*(.+?)\s*$", re.IGNORECASE)


def reasons_in(message: str) -> dict[str, str]:
    """Pure: ``{path: reason}`` from a message's File / Action / Reason lines (the block the fork
    writes, and ``forksync resolve --continue`` asks for), so a person's words reach the pick."""
    out: dict[str, str] = {}
    current = None
    for line in message.splitlines():
        m = _BLOCK_FILE.match(line)
        if m:
            current = m.group(1).strip()
            continue
        m = _BLOCK_REASON.match(line)
        if m and current:
            out.setdefault(current, m.group(1))
    return out


def outcome(action_ids: tuple[str | None, str | None, str | None]) -> str:
    """Pure: the action for one file from ``(fork side id, upstream side id, resolved id)`` —
    None where the file is absent on that side."""
    ours, theirs, resolved = action_ids
    if resolved is None:
        return DELETED
    if resolved == theirs:
        return TOOK_UPSTREAM
    if resolved == ours:
        return KEPT_FORK
    return BY_HAND


def _entry_id(tree: pygit2.Tree, path: str) -> str | None:
    try:
        return str(tree[path].id)
    except KeyError:
        return None


def person(sig: pygit2.Signature) -> str:
    return f"{sig.name} <{sig.email}>"


def fold(repo_path: str, check_result: ResolutionCheck, upstream: CommitInfo, *, unit_id: str,
         reasons: dict[str, str] | None = None, resolved_by: tuple[str, ...] = (),
         committer: tuple[str, str] = COMMITTER,
         when: int | None = None) -> Fold:
    """Write the folded pick commit (no ref moves; the caller moves the branch with a lease).

    ``check_result`` must be ok (:func:`check`); ``upstream``: the conflicted upstream commit's
    data (author, message); ``reasons``: ``{path: reason}`` given by the person (else taken from
    the resolution commits' File / Reason lines, else "resolved by <author> in <sha12>", or that no
    resolution commit changed the file);
    ``resolved_by``: who resolved (default: the authors of the resolution commits, in order).
    Raises ValueError when the check did not pass."""
    if not check_result.ok:
        raise ValueError("the resolution has problems and is not folded: " + "; ".join(check_result.problems))
    repo = open_repository(repo_path)
    stop = check_result.stop
    assert stop is not None
    head = repo[check_result.head].peel(pygit2.Commit)
    ours_tree = repo[stop.parent].peel(pygit2.Commit).tree
    theirs_tree = repo[stop.upstream_sha].peel(pygit2.Commit).tree
    after = [repo[s].peel(pygit2.Commit) for s in stop.after]
    given = dict(reasons or {})
    from_messages: dict[str, str] = {}
    for c in after:
        for p, r in reasons_in(c.message).items():
            from_messages.setdefault(p, r)
    by = list(resolved_by) or list(dict.fromkeys(_resolver(c, stop.upstream_sha, committer[1]) for c in after))
    old_path = dict(stop.renamed)
    files = []
    for p in stop.files:
        # a renamed file: the side that did not rename it has it at its old path
        sides = [_entry_id(t, p) or (_entry_id(t, old_path[p]) if p in old_path else None) for t in (ours_tree, theirs_tree)]
        action = outcome((sides[0], sides[1], _entry_id(head.tree, p)))
        toucher = next((c for c in reversed(after) if p in _changed(repo, c.parents[0].tree, c.tree)), None)
        # a file no resolution commit changed (a binary or modify/delete conflict holds no
        # marker to remove) was decided by nobody: say so rather than credit the resolvers
        default = (render_part("commit/file_reason.txt.j2", "resolved_by", person=person(toucher.author), sha=str(toucher.id))
                   if toucher else render_part("commit/file_reason.txt.j2", "untouched"))
        files.append(FileOutcome(p, action, given.get(p) or from_messages.get(p) or default))
    msg = render("commit/resolved_pick.txt.j2", subject=upstream.subject, body=_body(upstream.message),
                 sha=upstream.sha, files=files, resolved_by=by, unit_id=unit_id).rstrip("\n") + "\n"
    t = int(when) if when is not None else None
    # the upstream author's zone too, as every pick apply writes keeps it
    zone = repo[stop.upstream_sha].peel(pygit2.Commit).author.offset
    author = pygit2.Signature(upstream.author_name or "unknown", upstream.author_email or "unknown@example.invalid",
                              int(upstream.author_time), zone)
    comm = pygit2.Signature(committer[0], committer[1], t, 0) if t is not None else pygit2.Signature(*committer)
    new = repo.create_commit(None, author, comm, msg, head.tree.id, [pygit2.Oid(hex=stop.parent)])
    return Fold(str(new), stop, tuple(files), tuple(by))


_RULES_TRAILER = re.compile(r"^Forksync-Rules:\s*([0-9a-f]{40})\s*$", re.MULTILINE | re.IGNORECASE)
_RULE_NAME = re.compile(r"\(rule `([^`]+)`\)")


def _resolver(c: pygit2.Commit, upstream_sha: str, committer_email: str) -> str:
    """Who a resolution commit speaks for: forksync's own rule commit on this conflict names the
    rules, as their own folds do (``bot.sync.rules.RULES_BY``), not forksync's identity as a person."""
    m = _RULES_TRAILER.search(c.message)
    if m and m.group(1).lower() == upstream_sha and c.committer.email.lower() == committer_email.lower():
        return f"forksync rules ({', '.join(dict.fromkeys(_RULE_NAME.findall(c.message)))})"
    return person(c.author)


def _body(message: str) -> str:
    parts = message.rstrip("\n").split("\n", 1)
    return parts[1].strip("\n") if len(parts) > 1 else ""


def rebuild_keeps(repo_path: str, old_tip: str, fork_tip: str, rebuilt: str) -> bool:
    """Does ``rebuilt`` (a resolved chain's picks made again on ``fork_tip``) hold exactly what the
    branch at ``old_tip`` holds with the fork's new commits merged in? Per path of the 3-way merge
    of ``old_tip`` and ``fork_tip`` (ancestor: their merge base): where it merges cleanly, the
    rebuilt blob (and mode) is the merge's; where it conflicts, it is ``old_tip``'s — the person's
    resolution, reproduced by the picks now that the fork has what the conflict lacked. Whole
    trees are compared, so a path the rebuild adds or drops beyond that also says no. The rule is
    what keeps a rebuild from dropping any of a person's resolution (docs/github.md, "A resolved
    chain whose dependency landed"). Raises ``KeyError`` for a commit the repository lacks."""
    repo = open_repository(repo_path)
    index = _merged(repo, old_tip, fork_tip)
    if index is None:
        return False
    new = _commit(repo, rebuilt)
    want: dict[str, tuple[str, int]] = {e.path: (str(e.id), e.mode) for e in index}
    if index.conflicts is not None:
        for anc, ours, theirs in index.conflicts:
            path = (ours or theirs or anc).path
            want.pop(path, None)
            if ours is not None:
                want[path] = (str(ours.id), ours.mode)
    have: dict[str, tuple[str, int]] = {}
    for e in _walk(repo, new.tree, ""):
        have[e[0]] = (e[1], e[2])
    return want == have


def merge_conflicts(repo_path: str, ours: str, theirs: str) -> tuple[str, ...]:
    """The paths (sorted) where a 3-way merge of commits ``ours`` and ``theirs`` (ancestor: their
    merge base) conflicts — where merging the fork into a branch (GitHub's update-branch) needs a
    person. All of ``ours``' paths when they share no history. Raises ``KeyError`` for a commit
    the repository lacks."""
    repo = open_repository(repo_path)
    index = _merged(repo, ours, theirs)
    if index is None:
        return tuple(sorted(p for p, _, _ in _walk(repo, _commit(repo, ours).tree, "")))
    return tuple(sorted({(o or t or a).path for a, o, t in index.conflicts or ()}))


def _merged(repo: pygit2.Repository, ours: str, theirs: str) -> pygit2.Index | None:
    """The in-memory 3-way merge of ``ours`` and ``theirs`` on their merge base (None: none)."""
    a, b = _commit(repo, ours), _commit(repo, theirs)
    base_id = repo.merge_base(a.id, b.id)
    if base_id is None:
        return None
    return repo.merge_trees(repo[base_id].peel(pygit2.Tree), a.tree, b.tree)


def _walk(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str):
    """``(path, blob id, mode)`` of every non-tree entry under ``tree``."""
    for e in tree:
        path = prefix + e.name
        if e.type_str == "tree":
            yield from _walk(repo, repo[e.id].peel(pygit2.Tree), path + "/")
        else:
            yield path, str(e.id), e.filemode


def keep_ref(unit_id: str, old_tip: str) -> str:
    """The ref that keeps a branch's commits before a fold: ``refs/forksync/resolutions/<unit>/<sha12>``."""
    return f"{RESOLUTIONS_NS}/{unit_id}/{old_tip[:12]}"


__all__ = ["ConflictStop", "AmendedConflict", "find_amended", "FileOutcome", "ResolutionCheck", "Fold", "find_stop", "check", "fold", "keep_ref",
           "rebuild_keeps", "merge_conflicts",
           "reasons_in", "outcome", "CheckoutGaps", "checkout_gaps", "conflicted_paths", "CONFLICT_TRAILER", "RESOLUTIONS_NS",
           "TOOK_UPSTREAM", "KEPT_FORK", "BY_HAND", "DELETED"]
