"""Pull request routes: list, create, get, update, merge (merge/squash/rebase really performed on
the bare repository), check-if-merged, files, commits, reviews, update-branch.

``mergeable`` is computed like GitHub: ``null`` while "computing" (the first N reads after
:meth:`FakeGitHub.mergeable_unknown`), else a real test merge (``git merge-tree``) stored as
``refs/pull/<n>/merge`` with ``refs/pull/<n>/head``; ``mergeable_state`` is ``dirty`` (conflict),
``blocked`` (a required check is not passing on the head), ``draft`` or ``clean``.
"""
from __future__ import annotations

from bot.fakegithub.events import on_ref_changes, pull_event, review_event
from bot.fakegithub.gitrepo import MergeConflict
from bot.fakegithub.routes_repos import latest_statuses, ruleset_checks
from bot.fakegithub.routing import Ctx, GitHubError, Reply, not_found, route
from bot.fakegithub.state import Issue, Pull, Review

PASSING = ("success", "neutral", "skipped")


def _pull(ctx: Ctx) -> Pull:
    p = ctx.repo.pulls.get(ctx.int_param("pull_number"))
    if p is None:
        raise not_found()
    return p


def required_checks_failing(ctx: Ctx, head_sha: str, base_ref: str) -> list[str]:
    """Names of required checks without a passing check run or commit status on ``head_sha``
    (latest run per name; a status named like a check counts too, as on GitHub): branch
    protection's on the default branch and the ``required_status_checks`` rules of the active
    rulesets on ``base_ref``. A check bound to one app (``required_check_apps``, a rule's
    ``integration_id``) is passed only by that app's latest run of the name: the statuses here
    carry no app, and another app's run of the same name does not count."""
    r = ctx.repo
    latest: dict[str, str | None] = {}
    by_app: dict[tuple[str, int | None], str | None] = {}
    for run in sorted(r.check_runs.values(), key=lambda c: c.id):
        if run.head_sha == head_sha:
            latest[run.name] = by_app[(run.name, run.app_id)] = run.conclusion if run.status == "completed" else None
    for name, st in latest_statuses(r, head_sha).items():
        if latest.get(name) not in PASSING:
            latest[name] = st["state"]

    def passing(n: str, app: int | None) -> bool:
        if app is None or app == -1:
            return latest.get(n) in PASSING
        return by_app.get((n, app)) in PASSING
    required: list[tuple[str, int | None]] = []
    if base_ref == r.default_branch:
        required += [(n, r.required_check_apps.get(n)) for n in r.required_checks]
    required += [(c["context"], c.get("integration_id")) for c in ruleset_checks(r, base_ref)]
    return list(dict.fromkeys(n for n, app in required if not passing(n, app)))


def mergeability(ctx: Ctx, p: Pull) -> tuple[bool | None, str, str | None]:
    r = ctx.repo
    if p.merged or r.issues[p.number].state == "closed":
        return None, "unknown", None
    if p.mergeable_unknown_polls > 0:
        p.mergeable_unknown_polls -= 1
        return None, "unknown", None
    head = ctx.state.head_sha(r, p)
    base = r.git.ref(f"refs/heads/{p.base_ref}")
    if base is None:
        return False, "dirty", None
    cached = getattr(p, "_test_merge", None)         # (base, head, merge sha or None on conflict)
    if cached and cached[:2] == (base, head):
        sha = cached[2]
    else:
        tree = r.git.test_merge(base, head)
        sha = None if tree is None else r.git.commit_tree(
            tree, [base, head], f"Merge {head} into {base}", author=("GitHub", "noreply@github.com"),
            when=int(ctx.state.now()))
        p._test_merge = (base, head, sha)  # type: ignore[attr-defined]
        r.git.set_ref(f"refs/pull/{p.number}/head", head)
        if sha is not None:
            r.git.set_ref(f"refs/pull/{p.number}/merge", sha)
    if sha is None:
        return False, "dirty", None
    if p.draft:
        return True, "draft", sha
    if required_checks_failing(ctx, head, p.base_ref):
        return True, "blocked", sha
    return True, "clean", sha


@route("pulls/list")
async def list_pulls(ctx: Ctx) -> Reply:
    r = ctx.repo
    state = ctx.query.get("state", "open")
    head = ctx.query.get("head")
    base = ctx.query.get("base")
    out = []
    for p in r.pulls.values():
        issue = r.issues[p.number]
        if state != "all" and issue.state != state:
            continue
        if base and p.base_ref != base:
            continue
        if head:
            owner, _, branch = head.partition(":")
            head_repo = ctx.state.repos_by_id.get(p.head_repo_id, r)
            if not branch:
                owner, branch = head_repo.owner.login, owner
            if head_repo.owner.login.lower() != owner.lower() or p.head_ref != branch:
                continue
        out.append(p)
    key = ctx.query.get("sort", "created")
    out.sort(key=lambda p: (r.issues[p.number].updated_at if key in ("updated", "long-running") else
                            r.issues[p.number].created_at, p.number),
             reverse=ctx.query.get("direction", "desc") == "desc")
    return ctx.page([ctx.render.pull(r, p, simple=True) for p in out])


@route("pulls/create")
async def create_pull(ctx: Ctx) -> Reply:
    ctx.require_permission("pull_requests")
    r = ctx.repo
    body = ctx.json()
    head_spec, base_ref = body["head"], body["base"]
    owner, _, branch = head_spec.partition(":")
    head_repo = r
    if branch:
        if owner.lower() != r.owner.login.lower():
            head_repo = next((x for x in ctx.state.repos.values()
                              if x.owner.login.lower() == owner.lower() and x.fork_of == r.id), None)
            if head_repo is None:
                raise GitHubError(422, "Validation Failed", errors=[
                    {"resource": "PullRequest", "field": "head", "code": "invalid"}])
    else:
        branch = owner
    head_sha = head_repo.git.ref(f"refs/heads/{branch}")
    base_sha = r.git.ref(f"refs/heads/{base_ref}")
    if head_sha is None:
        raise GitHubError(422, "Validation Failed", errors=[{"resource": "PullRequest", "field": "head", "code": "invalid"}])
    if base_sha is None:
        raise GitHubError(422, "Validation Failed", errors=[{"resource": "PullRequest", "field": "base", "code": "invalid"}])
    for p in r.pulls.values():
        if (p.head_repo_id == head_repo.id and p.head_ref == branch and p.base_ref == base_ref
                and r.issues[p.number].state == "open"):
            raise GitHubError(422, "Validation Failed", errors=[{
                "resource": "PullRequest", "code": "custom",
                "message": f"A pull request already exists for {head_repo.owner.login}:{branch}."}])
    if head_repo is r and not r.git.log(head_sha, exclude=base_sha, limit=1):
        raise GitHubError(422, "Validation Failed", errors=[{
            "resource": "PullRequest", "code": "custom", "message": f"No commits between {base_ref} and {branch}"}])
    if body.get("draft") and not r.drafts:
        raise GitHubError(422, "Validation Failed", errors=[{
            "resource": "PullRequest", "code": "custom", "message": "Draft pull requests are not supported in this repository."}])
    actor = ctx.require_actor()
    now = ctx.state.now()
    number = r.next_number()
    r.issues[number] = Issue(ctx.state.new_id(), number, body.get("title") or branch, body.get("body"), actor,
                             now, now, is_pull=True)
    p = Pull(number, ctx.state.new_id(), branch, base_ref, head_repo.id, head_sha,
             draft=bool(body.get("draft", False)), maintainer_can_modify=bool(body.get("maintainer_can_modify", False)))
    r.pulls[number] = p
    if head_repo is r:
        r.git.set_ref(f"refs/pull/{number}/head", head_sha)
    else:
        ctx.state.head_sha(r, p)          # fetches the fork's commits as refs/pull/<n>/head
    pull_event(ctx.fake, r, p, "opened", actor)
    return Reply(201, ctx.render.pull(r, p, mergeable=(None, "unknown", None)),
                 headers={"Location": f"{ctx.render.api}/repos/{r.full_name}/pulls/{number}"})


@route("pulls/get")
async def get_pull(ctx: Ctx) -> Reply:
    p = _pull(ctx)
    return Reply(200, ctx.render.pull(ctx.repo, p, mergeable=mergeability(ctx, p)))


@route("pulls/update")
async def update_pull(ctx: Ctx) -> Reply:
    ctx.require_permission("pull_requests")
    r, p = ctx.repo, _pull(ctx)
    body = ctx.json()
    issue = r.issues[p.number]
    actor = ctx.require_actor()
    now = ctx.state.now()
    action = None
    changes: dict = {}
    for key in ("title", "body"):
        if key in body and body[key] != getattr(issue, key):
            changes[key] = {"from": getattr(issue, key) or ""}     # the webhook schema: a string
            setattr(issue, key, body[key])
            action = "edited"
    if "base" in body and body["base"] != p.base_ref:
        if r.git.ref(f"refs/heads/{body['base']}") is None:
            raise GitHubError(422, "Validation Failed", errors=[{"resource": "PullRequest", "field": "base", "code": "invalid"}])
        changes["base"] = {"ref": {"from": p.base_ref}, "sha": {"from": r.git.ref(f"refs/heads/{p.base_ref}")}}
        p.base_ref = body["base"]
        action = "edited"
    if "maintainer_can_modify" in body:
        p.maintainer_can_modify = bool(body["maintainer_can_modify"])
    if body.get("state") and body["state"] != issue.state:
        if p.merged:
            raise GitHubError(422, "Validation Failed", errors=[{"resource": "PullRequest", "code": "custom",
                                                                 "message": "Cannot reopen a merged pull request"}])
        issue.state = body["state"]
        issue.closed_at = now if issue.state == "closed" else None
        issue.closed_by = actor if issue.state == "closed" else None
        if action == "edited":
            pull_event(ctx.fake, r, p, "edited", actor, extra={"changes": changes})
        action = "closed" if issue.state == "closed" else "reopened"
    issue.updated_at = now
    if action:
        pull_event(ctx.fake, r, p, action, actor, extra={"changes": changes} if action == "edited" else None)
    return Reply(200, ctx.render.pull(r, p, mergeable=mergeability(ctx, p)))


@route("pulls/merge")
async def merge_pull(ctx: Ctx) -> Reply:
    ctx.require_permission("contents")
    r, p = ctx.repo, _pull(ctx)
    body = ctx.json() or {}
    issue = r.issues[p.number]
    if p.merged or issue.state == "closed":
        raise GitHubError(405, "Pull Request is not mergeable")
    head = ctx.state.head_sha(r, p)
    if body.get("sha") and body["sha"] != head:
        raise GitHubError(409, "Head branch was modified. Review and try the merge again.")
    method = body.get("merge_method", "merge")
    allowed = {"merge": r.allow_merge_commit, "squash": r.allow_squash_merge, "rebase": r.allow_rebase_merge}
    if not allowed[method]:
        names = {"merge": "Merge commits", "squash": "Squash merges", "rebase": "Rebase merges"}
        raise GitHubError(405, f"{names[method]} are not allowed on this repository.")
    if p.draft:
        raise GitHubError(405, "Pull Request is still a draft")
    base = r.git.ref(f"refs/heads/{p.base_ref}")
    failing = required_checks_failing(ctx, head, p.base_ref)
    if failing:
        raise GitHubError(405, f"Required status check \"{failing[0]}\" is expected.")
    actor = ctx.require_actor()
    title = body.get("commit_title") or (
        f"Merge pull request #{p.number} from {r.owner.login}/{p.head_ref}" if method == "merge"
        else f"{issue.title} (#{p.number})")
    message = body.get("commit_message", issue.title if method == "merge" else "")
    try:
        new = r.git.merge(base, head, method, title=title, message=message,
                          merger=(actor.login, f"{actor.id}+{actor.login}@users.noreply.github.com"),
                          when=int(ctx.state.now()))
    except MergeConflict:
        raise GitHubError(405, "Pull Request is not mergeable") from None
    r.git.set_ref(f"refs/heads/{p.base_ref}", new)
    now = ctx.state.now()
    p.merged, p.merged_at, p.merged_by, p.merge_commit_sha = True, now, actor, new
    p.base_sha_at_merge = base
    p.last_head_sha = head
    issue.state, issue.closed_at, issue.closed_by, issue.updated_at = "closed", now, actor, now
    on_ref_changes(ctx.fake, ctx.state.observe_refs(r), pusher=actor)
    pull_event(ctx.fake, r, p, "closed", actor)
    return Reply(200, {"sha": new, "merged": True, "message": "Pull Request successfully merged"})


@route("pulls/check-if-merged")
async def check_merged(ctx: Ctx) -> Reply:
    p = _pull(ctx)
    if not p.merged:
        raise not_found()
    return Reply(204)


def _pr_range(ctx: Ctx, p: Pull) -> tuple[str, str]:
    r = ctx.repo
    head = ctx.state.head_sha(r, p)
    base = p.base_sha_at_merge if p.merged else r.git.ref(f"refs/heads/{p.base_ref}")
    return base, head


@route("pulls/list-commits")
async def list_pull_commits(ctx: Ctx) -> Reply:
    p = _pull(ctx)
    base, head = _pr_range(ctx, p)
    shas = ctx.repo.git.log(head, exclude=base)
    return ctx.page([ctx.render.commit(ctx.repo, s) for s in shas[:250]])


@route("pulls/list-files")
async def list_pull_files(ctx: Ctx) -> Reply:
    p = _pull(ctx)
    base, head = _pr_range(ctx, p)
    mb = ctx.repo.git.merge_base(base, head) or base
    # GitHub: "Responses include a maximum of 3000 files"
    return ctx.page([ctx.render.diff_entry(ctx.repo, head, e) for e in ctx.repo.git.changed_files(mb, head)[:3000]])


@route("pulls/list-reviews")
async def list_reviews(ctx: Ctx) -> Reply:
    r, p = ctx.repo, _pull(ctx)
    return ctx.page([ctx.render.review(r, p, v) for v in p.reviews])


@route("pulls/create-review")
async def create_review(ctx: Ctx) -> Reply:
    r, p = ctx.repo, _pull(ctx)
    body = ctx.json() or {}
    actor = ctx.require_actor()
    event = body.get("event")
    state = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}.get(event, "PENDING")
    if state in ("CHANGES_REQUESTED", "COMMENTED") and not body.get("body"):
        raise GitHubError(422, "Unprocessable Entity", errors=[f"Body is required for a {event.lower()} review"])
    issue = r.issues[p.number]
    if state in ("APPROVED", "CHANGES_REQUESTED") and actor.login == issue.user.login:
        raise GitHubError(422, "Unprocessable Entity", errors=[
            "Can not approve your own pull request" if state == "APPROVED" else
            "Can not request changes on your own pull request"])
    v = Review(ctx.state.new_id(), actor, body.get("body", ""), state,
               body.get("commit_id") or ctx.state.head_sha(r, p), None if state == "PENDING" else ctx.state.now())
    p.reviews.append(v)
    if state != "PENDING":
        review_event(ctx.fake, r, p, v, "submitted", actor)
    return Reply(200, ctx.render.review(r, p, v))


@route("pulls/update-branch")
async def update_branch(ctx: Ctx) -> Reply:
    ctx.require_permission("contents")
    r, p = ctx.repo, _pull(ctx)
    body = ctx.json() or {}
    head = ctx.state.head_sha(r, p)
    if body.get("expected_head_sha") and body["expected_head_sha"] != head:
        raise GitHubError(422, "expected head sha didn't match current head ref.")
    base = r.git.ref(f"refs/heads/{p.base_ref}")
    if r.git.is_ancestor(base, head):
        raise GitHubError(422, "There are no new commits on the base branch.")
    actor = ctx.require_actor()
    head_repo = ctx.state.repos_by_id.get(p.head_repo_id, r)
    try:
        new = r.git.merge(head, base, "merge", title=f"Merge branch '{p.base_ref}' into {p.head_ref}", message="",
                          merger=(actor.login, f"{actor.id}+{actor.login}@users.noreply.github.com"),
                          when=int(ctx.state.now()))
    except MergeConflict:
        raise GitHubError(422, "merge conflict between base and head") from None
    if head_repo is not r:
        from bot.fakegithub.gitrepo import git
        git(head_repo.path, "fetch", "--quiet", str(r.path), new)
    head_repo.git.set_ref(f"refs/heads/{p.head_ref}", new)
    on_ref_changes(ctx.fake, ctx.state.observe_refs(head_repo), pusher=actor)
    return Reply(202, {"message": "Updating pull request branch.",
                       "url": f"{ctx.render.web}/{r.full_name}/pull/{p.number}"})
