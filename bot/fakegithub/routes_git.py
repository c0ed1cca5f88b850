"""Git data routes: refs (get, match, create, update, delete) and objects (blobs, trees, commits),
all on the real bare repository, so what the API writes ``git fetch`` sees and vice versa."""
from __future__ import annotations

import base64

import pygit2

from bot.fakegithub.events import on_ref_changes
from bot.fakegithub.routing import Ctx, GitHubError, Reply, not_found, route


def _full_ref(ref: str) -> str:
    return ref if ref.startswith("refs/") else f"refs/{ref}"


@route("git/get-ref")
async def get_ref(ctx: Ctx) -> Reply:
    name = _full_ref(ctx.params["ref"])
    sha = ctx.repo.git.ref(name)
    if sha is None:
        raise not_found()
    return Reply(200, ctx.render.git_ref(ctx.repo, name, sha))


@route("git/list-matching-refs")
async def list_matching(ctx: Ctx) -> Reply:
    prefix = _full_ref(ctx.params["ref"])
    refs = ctx.repo.git.refs()
    if not refs:
        raise GitHubError(409, "Git Repository is empty.")
    return Reply(200, [ctx.render.git_ref(ctx.repo, n, s) for n, s in sorted(refs.items()) if n.startswith(prefix)])


@route("git/create-ref")
async def create_ref(ctx: Ctx) -> Reply:
    ctx.require_permission("contents")
    body = ctx.json()
    name, sha = body["ref"], body["sha"]
    if not name.startswith("refs/") or name.count("/") < 2:
        raise GitHubError(422, "Reference name must start with 'refs/' and have at least two slashes.")
    if ctx.repo.git.ref(name) is not None:
        raise GitHubError(422, "Reference already exists")
    if not ctx.repo.git.has_object(sha):
        raise GitHubError(422, "Object does not exist")
    ctx.repo.git.set_ref(name, sha)
    on_ref_changes(ctx.fake, ctx.state.observe_refs(ctx.repo), pusher=ctx.actor)
    return Reply(201, ctx.render.git_ref(ctx.repo, name, sha))


@route("git/update-ref")
async def update_ref(ctx: Ctx) -> Reply:
    ctx.require_permission("contents")
    name = _full_ref(ctx.params["ref"])
    body = ctx.json()
    sha, force = body["sha"], bool(body.get("force", False))
    old = ctx.repo.git.ref(name)
    if old is None:
        raise GitHubError(422, "Reference does not exist")
    if not ctx.repo.git.has_object(sha):
        raise GitHubError(422, "Object does not exist")
    if not force and not ctx.repo.git.is_ancestor(old, sha):
        raise GitHubError(422, "Update is not a fast forward")
    ctx.repo.git.set_ref(name, sha)
    on_ref_changes(ctx.fake, ctx.state.observe_refs(ctx.repo), pusher=ctx.actor, forced=force)
    return Reply(200, ctx.render.git_ref(ctx.repo, name, sha))


@route("git/delete-ref")
async def delete_ref(ctx: Ctx) -> Reply:
    ctx.require_permission("contents")
    name = _full_ref(ctx.params["ref"])
    if ctx.repo.git.ref(name) is None:
        raise GitHubError(422, "Reference does not exist")
    ctx.repo.git.delete_ref(name)
    on_ref_changes(ctx.fake, ctx.state.observe_refs(ctx.repo), pusher=ctx.actor)
    return Reply(204)


@route("git/get-commit")
async def get_git_commit(ctx: Ctx) -> Reply:
    sha = ctx.params["commit_sha"]
    if not ctx.repo.git.has_object(sha):
        raise not_found()
    return Reply(200, ctx.render.git_commit(ctx.repo, sha))


@route("git/create-blob")
async def create_blob(ctx: Ctx) -> Reply:
    ctx.require_permission("contents")
    body = ctx.json()
    content = body["content"]
    data = base64.b64decode(content) if body.get("encoding") == "base64" else content.encode()
    sha = ctx.repo.git.write_blob(data)
    return Reply(201, {"sha": sha, "url": f"{ctx.render.api}/repos/{ctx.repo.full_name}/git/blobs/{sha}"})


@route("git/get-blob")
async def get_blob(ctx: Ctx) -> Reply:
    repo = ctx.repo.git._repo
    try:
        obj = repo[ctx.params["file_sha"]]
    except (KeyError, ValueError):
        raise not_found() from None
    if not isinstance(obj, pygit2.Blob):
        raise not_found()
    sha = str(obj.id)
    return Reply(200, {"content": base64.encodebytes(obj.data).decode(), "encoding": "base64", "sha": sha,
                       "size": obj.size, "node_id": f"B_{sha[:12]}",
                       "url": f"{ctx.render.api}/repos/{ctx.repo.full_name}/git/blobs/{sha}"})


_MODES = {"100644": pygit2.enums.FileMode.BLOB, "100755": pygit2.enums.FileMode.BLOB_EXECUTABLE,
          "040000": pygit2.enums.FileMode.TREE, "160000": pygit2.enums.FileMode.COMMIT,
          "120000": pygit2.enums.FileMode.LINK}


def _insert(repo: pygit2.Repository, base: pygit2.Tree | None, parts: list[str], sha: str | None, mode) -> pygit2.Oid:
    tb = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    head, rest = parts[0], parts[1:]
    if not rest:
        if sha is None:
            if tb.get(head) is not None:
                tb.remove(head)
        else:
            tb.insert(head, pygit2.Oid(hex=sha), mode)
        return tb.write()
    sub = None
    entry = base[head] if base is not None and head in base else None
    if entry is not None:
        sub = repo[entry.id]
    tb.insert(head, _insert(repo, sub, rest, sha, mode), pygit2.enums.FileMode.TREE)
    return tb.write()


@route("git/create-tree")
async def create_tree(ctx: Ctx) -> Reply:
    ctx.require_permission("contents")
    body = ctx.json()
    repo = ctx.repo.git._repo
    base = None
    if body.get("base_tree"):
        try:
            base = repo[body["base_tree"]].peel(pygit2.Tree)
        except (KeyError, ValueError):
            raise GitHubError(422, "base_tree is not a valid tree oid") from None
    tree_id = base.id if base is not None else repo.TreeBuilder().write()
    for e in body["tree"]:
        sha = e.get("sha")
        if "content" in e:
            sha = str(repo.create_blob(e["content"].encode()))
        tree = repo[tree_id]
        tree_id = _insert(repo, tree, e["path"].strip("/").split("/"), sha, _MODES.get(e.get("mode", "100644"),
                                                                                      pygit2.enums.FileMode.BLOB))
    return Reply(201, _tree_json(ctx, str(tree_id)))


def _tree_json(ctx: Ctx, sha: str) -> dict:
    repo = ctx.repo.git._repo
    tree = repo[sha]
    base = f"{ctx.render.api}/repos/{ctx.repo.full_name}/git"
    entries = []
    for e in tree:
        obj = repo[e.id]
        kind = "tree" if isinstance(obj, pygit2.Tree) else "blob"
        item = {"path": e.name, "mode": f"{e.filemode:06o}", "type": kind, "sha": str(e.id),
                "url": f"{base}/{kind}s/{e.id}"}
        if kind == "blob":
            item["size"] = obj.size
        entries.append(item)
    return {"sha": sha, "url": f"{base}/trees/{sha}", "tree": entries, "truncated": False}


@route("git/get-tree")
async def get_tree(ctx: Ctx) -> Reply:
    repo = ctx.repo.git._repo
    try:
        tree = repo.revparse_single(ctx.params["tree_sha"]).peel(pygit2.Tree)
    except (KeyError, ValueError, pygit2.GitError):
        raise not_found() from None
    return Reply(200, _tree_json(ctx, str(tree.id)))


@route("git/create-commit")
async def create_commit(ctx: Ctx) -> Reply:
    ctx.require_permission("contents")
    body = ctx.json()
    repo = ctx.repo.git._repo
    now = int(ctx.state.now())
    actor = ctx.require_actor()

    def sig(d: dict | None) -> pygit2.Signature:
        if not d:
            return pygit2.Signature(actor.login, f"{actor.id}+{actor.login}@users.noreply.github.com", now, 0)
        return pygit2.Signature(d["name"], d["email"], now, 0)

    author = sig(body.get("author"))
    committer = sig(body.get("committer") or body.get("author"))
    try:
        tree = repo[body["tree"]].peel(pygit2.Tree)
        parents = [repo[p].peel(pygit2.Commit).id for p in body.get("parents", [])]
    except (KeyError, ValueError):
        raise GitHubError(422, "Tree SHA does not exist or parent SHA does not exist") from None
    msg = body["message"]
    oid = repo.create_commit(None, author, committer, msg if msg.endswith("\n") else msg + "\n", tree.id, parents)
    return Reply(201, ctx.render.git_commit(ctx.repo, str(oid)))
