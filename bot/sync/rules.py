"""Deterministic conflict rules on a live chain, before any agent or person (edge).

When a chain stops at a *fresh* conflict (its conflict commit is not on GitHub yet), the rules of
:mod:`bot.resolve` (``resolve.rules`` in forksync.yml, docs/resolve.md) are asked for each
conflicted file. What they decide becomes a resolution commit on top of the conflict commit, its
message carrying a ``File:`` / ``Action:`` / ``Reason:`` block that names the rule — the same
shape a person's resolution has, so the fold (:func:`bot.git.resolution.fold`) carries it into
the pick's Conflict Resolution block. When the rules decide **every** conflicted file the pick is
folded at once (``Resolved-by: forksync rules (<names>)``) and the chain goes on; otherwise the
rule commit stays on top of the conflict commit and a person (or the agent) finishes only what the
rules declined. Either way the PR stays a draft until L1 is green on its head and needs a
person's approval (the gate's chain rule): the rules propose, the rails decide.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pygit2

from bot.agents.conflict_rails import ResolvedFile
from bot.config.forksync import ForksyncConfig
from bot.config.objects import open_repository
from bot.git import resolution
from bot.git.apply import COMMITTER
from bot.model import CommitInfo
from bot.resolve.replay import chain_memory, memory_from_history, resolve_conflicts
from bot.resolve.rules import Decision, Declined, Memory
from bot.templating import render

RULES_BY = "forksync rules"
#: fresh conflicts the rules may fold in one publish or one ``forksync apply`` (a chain is capped at 25 picks)
MAX_RULE_ROUNDS = 25
#: the rules that read what the fork's earlier resolutions teach (a :class:`Memory`, costly to build)
MEMORY_RULES = frozenset({"rerere", "fork-deleted"})
# the trailer of forksync's rule resolution commit (templates/commit/rule_resolution.txt.j2)
RULES_TRAILER = re.compile(r"^Forksync-Rules:\s*([0-9a-f]{40})\s*$", re.MULTILINE | re.IGNORECASE)
_RULE_LINE = re.compile(r"^File: (?P<path>.+)\nAction: (?P<action>.+)\nReason: (?P<reason>.*) \(rule `(?P<rule>[\w-]+)`\)$",
                        re.MULTILINE)


@dataclass(frozen=True)
class RuleOutcome:
    """What the rules did for one conflict commit. ``decided``: ``(path, Decision)``;
    ``declined``: ``(path, Declined)``; ``commit``: the rule resolution commit on top of the
    conflict commit (None when no rule decided); ``folded``: the pick commit when every file was
    decided and the fold passed its checks."""

    upstream_sha: str
    decided: tuple[tuple[str, Decision], ...] = ()
    declined: tuple[tuple[str, Declined], ...] = ()
    commit: str | None = None
    folded: str | None = None
    problems: tuple[str, ...] = field(default=())


def _mode(tree: pygit2.Tree, path: str) -> int:
    try:
        return tree[path].filemode
    except KeyError:
        return pygit2.enums.FileMode.BLOB


def rule_commit(repo: pygit2.Repository, stop: resolution.ConflictStop, decided: list[tuple[str, Decision]],
                *, committer: tuple[str, str], when: int) -> str:
    """Write the rules' resolution as a commit on top of the conflict commit (no ref moves)."""
    conflict = repo[stop.conflict_commit].peel(pygit2.Commit)
    idx = pygit2.Index()
    idx.read_tree(conflict.tree)
    for path, d in decided:
        if d.deletes:
            if path in idx:
                idx.remove(path)
            continue
        blob = repo.create_blob(d.text.encode("utf-8"))
        idx.add(pygit2.IndexEntry(path, blob, _mode(conflict.tree, path)))
    tree = idx.write_tree(repo)
    msg = render("commit/rule_resolution.txt.j2", upstream_sha=stop.upstream_sha, decided=decided,
                 total=len(stop.files)).rstrip("\n") + "\n"
    sig = pygit2.Signature(committer[0], committer[1], when, 0)
    return str(repo.create_commit(None, sig, sig, msg, tree, [conflict.id]))


def apply_rules(git_dir: str, cfg: ForksyncConfig, *, unit_id: str, base: str, tip: str, upstream: CommitInfo,
                upstream_tip: str, memory: Memory | None, committer: tuple[str, str], when: int) -> RuleOutcome | None:
    """Ask the rules about the conflict commit at ``tip`` (``base..tip`` is the chain's branch).

    ``memory`` is what the fork's landed history teaches (None: no memory rule is configured);
    the chain's own resolved picks below the conflict (``base..`` its parent) are learned on top
    of it (:func:`bot.resolve.replay.chain_memory`), so that a decision a person just made at an
    earlier pick of the chain counts as "the last time". Returns None when ``tip`` is no conflict
    commit; otherwise what the rules did. Never moves a ref: the caller moves the branch
    (compare-and-swap) to ``folded`` or ``commit``. Raises ValueError for an unknown revision."""
    stop = resolution.find_stop(git_dir, base, tip)
    if stop is None or stop.conflict_commit != tip:
        return None
    if memory is not None:
        memory = chain_memory(git_dir, memory, base, stop.parent, upstream_tip, cfg)
    answers = resolve_conflicts(git_dir, stop.parent, stop.upstream_sha, cfg, memory=memory, upstream_tip=upstream_tip)
    decided = [(p, d) for p, d in answers if isinstance(d, Decision) and p in stop.files]
    declined = [(p, d) for p, d in answers if isinstance(d, Declined)]
    # a conflicted path the rules' own replay did not report (another rename pairing) is declined
    seen = {p for p, _ in answers}
    declined += [(p, Declined((), "the rules' replay did not see this file conflict")) for p in stop.files if p not in seen]
    if not decided:
        return RuleOutcome(stop.upstream_sha, (), tuple(declined))
    repo = open_repository(git_dir)
    commit = rule_commit(repo, stop, decided, committer=committer, when=when)
    if declined:
        return RuleOutcome(stop.upstream_sha, tuple(decided), tuple(declined), commit)
    chk = resolution.check(git_dir, base, commit)
    if not chk.ok:       # e.g. a rule kept a side that still holds markers: a person decides
        return RuleOutcome(stop.upstream_sha, tuple(decided), (), commit, problems=chk.problems)
    names = ", ".join(dict.fromkeys(d.rule for _, d in decided))
    folded = resolution.fold(git_dir, chk, upstream, unit_id=unit_id, resolved_by=(f"{RULES_BY} ({names})",),
                             committer=committer, when=when)
    return RuleOutcome(stop.upstream_sha, tuple(decided), (), commit, folded.commit)


def rules_resolution(repo_path: str, stop: resolution.ConflictStop) -> tuple[ResolvedFile, ...] | None:
    """The files forksync's rules decided for the conflict ``stop`` when the only commit on top of
    its conflict commit is forksync's own rule commit (committed by forksync, ``Forksync-Rules:``
    naming the same upstream commit, changing only the files its message names), else None. Each
    file's content is the rule commit's (None: deleted), with the action, reason and rule its
    message gives — so an agent is asked only about the files the rules
    declined, and the rules' answers go into the same pick. Raises KeyError for a missing object."""
    if len(stop.after) != 1:
        return None
    repo = open_repository(repo_path)
    commit = repo[stop.after[0]].peel(pygit2.Commit)
    m = RULES_TRAILER.search(commit.message)
    if not m or m.group(1).lower() != stop.upstream_sha.lower():
        return None
    # only forksync's own commit, changing nothing but the files it names: a person's commit with
    # that message (``git commit --amend`` keeps it) is theirs, and the agent's pick never replaces it
    lines = list(_RULE_LINE.finditer(commit.message))
    if commit.committer.email.lower() != COMMITTER[1].lower() or len(commit.parents) != 1:
        return None
    named = {line.group("path") for line in lines}
    changed = {p for d in repo.diff(commit.parents[0].tree, commit.tree, flags=0).deltas
               for p in (d.old_file.path, d.new_file.path)}
    if not changed <= named:
        return None
    out = []
    for line in lines:
        path = line.group("path")
        if path not in stop.files:
            continue
        try:
            content = repo[commit.tree[path].id].data.decode("utf-8")
        except KeyError:
            content = None
        out.append(ResolvedFile(path, content, line.group("action"), line.group("reason"), line.group("rule")))
    return tuple(out)


class MemoryCache:
    """What the fork's earlier resolved picks teach the rules (``rerere``, ``fork-deleted``):
    about half a minute to compute on the Triton fork, so it is computed only when a fresh
    conflict needs it, and kept while the fork's and upstream's tips stay the same."""

    def __init__(self) -> None:
        self._key: tuple[str, str, str] | None = None
        self._memory: Memory | None = None

    def get(self, git_dir: str, fork_tip: str, upstream_tip: str, cfg: ForksyncConfig) -> Memory | None:
        key = (git_dir, fork_tip, upstream_tip)
        if self._key != key:
            try:
                self._memory = memory_from_history(git_dir, fork_tip, upstream_tip, cfg)
            except ValueError:
                self._memory = None
            self._key = key
        return self._memory


__all__ = ["MAX_RULE_ROUNDS", "MEMORY_RULES", "RuleOutcome", "apply_rules", "rule_commit", "rules_resolution", "MemoryCache",
           "RULES_BY", "RULES_TRAILER"]
