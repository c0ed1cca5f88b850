"""The plan helper process (bot/plan/helper.py): merges computed ahead of time in a second process
give exactly the predictions (and plans) of local merges, are reused only where the running tree
agrees at the pick's paths, and a helper that cannot start or dies changes nothing but speed."""
from __future__ import annotations

from pathlib import Path

import pygit2

from bot.plan.helper import MISS, PlanHelper
from bot.plan.partition import build_plan
from bot.plan.predict import MergePredictor, merge_answer
from bot.plan.symbol_index import SymbolIndex
from bot.store import Store
from tests.support.plan_repos import AREAS, build_pair, file_becomes_directory


def walk(pred: MergePredictor, infos, hint: bool = True):
    """Predict ``infos`` in order on the running tree (clean picks advance it), hinting all first
    and letting the helper answer them all (on a repository this small the planner would
    otherwise overtake a helper that is still starting)."""
    if hint:
        pred.hint(infos)
        if pred.helper is not None and pred.helper.proc is not None:
            assert pred.helper.settle()
    out = []
    for c in infos:
        p = pred.predict(c)
        out.append((p.outcome, p.conflicts, p.result_tree))
        if p.outcome == "clean":
            pred.advance(c, p)
    return out


def with_helper(repo, base, **kw) -> tuple[MergePredictor, PlanHelper]:
    helper = PlanHelper(repo.path, **kw)
    pred = MergePredictor(repo, base, rename_detection=False)
    pred.use_helper(helper)
    return pred, helper


def test_helper_predictions_equal_local_merges(tmp_path):
    pair = build_pair(tmp_path)
    infos = pair.infos()
    local = walk(MergePredictor(pair.repo, pair.fork_tip, rename_detection=False), infos, hint=False)
    pred, helper = with_helper(pair.repo, pair.fork_tip)
    try:
        assert helper.start()
        got = walk(pred, infos)
    finally:
        helper.close()
    assert got == local
    assert [o for o, _, _ in got] == ["clean", "conflict", "clean", "conflict", "conflict",
                                      "clean", "clean", "empty", "clean"]
    assert 1 <= pred.helper_merges <= pred.merges == len(infos) and helper.failed is None


def test_an_answer_is_reused_only_where_the_running_tree_agrees(tmp_path):
    """u9 edits the line u1 edits: merged onto the fork tip it conflicts; after u1's clean pick it
    is clean. The helper's answer for u9 (computed on the fork tip, before u1 advanced the
    running tree) must not be reused: language.py differs between the two trees."""
    pair = build_pair(tmp_path)
    u1, u9 = pair.infos(["u1", "u9"])
    pred, helper = with_helper(pair.repo, pair.fork_tip)
    try:
        helper.start()
        pred.hint([u1, u9])                      # both on the fork tip
        assert helper.settle()
        answer = helper.take(("merge", u9.sha, pred.running_tree))
        assert answer is not MISS and answer[0] == "conflict"
        assert answer[2] == ["python/triton/language.py"]
        p1 = pred.predict(u1)
        pred.advance(u1, p1)
        p9 = pred.predict(u9)
    finally:
        helper.close()
    assert (p1.outcome, p9.outcome) == ("clean", "clean")    # as git cherry-pick says (test_predict.py)


def test_plan_is_the_same_with_and_without_the_helper(tmp_path):
    pair = build_pair(tmp_path)
    infos = pair.infos()

    def plan(helper):
        pred = MergePredictor(pair.repo, pair.fork_tip, rename_detection=False)
        if helper is not None:
            pred.use_helper(helper)
            pred.hint(infos)
            assert helper.settle()
        return build_plan(infos, predictor=pred, areas=AREAS, symbols=SymbolIndex(pair.repo), base=pair.fork_tip)

    helper = PlanHelper(pair.repo.path)
    try:
        with_h = plan(helper)
        assert helper.delivered >= 1
    finally:
        helper.close()
    assert with_h == plan(None)
    assert [u.kind for u in with_h.units] == ["bundle", "chain", "chain"]


def test_a_helper_that_cannot_start_changes_nothing(tmp_path):
    pair = build_pair(tmp_path)
    infos = pair.infos()
    pred, helper = with_helper(pair.repo, pair.fork_tip, start_method="no-such-method")
    got = walk(pred, infos)
    assert helper.proc is None and "did not start" in helper.failed
    assert got == walk(MergePredictor(pair.repo, pair.fork_tip, rename_detection=False), infos, hint=False)
    assert pred.helper_merges == 0


def test_a_dead_helper_is_dropped_and_merges_go_on_here(tmp_path):
    pair = build_pair(tmp_path)
    infos = pair.infos()
    pred, helper = with_helper(pair.repo, pair.fork_tip)
    assert helper.start()
    helper.proc.kill()
    helper.proc.join(5)
    got = walk(pred, infos)
    assert helper.proc is None and helper.failed.startswith("plan helper stopped")
    assert got == walk(MergePredictor(pair.repo, pair.fork_tip, rename_detection=False), infos, hint=False)
    helper.close()                                # idempotent


def test_a_cached_replan_never_starts_the_helper(tmp_path):
    pair = build_pair(tmp_path)
    infos = pair.infos()
    store = Store(tmp_path / "plan.sqlite")
    cold, h1 = with_helper(pair.repo, pair.fork_tip)
    cold.store = store
    try:
        first = walk(cold, infos)
    finally:
        h1.close()
    cold.flush()
    warm = MergePredictor(pair.repo, pair.fork_tip, rename_detection=False, store=Store(tmp_path / "plan.sqlite"))
    h2 = PlanHelper(pair.repo.path)
    warm.use_helper(h2)
    assert not warm.hint_worthwhile(infos[0])
    assert walk(warm, infos) == first
    assert h2.proc is None and warm.cache_hits == len(infos) and warm.merges == 0


def test_rename_detection_keeps_the_helper_out(tmp_path):
    pair = build_pair(tmp_path)
    pred = MergePredictor(pair.repo, pair.fork_tip, rename_detection=True)
    helper = PlanHelper(pair.repo.path)
    pred.use_helper(helper)
    assert pred.hint(pair.infos()) == 0 and helper.proc is None


def test_merge_answer_shapes(tmp_path):
    pair = build_pair(tmp_path)
    repo = pair.repo
    tip_tree = str(repo[pair.fork_tip].peel(pygit2.Commit).tree_id)
    kind, merged, changed, tree = merge_answer(repo, pair.u["u1"], tip_tree)
    assert kind == "merged" and changed == ["python/triton/language.py"] and list(merged) == changed
    assert tree == MergePredictor(repo, pair.fork_tip, rename_detection=False).predict(pair.infos(["u1"])[0]).result_tree
    assert merge_answer(repo, pair.u["u2"], tip_tree)[:2] == ("conflict", ("lib/Dialect/Ops.cpp",))
    assert merge_answer(repo, "0" * 40, tip_tree)[0] == "error"
    # a file replaced by a directory is left to the planner's own merge
    r, base, sha = file_becomes_directory(tmp_path)
    assert merge_answer(r, sha, str(r[base].peel(pygit2.Commit).tree_id))[0] == "unhandled"


def test_plan_state_with_the_helper_gives_the_plan_of_one_process(tmp_path):
    from bot.config.forksync import load_config
    from bot.demo.scenario import build_scenario
    from bot.plan.planner import plan_state
    from bot.sync.ingest import load_state

    s = build_scenario(tmp_path / "demo")
    cfg = load_config(str(s.config_path))
    cfg = cfg.model_copy(update={"cache_dir": str(tmp_path / "cache"), "rename_detection": False})
    state = load_state(cfg)
    helped = plan_state(state, helper_min=0)
    alone = plan_state(state, workers=1)
    assert helped.plan == alone.plan and len(helped.plan.units) >= 3
    assert helped.extra["helper"]["failed"] is None and alone.extra["helper"] is None
    # below helper_min (the default, 64 pending commits) no process is started
    assert plan_state(state).extra["helper"] is None


def test_one_process_plan_writes_its_trees_at_the_end_and_a_re_plan_reads_them(tmp_path, monkeypatch):
    """Without a helper the predictions' trees are held in memory and written when the plan is
    done: one pack (above LOOSE_BELOW objects) or loose objects; the re-plan reads them back."""
    from bot.config.forksync import load_config
    from bot.demo.scenario import build_scenario
    from bot.plan import planner
    from bot.plan.predict import scratch_repo
    from bot.sync.ingest import load_state

    s = build_scenario(tmp_path / "demo")
    cfg = load_config(str(s.config_path))
    cfg = cfg.model_copy(update={"cache_dir": str(tmp_path / "cache"), "rename_detection": False})
    state = load_state(cfg)
    store = Store(tmp_path / "plan.sqlite")
    monkeypatch.setattr(planner, "LOOSE_BELOW", 0)
    cold = planner.plan_state(state, store=store, workers=1)
    objects = Path(scratch_repo(state.git_dir, cfg.cache_dir).path) / "objects"
    assert len(list((objects / "pack").glob("*.pack"))) == 1
    assert not [p for p in objects.glob("??/*")]          # no loose object
    warm = planner.plan_state(state, store=store, workers=1)     # stored answers name trees of the pack
    assert warm.plan == cold.plan and warm.merges == 0 and warm.cache_hits == cold.merges > 0
    assert planner.plan_state(state, helper_min=0).plan == cold.plan     # the helper's trees stay loose


def test_hinted_picks_take_their_paths_from_the_analysis_and_a_small_replan_starts_no_helper(tmp_path):
    """Commits hinted to the helper are keyed by their analysed files (no tree diff: on the Triton
    fork the diffs cost 0.6 s of a 0.75 s re-plan), and the helper starts only where at least
    ``helper_min`` pending commits have no cached prediction (a re-plan after a push of a few)."""
    from bot.config.forksync import load_config
    from bot.demo.scenario import build_scenario
    from bot.plan.planner import plan_state
    from bot.sync.ingest import load_state

    s = build_scenario(tmp_path / "demo")
    cfg = load_config(str(s.config_path))
    cfg = cfg.model_copy(update={"cache_dir": str(tmp_path / "cache"), "rename_detection": False})
    state = load_state(cfg)
    store = Store(tmp_path / "plan.sqlite")
    cold = plan_state(state, store=store, workers=1)
    later = [c.sha for c in cold.pending[len(cold.pending) // 2:]]     # as if pushed since: never merged
    with store.lock:
        store.conn.execute(f"delete from plan_answers where \"commit\" in ({','.join('?' * len(later))})", later)
    pushed = plan_state(state, store=store, helper_min=len(later))
    assert pushed.extra["helper"] is not None and pushed.extra["helper"]["failed"] is None
    assert pushed.plan == cold.plan and 0 < pushed.merges and pushed.cache_hits > 0
    assert not list(store.db.query("select * from plan_pick_paths"))     # every pick's paths from its analysis
    again = plan_state(state, store=store, helper_min=1)                 # nothing new: no helper
    assert again.extra["helper"] is None and again.merges == 0 and again.plan == cold.plan


def test_ctrl_c_is_the_planners_to_handle_the_helper_neither_dies_nor_prints(tmp_path):
    """Ctrl-C on a terminal signals the whole process group: the helper printed a
    KeyboardInterrupt traceback under the planner's clean exit 130. The planner stops it."""
    import os
    import signal

    pair = build_pair(tmp_path)
    infos = pair.infos()
    pred, helper = with_helper(pair.repo, pair.fork_tip)
    try:
        assert helper.start()
        walk(pred, infos[:2])                    # the helper has answered: it is serving
        os.kill(helper.proc.pid, signal.SIGINT)
        helper.proc.join(1.0)
        assert helper.proc.is_alive() and helper.proc.exitcode is None
        again = MergePredictor(pair.repo, pair.fork_tip, rename_detection=False)
        again.use_helper(helper)                 # and it still answers
        assert walk(again, infos) == walk(MergePredictor(pair.repo, pair.fork_tip, rename_detection=False),
                                          infos, hint=False)
        assert helper.failed is None and again.helper_merges >= 1
    finally:
        helper.close()
    assert helper.proc is None


def _sigint_at_start() -> None:
    import signal
    import sys

    sys.exit(7 if signal.getsignal(signal.SIGINT) is signal.SIG_IGN else 3)


def test_the_helper_starts_with_sigint_ignored_and_the_planner_keeps_its_own():
    """A Ctrl-C during the helper's start-up (before it ignores SIGINT itself) must print no
    traceback: a spawned child started inside ``_sigint_ignored`` begins with SIGINT ignored, and
    the planner's own handler is back afterwards (KeyboardInterrupt stays the planner's)."""
    import multiprocessing
    import signal

    from bot.plan.helper import _sigint_ignored

    before = signal.getsignal(signal.SIGINT)
    with _sigint_ignored():
        p = multiprocessing.get_context("spawn").Process(target=_sigint_at_start)
        p.start()
    assert signal.getsignal(signal.SIGINT) is before
    p.join(60)
    assert p.exitcode == 7
    p = multiprocessing.get_context("spawn").Process(target=_sigint_at_start)   # without it: Python's handler
    p.start()
    p.join(60)
    assert p.exitcode == 3
