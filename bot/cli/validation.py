"""Sub-commands of the validation concern: explain a gate decision, detect L2 regressions in a
series, bisect a repository.

* ``forksync gate explain --pr-state FILE.json`` — the ``forksync/gate`` summary for a PR state
  (exit 0 allowed, 1 blocked);
* ``forksync l2 detect FILE.json [--lower-is-better] [--sigma S]`` — change points and alerts
  (exit 0 no alert, 1 alert);
* ``forksync bisect --repo PATH --good SHA --bad SHA --cmd "…" [--issue-out FILE]`` — the first
  bad landed commit (exit 0 verified culprit, 1 otherwise).

File shapes are in docs/validation.md ("Suites, gate, L2 detection, bisection").
"""
from __future__ import annotations

import json
import sys
from dataclasses import fields
from pathlib import Path

from bot.config.forksync import UserError
from bot.git.bisect import BisectError, bisect_command
from bot.l2.detection import detect
from bot.l2.report import Evidence, render_issue, upstream_sha_of
from bot.validation.gate import AreaPolicy, Check, PRState, Review, SignOff, SuiteOutcome, SuiteRequirement, decide, render_summary


def _user_error(msg: str):
    return UserError(msg)


def _read_json(path: str):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise _user_error(f"{path}: file not found") from None
    except json.JSONDecodeError as e:
        raise _user_error(f"{path}: not valid JSON (line {e.lineno}, column {e.colno}): {e.msg}") from None


def _build(cls, data, where: str):
    """A frozen dataclass from a JSON object; lists become tuples; unknown/missing keys are errors."""
    if not isinstance(data, dict):
        raise _user_error(f"{where}: expected an object, got {type(data).__name__}")
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise _user_error(f"{where}: unknown field(s) {unknown}; known: {sorted(names)}")
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    try:
        return cls(**kw)
    except TypeError as e:
        raise _user_error(f"{where}: {e}") from None


def pr_state_from_json(data: dict, where: str = "pr-state"):
    """``(PRState, suites, areas)`` from the JSON shape documented in docs/validation.md."""
    if not isinstance(data, dict) or "pr" not in data:
        raise _user_error(f"{where}: expected an object with 'pr', 'suites' and 'areas'")
    pr = dict(data["pr"])
    nested = {"results": SuiteOutcome, "base_results": SuiteOutcome, "reviews": Review, "checks": Check,
              "signoffs": SignOff}
    for key, cls in nested.items():
        pr[key] = tuple(_build(cls, x, f"{where}: pr.{key}.{i}") for i, x in enumerate(pr.get(key, [])))
    state = _build(PRState, pr, f"{where}: pr")
    suites = tuple(_build(SuiteRequirement, s, f"{where}: suites.{i}") for i, s in enumerate(data.get("suites", [])))
    areas = tuple(_build(AreaPolicy, a, f"{where}: areas.{i}") for i, a in enumerate(data.get("areas", [])))
    return state, suites, areas


def cmd_gate_explain(args) -> int:
    state, suites, areas = pr_state_from_json(_read_json(args.pr_state), args.pr_state)
    d = decide(state, suites, areas)
    if args.json:
        print(json.dumps({"allowed": d.allowed, "actions": list(d.actions),
                          "blocking": [f.__dict__ for f in d.blocking],
                          "pre_existing": [f.__dict__ for f in d.pre_existing]}, indent=1))
    else:
        sys.stdout.write(render_summary(d, state))
    return 0 if d.allowed else 1


def cmd_l2_detect(args) -> int:
    data = _read_json(args.file)
    values = data.get("values") if isinstance(data, dict) else data
    if isinstance(data, dict) and values is None and "points" in data:
        values = [p.get("value") for p in data["points"]]
    if not isinstance(values, list) or not all(isinstance(v, (int, float)) and v > 0 for v in values):
        raise _user_error(f"{args.file}: expected a list of positive numbers, or {{\"values\": [...]}}, or "
                          "{\"points\": [{\"sha\": …, \"value\": …}]}")
    cps = detect(values, not args.lower_is_better, sigma=args.sigma)
    print(f"{len(values)} points; noise σ {cps[0].sigma:.2%}, threshold {cps[0].threshold:.2%}" if cps
          else f"{len(values)} points; no change point")
    for c in cps:
        print(f"  point {c.index}: {c.before:.4g} → {c.after:.4g} ({c.rel_shift:+.2%}), p={c.pvalue:.2g}, "
              f"{'REGRESSION ALERT' if c.alert else ('regression below threshold' if c.regression else 'improvement')}")
    return 1 if any(c.alert for c in cps) else 0


def cmd_bisect(args) -> int:
    import subprocess

    try:
        r = bisect_command(args.repo, args.good, args.bad, args.cmd, timeout_s=args.timeout,
                           infra_retries=args.infra_retries)
    except BisectError as e:
        raise _user_error(str(e)) from None
    for i, s in enumerate(r.steps, 1):
        print(f"{i:>3} {s.phase:<6} {s.sha[:12]} {s.outcome.verdict:<5} {s.outcome.detail}")
    if r.culprit:
        msg = subprocess.run(["git", "-C", args.repo, "log", "-1", "--format=%B", r.culprit],
                             capture_output=True, text=True).stdout
        print(f"culprit {r.culprit} ({'verified' if r.verified else 'NOT verified: ' + r.note}) — "
              f"{msg.splitlines()[0] if msg else ''}")
    else:
        print(r.note)
    if args.issue_out:
        msg = subprocess.run(["git", "-C", args.repo, "log", "-1", "--format=%B", r.culprit],
                             capture_output=True, text=True).stdout if r.culprit else ""
        ev = Evidence(f"Bisection: {args.cmd}", None, (), (), None, None, r,
                      culprit_subject=msg.splitlines()[0] if msg else "", upstream_sha=upstream_sha_of(msg),
                      command=args.cmd)
        Path(args.issue_out).write_text(render_issue(ev))
    return 0 if r.culprit and r.verified else 1


def register(sub, common) -> None:
    g = sub.add_parser("gate", parents=[common], help="merge gate tools")
    gs = g.add_subparsers(dest="gate_command", metavar="SUBCOMMAND")
    ge = gs.add_parser("explain", parents=[common], help="explain the gate's decision for a PR state (JSON)")
    ge.add_argument("--pr-state", required=True, metavar="FILE.json")
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
    b.add_argument("--repo", required=True, metavar="PATH")
    b.add_argument("--good", required=True, metavar="SHA")
    b.add_argument("--bad", required=True, metavar="SHA")
    b.add_argument("--cmd", required=True, help="test command: exit 0 good, 125 skip, other bad")
    b.add_argument("--timeout", type=int, default=3600, help="seconds per step (default 3600)")
    b.add_argument("--infra-retries", type=int, default=2)
    b.add_argument("--issue-out", metavar="FILE.md", help="write the regression issue body here")
    b.set_defaults(func=cmd_bisect)
