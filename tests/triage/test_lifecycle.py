"""The lifecycle's pure decision core: tables of nightlies in, exact actions out."""
from __future__ import annotations

from dataclasses import replace

from bot.config.triage import TriageSettings
from bot.triage.lifecycle import DAY, Action, Nightly, NightlyGroup, TriageState, decide

S = TriageSettings()
T0 = 1_764_460_800          # 2025-11-30 00:00 UTC
TESTS = frozenset({"k.py::test_mm"})
ALL = frozenset({"k.py::test_mm", "k.py::test_add", "k.py::test_sm"})


def g(key="smem", cls="real", tests=TESTS, crash=False) -> NightlyGroup:
    return NightlyGroup(key, cls, f"title {key}", f"sig {key}", frozenset(tests), frozenset({"h200"}), crash)


def night(i: int, *groups: NightlyGroup, ran=ALL, day: float | None = None, commit=None) -> Nightly:
    failing = set().union(*(x.tests for x in groups)) if groups else set()
    return Nightly(f"n{i}", int(T0 + (i if day is None else day) * DAY), commit or f"{i:040x}", tuple(groups),
                   frozenset(ran), frozenset(ran) - failing)


def run(nights, settings=S):
    state, log = TriageState(), []
    for n in nights:
        state, actions = decide(state, n, settings)
        log.append([(a.kind, a.keys) for a in actions])
    return state, log


def test_opens_after_two_nightlies_within_three_days_then_updates():
    state, log = run([night(0, g()), night(1, g()), night(2, g())])
    assert log == [[], [("open", ("smem",))], [("update", ("smem",))]]
    t = state.tracked["smem"]
    assert (t.state, t.runs, t.first_seen, t.last_seen) == ("open", 3, T0, T0 + 2 * DAY)


def test_two_failures_too_far_apart_do_not_open():
    _, log = run([night(0, g(), day=0), night(1, g(), day=4)])
    assert log == [[], []]


def test_a_crash_opens_at_once():
    _, log = run([night(0, g("segv", crash=True))])
    assert log == [[("open", ("segv",))]]
    _, log = run([night(0, g("segv", crash=True))], TriageSettings(open_crashes_at_once=False))
    assert log == [[]]


def test_infrastructure_and_flaky_never_open():
    state, log = run([night(i, g("busy", cls="infrastructure"), g("flake", cls="flaky", tests={"k.py::test_sm"}))
                      for i in range(4)])
    assert log == [[], [], [], []]
    assert {k: (t.state, t.cls, t.runs) for k, t in state.tracked.items()} == {
        "busy": ("tracked", "infrastructure", 4), "flake": ("tracked", "flaky", 4)}


def test_closes_after_three_green_nightlies_in_which_the_tests_ran():
    nights = [night(0, g()), night(1, g()),
              night(2), night(3, ran=ALL - TESTS),       # 3: the test did not run: no evidence
              night(4), night(5)]
    state, log = run(nights)
    assert log == [[], [("open", ("smem",))], [], [], [], [("close", ("smem",))]]
    assert state.tracked["smem"].state == "closed"


def test_a_failure_of_the_tests_under_another_signature_resets_the_streak():
    other = g("other", tests=TESTS)
    _, log = run([night(0, g()), night(1, g()), night(2), night(3), night(4, other), night(5), night(6), night(7)])
    assert log[-1] == [("close", ("smem",))] and all(("close", ("smem",)) not in x for x in log[:-1])


def test_reopens_on_recurrence_at_once():
    _, log = run([night(0, g()), night(1, g()), night(2), night(3), night(4), night(5, g())])
    assert log[4] == [("close", ("smem",))]
    assert log[5] == [("reopen", ("smem",))]


def test_flood_becomes_one_summary_then_issues_open_when_it_is_over():
    many = [g(f"k{i}", crash=True, tests={f"k.py::t{i}"}) for i in range(7)]
    state, log = run([night(0, *many)], TriageSettings(max_new_issues_per_run=5))
    assert log == [[("flood", tuple(f"k{i}" for i in range(7)))]]
    assert all(t.state == "pending" for t in state.tracked.values())
    state2, actions = decide(state, night(1, *many[:2]), TriageSettings(max_new_issues_per_run=5))
    assert [(a.kind, a.keys) for a in actions] == [("open", ("k0",)), ("open", ("k1",))]


def test_the_same_nightly_twice_changes_nothing():
    state, _ = run([night(0, g()), night(1, g())])
    again, actions = decide(state, night(1, g()), S)
    assert actions == [] and again is state


def test_last_green_and_first_red_are_remembered_for_suspects():
    state, _ = run([night(0, commit="a" * 40), night(1, g(), commit="b" * 40)])
    t = state.tracked["smem"]
    assert (t.last_green, t.first_red) == ("a" * 40, "b" * 40)


def test_action_shape():
    assert Action("open", ("x",), "n1") == Action("open", ("x",), "n1")


def test_same_commit_passing_in_another_nightly_is_flaky():
    same = "e" * 40
    # passed on commit e, then failed on e: flaky, never opened
    state, log = run([night(0, commit=same), night(1, g(), commit=same), night(2, g(), commit=same)])
    assert log == [[], [], []] and (state.tracked["smem"].state, state.tracked["smem"].cls) == ("tracked", "flaky")
    # failed on e, then passed on e: the pending cause turns flaky
    state, log = run([night(0, g(), commit=same), night(1, commit=same), night(2, g(), commit="f" * 40)])
    assert log == [[], [], []] and state.tracked["smem"].cls == "flaky"


def test_cli_status_lists_tracked_causes(tmp_path, capsys):
    from bot.cli.main import main
    from bot.store import Store
    from bot.triage.issues import save_state

    state, _ = run([night(0, g(), g("busy", cls="infrastructure", tests={"k.py::test_add"})), night(1, g())])
    state.tracked["smem"] = replace(state.tracked["smem"], issue=7)
    with Store(tmp_path / "f.db") as store:
        save_state(store, state, "n1", [], 0)
    assert main(["triage", "status", "--db", str(tmp_path / "f.db")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["smem", "real", "open", "#7", "2", "1", "2025-11-30", "2025-12-01"]
    assert out[2].split() == ["busy", "infrastructure", "tracked", "-", "1", "1", "2025-11-30", "2025-11-30"]
    assert out[-1] == "2 root cause(s); 1 nightly run(s) processed"
    assert main(["triage", "status", "--db", str(tmp_path / "f.db"), "--class", "infrastructure"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:-1]] == ["busy"]
    assert main(["triage", "status", "--db", str(tmp_path / "missing.db")]) == 2
