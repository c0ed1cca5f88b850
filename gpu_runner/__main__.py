"""``python -m gpu_runner run --suite NAME --commit SHA [--repo PATH] [--config FILE] [--out result.json]
[--backend local] [--platform LABEL] [--runner-id ID] [--in-place] [--keep-worktree] [--logs DIR]``

Exit status: 0 green, 1 red (the result JSON says why), 2 bad input (unknown suite, bad config,
commit not found; nothing ran, no result written)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpu_runner.local import CheckoutError
from gpu_runner.runner import LocalOptions, run_local
from gpu_runner.suites_file import SuiteFileError, find_suite, load_suites


def _default_config(repo: Path) -> Path:
    for cand in (repo / "forksync.yml", repo / ".github" / "forksync.yml"):
        if cand.is_file():
            return cand
    return repo / "forksync.yml"


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m gpu_runner", description="Run one forksync validation suite.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a suite on a commit and write its result JSON")
    r.add_argument("--suite", required=True, help="suite name in the config's suites: list")
    r.add_argument("--commit", required=True, help="commit to check out (sha or any commit-ish)")
    r.add_argument("--repo", default=".", help="git repository holding the commit (default: .)")
    r.add_argument("--config", default=None,
                   help="file with the suites: list (default: <repo>/forksync.yml or <repo>/.github/forksync.yml); "
                        "the caller passes the trusted copy (fork's default branch)")
    r.add_argument("--out", default="result.json", help="where to write the result JSON (default: result.json)")
    r.add_argument("--backend", default="local", choices=["local"],
                   help="local: a subprocess here (the github-actions backend dispatches a workflow that runs this)")
    r.add_argument("--platform", default="cpu", help="platform label recorded in the result (cpu, h100, h200, …)")
    r.add_argument("--runner-id", default=None, help="runner id recorded in the result (default: $FORKSYNC_RUNNER_ID, "
                                                      "$RUNNER_NAME or the host name)")
    r.add_argument("--in-place", action="store_true", help="run in --repo as checked out (it must be at --commit)")
    r.add_argument("--keep-worktree", action="store_true", help="leave the worktree for inspection")
    r.add_argument("--logs", default=None, help="folder for the full stdout/stderr logs")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    repo = Path(args.repo)
    config = Path(args.config) if args.config else _default_config(repo)
    try:
        suite = find_suite(load_suites(config), args.suite, config)
        result = run_local(suite, repo, args.commit, LocalOptions(
            platform=args.platform, runner_id=args.runner_id, in_place=args.in_place,
            keep_worktree=args.keep_worktree, logs_dir=Path(args.logs) if args.logs else None))
    except (SuiteFileError, CheckoutError) as e:
        print(f"gpu_runner: {e}", file=sys.stderr)
        return 2
    Path(args.out).write_text(result.to_json())
    c = result.counts
    d = result.durations
    print(f"{result.suite} @ {result.commit[:12]} on {result.platform}: {result.verdict.upper()} "
          f"({c.passed} passed, {c.failed} failed, {c.error} errors, {c.skipped} skipped; "
          f"suite process {d.command:.1f}s, test bodies {d.tests:.1f}s, total {d.total:.1f}s) → {args.out}")
    for r in result.reasons:
        print(f"  - {r.code}: {r.detail}")
    return 0 if result.verdict == "green" else 1


if __name__ == "__main__":
    sys.exit(main())
