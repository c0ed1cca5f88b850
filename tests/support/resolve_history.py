"""A small real history with resolved picks, one per kind of rule (for tests/resolve and tests/cli).

One repository holds both histories, as the Triton snapshot does: branch ``upstream`` and the
fork's ``main``, which forked at ``u0``. Each resolved pick is a fork commit whose subject carries
``[RESOLVED]`` and whose body names the upstream commit with ``(cherry picked from commit …)``.
Committer dates grow by one day per commit, so the held-out split is deterministic.

=========  =====================================================================================
pick       what the fork landed
=========  =====================================================================================
p_ahead    ``ahead.txt``: the fork already took ``u9``'s file; picking the older ``u8`` conflicts;
           kept the fork's file (``fork-ahead``)
p_lag      ``lag.txt``: the fork never changed it and lacks ``u1``; ``u2`` conflicts; landed
           upstream's file (``upstream-file``)
p_ci1      ``ci.yml`` deleted by the fork, ``u3`` changes it; kept deleted (first time: nothing
           learned yet, ``fork-deleted`` declines)
p_ci2      ``ci.yml`` again with ``u4``: kept deleted (``fork-deleted`` decides)
p_union    ``reg.h``: both sides add a different line at the end; landed both (``additive-union``)
p_hand     ``core.c``: landed a hand-written line (every strategy is wrong or declines)
p_rerere   ``ops.c``: ``u6`` conflicts with the fork's change; landed a merge of both; then backed
           out ("Revert …", skipped), picked again the same way (``rerere`` decides)
bundle     one commit naming two upstream commits (skipped: a bundle)
=========  =====================================================================================

``doc/fork-only.md`` is the fork's alone (tests delete its blob to play a partial snapshot).
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

_T0 = 1_760_000_000


@dataclass
class History:
    path: Path
    up: dict[str, str] = field(default_factory=dict)      # name → upstream sha
    fork: dict[str, str] = field(default_factory=dict)    # name → fork sha
    clock: int = 0

    def git(self, *args: str, input: str | None = None) -> str:
        self.clock += 1
        stamp = f"@{_T0 + self.clock * 86400} +0000"
        env = dict(os.environ, GIT_AUTHOR_NAME="Dev", GIT_AUTHOR_EMAIL="dev@example.com", GIT_COMMITTER_NAME="Dev",
                   GIT_COMMITTER_EMAIL="dev@example.com", GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp,
                   GIT_CONFIG_NOSYSTEM="1", HOME=str(self.path))
        p = subprocess.run(["git", *args], cwd=self.path, capture_output=True, text=True, env=env, input=input)
        if p.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} failed: {p.stderr}")
        return p.stdout.strip()

    def drop_blob(self, text: str) -> str:
        """Delete the loose object of the blob holding ``text`` (a partial clone's missing blob)."""
        sha = self.git("hash-object", "--stdin", input=text)
        (self.path / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
        return sha

    def commit(self, files: dict[str, str | None], message: str) -> str:
        for name, text in files.items():
            f = self.path / name
            if text is None:
                self.git("rm", "-q", name)
                continue
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
            self.git("add", name)
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def merge(self, rev: str, files: dict[str, str | None], message: str | None = None) -> str:
        """Merge ``rev`` into the checked-out branch as ``git merge --no-ff`` does, resolve the
        conflicts with ``files`` (None: delete) and commit whatever else the work tree holds as is
        (a conflicted file not in ``files`` is committed with git's conflict markers)."""
        try:
            self.git("merge", "--no-ff", "--no-commit", "-q", rev)
        except RuntimeError:
            pass                      # conflicts: resolved below
        for name, text in files.items():
            if text is None:
                self.git("rm", "-q", "--ignore-unmatch", name)
            else:
                (self.path / name).write_text(text)
        self.git("add", "-A", ".")
        self.git("commit", "-q", "-m", message or f"Merge commit '{self.git('rev-parse', rev)}'")
        return self.git("rev-parse", "HEAD")


def build_history(root: Path) -> History:
    h = History(root)
    root.mkdir(parents=True, exist_ok=True)
    h.git("init", "-q", "-b", "upstream")
    base = {
        "lag.txt": "alpha\nbeta\ngamma\n",
        "ci.yml": "on: push\njobs:\n  build: linux\n",
        "reg.h": "#pragma once\nvoid a();\n",
        "core.c": "int core() {\n  return 1;\n}\n",
        "ops.c": "int op() {\n  return k;\n}\n",
        "ahead.txt": "one\ntwo\n",
    }
    h.up["u0"] = h.commit(base, "Initial (#100)")
    h.git("branch", "main")
    h.up["u1"] = h.commit({"lag.txt": "alpha\nbeta one\ngamma\n"}, "Change beta (#101)")
    h.up["u2"] = h.commit({"lag.txt": "alpha\nbeta two\ngamma\n"}, "Change beta again (#102)")
    h.up["u3"] = h.commit({"ci.yml": "on: push\njobs:\n  build: linux-large\n"}, "Bigger CI runner (#103)")
    h.up["u4"] = h.commit({"ci.yml": "on: push\njobs:\n  build: linux-xl\n"}, "Even bigger CI runner (#104)")
    h.up["u5"] = h.commit({"reg.h": "#pragma once\nvoid a();\nvoid b_upstream();\n",
                           "core.c": "int core() {\n  return 2;\n}\n"}, "Add b, core 2 (#105)")
    h.up["u6"] = h.commit({"ops.c": "int op() {\n  return k6;\n}\n"}, "Ops k6 (#106)")
    h.up["u7"] = h.commit({"reg.h": "#pragma once\nvoid a();\nvoid b_upstream();\nvoid c();\n"}, "Add c (#107)")
    h.up["u8"] = h.commit({"ahead.txt": "one\ntwo-a\n"}, "Two a (#108)")
    h.up["u9"] = h.commit({"ahead.txt": "one\ntwo-b\n"}, "Two b (#109)")

    h.git("checkout", "-q", "main")
    h.fork["own"] = h.commit({"ci.yml": None, "reg.h": "#pragma once\nvoid a();\nvoid tlx();\n",
                              "core.c": "int core() {\n  return fork();\n}\n", "ops.c": "int op() {\n  return kf;\n}\n",
                              "doc/fork-only.md": "# the fork's own notes\n"},
                             "Fork: own changes")

    def resolved(name: str, upstream: str, files: dict[str, str | None], subject: str) -> None:
        msg = (f"[Cherry-pick][RESOLVED] '{subject}'\n\nConflict Resolution:\n- File: x\n  Action: y\n  Reason: z\n\n"
               f"(cherry picked from commit {h.up[upstream]})\n")
        h.fork[name] = h.commit(files, msg)

    h.fork["sync_ahead"] = h.commit({"ahead.txt": "one\ntwo-b\n"}, "Take ahead.txt from upstream")
    resolved("p_ahead", "u8", {}, "Two a (#108)")
    resolved("p_lag", "u2", {"lag.txt": "alpha\nbeta two\ngamma\n"}, "Change beta again (#102)")
    resolved("p_ci1", "u3", {}, "Bigger CI runner (#103)")
    resolved("p_ci2", "u4", {}, "Even bigger CI runner (#104)")
    resolved("p_union", "u5", {"reg.h": "#pragma once\nvoid a();\nvoid tlx();\nvoid b_upstream();\n",
                               "core.c": "int core() {\n  return fork() + 2;\n}\n"}, "Add b, core 2 (#105)")
    resolved("p_rerere", "u6", {"ops.c": "int op() {\n  return kf + k6;\n}\n"}, "Ops k6 (#106)")
    h.fork["revert"] = h.commit({"ops.c": "int op() {\n  return kf;\n}\n"},
                                f"Revert \"[Cherry-pick][RESOLVED] 'Ops k6 (#106)'\"\n\nThis reverts commit {h.fork['p_rerere']}.\n")
    resolved("p_rerere2", "u6", {"ops.c": "int op() {\n  return kf + k6;\n}\n"}, "Ops k6 (#106)")
    h.fork["bundle"] = h.commit(
        {}, f"[Cherry-pick][RESOLVED] bundle\n\n(cherry picked from commit {h.up['u1']})\n(cherry picked from commit {h.up['u7']})\n")
    return h
