"""The memory rules on a live chain learn from the chain's own resolved picks too: a pick the
person resolved a moment ago on the chain's branch is "the last time" for the next one (real git
repositories)."""
from __future__ import annotations

from bot.config.forksync import parse_config
from bot.demo.repobuilder import run_git
from bot.resolve.replay import chain_memory, memory_from_history, resolve_conflicts
from bot.resolve.rules import Decision, Declined, Memory
from tests.support.deleted_chain import LEGACY, PATH, T0, build_deleted_chain

CFG = parse_config({})          # the default chain: rerere, fork-deleted, fork-ahead


def _resolved_pick(h, onto: str, up: str, files=None) -> str:
    """A ``[RESOLVED]`` pick of ``up`` committed on a branch at ``onto`` (``files`` None: it kept the
    fork's deletion, an empty commit); returns its sha."""
    run_git(h.fork.path, "checkout", "-q", "-B", "chain", onto)
    msg = (f"[RESOLVED] [legacy] tweak\n\nConflict Resolution:\n- File: {PATH}\n  Action: deleted\n"
           f"  Reason: the fork dropped it\n\nUpstream-Commit: {up}\n")
    return h.fork.commit(msg, files, when=T0 + 5000, allow_empty=files is None)


def test_the_chains_own_resolved_pick_is_the_last_time(tmp_path):
    h = build_deleted_chain(tmp_path)
    git_dir = str(h.fork.path)
    landed = memory_from_history(git_dir, h.fork_tip, h.u["u3"], CFG)
    assert landed.kept_deleted == frozenset()           # the fork's landed history never met it
    first = _resolved_pick(h, h.fork_tip, h.u["u1"])
    assert resolve_conflicts(git_dir, first, h.u["u2"], CFG, memory=landed, upstream_tip=h.u["u3"]) == [
        (PATH, Declined(("rerere", "fork-deleted", "fork-ahead")))]
    mem = chain_memory(git_dir, landed, h.fork_tip, first, h.u["u3"], CFG)
    assert mem.kept_deleted == frozenset({PATH})
    (path, d), = resolve_conflicts(git_dir, first, h.u["u2"], CFG, memory=mem, upstream_tip=h.u["u3"])
    assert path == PATH and isinstance(d, Decision) and d.rule == "fork-deleted" and d.deletes
    # only the chain's commits after its base are read: the same range with nothing on it teaches nothing
    assert chain_memory(git_dir, landed, first, first, h.u["u3"], CFG) == landed


def test_the_rule_still_declines_where_the_fork_re_added_the_file(tmp_path):
    h = build_deleted_chain(tmp_path)
    git_dir = str(h.fork.path)
    first = _resolved_pick(h, h.fork_tip, h.u["u1"])
    mem = chain_memory(git_dir, Memory(), h.fork_tip, first, h.u["u3"], CFG)
    assert mem.kept_deleted == frozenset({PATH})
    # the fork brings the file back (its own version) after keeping it deleted once
    again = h.fork.commit("[fork] bring the legacy backend back", {PATH: LEGACY.format(v=" * 7")}, when=T0 + 6000)
    got = resolve_conflicts(git_dir, again, h.u["u2"], CFG, memory=mem, upstream_tip=h.u["u3"])
    assert got and all(isinstance(d, Declined) for _, d in got)
