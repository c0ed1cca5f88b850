"""The planner on a fork with work in flight: new upstream commits arriving while sync branches
are open (pushed, edited by people, stopped at a conflict), renames, reverts, rewritten upstream
history, decisions lifted later. Each case runs the App's own planning path
(:meth:`bot.sync.service.SyncService.compute`: ingest → ledger → plan) on a real working
repository holding the fork's ``main``, its ``forksync/*`` branches (made by
:func:`bot.git.apply.apply_unit`, as the App makes them) and upstream as
``refs/remotes/upstream/main``.

The rule under test (README, docs/plan.md): a pending commit that touches the files or symbols of
an open risky chain, or the fork's divergent code, joins that chain *in upstream order* (or lands
after it), and no commit is planned twice or dropped."""
from __future__ import annotations

import os
from pathlib import Path

from bot.config.forksync import Area, load_config
from bot.git import notes
from bot.git.apply import apply_unit
from bot.model import Disposition
from bot.sync.service import SyncService
from tests.support.github import commit_files, git, make_source_repo


def funcs(n: int, over: dict | None = None) -> str:
    """A Python file of ``n`` small functions ``f0..f{n-1}``; ``over`` replaces return values."""
    over = over or {}
    return "".join(f"def f{i}():\n    return {over.get(i, i)}\n\n\n" for i in range(n))


def named(names: list[str], over: dict | None = None) -> str:
    over = over or {}
    return "".join(f"def {n}():\n    return {over.get(n, 0)}\n\n\n" for n in names)


class Fork:
    """An upstream clone (``src``), a fork clone (``fork``) and the App's working repository
    (``work``: the fork's branches, upstream as ``refs/remotes/upstream/main``)."""

    def __init__(self, tmp: Path, files: dict[str, str]):
        self.tmp = tmp
        self.src = tmp / "up"
        make_source_repo(self.src, [files])
        self.base = git(self.src, "rev-parse", "HEAD")
        self.work = tmp / "meta+triton.git"
        git(tmp, "clone", "-q", "--bare", str(self.src), str(self.work))
        self.fork = tmp / "fork"
        git(tmp, "clone", "-q", str(self.src), str(self.fork))
        self.n = 0
        self.app = SyncService(workdir=tmp / "app", git_url="")
        self.cfg = load_config(None, {})

    def up(self, files: dict[str, str], msg: str | None = None) -> str:
        self.n += 1
        return commit_files(self.src, files, msg or f"upstream {self.n} (#{100 + self.n})")

    def push_up(self) -> None:
        git(self.src, "push", "-q", "-f", str(self.work), "HEAD:refs/remotes/upstream/main")

    def fork_commit(self, files: dict[str, str], msg: str = "fork: its own change") -> str:
        sha = commit_files(self.fork, files, msg)
        git(self.fork, "push", "-q", "-f", str(self.work), "HEAD:refs/heads/main")
        return sha

    def compute(self, fresh: bool = False):
        svc = SyncService(workdir=self.tmp / f"fresh-{os.urandom(4).hex()}", git_url="") if fresh else self.app
        return svc.compute(self.work, self.cfg, "main", "main")

    def publish(self, core, unit):
        """What the App's publish does to git: ``forksync/<unit>`` on the fork tip."""
        return apply_unit(str(self.work), unit, base=core.fork_head, commits=core.commits)

    def person_push(self, branch: str, files: dict[str, str], msg: str) -> str:
        """A person checks out ``branch``, commits ``files`` and pushes it back."""
        p = self.tmp / f"person-{os.urandom(3).hex()}"
        git(self.tmp, "clone", "-q", "-b", branch, str(self.work), str(p))
        sha = commit_files(p, files, msg)
        git(p, "push", "-q", str(self.work), branch)
        return sha


def unit_of(plan, sha: str):
    return next(u for u in plan.units if sha in u.shas)


def lands_after(plan, unit, dep_id: str) -> bool:
    """Whether ``unit`` is ``dep_id`` or lands after it (its depends_on closure holds it)."""
    by_id = {u.id: u for u in plan.units}
    todo, seen = [unit.id], set()
    while todo:
        u = todo.pop()
        if u == dep_id:
            return True
        if u in seen or u not in by_id:
            continue
        seen.add(u)
        todo.extend(by_id[u].depends_on)
    return False


def test_a_bundle_predicted_on_an_earlier_bundles_picks_lands_after_it(tmp_path):
    """Two upstream commits, the second editing the function the first adds; bundle_size_cap 1
    (Triton's 138 clean commits make 3 bundles at the default 50). The plan predicts bundle 2
    "clean onto the fork tip + 1 earlier bundle pick", gives it no ``depends_on``, and the App
    publishes every unit on the fork tip: bundle 2's branch then ends in a conflict commit (a
    bundle PR with conflict markers), and if it is merged first the fork lands upstream's commits
    out of order. A user should see bundle 2 depend on bundle 1 (or a bundle that applies on the
    fork tip as predicted)."""
    w = Fork(tmp_path, {"a.py": funcs(4), "b.py": funcs(4)})
    u1 = w.up({"a.py": funcs(5)})                       # adds f4
    u2 = w.up({"a.py": funcs(5, {4: 44})})              # changes f4
    w.push_up()
    w.cfg = w.cfg.model_copy(update={"bundle_size_cap": 1})
    core = w.compute()
    b1, b2 = unit_of(core.plan, u1), unit_of(core.plan, u2)
    assert (b1.kind, b2.kind) == ("bundle", "bundle") and b1.id != b2.id
    res = w.publish(core, b2)
    assert b1.id in b2.depends_on or res.conflict is None, (
        f"{b2.id} depends on nothing, yet its pick conflicts on the fork tip in {res.conflict_files}")


def test_a_commit_sharing_a_function_with_an_earlier_bundle_pick_lands_after_that_bundle(tmp_path):
    """u1 changes f0 (clean: a bundle); u2 changes f0 again and f3, which the fork changed (a
    chain). The chain's pick of f0 builds on u1's, so it must land after the bundle — and the
    plan says exactly that ('stacked on bundle-…') once the bundle's branch is pushed, but not in
    the plan the App publishes both units from: there the chain depends on nothing, and merging
    it first puts upstream's two changes of f0 in the wrong order."""
    w = Fork(tmp_path, {"a.py": funcs(6), "c.py": funcs(3)})
    w.fork_commit({"a.py": funcs(6, {3: "'fork'"})})
    u1 = w.up({"a.py": funcs(6, {0: "'one'"})})
    u2 = w.up({"a.py": funcs(6, {0: "'two'", 3: "'up'"})})
    w.push_up()
    core = w.compute()
    bundle, chain = unit_of(core.plan, u1), unit_of(core.plan, u2)
    assert (bundle.kind, chain.kind) == ("bundle", "chain")
    # once the bundle is in flight the planner orders them (the behaviour the first plan lacks)
    w.publish(core, bundle)
    after = w.compute(fresh=True)
    assert bundle.id in unit_of(after.plan, u2).depends_on
    assert lands_after(core.plan, chain, bundle.id), f"{chain.id} depends on {chain.depends_on}"


def test_a_persons_commit_on_an_open_chain_counts_in_its_footprint(tmp_path):
    """A chain stopped at a conflict; a person resolves it and adds a commit adapting f2 of b.py
    (no Upstream-Commit trailer). Upstream then changes f2 of b.py. The new commit is predicted
    on the fork tip (clean there) and bundled, although the open chain changes that very function:
    whichever lands second conflicts. The branch's paths are known (InFlightBranch.paths has
    b.py) but are dropped once any of its upstream commits is known. It should join the chain
    (or land after it)."""
    w = Fork(tmp_path, {"a.py": funcs(4), "b.py": funcs(4), "c.py": funcs(3)})
    w.fork_commit({"a.py": funcs(4, {0: "'fork'"})})
    u1 = w.up({"a.py": funcs(4, {0: "'up'"})})
    w.up({"c.py": funcs(3, {1: 11})})
    w.push_up()
    core = w.compute()
    chain = unit_of(core.plan, u1)
    assert chain.kind == "chain"
    w.publish(core, chain)
    branch = f"forksync/{chain.id}"
    w.person_push(branch, {"a.py": funcs(4, {0: "'fork+up'"})}, "resolve the conflict")
    w.person_push(branch, {"b.py": funcs(4, {2: "'person'"})}, "adapt f2 of b.py to the chain")
    u3 = w.up({"b.py": funcs(4, {2: "'upstream'"})})
    w.push_up()
    core2 = w.compute()
    (br,) = core2.in_flight
    assert "b.py" in br.paths
    unit = unit_of(core2.plan, u3)
    assert lands_after(core2.plan, unit, chain.id), f"{u3[:12]} is in {unit.id}: {unit.items[0].reason}"


def test_an_upstream_revert_of_an_in_flight_chain_member_joins_the_chain(tmp_path):
    """u1 is on an open chain branch (stopped at a conflict). Upstream reverts u1. The ledger
    pairs the two as 'reverted upstream; neither is in the fork' and marks both NO_OP, so the
    status shows u1 NO_OP while its PR is open, and the revert is planned nowhere: the chain lands
    a change upstream took back. u1 should stay IN_FLIGHT and the revert join the chain after it."""
    w = Fork(tmp_path, {"a.py": funcs(4), "c.py": funcs(3)})
    w.fork_commit({"a.py": funcs(4, {0: "'fork'"})})
    u1 = w.up({"a.py": funcs(4, {0: "'up'"})})
    w.up({"c.py": funcs(3, {1: 11})})
    w.push_up()
    core = w.compute()
    chain = unit_of(core.plan, u1)
    w.publish(core, chain)
    git(w.src, "revert", "--no-edit", u1)
    revert = git(w.src, "rev-parse", "HEAD")
    w.push_up()
    core2 = w.compute()
    disp = {e.sha: e.disposition for e in core2.ledger}
    assert disp[u1] is Disposition.IN_FLIGHT, disp[u1]
    assert disp[revert] is Disposition.PENDING, disp[revert]
    assert unit_of(core2.plan, revert).id == chain.id


def test_a_change_to_a_chain_function_after_upstream_moved_its_file_lands_after_the_chain(tmp_path):
    """u1 changes f0 of a.py (a chain: the fork changed f0 too); upstream then moves a.py to
    lib_a.py and u3 changes f0 again, at the new path. u3 starts a chain of its own that depends
    on nothing: merged first, the fork gets upstream's second change of f0 before the first. The
    move's old path is the chain's file; u3 should land after the chain."""
    w = Fork(tmp_path, {"a.py": funcs(6), "c.py": funcs(3)})
    w.fork_commit({"a.py": funcs(6, {0: "'fork'"})})
    u1 = w.up({"a.py": funcs(6, {0: "'one'"})})
    git(w.src, "mv", "a.py", "lib_a.py")
    git(w.src, "commit", "-q", "-m", "move a.py to lib_a.py (#150)")
    u3 = w.up({"lib_a.py": funcs(6, {0: "'two'"})})
    w.push_up()
    plan = w.compute().plan
    chain = unit_of(plan, u1)
    assert chain.kind == "chain"
    unit = unit_of(plan, u3)
    assert lands_after(plan, unit, chain.id), f"{unit.id} depends on {unit.depends_on}: {unit.items[0].reason}"


def test_an_older_commit_is_not_appended_after_newer_picks_of_an_open_chain(tmp_path):
    """u1 and u2 both change f0 (which the fork changed). u1 was deferred, so u2's chain was
    published alone; then the deferral is lifted. The re-plan appends u1 to the open chain's unit
    ('continues forksync/chain-u2'), so apply picks upstream's older change of f0 *after* the
    newer one: the chain's order is not upstream order, and nothing in the plan says so."""
    w = Fork(tmp_path, {"a.py": funcs(6), "c.py": funcs(3)})
    w.fork_commit({"a.py": funcs(6, {0: "'fork'"})})
    u1 = w.up({"a.py": funcs(6, {0: "'one'"})})
    u2 = w.up({"a.py": funcs(6, {0: "'two'"})})
    w.up({"c.py": funcs(3, {1: 5})})
    w.push_up()
    t = int(git(w.src, "log", "-1", "--format=%ct"))
    notes.write_decision(str(w.work), u1, notes.format_decision(Disposition.DEFERRED_BLOCKED, "later", "alice", t + 10))
    core = w.compute()
    chain = unit_of(core.plan, u2)
    assert chain.kind == "chain" and chain.shas == (u2,)
    w.publish(core, chain)
    notes.write_decision(str(w.work), u1, notes.format_decision(None, "now", "alice", t + 20))
    core2 = w.compute()
    order = {c: n for n, c in enumerate(git(w.src, "rev-list", "--reverse", "HEAD").split())}
    (br,) = core2.in_flight
    unit = unit_of(core2.plan, u1)
    if unit.id == br.unit_id:    # appended to the open branch: every item must be newer than its picks
        assert all(order[i.sha] > max(order[s] for s in br.upstream_shas) for i in unit.items), (
            f"{u1[:12]} (#101) is appended after {u2[:12]} (#102) on {br.name}: {unit.items[0].reason}")


def test_a_rewritten_upstream_commit_is_not_planned_again_onto_the_chain_carrying_it(tmp_path):
    """A chain carrying u2 is open (stopped at its conflict). Upstream force-pushes: the same two
    changes, new shas. The re-plan puts u2's rewritten copy into the open chain's unit, so once a
    person resolves u2 the chain picks the very same change a second time (apply already lists
    both as remaining). The copy's change is on the branch: it should not be planned onto it
    again."""
    w = Fork(tmp_path, {"a.py": funcs(6), "c.py": funcs(3)})
    w.fork_commit({"a.py": funcs(6, {0: "'fork'"})})
    u1 = w.up({"c.py": funcs(3, {1: 5})})
    u2 = w.up({"a.py": funcs(6, {0: "'one'"})})
    w.push_up()
    core = w.compute()
    chain = unit_of(core.plan, u2)
    assert chain.kind == "chain"
    w.publish(core, chain)
    git(w.src, "reset", "-q", "--hard", w.base)
    os.environ["GIT_COMMITTER_DATE"] = "2030-01-01T00:00:00Z"
    try:
        git(w.src, "cherry-pick", u1)
        git(w.src, "cherry-pick", u2)
    finally:
        del os.environ["GIT_COMMITTER_DATE"]
    u2_new = git(w.src, "rev-parse", "HEAD")
    assert u2_new != u2
    w.push_up()
    core2 = w.compute()
    # the branch carries the copy's change: it is IN_FLIGHT there (planned nowhere), or at least
    # not planned onto the branch again
    unit = next((u for u in core2.plan.units if u2_new in u.shas), None)
    assert unit is None or unit.id != chain.id, (
        f"{u2_new[:12]} (the rewritten {u2[:12]}) is planned onto {chain.id} again: {unit.items}")
    assert unit is not None or {e.sha: e.disposition for e in core2.ledger}[u2_new] is Disposition.IN_FLIGHT


def test_an_open_divergent_symbol_chain_stays_its_areas_tail(tmp_path):
    """A divergent area by symbol (``symbols: ['^warpSpec']``): u1 changes warpSpecA (a chain);
    unpublished, a later u2 changing warpSpecB in another file joins it ('touches divergent area
    'ws' … of chain-u1'). Once chain-u1's branch is pushed, the same u2 starts a chain of its own
    that depends on nothing: an open branch keeps only the areas its *paths* match, so the area's
    changes can land out of upstream order. It should follow the open chain."""
    w = Fork(tmp_path, {"lib/y.py": named(["warpSpecA", "other"]), "lib/z.py": named(["warpSpecB", "misc"]),
                        "c.py": funcs(3)})
    w.fork_commit({"lib/y.py": named(["warpSpecA", "other"], {"other": "'fork'"}),
                   "lib/z.py": named(["warpSpecB", "misc"], {"misc": "'fork'"})})
    w.cfg = w.cfg.model_copy(update={"areas": [Area(name="ws", paths=["lib/ws/**"], symbols=["^warpSpec"],
                                                     divergent=True)]})
    u1 = w.up({"lib/y.py": named(["warpSpecA", "other"], {"warpSpecA": 1})})
    w.up({"c.py": funcs(3, {1: 5})})
    u2 = w.up({"lib/z.py": named(["warpSpecB", "misc"], {"warpSpecB": 2})})
    w.push_up()
    unpublished = w.compute(fresh=True).plan
    assert unit_of(unpublished, u1).id == unit_of(unpublished, u2).id
    git(w.src, "reset", "-q", "--hard", "HEAD~1")     # u2 arrives after chain-u1 is published
    w.push_up()
    core = w.compute()
    chain = unit_of(core.plan, u1)
    w.publish(core, chain)
    git(w.src, "cherry-pick", u2)
    u2 = git(w.src, "rev-parse", "HEAD")
    w.push_up()
    plan = w.compute().plan
    unit = unit_of(plan, u2)
    assert lands_after(plan, unit, chain.id), f"{unit.id} depends on {unit.depends_on}: {unit.items[0].reason}"
