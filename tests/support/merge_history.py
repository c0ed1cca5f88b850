"""A small real history of a fork that syncs by merging upstream (for tests/resolve and tests/cli).

One repository, branches ``upstream`` and the fork's ``main`` (forked at ``u0``); committer dates
grow by one day per git command, so the held-out split is deterministic. Each merge of upstream
is ``git merge --no-ff`` of an upstream commit, subject ``Merge commit '<sha>'``.

======  ========================================================================================
merge   what the fork committed
======  ========================================================================================
m1      on a pull request's branch (``pr1``, landed on main by the merge ``land1``): ``u1`` changes
        ``ci.yml``, which the fork deleted — kept deleted (first time: ``fork-deleted`` declines);
        ``core.c`` line 2 changed on both sides — a hand-written line
m2      ``u2``: ``ci.yml`` changed again — kept deleted (``fork-deleted`` decides); ``notes.md``
        line 2 on both sides — a hand-written line
m3      ``u3``: clean
m3b     ``s1``, a commit on upstream's side branch ``side``: clean
m4      ``umerge``, upstream's own merge of ``side``: merge bases ``u3`` and ``s1`` (criss-cross):
        skipped
m5      ``u4``: ``notes.md`` committed with git's conflict markers (flagged); ``ahead.txt``: the
        fork already has ``u5``'s file, upstream's later one — kept (``fork-ahead`` decides)
======  ========================================================================================
"""
from __future__ import annotations

from pathlib import Path

from tests.support.resolve_history import History


def build_merge_history(root: Path) -> History:
    h = History(root)
    root.mkdir(parents=True, exist_ok=True)
    h.git("init", "-q", "-b", "upstream")
    h.up["u0"] = h.commit({"ci.yml": "on: push\njobs:\n  build: linux\n", "core.c": "int a;\nint b = 0;\nint c;\n",
                           "notes.md": "one\ntwo\nthree\n", "ahead.txt": "v1\n"}, "Initial (#1)")
    h.git("branch", "main")
    h.up["u1"] = h.commit({"ci.yml": "on: push\njobs:\n  build: linux-22\n", "core.c": "int a;\nint b = 2;\nint c;\n"},
                          "CI on 22, b = 2 (#2)")
    h.git("checkout", "-q", "main")
    h.fork["f1"] = h.commit({"ci.yml": None, "core.c": "int a;\nint b = 1; // xpu\nint c;\n", "xpu.c": "xpu\n"},
                            "Fork: own changes")
    h.git("checkout", "-q", "-b", "pr1")
    h.fork["m1"] = h.merge(h.up["u1"], {"ci.yml": None, "core.c": "int a;\nint b = 2; // xpu\nint c;\n"})
    h.git("checkout", "-q", "main")
    h.fork["land1"] = h.merge("pr1", {}, "Merge pull request #1 from pr1")

    h.git("checkout", "-q", "upstream")
    h.up["u2"] = h.commit({"ci.yml": "on: push\njobs:\n  build: linux-24\n", "notes.md": "one\ntwo (upstream)\nthree\n"},
                          "CI on 24, notes (#3)")
    h.up["u3"] = h.commit({"u3.txt": "u3\n"}, "Add u3 (#4)")
    h.git("checkout", "-q", "-b", "side", h.up["u2"])
    h.up["s1"] = h.commit({"s1.txt": "s1\n"}, "Add s1 (#5)")
    h.git("checkout", "-q", "upstream")
    h.up["umerge"] = h.merge("side", {}, "Merge branch 'side'")
    h.up["u4"] = h.commit({"notes.md": "one\ntwo (upstream)\nthree (upstream)\n", "ahead.txt": "v2\n"}, "Notes, v2 (#6)")
    h.up["u5"] = h.commit({"ahead.txt": "v3\n"}, "v3 (#7)")

    h.git("checkout", "-q", "main")
    h.fork["f2"] = h.commit({"notes.md": "one\ntwo (xpu)\nthree\n"}, "Fork: notes")
    h.fork["m2"] = h.merge(h.up["u2"], {"ci.yml": None, "notes.md": "one\ntwo (xpu, upstream)\nthree\n"})
    h.fork["m3"] = h.merge(h.up["u3"], {})
    h.fork["m3b"] = h.merge(h.up["s1"], {})
    h.fork["m4"] = h.merge(h.up["umerge"], {})
    h.fork["f3"] = h.commit({"notes.md": "one\ntwo (xpu, upstream)\nthree (xpu)\n", "ahead.txt": "v3\n"},
                            "Fork: notes, take v3 from upstream")
    h.fork["m5"] = h.merge(h.up["u4"], {"ahead.txt": "v3\n"})
    return h
