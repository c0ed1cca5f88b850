"""``forksync plan`` and ``forksync apply`` (docs/plan.md).

``plan [--as-of DATE] [--json]``: the risk partition of the PENDING upstream commits into
bundles and chains. ``apply <unit id>``: re-plans, finds the unit by id (or a unique prefix) and
materializes it as the local branch ``forksync/<id>`` of the fork; exit 1 when a chain stopped on
a conflict. Progress goes to stderr (bot/cli/progress.py: bars on a terminal, plain lines
elsewhere, none with ``--quiet``); ``--json`` output (schema ``forksync.plan/1``) is
stable and gives full 40-hex shas.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import replace
from datetime import datetime, timezone

import pygit2

from bot.cli.ledger import state_errors, warn_state
from bot.cli.main import fork_config_from_args
from bot.cli.progress import reporter
from bot.cli.text import cut, say, text
from bot.config.forksync import UserError
from bot.config.objects import open_repository
from bot.git import repo as gitio
from bot.git.apply import COMMITTER, ApplyError, apply_unit
from bot.plan.partition import find_unit, no_op_candidates
from bot.plan.planner import plan_state
from bot.resolve.replay import memory_from_history
from bot.resolve.rules import Memory
from bot.sync.ingest import default_store, load_state
from bot.sync.rules import MAX_RULE_ROUNDS, MEMORY_RULES, RULES_BY, RuleOutcome, apply_rules

PLAN_SCHEMA = "forksync.plan/1"


def register(sub, common) -> None:
    p = sub.add_parser("plan", parents=[common], help="partition pending upstream commits into bundles and chains",
                       description="Walk the PENDING upstream commits in order and partition them into low-risk "
                                   "bundles (predicted clean picks) and risky chains (conflicts, divergent areas, "
                                   "overlap with open chains). Every item says why.")
    p.add_argument("--as-of", metavar="DATE", help="plan as of the end of DATE (YYYY-MM-DD, UTC)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON (schema forksync.plan/1)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the analysis/prediction cache: cache_dir is not used (scratch "
                        "repositories go to a temporary folder, removed afterwards)")
    p.set_defaults(func=cmd_plan)
    a = sub.add_parser("apply", parents=[common], help="materialize a bundle or chain as a local forksync/* branch",
                       description="Re-plan, find the unit by id, and cherry-pick its upstream commits onto "
                                   "forksync/<id>, in memory (no checkout; one fork commit per upstream commit). "
                                   "Exit 1 when a pick conflicts: the branch keeps the clean picks before it and "
                                   "ends with a conflict commit (the conflicted pick with diff3 markers, "
                                   "'Forksync-Conflict: <sha>'), which applying again leaves in place until it "
                                   "is replaced by the resolved pick. The deterministic conflict rules "
                                   "(docs/resolve.md) run only where the App publishes a unit; locally, "
                                   "'forksync resolve' hands the conflict to a person.")
    a.add_argument("unit", metavar="UNIT_ID", help="bundle-<sha12> or chain-<sha12> (a unique prefix is enough)")
    a.add_argument("--json", action="store_true", help="print the result as JSON")
    a.set_defaults(func=cmd_apply)


def _load(args, as_of=None, scratch: ExitStack | None = None):
    """``scratch``: where a --no-cache run's temporary folder is removed (when it closes)."""
    cfg = fork_config_from_args(args)
    use_cache = not getattr(args, "no_cache", False)
    if not use_cache:
        # the combined repository and the prediction scratch repository still need a folder: a
        # temporary one, so that cache_dir is neither read nor written (nor required to be usable)
        tmp = tempfile.TemporaryDirectory(prefix="forksync-no-cache-")
        if scratch is not None:
            scratch.enter_context(tmp)
        cfg = cfg.model_copy(update={"cache_dir": tmp.name})
    store = default_store(cfg) if use_cache else None
    with reporter(args) as progress:
        with state_errors(args):
            state = load_state(cfg, store=store, as_of=as_of, progress=progress, use_cache=use_cache)

        run = plan_state(state, store=store, progress=(lambda d, t: progress("planning", d, t)) if progress else None)
    warn_state(state)
    return cfg, state, run


def _iso(t: int | None) -> str | None:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if t else None


def plan_json(state, run) -> dict:
    """The stable JSON form of a plan (schema ``forksync.plan/1``, docs/plan.md)."""
    plan = run.plan
    up = state.upstream

    def item(sha, reason, conflicts=()):
        c = up.get(sha)
        return {"sha": sha, "pr": c.pr if c else None, "subject": c.subject if c else "",
                "reason": reason, "conflicts": list(conflicts)}

    return {
        "schema": PLAN_SCHEMA,
        "as_of": _iso(plan.as_of),
        "base": plan.base,
        "upstream_tip": state.upstream_tip,
        "merge_base": state.merge_base,
        "pending": len(run.pending),
        "bundle_size_cap": state.config.bundle_size_cap,
        "chain_size_cap": state.config.chain_size_cap,
        "units": [{"id": u.id, "kind": u.kind, "reason": u.reason, "areas": list(u.areas), "size": len(u.items),
                   "depends_on": list(u.depends_on), "items": [item(i.sha, i.reason, i.conflicts) for i in u.items]} for u in plan.units],
        "no_op_candidates": [item(s, why) for s, why in no_op_candidates(plan)],
        "notes": [n for n in plan.notes if not n.startswith("NO_OP candidate ")],
        "in_flight": [{"name": b.name, "unit_id": b.unit_id, "kind": b.kind, "upstream_shas": list(b.upstream_shas)}
                      for b in state.in_flight],
    }


_RENAMES_OFF = re.compile(r" \(renames not detected: (.*)\)$")
# a bundle member's own reason restates its unit's ("predicted to pick cleanly in order")
_IN_ORDER = re.compile(r"^predicted clean pick onto the fork tip \+ \d+ earlier bundle picks?$")


def waits_for(unit, plan, in_flight) -> str:
    """What ``unit`` waits for, truthfully: each unit it lands after is a chain earlier in this
    plan (not applied, so no branch and no pull request yet) or an open ``forksync/*`` branch."""
    planned = {u.id for u in plan.units}
    flying = {b.unit_id: b.name for b in in_flight}
    return "; ".join(text("plan", "waits_on", id=d, branch=flying.get(d, ""), planned=d in planned) for d in unit.depends_on)


#: in-flight branches named on the plan's header line; the rest are counted
NAMED_IN_FLIGHT = 3


def plan_lines(state, run) -> list[str]:
    """The human form of a plan: a header, then each unit with its reason once, what it waits
    for, and its commits; a commit's own reason only where it says more than its unit's (the part
    after the unit's reason). A note that rename detection was off, which the predictor adds to
    every prediction after the first failure, is printed once with its count."""
    plan = run.plan
    bundles = [u for u in plan.units if u.kind == "bundle"]
    chains = [u for u in plan.units if u.kind == "chain"]
    noops = no_op_candidates(plan)
    # the header names the first NAMED_IN_FLIGHT branches in flight, with how many upstream commits each holds
    flying = [{"name": b.name, "commits": len(b.upstream_shas)} for b in state.in_flight]
    # what "pending" is measured against: upstream's tip and when it was last seen, as status says
    out = [text("plan", "header", as_of=_iso(plan.as_of), pending=len(run.pending), fork_tip=state.fork_tip,
                upstream_tip=state.upstream_tip, upstream_as_of=_iso(state.upstream_as_of),
                unknown=state.upstream_as_of_unknown),
           text("plan", "counts", bundles=len(bundles), in_bundles=sum(len(u.items) for u in bundles), chains=len(chains),
                in_chains=sum(len(u.items) for u in chains), noops=len(noops), in_flight=flying, named=NAMED_IN_FLIGHT)]
    if plan.as_of:
        # apply has no --as-of: it re-plans at the tips it is given, so these are the ones to give it
        out.append(text("plan", "apply_as_of", upstream_tip=state.upstream_tip, fork_tip=state.fork_tip))
    renames_off: dict[str, int] = {}

    def own(reason: str) -> str:
        m = _RENAMES_OFF.search(reason)
        if m:
            renames_off[m.group(1)] = renames_off.get(m.group(1), 0) + 1
            reason = reason[:m.start()]
        return reason

    for u in plan.units:
        # "stacked on X" is what the waits-for line says; "follows <this unit>" is being in it
        unit_parts = [p for p in own(u.reason).split("; ") if not (u.depends_on and p.startswith("stacked on "))]
        out += ["", text("plan", "unit", id=u.id, kind=u.kind, size=len(u.items), areas=u.areas),
                text("plan", "why", parts=unit_parts)]
        if u.depends_on:
            out.append(text("plan", "waits", waits=waits_for(u, plan, state.in_flight)))
        said = set(unit_parts)
        for it in u.items:
            c = state.upstream.get(it.sha)
            out.append(text("plan", "commit", sha=it.sha, pr=c.pr if c else None, subject=cut(c.subject if c else "")))
            rest = [p for p in own(it.reason).split("; ")
                    if p and p not in said and not p.startswith(f"follows {u.id},") and not p.startswith("stacked on ")
                    and not (u.kind == "bundle" and _IN_ORDER.match(p))]
            if rest and u.kind == "bundle" and len(u.items) > 1:
                said.update(rest)       # bundle members share their reason: print it with the first
            if rest:
                out.append(text("plan", "commit_reason", parts=rest))
    if noops:
        out += ["", text("plan", "no_op_head")]
        for s, _why in noops:
            c = state.upstream.get(s)
            out.append(text("plan", "commit", sha=s, pr=c.pr if c else None, subject=cut(c.subject if c else "")))
    for n in plan.notes:
        if not n.startswith("NO_OP candidate "):
            out.append(text("plan", "note", note=n))
    for why, n in renames_off.items():
        out.append(text("plan", "renames_off", count=n, why=why))
    return out


def cmd_plan(args) -> int:
    with ExitStack() as scratch:
        return _plan(args, scratch)


def _plan(args, scratch: ExitStack) -> int:
    cfg, state, run = _load(args, as_of=args.as_of, scratch=scratch)
    if args.json:
        json.dump(plan_json(state, run), sys.stdout, indent=2)
        print()
        return 0
    print("\n".join(plan_lines(state, run)))
    helped = run.extra.get("helper_merges", 0)
    if getattr(args, "quiet", False):
        return 0
    say("plan", "timing", err=True, seconds=run.seconds, merges=run.merges, helped=helped, cache_hits=run.cache_hits,
        parsed_files=run.parsed_files)
    return 0


def apply_planned(state, unit):
    """Apply ``unit`` of a plan on ``state`` to its local branch (upstream's objects fetched from
    upstream's repository when it is another one; the config's rename limit). Raises
    :class:`UserError` when apply cannot start."""
    fork_dir = state.fork_repo.path
    up_dir = state.git_dir if state.git_dir.rstrip("/") != fork_dir.rstrip("/") else None
    # a unit in flight for this fork ref goes on on its branch, whatever its name (one made
    # before names carried the fork ref has an open PR on it); a new one is named for the fork ref
    branch = next((b.name for b in state.in_flight if b.unit_id == unit.id), None) \
        or gitio.sync_branch_for(state.fork_repo, unit.id, state.config.fork.ref)
    try:
        return apply_unit(fork_dir, unit, base=state.fork_tip, commits=state.upstream, upstream_git_dir=up_dir,
                          rename_limit=state.config.rename_limit, branch=branch)
    except ApplyError as e:
        raise UserError(str(e)) from None


def apply_with_rules(state, unit):
    """:func:`apply_planned`, then each fresh conflict put to the configured rules
    (``resolve.rules``, docs/resolve.md) as the App does (:func:`bot.sync.rules.apply_rules`):
    where they decide every conflicted file the pick is folded (``Resolved-by: forksync rules
    (…)``, a File / Action / Reason block) and the chain goes on, else the branch stays at its
    conflict commit for a person (a partial answer is the App's only: a local worktree starts
    from the conflict as git left it). Returns ``(ApplyResult, [RuleOutcome of each fold])``, the
    result's ``picked`` holding the folded picks too. Raises :class:`UserError` when apply
    cannot start."""
    cfg = state.config
    res = apply_planned(state, unit)
    folds: list[RuleOutcome] = []
    memory: list[Memory | None] = []         # computed once, at the first fresh conflict
    git_dir = state.fork_repo.path
    for _ in range(MAX_RULE_ROUNDS):
        if not cfg.resolve.rules or not (res.conflict and res.conflict_commit and res.tip == res.conflict_commit):
            break
        repo = open_repository(git_dir)
        up_tip = state.upstream_tip if state.upstream_tip in repo else res.conflict
        if not memory:
            memory.append(_landed_memory(git_dir, state.fork_tip, up_tip, cfg))
        try:
            out = apply_rules(git_dir, cfg, unit_id=unit.id, base=res.base, tip=res.tip,
                              upstream=state.upstream.get(res.conflict) or gitio.commit_info(repo, res.conflict),
                              upstream_tip=up_tip, memory=memory[0], committer=COMMITTER, when=int(time.time()))
        except (ValueError, KeyError, pygit2.GitError, OSError) as e:
            # e.g. upstream's objects are not all here: the conflict stays for a person, and says why
            say("plan", "rules_skipped", err=True, conflict=res.conflict, error=e)
            break
        if out is None or out.folded is None:
            break
        # compare-and-swap: a branch someone moved meanwhile is left as it is
        subprocess.run(["git", "update-ref", f"refs/heads/{res.branch}", out.folded, res.tip], cwd=git_dir,
                       check=True, capture_output=True)
        folds.append(out)
        done = (*res.picked, (out.upstream_sha, out.folded))
        created = res.created
        res = apply_planned(state, unit)
        res = replace(res, picked=done + res.picked, created=created)
    return res, folds


def _landed_memory(git_dir: str, fork_tip: str, upstream_tip: str, cfg) -> Memory | None:
    """What the fork's landed resolved picks teach the memory rules (None when no memory rule is
    configured; nothing learned when the history cannot be read)."""
    if not MEMORY_RULES & set(cfg.resolve.rules):
        return None
    try:
        return memory_from_history(git_dir, fork_tip, upstream_tip, cfg)
    except ValueError:
        return Memory()


def print_rules(folds) -> None:
    """Per pick the rules folded: the rule's File / Action / Reason lines, so that a person sees
    which decision was not theirs."""
    for out in folds:
        say("plan", "rules_folded", end="", upstream=out.upstream_sha, pick=out.folded, by=RULES_BY,
            rules=list(dict.fromkeys(d.rule for _, d in out.decided)), decided=out.decided)


def print_empty(git_dir: str, picked) -> None:
    """One line per pick of ``picked`` (``[(upstream sha, fork sha)]``) that changes nothing: once
    it lands the ledger records its upstream commit NO_OP, not PICKED (docs/core.md,
    ``empty-pick``), which a person who kept the fork's side of every file should know before."""
    repo = open_repository(git_dir)
    for u, f in picked:
        c = repo[f].peel(pygit2.Commit)
        if len(c.parents) == 1 and c.tree_id == c.parents[0].tree_id:
            say("plan", "empty_pick", upstream=u, pick=f)


def print_picked(state, res) -> None:
    """One line per pick an apply made: upstream sha → fork sha, upstream subject."""
    for u, f in res.picked:
        c = state.upstream.get(u)
        say("plan", "picked", upstream=u, pick=f, subject=cut(c.subject if c else ""))


def _ref_arg(args) -> str:
    """`` --fork-ref REF`` when the command was given one (the next command a text names needs it
    to find the same fork branch's sync branch), else ""."""
    ref = getattr(args, "fork_ref", None)
    return f" --fork-ref {shlex.quote(ref)}" if ref else ""


def cmd_apply(args) -> int:
    cfg, state, run = _load(args)
    unit = find_unit(run.plan, args.unit)
    flying = [b for b in state.in_flight if b.unit_id.startswith(args.unit)]
    if unit is not None and unit.id != args.unit:
        # a unit applied before is no longer planned, but its id still counts: a prefix must name one.
        # A chain stopped at a conflict is both (planned with the rest, its branch in flight): one unit
        others = [b.unit_id for b in flying if b.unit_id != unit.id]
        if others:
            raise UserError(text("plan", "ambiguous", given=repr(args.unit), matches=[unit.id], in_flight=others))
    if unit is None:
        # applied before: its commits are IN_FLIGHT on its branch, so it is no longer planned;
        # the in-flight answer only when no planned unit starts with it too (find_unit said none
        # or several)
        planned = [u.id for u in run.plan.units if u.id.startswith(args.unit)]
        if len(flying) == 1 and not planned:
            b = flying[0]
            # a chain that stopped at its last pick is wholly in flight too, but it waits for a resolution
            from bot.git.markers import conflict_commits  # lazy: only this answer reads the branch
            stopped = conflict_commits(state.fork_repo.path, state.fork_tip, b.tip) if b.tip else []
            cc, up = stopped[-1] if stopped else (None, None)
            if args.json:
                json.dump({"unit": b.unit_id, "kind": b.kind, "branch": b.name, "tip": b.tip, "created": False,
                           "picked": [], "already": list(b.upstream_shas), "in_flight": True,
                           "conflict": up, "conflict_commit": cc}, sys.stdout, indent=2)
                print()
            elif cc:
                c = state.upstream.get(up)
                say("plan", "in_flight_stopped", branch=b.name, tip=b.tip, upstream=up, subject=cut(c.subject if c else ""),
                    commit=cc, unit=b.unit_id, ref_arg=_ref_arg(args))
            else:
                say("plan", "in_flight", branch=b.name, tip=b.tip, count=len(b.upstream_shas))
            return 1 if cc else 0
        matches = planned + [b.unit_id for b in flying if b.unit_id not in planned]
        if len(matches) > 1:
            raise UserError(text("plan", "ambiguous", given=repr(args.unit), matches=matches, in_flight=[]))
        raise UserError(text("plan", "no_unit", given=repr(args.unit), units=[u.id for u in run.plan.units]))
    res, folds = apply_with_rules(state, unit)
    if args.json:
        json.dump({"unit": unit.id, "kind": unit.kind, "branch": res.branch, "base": res.base, "tip": res.tip,
                   "created": res.created, "waits_for": list(unit.depends_on),
                   "picked": [{"upstream": u, "fork": f} for u, f in res.picked],
                   "already": list(res.already), "kept": list(res.kept), "conflict": res.conflict,
                   "conflict_files": list(res.conflict_files), "error": res.error,
                   "remaining": list(res.remaining), "conflict_commit": res.conflict_commit,
                   "conflicts": [{"path": f.path, "kind": f.kind, "hunks": list(f.hunks)} for f in res.conflicts],
                   "renames_off": res.renames_off}, sys.stdout, indent=2)
        print()
    else:
        verb = "created" if res.created else "updated" if res.picked else "unchanged"
        say("plan", "applied", branch=res.branch, verb=verb, tip=res.tip, base=res.base)
        if unit.depends_on:
            # apply builds every unit on the fork tip; one the plan predicted on the picks of units
            # not landed yet may stop where they would have let it pick cleanly (docs/plan.md)
            say("plan", "applied_waits", unit=unit.id, waits=waits_for(unit, run.plan, state.in_flight))
        print_picked(state, res)
        print_rules(folds)
        print_empty(state.fork_repo.path, res.picked)
        if res.already:
            say("plan", "already", count=len(res.already))
        for k in res.kept:
            say("plan", "kept", commit=k)
        if res.conflict:
            c = state.upstream.get(res.conflict)
            say("plan", "stopped", end="", upstream=res.conflict, subject=cut(c.subject if c else ""), commit=res.conflict_commit,
                branch=res.branch, conflicts=res.conflicts, error=res.error, remaining=len(res.remaining), unit=unit.id,
                ref_arg=_ref_arg(args))
    return 1 if res.conflict else 0
