"""The lifecycle's pure decision core: tables of nightlies in, exact actions out."""
from __future__ import annotations

from dataclasses import replace

import pytest

from bot.config.triage import TriageSettings
from bot.triage.lifecycle import DAY, Action, Nightly, NightlyGroup, OlderNightly, TriageState, decide

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
    # every nightly refreshes the open issue's status table, clean ones too
    refresh = [("refresh", ("smem",))]
    assert log == [[], [("open", ("smem",))], refresh, refresh, refresh, [("close", ("smem",))]]
    assert state.tracked["smem"].state == "closed"


def test_a_failure_of_the_tests_under_another_signature_resets_the_streak():
    other = g("other", tests=TESTS)
    _, log = run([night(0, g()), night(1, g()), night(2), night(3), night(4, other), night(5), night(6), night(7)])
    assert log[-1] == [("close", ("smem",))] and all(("close", ("smem",)) not in x for x in log[:-1])


def test_reopens_on_recurrence_at_once():
    _, log = run([night(0, g()), night(1, g()), night(2), night(3), night(4), night(5, g())])
    assert log[4] == [("close", ("smem",))]
    assert log[5] == [("reopen", ("smem",))]
    assert log[2] == log[3] == [("refresh", ("smem",))]


def test_the_cap_opens_the_largest_then_newest_and_the_rest_wait_in_the_flood():
    # seven crashes at once, cap 5: the two with most cases and the newest open; two wait
    sizes = {0: 1, 1: 3, 2: 1, 3: 2, 4: 1, 5: 1, 6: 4}
    many = [g(f"k{i}", crash=True, tests={f"k.py::t{i}[{j}]" for j in range(sizes[i])}) for i in range(7)]
    cap5 = TriageSettings(max_new_issues_per_run=5)
    state, log = run([night(0, *many)], cap5)
    assert log == [[("open", ("k6",)), ("open", ("k1",)), ("open", ("k3",)), ("open", ("k0",)), ("open", ("k2",)),
                    ("flood", ("k4", "k5"))]]
    assert (state.flood, state.flood_opened) == (("k4", "k5"), ("k6", "k1", "k3", "k0", "k2"))
    assert {k for k, t in state.tracked.items() if t.state == "pending"} == {"k4", "k5"}
    # the next nightly: k4 still fails and opens (room under the cap), k5 did not run: still waits
    ran = ALL | {c for x in many for c in x.tests} - {"k.py::t5[0]"}
    state, actions = decide(state, night(1, many[4], ran=ran), cap5)
    assert [(a.kind, a.keys) for a in actions if a.kind not in ("refresh",)] == [("open", ("k4",)), ("flood", ("k5",))]
    assert state.flood_opened == ("k6", "k1", "k3", "k0", "k2", "k4")
    # k5's tests pass: nothing waits any more, the flood issue closes (once)
    state, actions = decide(state, night(2, ran=ran | {"k.py::t5[0]"}), cap5)
    assert [(a.kind, a.keys) for a in actions if a.kind != "refresh"] == [("flood-close", ("k5",))]
    assert (state.flood, state.flood_opened) == ((), ())
    state, actions = decide(state, night(3), cap5)
    assert not [a for a in actions if a.kind.startswith("flood")]


def test_the_default_cap_is_ten():
    assert S.max_new_issues_per_run == 10
    many = [g(f"k{i:02}", crash=True, tests={f"k.py::t{i}"}) for i in range(12)]
    _, log = run([night(0, *many)])
    assert [k for k, keys in log[0] if k == "open"] == ["open"] * 10 and log[0][-1] == ("flood", ("k10", "k11"))


def test_a_fault_closes_after_its_own_clean_nights_while_another_fault_fails_other_cases():
    # test_dot has 8 cases: fault A breaks 4 of them, fault B the other 4; A is fixed after night 1
    cases = [f"k.py::test_dot[{n}-{d}]" for n in (16, 32, 64, 128) for d in ("fp16", "fp32")]
    a_cases, b_cases = frozenset(cases[:4]), frozenset(cases[4:])
    ran = frozenset(cases) | {"k.py::test_dot"}
    a, b = g("A", tests=a_cases, crash=True), g("B", tests=b_cases, crash=True)

    def n(i, *groups):
        failing = set().union(*(x.tests for x in groups))
        return Nightly(f"n{i}", T0 + i * DAY, f"{i:040x}", groups, ran, ran - failing - {"k.py::test_dot"})
    state, log = run([n(0, a, b), n(1, a, b), n(2, b), n(3, b), n(4, b)])
    assert log[0] == [("open", ("A",)), ("open", ("B",))]
    assert log[4] == [("update", ("B",)), ("close", ("A",))]
    assert (state.tracked["A"].state, state.tracked["B"].state) == ("closed", "open")


def test_the_nightly_follows_cases_and_functions():
    from bot.triage.group import Grouper
    from bot.triage.lifecycle import nightly_from_groups
    from bot.triage.records import FailureRecord

    recs = [FailureRecord(test="k.py::test_dot", raw_test=f"k.py::test_dot[{i}]", outcome="failed" if i < 2 else "passed",
                          text="LLVM ERROR: boom" if i < 2 else "") for i in range(4)]
    recs.append(FailureRecord(test="k.py::test_add", raw_test="k.py::test_add", outcome="passed"))
    nightly = nightly_from_groups("n", T0, "c" * 40, Grouper().group(recs), recs)
    assert nightly.groups[0].tests == {"k.py::test_dot[0]", "k.py::test_dot[1]"}
    assert nightly.passed == {"k.py::test_dot[2]", "k.py::test_dot[3]", "k.py::test_add"}
    assert nightly.ran == nightly.passed | {"k.py::test_dot[0]", "k.py::test_dot[1]", "k.py::test_dot"}


def test_the_same_nightly_twice_changes_nothing():
    state, _ = run([night(0, g()), night(1, g())])
    again, actions = decide(state, night(1, g()), S)
    assert actions == [] and again is state


def test_a_nightly_older_than_the_newest_processed_is_refused():
    # night 1 (day 1) opens the crash; a nightly of day 0 arriving after it would count its
    # passes as a green night and its failures as the first seen: refused, the state untouched
    state, _ = run([night(1, g("segv", crash=True))])
    with pytest.raises(OlderNightly) as e:
        decide(state, night(0, day=0), S)
    assert (e.value.run, e.value.time, e.value.newest_run, e.value.newest_time) == ("n0", T0, "n1", T0 + DAY)
    assert str(e.value) == "nightly n0 (2025-11-30) is older than n1 (2025-12-01), the newest nightly already triaged"
    # the newest one again is still a no-op, and another nightly of the same time is not older
    assert decide(state, night(1, g("segv", crash=True)), S) == (state, [])
    later, actions = decide(state, replace(night(2, g("segv", crash=True)), time=T0 + DAY), S)
    assert actions == [Action("update", ("segv",), "n2")] and later.newest == ("n2", T0 + DAY)
    assert later.tracked["segv"].first_seen == T0 + DAY


def test_nightlies_without_a_commit_are_no_evidence_of_flakiness():
    # reports that name no commit (JUnit without --commit): "passed on the same commit" cannot be
    # told, so a new failure is not flaky, nor does a later clean nightly make a pending one flaky
    nights = [night(0), night(1, g("segv", crash=True)), night(2, g("smem")), night(3)]
    state, log = run([replace(n, commit="") for n in nights])
    assert log[1] == [("open", ("segv",))]
    assert {k: (t.state, t.cls) for k, t in state.tracked.items()} == {"segv": ("open", "real"), "smem": ("pending", "real")}


def test_last_green_and_first_red_are_remembered_for_suspects():
    state, _ = run([night(0, commit="a" * 40), night(1, g(), commit="b" * 40)])
    t = state.tracked["smem"]
    assert (t.last_green, t.last_green_run, t.first_red) == ("a" * 40, "n0", "b" * 40)


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
        save_state(store, "local/fork", state, "n1", [], 0)
    assert main(["triage", "status", "--db", str(tmp_path / "f.db")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["smem", "real", "open", "#7", "2", "1", "2025-11-30", "2025-12-01"]
    assert out[2].split() == ["busy", "infrastructure", "tracked", "-", "1", "1", "2025-11-30", "2025-11-30"]
    assert out[-1] == "2 root cause(s) of local/fork; 1 nightly run(s) processed"
    assert main(["triage", "status", "--db", str(tmp_path / "f.db"), "--class", "infrastructure"]) == 0
    assert [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:-1]] == ["busy"]
    assert main(["triage", "status", "--db", str(tmp_path / "missing.db")]) == 2
