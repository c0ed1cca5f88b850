"""``forksync demo``: the main job on embedded defaults.

Builds a realistic upstream/fork pair in a scratch folder (:mod:`bot.demo.scenario`) and runs
forksync on it exactly as a user would: ``status`` → ``plan`` → ``apply`` for every unit →
``status`` again, printing what happened. Nothing outside the scratch folder is touched.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from rich.console import Console
from rich.rule import Rule

from bot.cli.main import main as cli_main
from bot.demo.scenario import build_scenario

#: the nightly part's first issue number: past every issue and PR number the GitHub part uses
NIGHTLY_FIRST_ISSUE = 101

STORY = """\
[bold]The scenario[/bold] (real git repositories in {root}):
  upstream  18 commits after the shared base: C++ passes, Python frontend, MLIR lit tests,
            TableGen attributes and an LLVM pin (a miniature Triton).
  fork      its own TLX frontend and warp-specialization partitioner ([italic]divergent[/italic] area),
            a layout change that conflicts with upstream, and past sync work done in every
            way real forks record it:
              #101 picked with forksync's [cyan]Upstream-Commit:[/cyan] trailer
              #102 picked with [cyan]git cherry-pick -x[/cyan]
              #103 picked with a reworded message and no provenance (found by [cyan]patch-id[/cyan])
              #104 #105 squashed into one bundle commit that cites both PRs
              #106 picked, then backed out ([cyan]Revert[/cyan])
              #107 deferred in a git note (refs/notes/forksync)
              #108 an empty upstream commit
              #109 won't-port, recorded by an [cyan]Upstream-Wont-Port:[/cyan] trailer
              #117 an urgent isolated pick ([cyan]Upstream-Urgent:[/cyan]) — it does not move the frontier
  upstream also reverted #102 (#115), and #112/#113 build on each other in the divergent area.
"""


def run_demo(workdir: str | None = None, console: Console | None = None, *, local_only: bool = False) -> int:
    """Run the demo in ``workdir`` (a new temporary folder when None). Returns an exit code.

    Part 1 (local): status → plan → apply on the scenario's repositories. Part 2 (unless
    ``local_only``): the same fork on a local GitHub (:mod:`bot.demo.github`) — webhooks, sync PRs,
    L1 validation of the reference Triton kernels (``TRITON_INTERPRET=1``), the merge gate, landing.
    Part 3: a nightly with an injected break and an infrastructure failure → one triage issue."""
    import os
    import sys


    console = console or Console(width=None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", 110)))
    root = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="forksync-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        scenario = build_scenario(root)
    except FileExistsError as e:      # a second run into the same --dir: say so, no traceback
        print(f"forksync: {e} (or remove it)", file=sys.stderr)
        return 2
    console.print(Rule("forksync demo"))
    console.print(STORY.format(root=root))
    cfg = str(scenario.config_path)

    def step(title: str, *argv: str) -> int:
        console.print(Rule(title))
        console.print(f"[dim]$ forksync --config {cfg} {' '.join(argv)}[/dim]")
        return cli_main(["--config", cfg, *argv])

    rc = step("1. Where does every upstream commit stand?", "status")
    if rc:
        return rc
    step("2. Why is #106 not counted as handled?", "ledger", "show", "#106")
    rc = step("3. Partition the pending commits into bundles and chains", "plan")
    if rc:
        return rc
    for unit_id in _unit_ids(cfg):
        step(f"4. Apply {unit_id} as a local branch (one fork commit per upstream commit)", "apply", unit_id)
    step("5. Status with the sync branches in flight", "status")
    rc = 0
    if not local_only:
        # lazy: the local GitHub, the App and the nightly load only when the demo reaches them, not for every CLI command
        from bot.demo.github import run_github_demo
        from bot.demo.nightly import run_nightly_demo  # lazy: as above
        rc = run_github_demo(console, root / "github") or rc
        # the same fork, meta/triton, on another local GitHub: its issue numbers start past the
        # GitHub part's, so the one store (and the dashboard) names each issue once
        rc = run_nightly_demo(console, root / "nightly", first_issue=NIGHTLY_FIRST_ISSUE) or rc
        db = merge_stores(root / "forksync.db", [root / "github" / "app" / "forksync.db", root / "nightly" / "forksync.db"])
        console.print(f"The App's store (sync, validation, triage) is {db} — see it: forksync dashboard --db {db}")
    console.print(Rule("forksync demo finished" if rc == 0 else "forksync demo finished, with problems (see above)"))
    console.print(f"The repositories stay in {root} — try: forksync --config {cfg} ledger export --json")
    return rc


def merge_stores(target: Path, sources: list[Path]) -> Path:
    """Copy every row of the demo's stores (the GitHub part's, the nightly's) into one store at
    ``target``, so ``forksync dashboard --db target`` shows all of it. Missing sources are skipped."""
    from bot.handlers import all_routers  # lazy: every table is declared before the store opens
    from bot.store import Store  # lazy: as above

    all_routers()
    import bot.l2.store  # noqa: F401  # lazy: the L2 and triage tables too
    import bot.triage.store  # noqa: F401  # lazy: as above
    with Store(target) as store:
        tables = [r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
        for i, src in enumerate(s for s in sources if s.exists()):
            store.conn.execute(f"ATTACH DATABASE ? AS src{i}", [str(src)])
            have = {r[0] for r in store.conn.execute(f"SELECT name FROM src{i}.sqlite_master WHERE type='table'")}
            for t in tables:
                if t not in have:
                    continue
                cols = [r[1] for r in store.conn.execute(f"PRAGMA src{i}.table_info({t})")]
                mine = {r[1] for r in store.conn.execute(f"PRAGMA main.table_info({t})")}
                cols = [c for c in cols if c in mine and c != "id"] if "id" in mine and t != "webhook_deliveries" else [c for c in cols if c in mine]
                names = ", ".join(f'"{c}"' for c in cols)
                store.conn.execute(f'INSERT OR REPLACE INTO main."{t}" ({names}) SELECT {names} FROM src{i}."{t}"')
            store.conn.execute(f"DETACH DATABASE src{i}")
    return target


def _unit_ids(cfg: str) -> list[str]:
    """The unit ids of ``forksync plan --json`` (the same planner and output a user sees)."""
    import contextlib
    import io
    import json


    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        cli_main(["--config", cfg, "--quiet", "plan", "--json"])
    return [u["id"] for u in json.loads(buf.getvalue())["units"]]


def register(sub, common) -> None:
    p = sub.add_parser("demo", parents=[common], help="run forksync end to end on a built-in upstream/fork pair",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", metavar="DIR", help="scratch folder to build the repositories in (default: a new temp dir)")
    p.add_argument("--local-only", action="store_true",
                   help="only the local part (status, plan, apply): no local GitHub, kernels or nightly")
    p.set_defaults(func=lambda args: run_demo(args.dir, local_only=args.local_only))
