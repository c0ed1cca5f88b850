"""Repository routes: repository, branches (and the rules of their rulesets), contents,
collaborators, commits, compare, statuses, merge-upstream."""
from __future__ import annotations

import base64

from bot.fakegithub.routing import Ctx, GitHubError, Reply, not_found, route


def resolve_or_404(ctx: Ctx, rev: str) -> str:
    sha = ctx.repo.git.resolve(rev)
    if sha is None:
        raise GitHubError(422 if ctx.operation == "repos/get-commit" else 404,
                          f"No commit found for SHA: {rev}")
    return sha


@route("repos/get")
async def get_repo(ctx: Ctx) -> Reply:
    return Reply(200, ctx.render.repo(ctx.repo, full=True))


def _branch(ctx: Ctx, name: str, sha: str, *, full: bool) -> dict:
    r = ctx.repo
    protected = name == r.default_branch and bool(r.required_checks)
    out = {"name": name, "commit": {"sha": sha, "url": f"{ctx.render.api}/repos/{r.full_name}/commits/{sha}"},
           "protected": protected}
    if full:
        out["commit"] = ctx.render.commit(r, sha)
        out["_links"] = {"self": f"{ctx.render.api}/repos/{r.full_name}/branches/{name}",
                         "html": f"{ctx.render.web}/{r.full_name}/tree/{name}"}
        out["protection"] = {"enabled": protected, "required_status_checks": {
            "enforcement_level": "non_admins" if protected else "off", "contexts": list(r.required_checks),
            "checks": [{"context": c, "app_id": r.required_check_apps.get(c)} for c in r.required_checks]}}
        out["protection_url"] = f"{ctx.render.api}/repos/{r.full_name}/branches/{name}/protection"
    return out


@route("repos/get-branch")
async def get_branch(ctx: Ctx) -> Reply:
    name = ctx.params["branch"]
    sha = ctx.repo.git.ref(f"refs/heads/{name}")
    if sha is None:
        raise GitHubError(404, "Branch not found")
    return Reply(200, _branch(ctx, name, sha, full=True))


def ruleset_checks(r, branch: str) -> list[dict]:
    """The ``required_status_checks`` entries (``{"context", "integration_id"?}``) of the active
    rulesets on ``branch``."""
    return [c for rs in r.rulesets if rs.applies_to(branch, r.default_branch) for rule in rs.rules
            if rule.get("type") == "required_status_checks"
            for c in (rule.get("parameters") or {}).get("required_status_checks") or []]


@route("repos/get-branch-rules")
async def get_branch_rules(ctx: Ctx) -> Reply:
    """Every rule of the active rulesets on the branch (which need not exist), each with its
    ruleset's ``ruleset_source_type``, ``ruleset_source`` and ``ruleset_id``, as GitHub lists them."""
    r = ctx.repo
    name = ctx.params["branch"]
    items = [{**rule, "ruleset_source_type": "Repository", "ruleset_source": r.full_name, "ruleset_id": rs.id}
             for rs in r.rulesets if rs.applies_to(name, r.default_branch) for rule in rs.rules]
    return ctx.page(items)


@route("repos/list-branches")
async def list_branches(ctx: Ctx) -> Reply:
    refs = ctx.repo.git.refs()
    items = [_branch(ctx, n[len("refs/heads/"):], s, full=False) for n, s in sorted(refs.items())
             if n.startswith("refs/heads/")]
    return ctx.page(items)


@route("repos/get-content")
async def get_content(ctx: Ctx) -> Reply:
    r = ctx.repo
    ref = ctx.query.get("ref") or r.default_branch
    path = ctx.params["path"].strip("/")
    if r.git.resolve(ref) is None:
        raise GitHubError(404, f"No commit found for the ref {ref}")
    blob = r.git.blob_at(ref, path)
    api = f"{ctx.render.api}/repos/{r.full_name}/contents/{path}"
    if blob is None:
        entries = r.git.tree_entries(ref, path)
        if entries is None:
            raise not_found()
        items = []
        for name, kind, sha, size in entries:
            p = f"{path}/{name}" if path else name
            url = f"{ctx.render.api}/repos/{r.full_name}/contents/{p}?ref={ref}"
            items.append({"type": kind, "size": size, "name": name, "path": p, "sha": sha, "url": url,
                          "git_url": f"{ctx.render.api}/repos/{r.full_name}/git/{'blobs' if kind == 'file' else 'trees'}/{sha}",
                          "html_url": f"{ctx.render.web}/{r.full_name}/blob/{ref}/{p}",
                          "download_url": f"{ctx.render.web}/{r.full_name}/raw/{ref}/{p}" if kind == "file" else None,
                          "_links": {"self": url, "git": None, "html": None}})
        # the operation's schema is a oneOf with a discriminator on "type", which an array cannot
        # satisfy (GitHub's own directory example fails it too: data-pack README); check the
        # listing against the content-directory schema it names instead
        return Reply(200, items, schema="content-directory")
    sha, data = blob
    encoded = base64.encodebytes(data).decode()
    return Reply(200, {
        "type": "file", "encoding": "base64", "size": len(data), "name": path.rsplit("/", 1)[-1], "path": path,
        "content": encoded, "sha": sha, "url": f"{api}?ref={ref}",
        "git_url": f"{ctx.render.api}/repos/{r.full_name}/git/blobs/{sha}",
        "html_url": f"{ctx.render.web}/{r.full_name}/blob/{ref}/{path}",
        "download_url": f"{ctx.render.web}/{r.full_name}/raw/{ref}/{path}",
        "_links": {"self": f"{api}?ref={ref}", "git": f"{ctx.render.api}/repos/{r.full_name}/git/blobs/{sha}",
                   "html": f"{ctx.render.web}/{r.full_name}/blob/{ref}/{path}"}})


@route("repos/get-collaborator-permission-level")
async def collaborator_permission(ctx: Ctx) -> Reply:
    login = ctx.params["username"]
    user = ctx.state.users.get(login.lower())
    if user is None:
        raise GitHubError(404, f"{login} is not a user")
    perm = ctx.state.permission(ctx.repo, user.login)
    # GitHub maps roles onto the legacy read/write/admin/none in "permission"; role_name keeps the role
    legacy = {"triage": "read", "maintain": "write"}.get(perm, perm)
    u = ctx.render.user(user)
    u["permissions"] = {"admin": perm == "admin", "maintain": perm in ("maintain", "admin"),
                        "push": perm in ("write", "maintain", "admin"),
                        "triage": perm in ("triage", "write", "maintain", "admin"),
                        "pull": perm != "none"}
    u["role_name"] = perm
    return Reply(200, {"permission": legacy, "role_name": perm, "user": u})


@route("repos/get-commit")
async def get_commit(ctx: Ctx) -> Reply:
    sha = resolve_or_404(ctx, ctx.params["ref"])
    return Reply(200, ctx.render.commit(ctx.repo, sha, files=True))


@route("repos/list-commits")
async def list_commits(ctx: Ctx) -> Reply:
    r = ctx.repo
    start = ctx.query.get("sha") or r.default_branch
    sha = r.git.resolve(start)
    if sha is None:
        if not r.git.refs():
            raise GitHubError(409, "Git Repository is empty.")
        raise not_found()
    shas = list(reversed(r.git.log(sha)))     # newest first, like GitHub
    path = ctx.query.get("path")
    if path:
        shas = [s for s in shas if any(f["filename"] == path or f["filename"].startswith(path.rstrip("/") + "/")
                                       for f in _files_of(r, s))]
    return ctx.page([ctx.render.commit(r, s) for s in shas])


def _files_of(r, sha):
    c = r.git.commit(sha)
    return r.git.changed_files(c.parents[0], sha) if c.parents else []


@route("repos/compare-commits")
async def compare(ctx: Ctx) -> Reply:
    r = ctx.repo
    basehead = ctx.params["basehead"]
    if "..." not in basehead:
        raise not_found()
    base_rev, head_rev = basehead.split("...", 1)
    base, head = r.git.resolve(base_rev), r.git.resolve(head_rev)
    if base is None or head is None:
        raise not_found()
    mb = r.git.merge_base(base, head)
    ahead = r.git.log(head, exclude=base)
    behind = r.git.log(base, exclude=head)
    status = ("identical" if base == head else "ahead" if not behind else "behind" if not ahead else "diverged")
    entries = r.git.changed_files(mb, head) if mb else []
    html = f"{ctx.render.web}/{r.full_name}/compare/{basehead}"
    return Reply(200, {
        "url": f"{ctx.render.api}/repos/{r.full_name}/compare/{basehead}", "html_url": html,
        "permalink_url": f"{ctx.render.web}/{r.full_name}/compare/{base}...{head}",
        "diff_url": html + ".diff", "patch_url": html + ".patch",
        "base_commit": ctx.render.commit(r, base), "merge_base_commit": ctx.render.commit(r, mb or base),
        "status": status, "ahead_by": len(ahead), "behind_by": len(behind), "total_commits": len(ahead),
        "commits": [ctx.render.commit(r, s) for s in ahead[:250]],
        "files": [ctx.render.diff_entry(r, head, e) for e in entries]})


def latest_statuses(r, sha: str) -> dict[str, dict]:
    """The latest commit status per context on ``sha`` (GitHub's combined status shows those)."""
    out: dict[str, dict] = {}
    for st in r.statuses.get(sha, []):
        out[st["context"]] = st
    return out


@route("repos/get-combined-status-for-ref")
async def combined_status(ctx: Ctx) -> Reply:
    r = ctx.repo
    sha = resolve_or_404(ctx, ctx.params["ref"])
    statuses = [ctx.render.commit_status(r, sha, st) for st in latest_statuses(r, sha).values()]
    states = {st["state"] for st in statuses}
    combined = ("failure" if states & {"failure", "error"} else "pending" if not states or "pending" in states
                else "success")
    # as GitHub: the state covers every context, the statuses list is paginated (30 a page)
    page = ctx.page(statuses)
    page.data = {"state": combined, "statuses": page.data, "sha": sha, "total_count": len(statuses),
                 "repository": ctx.render.minimal_repo(r),
                 "commit_url": f"{ctx.render.api}/repos/{r.full_name}/commits/{sha}",
                 "url": f"{ctx.render.api}/repos/{r.full_name}/commits/{sha}/status"}
    return page


@route("repos/merge-upstream")
async def merge_upstream(ctx: Ctx) -> Reply:
    """GitHub's "Sync fork": fast-forward (or merge) the fork's branch from its parent's branch of
    the same name; 409 on conflict."""
    from bot.fakegithub.gitrepo import MergeConflict, git

    ctx.require_permission("contents")
    r = ctx.repo
    branch = ctx.json()["branch"]
    if r.fork_of is None:
        raise GitHubError(422, "This repository is not a fork.")
    parent = ctx.state.repos_by_id[r.fork_of]
    up = parent.git.ref(f"refs/heads/{branch}")
    mine = r.git.ref(f"refs/heads/{branch}")
    if up is None or mine is None:
        raise GitHubError(422, f"Branch {branch} not found")
    git(r.path, "fetch", "--quiet", str(parent.path), f"+refs/heads/{branch}:refs/forksync-fake/upstream")
    if r.git.is_ancestor(up, mine):
        return Reply(200, {"message": "This branch is not behind the upstream", "merge_type": "none",
                           "base_branch": f"{parent.owner.login}:{branch}"})
    if r.git.is_ancestor(mine, up):
        new, kind = up, "fast-forward"
    else:
        try:
            new = r.git.merge(mine, up, "merge", title=f"Merge branch '{branch}' of {parent.full_name}",
                              message="", merger=("GitHub", "noreply@github.com"), when=int(ctx.state.now()))
        except MergeConflict:
            raise GitHubError(409, "There are merge conflicts") from None
        kind = "merge"
    r.git.set_ref(f"refs/heads/{branch}", new)
    from bot.fakegithub.events import on_ref_changes
    on_ref_changes(ctx.fake, ctx.state.observe_refs(r), pusher=ctx.actor)
    return Reply(200, {"message": f"Successfully fetched and {'fast-forwarded' if kind != 'merge' else 'merged'} "
                                  f"from upstream {parent.owner.login}:{branch}.",
                       "merge_type": kind, "base_branch": f"{parent.owner.login}:{branch}"})
