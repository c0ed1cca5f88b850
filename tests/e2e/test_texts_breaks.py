"""The texts a fork engineer reads on a chain stopped at a conflict, on the local GitHub: the draft
PR's body (its hunks, its table of upstream commits, its size, the commands it gives) and the
reply that says a resolution was folded. Each test builds the conflict from real git repositories
and reads what GitHub holds."""
from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from bot.cli.main import main as forksync
from bot.github.limits import BODY_LIMIT
from tests.support.github import commit_files, git
from tests.support.sync_world import CONFIG, MIDDLE, bot_comments, chain_world, open_prs, upstream_files, validated_world

_MD = MarkdownIt("commonmark").enable(["table"])


def blocks(body: str) -> list:
    return _MD.parse(body)


def table_rows(body: str) -> list[list[str]]:
    """Every body row of every table in ``body``: the text of its cells, as GitHub shows them."""
    rows, row, in_body = [], [], False
    for t in blocks(body):
        if t.type == "tbody_open":
            in_body = True
        elif t.type == "tbody_close":
            in_body = False
        elif in_body and t.type == "tr_open":
            row = []
        elif in_body and t.type == "tr_close":
            rows.append(row)
        elif in_body and t.type == "inline":
            row.append("".join(c.content for c in t.children or []))
    return rows


@pytest.fixture
async def world(fake_github, tmp_path):
    async with chain_world(fake_github, tmp_path) as w:
        yield w


async def test_a_conflict_in_a_file_with_code_fences_keeps_the_rest_of_the_body_out_of_its_code_block(
        fake_github, tmp_path):
    """A chain stops at a conflict in a Markdown file (Triton's READMEs and docs hold ``` fences).
    The engineer sees: the hunk's own ``` line closes the body's ```diff block, the hunk's text
    renders as Markdown, and the body's closing ``` opens a code block that swallows "How to finish
    it", the commit table and the commands. They should see each hunk in its own code block and
    the instructions as text."""
    doc = "# Guide\n\n" + MIDDLE + "\nend\n"
    async with validated_world(fake_github, tmp_path, CONFIG, files=upstream_files(**{"third_party/amd/guide.md": doc}),
                               fork_commits=(({"third_party/amd/guide.md": doc.replace("\nend", "\n```\nx = 10\n```\n\nend")},
                                              "fork: guide shows x = 10"),)) as (w, up_src, upstream):
        c2 = commit_files(up_src, {"third_party/amd/guide.md": doc.replace("\nend", "\nSet x to 2.\n\nend")},
                          "AMD: guide (#102)")
        git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
        await w.bot.settle()
        [chain] = await open_prs(w.alice)
        body = chain["body"]
        assert f"Stopped at a conflict: upstream `{c2[:12]}`" in body
        tokens = blocks(body)
        n = int(re.search(r"\(content\), (\d+) conflicting hunk", body).group(1))
        fences = [t.content.splitlines() for t in tokens if t.type == "fence"]
        assert len(fences) == n and all(f[0] == "<<<<<<< fork" and f[-1].startswith(">>>>>>> upstream ") for f in fences), \
            [f[:3] for f in fences]
        assert "x = 10" in "\n".join(fences[0]) and "Set x to 2." in "\n".join(fences[0])
        prose = "\n".join(t.content for t in tokens if t.type == "inline")
        assert "How to finish it" in prose and f"forksync resolve chain-{c2[:12]}" in prose


async def test_a_conflict_with_hundreds_of_hunks_keeps_how_to_finish_it_within_githubs_limit(fake_github, tmp_path):
    """A chain stops at a pick that conflicts in hundreds of hunks (an LLVM bump, a reformatted
    file; on the Triton fork a 3-commit chain's body is already 58,136 characters). The engineer
    sees: the body cut at GitHub's 65,536 characters in the middle of the hunks, with "How to
    finish it", the chain's table and the commands gone. They should see the first hunks, how many
    more there are and where to see them, and every instruction."""
    n = 900
    base = "".join(f"int v{i} = 0;\n// a\n// b\n// c\n" for i in range(n))
    async with validated_world(fake_github, tmp_path, CONFIG, files=upstream_files(**{"third_party/amd/big.cpp": base}),
                               fork_commits=(({"third_party/amd/big.cpp": base.replace(" = 0;", " = 1; // fork")},
                                              "fork: tune every v"),)) as (w, up_src, upstream):
        c2 = commit_files(up_src, {"third_party/amd/big.cpp": base.replace(" = 0;", " = 2; // upstream")},
                          "AMD: retune every v (#102)")
        git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
        await w.bot.settle()
        [chain] = await open_prs(w.alice)
        body = chain["body"]
        assert len(body) <= BODY_LIMIT
        assert f"1. `third_party/amd/big.cpp` (content), {n} conflicting hunks" in body
        assert "characters were cut here" not in body
        for must in ("**How to finish it**", f"forksync resolve chain-{c2[:12]}", "/forksync merge", c2[:12]):
            assert must in body, must


async def test_a_stopped_chains_table_does_not_call_the_conflicted_and_later_commits_picked(world):
    """A chain picks c1, stops at c2's conflict, and has c3 after it. The engineer sees all three
    under "### Picked", as if the branch held c2 and c3. They should see c1 picked, c2 as the
    conflict to resolve and c3 as not picked yet."""
    w, up_src, upstream = world
    c1 = commit_files(up_src, {"third_party/amd/y.cpp": "int y = 1;\n"}, "AMD: add y (#101)")
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
    c3 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z = 3;\n"}, "AMD: set z (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [chain] = await open_prs(w.alice)
    assert chain["head"]["ref"] == f"forksync/chain-{c1[:12]}", chain["head"]["ref"]
    body = chain["body"]
    assert f"Stopped at a conflict: upstream `{c2[:12]}`" in body
    rows = {r[1][:12]: r for r in table_rows(body) if len(r) > 1 and r[1][:12] in (c1[:12], c2[:12], c3[:12])}
    assert sorted(rows) == sorted([c1[:12], c2[:12], c3[:12]])
    shown = {sha: " ".join(r).lower() for sha, r in rows.items()}
    assert "picked" in shown[c1[:12]] and "conflict" not in shown[c1[:12]]
    assert "conflict" in shown[c2[:12]] and "picked" not in shown[c2[:12]].replace("not picked", "")
    assert "not picked yet" in shown[c3[:12]]
    headings = [t for t in blocks(body) if t.type == "inline" and t.content == "Picked"]
    assert headings == [], "a table titled Picked lists commits the branch does not hold"


async def test_the_local_commands_of_a_stopped_chain_work_in_a_fresh_clone_of_the_fork(world, tmp_path, monkeypatch):
    """The engineer clones the fork and runs the body's "locally" commands in order. They see
    `forksync resolve chain-…` exit 2: the clone has no local branch forksync/chain-… (only
    origin's). The commands the body gives should get them a worktree at the conflict."""
    w, up_src, upstream = world
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [chain] = await open_prs(w.alice)
    unit = f"chain-{c2[:12]}"
    local = next(line for line in chain["body"].splitlines() if line.startswith("- locally"))
    [inline] = [t for t in blocks(local) if t.type == "inline"]
    spans = [t.content for t in inline.children if t.type == "code_inline"]
    steps = spans[:next(i for i, s in enumerate(spans) if "--continue" in s)]
    assert steps and steps[-1] == f"forksync resolve {unit}", spans
    clone = tmp_path / "engineer"
    git(tmp_path, "clone", "-q", str(w.fork.path), str(clone))
    monkeypatch.chdir(clone)
    for step in steps:
        argv = shlex.split(step)
        if argv[0] == "git":
            subprocess.run(argv, cwd=clone, check=True, capture_output=True)
        else:
            assert argv[0] == "forksync"
            assert forksync(argv[1:]) == 0, step
    marked = Path(clone, ".forksync-resolve", unit, "third_party/amd/x.cpp").read_text()
    assert marked.startswith("<<<<<<< ")


async def test_a_folded_resolutions_reasons_show_as_written_in_their_table_and_ping_no_one(world, tmp_path):
    """The engineer's resolution commit says "Reason: kept the fork's x | took upstream's z, as
    @carol asked in #1". The fold's reply shows a File / Action / Reason table where the `|` ends
    the reason's cell (the rest dropped from the table), pings @carol and links the fork's issue
    #1. They should see the reason as written in its one cell, and no one notified."""
    w, up_src, upstream = world
    commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [chain] = await open_prs(w.alice)
    branch = chain["head"]["ref"]
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    reason = "kept the fork's x | took upstream's z, as @carol asked in #1"
    commit_files(wt, {"third_party/amd/x.cpp": "int x = 12;\n" + MIDDLE + "int z;\n"},
                 f"resolve x\n\nFile: third_party/amd/x.cpp\nReason: {reason}\n")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    [folded] = [c for c in await bot_comments(w, chain["number"]) if "checked and folded" in c]
    rows = [r for r in table_rows(folded) if r and r[0] == "third_party/amd/x.cpp"]
    assert len(rows) == 1 and len(rows[0]) == 3, rows
    shown = rows[0][2].replace("\u200d", "")
    assert shown == reason
    assert "@carol" not in folded and "#1" not in folded
