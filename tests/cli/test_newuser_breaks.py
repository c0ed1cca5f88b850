"""A new user's first hour on a real fork, by the README and docs/cli-reference.md: each test
repeats a step taken on the Triton fork's snapshot (status --as-of on an upstream pinned to a sha,
plan --as-of then apply, the local dashboard, the CLI reference) on a small real pair of
repositories, and checks what the user is told."""
from __future__ import annotations

import argparse
import json
import re
from datetime import datetime, timezone

import pygit2
import pytest

from bot.cli.dashboard import fork_name, refresh
from bot.cli.main import build_parser
from bot.config.forksync import load_config
from bot.dashboard import views
from bot.demo.repobuilder import RepoBuilder
from bot.store import Store
from tests.support.cli import run

DAY = 86400
T0 = 1_767_225_600          # 2026-01-01T00:00:00Z


def iso(t: int) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def pair(tmp_path, monkeypatch):
    """Upstream: base (2026-01-01), u1 (01-02, #1), u2 (01-03, #2), u3 (01-04, #3); the fork picks
    u1 on 01-06. As of 2026-01-03 the fork had picked nothing: the plan then is one bundle that
    starts at u1; today's plan is a bundle that starts at u2. ``(argv, up, fork, shas)``."""
    up = RepoBuilder.init(tmp_path / "upstream")
    base = up.commit("Initial import (#0)", {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"}, when=T0)
    fork = up.clone(tmp_path / "fork")
    fork.author = ("Fork Dev", "dev@fork.example")
    u = {"base": base}
    u["u1"] = up.commit("Change a (#1)", {"a.txt": "a1\n"}, when=T0 + DAY)
    u["u2"] = up.commit("Change b (#2)", {"b.txt": "b2\n"}, when=T0 + 2 * DAY)
    u["u3"] = up.commit("Change c (#3)", {"c.txt": "c3\n"}, when=T0 + 3 * DAY)
    fork.add_remote("upstream", up.path)
    u["p1"] = fork.cherry_pick(u["u1"], when=T0 + 5 * DAY, trailer=f"Upstream-Commit: {u['u1']}")
    monkeypatch.chdir(tmp_path)
    return ["--upstream", str(up.path), "--fork", str(fork.path)], up, fork, u


def test_status_as_of_on_a_pinned_upstream_names_the_pinned_commit(pair, capsys):
    """docs/real-fork.md runs every command with `--upstream-ref a4ce9c2a2` (the snapshot's main is
    the fork, so upstream's tip is a sha), then `status --as-of 2026-04-15`.

    What the user sees: "upstream as of: unknown (upstream pinned to 58816a13df4b, committed
    2026-04-15T23:53:58Z: 'a4ce9c2a2' is no ref …)" — it names the tip as of that date as the
    pin, a commit they never pinned, beside the sha they did.
    What they should see: the commit they pinned named as the pin, and the date's tip as that:
    the tip as of the date."""
    argv, _, _, u = pair
    rc, out, err = run(capsys, [*argv, "--upstream-ref", u["u3"][:10], "status", "--as-of", "2026-01-02", "--json"])
    assert rc == 0, err
    up = json.loads(out)["upstream"]
    assert (up["tip"]["sha"], up["pinned"], up["as_of"]) == (u["u1"], True, None)
    why = up["as_of_unknown"]
    assert f"pinned to {u['u1'][:12]}" not in why, why
    assert why.startswith(f"upstream pinned to {u['u3'][:12]}"), why
    assert f"{u['u1'][:12]}, committed {iso(T0 + DAY)}" in why, why


def test_a_unit_of_plan_as_of_is_applied_as_the_plan_says(pair, capsys):
    """README "Finishing a conflicted chain" shows a chain "from the Triton fork as of 2026-04-15";
    `plan --as-of 2026-04-15` lists such units (bundle-9c2cefdb65a4 …), and `apply` has no --as-of.

    What the user sees: `apply bundle-9c2cefdb65a4` → "no unit … in the current plan …; run
    `forksync plan` to see them" — the plan they just ran showed it; neither says that apply plans
    at the tips it is given, nor which tips those were.
    What they should see: `plan --as-of` says how to apply its units (the two tips as
    --upstream-ref/--fork-ref), following it builds the unit's branch on the fork's tip of that
    date, and apply's refusal points at those flags."""
    argv, _, _, u = pair
    rc, out, err = run(capsys, [*argv, "plan", "--as-of", "2026-01-03"])
    assert rc == 0, err
    unit = f"bundle-{u['u1'][:12]}"
    assert unit in out
    m = re.search(r"--upstream-ref (\S+) --fork-ref (\S+)", out)
    assert m, out
    assert u["u2"].startswith(m[1]) and u["base"].startswith(m[2]), out

    rc, out, err = run(capsys, [*argv, "apply", unit])
    assert rc == 2 and f"no unit {unit!r} in the current plan" in err
    assert "--as-of" in err and "--upstream-ref" in err and "--fork-ref" in err, err

    rc, out, err = run(capsys, [*argv, "--upstream-ref", m[1], "--fork-ref", m[2], "apply", unit])
    assert rc == 0, err
    assert out.startswith(f"forksync/{unit} created") and f"base {u['base'][:12]})" in out
    fork = pygit2.Repository(str(pair[2].path))
    tip = fork.revparse_single(f"forksync/{unit}")
    assert [c.message.splitlines()[0] for c in (tip, tip.parents[0])] == ["Change b (#2)", "Change a (#1)"]
    assert str(tip.parents[0].parents[0].id) == u["base"]


def test_local_dashboard_shows_when_the_upstream_tip_and_frontier_were_committed(pair, tmp_path, capsys):
    """README: "On your own fork, `forksync --config forksync.yml dashboard` computes the state …".
    Days Behind is the time between the upstream tip's and the frontier's commits; `status` shows
    both dates, and the App's dashboard shows "upstream tip …, committed …".

    What the user sees on the local dashboard: "upstream tip a4ce9c2a223a" and "frontier
    a4ce9c2a223a" with no date (the overview's JSON: upstream_head_at and frontier_at null) — the
    two times the headline number is measured between are missing.
    What they should see: the same dates `status --json` gives."""
    argv, up, fork, u = pair
    rc, out, err = run(capsys, [*argv, "status", "--json"])
    assert rc == 0, err
    doc = json.loads(out)
    cfg = load_config(None, {"upstream.url": str(up.path), "fork.url": str(fork.path)})
    store = Store(tmp_path / "forksync.db")
    try:
        name = fork_name(cfg)
        refresh(store, cfg, name, backfill_days=0, backfill_step=1, now=T0 + 10 * DAY)
        o = views.overview(store, name, T0 + 10 * DAY, views.Policy())
    finally:
        store.close()
    assert (o["upstream_head"], o["frontier"]["sha"]) == (doc["upstream"]["tip"]["sha"], doc["frontier"]["sha"])
    assert (o["upstream_head_at"], o["frontier_at"]) == (doc["upstream"]["tip"]["date"], doc["frontier"]["date"])
    assert (o["upstream_head_at"], o["frontier_at"]) == (iso(T0 + 3 * DAY), iso(T0 + DAY))


def _options(parser: argparse.ArgumentParser, name: str):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub_name, sub in a.choices.items():
                yield from _options(sub, f"{name} {sub_name}")
        elif a.option_strings and not isinstance(a, argparse._HelpAction):
            yield name, a


def test_every_option_in_the_cli_reference_says_what_it_takes():
    """docs/cli-reference.md ("every option of every command", README) is generated from the
    parsers.

    What the user sees under `ledger show` and `ledger export`: "--as-of DATE" and "--json" with
    nothing beside them — which date (the end of that day? UTC?), what the JSON is — where
    `status` and `plan` say "state at the end of DATE (YYYY-MM-DD, UTC)"; the same for `bisect
    --good/--bad/--repo/--infra-retries`, `queue --limit`, `triage suggest --rules` and `triage
    extract --format`.
    What they should see: a line for every option."""
    bare = sorted(f"{name} {a.option_strings[-1]}" for name, a in _options(build_parser(), "forksync")
                  if not (a.help or "").strip())
    assert bare == []
