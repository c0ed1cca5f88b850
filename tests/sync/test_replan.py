"""The App re-plans on every upstream push and fork commit with the same caches as `forksync plan`:
predictions keyed by what they read and symbols per commit, kept in the store of its cache
directory, and the last plan's walk, which a push continues. A re-plan merges only what the
change reaches and gives the plan made from scratch."""
from __future__ import annotations

from bot.config.forksync import load_config
from bot.sync.service import SyncService
from tests.support.github import commit_files, git, make_source_repo


def _functions(n: int, body: str = "return 0") -> str:
    return "".join(f"def f{i}():\n    {body if i == 0 else 'return ' + str(i)}\n\n\n" for i in range(n))


def _world(tmp_path):
    """A working repository as the App keeps it: the fork's ``main`` and upstream's
    ``refs/remotes/upstream/main``; upstream is 4 commits ahead of the fork's base, and the fork
    changed ``f0`` of ``lib.py`` (so upstream's commit there conflicts)."""
    src = tmp_path / "up"
    make_source_repo(src, [{"lib.py": _functions(8), "b.py": _functions(4), "c.txt": "c\n"}])
    base = git(src, "rev-parse", "HEAD")
    for n, (path, text) in enumerate([("lib.py", _functions(8, "return 'upstream'")), ("b.py", _functions(5)),
                                      ("c.txt", "c2\n"), ("d.txt", "d\n")]):
        commit_files(src, {path: text}, f"upstream {n}")
    work = tmp_path / "meta+triton.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(work))
    git(work, "update-ref", "refs/remotes/upstream/main", "refs/heads/main")
    fork = tmp_path / "fork"
    git(tmp_path, "clone", "-q", str(src), str(fork))
    git(fork, "reset", "-q", "--hard", base)
    commit_files(fork, {"lib.py": _functions(8, "return 'fork'")}, "fork: its own f0")
    git(fork, "push", "-q", "-f", str(work), "HEAD:refs/heads/main")
    return src, fork, work


def test_the_app_replans_a_push_and_a_fork_commit_from_its_caches(tmp_path):
    src, fork, work = _world(tmp_path)
    cfg = load_config(None, {})
    svc = SyncService(workdir=tmp_path / "app", git_url=str(tmp_path / "{owner}+{repo}.git"))
    first = svc.compute(work, cfg, "main", "main")
    assert first.plan_work == {"merges": 4, "cached": 0, "symbols": first.plan_work["symbols"]}
    assert [u.kind for u in first.plan.units] == ["chain", "bundle"]

    # an upstream push of two commits: the walk goes on from the last plan's, so only they are
    # predicted (merged); the 4 older commits are not even looked up
    commit_files(src, {"e.txt": "e\n"}, "upstream 5")
    commit_files(src, {"b.py": _functions(6)}, "upstream 6")
    git(src, "push", "-q", str(work), "HEAD:refs/remotes/upstream/main")
    pushed = svc.compute(work, cfg, "main", "main")
    assert (pushed.plan_work["merges"], pushed.plan_work["cached"]) == (2, 0)
    assert len(pushed.plan.units) >= 2
    scratch = SyncService(workdir=tmp_path / "fresh", git_url="").compute(work, cfg, "main", "main")
    assert scratch.plan_work["cached"] == 0 and scratch.plan == pushed.plan

    # a fork commit to a file no pending pick changes: a new base, so the walk starts again, and
    # every answer still holds
    commit_files(fork, {"fork_only.txt": "x\n"}, "fork: a file of its own")
    git(fork, "push", "-q", "-f", str(work), "HEAD:refs/heads/main")
    moved = svc.compute(work, cfg, "main", "main")
    assert (moved.plan_work["merges"], moved.plan_work["cached"]) == (0, 6)
    assert moved.plan == SyncService(workdir=tmp_path / "fresh2", git_url="").compute(work, cfg, "main", "main").plan


def test_a_decoded_analysis_serves_only_the_text_it_was_decoded_from():
    """The App re-reads the same analysis rows at every sync; their decoding is remembered per
    commit, but a row whose text changed (analysed again) is decoded again."""
    from dataclasses import replace

    from bot.model import CommitInfo, FileChange
    from bot.sync.ingest import _decode_cached, _encode

    a = CommitInfo(sha="a" * 40, parents=("b" * 40,), message="x (#1)\n", committer_time=5, pr=1,
                   files=(FileChange(path="p.py", status="M", old_ranges=((1, 2),), new_ranges=((1, 3),),
                                     hunk_headers=("def f():",)),))
    first = _decode_cached(a.sha, _encode(a))
    assert first == a
    assert _decode_cached(a.sha, _encode(a)) is first
    b = replace(a, files=(), missing=("blob 1234 (p.py)",))
    again = _decode_cached(a.sha, _encode(b))
    assert again == b and again is not first


def test_a_stored_analysis_is_asdicts_text_and_decodes_to_the_same_commit():
    """The stored text is what ``json.dumps(asdict(c))`` gives (built without its deep copies), and
    decoding it gives the commit back, a file change's zero-context hunks (or their absence) too."""
    import json
    from dataclasses import asdict

    from bot.model import CommitInfo, FileChange
    from bot.sync.ingest import _decode, _encode

    c = CommitInfo(sha="c" * 40, parents=("d" * 40,), message="y (#2)\n", author_name="A", committer_time=7, pr=2,
                   patch_id="e" * 40, missing=("blob 9 (q)",),
                   files=(FileChange(path="n.py", status="R", old_path="m.py", old_ranges=((1, 8),), new_ranges=((1, 9),),
                                     hunk_headers=("", "def g():"), edits=((4, 0, 5, 1), (7, 2, 8, 2))),
                          FileChange(path="big.bin", status="M")))
    text = _encode(c)
    assert text == json.dumps(asdict(c), separators=(",", ":"))
    assert _decode(text) == c
    assert _decode(text).files[0].edits == ((4, 0, 5, 1), (7, 2, 8, 2)) and _decode(text).files[1].edits is None
