"""Real bare git repositories behind the fake's repositories.

Reads go through pygit2 (in process, fast); merges run the git CLI in a temporary worktree, so
``merge``, ``squash`` and ``rebase`` produce the same commits git would (GitHub's rebase-merge
re-commits each PR commit on the base with the original author and GitHub as committer).
A conflict raises :class:`MergeConflict`; the route answers 405 like GitHub.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pygit2

GITHUB_COMMITTER = ("GitHub", "noreply@github.com")


class MergeConflict(Exception):
    """The head does not apply cleanly onto the base (GitHub: 405 "Pull Request is not mergeable")."""


@dataclass(frozen=True)
class CommitData:
    sha: str
    tree: str
    parents: tuple[str, ...]
    message: str
    author_name: str
    author_email: str
    author_time: int
    author_offset: int
    committer_name: str
    committer_email: str
    committer_time: int
    committer_offset: int


def _env(committer: tuple[str, str] | None = None, when: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    env.setdefault("HOME", tempfile.gettempdir())
    if committer:
        env["GIT_COMMITTER_NAME"], env["GIT_COMMITTER_EMAIL"] = committer
    if when is not None:
        env["GIT_COMMITTER_DATE"] = f"{when} +0000"
    return env


def git(cwd: Path | str, *args: str, check: bool = True, env: dict | None = None, input: bytes | None = None
        ) -> subprocess.CompletedProcess:
    """Run ``git args`` in ``cwd``; raises ``RuntimeError`` with git's stderr when ``check``."""
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=env or _env(), input=input)
    if check and p.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: {p.stderr.decode(errors='replace').strip()}")
    return p


class GitRepo:
    """One bare repository on disk (``path``)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._repo = pygit2.Repository(str(self.path))

    @classmethod
    def create(cls, path: Path, *, default_branch: str = "main", source: str | None = None) -> "GitRepo":
        """A new bare repository at ``path``: empty, or a bare mirror of ``source`` (any git URL/path)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if source:
            git(path.parent, "clone", "--bare", "--quiet", str(source), str(path))
        else:
            git(path.parent, "init", "--bare", "--quiet", f"--initial-branch={default_branch}", str(path))
        git(path, "config", "receive.denyNonFastForwards", "false")
        git(path, "config", "uploadpack.allowAnySHA1InWant", "true")
        git(path, "config", "http.receivepack", "true")
        return cls(path)

    # --- reads ---------------------------------------------------------------------------------
    def refresh(self) -> None:
        self._repo = pygit2.Repository(str(self.path))

    def refs(self) -> dict[str, str]:
        """``{"refs/heads/main": sha, …}`` (symbolic refs resolved, HEAD excluded)."""
        out = {}
        for name in self._repo.references:
            if not name.startswith("refs/"):
                continue
            try:
                ref = self._repo.references[name].resolve()
                out[name] = str(ref.target)
            except (KeyError, pygit2.GitError):
                continue
        return out

    def ref(self, name: str) -> str | None:
        try:
            return str(self._repo.references[name].resolve().target)
        except (KeyError, pygit2.GitError, pygit2.InvalidSpecError):
            return None

    def resolve(self, rev: str) -> str | None:
        """A sha for a branch name, full ref, or (abbreviated) sha; None when unknown."""
        for cand in (rev, f"refs/heads/{rev}", f"refs/tags/{rev}"):
            if cand.startswith("refs/"):
                sha = self.ref(cand)
                if sha:
                    return sha
        try:
            obj = self._repo.revparse_single(rev)
            obj = obj.peel(pygit2.Commit)
            return str(obj.id)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            return None

    def has_object(self, sha: str) -> bool:
        try:
            return pygit2.Oid(hex=sha) in self._repo.odb
        except ValueError:
            return False

    def commit(self, sha: str) -> CommitData:
        c = self._repo[sha].peel(pygit2.Commit)
        return CommitData(
            sha=str(c.id), tree=str(c.tree_id), parents=tuple(str(p) for p in c.parent_ids),
            message=c.message, author_name=c.author.name, author_email=c.author.email,
            author_time=c.author.time, author_offset=c.author.offset,
            committer_name=c.committer.name, committer_email=c.committer.email,
            committer_time=c.committer.time, committer_offset=c.committer.offset)

    def log(self, head: str, exclude: str | None = None, limit: int = 10_000) -> list[str]:
        """Commits reachable from ``head`` and not from ``exclude``, oldest first (topological)."""
        walker = self._repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        if exclude:
            walker.hide(exclude)
        out = []
        for c in walker:
            out.append(str(c.id))
            if len(out) >= limit:
                break
        return out

    def merge_base(self, a: str, b: str) -> str | None:
        mb = self._repo.merge_base(a, b)
        return str(mb) if mb else None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return ancestor == descendant or self._repo.descendant_of(descendant, ancestor)

    def changed_files(self, base: str, head: str) -> list[dict]:
        """``[{filename, status, additions, deletions, changes, previous_filename?, patch}]``
        between two commits (GitHub's pulls/list-files and compare shapes)."""
        a = self._repo[base].peel(pygit2.Commit).tree
        b = self._repo[head].peel(pygit2.Commit).tree
        diff = self._repo.diff(a, b)
        diff.find_similar()
        status = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied", "T": "changed"}
        out = []
        for patch in diff:
            d = patch.delta
            _, adds, dels = patch.line_stats
            entry = {"sha": str(d.new_file.id) if d.status_char() != "D" else str(d.old_file.id),
                     "filename": d.new_file.path, "status": status.get(d.status_char(), "modified"),
                     "additions": adds, "deletions": dels, "changes": adds + dels}
            text = patch.text or ""
            cut = text.find("\n@@")
            entry["patch"] = text[cut + 1:] if cut >= 0 else ""
            if d.status_char() == "R":
                entry["previous_filename"] = d.old_file.path
            out.append(entry)
        return out

    def blob_at(self, rev: str, path: str) -> tuple[str, bytes] | None:
        """``(blob sha, bytes)`` of ``path`` at ``rev``; None when absent or a directory."""
        sha = self.resolve(rev)
        if sha is None:
            return None
        tree = self._repo[sha].peel(pygit2.Commit).tree
        try:
            entry = tree[path]
        except KeyError:
            return None
        obj = self._repo[entry.id]
        if not isinstance(obj, pygit2.Blob):
            return None
        return str(obj.id), obj.data

    def tree_entries(self, rev: str, path: str) -> list[tuple[str, str, str, int]] | None:
        """Directory listing ``[(name, type 'file'|'dir', sha, size)]`` of ``path`` at ``rev``."""
        sha = self.resolve(rev)
        if sha is None:
            return None
        tree = self._repo[sha].peel(pygit2.Commit).tree
        if path:
            try:
                obj = self._repo[tree[path].id]
            except KeyError:
                return None
            if not isinstance(obj, pygit2.Tree):
                return None
            tree = obj
        out = []
        for e in tree:
            obj = self._repo[e.id]
            kind = "dir" if isinstance(obj, pygit2.Tree) else "file"
            out.append((e.name, kind, str(e.id), obj.size if kind == "file" else 0))
        return out

    # --- writes --------------------------------------------------------------------------------
    def set_ref(self, name: str, sha: str) -> None:
        self._repo.references.create(name, pygit2.Oid(hex=sha), force=True)

    def delete_ref(self, name: str) -> None:
        self._repo.references.delete(name)

    def test_merge(self, base: str, head: str) -> str | None:
        """The tree of merging ``head`` into ``base`` (``git merge-tree --write-tree``), or None on
        conflict."""
        p = git(self.path, "merge-tree", "--write-tree", "--no-messages", base, head, check=False)
        if p.returncode == 0:
            return p.stdout.decode().split()[0]
        if p.returncode == 1:
            return None
        raise RuntimeError(f"git merge-tree failed: {p.stderr.decode(errors='replace')}")

    def commit_tree(self, tree: str, parents: list[str], message: str, *, author: tuple[str, str],
                    when: int) -> str:
        env = _env(GITHUB_COMMITTER, when)
        env["GIT_AUTHOR_NAME"], env["GIT_AUTHOR_EMAIL"] = author
        env["GIT_AUTHOR_DATE"] = f"{when} +0000"
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        return git(self.path, *args, "-m", message, env=env).stdout.decode().strip()

    def merge(self, base: str, head: str, method: str, *, title: str, message: str,
              merger: tuple[str, str], when: int) -> str:
        """Land ``head`` onto ``base`` with GitHub's ``merge_method`` and return the new base sha.

        - ``merge``: a merge commit (parents base, head) by ``merger``;
        - ``squash``: one commit with the combined change, authored by the head's author;
        - ``rebase``: each commit of ``base..head`` (merges dropped) replayed on base, author kept,
          committer GitHub; a base that already contains head fast-forwards nothing.
        Raises :class:`MergeConflict`."""
        msg = title + ("\n\n" + message if message else "")
        if method == "merge":
            tree = self.test_merge(base, head)
            if tree is None:
                raise MergeConflict(f"{head[:12]} conflicts with {base[:12]}")
            return self.commit_tree(tree, [base, head], msg, author=merger, when=when)
        if method == "squash":
            tree = self.test_merge(base, head)
            if tree is None:
                raise MergeConflict(f"{head[:12]} conflicts with {base[:12]}")
            c = self.commit(head)
            return self.commit_tree(tree, [base], msg, author=(c.author_name, c.author_email), when=when)
        if method == "rebase":
            return self._rebase(base, head, when)
        raise ValueError(f"unknown merge method {method!r}")

    def _rebase(self, base: str, head: str, when: int) -> str:
        picks = [s for s in self.log(head, exclude=base) if len(self.commit(s).parents) <= 1]
        if not picks:
            return base
        with tempfile.TemporaryDirectory(prefix="fakegithub-rebase-") as tmp:
            wt = Path(tmp) / "wt"
            git(self.path, "worktree", "add", "--detach", "--quiet", str(wt), base)
            try:
                env = _env(GITHUB_COMMITTER, when)
                for sha in picks:
                    p = git(wt, "cherry-pick", "--allow-empty", "--keep-redundant-commits", sha,
                            check=False, env=env)
                    if p.returncode != 0:
                        git(wt, "cherry-pick", "--abort", check=False, env=env)
                        raise MergeConflict(f"{sha[:12]} does not apply on {base[:12]}")
                return git(wt, "rev-parse", "HEAD").stdout.decode().strip()
            finally:
                git(self.path, "worktree", "remove", "--force", str(wt), check=False)
                git(self.path, "worktree", "prune", check=False)

    def write_blob(self, data: bytes) -> str:
        return str(self._repo.create_blob(data))
