"""Sub-commands of the validation concern: explain a gate decision, detect L2 regressions in a
series, bisect a repository.

* ``forksync gate explain --pr-state FILE.json`` — the ``forksync/gate`` summary for a PR state
  (exit 0 allowed, 1 blocked);
* ``forksync gate explain --repo PATH --base REV --head REV [--results DIR] [--config FILE]`` —
  a dry run of the gate on a branch: conflict markers and conflict commits from git, suite
  outcomes from the runner's result JSON files in DIR (exit 0 allowed, 1 blocked);
* ``forksync l2 detect FILE.json [--lower-is-better] [--sigma S]`` — change points and alerts
  (exit 0 no alert, 1 alert);
* ``forksync bisect --repo PATH --good SHA --bad SHA --cmd "…" [--issue-out FILE]`` — the first
  bad landed commit (exit 0 verified culprit, 1 otherwise).

File shapes are in docs/validation.md ("Suites, gate, L2 detection, bisection").
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import fields
from pathlib import Path

import pygit2

from bot.cli.main import config_source
from bot.cli.text import say, text
from bot.config.forksync import UserError, load_config
from bot.config.objects import open_repository
from bot.config.suites import required_l1
from bot.git.bisect import BisectError, bisect_command
from bot.git.markers import conflict_commits, files_with_markers
from bot.git.repo import RefError, merge_base, resolve
from bot.l2.detection import detect
from bot.l2.report import Evidence, render_issue, upstream_commit_url, upstream_sha_of
from bot.validation.gate import (
    AreaPolicy,
    Check,
    PRState,
    Review,
    SignOff,
    SuiteOutcome,
    SuiteRequirement,
    area_policies,
    decide,
    outcome_from_result,
    render_summary,
    suite_requirements,
)
from gpu_runner.result import RunResult


def _read_json(path: str):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UserError(text("validation", "file_not_found", path=path)) from None
    except json.JSONDecodeError as e:
        raise UserError(text("validation", "not_json", path=path, line=e.lineno, column=e.colno, msg=e.msg)) from None


def _build(cls, data, where: str):
    """A frozen dataclass from a JSON object; lists become tuples; unknown/missing keys are errors."""
    if not isinstance(data, dict):
        raise UserError(text("validation", "not_an_object", where=where, type=type(data).__name__))
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise UserError(text("validation", "unknown_fields", where=where, unknown=str(unknown), known=str(sorted(names))))
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    try:
        return cls(**kw)
    except TypeError as e:
        raise UserError(f"{where}: {e}") from None


def pr_state_from_json(data: dict, where: str = "pr-state"):
    """``(PRState, suites, areas)`` from the JSON shape documented in docs/validation.md."""
    if not isinstance(data, dict) or "pr" not in data:
        raise UserError(text("validation", "not_pr_state", where=where))
    pr = dict(data["pr"])
    nested = {"results": SuiteOutcome, "base_results": SuiteOutcome, "reviews": Review, "checks": Check,
              "signoffs": SignOff}
    for key, cls in nested.items():
        pr[key] = tuple(_build(cls, x, f"{where}: pr.{key}.{i}") for i, x in enumerate(pr.get(key, [])))
    for key in ("conflict_commits", "check_apps", "check_rules"):
        if key in pr:
            pr[key] = tuple(tuple(x) for x in pr[key])
    state = _build(PRState, pr, f"{where}: pr")
    suites = tuple(_build(SuiteRequirement, s, f"{where}: suites.{i}") for i, s in enumerate(data.get("suites", [])))
    areas = tuple(_build(AreaPolicy, a, f"{where}: areas.{i}") for i, a in enumerate(data.get("areas", [])))
    return state, suites, areas


def read_results(folder: str) -> list:
    """The runner's result files (``forksync-result/1`` JSON, any ``*.json`` below ``folder``), in
    path order. A file that is not a result is an error naming it."""
    root = Path(folder)
    if not root.is_dir():
        raise UserError(text("validation", "not_results_folder", folder=folder))
    out = []
    for p in sorted(root.rglob("*.json")):
        try:
            out.append(RunResult.from_json(p.read_text()))
        except ValueError as e:
            first = str(e).splitlines()
            raise UserError(text("validation", "not_a_result", path=p, error=" ".join(first[:3]))) from None
    return out


def _check_arg(given: str) -> Check:
    name, sep, concl = given.rpartition("=")
    if not sep or not name:
        raise UserError(text("validation", "bad_check", given=repr(given)))
    return Check(name, None if concl in ("pending", "running", "") else concl)


def state_from_git(args):
    """``(PRState, suites, areas, config file or "")`` for a dry run on ``args.repo``: base/head
    resolved with git, conflict markers and ``Forksync-Conflict`` commits read from base..head,
    areas from the changed paths, suites from ``--config`` or ``./forksync.yml`` (the required L1
    suites that apply) or, without either, every suite/platform that has a result in
    ``--results``; results on the head and the base from the result files. Reviews come only
    from ``--approved-by`` and checks from ``--check``."""
    try:
        repo = open_repository(args.repo)
    except pygit2.GitError as e:
        raise UserError(text("validation", "not_a_repository", repo=args.repo, error=str(e))) from None
    try:
        base, head = resolve(repo, args.base), resolve(repo, args.head)
        markers = tuple(h.path for h in files_with_markers(args.repo, base, head))
        conflicts = tuple(conflict_commits(args.repo, base, head))
    except RefError as e:
        raise UserError(str(e)) from None
    mb = merge_base(repo, base, head)
    old = repo[mb].peel(pygit2.Tree) if mb else repo[base].peel(pygit2.Tree)
    deltas = list(repo.diff(old, repo[head].peel(pygit2.Tree)).deltas)
    paths = sorted({d.new_file.path for d in deltas} | {d.old_file.path for d in deltas})
    results = read_results(args.results) if args.results else []
    outcomes = [outcome_from_result(r) for r in results]
    # suites, areas and gate settings: the global --config, else ./forksync.yml as every command
    # reads it (the folder's file left unread gated on no suite: "no suites are configured")
    path, _ = config_source(args)
    cfg = load_config(path) if path else None
    area_names = cfg.areas_for_paths(paths) if cfg else ()
    if cfg is not None:
        suites = suite_requirements(required_l1(cfg.suites, area_names))
        areas = area_policies(cfg)
        required_checks = tuple(cfg.gate.required_checks)
    else:
        plats: dict[str, list[str]] = {}
        for o in outcomes:
            plats.setdefault(o.suite, [])
            if o.platform not in plats[o.suite]:
                plats[o.suite].append(o.platform)
        suites = tuple(SuiteRequirement(n, tuple(p)) for n, p in plats.items())
        areas, required_checks = (), ()
    now = int(time.time())
    reviews = tuple(Review(login, "APPROVED", now) for login in args.approved_by or [])
    state = PRState(number=0, head_sha=head, base_sha=base, head_contains_base=mb == base, kind=args.kind,
                    areas=tuple(area_names), conflict_marker_files=markers, conflict_commits=conflicts,
                    required_checks=required_checks, results=tuple(o for o in outcomes if o.sha != base),
                    base_results=tuple(o for o in outcomes if o.sha == base), reviews=reviews,
                    checks=tuple(_check_arg(c) for c in args.check or []), unit_updated_at=0)
    return state, suites, areas, path or ""


def cmd_gate_explain(args) -> int:
    if args.pr_state:
        if args.repo or args.base or args.head:
            raise UserError(text("validation", "state_twice"))
        state, suites, areas = pr_state_from_json(_read_json(args.pr_state), args.pr_state)
        dry_run = None
    else:
        missing = [f"--{n}" for n in ("repo", "base", "head") if not getattr(args, n)]
        if missing:
            raise UserError(text("validation", "state_missing", missing=missing))
        state, suites, areas, dry_run = state_from_git(args)
    d = decide(state, suites, areas)
    if args.json:
        print(json.dumps({"allowed": d.allowed, "actions": list(d.actions),
                          "blocking": [f.__dict__ for f in d.blocking],
                          "pre_existing": [f.__dict__ for f in d.pre_existing],
                          "listed": [f.__dict__ for f in d.listed]}, indent=1))
    else:
        sys.stdout.write(render_summary(d, state, dry_run))
    return 0 if d.allowed else 1


def cmd_l2_detect(args) -> int:
    data = _read_json(args.file)
    values = data.get("values") if isinstance(data, dict) else data
    if isinstance(data, dict) and values is None and "points" in data:
        points = data["points"]
        # a malformed item is said with the shapes accepted below, never a traceback
        values = [p.get("value") for p in points] if isinstance(points, list) and all(
            isinstance(p, dict) for p in points) else None
    if not isinstance(values, list) or not all(isinstance(v, (int, float)) and v > 0 for v in values):
        raise UserError(text("validation", "not_values", path=args.file))
    cps = detect(values, not args.lower_is_better, sigma=args.sigma)
    say("validation", "points", count=len(values), cps=cps)
    for c in cps:
        say("validation", "change_point", c=c)
    return 1 if any(c.alert for c in cps) else 0


def cmd_bisect(args) -> int:
    import subprocess

    try:
        r = bisect_command(args.repo, args.good, args.bad, args.cmd, timeout_s=args.timeout,
                           infra_retries=args.infra_retries)
    except BisectError as e:
        raise UserError(str(e)) from None
    for i, s in enumerate(r.steps, 1):
        say("validation", "step", i=i, s=s)
    if r.culprit:
        msg = subprocess.run(["git", "-C", args.repo, "log", "-1", "--format=%B", r.culprit],
                             capture_output=True, text=True).stdout
        say("validation", "culprit", culprit=r.culprit, verified=r.verified, note=r.note, subject=msg.splitlines()[0] if msg else "")
    else:
        say("validation", "no_culprit", end="", note=r.note, suspects=r.suspects)
    if args.issue_out:
        msg = subprocess.run(["git", "-C", args.repo, "log", "-1", "--format=%B", r.culprit],
                             capture_output=True, text=True).stdout if r.culprit else ""
        author = subprocess.run(["git", "-C", args.repo, "log", "-1", "--format=%an", r.culprit],
                                capture_output=True, text=True).stdout.strip() if r.culprit else ""
        up = upstream_sha_of(msg)
        path, _ = config_source(args)
        upstream = getattr(args, "upstream", None) or (load_config(path).upstream.url if path else "")
        ev = Evidence(f"Bisection: {args.cmd}", None, (), (), None, None, r,
                      culprit_subject=msg.splitlines()[0] if msg else "", upstream_sha=up,
                      command=args.cmd, culprit_author=author, upstream_url=upstream_commit_url(upstream, up))
        Path(args.issue_out).write_text(render_issue(ev))
    return 0 if r.culprit and r.verified else 1


def register(sub, common) -> None:
    g = sub.add_parser("gate", parents=[common], help="merge gate tools")
    gs = g.add_subparsers(dest="gate_command", metavar="SUBCOMMAND")
    ge = gs.add_parser("explain", parents=[common],
                       help="explain the gate's decision for a PR state (JSON), or dry-run it on a branch of a repository")
    ge.add_argument("--pr-state", metavar="FILE.json", help="the gate's inputs as JSON (docs/validation.md)")
    ge.add_argument("--repo", metavar="PATH", help="dry run: a git repository holding base and head")
    ge.add_argument("--base", metavar="REV", help="dry run: the base (the branch the PR merges into)")
    ge.add_argument("--head", metavar="REV", help="dry run: the PR's head")
    ge.add_argument("--results", metavar="DIR", help="dry run: the runner's result JSON files (gpu_runner run --out)")
    ge.add_argument("--kind", choices=["bundle", "chain", "other"], default="other",
                    help="dry run: the PR's kind (a chain needs a writer's approval; default other)")
    ge.add_argument("--approved-by", action="append", metavar="LOGIN", help="dry run: count an approval by LOGIN")
    ge.add_argument("--check", action="append", metavar="NAME=CONCLUSION",
                    help="dry run: another check on the head (success, failure, pending, …)")
    ge.add_argument("--json", action="store_true", help="print the decision as JSON instead of markdown")
    ge.set_defaults(func=cmd_gate_explain)

    l2 = sub.add_parser("l2", parents=[common], help="L2 regression detection tools")
    ls = l2.add_subparsers(dest="l2_command", metavar="SUBCOMMAND")
    ld = ls.add_parser("detect", parents=[common], help="change points and alerts in one series (JSON)")
    ld.add_argument("file", metavar="FILE.json")
    ld.add_argument("--lower-is-better", action="store_true", help="values are times (default: throughput)")
    ld.add_argument("--sigma", type=float, default=None, help="relative noise σ (default: estimated)")
    ld.set_defaults(func=cmd_l2_detect)

    b = sub.add_parser("bisect", parents=[common], help="find the first bad landed commit")
    b.add_argument("--repo", required=True, metavar="PATH", help="a git repository holding both commits")
    b.add_argument("--good", required=True, metavar="SHA", help="a landed commit the test passes on")
    b.add_argument("--bad", required=True, metavar="SHA", help="a later landed commit the test fails on")
    b.add_argument("--cmd", required=True, help="test command: exit 0 good, 125 skip, other bad")
    b.add_argument("--timeout", type=int, default=3600, help="seconds per step (default 3600)")
    b.add_argument("--infra-retries", type=int, default=2,
                   help="retries of a step the runner failed (infrastructure), then it counts as skipped (default 2)")
    b.add_argument("--issue-out", metavar="FILE.md", help="write the regression issue body here")
    b.set_defaults(func=cmd_bisect)
