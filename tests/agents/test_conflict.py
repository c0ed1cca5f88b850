"""Conflict-resolution agent end to end: a real git repository, the real store, the local
Anthropic server over HTTP; every git-side rail with a failing case."""
from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pygit2
import pytest

from bot.agents.client import AgentClient, estimate_tokens
from bot.agents.conflict import build_prompt, resolve_pick
from bot.agents.conflict_git import build_commit, conflict_case, publish, verify_commit
from bot.agents.conflict_rails import RailViolation, Resolution, ResolvedFile
from bot.agents.policy import agent_resolved
from bot.agents.redact import Redactor
from bot.config.agents import AgentSettings
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.store import Store

OPS_BASE = "".join(f"line {i}\n" for i in range(1, 21))
HEADER = "# Copyright: Jane Doe <jane.doe@example.com>\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "Up Stream", "GIT_AUTHOR_EMAIL": "up@example.org",
                               "GIT_COMMITTER_NAME": "Up Stream", "GIT_COMMITTER_EMAIL": "up@example.org",
                               "GIT_AUTHOR_DATE": "1700000000 +0000", "GIT_COMMITTER_DATE": "1700000000 +0000",
                               "HOME": str(cwd), "PATH": "/usr/bin:/bin"}).stdout.strip()


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def make_repo(tmp_path: Path, upstream_message: str = "[ops] rename line 3 and fix line 15") -> tuple[Path, str, str]:
    """A repository holding both histories: ``main`` (the fork) and ``upstream``.
    The upstream commit changes line 3 of ops.py (conflicts with the fork), line 15 (clean) and
    lib/Pass.cpp (clean). Returns (repo, fork tip, upstream sha)."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "python/triton/ops.py", HEADER + OPS_BASE)
    write(root, "lib/Pass.cpp", "int pass() { return 0; }\n")
    write(root, ".github/workflows/ci.yml", "on: push\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "upstream")
    write(root, "python/triton/ops.py", HEADER + OPS_BASE.replace("line 3\n", "line 3 upstream\n")
          .replace("line 15\n", "line 15 fixed upstream\n"))
    write(root, "lib/Pass.cpp", "int pass() { return 1; }\n")
    git(root, "commit", "-qam", upstream_message)
    up = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    write(root, "python/triton/ops.py", HEADER + OPS_BASE.replace("line 3\n", "line 3 fork\n"))
    git(root, "commit", "-qam", "fork: local change to line 3")
    fork = git(root, "rev-parse", "HEAD")
    git(root, "branch", "forksync/chain-test", fork)
    return root, fork, up


RESOLVED_OPS = HEADER + OPS_BASE.replace("line 3\n", "line 3 fork + upstream\n").replace(
    "line 15\n", "line 15 fixed upstream\n")

SETTINGS = AgentSettings(max_retries=2, backoff_base_s=0, backoff_cap_s=0, timeout_s=10)


def honest_reply(content: str = RESOLVED_OPS, path: str = "python/triton/ops.py", **extra) -> Reply:
    return Reply(tool_uses=[{"name": "resolve_conflicts", "input": {
        "files": [{"path": path, "content": content, "action": "kept both changes",
                   "reason": "the fork's rename and upstream's fix are independent"}],
        "summary": "kept the fork's rename and the upstream fix", **extra}}])


def test_conflict_case_from_real_git(tmp_path):
    root, fork, up = make_repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    assert case is not None
    assert case.paths == ("python/triton/ops.py",)
    assert case.clean_paths == ("lib/Pass.cpp",)
    assert case.fork_tip == fork and case.upstream_sha == up
    merged = case.files[0].merged
    assert f"<<<<<<< fork\nline 3 fork\n||||||| base\nline 3\n=======\nline 3 upstream\n>>>>>>> upstream {up[:12]}\n" in merged
    assert "line 15 fixed upstream\n" in merged           # the upstream hunk that merged by itself
    assert case.files[0].fork == HEADER + OPS_BASE.replace("line 3\n", "line 3 fork\n")
    assert conflict_case(str(root), up + "~1", up) is None       # picking onto its own parent: clean


async def test_resolve_pick_commits_on_proposal_branch_only(tmp_path):
    root, fork, up = make_repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    async with FakeAnthropic([honest_reply()], api_key="test-key") as fake:
        client = AgentClient(SETTINGS, Store(), api_key="test-key", base_url=fake.base_url)
        out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork)
        await client.aclose()
    assert out.status == "committed", out.body
    repo = pygit2.Repository(str(root))
    commit = repo[out.commit]
    assert repo.references["refs/heads/forksync/chain-test"].target == commit.id
    assert str(repo.references["refs/heads/main"].target) == fork          # the fork's branch never moves
    assert [str(p) for p in commit.parent_ids] == [fork]
    assert (commit.tree / "python/triton/ops.py").data.decode() == RESOLVED_OPS
    assert (commit.tree / "lib/Pass.cpp").data.decode() == "int pass() { return 1; }\n"
    assert commit.author.name == "Up Stream" and commit.author.email == "up@example.org"
    assert commit.message.endswith(
        f"\n\nUpstream-Commit: {up}\nAgent-Resolved: claude-sonnet-4-6 kept the fork's rename and the upstream fix\n")
    assert agent_resolved(commit.message) == ("claude-sonnet-4-6", "kept the fork's rename and the upstream fix")
    assert out.draft and out.needs_l1 and out.needs_approval
    assert "| `python/triton/ops.py` | kept both changes | the fork's rename and upstream's fix are independent |" in out.body
    assert "stays a draft until the L1 suite passes" in out.body
    # Repository text reaches the model only as quoted data, under a system prompt that says so.
    sent = fake.requests[0].body
    nonce = re.search(r'<data name="upstream-commit-message" id="(\w+)">\n\[ops\] rename line 3 and fix line 15\n\n?</data id="\1">',
                      sent["messages"][0]["content"]).group(1)
    assert f'`<data name="…" id="{nonce}">`' in sent["system"] and "untrusted DATA" in sent["system"]
    assert sent["tool_choice"] == {"type": "tool", "name": "resolve_conflicts"}
    # The email in the file header was redacted in the prompt and put back in the file.
    assert "jane.doe@example.com" not in fake.requests[0].raw
    assert "[REDACTED-email-1]" in fake.requests[0].raw
    git(root, "fsck", "--no-progress")


async def test_placeholder_from_another_source_is_not_restored(tmp_path):
    root, fork, up = make_repo(tmp_path, "[ops] fix\n\nReported-by: Ann <ann@corp.example>")
    case = conflict_case(str(root), fork, up)
    # The model copies the commit message's placeholder into the file: it must stay a placeholder.
    sneaky = RESOLVED_OPS.replace("line 1\n", "line 1\n", 1).replace(
        "line 3 fork + upstream\n", "line 3 fork + upstream  # [REDACTED-email-2]\n")
    async with FakeAnthropic([honest_reply(sneaky)]) as fake:
        client = AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url)
        out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork)
    # neither the e-mail nor the placeholder text reaches the file: the answer is rejected
    assert (out.status, out.rail, out.commit) == ("rejected", "output parses", None)
    assert "python/triton/ops.py holds redaction placeholder(s) [REDACTED-email-2]" in out.detail
    assert "ann@corp.example" not in out.body
    assert str(pygit2.Repository(str(root)).references["refs/heads/forksync/chain-test"].target) == fork
    assert "ann@corp.example" not in fake.requests[0].raw


async def test_missing_trailing_newline_is_rejected(tmp_path):
    root, fork, up = make_repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    async with FakeAnthropic([honest_reply(RESOLVED_OPS.rstrip("\n"))]) as fake:
        client = AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url)
        out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork)
    assert out.status == "rejected" and out.rail == "non-conflicting hunks unchanged"
    assert str(pygit2.Repository(str(root)).references["refs/heads/forksync/chain-test"].target) == fork


def test_rail_result_applies_rejects_unresolved_conflict(tmp_path):
    root, fork, up = make_repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    with pytest.raises(RailViolation) as e:
        build_commit(str(root), case, Resolution((), "nothing", "m"))
    assert e.value.rail == "result applies"
    assert "python/triton/ops.py is conflicted but was not resolved" in e.value.detail


def test_the_agents_pick_keeps_the_upstream_authors_time_zone(tmp_path):
    # every pick keeps the upstream author's date and zone (apply does); the agent's pick too
    root, fork, up = make_repo(tmp_path)
    subprocess.run(["git", "checkout", "-q", "upstream"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=Up Stream", "-c", "user.email=up@example.org", "commit", "-q", "--amend",
                    "--no-edit", "--date=1700000000 +0530"], cwd=root, check=True)
    up = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    case = conflict_case(str(root), fork, up)
    sha = build_commit(str(root), case, Resolution((ResolvedFile("python/triton/ops.py", RESOLVED_OPS, "a", "r"),), "s", "m"))
    author = pygit2.Repository(str(root))[sha].author
    assert (author.time, author.offset) == (1700000000, 330)


def test_rail_reapply_detects_changed_clean_file(tmp_path):
    """A commit that changes a path outside the conflict (here: drops upstream's lib/Pass.cpp
    change) fails the re-application check even if it was built by other means."""
    root, fork, up = make_repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    good = build_commit(str(root), case, Resolution(
        (ResolvedFile("python/triton/ops.py", RESOLVED_OPS, "a", "r"),), "s", "m"))
    verify_commit(str(root), good, case)      # passes
    repo = pygit2.Repository(str(root))
    tb = repo.TreeBuilder(repo[good].tree)
    lib = repo.TreeBuilder(repo[good].tree["lib"].id)
    lib.insert("Pass.cpp", repo.create_blob(b"int pass() { return 0; }\n"), pygit2.enums.FileMode.BLOB)
    tb.insert("lib", lib.write(), pygit2.enums.FileMode.TREE)
    bad = repo.create_commit(None, repo[good].author, repo[good].committer, "x", tb.write(), [repo[good].parent_ids[0]])
    with pytest.raises(RailViolation) as e:
        verify_commit(str(root), str(bad), case)
    assert e.value.detail == "lib/Pass.cpp differs from what the upstream change gives when re-applied"
    other = repo.create_commit(None, repo[good].author, repo[good].committer, "x", repo[good].tree.id, [repo[up].id])
    with pytest.raises(RailViolation, match="is not a single commit on"):
        verify_commit(str(root), str(other), case)


def test_publish_moves_only_forksync_branches(tmp_path):
    root, fork, up = make_repo(tmp_path)
    with pytest.raises(ValueError, match="proposal branches only"):
        publish(str(root), "main", up, fork)
    with pytest.raises(ValueError, match="moved: it is at"):
        publish(str(root), "forksync/chain-test", up, up)
    publish(str(root), "forksync/chain-new", up, None)
    assert str(pygit2.Repository(str(root)).references["refs/heads/forksync/chain-new"].target) == up


async def test_agents_off_without_key_gives_visible_reason(tmp_path):
    root, fork, up = make_repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    client = AgentClient.from_env(SETTINGS, Store(), environ={})
    out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork)
    assert out.status == "skipped"
    assert out.reason == "agents are off: no API key set (FORKSYNC_ANTHROPIC_KEY or ANTHROPIC_API_KEY)"
    assert "No agent resolution: agents are off: no API key set" in out.body
    assert out.commit is None


async def test_branch_not_at_the_fork_tip_is_refused(tmp_path):
    root, fork, up = make_repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    client = AgentClient(SETTINGS, Store(), api_key="k", base_url="http://127.0.0.1:9")
    with pytest.raises(ValueError, match="the proposal branch must be at the commit the pick is replayed onto"):
        await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=up)


def test_cli_resolve_agent_against_the_fake_as_a_process(tmp_path, monkeypatch, capsys):
    """``forksync resolve UNIT --agent``: the chain stopped at its conflict commit; the agent's pick
    takes its place (rails as on GitHub), the conflict commit is kept, and the chain is whole."""
    import json
    import sys

    from bot.cli.main import main
    from bot.git import repo as gitio
    from bot.git.apply import apply_unit
    from bot.model import PlanItem, Unit

    root, fork, up = make_repo(tmp_path)
    info = gitio.commit_info(pygit2.Repository(str(root)), up)
    res = apply_unit(str(root), Unit(id="chain-test", kind="chain", items=(PlanItem(up, "test"),)), base=fork,
                     commits={up: info})
    assert res.conflict == up and res.conflict_commit
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_uses": honest_reply().tool_uses}]))
    proc = subprocess.Popen([sys.executable, "-m", "bot.fakeanthropic", "--port", "0", "--script", str(script)],
                            cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split()[-1]
        monkeypatch.setenv("FORKSYNC_ANTHROPIC_KEY", "k")
        monkeypatch.chdir(tmp_path)
        g = ["--fork", str(root), "--upstream", str(root), "--upstream-ref", "upstream"]
        assert main(["resolve", "chain-test", "--agent", "--base-url", url, "--db", str(tmp_path / "f.db"), *g]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"### Conflict resolution by an agent — upstream {up[:12]}")
        assert f"the conflict commit is kept as refs/forksync/resolutions/chain-test/{res.conflict_commit[:12]}" in out
        assert main(["agents", "status", "--db", str(tmp_path / "f.db"), *g]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[:2] == ["agents: on", "model: claude-sonnet-4-6"]
        assert lines[2].startswith("tokens used today (UTC): ") and not lines[2].startswith("tokens used today (UTC): 0 ")
    finally:
        proc.terminate()
        proc.wait()
    repo = pygit2.Repository(str(root))
    head = repo[repo.references["refs/heads/forksync/chain-test"].target]
    assert head.tree["python/triton/ops.py"].data.decode() == RESOLVED_OPS
    assert [str(p) for p in head.parent_ids] == [fork]          # the conflict commit is gone from the branch
    assert f"Upstream-Commit: {up}" in head.message


async def test_delete_modify_conflict_is_not_for_agents(tmp_path):
    root, fork, up = make_repo(tmp_path)
    git(root, "checkout", "-q", "main")
    git(root, "rm", "-q", "lib/Pass.cpp")
    git(root, "commit", "-qm", "fork drops Pass.cpp")
    tip = git(root, "rev-parse", "HEAD")
    case = conflict_case(str(root), tip, up)
    assert case.unsupported == "lib/Pass.cpp: deleted on one side and changed on the other"
    assert case.paths == ("python/triton/ops.py",)
    async with FakeAnthropic([]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url) as client:
            out = await resolve_pick(client, case, str(root), "forksync/chain-new")
    assert out.status == "skipped" and fake.requests == []
    assert out.reason == ("not a text conflict an agent may resolve "
                          "(lib/Pass.cpp: deleted on one side and changed on the other)")


async def test_answer_cut_off_at_max_tokens_is_rejected(tmp_path):
    root, fork, up = make_repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    cut = honest_reply(RESOLVED_OPS[:40])
    cut.stop_reason = "max_tokens"
    async with FakeAnthropic([cut]) as fake:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url) as client:
            out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork)
    assert (out.status, out.rail, out.detail) == ("rejected", "output parses",
                                                  "the answer was cut off at `agents.max_output_tokens`")


async def test_a_large_file_answered_per_conflict_block(tmp_path):
    """``blocks`` instead of ``content``: the resolved block is put back into the merge output (the
    header with its e-mail never went to the model unredacted and comes back as it was)."""
    root, fork, up = make_repo(tmp_path)
    case = conflict_case(str(root), fork, up)
    answer = {"path": "python/triton/ops.py", "blocks": ["line 3 fork + upstream"], "action": "kept both changes",
              "reason": "independent edits"}
    async with FakeAnthropic([Reply.tool("resolve_conflicts", {"files": [answer], "summary": "both kept"})]) as fake:
        client = AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url)
        out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork)
    assert out.status == "committed", out.body
    assert (pygit2.Repository(str(root))[out.commit].tree / "python/triton/ops.py").data.decode() == RESOLVED_OPS
    assert "jane.doe@example.com" not in fake.requests[0].raw
    # two blocks for a file with one conflict block: rejected, nothing committed
    wrong = {**answer, "blocks": ["line 3 fork\n", "line 3 upstream\n"]}
    async with FakeAnthropic([Reply.tool("resolve_conflicts", {"files": [wrong], "summary": "both kept"})]) as fake:
        client = AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url)
        out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork)
    assert (out.status, out.rail) == ("rejected", "output parses")
    assert "python/triton/ops.py: 2 resolved block(s) for 1 conflict block(s)" in out.detail
    both = {**answer, "content": RESOLVED_OPS}
    async with FakeAnthropic([Reply.tool("resolve_conflicts", {"files": [both], "summary": "both kept"})]) as fake:
        client = AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url)
        out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork)
    assert (out.status, out.rail) == ("rejected", "output parses") and "exactly one of content" in out.detail


async def test_a_pick_too_large_for_one_request_is_asked_file_by_file(tmp_path):
    """Two conflicted files whose prompt together is over ``max_prompt_tokens`` (each alone fits):
    one request per file, each naming only its file; the pick holds both answers."""
    root, fork, up = make_repo(tmp_path)
    big = "".join(f"row {i} of the table\n" for i in range(300))
    git(root, "checkout", "-q", "upstream")
    write(root, "lib/Table.cpp", big)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "table")
    # the table's base, then both sides change its first row
    git(root, "checkout", "-q", "main")
    git(root, "cherry-pick", "upstream")
    write(root, "lib/Table.cpp", big.replace("row 0 ", "row zero (fork) "))
    git(root, "commit", "-qam", "fork: row 0")
    git(root, "checkout", "-q", "upstream")
    write(root, "python/triton/ops.py", HEADER + OPS_BASE.replace("line 3\n", "line 3 upstream again\n"))
    write(root, "lib/Table.cpp", big.replace("row 0 ", "row 0 (upstream) "))
    git(root, "commit", "-qam", "[ops] line 3 and row 0")
    up2 = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    fork2 = git(root, "rev-parse", "HEAD")
    git(root, "branch", "-f", "forksync/chain-test", fork2)
    case = conflict_case(str(root), fork2, up2)
    assert case.paths == ("lib/Table.cpp", "python/triton/ops.py")
    table = big.replace("row 0 ", "row zero (fork, upstream) ")
    ops = HEADER + OPS_BASE.replace("line 3\n", "line 3 fork + upstream again\n")
    replies = [Reply.tool("resolve_conflicts", {"files": [{"path": "lib/Table.cpp", "blocks": ["row zero (fork, upstream) of the table\n"],
                                                           "action": "both", "reason": "r"}], "summary": "table"},
                          match="lib/Table.cpp"),
               Reply.tool("resolve_conflicts", {"files": [{"path": "python/triton/ops.py", "content": ops, "action": "both",
                                                           "reason": "r"}], "summary": "ops"}, match="python/triton/ops.py")]
    def size(c) -> int:
        system, user = build_prompt(c, Redactor(), "0" * 16)
        return estimate_tokens(system, [{"role": "user", "content": user}])
    limit = max(size(replace(case, files=(f,))) for f in case.files)     # each file alone fits, both do not
    assert size(case) > limit
    settings = AgentSettings(max_retries=0, timeout_s=10, max_prompt_tokens=limit)
    async with FakeAnthropic(replies) as fake:
        client = AgentClient(settings, Store(), api_key="k", base_url=fake.base_url)
        out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork2)
    assert out.status == "committed", out.body
    assert len(fake.requests) == 2
    assert ["lib/Table.cpp" in r.raw for r in fake.requests] == [True, False]
    assert ["python/triton/ops.py" in r.raw for r in fake.requests] == [False, True]
    tree = pygit2.Repository(str(root))[out.commit].tree
    assert (tree / "lib/Table.cpp").data.decode() == table and (tree / "python/triton/ops.py").data.decode() == ops
    assert "Agent-Resolved: claude-sonnet-4-6 table; ops\n" in pygit2.Repository(str(root))[out.commit].message


async def test_nothing_is_asked_when_the_rules_decided_every_conflicted_file(tmp_path):
    """The rules' commit holds every conflicted file (their fold was refused, e.g. a kept side
    still has markers): there is nothing for the agent — no request, and no pick that would carry
    the rules' files past the check that refused them."""
    root, fork, up = make_repo(tmp_path)
    kept = ResolvedFile("python/triton/ops.py", "<<<<<<< HEAD\nkept\n", "kept the fork's file", "r", "fork-ahead")
    case = conflict_case(str(root), fork, up, (kept,))
    assert (case.paths, case.all_paths) == ((), ("python/triton/ops.py",))
    any_answer = Reply.tool("resolve_conflicts", {"files": [], "summary": "nothing to do"})
    async with FakeAnthropic([any_answer]) as fake:
        client = AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url)
        out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork)
    assert (out.status, out.commit) == ("skipped", None)
    assert "forksync's rules decided every conflicted file" in out.reason
    assert fake.requests == []


async def test_a_file_over_the_excerpt_limit_is_sent_as_excerpts_and_answered_per_block(tmp_path):
    """A 600-line file: the prompt holds its conflict block with 30 lines around it (not the
    whole file, not the fork's copy); a whole-file answer is refused, a per-block answer lands."""
    root, fork, up = make_repo(tmp_path)
    long = "".join(f"entry {i}\n" for i in range(600))
    git(root, "checkout", "-q", "main")
    write(root, "lib/Long.cpp", long)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "long file")
    git(root, "checkout", "-q", "upstream")
    git(root, "cherry-pick", "main")
    write(root, "lib/Long.cpp", long.replace("entry 300\n", "entry 300 upstream\n"))
    git(root, "commit", "-qam", "upstream: entry 300")
    up2 = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "main")
    write(root, "lib/Long.cpp", long.replace("entry 300\n", "entry 300 fork\n"))
    git(root, "commit", "-qam", "fork: entry 300")
    fork2 = git(root, "rev-parse", "HEAD")
    git(root, "branch", "-f", "forksync/chain-test", fork2)
    case = conflict_case(str(root), fork2, up2)
    assert case.paths == ("lib/Long.cpp",)
    whole = Reply.tool("resolve_conflicts", {"files": [{"path": "lib/Long.cpp", "content": long, "action": "a", "reason": "r"}],
                                             "summary": "s"})
    per_block = Reply.tool("resolve_conflicts", {"files": [{"path": "lib/Long.cpp", "blocks": ["entry 300 fork + upstream\n"],
                                                            "action": "both", "reason": "r"}], "summary": "both"})
    async with FakeAnthropic([whole, per_block]) as fake:
        client = AgentClient(SETTINGS, Store(), api_key="k", base_url=fake.base_url)
        refused = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork2)
        out = await resolve_pick(client, case, str(root), "forksync/chain-test", branch_old=fork2)
    assert (refused.status, refused.rail) == ("rejected", "output parses") and "must be answered with `blocks`" in refused.detail
    assert out.status == "committed", out.body
    prompt = fake.requests[0].body["messages"][0]["content"]
    assert '<data name="merged-excerpts:lib/Long.cpp"' in prompt and "fork:lib/Long.cpp" not in prompt
    assert "@@ conflict block 1 of 1 (lines 301-307 of the merge output) @@" in prompt
    excerpt = prompt.split("merged-excerpts:lib/Long.cpp")[1]
    assert "\nentry 270\n" in excerpt and "\nentry 269\n" not in excerpt and "\nentry 330\n" in excerpt and "\nentry 331\n" not in excerpt
    assert (pygit2.Repository(str(root))[out.commit].tree / "lib/Long.cpp").data.decode() == long.replace(
        "entry 300\n", "entry 300 fork + upstream\n")
