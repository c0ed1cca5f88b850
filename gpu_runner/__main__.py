"""``python -m gpu_runner run --suite NAME --commit SHA [--repo PATH] [--config FILE] [--out result.json]
[--backend local] [--platform LABEL] [--runner-id ID] [--in-place] [--keep-worktree] [--logs DIR] [--shard I/N]``

``python -m gpu_runner merge --suite NAME --commit SHA --config FILE [--platform LABEL] [--out result.json]
RESULT.json…`` merges the shards of a sharded suite into one saturated result (a missing shard is red).

Exit status: 0 green, 1 red (the result JSON says why), 2 bad input (unknown suite, bad config,
commit not found, an ``--out`` that cannot be written; nothing ran, no result written).

The ``--out`` file is removed before anything runs: a self-hosted runner keeps its workspace
between jobs, and a run that dies before writing its own result must not leave an earlier run's
result there to be collected as this one's."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from gpu_runner.local import CheckoutError
from gpu_runner.result import RunResult
from gpu_runner.runner import LocalOptions, run_local
from gpu_runner.shards import merge_suite, parse_shard
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
    r.add_argument("--shard", default=None, metavar="I/N",
                   help="run only shard I of N of the suite's tests (split by test id; counts are judged by merge)")
    m = sub.add_parser("merge", help="merge the result JSONs of a sharded suite's shards into one result")
    m.add_argument("--suite", required=True, help="suite name in the config's suites: list (its shards: N)")
    m.add_argument("--commit", required=True, help="the full sha the shards ran")
    m.add_argument("--config", required=True, help="file with the suites: list (the trusted copy)")
    m.add_argument("--platform", default="cpu", help="platform label of the shards (cpu, h100, h200, …)")
    m.add_argument("--backend", default="local", help="backend recorded in the merged result")
    m.add_argument("--out", default="result.json", help="where to write the merged result JSON")
    m.add_argument("results", nargs="*", help="the shards' result JSON files (a missing or unreadable one is red)")
    return ap


def claim_out(path: Path) -> str | None:
    """Remove the file at ``path`` (an earlier run's result) and check that a result can be written
    there; None when it can, else the error to print (exit 2)."""
    try:
        path.unlink(missing_ok=True)
        path.touch()
        path.unlink()
    except OSError as e:
        return f"--out {path}: a result cannot be written there ({e.strerror or e}); nothing was run"
    return None


def merge_main(args) -> int:
    if err := claim_out(Path(args.out)):
        print(f"gpu_runner: {err}", file=sys.stderr)
        return 2
    suite = find_suite(load_suites(Path(args.config)), args.suite, Path(args.config))
    shards: dict[int, RunResult | None] = {}
    for path in args.results:
        try:
            r = RunResult.from_json(Path(path).read_text())
            i, n = parse_shard(r.shard)
        except (OSError, ValueError) as e:
            print(f"gpu_runner: {path}: not a shard's result ({str(e).splitlines()[0]}); counted as missing", file=sys.stderr)
            continue
        if n != suite.shards:
            print(f"gpu_runner: {path}: shard {r.shard}, but suite {suite.name!r} has shards: {suite.shards}", file=sys.stderr)
            return 2
        shards[i] = r
    commit = args.commit
    if not re.fullmatch(r"[0-9a-fA-F]{40}", commit):
        # the run prints the commit as 12 hex digits (what a person copies): an abbreviation of
        # the one commit every shard ran is that commit; anything else names none of them
        ran = {r.commit for r in shards.values() if r is not None}
        if len(ran) == 1 and re.fullmatch(r"[0-9a-fA-F]{4,39}", commit) and next(iter(ran)).lower().startswith(commit.lower()):
            commit = next(iter(ran))
        else:
            print(f"gpu_runner: --commit {commit}: give the full 40-hex sha of the commit the shards ran "
                  f"(they name {', '.join(sorted(c[:12] for c in ran)) or 'none'})", file=sys.stderr)
            return 2
    result = merge_suite(shards, suite, commit, args.platform, args.backend)
    Path(args.out).write_text(result.to_json())
    return report(result, args.out)


def report(result, out: str) -> int:
    c = result.counts
    d = result.durations
    print(f"{result.suite} @ {result.commit[:12]} on {result.platform}{' shard ' + result.shard if result.shard else ''}: "
          f"{result.verdict.upper()} ({c.passed} passed, {c.failed} failed, {c.error} errors, {c.skipped} skipped; "
          f"suite process {d.command:.1f}s, test bodies {d.tests:.1f}s, total {d.total:.1f}s) → {out}")
    for r in result.reasons:
        print(f"  - {r.code}: {r.detail}")
    return 0 if result.verdict == "green" else 1


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.cmd == "merge":
        try:
            return merge_main(args)
        except SuiteFileError as e:
            print(f"gpu_runner: {e}", file=sys.stderr)
            return 2
    repo = Path(args.repo)
    config = Path(args.config) if args.config else _default_config(repo)
    try:
        shard = parse_shard(args.shard) if args.shard else None
    except ValueError as e:
        print(f"gpu_runner: --shard: {e}", file=sys.stderr)
        return 2
    if err := claim_out(Path(args.out)):
        print(f"gpu_runner: {err}", file=sys.stderr)
        return 2
    try:
        suite = find_suite(load_suites(config), args.suite, config)
        result = run_local(suite, repo, args.commit, LocalOptions(
            platform=args.platform, runner_id=args.runner_id, in_place=args.in_place,
            keep_worktree=args.keep_worktree, logs_dir=Path(args.logs) if args.logs else None, shard=shard))
    except (SuiteFileError, CheckoutError) as e:
        print(f"gpu_runner: {e}", file=sys.stderr)
        return 2
    Path(args.out).write_text(result.to_json())
    return report(result, args.out)


if __name__ == "__main__":
    sys.exit(main())
