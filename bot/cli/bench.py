"""``forksync bench resolve``: the deterministic conflict rules scored on the fork's own resolved
picks and merges of upstream (docs/resolve.md).

Finds the picks by the fork's markers (``resolve.picks``), replays each upstream commit onto the
first parent of the fork commit that landed it (with ``--merges`` / ``resolve.merges``, also
merges the two parents of each of the fork's merges of upstream again), and scores every rule alone, the configured chain
and the whole-file / per-hunk baselines against the file the fork landed: exact, equal after
whitespace normalisation, wrong, declined. Tables per strategy (all picks, the development part
and the held-out newest third) and per file kind; ``--json`` prints ``forksync.resolve-bench/1``.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from datetime import datetime, timezone

import pygit2

from bot.agents.client import AgentClient
from bot.cli.ledger import state_errors
from bot.cli.main import config_from_args, refuse_unpaired
from bot.cli.progress import Progress, reporter, warn_once
from bot.cli.serve import open_store
from bot.cli.text import text
from bot.config.forksync import RESOLVE_RULES, UserError
from bot.config.objects import open_repository
from bot.git import repo as gitio
from bot.resolve import agent_bench
from bot.resolve.bench import BASELINES, KINDS, Result, score, to_json
from bot.resolve.replay import find_resolved_merges, find_resolved_picks, replay
from bot.sync.ingest import default_store, open_side, side_tip

PARTS = ("all", "dev", "held-out")
#: At most this many paths are named in a line of the tables; ``--json`` has them all.
SHOWN = 3


def _since(value: str | None) -> int | None:
    if not value:
        return None
    try:
        return int(datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=timezone.utc).timestamp())
    except ValueError:
        raise UserError(text("bench", "bad_since", given=repr(value))) from None


def _rules(value: str | None, default: list[str]) -> list[str]:
    if not value:
        return list(default)
    names = [x.strip() for x in value.split(",") if x.strip()]
    bad = [n for n in names if n not in RESOLVE_RULES]
    if bad:
        raise UserError(text("bench", "unknown_rules", unknown=bad, known=list(RESOLVE_RULES)))
    return names


def run_resolve_bench(cfg, *, since: int | None = None, chain: list[str] | None = None, agent=None,
                      merges: bool | None = None, progress: Progress | None = None, args=None) -> dict:
    """Open the repositories of ``cfg``, replay the resolved picks (and, with ``merges`` — default
    ``resolve.merges`` — the fork's merges of upstream) and score them; returns the
    ``forksync.resolve-bench/1`` document (with ``timings_s``). ``agent``: ``(client, part,
    limit)`` to ask the conflict agent about the files the rules declined too (the document's
    ``agent`` key, :mod:`bot.resolve.agent_bench`). ``progress(step, done, total)``: the stages
    (:mod:`bot.cli.progress`). Raises UserError for bad refs or repositories, as ``status`` says
    them (:func:`bot.cli.ledger.state_errors`: the near ref; with the command's ``args``, the flag
    or the key at ``FILE:LINE:COLUMN`` that set it)."""
    def step(name: str, done: int = 0, total: int = 0) -> None:
        if progress is not None:
            progress(name, done, total)

    t0 = time.perf_counter()
    step("find-resolved")
    chain = list(cfg.resolve.rules if chain is None else chain)
    merges = cfg.resolve.merges if merges is None else merges
    with state_errors(args):
        fork_dir = open_side("fork", cfg.fork.url or ".", cfg, fetch=False)
        up_dir = open_side("upstream", cfg.upstream.url, cfg, fetch=False, fork_dir=fork_dir) if cfg.upstream.url else fork_dir
        repo, _ = gitio.open_pair(up_dir, fork_dir, cfg.cache_dir)
        fork_repo = open_repository(fork_dir)
        up_repo = fork_repo if up_dir == fork_dir else open_repository(up_dir)
        up_tip = side_tip(up_repo, cfg.upstream, "upstream", f"upstream ({cfg.upstream.url or cfg.fork.url})")
        fork_tip = side_tip(fork_repo, cfg.fork, "fork", f"fork ({cfg.fork.url or '.'})")
    picks, skipped = find_resolved_picks(repo, fork_tip, up_tip, cfg, since=since)
    found: list = list(picks)
    unreplayed = None
    if not merges and not picks:
        # a fork that syncs by merging carries no pick markers: its answers are in its merges
        unreplayed = len(find_resolved_merges(repo, fork_tip, up_tip, since=since)[0])
    if merges:
        merged, merge_skips = find_resolved_merges(repo, fork_tip, up_tip, since=since)
        replayed = {m.fork_commit for m in merged}
        # a marked merge commit is no pick, but it is replayed here as a merge
        skipped = [s for s in skipped if s.what not in replayed] + merge_skips
        found += merged
    t1 = time.perf_counter()
    replays = replay(repo, found, cfg, up_tip, progress=progress)
    t2 = time.perf_counter()
    step("score")
    res = score(replays, chain)
    t3 = time.perf_counter()
    agent_doc = None
    if agent is not None:
        step("agent")
        client, part, limit = agent
        agent_doc = asyncio.run(_ask_agent(client, replays, res, repo, part, limit))
    skipped = list(skipped) + [s for r in replays for s in r.skipped]
    set_aside = sorted({p for r in replays for p in r.set_aside})
    timings = {"find": round(t1 - t0, 3), "replay": round(t2 - t1, 3), "score": round(t3 - t2, 3)}
    if agent_doc is not None:
        timings["agent"] = round(time.perf_counter() - t3, 3)
    timings["total"] = round(time.perf_counter() - t0, 3)
    return to_json(res, chain=chain, skipped=skipped, extra={
        "fork_tip": fork_tip, "fork_ref": cfg.fork.ref, "upstream_tip": up_tip, "merges": merges,
        "merges_not_replayed": unreplayed,
        "files_set_aside": {"paths": set_aside, "picks": sum(1 for r in replays if r.set_aside),
                            "why": "missing from the repository; merged without them (rename detection reads every file)"},
        "timings_s": timings, **({"agent": agent_doc} if agent_doc is not None else {}),
    })


async def _ask_agent(client, replays, res, repo, part, limit) -> dict:
    def message_of(sha: str) -> str:
        return repo[sha].peel(pygit2.Commit).message
    async with client:
        return await agent_bench.score_agent(client, replays, res, message_of=message_of, part=part, limit=limit)


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def render(doc: dict, console) -> None:
    """The human tables of a ``forksync.resolve-bench/1`` document."""
    from rich.table import Table
    b = doc["split"]["boundary_time"]
    when = datetime.fromtimestamp(b, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") if b else "-"
    found = "picks and merges" if doc.get("merges") else "picks"
    # a skipped pick or merge is named by its commit, a file left out of one by commit:path
    whole, files = [s for s in doc["skipped"] if ":" not in s["what"]], [s for s in doc["skipped"] if ":" in s["what"]]
    console.print(text("bench", "counts", found=found, picks=doc["picks"], conflicting=doc["conflicting_picks"],
                       skipped=Counter(s["why"] for s in whole).most_common()))
    if files:
        console.print(text("bench", "files_left_out", total=len(files), reasons=Counter(s["why"] for s in files).most_common()))
    if not doc["picks"]["all"] and not doc.get("merges"):
        console.print(text("bench", "none_resolved", fork_ref=doc.get("fork_ref"), merges=doc.get("merges_not_replayed")),
                      soft_wrap=True)
    sources = doc.get("sources", {})
    for source in ("pick", "merge"):
        n = sources.get(source)
        if n is None or not (doc.get("merges") or n["all"]["with_markers"]):
            continue      # picks alone, none landed with markers: the line above says it all
        console.print(text("bench", "source", source=source, a=n["all"], d=n["dev"], h=n["held-out"]))
    aside = doc.get("files_set_aside", {}).get("paths") or []
    if aside:
        # a blob-less clone lacks every file: name a few, the document has them all
        console.print(text("bench", "set_aside", paths=aside, shown=SHOWN))
    console.print(text("bench", "split", rule=doc["split"]["rule"], when=when))
    console.print(text("bench", "chain", chain=doc["chain"]))
    sc = doc["scores"]
    for part in PARTS:
        t = Table(title=text("bench", "scores_title", part=part, found=found))
        for i, col in enumerate(text("bench", "scores_columns").split("\t")):
            t.add_column(col, justify="left" if i == 0 else "right")
        for name in ("chain", *RESOLVE_RULES, *BASELINES):
            s = sc.get(part, {}).get(name, {}).get("*")
            if s is not None:
                t.add_row(name, str(s["files"]), str(s["exact"]), str(s["ws"]), str(s["wrong"]), str(s["declined"]),
                          _pct(s["precision"]), _pct(s["coverage"]))
        console.print(t)
    k = Table(title=text("bench", "kinds_title", found=found))
    kind_col, files_col = text("bench", "kinds_columns").split("\t")
    k.add_column(kind_col)
    k.add_column(files_col, justify="right")
    for name in ("chain", *BASELINES):
        k.add_column(name, justify="right")
    for kind in KINDS:
        s_all = sc.get("all", {}).get("chain", {}).get(kind)
        if s_all is None:
            continue
        s_held = sc.get("held-out", {}).get("chain", {}).get(kind)
        row = [kind, f"{s_all['files']} [{s_held['files'] if s_held else 0}]"]
        for name in ("chain", *BASELINES):
            a = sc["all"][name].get(kind, {"exact": 0})
            h = sc.get("held-out", {}).get(name, {}).get(kind, {"exact": 0})
            row.append(f"{a['exact']} [{h['exact']}]")
        k.add_row(*row)
    console.print(k)
    tm = doc.get("timings_s", {})
    if tm:
        console.print(text("bench", "time", timings=tm))


def render_agent(doc: dict, earlier: list[dict], console) -> None:
    """The agent's table (``doc["agent"]``) and the earlier recorded runs to compare with."""
    from rich.table import Table
    a = doc["agent"]
    console.print(text("bench", "agent", model=a["model"], api=a.get("api", "?"), digest=a["prompt_digest"], picks=a["picks"],
                       part=a["part"], tokens=a.get("prompt_tokens_estimated", 0)))
    t = Table(title=text("bench", "agent_title"))
    for i, col in enumerate(text("bench", "agent_columns").split("\t")):
        t.add_column(col, justify="left" if i < 2 else "right")
    for part, by in a["scores"].items():
        for name in ("agent", "chain+agent"):
            s = by[name]
            t.add_row(part, name, str(s["files"]), str(s["exact"]), str(s["ws"]), str(s["wrong"]), str(s["declined"]),
                      _pct(s["precision"]), _pct(s["coverage"]))
    console.print(t)
    why = sorted({o["why"] for o in a["outcomes"] if o["why"]})
    if why:
        console.print(text("bench", "agent_declined", why=why))
    if earlier:
        console.print(text("bench", "earlier_head"))
        for r in earlier:
            when = datetime.fromtimestamp(r["recorded_at"], timezone.utc).strftime("%Y-%m-%d %H:%M")
            console.print(text("bench", "earlier", **{"api": None, **r, "when": when}), soft_wrap=True)


def warn_missing(doc: dict, git_dir: str) -> None:
    """A warning on stderr when blobs missing from the repository left files, or whole picks and
    merges, out of the replay (a partial clone or snapshot): the figures miss them."""
    files = sum(1 for s in doc["skipped"] if ":" in s["what"])
    whole = sum(1 for s in doc["skipped"] if ":" not in s["what"] and "missing object" in s["why"])
    if not files and not whole:
        return
    warn_once(text("bench", "missing", files=files, whole=whole, advice=gitio.fetch_advice(git_dir, [])))


def cmd_bench_resolve(args) -> int:
    cfg = config_from_args(args)
    chain = _rules(args.rules, cfg.resolve.rules)
    agent = None
    refuse_unpaired("--agent", args.agent, (("--agent-limit", args.agent_limit), ("--base-url", args.base_url),
                                             ("--db", args.db),
                                             ("--agent-part", args.agent_part if args.agent_part != "held-out" else None)))
    if args.agent:
        if args.agent_limit is not None and args.agent_limit < 1:
            raise UserError(text("bench", "agent_limit", limit=args.agent_limit))
        try:
            store = open_store(args.db) if args.db else default_store(cfg)
        except UserError as e:
            raise UserError(text("bench", "bad_db", db=args.db, error=str(e))) from None
        client = AgentClient.from_env(cfg.agents, store, base_url=args.base_url)
        if client.off_reason:
            raise UserError(text("bench", "agent_off", error=client.off_reason))
        agent = (client, args.agent_part, args.agent_limit)
    try:
        with reporter(args) as progress:
            doc = run_resolve_bench(cfg, since=_since(args.since), chain=chain, agent=agent, merges=args.merges,
                                    progress=progress, args=args)
    except agent_bench.AgentAPIError as e:
        raise UserError(text("bench", "agent_off", error=str(e))) from None
    warn_missing(doc, cfg.fork.url or ".")
    earlier: list[dict] = []
    if agent is not None:
        run_id = agent_bench.record(store, doc["agent"], fork_tip=doc["fork_tip"], upstream_tip=doc["upstream_tip"],
                                    now=time.time())
        doc["agent"]["run"] = run_id
        earlier = agent_bench.earlier_runs(store, fork_tip=doc["fork_tip"])
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    from rich.console import Console
    console = Console(width=None if sys.stdout.isatty() else 160)      # a pipe or file: wide enough for the tables
    render(doc, console)
    if agent is not None:
        render_agent(doc, earlier, console)
    return 0


def register(sub, common) -> None:
    p = sub.add_parser("bench", parents=[common], help="measurements on the fork's own history")
    bsub = p.add_subparsers(dest="bench_command", metavar="SUBCOMMAND", required=True)
    r = bsub.add_parser("resolve", parents=[common],
                        help="score the deterministic conflict rules on the fork's resolved picks")
    r.add_argument("--ref", dest="fork_ref", metavar="REF", default=argparse.SUPPRESS,
                   help="the fork branch whose history is read (same as --fork-ref)")
    r.add_argument("--since", metavar="DATE", help="only picks (and merges) the fork committed on or after DATE (YYYY-MM-DD, UTC)")
    r.add_argument("--rules", metavar="A,B", help="the chain's rules, in order (default: resolve.rules of the config)")
    r.add_argument("--merges", action=argparse.BooleanOptionalAction, default=None,
                   help="also replay the fork's merges of upstream (a fork that syncs by merging: each merge commit is the "
                        "answer; default: resolve.merges of the config)")
    r.add_argument("--json", action="store_true", help="print the forksync.resolve-bench/1 JSON document")
    r.add_argument("--agent", action="store_true",
                   help="also ask the conflict agent (agents: in forksync.yml, key in FORKSYNC_ANTHROPIC_KEY) about the "
                        "files the rules declined, score its answers and record the run in the store")
    r.add_argument("--agent-part", choices=agent_bench.PARTS, default="held-out",
                   help="which picks the agent is asked about (default: held-out)")
    r.add_argument("--agent-limit", type=int, metavar="N", help="ask about at most N picks (oldest first)")
    r.add_argument("--base-url", metavar="URL", help="the Anthropic API's base URL (default: agents.base_url)")
    r.add_argument("--db", metavar="PATH", help="the store the agent's runs are recorded in (default: the sync store)")
    r.set_defaults(func=cmd_bench_resolve)


__all__ = ["run_resolve_bench", "render", "Result"]
