"""A chain whose agent resolved many picks: the PR body keeps the newest reports whole and
moves the oldest, oldest first, to a comment each, leaving one line that names the pick, its
fork commit and the comment — so the body fits GitHub's limit and no report is cut in the middle.
The fitting itself is pure (plain strings); the chain PR runs over the local GitHub, which
refuses a body over 65,536 characters as GitHub does, and the local Anthropic server."""
from __future__ import annotations

import re

import pytest

from bot.agents.client import AgentClient
from bot.fakeanthropic import FakeAnthropic
from bot.github.limits import BODY_LIMIT
from bot.store import Store
from bot.sync import agents
from bot.sync.prs import placed, title_digest
from tests.sync.test_agents import BRANCH, FULL, SETTINGS, git, honest, world, write  # noqa: F401 - the fixture

CUT_NOTE = re.compile(r"_[\d,]+ characters were cut here: GitHub keeps at most [\d,]+ characters in one body._\n$")


# ------------------------------------------------------------------ the fitting, over plain strings
@pytest.mark.parametrize("sizes, room, replaced", [
    ([10, 20, 30], 100, []),                    # all fit: nothing replaced
    ([40, 40, 40], 100, [0]),                   # the oldest goes first
    ([40, 40, 40], 60, [0, 1]),                 # then the next oldest; the newest stays whole
    ([5, 40, 40], 85, [1]),                     # a report shorter than its line stays whole
    ([30, 50, 5, 20], 70, [0, 1]),              # oldest first, even where a later one is larger
    ([1000] * 40, 10_000, list(range(31))),
])
def test_the_oldest_reports_give_way_to_lines_first(sizes, room, replaced):
    reports = [chr(ord("a") + i % 26) * n for i, n in enumerate(sizes)]
    lines = [f"line {i}" for i in range(len(sizes))]
    out = agents.fit_reports(reports, lines, room)
    assert [i for i, t in enumerate(out) if t != reports[i]] == replaced
    assert all(out[i] == lines[i] for i in replaced)
    assert len("\n\n".join(out)) <= room
    assert out[-1] == reports[-1]


def test_only_a_report_alone_over_the_room_is_cut_with_the_cut_note():
    newest = "".join(f"| `f{i}.py` | kept | row {i} |\n" for i in range(5000))
    out = agents.fit_reports(["old " * 100, newest], ["line 0", "line 1"], 20_000)
    assert out[0] == "line 0"
    assert len("\n\n".join(out)) <= 20_000
    assert CUT_NOTE.search(out[-1]) and newest.startswith(out[-1].split("\n\n_")[0])
    alone = agents.fit_reports([newest], ["line"], 20_000)
    assert len(alone[0]) <= 20_000 and CUT_NOTE.search(alone[0])


def test_a_moved_line_stays_a_line_and_the_same_pick_replaces_it():
    head = "### Conflict resolution by an agent — upstream "
    a, b = head + "a" * 12 + "\n\nfirst", head + "b" * 12 + "\n\nsecond"
    line = agents.moved_line("a" * 12, "c" * 12, "https://example.org/c/1")
    body = f"Body.\n\n<!-- forksync:agent-report:start -->\n{line}\n\n{a}\n<!-- forksync:agent-report:end -->\n"
    assert agents.report_moves(body, b) == []
    kept = agents.with_report(body, b)
    assert kept == f"Body.\n\n<!-- forksync:agent-report:start -->\n{line}\n\n{a}\n\n{b}\n<!-- forksync:agent-report:end -->\n"
    again = head + "a" * 12 + "\n\nretried"
    assert agents.with_report(kept, again) == (
        f"Body.\n\n<!-- forksync:agent-report:start -->\n{b}\n\n{again}\n<!-- forksync:agent-report:end -->\n")


# ------------------------------------------------------------------ a chain PR over the local GitHub
def old_report(i: int, size: int) -> tuple[str, str, str]:
    """An earlier pick's report as the conflict agent renders it, ``size`` characters long."""
    up, commit = f"{i:x}" * 40, f"{i + 5:x}" * 40
    text = (f"### Conflict resolution by an agent — upstream {up[:12]}\n\n"
            f"The pick of upstream {up} conflicted in 300 file(s); an agent (`claude-sonnet-4-6`) proposed a "
            f"resolution, committed as {commit[:12]} with an `Agent-Resolved:` trailer.\n\n"
            f"Summary: kept the fork's dialect changes\n\n| File | Action | Reason |\n|---|---|---|\n")
    j = 0
    while len(text) < size - 80:
        text += f"| `lib/Dialect/TritonGPU/Transforms/Pass{i}_{j}.cpp` | kept both changes | independent |\n"
        j += 1
    return up[:12], commit[:12], text + "x" * (size - len(text) - 1) + "\n"


async def test_a_chain_over_the_limit_through_agent_reports_alone(world, github_app, fake_github, tmp_path):  # noqa: F811
    fork, inst, work, tip, up = world("[ops] rename line 3 and fix line 15")
    gh = github_app.installation(inst.id)
    # the chain's earlier picks (their reports are below) are on the branch: the PR has commits
    src = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(fork.path), str(src))
    git(src, "checkout", "-q", BRANCH)
    write(src, "docs/x.md", "x\n")
    git(src, "add", "-A")
    git(src, "commit", "-qm", "an earlier pick\n\nUpstream-Commit: " + "a" * 40)
    git(src, "push", "-q", "origin", BRANCH)
    git(work, "fetch", "-q", str(fork.path), f"+refs/heads/{BRANCH}:refs/heads/{BRANCH}")
    title = "[forksync] chain: ops"
    own = placed("", "Sync chain of 7 upstream commits.", title_digest(title), "")
    note = "\n\nA person's note: check the dialect picks.\n"
    frame = "\n<!-- forksync:agent-report:start -->\n\n<!-- forksync:agent-report:end -->\n"
    each = (65_000 - len(own) - len(frame) - len(note) - 5 * 2) // 6
    olds = [old_report(i, each) for i in range(1, 7)]
    body = own + frame.replace("\n\n<!-- forksync:agent-report:end",
                               "\n" + "\n\n".join(t.rstrip("\n") for _, _, t in olds) + "\n<!-- forksync:agent-report:end") + note
    assert 64_000 < len(body) <= BODY_LIMIT
    pr = await gh.post(f"/repos/{FULL}/pulls", data={"title": title, "head": BRANCH, "base": "main",
                                                      "body": body, "draft": True})
    async with FakeAnthropic([honest()], api_key="k") as ant:
        async with AgentClient(SETTINGS, Store(), api_key="k", base_url=ant.base_url) as client:
            res = await agents.resolve_chain_conflict(gh, FULL, git_dir=work, branch=BRANCH, base="main",
                                                      upstream_sha=up, client=client, remote_url=str(fork.path))
    assert (res.status, res.pushed, res.pr) == ("committed", True, pr["number"])
    new = (await gh.getitem(f"/repos/{FULL}/pulls/{res.pr}"))["body"]
    newest = res.outcome.body.rstrip("\n")
    assert len(body) + len(newest) > BODY_LIMIT                       # over through the reports alone
    assert len(new) <= BODY_LIMIT
    assert newest in new                                              # the newest report, whole
    assert "Sync chain of 7 upstream commits." in new and new.endswith(note)   # nothing else cut
    assert "characters were cut here" not in new
    comments = {c["id"]: c["body"] async for c in gh.getiter(f"/repos/{FULL}/issues/{res.pr}/comments")}
    moved = []
    for i, (key, commit, text) in enumerate(olds):
        if text.rstrip("\n") in new:
            continue
        moved.append(i)
        line = next(ln for ln in new.splitlines() if f"agent-report-moved:{key}" in ln)
        assert key in line and commit in line
        link = re.search(r"\((\S+#issuecomment-(\d+))\)", line)
        assert link, line
        assert text.rstrip("\n") in comments[int(link.group(2))]     # the full report, where the line says
    assert moved and moved == list(range(len(moved)))                # the oldest first
    # a later agent run on the same chain keeps the lines and posts no second comment
    again = agents.with_report(new, newest)
    assert again == new and agents.report_moves(new, newest) == []
