"""Git side of conflict resolution (edge: pygit2 in memory, and git's ``merge-file`` on temporary files; no work tree, no push, no merge).

* :func:`conflict_case` — replay an upstream commit onto a fork commit (3-way merge of the
  commit's parent, the fork commit and the upstream commit, as ``git cherry-pick`` does) and
  describe its conflicts as a :class:`~bot.agents.conflict_rails.ConflictCase`; each conflicted
  text file's diff3 merge output comes from :func:`bot.config.merge_file.diff3_text` (git's
  ``merge-file`` on the three texts in a temporary directory: no repository, no ref).
* :func:`build_commit` — rail 5, "the result applies": the merge's own index with the agent's
  files in place of the conflicted entries becomes a real commit object (author = the upstream
  author, trailers ``Upstream-Commit:`` and ``Agent-Resolved: <model> <summary>``).
* :func:`verify_commit` — rail 6, "re-apply": the upstream change is merged again from scratch
  and every path outside the conflicted files must be exactly what that merge produced, and the
  commit's parent must be the fork commit.
* :func:`publish` — moves only the proposal branch (``refs/heads/forksync/chain-…``), with a
  compare-and-swap on its old value; never the fork's default branch.
"""
from __future__ import annotations

import re

import pygit2

from bot.agents.conflict_rails import ConflictCase, ConflictFile, RailViolation, Resolution, ResolvedFile, relabel, trailer_summary
from bot.agents.redact import redact
from bot.config.merge_file import diff3_text
from bot.config.objects import open_repository
from bot.templating import render

BOT_NAME = "forksync"
BOT_EMAIL = "forksync@users.noreply.github.com"


def _blob_text(repo: pygit2.Repository, entry) -> str | None:
    if entry is None:
        return None
    data = repo[entry.id].data
    if b"\0" in data[:8000]:
        raise UnicodeDecodeError("utf-8", data[:1], 0, 1, "binary")
    return data.decode("utf-8")


def _replay(repo: pygit2.Repository, onto: pygit2.Commit, upstream: pygit2.Commit) -> pygit2.Index:
    if len(upstream.parents) != 1:
        raise ValueError(f"upstream commit {upstream.id} has {len(upstream.parents)} parents; "
                         "only single-parent commits are picked")
    return repo.merge_trees(upstream.parents[0].tree, onto.tree, upstream.tree)


def conflict_case(repo_path: str, onto: str, upstream_sha: str,
                  decided: tuple[ResolvedFile, ...] = ()) -> ConflictCase | None:
    """The conflicts of picking ``upstream_sha`` onto ``onto`` (both commit-ish in one repository
    that holds both histories), or None when the pick is clean. ``decided``: files the
    deterministic rules already resolved; they are left out of the agent's files (and of what
    makes a case unsupported: a deletion a rule decided is no obstacle) and carried as
    ``case.decided``. Raises ValueError for a merge commit or an unknown revision."""
    repo = open_repository(repo_path)
    try:
        base = repo.revparse_single(onto).peel(pygit2.Commit)
        up = repo.revparse_single(upstream_sha).peel(pygit2.Commit)
    except (KeyError, ValueError) as e:
        raise ValueError(f"{repo_path}: unknown revision ({e})") from None
    idx = _replay(repo, base, up)
    if idx.conflicts is None:
        return None
    by_rule = {f.path: f for f in decided}
    files: list[ConflictFile] = []
    unsupported: list[str] = []
    conflicted = set()
    for anc, ours, theirs in idx.conflicts:
        path = next(e.path for e in (ours, theirs, anc) if e is not None)
        conflicted.add(path)
        if path in by_rule:
            continue
        if ours is None or theirs is None:
            unsupported.append(f"{path}: deleted on one side and changed on the other")
            continue
        # a link's target or a submodule's commit is no text to merge: an answer would be a link
        # that may leave the work tree, or a commit id no one checked
        kinds = {e.mode for e in (anc, ours, theirs) if e is not None}
        if pygit2.enums.FileMode.COMMIT in kinds:
            unsupported.append(f"{path}: submodule (gitlink) moved on both sides")
            continue
        if pygit2.enums.FileMode.LINK in kinds:
            unsupported.append(f"{path}: symbolic link changed on both sides")
            continue
        try:
            texts = [_blob_text(repo, e) for e in (anc, ours, theirs)]
        except UnicodeDecodeError:
            unsupported.append(f"{path}: binary file")
            continue
        # diff3 style: each block holds the common ancestor's lines (``|||||||``) besides the
        # fork's and upstream's, without which a resolver cannot tell which side changed what;
        # the same function gives the resolve benchmark the text it scores the agent on
        merged = diff3_text(*texts)
        files.append(ConflictFile(path, relabel(merged, str(up.id)), texts[0], texts[1], texts[2]))
    diff = up.parents[0].tree.diff_to_tree(up.tree)
    touched = {p for d in diff.deltas for p in (d.old_file.path, d.new_file.path) if p}
    return ConflictCase(
        upstream_sha=str(up.id), upstream_message=up.message, fork_tip=str(base.id),
        files=tuple(sorted(files, key=lambda f: f.path)),
        clean_paths=tuple(sorted(touched - conflicted)),
        upstream_author=(up.author.name, up.author.email, up.author.time),
        unsupported="; ".join(unsupported),
        decided=tuple(sorted((f for f in decided if f.path in conflicted), key=lambda f: f.path)))


def commit_message(case: ConflictCase, res: Resolution) -> str:
    """The message of a pick an agent resolved (``templates/commit/agent_resolved_pick.txt.j2``):
    the upstream message, then the trailers ``Upstream-Commit:``, ``Resolved-by: forksync rules
    (<rules>)`` when rules decided some of the files, and ``Agent-Resolved:`` (model name reduced
    to ``[\\w.:/-]``, summary one line; neither can add a trailer)."""
    model = re.sub(r"[^\w.:/\-]", "", res.model or "")[:80] or "unknown-model"
    return render("commit/agent_resolved_pick.txt.j2", message=case.upstream_message.rstrip(), sha=case.upstream_sha,
                  rules=list(dict.fromkeys(f.rule for f in case.decided if f.rule)), model=model,
                  summary=trailer_summary(redact(res.summary)))


def build_commit(repo_path: str, case: ConflictCase, res: Resolution) -> str:
    """Rail 5: write the resolved pick as a commit object (no ref moves). Returns its sha.
    Raises :class:`RailViolation` ("result applies") if the index still has conflicts."""
    repo = open_repository(repo_path)
    base = repo[case.fork_tip].peel(pygit2.Commit)
    up = repo[case.upstream_sha].peel(pygit2.Commit)
    idx = _replay(repo, base, up)
    by_path = {f.path: f for f in (*case.decided, *res.files)}
    if idx.conflicts is not None:
        for anc, ours, theirs in list(idx.conflicts):
            entry = ours or theirs or anc
            path = entry.path
            if path not in by_path:
                raise RailViolation("result applies", f"{path} is conflicted but was not resolved")
            del idx.conflicts[path]
            content = by_path[path].content
            if content is None:         # a rule kept or made the deletion
                if path in idx:
                    idx.remove(path)
                continue
            blob = repo.create_blob(content.encode("utf-8"))
            idx.add(pygit2.IndexEntry(path, blob, _picked_mode(anc, ours, theirs)))
    if idx.conflicts is not None:
        raise RailViolation("result applies", "the index still has conflicts after the resolution")
    tree = idx.write_tree(repo)
    name, email, when = case.upstream_author
    # the upstream author's zone too, as every pick apply writes keeps it
    author = pygit2.Signature(name or up.author.name, email or up.author.email, when or up.author.time, up.author.offset)
    committer = pygit2.Signature(BOT_NAME, BOT_EMAIL)
    oid = repo.create_commit(None, author, committer, commit_message(case, res), tree, [base.id])
    return str(oid)


def _picked_mode(anc, ours, theirs) -> int:
    """The file mode a 3-way merge gives (as ``git cherry-pick``): the side that changed it, the
    fork's when both did (or when only one side has the file)."""
    if ours is None or theirs is None:
        return (ours or theirs).mode
    if anc is not None and ours.mode == anc.mode:
        return theirs.mode
    return ours.mode


def _tree_map(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for e in tree:
        path = prefix + e.name
        if e.type_str == "tree":
            out.update(_tree_map(repo, repo[e.id], path + "/"))
        else:
            out[path] = f"{e.filemode:o}:{e.id}"
    return out


def verify_commit(repo_path: str, commit_sha: str, case: ConflictCase) -> None:
    """Rail 6: re-merge the upstream change onto ``case.fork_tip`` and compare, path by path,
    with the commit: every path outside the conflicted files must be identical (content and
    mode), and the commit's only parent must be the fork tip. Raises :class:`RailViolation`."""
    repo = open_repository(repo_path)
    commit = repo[commit_sha].peel(pygit2.Commit)
    if [str(p) for p in commit.parent_ids] != [case.fork_tip]:
        raise RailViolation("result applies", f"commit {commit_sha[:12]} is not a single commit on {case.fork_tip[:12]}")
    base = repo[case.fork_tip].peel(pygit2.Commit)
    up = repo[case.upstream_sha].peel(pygit2.Commit)
    idx = _replay(repo, base, up)
    expected = {e.path: f"{e.mode:o}:{e.id}" for e in idx}   # conflicted paths appear per stage; ignored below
    got = _tree_map(repo, commit.tree)
    conflicted = set(case.all_paths)
    for path in sorted((set(expected) | set(got)) - conflicted):
        if expected.get(path) != got.get(path):
            raise RailViolation("non-conflicting hunks unchanged",
                                f"{path} differs from what the upstream change gives when re-applied")


def publish(repo_path: str, branch: str, commit_sha: str, expected_old: str | None) -> None:
    """Point ``refs/heads/<branch>`` at ``commit_sha`` if it is still at ``expected_old`` (None:
    must not exist). Only ``forksync/…`` branches may be moved. Raises ValueError otherwise."""
    if not branch.startswith("forksync/"):
        raise ValueError(f"refusing to move {branch!r}: agent results go to forksync/… proposal branches only")
    repo = open_repository(repo_path)
    ref = f"refs/heads/{branch}"
    current = repo.references.get(ref)
    now = str(current.target) if current is not None else None
    if now != expected_old:
        raise ValueError(f"{ref} moved: it is at {now}, expected {expected_old}; re-plan the chain")
    if current is None:
        repo.references.create(ref, commit_sha)
    else:
        current.set_target(commit_sha, f"forksync: agent-resolved pick of {commit_sha[:12]}")
