"""``forksync resolve UNIT``: finish a chain stopped at a conflict, in local mode (docs/github.md,
"Finishing a conflicted chain").

* ``forksync resolve UNIT [--worktree DIR]`` — a worktree (detached) at the chain's conflict
  commit, whose conflicted files hold diff3 markers; prints them and what to do next.
* ``forksync resolve UNIT --continue [--reason PATH=TEXT …] [--push REMOTE]`` — records the
  worktree's files as the resolution (commits the person made there are the resolution commits,
  their ``File:`` / ``Reason:`` lines read by the fold; what is left uncommitted is committed on
  top of them): checked (no marker anywhere in the unit, only the
  conflicted files changed), then folded with the conflict commit into one pick commit
  (:func:`bot.git.resolution.fold`), the branch moved with a compare-and-swap, the originals kept
  under ``refs/forksync/resolutions/<unit>/…``, and the chain's next picks applied — stopping
  at the next conflict the same way (the worktree moves there). Refused, before anything is
  written, while the branch is checked out in a work tree (as ``forksync apply`` refuses it).
  A conflict commit a person amended (its trailer kept, committed by them) is named as theirs,
  with the commands that put their files on top of forksync's own (never folded as it is).
  ``--push REMOTE`` instead pushes
  the resolution commit on top of the conflict commit to ``REMOTE`` (fast-forward), where the
  App checks and folds it: the way to finish a chain PR on GitHub from a local clone.
* ``forksync resolve UNIT --abort`` — removes the worktree; the branch stays at its conflict
  commit; commits made in the worktree are kept under ``refs/forksync/resolutions/<unit>/…``.
* ``forksync resolve UNIT --agent`` — the configured conflict agent proposes the resolution,
  behind the same rails (:mod:`bot.agents.conflict`); its pick takes the conflict commit's
  place, then the chain goes on as with ``--continue``.

On a clone lacking blobs (a partial clone, a snapshot) the worktree leaves out the files whose
blobs are absent and that resolving does not need (:func:`bot.git.resolution.checkout_gaps`),
their index entries kept under git's skip-worktree bit so that the fold holds them unchanged;
one line on stderr names them. The index stays the person's: a left-out path deleted there stays
deleted (and is refused, as any change to a file the conflict did not need, with the command that
takes it back); one written, staged with other content, or moved elsewhere is refused at once.
An entry staged without its file in the worktree (`git update-index --cacheinfo`), or beside its
file left as the conflict commit has it, counts as the person's resolution, as with `git commit`.

State between the steps lives in the fork repository's git dir (``forksync-resolve/<unit>.json``),
as git keeps its own sequencer state there. Exit codes: 0 done (or the worktree is ready), 1 the
resolution has problems (a marker left, the worktree's files unchanged, a left-out file changed)
or the chain stopped at another conflict (also where the next pick, or
the worktree's move to the next conflict, needs a blob a partial clone lacks: the fold is kept),
2 bad input (no such unit, no conflict, the branch moved, nothing to abort) or a blob the step needs that a partial
clone lacks, named (nothing changed).
"""
from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2

from bot.agents.client import AgentClient
from bot.agents.conflict import resolve_pick
from bot.agents.conflict_git import conflict_case
from bot.cli import text as _cli_text
from bot.cli.ledger import state_errors
from bot.cli.main import fork_config_from_args, refuse_unpaired
from bot.cli.plan import apply_with_rules, print_empty, print_picked, print_rules
from bot.cli.progress import reporter
from bot.config.forksync import UserError
from bot.config.objects import open_repository
from bot.core.markers import marker_lines
from bot.git import repo as gitio
from bot.git import resolution
from bot.git.apply import checked_out_in
from bot.model import sync_branch_ref
from bot.plan.partition import find_unit
from bot.plan.planner import plan_state
from bot.store import Store
from bot.sync.ingest import default_store, load_state, open_side, side_tip
from bot.sync.rules import rules_resolution


@dataclass(frozen=True)
class Names:
    """What every text of this command names besides the unit: its branch (``forksync/<unit>`` or
    ``forksync/<fork ref>/<unit>``; empty: ``forksync/<unit>`` of the text's ``unit``) and the
    `` --fork-ref <ref>`` the next command needs (empty: none). Known once the branch is
    (:func:`_fork`); :data:`NO_NAMES` before that."""
    branch: str = ""
    ref_arg: str = ""


NO_NAMES = Names()


def text(family: str, part: str, names: Names, /, **context) -> str:
    """:func:`bot.cli.text.text` with the unit's branch and ``--fork-ref`` (``names``) in context."""
    return _cli_text.text(family, part, **{**_names_for(names, context), **context})


def say(family: str, part: str, names: Names, /, *, err: bool = False, end: str = "\n", **context) -> None:
    """:func:`bot.cli.text.say` with the unit's branch and ``--fork-ref`` (``names``) in context."""
    _cli_text.say(family, part, err=err, end=end, **{**_names_for(names, context), **context})


def _names_for(names: Names, context: dict) -> dict:
    """Pure: the ``branch`` and ``ref_arg`` a text of ``context`` reads under ``names``."""
    unit = context.get("unit", "")
    return {"branch": names.branch or f"forksync/{unit}", "ref_arg": names.ref_arg}


def register(sub, common) -> None:
    p = sub.add_parser("resolve", parents=[common], help="finish a chain stopped at a conflict (local mode)",
                       description="Without an option: set up a worktree at a chain's conflict commit. --continue "
                                   "folds your resolution into one pick commit and applies the chain's next picks "
                                   "(each fresh conflict put to the configured rules first); --abort leaves the "
                                   "branch as it was; --agent asks the configured conflict agent. A resolution that "
                                   "keeps the fork's side of every file makes a pick that changes nothing: once it "
                                   "lands, the ledger records its upstream commit NO_OP.")
    p.add_argument("unit", metavar="UNIT_ID", help="chain-<sha12> (or its branch: forksync/chain-<sha12>, forksync/<fork ref>/chain-<sha12>)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--continue", dest="cont", action="store_true",
                   help="fold the worktree's files (and commits made there) into the pick, then apply the chain's next picks")
    g.add_argument("--abort", action="store_true", help="remove the worktree; the branch is left as it was")
    g.add_argument("--agent", action="store_true", help="ask the configured conflict agent (rails as on GitHub)")
    p.add_argument("--worktree", metavar="DIR", help="where to check out the conflict (default: .forksync-resolve/UNIT)")
    p.add_argument("--reason", action="append", default=[], metavar="PATH=TEXT",
                   help="with --continue: the Reason of PATH in the pick's File / Action / Reason block (the "
                        "Action is read from the file; repeatable)")
    p.add_argument("--push", metavar="REMOTE", help="with --continue: push the resolution commit to REMOTE for the "
                                                    "App to fold, instead of folding locally")
    p.add_argument("--base-url", help="with --agent: Anthropic API URL (e.g. a local bot.fakeanthropic)")
    p.add_argument("--db", help="with --agent: SQLite database for the agents' token budget "
                                "[FORKSYNC_DB, else forksync.db]")
    p.set_defaults(func=cmd_resolve)


def _git(cwd, *argv, check=True, input=None, remote=False) -> str:
    """``git argv…`` in ``cwd``; ``remote``: the command talks to a remote on purpose (push),
    every other one reads only what the repository holds (no lazy fetch in a partial clone)."""
    p = subprocess.run(["git", *(() if remote else gitio.NO_LAZY_FETCH), *argv], cwd=str(cwd), capture_output=True,
                       text=True, input=input, env={**gitio.git_env(), "GIT_TERMINAL_PROMPT": "0"})
    if check and p.returncode != 0:
        raise UserError(text("resolve", "git_failed", NO_NAMES, argv=argv, cwd=cwd, stderr=p.stderr.strip()))
    return p.stdout.strip()


def _state_path(git_dir: str, unit_id: str) -> Path:
    return Path(git_dir) / "forksync-resolve" / f"{unit_id}.json"


def _fork(args) -> tuple[object, str, str, str, str, Names]:
    """(cfg, fork git dir, unit id, branch ref, fork tip, the names its texts read). The branch: the one given whole
    (``forksync/<fork ref>/<unit>``), else the fork ref's (:func:`bot.git.repo.sync_branch_for`)
    where it exists, else the unit's branch in flight for the fork ref whatever its name
    (``forksync/<unit>`` made before names carried the fork ref)."""
    cfg = fork_config_from_args(args)
    given = args.unit.removeprefix("refs/heads/")
    named = sync_branch_ref(given)
    unit_id = named[1] if named and named[0] else given.removeprefix("forksync/")
    with state_errors(args):      # a mistyped --fork-ref or a missing fork: said as status says it
        fork_dir = open_side("fork", cfg.fork.url or ".", cfg, fetch=False)
        repo = open_repository(fork_dir)
        fork_tip = side_tip(repo, cfg.fork, "fork", f"fork ({cfg.fork.url or '.'})")
    branch = given if named and named[0] else gitio.sync_branch_for(repo, unit_id, cfg.fork.ref)
    if f"refs/heads/{branch}" not in repo.references:
        # the unit's branch in flight for the fork ref, whatever its name: forksync/<unit> made
        # before names carried the fork ref, or forksync/<fork ref>/<unit> where the default
        # branch reads otherwise now (a checkout without origin/HEAD names what is checked out)
        branch = next((b.name for b in gitio.in_flight_branches(repo, fork_tip, with_paths=False, fork_ref=cfg.fork.ref)
                       if (sync_branch_ref(b.name) or ("", ""))[1] == unit_id), branch)
    # the next command finds the same branch: the fork ref given, else the one a whole
    # forksync/<fork ref>/<unit> name carries
    fork_ref = getattr(args, "fork_ref", None) or (named[0] if named and named[0] else None)
    names = Names(branch=branch, ref_arg=f" --fork-ref {shlex.quote(fork_ref)}" if fork_ref else "")
    return cfg, repo.path.rstrip("/"), unit_id, f"refs/heads/{branch}", fork_tip, names


def _tip(git_dir: str, ref: str) -> str | None:
    r = open_repository(git_dir).references.get(ref)
    return str(r.peel(pygit2.Commit).id) if r is not None else None


def _base(git_dir: str, fork_tip: str, tip: str, names: Names) -> str:
    repo = open_repository(git_dir)
    mb = repo.merge_base(pygit2.Oid(hex=fork_tip), pygit2.Oid(hex=tip))
    if mb is None:
        raise UserError(text("resolve", "no_shared_history", names, tip=tip, fork_tip=fork_tip))
    return str(mb)


def _print_conflict(wt: Path, stop: resolution.ConflictStop, names: Names) -> None:
    say("resolve", "conflict", names, upstream=stop.upstream_sha, commit=stop.conflict_commit)
    for p in stop.files:
        f = wt / p
        if not f.exists():
            say("resolve", "file_absent", names, path=p)
            continue
        try:
            n = sum(1 for _, kind in marker_lines(f.read_text(errors="replace")) if kind == "<")
        except OSError:
            n = 0
        say("resolve", "file_hunks", names, path=p, hunks=n)


def cmd_resolve(args) -> int:
    refuse_unpaired("--agent", args.agent, (("--base-url", args.base_url), ("--db", args.db)))
    refuse_unpaired("--continue", args.cont, (("--push", args.push), ("--reason", args.reason or None)))
    cfg, git_dir, unit_id, ref, fork_tip, names = _fork(args)
    tip = _tip(git_dir, ref)
    if tip is None:
        tracking = sorted(r.removeprefix("refs/remotes/") for r in open_repository(git_dir).references
                          if r.startswith("refs/remotes/") and r.endswith("/" + ref.removeprefix("refs/heads/")))
        if tracking:
            # a clone has the fork's branch only as a remote-tracking one until it is checked out;
            # `forksync apply` would write a conflict commit of its own there, which the App never
            # folds (not the one it pushed) and the fork refuses as a push
            raise UserError(text("resolve", "no_branch", names, unit=unit_id, git_dir=git_dir, tracking=tracking[0]))
        raise UserError(text("resolve", "no_branch", names, unit=unit_id, git_dir=git_dir, tracking=""))
    # the branch's name past forksync/: the unit id for the default branch's (as before), and
    # <fork ref>/<unit> for another fork ref's, whose resolution may run beside the other's
    key = ref.removeprefix("refs/heads/forksync/")
    state_file = _state_path(git_dir, key)
    if args.abort:
        return _abort(git_dir, unit_id, state_file, names)
    base = _base(git_dir, fork_tip, tip, names)
    again = f"forksync resolve {unit_id}{names.ref_arg}" + (" --continue" if args.cont else " --agent" if args.agent else "")
    try:
        stop = resolution.find_stop(git_dir, base, tip)
    except gitio.AbsentObjectsError as e:
        raise UserError(_absent(git_dir, e, again, names)) from None
    if stop is None:
        amended = resolution.find_amended(git_dir, base, tip, ref)
        if amended is not None:
            print(_amended_advice(git_dir, unit_id, amended, names), file=sys.stderr)
            return 2
        say("resolve", "no_conflict", names, err=True, unit=unit_id, tip=tip)
        return 2
    if args.agent:
        return _agent(args, cfg, git_dir, unit_id, ref, base, tip, stop, state_file, names)
    if args.cont:
        return _continue(args, cfg, git_dir, unit_id, ref, base, tip, stop, state_file, names)
    return _start(args, git_dir, unit_id, base, tip, stop, state_file, names, key=key)


def _amended_advice(git_dir: str, unit_id: str, a: resolution.AmendedConflict, names: Names) -> str:
    """What resolve says of a conflict commit a person amended (``forksync apply`` reports it as
    the chain's open conflict and sends them here): whose commit it is, why it is not folded, and
    the commands that put their files on top of forksync's conflict commit, which ``--continue``
    then checks and folds."""
    g = f"git -C {shlex.quote(str(Path(git_dir).parent if Path(git_dir).name == '.git' else git_dir))}"
    return text("resolve", "amended", names, unit=unit_id, commit=a.commit, upstream=a.upstream_sha, committer=a.committer,
                original=a.original, git=g)


def _start(args, git_dir, unit_id, base, tip, stop, state_file, names: Names, *, key: str) -> int:
    if stop.after:
        say("resolve", "commits_on_top", names, err=True, unit=unit_id, count=len(stop.after), commit=stop.conflict_commit)
    if state_file.exists():
        wt = Path(json.loads(state_file.read_text())["worktree"])
        say("resolve", "worktree_exists", names, unit=unit_id, worktree=wt)
        _print_conflict(wt, stop, names)
        return 0
    wt = Path(args.worktree or Path(".forksync-resolve") / key).resolve()
    if wt.exists() and any(wt.iterdir()):
        raise UserError(text("resolve", "worktree_not_empty", names, worktree=wt))
    gaps = resolution.checkout_gaps(git_dir, base, tip, stop)
    if gaps.needed:
        raise UserError(_lacks(git_dir, text("resolve", "checkout_of", names, tip=tip), list(gaps.needed),
                               text("resolve", "see_missing_objects", names), names))
    try:
        if gaps.left_out:
            _git(git_dir, "worktree", "add", "--detach", "--no-checkout", "-q", str(wt), tip)
            _fill(wt, tip, gaps.left_out)
        else:
            _git(git_dir, "worktree", "add", "--detach", "-q", str(wt), tip)
    except UserError as e:
        # nothing half made is left behind
        _git(git_dir, "worktree", "remove", "--force", str(wt), check=False)
        _git(git_dir, "worktree", "prune", check=False)
        if not args.worktree:        # the default folder git made for it, when nothing else is in it
            try:
                wt.parent.rmdir()
            except OSError:
                pass
        if "unable to read" in str(e) or "missing" in str(e):
            raise UserError(_lacks(git_dir, text("resolve", "checkout_of", names, tip=tip), str(e).splitlines()[0],
                                   text("resolve", "see_missing_objects", names), names)) from None
        raise
    state_file.parent.mkdir(parents=True, exist_ok=True)
    _save_state(state_file, wt, tip, stop, gaps.left_out)
    say("resolve", "worktree", names, worktree=wt)
    _say_left_out(unit_id, gaps.left_out, names)
    _print_conflict(wt, stop, names)
    _print_next(unit_id, names)
    return 0


def _save_state(state_file: Path, wt: Path, tip: str, stop, left_out) -> None:
    """The state between the steps: the worktree, the branch tip it was made at, its conflict
    commit, and the files left out of it ``(path, mode, blob)``."""
    state_file.write_text(json.dumps({"worktree": str(wt), "tip": tip, "conflict_commit": stop.conflict_commit,
                                      "left_out": [list(x) for x in left_out]}))


def _fill(wt: Path, tip: str, left_out) -> None:
    """Write ``tip``'s files into the worktree ``wt`` (its HEAD already there), all but
    ``left_out`` ``(path, mode, blob)``: files whose blobs the repository lacks and the resolution
    does not need. Their index entries stay, with their blobs, under git's skip-worktree bit, so
    that `git add -A` does not read the missing file as a deletion and the tree written from the
    index, the resolution's, holds them as the conflict commit does."""
    _git(wt, "read-tree", tip)               # trees only: no blob is read
    _leave_out(wt, left_out)
    _git(wt, "checkout-index", "-a", "-f", "-u")      # every entry but the skip-worktree ones


def _leave_out(wt: Path, left_out) -> None:
    """Put the left-out files' entries into the worktree's index as the conflict commit has them,
    marked skip-worktree: an entry forksync's own `git add -A` dropped (its bit cleared, its file
    absent) comes back too, since no file of the worktree could stand for its blob. ``left_out``
    holds only the entries to keep: one the person deleted in the index is not passed in."""
    if not left_out:
        return
    _git(wt, "update-index", "-z", "--add", "--index-info",
         input="".join(f"{mode:o} {sha}\t{path}\0" for path, mode, sha in left_out))
    _git(wt, "update-index", "-z", "--skip-worktree", "--stdin", input="".join(f"{path}\0" for path, _, _ in left_out))


@dataclass(frozen=True)
class _LeftOutChanges:
    """What the person did in the index to the files left out of the worktree (paths, sorted):
    ``edited`` left-out paths written with other content or staged with another blob or mode
    (or the file written where a folder of one was: that file's path);
    ``moved`` other paths staged, under the skip-worktree bit, with a blob the repository lacks
    (a left-out entry moved or copied there: `git mv --sparse`); ``removed`` left-out paths gone
    from the index (`git rm --sparse`, `git rm --cached --sparse`, or the bit cleared and
    `git add -A`) with nothing written in their place."""

    edited: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


def _left_out_changes(wt: Path, git_dir: str, left_out) -> _LeftOutChanges:
    """Read the worktree's index (one `git ls-files`, no blob read) before `git add -A` touches it.
    An entry still there with the conflict commit's blob is no change even where its file is
    absent (the bit cleared): nothing was written there. Entries without the skip-worktree bit
    other than these are left to `git add -A`, which stages what the worktree holds."""
    if not left_out:
        return _LeftOutChanges()
    staged, sticky = {}, []
    for rec in _git(wt, "ls-files", "-s", "-t", "-z").split("\0"):
        meta, _, path = rec.partition("\t")
        if path:
            tag, mode, sha, _stage = meta.split()
            staged[path] = (int(mode, 8), sha)
            if tag == "S":
                sticky.append(path)
    places = {path: (mode, sha) for path, mode, sha in left_out}
    repo = open_repository(git_dir)
    moved = sorted(p for p in sticky if p not in places and staged[p][0] != 0o160000 and staged[p][1] not in repo)
    edited, removed = [], []
    for path, mode, sha in left_out:
        f = wt / path
        # a file (or link) where a folder of the path was: `git add -A` stages it in place of the
        # left-out entry, and putting the entry back would drop it from the resolution unsaid
        over = next((str(a) for a in reversed(Path(path).parents) if a != Path(".")
                     and ((wt / a).is_symlink() or ((wt / a).exists() and not (wt / a).is_dir()))), "")
        if over:
            edited.append(over)
            continue
        if f.is_symlink():          # git stores a link as its target's text
            written = _git(wt, "hash-object", "--stdin", input=os.readlink(f)) if mode == 0o120000 else ""
        elif f.is_file():
            written = _git(wt, "hash-object", "--no-filters", "--", path)
        else:
            written = sha if not f.exists() else ""     # absent (as left out), or a folder in its place
        if (path in staged and staged[path] != (mode, sha)) or written != sha:
            edited.append(path)
        elif path not in staged:
            removed.append(path)
    return _LeftOutChanges(tuple(sorted(set(edited))), tuple(moved), tuple(sorted(removed)))


def _staged_only(wt: Path, left_out) -> str:
    """The entries the person staged without writing them in the worktree, as ``git update-index
    --index-info`` input: staged (stage 0, no skip-worktree bit, not a left-out path) with another
    blob or mode than the worktree's HEAD, the conflict commit, or where it has none, while the
    worktree's file is absent or still HEAD's. `git add -A` would put the worktree's file back over
    each (or stage its deletion), and the resolution would drop what the person staged on purpose
    (`git update-index --cacheinfo`, as one does in a sparse worktree) unsaid; git commits it, so
    the resolution holds it. Where the file was edited too, the worktree's file is the resolution,
    as forksync has always read the worktree. Trees and the index only: no blob is read."""
    skip = {rec[2:] for rec in _git(wt, "ls-files", "-t", "-z").split("\0") if rec.startswith("S ")}
    skip |= {path for path, _, _ in left_out}
    raw = _git(wt, "diff-index", "--cached", "--no-renames", "--no-abbrev", "-z", "HEAD").split("\0")
    out = []
    for meta, path in zip(raw[0::2], raw[1::2]):
        if not path or path in skip:
            continue
        old_mode, new_mode, old_sha, new_sha, kind = meta.lstrip(":").split()
        if kind == "D" or new_mode == "160000":
            continue
        f = wt / path
        if f.is_symlink():
            written = _git(wt, "hash-object", "--stdin", input=os.readlink(f))
            written_mode = "120000"
        elif f.is_file():
            written = _git(wt, "hash-object", "--no-filters", "--", path)
            written_mode = "100755" if os.access(f, os.X_OK) else "100644"
        elif f.exists():              # a folder in its place: the worktree's, left to `git add -A`
            continue
        else:
            written = written_mode = None
        if written is None or (written, written_mode) == (old_sha, old_mode):
            out.append(f"{new_mode} {new_sha}\t{path}\0")
    return "".join(out)


def _paths(paths) -> str:
    return ", ".join(f"`{p}`" for p in paths)


def _reset(wt: Path, paths) -> str:
    return f"`git -C {shlex.quote(str(wt))} reset -q -- {shlex.join(paths)}`"


def _removed_line(wt: Path, removed, names: Names) -> str:
    return text("resolve", "left_out_deleted", names, paths=_paths(removed), reset=_reset(wt, removed))


def _move(wt: Path, tip: str, left_out) -> None:
    """Move the worktree to ``tip`` as `git checkout --force` does, leaving ``left_out`` unwritten
    (a checkout writes every entry whose blob changed, skip-worktree or not)."""
    before = set(_git(wt, "ls-files", "-z").split("\0")) - {""}
    _git(wt, "reset", "-q", "--soft", tip)
    _git(wt, "read-tree", tip)
    now = set(_git(wt, "ls-files", "-z").split("\0")) - {""}
    for p in sorted(before - now, reverse=True):       # files the next picks deleted
        f = wt / p
        if f.is_symlink() or f.is_file():
            f.unlink()
        for d in f.parents:
            if d == wt or not d.is_dir() or any(d.iterdir()):
                break
            d.rmdir()
    _fill(wt, tip, left_out)


def _say_left_out(unit_id: str, left_out, names: Names) -> None:
    if not left_out:
        return
    say("resolve", "left_out", names, err=True, paths=[p for p, _, _ in left_out], unit=unit_id)


def _lacks(git_dir: str, what: str, absent: list[tuple[str, str]] | str, then: str, names: Names) -> str:
    """What a step that needs objects the repository lacks says: ``absent`` as ``(path, blob sha)``
    pairs (or git's words where it named none), how to get them, and ``then`` what to run."""
    named = absent if isinstance(absent, str) else gitio.name_blobs(absent)
    blobs = [] if isinstance(absent, str) else [b for _, b in absent]
    return text("resolve", "lacks", names, what=what, named=named, advice=gitio.fetch_advice(git_dir, blobs), then=then)


def _absent(git_dir: str, e: gitio.AbsentObjectsError, again: str, names: Names) -> str:
    """The error of a step that read nothing into place: what it lacks, and the same command again."""
    return _lacks(git_dir, e.what, list(e.absent), text("resolve", "run_again", names, again=again), names)


def _print_next(unit_id: str, names: Names) -> None:
    say("resolve", "next", names, unit=unit_id)


def _abort(git_dir, unit_id, state_file, names: Names) -> int:
    if not state_file.exists():
        raise UserError(text("resolve", "nothing_to_abort", names, unit=unit_id))
    st = json.loads(state_file.read_text())
    wt = Path(st["worktree"])
    if wt.exists():
        head = _git(wt, "rev-parse", "HEAD", check=False)
        if head and head != st["tip"]:       # commits made in the worktree are kept, never lost
            keep = resolution.keep_ref(unit_id, head)
            _git(git_dir, "update-ref", keep, head)
            say("resolve", "kept_worktree_commits", names, keep=keep)
        _git(git_dir, "worktree", "remove", "--force", str(wt), check=False)
    _git(git_dir, "worktree", "prune", check=False)
    state_file.unlink()
    say("resolve", "aborted", names, unit=unit_id, tip=st["tip"], worktree=wt)
    return 0


def _reasons(items: list[str], names: Names) -> dict[str, str]:
    out = {}
    for it in items:
        path, sep, why = it.partition("=")
        if not sep or not path.strip() or not why.strip():
            raise UserError(text("resolve", "bad_reason", names, given=repr(it)))
        out[path.strip()] = why.strip()
    return out


def _continue(args, cfg, git_dir, unit_id, ref, base, tip, stop, state_file, names: Names) -> int:
    reasons = _reasons(args.reason, names)
    where = checked_out_in(git_dir, ref)
    if where:
        # the fold moves the branch: a checkout of it would then show the conflict markers staged
        # against the folded pick (refused up front, as `forksync apply` refuses it)
        raise UserError(text("resolve", "checked_out", names, unit=unit_id, where=where))
    wt = None
    removed: tuple[str, ...] = ()        # left-out paths the person deleted in the index
    committed = False                    # the person committed (part of) the resolution in the worktree
    if stop.after:
        head = tip            # resolution commits already on the branch (pushed from elsewhere)
    else:
        if not state_file.exists():
            raise UserError(text("resolve", "no_worktree", names, unit=unit_id))
        st = json.loads(state_file.read_text())
        if st["tip"] != tip:
            raise UserError(text("resolve", "branch_moved", names, unit=unit_id, was=st["tip"], tip=tip))
        wt = Path(st["worktree"])
        # commits the person made in the worktree (`git commit`, with their File / Reason lines)
        # are the resolution; what is left uncommitted goes into one more commit on top of them
        wt_head = _git(wt, "rev-parse", "HEAD")
        if wt_head != tip and open_repository(git_dir).merge_base(tip, wt_head) != pygit2.Oid(hex=tip):
            raise UserError(text("resolve", "not_on_conflict", names, worktree=wt, head=wt_head, tip=tip, quoted=shlex.quote(str(wt)),
                                 unit=unit_id))
        committed = wt_head != tip
        left_out = [(p, int(m), b) for p, m, b in st.get("left_out", ())]
        # a left-out file the person wrote or staged anyway is their edit: _leave_out below would
        # put the conflict commit's blob back over it and the fold would drop it unseen, so it is
        # refused here (the resolution may change only the conflicted files in any case); so is a
        # left-out entry moved or copied to another path, whose blob no step could read
        changes = _left_out_changes(wt, git_dir, left_out)
        if changes.edited or changes.moved:
            bad = []
            if changes.edited:
                bad.append(text("resolve", "left_out_written", names, paths=_paths(changes.edited), worktree=wt))
            if changes.moved:
                bad.append(text("resolve", "left_out_moved", names, paths=_paths(changes.moved), reset=_reset(wt, changes.moved)))
            if changes.removed:
                bad.append(_removed_line(wt, changes.removed, names))
            say("resolve", "incomplete", names, err=True, end="", problems=bad)
            return 1
        staged = _staged_only(wt, left_out)
        _git(wt, "add", "-A")
        if staged:
            _git(wt, "update-index", "-z", "--add", "--index-info", input=staged)
        # a left-out entry the person deleted in the index stays deleted: git commits what the
        # index holds, and honours `git rm --sparse` of a skip-worktree path, so an experienced
        # git user expects the deletion, not the old blob quietly put back. The rule every
        # resolution meets (only the conflicted files change) then refuses it, as on a full clone,
        # and the index keeps it for the person to take back or carry to a PR of its own.
        # Entries `git add -A` dropped only because their file is absent are put back.
        removed = changes.removed
        _leave_out(wt, [x for x in left_out if x[0] not in removed])
        tree = _git(wt, "write-tree", *(("--missing-ok",) if left_out else ()))
        fork_repo = open_repository(git_dir)
        if tree == str(fork_repo[stop.conflict_commit].peel(pygit2.Commit).tree.id):
            say("resolve", "unchanged", names, err=True, worktree=wt)
            return 1
        if committed and tree == str(fork_repo[wt_head].peel(pygit2.Commit).tree.id):
            head = wt_head
        else:
            lines = [f"Resolve the conflicts of upstream {stop.upstream_sha[:12]}", ""]
            for p in stop.files:
                lines += [f"File: {p}", f"Reason: {reasons[p]}"] if p in reasons else []
            head = _git(wt, "commit-tree", tree, "-p", wt_head, input="\n".join(lines) + "\n")
    if args.push:
        # pushed before the local branch moves: a push the remote refuses (someone pushed to the
        # branch there) then leaves the branch at the conflict commit, as "nothing changed" says
        try:
            _git(git_dir, "push", "-q", args.push, f"{head}:{ref}", remote=True)
        except UserError as e:
            keep = resolution.keep_ref(unit_id, head)
            if head != tip:
                _git(git_dir, "update-ref", keep, head)
            raise UserError(text("resolve", "push_refused", names, remote=args.push, unit=unit_id, tip=tip, head=head, keep=keep,
                                 error=e)) from None
        _git(git_dir, "update-ref", ref, head, tip)
        _cleanup(git_dir, wt, state_file)
        say("resolve", "pushed", names, head=head, remote=args.push)
        return 0
    try:
        chk = resolution.check(git_dir, base, head)
    except gitio.AbsentObjectsError as e:        # the worktree and its files stay as they are
        raise UserError(_absent(git_dir, e, f"forksync resolve {unit_id}{names.ref_arg} --continue", names)) from None
    if not chk.ok:
        say("resolve", "incomplete", names, err=True, end="",
            problems=[*chk.problems, *([_removed_line(wt, removed, names)] if removed else [])])
        return 1
    repo = open_repository(git_dir)
    upstream = gitio.commit_info(repo, stop.upstream_sha)
    me = repo.default_signature if _has_identity(repo) else None
    # resolution commits (pushed, or made in the worktree) name their authors; else the person here
    by = (f"{me.name} <{me.email}>",) if me is not None and not stop.after and not committed else ()
    folded = resolution.fold(git_dir, chk, upstream, unit_id=unit_id, reasons=reasons, resolved_by=by,
                             when=int(time.time()))
    keep = resolution.keep_ref(unit_id, head)
    _git(git_dir, "update-ref", keep, head)
    _git(git_dir, "update-ref", ref, folded.commit, tip)
    say("resolve", "folded", names, end="", conflict=stop.conflict_commit, pick=folded.commit, upstream=stop.upstream_sha, keep=keep,
        files=folded.files)
    print_empty(git_dir, [(stop.upstream_sha, folded.commit)])
    return _go_on(args, git_dir, unit_id, wt, state_file, names)


def _has_identity(repo: pygit2.Repository) -> bool:
    try:
        repo.default_signature
        return True
    except (KeyError, pygit2.GitError):
        return False


def _cleanup(git_dir, wt, state_file) -> None:
    if wt is not None and wt.exists():
        _git(git_dir, "worktree", "remove", "--force", str(wt), check=False)
        _git(git_dir, "worktree", "prune", check=False)
    if state_file.exists():
        state_file.unlink()


def _go_on(args, git_dir, unit_id, wt, state_file, names: Names) -> int:
    """Apply the chain's next picks after a fold (re-planned: the folded pick is in flight now)."""
    cfg = fork_config_from_args(args)
    with reporter(args) as progress:
        state = load_state(cfg, store=default_store(cfg), progress=progress)
        run = plan_state(state, store=default_store(cfg), progress=(lambda d, t: progress("planning", d, t)) if progress else None)
    unit = find_unit(run.plan, unit_id)
    if unit is None or unit.id != unit_id:
        _cleanup(git_dir, wt, state_file)
        say("resolve", "whole_planned", names, unit=unit_id)
        return 0
    res, folds = apply_with_rules(state, unit)
    print_picked(state, res)
    print_rules(folds)
    print_empty(git_dir, res.picked)
    if not res.conflict:
        _cleanup(git_dir, wt, state_file)
        say("resolve", "whole", names, unit=unit_id, tip=res.tip or "")
        return 0
    if res.error and not res.conflict_commit:
        # the next pick could not be made (objects it needs are absent): no conflict to resolve,
        # the same words as `forksync apply`, and the command that goes on once it is fixed
        _cleanup(git_dir, wt, state_file)
        say("resolve", "not_applied", names, error=res.error, remaining=len(res.remaining), conflict=res.conflict, unit=unit_id)
        return 1
    base = _base(git_dir, state.fork_tip, res.tip, names)
    stop = resolution.find_stop(git_dir, base, res.tip)
    if wt is not None and wt.exists() and stop is not None:
        gaps = resolution.checkout_gaps(git_dir, base, res.tip, stop)
        if gaps.needed:
            # the worktree held only the resolution just folded (kept under
            # refs/forksync/resolutions/…): it goes, and a new one is made once the objects are
            # there, as for the first checkout
            _cleanup(git_dir, wt, state_file)
            say("resolve", "stopped_cannot_move", names, err=True, upstream=stop.upstream_sha, commit=stop.conflict_commit,
                lacks=_lacks(git_dir, text("resolve", "checkout_of", names, tip=res.tip), list(gaps.needed),
                             text("resolve", "then_resolve", names, unit=unit_id), names))
            return 1
        if gaps.left_out or json.loads(state_file.read_text()).get("left_out"):
            _move(wt, res.tip, gaps.left_out)
        else:
            _git(wt, "checkout", "-q", "--detach", "--force", res.tip)
        _save_state(state_file, wt, res.tip, stop, gaps.left_out)
        say("resolve", "stopped_here", names, worktree=wt)
        _say_left_out(unit_id, gaps.left_out, names)
        _print_conflict(wt, stop, names)
        _print_next(unit_id, names)
    else:
        _cleanup(git_dir, wt, state_file)
        say("resolve", "stopped", names, upstream=res.conflict, unit=unit_id)
    return 1


def _agent(args, cfg, git_dir, unit_id, ref, base, tip, stop, state_file, names: Names) -> int:
    decided = rules_resolution(git_dir, stop) if stop.after else ()
    if decided is None:
        raise UserError(text("resolve", "agent_after_commits", names, unit=unit_id))
    case = conflict_case(git_dir, stop.parent, stop.upstream_sha, decided)
    if case is None:
        raise UserError(text("resolve", "picks_cleanly", names, upstream=stop.upstream_sha, parent=stop.parent, unit=unit_id))

    async def run():
        db = args.db or os.environ.get("FORKSYNC_DB", "forksync.db")
        async with AgentClient.from_env(cfg.agents, Store(db), base_url=args.base_url) as c:
            return await resolve_pick(c, case, git_dir, ref.removeprefix("refs/heads/"), branch_old=tip,
                                      replaces=tip if stop.after else stop.conflict_commit)

    try:
        out = asyncio.run(run())
    except ValueError as e:
        raise UserError(str(e)) from None
    sys.stdout.write(out.body)
    if out.status != "committed":
        return 1
    keep = resolution.keep_ref(unit_id, tip)
    _git(git_dir, "update-ref", keep, tip)
    say("resolve", "agent_picked", names, commit=out.commit, rules=bool(stop.after), keep=keep)
    # the branch's own state (forksync-resolve/<fork ref>/<unit> for another fork ref's), never
    # the unit id's alone: that one is the default branch's resolution of the same unit
    return _go_on(args, git_dir, unit_id, None, state_file, names)


__all__ = ["register", "cmd_resolve"]
