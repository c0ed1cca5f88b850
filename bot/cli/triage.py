"""``forksync triage …``: try the grouping on your own logs.

* ``forksync triage group FILE.jsonl`` — one JSON object per line with a ``text`` field (a raw
  failure output; optional ``test``, ``commit``, ``outcome``, ``run``). Each object is written back
  to stdout, in order, as one JSON line with ``signature``, ``group`` and ``class`` added
  (``infrastructure`` / ``flaky`` / ``real``; ``flaky`` when the file shows the same test both
  passing and failing on one commit). Objects whose ``outcome`` is passed/skipped get nulls.
* ``forksync triage suggest FILE.jsonl`` — one suggested rule (YAML) per signature no rule matches.
* ``forksync triage status [--db FILE] [--repo O/R] [--class C]`` — the root causes tracked in the
  database for one fork, with their class, state, issue and counts (infrastructure and flaky ones
  are only visible here).
* ``forksync triage extract REPORT`` — a runner result JSON, JUnit XML, lit output or raw CI log
  → the JSON lines ``group`` reads (one per test outcome; passes too, so flakiness shows), each
  with its run, commit and platform (from the result, else ``--run``/``--commit``/``--platform``).
* ``forksync triage nightly --db DB --run NAME --date DATE REPORT…`` — the deployed nightly path
  in local mode: one nightly's reports → records → signatures, classes, the issue lifecycle
  against the store (issues in the store, or on a GitHub with ``--github-url``/``--token``, then
  under the fork's triage claim in ``<--workdir>/locks``, the App's) → the actions as one JSON
  object on stdout. The nightly belongs to a fork (``--repo``, else the configured fork): each
  fork's root causes, processed nightlies and last greens are its own.

Rules come from ``triage.rules`` in forksync.yml, or ``--rules FILE``. ``-`` reads stdin.
Bad input (a line that is not a JSON object, or lacks ``text``) stops before any output, naming
the line: nothing is half-written.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from bot.cli.main import config_from_args
from bot.cli.text import say, text
from bot.config.forksync import UserError
from bot.store import Store
from bot.triage.classify import flaky_keys, record_class
from bot.triage.group import Grouper
from bot.triage.issues import load_state
from bot.triage.lifecycle import OlderNightly
from bot.triage.local_issues import move_issues
from bot.triage.records import (
    RESULT_JSON,
    FailureRecord,
    RecordError,
    decode_report,
    detect_format,
    from_junit,
    from_lit,
    from_log,
    from_run_result,
    normalize_test_id,
)
from bot.triage.rules import RulesError, RulesTable, load_rules, suggest_rule
from bot.triage.store import adopt_unassigned


def register(sub, common) -> None:
    p = sub.add_parser("triage", parents=[common], help="nightly triage: signatures, groups, rules")
    tsub = p.add_subparsers(dest="triage_command", metavar="SUBCOMMAND")
    g = tsub.add_parser("group", parents=[common],
                        help="add signature/group/class to each JSON line of FILE (a 'text' field each)")
    g.add_argument("file", metavar="FILE.jsonl", help="JSON lines with a 'text' field ('-' = stdin)")
    g.add_argument("--rules", metavar="FILE", help="rules YAML (default: triage.rules of forksync.yml)")
    g.set_defaults(func=_cmd_group)
    s = tsub.add_parser("suggest", parents=[common], help="suggest rules for signatures no rule matches")
    s.add_argument("file", metavar="FILE.jsonl")
    s.add_argument("--rules", metavar="FILE", help="rules YAML (default: triage.rules of forksync.yml)")
    s.set_defaults(func=_cmd_suggest)
    e = tsub.add_parser("extract", parents=[common],
                        help="turn a result JSON / JUnit XML / lit output / CI log into JSON lines for 'group'")
    e.add_argument("file", metavar="REPORT")
    e.add_argument("--format", choices=("auto", "result", "junit", "lit", "log"), default="auto",
                   help="the report's format (default auto: detected from its content and name)")
    e.add_argument("--job", help="job name for a raw log (default: the file's name)")
    _report_args(e)
    e.set_defaults(func=_cmd_extract)
    n = tsub.add_parser("nightly", parents=[common],
                        help="triage one nightly's reports: signatures, classes and the issue lifecycle; actions as JSON")
    n.add_argument("reports", nargs="+", metavar="REPORT",
                   help="runner result JSON, JUnit XML, lit output or raw CI log (format detected per file)")
    n.add_argument("--db", help="SQLite database holding the triage state [FORKSYNC_DB, forksync.db]")
    n.add_argument("--run", required=True, help="the nightly's id (a run already processed changes nothing)")
    n.add_argument("--date", required=True, help="when the nightly ran: YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS] (UTC); "
                                                 "a nightly older than one already triaged is refused")
    n.add_argument("--commit", default="", help="commit the nightly ran on (default: from the result JSON files)")
    n.add_argument("--platform", default="", help="platform of JUnit/lit/log reports (result JSON files name their own)")
    n.add_argument("--rules", metavar="FILE", help="rules YAML (default: triage.rules of forksync.yml)")
    n.add_argument("--repo", help="OWNER/REPO the nightly ran for: its root causes and issues are kept apart from other "
                                   "forks' (default: the configured fork when its URL names one, else local/fork)")
    n.add_argument("--github-url", help="a GitHub REST API base to keep the issues on (e.g. the local GitHub) "
                                         "[FORKSYNC_GITHUB_URL]; without it issues are kept in the database")
    n.add_argument("--token", help="token for --github-url [FORKSYNC_TOKEN]")
    n.add_argument("--workdir", help="the App's working folder: with --github-url, the fork's triage waits for the "
                                      "App's under the claim in its locks/ [FORKSYNC_WORKDIR, .forksync-work]")
    n.set_defaults(func=_cmd_nightly)
    st = tsub.add_parser("status", parents=[common],
                         help="root causes tracked in the database: real issues, infrastructure, flaky")
    st.add_argument("--db", help="SQLite database [FORKSYNC_DB, forksync.db]")
    st.add_argument("--repo", help="OWNER/REPO whose root causes to list (default: the configured fork, as for 'nightly')")
    st.add_argument("--class", dest="klass", choices=("real", "infrastructure", "flaky"), help="only this class")
    st.set_defaults(func=_cmd_status)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _table(args):
    try:
        if args.rules:
            return RulesTable(tuple(load_rules(args.rules)))
        cfg = config_from_args(args)
        base = Path(args.config).resolve().parent if getattr(args, "config", None) else Path.cwd()
        return RulesTable.from_settings(cfg.triage, base)
    except RulesError as e:
        raise UserError(str(e)) from None


def read_jsonl(path: str) -> list[dict]:
    """Parse all lines first; raise ``UserError`` naming every bad line (up to 5)."""
    try:
        content = sys.stdin.read() if path == "-" else Path(path).read_text()
    except OSError as e:
        raise UserError(text("triage", "cannot_read", path=path, error=e.strerror)) from None
    objs, bad = [], []
    for n, line in enumerate(content.splitlines(), 1):
        if not line.strip():
            continue
        try:
            o = json.loads(line)
        except json.JSONDecodeError as e:
            bad.append(text("triage", "bad_jsonl_line", n=n, problem="json", msg=e.msg, col=e.colno))
            continue
        if not isinstance(o, dict):
            bad.append(text("triage", "bad_jsonl_line", n=n, problem="not_object", type=type(o).__name__))
        elif o.get("outcome") not in ("passed", "skipped") and not isinstance(o.get("text"), str):
            bad.append(text("triage", "bad_jsonl_line", n=n, problem="no_text"))
        else:
            objs.append(o)
    if bad:
        raise UserError(text("triage", "bad_jsonl", path=path, bad=bad))
    return objs


def _records(objs: list[dict]) -> list[FailureRecord]:
    out = []
    for i, o in enumerate(objs):
        test = str(o.get("test") or "")
        out.append(FailureRecord(
            test=normalize_test_id(test) if test else f"line:{i + 1}", raw_test=test,
            outcome=str(o.get("outcome") or "failed"), text=o.get("text") or "",
            commit=str(o.get("commit") or ""), run=str(o.get("run") or ""),
            platform=str(o.get("platform") or ""), source="jsonl"))
    return out


def _cmd_group(args) -> int:
    table = _table(args)
    objs = read_jsonl(args.file)
    recs = _records(objs)
    # flakiness only among records that name their test: a line without one is its own test
    flaky = flaky_keys(r for r in recs if not r.test.startswith("line:"))
    grouper = Grouper(table)
    out = sys.stdout
    for o, r in zip(objs, recs):
        if not r.failed:
            o.update(signature=None, group=None, **{"class": None})
        else:
            test = "" if r.test.startswith("line:") else r.test
            sig = grouper.signature(r.output, test)
            rule = table.match(sig)
            o.update(signature=sig.key, group=rule.id if rule else f"sig-{sig.digest}",
                     **{"class": record_class(r, sig, rule, flaky)})
        out.write(json.dumps(o, ensure_ascii=False) + "\n")
    return 0


def _cmd_suggest(args) -> int:
    import yaml


    table = _table(args)
    recs = [r for r in _records(read_jsonl(args.file)) if r.failed]
    grouper = Grouper(table)
    sigs = [grouper.signature(r.output, "" if r.test.startswith("line:") else r.test) for r in recs]
    taken = [r.id for r in table.rules]
    rules = []
    for s in table.unmatched(sigs):
        r = suggest_rule(s, taken)
        taken.append(r["id"])
        rules.append(r)
    sys.stdout.write(yaml.safe_dump(rules, sort_keys=False, allow_unicode=True) if rules else text("triage", "all_matched"))
    return 0


def _report_args(p) -> None:
    p.add_argument("--run", default="", help="the nightly's id recorded on every record (a result JSON's own "
                                             "suite@commit@time otherwise)")
    p.add_argument("--commit", default="", help="commit recorded on records of reports that do not name one")
    p.add_argument("--platform", default="", help="platform recorded on records of reports that do not name one")


def read_report(path: Path, fmt: str = "auto", *, run: str = "", commit: str = "", platform: str = "",
                time: int = 0, job: str = "") -> list[FailureRecord]:
    """The records of one report file (format detected unless given). ``run``/``commit``/``platform``/
    ``time`` fill what the report does not say (a result JSON names its own commit and platform).
    Raises ``UserError`` naming the file."""
    from dataclasses import replace

    try:
        content = decode_report(path.read_bytes())
    except OSError as e:
        raise UserError(text("triage", "cannot_read", path=path, error=e.strerror)) from None
    try:
        fmt = detect_format(content, path.name) if fmt == "auto" else fmt
        if fmt == "result":
            try:
                data = json.loads(content)
            except json.JSONDecodeError as e:
                raise UserError(text("triage", "result_not_json", path=path, msg=e.msg, line=e.lineno)) from None
            if not isinstance(data, dict):
                kind = {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(data), "number")
                raise UserError(text("triage", "result_not_object", path=path, kind=kind, expected=RESULT_JSON))
            recs = from_run_result(data, run=run, time=time or None)
        elif fmt == "junit":
            recs = from_junit(content, where=str(path), run=run, commit=commit, platform=platform, time=time,
                              suite=job or path.stem)
        elif fmt == "lit":
            recs = from_lit(content, run=run, commit=commit, platform=platform, time=time, suite=job or path.stem)
        else:
            recs = from_log(content, job=job or path.stem, run=run, commit=commit, platform=platform, time=time)
    except RecordError as e:       # from_junit names the file itself (``where``)
        raise UserError(str(e) if str(e).startswith(f"{path}: ") else f"{path}: {e}") from None
    return [replace(r, commit=r.commit or commit, platform=r.platform or platform) for r in recs]


def _cmd_extract(args) -> int:
    recs = read_report(Path(args.file), args.format, run=args.run, commit=args.commit, platform=args.platform,
                       job=args.job or "")
    for r in recs:
        o = {"test": r.raw_test or r.test, "outcome": r.outcome, "text": r.output if r.failed else "",
             "commit": r.commit, "run": r.run, "platform": r.platform}
        sys.stdout.write(json.dumps(o, ensure_ascii=False) + "\n")
    return 0


def parse_date(given: str) -> int:
    """Epoch seconds UTC of ``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM[:SS]`` (UTC). Raises ``UserError``."""
    from datetime import datetime, timezone

    for fmt in ("%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"):
        try:
            return int(datetime.strptime(given.strip().removesuffix("Z"), fmt).replace(tzinfo=timezone.utc).timestamp())
        except ValueError:
            continue
    raise UserError(text("triage", "bad_date", given=repr(given)))


def _cmd_nightly(args) -> int:
    import asyncio
    import os

    when = parse_date(args.date)
    full, configured = fork_of(args)
    recs: list[FailureRecord] = []
    for f in args.reports:
        recs += read_report(Path(f), run=args.run, commit=args.commit, platform=args.platform, time=when)
    commits = sorted({r.commit for r in recs if r.commit})
    commit = args.commit or (commits[0] if len(commits) == 1 else "")
    if not args.commit and len(commits) > 1:
        raise UserError(text("triage", "several_commits", commits=[c[:12] for c in commits]))
    table = _table(args)
    settings = config_from_args(args).triage
    db = args.db or os.environ.get("FORKSYNC_DB", "forksync.db")
    url = args.github_url or os.environ.get("FORKSYNC_GITHUB_URL")
    token = args.token or os.environ.get("FORKSYNC_TOKEN")
    workdir = args.workdir or os.environ.get("FORKSYNC_WORKDIR") or ".forksync-work"
    owner, _, repo = full.partition("/")
    with Store(db) as store:
        if configured and adopt_unassigned(store, full):
            # rows recorded before nightlies named their fork belong to the one fork local mode serves;
            # their issues were kept under the old default name
            move_issues(store, "local/fork", full)
        from bot.triage.nightly_local import nightly_actions  # lazy: it brings aiohttp (≈ 0.25 s), no other command needs it

        try:
            out = asyncio.run(nightly_actions(store, recs, table=table, settings=settings, run=args.run, time=when,
                                              commit=commit, owner=owner, repo=repo, github_url=url, token=token,
                                              locks=Path(workdir) / "locks"))
        except OlderNightly as e:
            raise UserError(text("triage", "older_nightly", error=str(e), fork=full)) from None
    sys.stdout.write(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return 0


def fork_of(args) -> tuple[str, bool]:
    """``(owner/repo, configured)``: the fork a nightly belongs to — ``--repo``, else the configured
    fork's name (``fork.url``), else ``local/fork``; ``configured``: it is the configured fork (the
    one fork local mode serves). Raises :class:`UserError` for a ``--repo`` that is not OWNER/REPO."""
    mine = config_from_args(args).fork.full_name()
    if args.repo is None:
        return mine or "local/fork", True
    if not re.fullmatch(r"[\w.\-]+/[\w.\-]+", args.repo):
        raise UserError(text("triage", "bad_repo", given=repr(args.repo)))
    return args.repo, args.repo == mine


def _cmd_status(args) -> int:
    import os
    import time


    db = args.db or os.environ.get("FORKSYNC_DB", "forksync.db")
    if not Path(db).exists():
        raise UserError(text("triage", "no_database", db=db))
    full, _ = fork_of(args)
    with Store(db) as store:
        state = load_state(store, full)
        unassigned = len(load_state(store, "").tracked) if full else 0
    rows = sorted(state.tracked.values(), key=lambda t: (-t.last_seen, t.key))
    if args.klass:
        rows = [t for t in rows if t.cls == args.klass]
    day = lambda t: time.strftime("%Y-%m-%d", time.gmtime(t)) if t else "-"  # noqa: E731
    say("triage", "status_columns")
    for t in rows:
        say("triage", "status_row", key=t.key, cls=t.cls, state=t.state, issue=t.issue, runs=t.runs, tests=len(t.tests),
            first=day(t.first_seen), last=day(t.last_seen))
    say("triage", "status_total", count=len(rows), fork=full, processed=len(state.processed))
    if unassigned:
        say("triage", "status_unassigned", count=unassigned)
    return 0
