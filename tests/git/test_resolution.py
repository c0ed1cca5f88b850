"""Finishing a conflicted chain: a resolution on top of the conflict commit is checked and folded
into one pick commit (real git repositories)."""
from __future__ import annotations

import os
import subprocess

import pygit2
import pytest

from bot.git import repo as gitio
from bot.git import resolution
from bot.git.apply import COMMITTER
from tests.support.github import GIT_ENV, git

UP_A = "line1\nupstream2\nline3\n"
FORK_A = "line1\nfork2\nline3\n"
MARKED = ("line1\n<<<<<<< fork\nfork2\n||||||| upstream parent\nline2\n=======\nupstream2\n"
          ">>>>>>> upstream\nline3\n")


def commit(path, files: dict[str, str | None], message: str, *, author=("Dev", "dev@example.com"),
           committer: tuple[str, str] | None = None) -> str:
    """Commit ``files`` (None deletes) as ``author``; ``committer`` (default: the tests' person)
    is forksync's :data:`COMMITTER` for the conflict commits apply would write."""
    for name, text in files.items():
        f = path / name
        if text is None:
            git(path, "rm", "-q", name)
            continue
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
        git(path, "add", name)
    argv = ["git", "commit", "-q", f"--author={author[0]} <{author[1]}>", "-m", message]
    who = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]} if committer else {}
    env = {**os.environ, **GIT_ENV, **who}
    env.setdefault("HOME", str(path))
    subprocess.run(argv, cwd=path, check=True, capture_output=True, env=env)
    return git(path, "rev-parse", "HEAD")


@pytest.fixture
def chain(tmp_path):
    """(repo path, fork tip, upstream sha, conflict commit) — the chain's conflict commit is the
    branch tip, as apply leaves it."""
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    commit(r, {"a.txt": "line1\nline2\nline3\n", "b.txt": "b\n"}, "base")
    git(r, "checkout", "-q", "-b", "up")
    up = commit(r, {"a.txt": UP_A}, "Upstream: change line 2 (#77)", author=("Up Dev", "up@example.com"))
    git(r, "checkout", "-q", "main")
    fork = commit(r, {"a.txt": FORK_A}, "fork: own line 2")
    git(r, "checkout", "-q", "-b", "forksync/chain-x")
    c = commit(r, {"a.txt": MARKED}, f"[CONFLICT] Upstream: change line 2\n\nForksync-Conflict: {up}\nForksync-Unit: chain-x\n",
               author=("Up Dev", "up@example.com"), committer=COMMITTER)
    return r, fork, up, c


def test_conflict_commit_is_found_with_its_conflicted_files(chain):
    r, fork, up, c = chain
    stop = resolution.find_stop(str(r), fork, c)
    assert stop == resolution.ConflictStop(c, up, fork, (), ("a.txt",))
    chk = resolution.check(str(r), fork, c)
    assert not chk.ok and chk.problems == (f"nothing was pushed on top of the conflict commit `{c[:12]}` yet",)


def test_a_resolution_is_folded_into_one_pick_commit(chain):
    r, fork, up, c = chain
    head = commit(r, {"a.txt": "line1\nfork2 and upstream2\nline3\n"},
                  "resolve\n\nFile: a.txt\nReason: keeps the fork's tuning and upstream's fix\n",
                  author=("Alice", "alice@example.com"))
    chk = resolution.check(str(r), fork, head)
    assert chk.ok and chk.problems == () and chk.stop.after == (head,)
    repo = pygit2.Repository(str(r / ".git"))
    info = gitio.commit_info(repo, up)
    folded = resolution.fold(str(r), chk, info, unit_id="chain-x", when=1_800_000_000)
    new = repo[folded.commit]
    assert [str(p) for p in new.parent_ids] == [fork]
    assert new.tree_id == repo[head].tree_id
    assert (new.author.name, new.author.email, new.author.time) == ("Up Dev", "up@example.com", info.author_time)
    assert (new.committer.name, new.committer.time) == ("forksync", 1_800_000_000)
    assert new.message == (
        "[RESOLVED] Upstream: change line 2 (#77)\n\n"
        "Conflict Resolution:\n"
        "- File: a.txt\n"
        "  Action: merged by hand\n"
        "  Reason: keeps the fork's tuning and upstream's fix\n\n"
        f"Upstream-Commit: {up}\n"
        "Resolved-by: Alice <alice@example.com>\n"
        "Forksync-Unit: chain-x\n")
    assert folded.files == (resolution.FileOutcome("a.txt", resolution.BY_HAND,
                                                   "keeps the fork's tuning and upstream's fix"),)


def test_taking_upstreams_file_is_named_so_and_a_default_reason_names_the_person(chain):
    r, fork, up, c = chain
    head = commit(r, {"a.txt": UP_A}, "take upstream", author=("Bob", "bob@example.com"))
    chk = resolution.check(str(r), fork, head)
    repo = pygit2.Repository(str(r / ".git"))
    folded = resolution.fold(str(r), chk, gitio.commit_info(repo, up), unit_id="chain-x", when=1)
    assert folded.files == (resolution.FileOutcome("a.txt", resolution.TOOK_UPSTREAM,
                                                   f"resolved by Bob <bob@example.com> in {head[:12]}"),)


@pytest.mark.parametrize("files, expect", [
    # markers left: never folded
    ({"a.txt": MARKED.replace("fork2\n", "fork2 edited\n")}, "conflict markers remain in `a.txt`"),
    # a longer (9-character) marker is a marker too
    ({"a.txt": "line1\n<<<<<<<<< x\nfork2\n=========\nup\n>>>>>>>>> y\nline3\n"}, "conflict markers remain in `a.txt`"),
    # a file the conflict did not need
    ({"a.txt": UP_A, "b.txt": "b changed\n"},
     "the resolution changes files the conflict did not need: `b.txt` — put other changes in a PR of their own"),
])
def test_a_resolution_with_problems_is_not_folded(chain, files, expect):
    r, fork, up, c = chain
    head = commit(r, files, "attempt")
    chk = resolution.check(str(r), fork, head)
    assert not chk.ok and expect in chk.problems
    with pytest.raises(ValueError, match="not folded"):
        resolution.fold(str(r), chk, gitio.commit_info(pygit2.Repository(str(r / ".git")), up), unit_id="chain-x")


def test_a_merge_on_top_of_the_conflict_commit_waits(chain):
    r, fork, up, c = chain
    git(r, "checkout", "-q", "-b", "side", fork)
    side = commit(r, {"c.txt": "c\n"}, "side")
    git(r, "checkout", "-q", "forksync/chain-x")
    git(r, "-c", "user.name=M", "-c", "user.email=m@example.com", "merge", "-q", "--no-edit", side)
    head = git(r, "rev-parse", "HEAD")
    chk = resolution.check(str(r), fork, head)
    assert any(p.startswith("merge commits on top of the conflict commit") for p in chk.problems)


def test_a_persons_amend_of_the_conflict_commit_is_no_conflict_commit(chain):
    """``git commit --amend`` keeps the conflict commit's message, trailer included, but the commit
    is the person's now: it is never found as a conflict commit, so nothing on it is folded."""
    r, fork, up, c = chain
    (r / "a.txt").write_text(UP_A)
    (r / "b.txt").write_text("b, changed along the way\n")
    git(r, "commit", "-q", "-a", "--amend", "--no-edit")
    amended = git(r, "rev-parse", "HEAD")
    head = commit(r, {"a.txt": UP_A.replace("line3", "line 3")}, "touch up", author=("Alice", "alice@example.com"))
    assert f"Forksync-Conflict: {up}" in git(r, "log", "-1", "--format=%B", amended)
    assert resolution.find_stop(str(r), fork, head) is None
    chk = resolution.check(str(r), fork, head)
    assert chk.stop is None and not chk.ok
    # the conflict commit forksync wrote (still in the repository) is found as ever
    assert resolution.find_stop(str(r), fork, c) == resolution.ConflictStop(c, up, fork, (), ("a.txt",))


def test_no_conflict_commit(chain):
    r, fork, up, c = chain
    git(r, "checkout", "-q", "main")
    chk = resolution.check(str(r), fork, fork)
    assert chk.stop is None and not chk.ok


@pytest.mark.parametrize("message, expect", [
    ("x\n\nFile: a.txt\nAction: merged\nReason: both fixes\n", {"a.txt": "both fixes"}),
    ("x\n\n- File: `lib/A.cpp`\n  Reason: fork's layout wins\n- File: b.py\n  Reason: upstream\n",
     {"lib/A.cpp": "fork's layout wins", "b.py": "upstream"}),
    ("Reason: without a file\n", {}),
])
def test_reasons_in_messages(message, expect):
    assert resolution.reasons_in(message) == expect


@pytest.mark.parametrize("ids, action", [
    (("o", "t", None), resolution.DELETED), (("o", "t", "t"), resolution.TOOK_UPSTREAM),
    (("o", "t", "o"), resolution.KEPT_FORK), (("o", "t", "x"), resolution.BY_HAND), ((None, "t", "t"), resolution.TOOK_UPSTREAM),
])
def test_outcome(ids, action):
    assert resolution.outcome(ids) == action


BODY = "".join(f"line {i}\n" for i in range(30))


@pytest.fixture
def renamed(tmp_path):
    """Upstream renames ``a.py`` to ``b.py`` and edits line 5, which the fork edited too: git
    stops with a content conflict at the new path (``b.py``, renamed from ``a.py``). The conflict
    commit is apply's own. (repo path, fork tip, upstream sha, conflict commit)."""
    from bot.git import apply as apply_mod
    from bot.model import PlanItem, Unit
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    commit(r, {"a.py": BODY}, "base")
    git(r, "checkout", "-q", "-b", "up")
    git(r, "mv", "a.py", "b.py")
    up = commit(r, {"b.py": BODY.replace("line 5\n", "upstream 5\n")}, "Upstream: move a to b (#9)",
                author=("Up Dev", "up@example.com"))
    git(r, "checkout", "-q", "main")
    fork = commit(r, {"a.py": BODY.replace("line 5\n", "fork 5\n")}, "fork: own line 5")
    repo = pygit2.Repository(str(r / ".git"))
    res = apply_mod.apply_unit(str(r / ".git"), Unit("chain-x", "chain", (PlanItem(up, "chain"),)), base=fork,
                               commits={up: gitio.commit_info(repo, up)})
    assert res.conflict_files == ("b.py",)
    git(r, "checkout", "-q", "forksync/chain-x")
    return r, fork, up, res.conflict_commit


def test_a_conflict_in_a_file_upstream_renamed_is_resolved_at_its_new_path(renamed):
    # the person resolves the file where git left the markers, the path the PR body names
    r, fork, up, c = renamed
    stop = resolution.find_stop(str(r), fork, c)
    assert stop.files == ("b.py",)
    head = commit(r, {"b.py": BODY.replace("line 5\n", "fork 5 and upstream 5\n")}, "resolve",
                  author=("Alice", "alice@example.com"))
    chk = resolution.check(str(r), fork, head)
    assert chk.ok, chk.problems
    folded = resolution.fold(str(r), chk, gitio.commit_info(pygit2.Repository(str(r / ".git")), up),
                             unit_id="chain-x", when=1)
    assert folded.files == (resolution.FileOutcome("b.py", resolution.BY_HAND,
                                                   f"resolved by Alice <alice@example.com> in {head[:12]}"),)


def test_a_renamed_file_resolved_with_the_forks_text_is_named_kept_fork(renamed):
    r, fork, up, c = renamed
    head = commit(r, {"b.py": BODY.replace("line 5\n", "fork 5\n")}, "keep ours", author=("Alice", "alice@example.com"))
    chk = resolution.check(str(r), fork, head)
    folded = resolution.fold(str(r), chk, gitio.commit_info(pygit2.Repository(str(r / ".git")), up),
                             unit_id="chain-x", when=1)
    assert [(f.path, f.action) for f in folded.files] == [("b.py", resolution.KEPT_FORK)]


def test_the_folded_pick_keeps_the_upstream_authors_time_zone(tmp_path):
    # every pick keeps the upstream author's date *and zone* (apply does); the fold must too
    r = tmp_path / "z"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    commit(r, {"a.txt": "line1\nline2\nline3\n"}, "base")
    git(r, "checkout", "-q", "-b", "up")
    (r / "a.txt").write_text(UP_A)
    git(r, "commit", "-q", "-a", "--author=Up Dev <up@example.com>", "--date=2024-03-01T10:00:00+05:30", "-m", "Upstream: z")
    up = git(r, "rev-parse", "HEAD")
    git(r, "checkout", "-q", "main")
    fork = commit(r, {"a.txt": FORK_A}, "fork: own line 2")
    git(r, "checkout", "-q", "-b", "forksync/chain-x")
    commit(r, {"a.txt": MARKED}, f"[CONFLICT] z\n\nForksync-Conflict: {up}\n", author=("Up Dev", "up@example.com"), committer=COMMITTER)
    head = commit(r, {"a.txt": UP_A}, "take upstream", author=("Alice", "alice@example.com"))
    repo = pygit2.Repository(str(r / ".git"))
    folded = resolution.fold(str(r), resolution.check(str(r), fork, head), gitio.commit_info(repo, up),
                             unit_id="chain-x", when=1)
    new = repo[folded.commit]
    assert (new.author.time, new.author.offset) == (repo[up].author.time, 330)


def test_a_conflicted_file_no_resolution_commit_changed_is_not_credited_to_the_person(tmp_path):
    # a binary conflict has no markers: the conflict commit keeps the fork's file, and a person
    # resolving only the text file did not decide it — the File / Action / Reason block says so
    from bot.git import apply as apply_mod
    from bot.model import PlanItem, Unit
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    commit(r, {"a.txt": "line1\nline2\nline3\n"}, "base")
    (r / "c.bin").write_bytes(b"\x00base")
    git(r, "add", "c.bin")
    git(r, "commit", "-q", "-m", "bin")
    git(r, "checkout", "-q", "-b", "up")
    (r / "c.bin").write_bytes(b"\x00upstream")
    git(r, "add", "c.bin")
    up = commit(r, {"a.txt": UP_A}, "Upstream: both", author=("Up Dev", "up@example.com"))
    git(r, "checkout", "-q", "main")
    (r / "c.bin").write_bytes(b"\x00fork")
    git(r, "add", "c.bin")
    fork = commit(r, {"a.txt": FORK_A}, "fork: both")
    repo = pygit2.Repository(str(r / ".git"))
    res = apply_mod.apply_unit(str(r / ".git"), Unit("chain-x", "chain", (PlanItem(up, "chain"),)), base=fork,
                               commits={up: gitio.commit_info(repo, up)})
    assert res.conflict_files == ("a.txt", "c.bin")
    git(r, "checkout", "-q", "-f", "forksync/chain-x")
    head = commit(r, {"a.txt": UP_A}, "take upstream's a", author=("Alice", "alice@example.com"))
    chk = resolution.check(str(r), fork, head)
    folded = resolution.fold(str(r), chk, gitio.commit_info(repo, up), unit_id="chain-x", when=1)
    a, c = folded.files
    assert a == resolution.FileOutcome("a.txt", resolution.TOOK_UPSTREAM, f"resolved by Alice <alice@example.com> in {head[:12]}")
    assert c.path == "c.bin" and c.action == resolution.KEPT_FORK
    assert "Alice" not in c.reason and "no resolution commit changed it" in c.reason


def test_a_person_finishing_after_the_rules_names_the_rules_not_forksync_as_a_person(chain):
    # the rules decided b.txt (their commit on the conflict commit), a person resolved a.txt:
    # Resolved-by names the rules as the rules' own folds do, never forksync's identity as a person
    from types import SimpleNamespace

    from bot.templating import render
    r, fork, up, c = chain
    git(r, "checkout", "-q", "main")
    git(r, "checkout", "-q", "-b", "up2", fork + "~1")
    up2 = commit(r, {"a.txt": UP_A, "b.txt": "b up\n"}, "Upstream: two files", author=("Up Dev", "up@example.com"))
    git(r, "checkout", "-q", "forksync/chain-x")
    git(r, "reset", "-q", "--hard", fork)
    commit(r, {"b.txt": "b fork\n"}, "fork's b, a clean pick before the conflict")
    commit(r, {"a.txt": MARKED, "b.txt": "<<<<<<< fork\nb fork\n=======\nb up\n>>>>>>> upstream\n"},
           f"[CONFLICT] two\n\nForksync-Conflict: {up2}\n", author=("Up Dev", "up@example.com"), committer=COMMITTER)
    msg = render("commit/rule_resolution.txt.j2", upstream_sha=up2, total=2,
                 decided=[("b.txt", SimpleNamespace(action="kept the fork's file", reason="fork keeps b", rule="fork-keeps"))])
    repo = pygit2.Repository(str(r / ".git"))
    idx = pygit2.Index()
    idx.read_tree(repo.head.peel(pygit2.Commit).tree)
    idx.add(pygit2.IndexEntry("b.txt", repo.create_blob(b"b fork\n"), pygit2.enums.FileMode.BLOB))
    bot = pygit2.Signature("forksync", "forksync@users.noreply.github.com", 1, 0)
    rules = repo.create_commit(None, bot, bot, msg, idx.write_tree(repo), [repo.head.target])
    git(r, "reset", "-q", "--hard", str(rules))
    head = commit(r, {"a.txt": UP_A}, "take upstream's a", author=("Alice", "alice@example.com"))
    chk = resolution.check(str(r), fork, head)
    assert chk.ok, chk.problems
    folded = resolution.fold(str(r), chk, gitio.commit_info(repo, up2), unit_id="chain-x", when=1)
    assert folded.resolved_by == ("forksync rules (fork-keeps)", "Alice <alice@example.com>")


@pytest.mark.parametrize("rebuilt_files, keeps", [
    # the person's h = 2 where merging the fork conflicts, the fork's new file and the chain's x as merged
    ({"h.txt": "h = 2\n", "x.txt": "x = 1\n", "e.txt": "e\n"}, True),
    # the rebuild says upstream's h = 2 but the person resolved h = 3: their resolution would be lost
    ({"h.txt": "h = 2\n", "x.txt": "x = 1\n", "e.txt": "e\n", "_person": "h = 3\n"}, False),
    # the rebuild lost the fork's new file
    ({"h.txt": "h = 2\n", "x.txt": "x = 1\n", "e.txt": None}, False),
    # the rebuild adds a file neither side has
    ({"h.txt": "h = 2\n", "x.txt": "x = 1\n", "e.txt": "e\n", "y.txt": "y\n"}, False),
])
def test_a_rebuilt_chain_is_taken_only_when_it_keeps_the_resolution_and_the_forks_commits(tmp_path, rebuilt_files, keeps):
    """``rebuild_keeps``: the fork gained h = 1 and e.txt after the chain branched; the chain (x = 1,
    and h resolved by a person) rebuilt on the new fork tip must equal the branch with the fork
    merged in, the person's side where that merge conflicts (h.txt)."""
    files = dict(rebuilt_files)
    person = files.pop("_person", "h = 2\n")
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    commit(r, {"h.txt": "h = 0\n", "x.txt": "x = 0\n"}, "base")
    git(r, "checkout", "-q", "-b", "chain")
    old = commit(r, {"x.txt": "x = 1\n", "h.txt": person}, "chain: x, and h resolved")
    git(r, "checkout", "-q", "main")
    fork = commit(r, {"h.txt": "h = 1\n", "e.txt": "e\n"}, "fork: h and e")
    git(r, "checkout", "-q", "-b", "rebuilt")
    new = commit(r, files, "chain again")
    assert resolution.rebuild_keeps(str(r / ".git"), old, fork, new) is keeps


def test_merge_conflicts_names_the_paths_a_merge_of_the_fork_needs_a_person_for(tmp_path):
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    commit(r, {"h.txt": "h = 0\n", "x.txt": "x = 0\n"}, "base")
    git(r, "checkout", "-q", "-b", "chain")
    chain = commit(r, {"x.txt": "x = 1\n", "h.txt": "h = 2\n"}, "chain")
    git(r, "checkout", "-q", "main")
    clean = commit(r, {"e.txt": "e\n"}, "fork: e")
    assert resolution.merge_conflicts(str(r / ".git"), chain, clean) == ()
    fork = commit(r, {"h.txt": "h = 1\n"}, "fork: h")
    assert resolution.merge_conflicts(str(r / ".git"), chain, fork) == ("h.txt",)
