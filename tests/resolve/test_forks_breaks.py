"""The replay and the rules on what other forks hold: files without a final newline, shallow
clones, paths that are not UTF-8."""
from __future__ import annotations

import json
import os

import pygit2

from bot.config.forksync import parse_config
from bot.config.merge_file import diff3_text
from bot.resolve.bench import score, to_json
from bot.resolve.replay import find_resolved_merges, replay
from bot.resolve.rules import FileConflict, Memory, baseline, resolve_file
from tests.support.merge_history import build_merge_history
from tests.support.resolve_history import History


def test_a_conflict_at_the_last_line_without_a_newline_is_answered_as_a_person_removing_the_markers():
    """A file that ends without a newline and conflicts on its last line. The per-hunk answers
    (the baselines, the hunk rules, rerere) keep the newline git's conflict block gives the
    side's last line: ``git merge-file --theirs`` would leave it out, but a person resolving the
    block deletes the marker lines and lands the newline — ROCm's ``ce8adb92bd`` landed
    ``.gitignore`` and ``TritonGPUToLLVM.cpp`` so, which ``ours-hunks`` / ``theirs-hunks`` and
    ``line-merge`` get exact only this way (docs/resolve.md, "Score")."""
    base, ours, theirs = "a\nb\nx", "a\nb\nfork", "a\nb\nup"
    c = FileConflict("VERSION", base, ours, theirs, diff3_text(base, ours, theirs))
    assert [baseline(n, c) for n in ("ours-hunks", "theirs-hunks", "union")] == [
        "a\nb\nfork\n", "a\nb\nup\n", "a\nb\nfork\nup\n"]
    # rerere: the fork resolved this conflict before by landing "a\nb\nfork up"; met again, that file
    memory = Memory().learn(c, "a\nb\nfork up")
    assert getattr(resolve_file(memory.apply(c), ["rerere"]), "text", None) == "a\nb\nfork up"


def test_a_merge_whose_base_lies_beyond_a_shallow_clone_says_so(tmp_path):
    """A fork cloned with ``--depth`` (CI checkouts usually are): a user sees a merge of upstream
    skipped as "the parents have no common history" — false, they share upstream's history; the
    clone only stops before it. They should read that the merge base lies beyond the shallow
    clone's history and how to deepen it."""
    h = build_merge_history(tmp_path / "repo")
    (h.path / ".git" / "shallow").write_text(f"{h.up['u1']}\n{h.fork['f1']}\n")     # the clone's depth ends there
    repo = pygit2.Repository(str(h.path))
    _, skipped = find_resolved_merges(repo, h.git("rev-parse", "main"), h.git("rev-parse", "upstream"))
    why = {s.what: s.why for s in skipped}[h.fork["m1"]]
    assert why == ("the merge base lies beyond this shallow clone's history: deepen it "
                   "(git fetch --deepen=N, or --unshallow)")


def test_a_path_that_is_not_utf8_is_valid_json(tmp_path):
    """A fork with a file whose name is not UTF-8 (latin-1 names exist in old test data). A user
    sees ``--json`` write the path as a lone surrogate escape ("caf\\udce9.txt"): strict JSON
    readers (serde_json, Go's decoder replaces it, jq prints U+FFFD) reject or garble it and the
    path cannot be mapped back to the file. They should get valid UTF-8 JSON naming the byte, as
    ``caf\\xe9.txt``."""
    h = History(tmp_path / "repo")
    h.path.mkdir(parents=True)
    h.git("init", "-q", "-b", "upstream")
    name = os.fsdecode(b"caf\xe9.txt")
    lines = [f"line {i}\n" for i in range(10)]

    def text(**changed):
        return "".join(changed.get(f"l{i}", line) for i, line in enumerate(lines))
    h.up["u0"] = h.commit({name: text()}, "Initial (#1)")
    h.git("branch", "main")
    h.up["u1"] = h.commit({name: text(l3="up\n")}, "Upstream (#2)")
    h.git("checkout", "-q", "main")
    h.fork["f1"] = h.commit({name: text(l3="fork\n")}, "Fork")
    (h.path / name).write_text(text(l3="fork up\n"))      # the merge commit, resolved by hand
    h.git("add", "-A", ".")
    tree = h.git("write-tree")
    merge = h.git("commit-tree", tree, "-p", h.fork["f1"], "-p", h.up["u1"], "-m", f"Merge commit '{h.up['u1']}'")
    h.git("update-ref", "refs/heads/main", merge)
    repo = pygit2.Repository(str(h.path))
    merges, skipped = find_resolved_merges(repo, merge, h.up["u1"])
    reps = replay(repo, merges, parse_config({}), h.up["u1"])
    doc = to_json(score(reps, ["rerere"]), chain=["rerere"], skipped=skipped)
    out = json.dumps(doc)
    back = json.loads(out)
    json.dumps(back, ensure_ascii=False).encode("utf-8")           # no lone surrogate anywhere
    assert [f["path"] for f in back["files"]] == ["caf\\xe9.txt"]
