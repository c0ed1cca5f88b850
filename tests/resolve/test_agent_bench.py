"""The conflict agent scored on the fork's own resolved picks (tests/support/resolve_history.py):
asked only about the files the rules declined, through the local Anthropic server and the same
rails as a live resolution; exact / ws / declined per file, chain+agent, and runs recorded in the
store for comparison — through ``forksync bench resolve --agent`` as a user runs it."""
from __future__ import annotations

import json

from bot.cli.main import main
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.resolve.agent_bench import RUNS_TABLE, asks, prompt_digest
from bot.store import Store
from tests.support.resolve_history import build_history

CORE = "int core() {\n  return fork() + 2;\n}\n"
REG_WS = "#pragma once\nvoid a();\nvoid tlx();\n\nvoid b_upstream();\n"      # the landed file but for a blank line


def _answer(files: list[tuple[str, str]]) -> dict:
    return {"files": [{"path": p, "content": c, "action": "merged", "reason": "both changes kept"} for p, c in files],
            "summary": "merged both sides"}


SCRIPT = [
    Reply.tool("resolve_conflicts", _answer([("core.c", CORE), ("reg.h", REG_WS)]), match="core.c", sticky=True),
    # ops.c: an answer that keeps a conflict marker is rejected by the rails (the file scores declined)
    Reply.tool("resolve_conflicts", _answer([("ops.c", "<<<<<<< fork\nint op();\n")]), match="ops.c", sticky=True),
]


def test_bench_resolve_agent_scores_the_declined_files_and_records_each_run(tmp_path, monkeypatch, capsys):
    h = build_history(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "k")
    db = tmp_path / "runs.sqlite"
    g = ["--fork", str(h.path), "--upstream", str(h.path), "--upstream-ref", "upstream", "--fork-ref", "main"]
    with FakeAnthropic(SCRIPT, api_key="k").in_thread() as ant:
        # a chain without rerere: the history's rerere pick (ops.c) then goes to the agent, whose
        # answer the rails reject
        args = [*g, "bench", "resolve", "--rules", "fork-deleted,fork-ahead", "--agent", "--base-url", ant.base_url,
                "--db", str(db)]
        assert main([*args, "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        a = doc["agent"]
        assert (a["schema"], a["part"], a["picks"], a["prompt_digest"]) == (
            "forksync.resolve-agent-bench/1", "held-out", 3, prompt_digest())
        assert a["scores"]["held-out"]["agent"] == {"files": 4, "exact": 1, "ws": 1, "wrong": 0, "declined": 2,
                                                     "precision": 0.5, "coverage": 0.25}
        # that chain decides none of the held-out files: chain+agent = the agent
        assert a["scores"]["held-out"]["chain+agent"]["exact"] == 1
        rows = {(o["path"], o["fork_commit"]): o for o in a["outcomes"]}
        assert rows[("core.c", h.fork["p_union"])]["outcome"] == "exact"
        assert rows[("reg.h", h.fork["p_union"])]["outcome"] == "ws"
        ops = rows[("ops.c", h.fork["p_rerere"])]
        assert (ops["status"], ops["outcome"]) == ("rejected", "declined") and ops["why"].startswith("no conflict markers: ")
        # one request per pick, each naming only that pick's declined files
        bodies = [str(b) for b in ant.bodies]
        assert len(bodies) == 3 and sum("core.c" in b for b in bodies) == 1
        # a second run, limited to one pick, as a table with the earlier run beside it
        assert main([*args, "--agent-limit", "1"]) == 0
        text = " ".join(capsys.readouterr().out.split())     # rich wraps at the terminal's width
    assert "agent: model claude-sonnet-4-6" in text and "1 pick(s) of the held-out part asked" in text
    assert "recorded runs on this fork tip, newest first:" in text and "declined by the agent" not in text
    assert "held-out, 3 pick(s): agent 1 exact of 4 (1 ws only, 0 wrong, 2 declined); chain+agent 1 of 4" in text
    store = Store(db)
    runs = list(store.db[RUNS_TABLE.name].rows_where(order_by="id"))
    assert [(r["picks"], r["files"], r["exact"], r["ws"], r["declined"]) for r in runs] == [(3, 4, 1, 1, 2), (1, 2, 1, 1, 0)]
    assert json.loads(runs[0]["doc_json"])["outcomes"][0]["path"] in {"core.c", "reg.h"}


def test_agent_bench_bad_input(tmp_path, monkeypatch, capsys):
    h = build_history(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    g = ["--fork", str(h.path), "--upstream", str(h.path), "--upstream-ref", "upstream", "--fork-ref", "main"]
    for var in ("FORKSYNC_ANTHROPIC_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert main([*g, "bench", "resolve", "--agent", "--db", str(tmp_path / "x.sqlite")]) == 2
    assert "--agent: agents are off: no API key set" in capsys.readouterr().err
    monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "k")
    assert main([*g, "bench", "resolve", "--agent", "--agent-limit", "0", "--db", str(tmp_path / "x.sqlite")]) == 2
    assert "--agent-limit must be at least 1" in capsys.readouterr().err


def test_asks_rejects_an_unknown_part():
    try:
        asks([], None, "test")
    except ValueError as e:
        assert "part must be one of all, dev, held-out" in str(e)
    else:
        raise AssertionError("no error")


def test_chain_agent_with_a_limit_leaves_out_every_file_of_a_pick_not_asked():
    """A pick beyond ``--agent-limit`` is out of the combined figure with all its files — not
    only its declined ones (its rule-decided files alone would raise the figure)."""
    import asyncio
    from types import SimpleNamespace as NS

    from bot.config.agents import AgentSettings
    from bot.resolve.agent_bench import score_agent

    def rep(sha: str, t: int, paths: tuple[str, ...]):
        files = tuple(NS(conflict=NS(path=p, binary=False, merged="x\n", ours="a\n", theirs="b\n", base="c\n"),
                         landed="x\n", kind="content") for p in paths)
        return NS(pick=NS(fork_commit=sha, upstream="u" + sha, onto="o" + sha, time=t), files=files)

    older, newer = rep("f1", 1, ("a.c",)), rep("f2", 2, ("b.c", "d.c"))

    def row(r, path, chain):
        return {"fork_commit": r.pick.fork_commit, "path": path, "part": "dev" if r is older else "held-out",
                "outcomes": {"chain": chain}}
    res = NS(outcomes=[row(older, "a.c", "declined"), row(newer, "b.c", "exact"), row(newer, "d.c", "declined")])
    client = NS(settings=AgentSettings(conflict_resolution=False))      # every ask skipped, no request
    doc = asyncio.run(score_agent(client, [older, newer], res, message_of=lambda s: "m", part="all", limit=1))
    assert doc["picks"] == 1
    assert doc["scores"]["all"]["chain+agent"] == {"files": 1, "exact": 0, "ws": 0, "wrong": 0, "declined": 1,
                                                   "precision": None, "coverage": 0.0}


def test_a_rails_detail_is_recorded_without_the_secret_it_quotes():
    """A rail's detail quotes the fork's text (the clean region the answer dropped); the run's
    document — stored and printed — must not carry a secret from it."""
    import asyncio
    from types import SimpleNamespace as NS

    from bot.agents.client import AgentClient
    from bot.config.agents import AgentSettings
    from bot.resolve.agent_bench import score_agent

    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    merged = f"TOKEN = '{token}'\n<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n"
    f = NS(conflict=NS(path="cfg.py", binary=False, merged=merged, ours=f"TOKEN = '{token}'\nx\n",
                       theirs=f"TOKEN = '{token}'\ny\n", base=f"TOKEN = '{token}'\n"), landed="z\n", kind="content")
    rep = NS(pick=NS(fork_commit="f1", upstream="u1", onto="o1", time=1), files=(f,))
    res = NS(outcomes=[{"fork_commit": "f1", "path": "cfg.py", "part": "held-out", "outcomes": {"chain": "declined"}}])
    drop = Reply.tool("resolve_conflicts", _answer([("cfg.py", "z\n")]))       # the clean first line is gone

    async def run():
        async with FakeAnthropic([drop], api_key="k") as ant:
            settings = AgentSettings(max_retries=0, backoff_base_s=0, backoff_cap_s=0, timeout_s=10)
            async with AgentClient(settings, Store(), api_key="k", base_url=ant.base_url) as client:
                return await score_agent(client, [rep], res, message_of=lambda s: "m", part="all")
    doc = asyncio.run(run())
    (row,) = doc["outcomes"]
    assert (row["status"], row["outcome"]) == ("rejected", "declined")
    assert row["why"].startswith("non-conflicting hunks unchanged: cfg.py: the region that merged cleanly from line 1")
    assert token not in json.dumps(doc)


def test_an_api_that_refuses_or_is_not_there_stops_the_run_and_records_nothing(tmp_path, monkeypatch, capsys):
    h = build_history(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "wrong")
    db = tmp_path / "runs.sqlite"
    g = ["--fork", str(h.path), "--upstream", str(h.path), "--upstream-ref", "upstream", "--fork-ref", "main"]
    with FakeAnthropic(SCRIPT, api_key="k").in_thread() as ant:       # the server wants another key: HTTP 401
        assert main([*g, "bench", "resolve", "--agent", "--base-url", ant.base_url, "--db", str(db)]) == 2
        err = capsys.readouterr().err
    assert f"--agent: the Anthropic API at {ant.base_url.rstrip('/')} failed on pick " in err
    assert "HTTP 401 authentication_error (not retried)" in err and "nothing was recorded" in err
    assert "Traceback" not in err
    assert list(Store(db).db["resolve_agent_runs"].rows) == []


def test_bench_resolve_bad_store_paths_and_agent_flags_without_agent(tmp_path, monkeypatch, capsys):
    h = build_history(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "k")
    g = ["--fork", str(h.path), "--upstream", str(h.path), "--upstream-ref", "upstream", "--fork-ref", "main"]
    (tmp_path / "notes.txt").write_text("not a database, just text that is long enough to be read as a header\n" * 3)
    for db, words in ((tmp_path / "no" / "such" / "x.db", "does not exist"), (tmp_path, "a folder, not a database file"),
                      (tmp_path / "notes.txt", "not a forksync SQLite database")):
        assert main([*g, "bench", "resolve", "--agent", "--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert f"--db {db}: " in err and words in err and "Traceback" not in err
    assert not (tmp_path / "no").exists()
    assert main([*g, "bench", "resolve", "--agent-limit", "3", "--db", "x.db"]) == 2
    assert "--agent-limit, --db only apply with --agent" in capsys.readouterr().err
