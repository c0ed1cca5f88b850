"""``forksync status`` and ``forksync ledger export|show`` (the core's commands).

Human output is rich tables on stdout; ``--json`` prints one stable document (schemas in
docs/core.md: ``forksync.status/1``, ``forksync.ledger/1``, ``forksync.ledger-entry/1``; shas are
full 40-hex, dates ISO 8601 UTC). Progress goes to stderr (bot/cli/progress.py): bars on a
terminal, plain lines elsewhere; none with ``--quiet``. Bad refs, bad dates, failed clones → exit 2 with the reason (``UserError``);
missing objects are reported (stderr / ``missing_objects``), never fatal.
"""
from __future__ import annotations

import json
import os
import re
from contextlib import contextmanager
from datetime import datetime, timezone

import pygit2

from bot.cli.main import config_source, fork_config_from_args
from bot.cli.progress import reporter, warn_once
from bot.cli.text import add_row, cut, text
from bot.config.forksync import UserError, setting_origin, unmatched_area_globs
from bot.core.ledger import UNCHECKED
from bot.core.merged import revert_of
from bot.git import repo as gitio
from bot.model import Disposition, Evidence, LedgerEntry
from bot.sync.ingest import AsOfError, before_first_own_commit, end_of_day, load_state, series


def iso(ts: int | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextmanager
def state_errors(args=None):
    """:func:`bot.sync.ingest.load_state`'s errors as the one-line :class:`UserError` each command
    prints: an unknown ref as git names it, a git failure as ``git failed: …``, a bad date as
    ``--as-of: …`` (only a date's own errors: another ValueError is no --as-of problem). With the
    command's ``args``, an error about the fork's or upstream's ref or location also says where
    that setting was given: the flag, or the key at ``FILE:LINE:COLUMN`` of the configuration."""
    try:
        yield
    except gitio.RefError as e:
        raise UserError(f"{e}" + _set_at(args, e.side, "ref")) from None
    except gitio.GitIOError as e:
        raise UserError(text("ledger", "git_failed", error=str(e)) + _set_at(args, e.side, "url")) from None
    except AsOfError as e:
        raise UserError(text("ledger", "bad_as_of", error=str(e))) from None
    except ValueError as e:
        raise UserError(str(e)) from None


def _set_at(args, side: str, name: str) -> str:
    """``"; fork.ref at rocm.yml:4:8"`` (or ``"; given by --fork-ref"``) for the setting ``side.name``
    of the command's ``args``; empty without args or side, or where the setting is the default."""
    if args is None or not side:
        return ""
    path, overrides = config_source(args)
    origin = setting_origin(path, overrides, f"{side}.{name}")
    return "" if origin is None else "; " + text("ledger", "set_at", o=origin)


def _load(args, as_of=None, progress=None):
    cfg = fork_config_from_args(args)
    with state_errors(args):
        return load_state(cfg, as_of=as_of, progress=progress)


def _pin_json(pin, base: str | None) -> dict:
    """``is_base``: the pin is the merge base ``base``. A pin before the range is not always it: on
    a fork that merges upstream, a merged commit the fork reverted holds the contiguous pin at
    the commit before it, often long before the merge base (``index`` -1 both). With no merge
    base a pin no entry holds is no commit (:class:`bot.core.pins.Pin`): ``sha`` and ``date``
    None, and it is no base either."""
    return {"sha": pin.sha, "pr": pin.pr, "date": iso(pin.committer_time) if pin.sha else None, "subject": pin.subject,
            "index": pin.index, "is_base": pin.before_range and base is not None and pin.sha == base}


def _held_by(state, holes: list[tuple[LedgerEntry, int | None]]) -> dict | None:
    """``contiguous_pin_held_by``: the holder's pin, disposition and reason, and ``since`` — when
    it has held the pin: a hole since the fork's revert (``fork_commit``, its date), any other
    entry since its upstream commit."""
    p = state.pins
    if not p.holder:
        return None
    hole = next(((e, t) for e, t in holes if e.sha == p.holder.sha), None)
    since = hole[1] if hole and hole[1] is not None else p.holder.committer_time if p.holder.sha else None
    return {**_pin_json(p.holder, state.merge_base), "disposition": p.holder_disposition, "reason": p.holder_reason,
            "since": iso(since), "fork_commit": hole[0].fork_commit if hole else None}


def status_json(state) -> dict:
    """The ``forksync.status/1`` document for a :class:`bot.sync.ingest.SyncState`."""
    p, cfg = state.pins, state.config
    counts = {d.value: n for d, n in state.ledger.counts().items()}
    holes = hole_entries(state) if p.holes else []
    return {
        "schema": "forksync.status/1",
        "as_of": iso(state.as_of),
        "upstream": {"url": cfg.upstream.url or cfg.fork.url, "ref": cfg.upstream.ref, "tip": _pin_json(p.upstream_tip, state.merge_base),
                     "as_of": iso(state.upstream_as_of), "pinned": state.upstream_pinned,
                     "as_of_unknown": state.upstream_as_of_unknown},
        "fork": {"url": cfg.fork.url, "ref": cfg.fork.ref, "tip": state.fork_tip,
                 "date": iso(int(state.repo[state.fork_tip].committer.time))},
        "merge_base": {"sha": state.merge_base,
                       "date": iso(int(state.repo[state.merge_base].committer.time)) if state.merge_base else None},
        "commits_in_range": len(state.ledger.entries),
        "counts": counts,
        "frontier": _pin_json(p.frontier, state.merge_base),
        "contiguous_pin": _pin_json(p.contiguous, state.merge_base),
        "days_behind": p.days_behind,
        "contiguous_lag_days": p.contiguous_lag_days,
        "contiguous_pin_held_by": _held_by(state, holes),
        # the holes are REVERTED in the Backlog but outside the range that ``counts`` covers
        "backlog": {"total": p.backlog, "by_disposition": p.backlog_by_disposition,
                    "reverted_after_merge": list(p.holes),
                    "holes": [{"sha": e.sha, "pr": e.pr, "subject": e.subject, "date": iso(e.committer_time),
                               "fork_commit": e.fork_commit, "fork_commit_date": iso(t)} for e, t in holes]},
        "merge_based": p.merge_based,
        "not_reached": {"total": p.not_reached, "handled": p.not_reached_handled},
        "isolated_picks": list(p.isolated),
        "in_flight_branches": [b.name for b in state.in_flight],
        "missing_objects": {s: list(m) for s, m in state.missing.items()},
        "pending_unchecked": pending_unchecked(state),
        "unresolved_provenance": [{"upstream_sha": u, "where": w, "rule": r} for u, w, r in state.ledger.unresolved],
        "timings_s": {k: round(v, 3) for k, v in state.timings.items()},
    }


def entry_json(e: LedgerEntry) -> dict:
    """One ``forksync.ledger`` record."""
    return {"index": e.index, "sha": e.sha, "pr": e.pr, "subject": e.subject, "date": iso(e.committer_time),
            "disposition": e.disposition.value, "fork_commit": e.fork_commit, "reason": e.reason,
            "isolated": e.isolated,
            "evidence": [{"rule": x.rule, "fork_commit": x.fork_commit, "detail": x.detail} for x in e.evidence]}


_MISSING_ENTRY = re.compile(r"^(blob|tree|commit) ([0-9a-f]{40})(?: \((.*)\))?$")
def missing_summary(missing: dict[str, tuple[str, ...] | list[str]]) -> str | None:
    """One line about the objects absent from the repository, each object once with the number of
    commits that need it (most first), or None when nothing is missing. ``missing``: ``{commit
    sha: ["blob <sha> (<path>)", …]}`` (:attr:`bot.sync.ingest.SyncState.missing`)."""
    if not missing:
        return None
    need: dict[str, int] = {}
    for entries in missing.values():
        for e in dict.fromkeys(entries):
            need[e] = need.get(e, 0) + 1
    shown = []
    for e, n in sorted(need.items(), key=lambda kv: (-kv[1], kv[0])):
        m = _MISSING_ENTRY.match(e)
        shown.append({"entry": e, "commits": n, "kind": m.group(1) if m else "", "sha": m.group(2) if m else "",
                      "path": m.group(3) if m else ""})
    return text("ledger", "missing", need=shown, commits=len(missing))


def pending_unchecked(state) -> list[str]:
    """Shas of the PENDING entries that patch-ids could not decide: some commit was analysed
    without its blobs (:data:`bot.core.ledger.UNCHECKED` in the reason), so a pick found only by
    patch-id may hide behind them."""
    return [e.sha for e in state.ledger.entries
            if e.disposition is Disposition.PENDING and e.reason.startswith(UNCHECKED)]


def warn_missing(state) -> None:
    said = missing_summary(state.missing)
    if said:
        warn_once(said)
    unchecked = pending_unchecked(state)
    if unchecked:
        # the blobs may be absent from either side's own clone, and within one from any of its
        # promisor remotes (a fork's clone whose upstream remote was fetched with a filter too);
        # ``state.repo`` is no clone when upstream is a separate one (the combined repository of
        # both object stores has no remote), so each clone is asked for its own
        refetch = [(gitio.repo_dir(r), name) for r in _lacking_clones(state) for name in gitio.promisor_remotes(r)]
        warn_once(text("ledger", "pending_unchecked", unchecked=len(unchecked), shas=unchecked, refetch=refetch))


def _lacking_clones(state) -> list[pygit2.Repository]:
    """The fork's and upstream's own repositories (one when upstream's history is in the fork's)
    that lack an object of ``state.missing``; every one when no absent object is named."""
    up = state.upstream_repo if state.upstream_repo is not None else state.fork_repo
    repos = [state.fork_repo] + ([up] if os.path.realpath(up.path) != os.path.realpath(state.fork_repo.path) else [])
    absent = {m.group(2) for entries in state.missing.values() for e in entries if (m := _MISSING_ENTRY.match(e))}
    lacking = [r for r in repos if any(sha not in r for sha in absent)]
    return lacking or repos


def warn_unresolved(state) -> None:
    """forksync's own records that name upstream commits outside the range: most often upstream's
    history was rewritten (force-push), and the decisions they carry no longer apply."""
    xs = [u for u in state.ledger.unresolved if u[2] == "cherry-picked-from"]
    if xs:
        warn_once(text("ledger", "unresolved_cherry_picks", lines=xs))
    un = [u for u in state.ledger.unresolved if u[2] != "cherry-picked-from"]
    past = [u for u in un if _past_tip(state, u[0])]
    un = [u for u in un if u not in past]
    if past:
        warn_once(text("ledger", "unresolved_records", records=past, past=True, upstream_tip=state.upstream_tip,
                       upstream_ref=state.config.upstream.ref))
    if un:
        warn_once(text("ledger", "unresolved_records", records=un, past=False))


def _past_tip(state, sha: str) -> bool:
    """Is ``sha`` (full or abbreviated) a commit whose history holds the upstream tip — a commit
    upstream made after the tip this state was computed at, not one a rewrite took away?"""
    try:
        c = state.repo.revparse_single(sha).peel(pygit2.Commit)
        return state.repo.descendant_of(c.id, state.upstream_tip)
    except (KeyError, ValueError, pygit2.GitError):
        return False


def _same_ref(cfg) -> bool:
    """Do upstream's and the fork's settings name one ref of one repository (no ``upstream.url``,
    or the fork's, and the same ref name)?"""
    def name(ref: str) -> str:
        return ref.removeprefix("refs/heads/")
    return cfg.upstream.url in ("", cfg.fork.url) and name(cfg.upstream.ref) == name(cfg.fork.ref)


def warn_same_tip(state) -> None:
    """Upstream and the fork at one commit because both settings name the fork's own branch: what
    a missing ``--upstream-ref`` gives when upstream's history lives in the fork's repository (the
    default ref is then the fork's branch). Two refs that meet at one commit (a fork level with
    upstream: fast-forwarded, or merging upstream with nothing of its own since) are not warned."""
    if state.upstream_tip and state.upstream_tip == state.fork_tip and _same_ref(state.config):
        warn_once(text("ledger", "same_tip", tip=state.upstream_tip,
                       candidates=gitio.other_remote_branches(state.fork_repo, state.config.fork.ref, state.fork_tip)))


def warn_behind_tracked(state) -> None:
    """The fork's ref is a local branch behind the remote branch it tracks (fetched, never
    pulled): the figures are of the branch as it is here, not of the fork as pushed."""
    if state.as_of:
        return
    got = gitio.behind_tracked(state.fork_repo, state.config.fork.ref)
    if got is None:
        return
    tracking, n = got
    if _in_upstream(state, tracking):
        return          # it tracks upstream's branch: being behind it is the lag the figures measure
    name = state.config.fork.ref.removeprefix("refs/heads/")
    # a branch checked out in a work tree (this one or another linked worktree) moves only by a
    # merge run there: git refuses to fetch into it
    work = gitio.branch_work_tree(state.fork_repo, name)
    warn_once(text("ledger", "behind_tracked", ref=name, tracking=tracking, commits=n, current=work is not None,
                   where=work or gitio.repo_dir(state.fork_repo)))


def _in_upstream(state, tracking: str) -> bool:
    """Is remote-tracking branch ``tracking`` of the fork's repository at the upstream tip or a
    commit of upstream's history before it (upstream's branch, not the fork's as pushed)?"""
    try:
        tip = str(state.fork_repo.references[f"refs/remotes/{tracking}"].peel(pygit2.Commit).id)
        return tip == state.upstream_tip or state.repo.descendant_of(state.upstream_tip, tip)
    except (KeyError, ValueError, pygit2.GitError):
        return False


def warn_unmatched_areas(state) -> None:
    """An area path glob that matches no file at the fork's tip or upstream's: the area covers
    nothing through it (:func:`bot.config.forksync.unmatched_area_globs`)."""
    areas = [a for a in state.config.areas if a.paths]
    if not areas:
        return
    paths: set[str] = set()
    for tip in {state.fork_tip, state.upstream_tip} - {None, ""}:
        try:
            paths.update(gitio.tree_paths(state.repo, state.repo[tip].peel(pygit2.Commit).tree))
        except (KeyError, ValueError, pygit2.GitError):
            return          # a tip whose tree is not here: nothing can be said of its files
    for name, globs in unmatched_area_globs(areas, paths):
        warn_once(text("ledger", "unmatched_area_globs", area=name, globs=globs))


def warn_state(state) -> None:
    """Every warning about the state on stderr (``--json`` keeps stdout for the document alone)."""
    warn_missing(state)
    warn_unresolved(state)
    warn_same_tip(state)
    warn_behind_tracked(state)
    warn_unmatched_areas(state)


def cmd_status(args) -> int:
    if args.series:
        return _cmd_series(args)
    if args.step is not None:
        raise UserError(text("ledger", "step_without_series"))
    with reporter(args) as cb:
        state = _load(args, as_of=args.as_of, progress=cb)
    doc = status_json(state)
    warn_state(state)
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table
    con = Console()
    t = Table(title=text("ledger", "status_title", as_of=doc["as_of"]), show_header=False)
    t.add_column("what", style="bold")
    t.add_column("value")
    tip = doc["upstream"]["tip"]
    add_row(t, "ledger", "status_upstream_tip", sha=tip["sha"], pr=_pr(tip["pr"]), date=tip["date"])
    # Days Behind is measured to the tip known then: a copy fetched months ago is that old
    add_row(t, "ledger", "status_upstream_as_of", as_of=doc["upstream"]["as_of"], unknown=doc["upstream"]["as_of_unknown"])
    add_row(t, "ledger", "status_fork_tip", sha=state.fork_tip, date=doc["fork"]["date"])
    add_row(t, "ledger", "status_merge_base", sha=state.merge_base, date=doc["merge_base"]["date"])
    add_row(t, "ledger", "status_in_range", count=doc["commits_in_range"])
    for key in ("frontier", "contiguous_pin"):
        pn = doc[key]
        # sha "": no entry holds it and there is no base to fall back to
        add_row(t, "ledger", "status_pin", key=key, sha=pn["sha"], pr=_pr(pn["pr"]), date=pn["date"], is_base=pn["is_base"],
            before=pn["index"] < 0, merged=key == "frontier" and doc["merge_based"])
    add_row(t, "ledger", "status_days_behind", days=doc["days_behind"], lag=doc["contiguous_lag_days"])
    h = doc["contiguous_pin_held_by"]
    if h:
        add_row(t, "ledger", "status_held_by", **{**h, "pr": _pr(h["pr"]), "subject": cut(h["subject"] or "", 70),
                                                  "reason": cut(h["reason"] or "", 80)})
    bl = doc["backlog"]
    add_row(t, "ledger", "status_backlog", total=bl["total"], by_disposition=bl["by_disposition"], reverted=len(bl["reverted_after_merge"]))
    add_row(t, "ledger", "status_not_reached", total=doc["not_reached"]["total"], handled=doc["not_reached"]["handled"])
    # its own row: isolated picks behind the frontier are not "not yet reached"
    add_row(t, "ledger", "status_isolated", count=len(doc["isolated_picks"]))
    con.print(t)
    c = Table(title=text("ledger", "counts_title"))
    what, commits = text("ledger", "counts_columns").split("\t")
    c.add_column(what)
    c.add_column(commits, justify="right")
    for d in Disposition:
        c.add_row(d.value, str(doc["counts"][d.value]))
    holes = bl["holes"]
    if holes:
        # the Backlog's REVERTED counts them, the range's rows above do not: a merge brought them in
        add_row(c, "ledger", "counts_holes", count=len(holes))
    con.print(c)
    if holes:
        _print_holes(con, holes)
    return 0


def _print_holes(con, holes: list[dict]) -> None:
    """The holes of the Backlog (``backlog.holes`` of :func:`status_json`): a table on a console
    wide enough for its six columns, else — a log, a narrow terminal, Rich's 80 columns off a
    terminal — one line per hole, which a table would squeeze to nothing but the subject."""
    from rich.markup import escape
    from rich.table import Table
    title = text("ledger", "holes_title")
    if con.width < 120:
        con.print(title + ":", highlight=False)
        for x in holes:
            con.print(text("ledger", "hole", **{**x, "pr": _pr(x["pr"]), "subject": escape(x["subject"])}),
                      highlight=False, soft_wrap=True)
        return
    ht = Table(title=title)
    *cols, subject = text("ledger", "holes_columns").split("\t")
    for i, col in enumerate(cols):
        ht.add_column(col, no_wrap=True, min_width=len(col) if i else 12)
    ht.add_column(subject, no_wrap=True, overflow="ellipsis")
    for x in holes:
        ht.add_row(x["sha"][:12], _pr(x["pr"]), (x["date"] or "")[:10], (x["fork_commit"] or "-")[:12],
                   (x["fork_commit_date"] or "")[:10], escape(cut(x["subject"], 70)))
    con.print(ht)


def _pr(pr) -> str:
    return f"#{pr}" if pr else ""


def _cmd_series(args) -> int:
    start, end = args.series
    cfg = fork_config_from_args(args)
    try:
        with reporter(args) as cb:
            rows = series(cfg, start, end, 7 if args.step is None else args.step, progress=cb)
    except (gitio.RefError, gitio.GitIOError, ValueError) as e:
        raise UserError(str(e)) from None
    out = [{"date": d, "days_behind": s.pins.days_behind, "contiguous_lag_days": s.pins.contiguous_lag_days,
            "backlog": s.pins.backlog, "not_reached": s.pins.not_reached, "frontier": s.pins.frontier.sha,
            "contiguous_pin": s.pins.contiguous.sha, "commits_in_range": len(s.ledger.entries),
            "upstream_as_of": iso(s.upstream_as_of), "before_first_own_commit": early}
           for (d, s), early in zip(rows, before_first_own_commit([bool(s.fork_commits) for _, s in rows]))]
    if args.json:
        print(json.dumps({"schema": "forksync.series/1", "points": out}, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table
    # the last point is only as current as the copy of upstream (a mirror may be months old); a
    # pinned or undated upstream gets the reason status gives, never a bare "None"
    last = rows[-1][1] if rows else None
    seen = last and (out[-1]["upstream_as_of"] or f"unknown ({last.upstream_as_of_unknown})")
    early = any(r["before_first_own_commit"] for r in out)
    t = Table(title=text("ledger", "series_title"),
              caption=text("ledger", "series_caption", seen=seen, early=early) if last else None)
    for col in text("ledger", "series_columns").split("\t"):
        t.add_column(col, justify="right")
    for r in out:
        mark = " *" if r["before_first_own_commit"] else ""
        t.add_row(r["date"] + mark, str(r["commits_in_range"]), f"{r['days_behind']:.2f}", f"{r['contiguous_lag_days']:.2f}",
                  str(r["backlog"]), str(r["not_reached"]))
    Console().print(t)
    return 0


def cmd_ledger_export(args) -> int:
    with reporter(args) as cb:
        state = _load(args, as_of=args.as_of, progress=cb)
    warn_state(state)
    doc = {"schema": "forksync.ledger/1", "as_of": iso(state.as_of), "upstream_tip": state.upstream_tip,
           "fork_tip": state.fork_tip, "merge_base": state.merge_base,
           "entries": [entry_json(e) for e in state.ledger.entries],
           # merged upstream commits before the range the fork reverted: the Backlog's REVERTED
           "holes": [hole_json(e, t) for e, t in hole_entries(state)] if state.pins.holes else [],
           "missing_objects": {s: list(m) for s, m in state.missing.items()}}
    print(json.dumps(doc, indent=None if args.compact else 2))
    return 0


def _hole_entry(state, c) -> tuple[LedgerEntry, int | None]:
    """A hole of the Backlog (a merged upstream commit ``c`` the fork reverted, before the range)
    as a REVERTED entry (``index`` -1) with the fork's revert (or its revert of the merge that
    brought ``c``), and that revert's committer time
    (None if no fork commit reverts it any more): since then the hole has been open."""
    sha, subject = str(c.id), c.message.split("\n", 1)[0]
    by = state.hole_reverts.get(sha)
    rv = next((f for f in state.fork_commits if f.sha == by), None) if by else revert_of(state.fork_commits, sha)
    fc = rv.sha if rv else None
    return LedgerEntry(sha=sha, index=-1, pr=gitio.parse_pr(subject), subject=subject,
                       committer_time=int(c.committer.time), disposition=Disposition.REVERTED, fork_commit=fc,
                       reason="in the fork's history, then reverted by the fork; counted in the Backlog",
                       evidence=(Evidence("revert", fc, f"in the fork's history, then reverted by {(fc or '')[:12]} "
                                                        f"'{rv.message.splitlines()[0] if rv else ''}'"),)
                       ), (rv.committer_time if rv else None)


def hole_entries(state) -> list[tuple[LedgerEntry, int | None]]:
    """Every hole of the Backlog (:attr:`bot.core.pins.Pins.holes`: merged upstream commits before
    the range the fork reverted and has not got back) as :func:`_hole_entry` gives it, oldest
    upstream commit first — the REVERTED of the Backlog that the range's counts leave out."""
    out = [_hole_entry(state, state.repo[s]) for s in state.pins.holes]
    return sorted(out, key=lambda h: (h[0].committer_time, h[0].sha))


def hole_json(e: LedgerEntry, reverted_at: int | None) -> dict:
    """A hole as a ``forksync.ledger`` record, plus ``fork_commit_date``: when the fork's revert
    was committed (the hole has been open since)."""
    return {**entry_json(e), "fork_commit_date": iso(reverted_at)}


def before_range(state, ref: str) -> list[LedgerEntry]:
    """Upstream commits at or before the merge base that ``ref`` names (a sha prefix of ≥ 4 hex,
    or ``#N`` searched along upstream's first-parent chain back from the base): outside the
    ledger's range, the fork holds them by ancestry — on a fork that merges upstream, a merge
    brought them in — unless it took them back out (a hole of the Backlog: REVERTED, with the
    fork's revert). ``index`` is -1. Empty when ``ref`` names no such commit."""
    import pygit2  # lazy: only this lookup reads the repository here

    base, repo = state.merge_base, state.repo
    if not base:
        return []
    ref = ref.strip()
    found: list = []
    if re.fullmatch(r"#?\d{1,6}", ref) and (ref.startswith("#") or len(ref) < 7):
        pr, c = int(ref.lstrip("#")), repo[base]
        while True:
            if gitio.parse_pr(c.message.split("\n", 1)[0]) == pr:
                found.append(c)
                break
            if not c.parent_ids:
                break
            c = repo[c.parent_ids[0]]
    elif re.fullmatch(r"[0-9a-fA-F]{4,40}", ref):
        try:
            c = repo.revparse_single(ref).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            return []
        if str(c.id) == base or repo.descendant_of(base, c.id):
            found.append(c)
    out = []
    for c in found:
        sha, subject = str(c.id), c.message.split("\n", 1)[0]
        common = dict(sha=sha, index=-1, pr=gitio.parse_pr(subject), subject=subject, committer_time=int(c.committer.time))
        if sha in state.pins.holes:
            out.append(_hole_entry(state, c)[0])
        else:
            how = "merged from upstream" if state.pins.merge_based else "the fork branched after it"
            out.append(LedgerEntry(**common, disposition=Disposition.PICKED, evidence=(
                Evidence("ancestry", None, f"at or before the merge base {base[:12]}: the fork contains it ({how})"),)))
    return out


def cmd_ledger_show(args) -> int:
    with reporter(args) as cb:
        state = _load(args, as_of=args.as_of, progress=cb)
    warn_state(state)
    hits = state.ledger.find(args.ref) or before_range(state, args.ref)
    if not hits and re.fullmatch(r"[0-9a-fA-F]{1,3}", args.ref.strip()) and not args.ref.strip().isdigit():
        raise UserError(text("ledger", "ref_too_short", ref=repr(args.ref)))
    if not hits and args.as_of:
        _newer_than_as_of(args)
    own = [] if hits else own_commits(state.fork_commits, args.ref)
    if own:
        raise UserError(text("ledger", "ref_is_fork_commit", ref=repr(args.ref), sha=own[0].sha, subject=repr(own[0].subject),
                             more=len(own) - 1))
    if not hits:
        raise UserError(text("ledger", "ref_not_found", ref=repr(args.ref), merge_base=state.merge_base or "",
                             upstream_tip=state.upstream_tip))
    if args.json:
        print(json.dumps({"schema": "forksync.ledger-entry/1", "entries": [entry_json(e) for e in hits]}, indent=2))
        return 0
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    con = Console()
    if len(hits) > 1:       # a prefix (or a PR number) naming several commits: say so before the first
        con.print(text("ledger", "entries_match", count=len(hits), ref=escape(args.ref.strip())))
    for e in hits:
        con.print(text("ledger", "entry_head", sha=e.sha, pr=_pr(e.pr), subject=escape(e.subject)))
        con.print(text("ledger", "entry_where", index=e.index, total=len(state.ledger.entries), merge_base=state.merge_base,
                       committed=iso(e.committer_time)))
        con.print(text("ledger", "entry_disposition", disposition=e.disposition.value, reason=escape(e.reason or ""),
                       isolated=e.isolated))
        if e.fork_commit:
            con.print(text("ledger", "entry_fork_commit", fork_commit=e.fork_commit))
        t = Table(title=text("ledger", "evidence_title"))
        for col in text("ledger", "evidence_columns").split("\t"):
            t.add_column(col)
        for x in e.evidence:
            t.add_row(escape(x.rule), (x.fork_commit or "")[:12], escape(x.detail))
        if not e.evidence:
            add_row(t, "ledger", "no_evidence")
        con.print(t)
    return 0


def own_commits(fork_commits, ref: str) -> list:
    """Pure: the fork's own commits (``SyncState.fork_commits``, oldest first) that ``ref`` names
    as :meth:`bot.core.ledger.Ledger.find` reads it — ``#N`` (or ``N`` under 7 digits) by the
    subject's trailing ``(#N)``, else a sha prefix of at least 4 hex digits — newest first. A
    person asking ``ledger show`` about the fork's own PR or commit is told so, not sent after a
    typo (torch-spyre/triton's "Add UnaliasLinalgOuts fix pass (#82)")."""
    ref = ref.strip()
    if re.fullmatch(r"#?\d{1,6}", ref) and (ref.startswith("#") or len(ref) < 7):
        n = int(ref.lstrip("#"))
        return [c for c in reversed(fork_commits) if c.pr == n]
    ref = ref.lower()
    if len(ref) < 4 or not re.fullmatch(r"[0-9a-f]+", ref):
        return []
    return [c for c in reversed(fork_commits) if c.sha.startswith(ref)]


def _newer_than_as_of(args) -> None:
    """Raise :class:`UserError` naming the upstream commit ``args.ref`` names today when it is newer
    than ``--as-of``: "names no upstream commit" would send the user looking for a typo."""
    with reporter(args) as cb:
        now = _load(args, progress=cb)
    cutoff = end_of_day(args.as_of)
    later = [e for e in (now.ledger.find(args.ref) or before_range(now, args.ref)) if e.committer_time > cutoff]
    if later:
        e = later[0]
        raise UserError(text("ledger", "ref_after_as_of", ref=repr(args.ref), sha=e.sha, subject=repr(e.subject),
                             committed=iso(e.committer_time) or "", as_of=args.as_of))


def register(sub, common) -> None:
    p = sub.add_parser("status", parents=[common], help="dispositions, pins, Days Behind and Backlog")
    p.add_argument("--as-of", metavar="DATE", help="state at the end of DATE (YYYY-MM-DD, UTC)")
    p.add_argument("--json", action="store_true", help="print the forksync.status/1 JSON document")
    p.add_argument("--series", nargs=2, metavar=("START", "END"),
                   help="one point per --step days from START, and END as the last point")
    p.add_argument("--step", type=int, default=None, metavar="DAYS",
                   help="days between --series points (default 7; only with --series)")
    p.set_defaults(func=cmd_status)

    lp = sub.add_parser("ledger", parents=[common], help="the per-commit ledger")
    lsub = lp.add_subparsers(dest="ledger_command", metavar="SUBCOMMAND", required=True)
    e = lsub.add_parser("export", parents=[common], help="one JSON record per upstream commit in range")
    e.add_argument("--json", action="store_true", default=True, help="JSON output (the only format)")
    e.add_argument("--compact", action="store_true", help="one line of JSON")
    e.add_argument("--as-of", metavar="DATE", help="the ledger at the end of DATE (YYYY-MM-DD, UTC)")
    e.set_defaults(func=cmd_ledger_export)
    s = lsub.add_parser("show", parents=[common], help="why an upstream commit has its disposition")
    s.add_argument("ref", help="upstream sha, sha prefix (at least 4 hex digits), or #PR (digits alone under 7 are a PR)")
    s.add_argument("--json", action="store_true", help="print the forksync.ledger-entry/1 JSON document")
    s.add_argument("--as-of", metavar="DATE", help="the entry at the end of DATE (YYYY-MM-DD, UTC)")
    s.set_defaults(func=cmd_ledger_show)
