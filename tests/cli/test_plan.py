"""``forksync plan`` / ``forksync apply`` end to end on a real upstream/fork pair."""
from __future__ import annotations

import json

from bot.cli.main import main
from bot.demo.repobuilder import run_git
from tests.support.plan_repos import build_pair, with_release_branch


def test_plan_json_and_apply(tmp_path, monkeypatch, capsys):
    pair = build_pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    g = ["--fork", str(pair.fork.path), "--upstream", str(pair.up.path)]
    assert main(["plan", "--json", *g]) == 0
    out = json.loads(capsys.readouterr().out)
    u = pair.u
    assert out["schema"] == "forksync.plan/1" and out["pending"] == 9 and out["base"] == pair.fork_tip
    assert [(x["id"], x["kind"], [i["sha"] for i in x["items"]]) for x in out["units"]] == [
        (f"bundle-{u['u1'][:12]}", "bundle", [u["u1"], u["u3"], u["u6"], u["u7"], u["u9"]]),
        (f"chain-{u['u2'][:12]}", "chain", [u["u2"], u["u4"]]),
        (f"chain-{u['u5'][:12]}", "chain", [u["u5"]])]
    assert out["units"][1]["items"][0] == {"sha": u["u2"], "pr": 102, "subject": "[dialect] fold mul overflow (#102)",
                                           "reason": "predicted cherry-pick conflicts in lib/Dialect/Ops.cpp",
                                           "conflicts": ["lib/Dialect/Ops.cpp"]}
    assert [x["sha"] for x in out["no_op_candidates"]] == [u["u8"]]
    # u4 was predicted after the bundle's pick of Ops.cpp (u3): the chain lands after the bundle
    assert out["chain_size_cap"] == 25 and [x["depends_on"] for x in out["units"]] == [[], [f"bundle-{u['u1'][:12]}"], []]

    assert main(["apply", f"bundle-{u['u1'][:8]}", *g]) == 0
    text = capsys.readouterr().out
    assert f"forksync/bundle-{u['u1'][:12]} created" in text and text.count("  picked ") == 5
    # re-planning: the bundle is in flight, the chains keep their ids
    assert main(["plan", "--json", *g]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [x["id"] for x in again["units"]] == [f"chain-{u['u2'][:12]}", f"chain-{u['u5'][:12]}"]
    assert [b["name"] for b in again["in_flight"]] == [f"forksync/bundle-{u['u1'][:12]}"]
    # a chain that conflicts at its first pick: exit 1; its branch ends with the conflict commit
    assert main(["apply", f"chain-{u['u2'][:12]}", *g]) == 1
    text = capsys.readouterr().out
    tip = run_git(pair.fork.path, "rev-parse", f"forksync/chain-{u['u2'][:12]}").strip()
    assert run_git(pair.fork.path, "rev-parse", f"{tip}^").strip() == pair.fork_tip
    assert f"  conflict commit {tip[:12]} at the tip of forksync/chain-{u['u2'][:12]} (diff3 markers)" in text
    assert "  conflict (content, 1 hunk(s)): lib/Dialect/Ops.cpp" in text
    # the conflict commit carries no pick: its upstream commit is in flight on the branch, the chain
    # is still planned with the rest, and applying it again reports the same conflict (JSON: the
    # conflict commit and each file's kind and hunks)
    assert main(["apply", f"chain-{u['u2'][:12]}", "--json", *g]) == 1
    res = json.loads(capsys.readouterr().out)
    assert (res["conflict"], res["conflict_commit"], res["tip"], res["picked"]) == (u["u2"], tip, tip, [])
    assert res["remaining"] == [u["u2"], u["u4"]] and res["conflict_files"] == ["lib/Dialect/Ops.cpp"]
    assert "  2 commit(s) not applied" in text      # as the first apply said
    assert [(f["path"], f["kind"], len(f["hunks"])) for f in res["conflicts"]] == [("lib/Dialect/Ops.cpp", "content", 1)]
    assert res["conflicts"][0]["hunks"][0].startswith("<<<<<<< fork\n") and "\n||||||| upstream parent " in \
        res["conflicts"][0]["hunks"][0]
    # an unknown unit: exit 2 with the ids
    assert main(["apply", "chain-nope", *g]) == 2
    assert f"units: chain-{u['u2'][:12]}" in capsys.readouterr().err


def test_a_prefix_that_also_names_a_unit_in_flight_is_ambiguous(tmp_path, monkeypatch, capsys):
    # `apply chain-6` on the Triton fork, meant for chain-6fa1dd664c73 just applied (in flight, so no
    # longer planned), created another chain, chain-61cef5bdbfe2, the one planned unit it starts
    pair = build_pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    u = pair.u
    g = ["--fork", str(pair.fork.path), "--upstream", str(pair.up.path)]
    main(["apply", f"chain-{u['u5'][:12]}", *g])
    capsys.readouterr()
    assert main(["plan", "--json", *g]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert [x["id"] for x in planned["units"] if x["id"].startswith("chain-")] == [f"chain-{u['u2'][:12]}"]
    assert f"forksync/chain-{u['u5'][:12]}" in [b["name"] for b in planned["in_flight"]]
    assert main(["apply", "chain-", *g]) == 2
    err = capsys.readouterr().err
    assert "ambiguous" in err and f"chain-{u['u2'][:12]}" in err and f"chain-{u['u5'][:12]}" in err
    assert run_git(pair.fork.path, "branch", "--list", f"forksync/chain-{u['u2'][:12]}").strip() == ""
    # the whole id still applies it
    assert main(["apply", f"chain-{u['u2'][:12]}", *g]) == 1


def test_applying_again_a_chain_stopped_at_its_last_pick_says_it_waits_for_a_resolution(tmp_path, monkeypatch, capsys):
    # upstream up to u3: chain-u2 is u2 alone, which conflicts. Once applied, everything on the chain
    # is in flight, so the chain is no longer planned: applying it again said "nothing to apply"
    # (exit 0), as for a finished chain, while its branch ends with the conflict commit
    pair = build_pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    u = pair.u
    chain = f"chain-{u['u2'][:12]}"
    g = ["--fork", str(pair.fork.path), "--upstream", str(pair.up.path), "--upstream-ref", u["u3"]]
    assert main(["apply", chain, *g]) == 1
    capsys.readouterr()
    tip = run_git(pair.fork.path, "rev-parse", f"forksync/{chain}").strip()
    assert main(["apply", chain, *g]) == 1
    out = capsys.readouterr().out
    assert "nothing to apply" not in out and f"conflict commit {tip[:12]}" in out
    assert f"forksync resolve {chain}" in out
    assert main(["apply", chain, "--json", *g]) == 1
    res = json.loads(capsys.readouterr().out)
    assert res["in_flight"] and res["conflict"] == u["u2"] and res["conflict_commit"] == tip
    assert run_git(pair.fork.path, "rev-parse", f"forksync/{chain}").strip() == tip      # nothing written
    # a bundle in flight with no conflict is still "nothing to apply" (exit 0)
    assert main(["apply", f"bundle-{u['u1'][:12]}", *g]) == 0
    capsys.readouterr()
    assert main(["apply", f"bundle-{u['u1'][:12]}", *g]) == 0
    assert "nothing to apply" in capsys.readouterr().out


def test_a_prefix_of_a_chain_stopped_at_a_conflict_names_that_one_chain(tmp_path, monkeypatch, capsys):
    # chain-u2 stopped at its first pick is planned (with the rest) and in flight (its branch) at
    # once, under one id: a prefix of it is no ambiguity; it reports the same conflict as the whole id
    pair = build_pair(tmp_path)
    monkeypatch.chdir(tmp_path)
    u = pair.u
    chain = f"chain-{u['u2'][:12]}"
    g = ["--fork", str(pair.fork.path), "--upstream", str(pair.up.path)]
    assert main(["apply", chain, *g]) == 1
    capsys.readouterr()
    tip = run_git(pair.fork.path, "rev-parse", f"forksync/{chain}").strip()
    assert main(["apply", chain[:14], "--json", *g]) == 1, capsys.readouterr().err
    res = json.loads(capsys.readouterr().out)
    assert (res["unit"], res["conflict"], res["conflict_commit"]) == (chain, u["u2"], tip)
    # a prefix that starts several planned units and one in flight names all of them
    assert main(["apply", f"bundle-{u['u1'][:12]}", *g]) == 0
    capsys.readouterr()
    assert main(["apply", "", *g]) == 2
    err = capsys.readouterr().err
    assert "ambiguous" in err and all(x in err for x in (chain, f"chain-{u['u5'][:12]}", f"bundle-{u['u1'][:12]}"))


def test_a_unit_applied_for_one_fork_branch_is_not_in_flight_on_another(tmp_path, monkeypatch, capsys):
    """ROCm/triton keeps main_perf, release/internal/3.2.x and triton-mlir in one repository: a chain
    applied for main_perf showed as IN_FLIGHT on release/internal/3.2.x, and its own commits
    (``branch ^fork_tip``: all of main_perf's) put main_perf's files in triton-mlir's plan."""
    pair, g, rel = with_release_branch(tmp_path, at="base")
    monkeypatch.chdir(tmp_path)
    assert main(["plan", "--json", *rel]) == 0
    before = json.loads(capsys.readouterr().out)
    assert main(["status", "--json", *rel]) == 0
    counts = json.loads(capsys.readouterr().out)["counts"]
    u = pair.u
    assert main(["apply", f"bundle-{u['u1'][:12]}", "--fork-ref", "main", *g]) == 0
    capsys.readouterr()
    assert main(["plan", "--json", *rel]) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["in_flight"] == [] and after["pending"] == before["pending"] == 9
    assert [(x["id"], [i["sha"] for i in x["items"]]) for x in after["units"]] == \
        [(x["id"], [i["sha"] for i in x["items"]]) for x in before["units"]]
    assert main(["status", "--json", *rel]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"] == counts and not doc["counts"].get("IN_FLIGHT")
    # on main, the fork branch it was built for, the bundle is in flight
    assert main(["plan", "--json", "--fork-ref", "main", *g]) == 0
    assert [b["name"] for b in json.loads(capsys.readouterr().out)["in_flight"]] == [f"forksync/bundle-{u['u1'][:12]}"]


def test_the_same_unit_applied_for_two_fork_branches_gets_a_branch_for_each(tmp_path, monkeypatch, capsys):
    """ROCm/triton's main_perf and release/internal/3.2.x both plan ``chain-7873637d7cf5``: applied
    for the second, the first's ``forksync/<unit>`` was taken as its branch (main_perf's commits
    "kept", not written by forksync). A fork ref other than the repository's default branch gets
    ``forksync/<fork ref>/<unit>``; the default branch keeps ``forksync/<unit>``."""
    pair, g, rel = with_release_branch(tmp_path, at="base")
    fork, u = pair.fork, pair.u
    monkeypatch.chdir(tmp_path)
    bundle = f"bundle-{u['u1'][:12]}"
    assert main(["plan", "--json", *rel]) == 0
    planned = {x["id"]: [i["sha"] for i in x["items"]] for x in json.loads(capsys.readouterr().out)["units"]}
    assert bundle in planned        # the same unit id on main's plan (applied there below)
    assert main(["apply", bundle, "--json", "--fork-ref", "main", *g]) == 0
    on_main = json.loads(capsys.readouterr().out)
    assert on_main["branch"] == f"forksync/{bundle}" and on_main["base"] == pair.fork_tip
    assert main(["apply", bundle, "--json", *rel]) == 0
    on_rel = json.loads(capsys.readouterr().out)
    assert on_rel["branch"] == f"forksync/release/{bundle}" and on_rel["created"] is True
    assert on_rel["base"] == fork.head("release") and on_rel["kept"] == []
    assert [p["upstream"] for p in on_rel["picked"]] == planned[bundle]
    assert on_main["picked"][0]["upstream"] == on_rel["picked"][0]["upstream"] == u["u1"]
    assert fork.head(f"forksync/{bundle}") == on_main["tip"]          # main's branch as it was
    assert fork.head(f"forksync/release/{bundle}") == on_rel["tip"] != on_main["tip"]
    for ref, name in (("main", f"forksync/{bundle}"), ("release", f"forksync/release/{bundle}")):
        assert main(["plan", "--json", *g, "--fork-ref", ref]) == 0
        assert [b["name"] for b in json.loads(capsys.readouterr().out)["in_flight"]] == [name]
    # applied again: release's own branch answers, in flight
    assert main(["apply", bundle, "--json", *rel]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["branch"], again["in_flight"]) == (f"forksync/release/{bundle}", True)
