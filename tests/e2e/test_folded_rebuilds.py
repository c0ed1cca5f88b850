"""A chain a person resolved by hand, their resolution folded into forksync's pick, meets the two
rebuilds that build a unit again from scratch: the status issue's retry box, and the rebuild after
the fork's history was rewritten (force push). Either would pick the resolved commit afresh, back
at its conflict, and the person's resolution would leave the PR (kept only under
``refs/forksync/resolutions/``): the branch is left as it is, and the PR says why."""
from __future__ import annotations

from tests.e2e.test_conflict_owed import stacked_world  # noqa: F401
from tests.e2e.test_dependency_lands import resolved_by_hand
from tests.support.e2e import status_issue
from tests.support.github import commit_files, git
from tests.support.sync_world import fork_git


async def said_on(w, number: int) -> str:
    return "\n".join([c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")
                      if c["user"]["login"] == "forksync[bot]"])


async def test_retry_on_a_chain_a_person_resolved_keeps_their_resolution_on_the_branch(stacked_world, tmp_path):  # noqa: F811
    """alice resolved the chain's second pick by hand (h = 3, her own); then someone ticks the
    chain's retry box on the status issue. The branch stays as it was, with her resolution, and
    the PR says why it was not rebuilt."""
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path, h="h = 3\n")
    branch = chain["head"]["ref"]
    unit = branch.removeprefix("forksync/")
    held = (await w.pr(chain["number"]))["head"]["sha"]
    assert fork_git(w, "show", f"{branch}:python/h.py") == "h = 3"
    [issue] = await status_issue(w.alice)
    box = f"- [ ] <!-- retry:{unit} -->"
    assert box in issue["body"], issue["body"]
    await w.alice.patch(f"/repos/meta/triton/issues/{issue['number']}",
                        data={"body": issue["body"].replace(box, box.replace("[ ]", "[x]"))})
    await w.bot.settle()
    assert w.bot.deliveries("dead") == []
    pr = await w.pr(chain["number"])
    assert pr["state"] == "open"
    assert fork_git(w, "show", f"{branch}:python/h.py") == "h = 3", fork_git(w, "log", "--format=%h %s", "-3", branch)
    assert pr["head"]["sha"] == held
    said = await said_on(w, chain["number"])
    assert "conflict resolution made by hand" in said and "retry" in said, said


async def test_a_rewritten_fork_under_a_chain_a_person_resolved_keeps_their_resolution_on_the_branch(stacked_world, tmp_path):  # noqa: F811
    """alice resolved the chain's second pick by hand (h = 3); then the fork's owners rewrite
    `main` (force push). The branch is not rebuilt over her resolution: it stays as it was,
    blocked (the gate will not merge the commits the force push removed back), and the PR says
    the branch folds a resolution made by hand."""
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path, h="h = 3\n")
    branch = chain["head"]["ref"]
    held = (await w.pr(chain["number"]))["head"]["sha"]
    wt = tmp_path / "forkwt"
    git(tmp_path, "clone", "-q", str(w.fork.path), str(wt))
    bad = git(wt, "rev-parse", "HEAD").strip()
    git(wt, "commit", "-q", "--amend", "-m", "fork: the same tree, reworded")
    git(wt, "push", "-q", "-f", "origin", "HEAD:main")
    await w.bot.settle()
    commit_files(up_src, {"python/e2.py": "e = 6\n"}, "Add e2 (#106)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    assert w.bot.deliveries("dead") == []
    pr = await w.pr(chain["number"])
    assert pr["state"] == "open"
    assert fork_git(w, "show", f"{branch}:python/h.py") == "h = 3", fork_git(w, "log", "--format=%h %s", "-3", branch)
    assert pr["head"]["sha"] == held
    said = await said_on(w, chain["number"])
    assert "the fork's history was rewritten under it" in said and "made by hand" in said, said
    assert bad[:12] not in fork_git(w, "log", "--format=%H", "main")
    # no commit of hers is on the branch: the hint (the PR's comment, the status issue) says where
    # her resolution is — forksync's pick naming her in `Resolved-by:` — not to rebase her commits
    [issue] = await status_issue(w.alice)
    for text in (said, issue["body"]):
        assert "a person's commits are on" not in text, text
        assert "`Resolved-by:`" in text and f"`{branch}`" in text, text


async def test_a_rewritten_fork_under_a_folded_resolution_and_a_persons_commit_names_both_in_the_hint(stacked_world, tmp_path):  # noqa: F811
    """alice resolved the chain by hand (folded into forksync's pick) and then pushed a commit of
    her own on top; the fork's owners rewrite `main`. The branch is blocked, and what it says to
    do names both what a rebase must carry: her commit, and the pick whose `Resolved-by:` names her
    (a rebuild would lose that one too)."""
    w, up_src, upstream = stacked_world
    b0, c1, c2, bundle, chain = await resolved_by_hand(w, up_src, upstream, tmp_path, h="h = 3\n")
    branch = chain["head"]["ref"]
    wt = tmp_path / "alice2"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    commit_files(wt, {"python/notes.py": "# h is 3 until the allocator lands\n"}, "a note on h")
    git(wt, "push", "-q", "origin", "HEAD")
    await w.bot.settle()
    held = (await w.pr(chain["number"]))["head"]["sha"]
    fw = tmp_path / "forkwt"
    git(tmp_path, "clone", "-q", str(w.fork.path), str(fw))
    git(fw, "commit", "-q", "--amend", "-m", "fork: the same tree, reworded")
    git(fw, "push", "-q", "-f", "origin", "HEAD:main")
    await w.bot.settle()
    commit_files(up_src, {"python/e2.py": "e = 6\n"}, "Add e2 (#106)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    assert w.bot.deliveries("dead") == []
    pr = await w.pr(chain["number"])
    assert pr["state"] == "open" and pr["head"]["sha"] == held
    said = await said_on(w, chain["number"])
    assert "the fork's history was rewritten under it" in said, said
    blocked = said[said.index("<!-- forksync:blocked"):]     # the fold's own comment names `Resolved-by:` too
    [issue] = await status_issue(w.alice)
    for text in (blocked, issue["body"]):
        # her commit is to be rebased, and with it the pick folding her resolution
        assert "a person's commits are on" in text and f"`{branch}`" in text, text
        assert "`Resolved-by:`" in text and "that pick included" in text, text
