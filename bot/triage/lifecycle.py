"""The issue lifecycle's decision core (pure): given what is tracked and one nightly's groups,
decide which issues to open, update, close or reopen.

Rules (``triage:`` settings, defaults in brackets):

* a **real** root cause opens an issue when it failed on ``open_after_nights`` [2] distinct
  nightlies within ``open_window_days`` [3] days, or at once when it is a crash (fatal signal,
  C++ assertion, ``LLVM ERROR``) and ``open_crashes_at_once`` [true];
* one issue per root cause (the group id: rule id or ``sig-<digest>``); a tracked open issue
  that fails again gets an **update** (refreshed status table);
* an open issue **closes** after ``close_after_green_nights`` [3] consecutive nightlies in which
  all its affected tests ran and passed; a nightly in which they did not all run changes
  nothing; a nightly in which one of them failed (with any signature) resets the count;
* a closed issue that fails again is **reopened** at once;
* each nightly **refreshes** the status table of every open issue that did not fail in it (its
  passing streak, the latest nightly), so a clean night is visible on the issue too;
* pass/fail is followed per test **case** (the parametrized id, ``test_dot[64-fp16]``), so a
  fault closes after its own clean nightlies even while another fault still fails other cases
  of the same test function; a tracked test id without parametrization (stored before cases
  were followed, or an unparametrized test) passes when every case of that function passed;
* the cap ``max_new_issues_per_run`` [10] limits noise, never hides a root cause: when more
  would open in one nightly, the largest (most affected cases) and then newest open on their
  own, up to the cap, and the rest wait in one **flood** issue that lists them beside links to
  the issues that did open. The flood issue is refreshed each nightly while any cause waits
  (waiting causes open as later nightlies leave room under the cap; a waiting cause whose tests
  all pass again leaves the list) and is **closed** (``flood-close``) when none waits;
* infrastructure and flaky groups are tracked (counts, first/last seen) but never opened,
  bisected or blamed; a real group becomes flaky here when its tests passed on the same commit
  in another nightly (before or after the failure; within one nightly ``bot.triage.classify``
  already saw it);
* a nightly already processed (same ``run``) changes nothing: redeliveries and restarts are
  idempotent;
* a nightly that ran **before** the newest one already processed is refused
  (:class:`OlderNightly`, nothing changes): its passes are not a green night after the newer
  failures, nor its failures the first seen; nightlies of the same time (two on one day, dated
  alike) are taken in the order they come;
* a root cause tracked under an older signature version is **re-keyed** (:func:`rekey`) before
  the nightly is decided: its key becomes the one its sample output has now, the old key stays
  as an alias (the issue is found by either marker), so a better normaliser never files an
  issue twice.
"""
from __future__ import annotations

import time as _time
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from bot.config.triage import TriageSettings
from bot.triage.records import test_function
from bot.triage.signature import SIGNATURE_VERSION

__all__ = ["NightlyGroup", "Nightly", "Tracked", "TriageState", "Action", "OlderNightly", "decide", "rekey"]

DAY = 86_400


@dataclass(frozen=True)
class NightlyGroup:
    """One root cause's failures in one nightly (from :class:`bot.triage.group.Group`);
    ``tests`` are the failing test cases (parametrization kept)."""

    key: str
    cls: str
    title: str
    signature: str
    tests: frozenset[str]
    platforms: frozenset[str] = frozenset()
    crash: bool = False
    labels: tuple[str, ...] = ()
    sample: str = ""

    @classmethod
    def from_group(cls, g) -> "NightlyGroup":
        logs = g.logs(1)
        return cls(g.id, g.cls, g.title, g.signature.key, frozenset(g.cases), frozenset(g.platforms),
                   g.crash, tuple(g.rule.labels) if g.rule else (), logs[0] if logs else "")


@dataclass(frozen=True)
class Nightly:
    """One nightly run: ``ran`` = every test that ran (passed or failed, not skipped),
    ``passed`` = tests whose every record passed; ``time`` epoch seconds UTC."""

    run: str
    time: int
    commit: str
    groups: tuple[NightlyGroup, ...]
    ran: frozenset[str] = frozenset()
    passed: frozenset[str] = frozenset()
    platforms: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Tracked:
    """What is known of one root cause across nightlies. ``state``: pending (seen, no issue),
    open, closed, or tracked (infrastructure/flaky: never an issue)."""

    key: str
    cls: str
    title: str
    signature: str
    state: str = "pending"
    issue: int | None = None
    fail_runs: tuple[tuple[str, int, str], ...] = ()      # (run, time, commit), oldest first
    platforms: frozenset[str] = frozenset()
    tests: frozenset[str] = frozenset()
    first_seen: int = 0
    last_seen: int = 0
    green_streak: int = 0
    crash: bool = False
    labels: tuple[str, ...] = ()
    sample: str = ""
    last_green: str = ""          # commit of the newest nightly before first_seen where its tests passed
    first_red: str = ""           # commit of the first failing nightly
    last_green_run: str = ""      # that green nightly's run id
    issue_title: str = ""         # the title the issue was opened with (titles are kept unique)
    aliases: tuple[str, ...] = ()  # keys it had under older signature versions (their markers find its issue)
    version: int = SIGNATURE_VERSION  # the signature version its key was computed with (rows from before: 1)

    @property
    def runs(self) -> int:
        return len(self.fail_runs)


@dataclass(frozen=True)
class TriageState:
    tracked: dict[str, Tracked] = field(default_factory=dict)
    processed: frozenset[str] = frozenset()
    #: test case → (commit, time, run) of the newest nightly where it ran and passed
    last_green: dict[str, tuple] = field(default_factory=dict)
    #: root causes waiting in the flood issue (over the cap, no issue of their own yet)
    flood: tuple[str, ...] = ()
    #: root causes that opened their own issue while the flood lasted (linked from it)
    flood_opened: tuple[str, ...] = ()
    #: ``(run, time)`` of the newest nightly processed whose time is known (``("", 0)``: none)
    newest: tuple[str, int] = ("", 0)


@dataclass(frozen=True)
class Action:
    """``kind``: open | update (failed again) | refresh (status only: did not fail) | close | reopen |
    flood (``keys``: the causes waiting in the flood issue) | flood-close. ``keys`` has one key
    except for the flood kinds."""

    kind: str
    keys: tuple[str, ...]
    run: str = ""


class OlderNightly(ValueError):
    """A nightly (``run``, ``time``) that ran before ``newest_run`` (``newest_time``), the newest
    nightly already processed: deciding on it would close, reopen or open issues on older
    evidence than the state holds, so :func:`decide` refuses it. Times are epoch s UTC."""

    def __init__(self, run: str, time: int, newest_run: str, newest_time: int):
        self.run, self.time, self.newest_run, self.newest_time = run, time, newest_run, newest_time
        super().__init__(f"nightly {run} ({when(time)}) is older than {newest_run} ({when(newest_time)}), "
                         "the newest nightly already triaged")


def when(t: int) -> str:
    """``t`` (epoch s) as ``--date`` takes it: ``YYYY-MM-DD`` at midnight UTC, else with the time."""
    fmt = "%Y-%m-%d" if t % DAY == 0 else "%Y-%m-%dT%H:%M" if t % 60 == 0 else "%Y-%m-%dT%H:%M:%S"
    return _time.strftime(fmt, _time.gmtime(t))


def _merge(t: Tracked, g: NightlyGroup, n: Nightly) -> Tracked:
    runs = t.fail_runs if any(r == n.run for r, _, _ in t.fail_runs) else t.fail_runs + ((n.run, n.time, n.commit),)
    return replace(t, cls=g.cls if t.state != "open" else t.cls, title=g.title, signature=g.signature,
                   fail_runs=runs[-200:], platforms=t.platforms | g.platforms, tests=t.tests | g.tests,
                   first_seen=t.first_seen or n.time, last_seen=max(t.last_seen, n.time), green_streak=0,
                   crash=t.crash or g.crash, labels=tuple(dict.fromkeys(t.labels + g.labels)),
                   sample=g.sample or t.sample, first_red=t.first_red or n.commit)


def decide(state: TriageState, nightly: Nightly, settings: TriageSettings) -> tuple[TriageState, list[Action]]:
    """The new state and the actions for one nightly (see the module docstring). Raises
    :class:`OlderNightly` for a nightly that ran before the newest one processed."""
    if nightly.run in state.processed:
        return state, []
    if nightly.time and nightly.time < state.newest[1]:
        raise OlderNightly(nightly.run, nightly.time, *state.newest)
    tracked = dict(state.tracked)
    actions: list[Action] = []
    candidates: list[str] = []
    failing_tests: set[str] = set()
    window = settings.open_window_days * DAY
    for g in nightly.groups:
        failing_tests |= g.tests
        # its tests passed on this very commit in an earlier nightly (a nightly naming no commit
        # tells nothing of the kind)
        if (g.cls == "real" and g.tests and nightly.commit
                and all(state.last_green.get(x, ("", 0))[0] == nightly.commit for x in g.tests)):
            g = replace(g, cls="flaky")
        t = tracked.get(g.key)
        if t is None:
            green = [state.last_green[x] for x in g.tests if x in state.last_green]
            newest = max(green, key=lambda cg: cg[1]) if green else ("", 0, "")
            t = Tracked(g.key, g.cls, g.title, g.signature, last_green=newest[0],
                        last_green_run=newest[2] if len(newest) > 2 else "")
        was_flaky = t.state == "tracked" and t.cls == "flaky"
        t = _merge(t, g, nightly)
        if t.state in ("pending", "tracked") and (g.cls != "real" or was_flaky):
            # flaky is sticky: a cause seen passing and failing on one commit stays out of issues
            tracked[g.key] = replace(t, state="tracked", cls="flaky" if was_flaky else g.cls)
            continue
        if t.state == "tracked":
            t = replace(t, state="pending")      # an infra/flaky cause that is now real
        if t.state == "open":
            actions.append(Action("update", (g.key,), nightly.run))
        elif t.state == "closed":
            t = replace(t, state="open")
            actions.append(Action("reopen", (g.key,), nightly.run))
        else:
            recent = {r for r, tm, _ in t.fail_runs if tm >= nightly.time - window}
            if (t.crash and settings.open_crashes_at_once) or len(recent) >= settings.open_after_nights:
                candidates.append(g.key)
        tracked[g.key] = t
    # the cap limits noise, never hides a cause: the largest (most cases), then newest, open
    ranked = sorted(candidates, key=lambda k: (-len(tracked[k].tests), -tracked[k].first_seen, k))
    cap = settings.max_new_issues_per_run
    opening, waiting = ranked[:cap], ranked[cap:]
    for k in opening:
        tracked[k] = replace(tracked[k], state="open")
        actions.append(Action("open", (k,), nightly.run))
    failing_keys = {g.key for g in nightly.groups}
    for k, t in list(tracked.items()):          # failed on a commit whose nightly now passes: flaky
        if (t.state == "pending" and k not in failing_keys and t.tests and t.tests <= nightly.passed
                and nightly.commit and any(c == nightly.commit for _, _, c in t.fail_runs)):
            tracked[k] = replace(t, state="tracked", cls="flaky")
    for k, t in list(tracked.items()):
        if t.state != "open" or k in failing_keys:
            continue
        if not t.tests or not t.tests <= nightly.ran:
            actions.append(Action("refresh", (k,), nightly.run))
            continue                                # its tests did not all run: no evidence
        if t.tests & failing_tests or not t.tests <= nightly.passed:
            tracked[k] = replace(t, green_streak=0)
            actions.append(Action("refresh", (k,), nightly.run))
            continue
        streak = t.green_streak + 1
        if streak >= settings.close_after_green_nights:
            tracked[k] = replace(t, state="closed", green_streak=streak)
            actions.append(Action("close", (k,), nightly.run))
        else:
            tracked[k] = replace(t, green_streak=streak)
            actions.append(Action("refresh", (k,), nightly.run))
    # the flood: causes over the cap, and earlier ones still waiting unless their tests passed again
    still = [k for k in state.flood if k not in opening and k not in waiting and tracked[k].state == "pending"
             and not (tracked[k].tests and tracked[k].tests <= nightly.passed)]
    flood = tuple(dict.fromkeys(waiting + still))
    flood_opened: tuple[str, ...] = ()
    if flood:
        flood_opened = tuple(dict.fromkeys((state.flood_opened if state.flood else ()) + tuple(opening)))
        actions.append(Action("flood", flood, nightly.run))
    elif state.flood:
        actions.append(Action("flood-close", state.flood, nightly.run))
    last_green = dict(state.last_green)
    for x in nightly.passed:
        last_green[x] = (nightly.commit, nightly.time, nightly.run)
    newest = (nightly.run, nightly.time) if nightly.time and nightly.time >= state.newest[1] else state.newest
    new = TriageState(tracked, state.processed | {nightly.run}, last_green, flood, flood_opened, newest)
    return new, actions


def rekey(state: TriageState, key_of: Callable[[Tracked], str | None], version: int) -> TriageState:
    """``state`` with every root cause tracked under a signature version below ``version``
    moved to the key ``key_of(tracked)`` gives now (computed from its sample output and a test),
    the old key kept in ``aliases``. Rule ids stay as they are (a rule is the identity whatever
    the normaliser does); ``key_of`` returning None or the same key only records the version.
    Two causes that now share a key become one: the one with an issue (else the first) keeps
    its fields, the other's key, aliases, tests and failing nightlies join it."""
    if all(t.version >= version for t in state.tracked.values()):
        return state
    tracked: dict[str, Tracked] = {}
    for k, t in state.tracked.items():
        if t.version >= version:
            tracked.setdefault(k, t)
            continue
        new = key_of(t) if k.startswith("sig-") else None
        if not new or new == k:
            tracked[k] = replace(t, version=version) if k not in tracked else _join(tracked[k], t)
            continue
        moved = replace(t, key=new, aliases=tuple(dict.fromkeys(t.aliases + (k,))), version=version)
        tracked[new] = _join(tracked[new], moved) if new in tracked else moved
    return replace(state, tracked=tracked)


def _join(a: Tracked, b: Tracked) -> Tracked:
    keep, other = (b, a) if (b.issue and not a.issue) else (a, b)
    runs = tuple(sorted(set(keep.fail_runs) | set(other.fail_runs), key=lambda r: r[1]))[-200:]
    aliases = tuple(dict.fromkeys(keep.aliases + other.aliases + ((other.key,) if other.key != keep.key else ())))
    return replace(keep, key=a.key, aliases=aliases, fail_runs=runs, tests=keep.tests | other.tests,
                   platforms=keep.platforms | other.platforms, first_seen=min(x for x in (keep.first_seen, other.first_seen) if x)
                   if keep.first_seen or other.first_seen else 0, last_seen=max(keep.last_seen, other.last_seen))


def nightly_from_groups(run: str, time: int, commit: str, groups: Iterable, records: Iterable) -> Nightly:
    """Build a :class:`Nightly` from :class:`bot.triage.group.Group` objects and all the
    nightly's records (passes included). ``ran``/``passed`` hold the test cases
    (``k.py::test_dot[64-fp16]``) and their test functions (``k.py::test_dot``: passed when every
    case of it passed), so state stored per function before cases were followed still works."""
    records = list(records)
    ran = {r.case for r in records if r.outcome != "skipped"}
    failed = {r.case for r in records if r.failed}
    fn_ran = {test_function(c) for c in ran}
    fn_failed = {test_function(c) for c in failed}
    return Nightly(run, time, commit, tuple(NightlyGroup.from_group(g) for g in groups),
                   frozenset(ran | fn_ran), frozenset((ran - failed) | (fn_ran - fn_failed)),
                   frozenset(r.platform for r in records if r.platform))
