"""Issue routes: issues, labels, comments and reactions (pull requests share the issue numbers,
labels and comments, as on GitHub)."""
from __future__ import annotations

from bot.fakegithub.events import comment_event, issue_event, pull_event
from bot.fakegithub.routing import Ctx, GitHubError, Reply, not_found, route
from bot.fakegithub.state import Comment, Issue, Label, Reaction

REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")


def _issue(ctx: Ctx) -> Issue:
    i = ctx.repo.issues.get(ctx.int_param("issue_number"))
    if i is None:
        raise not_found()
    return i


def _comment(ctx: Ctx) -> Comment:
    c = ctx.repo.comments.get(ctx.int_param("comment_id"))
    if c is None:
        raise not_found()
    return c


def _label(ctx: Ctx, name: str, *, create: bool) -> Label:
    lab = ctx.repo.labels.get(name.lower())
    if lab is None:
        if not create:
            raise not_found()
        lab = ctx.repo.labels[name.lower()] = Label(ctx.state.new_id(), name)
    return lab


def _label_names(body) -> list[str]:
    """issues/add-labels accepts ``{"labels": [...]}``, ``["a"]`` or ``[{"name": "a"}]``; label
    entries are names or ``{"name": …}`` objects."""
    items = body.get("labels", []) if isinstance(body, dict) else body
    return [x["name"] if isinstance(x, dict) else x for x in items]


@route("issues/list-for-repo")
async def list_issues(ctx: Ctx) -> Reply:
    r = ctx.repo
    state = ctx.query.get("state", "open")
    labels = [x for x in ctx.query.get("labels", "").split(",") if x]
    creator = ctx.query.get("creator")
    out = []
    for i in r.issues.values():
        if state != "all" and i.state != state:
            continue
        if labels and not all(label.lower() in [x.lower() for x in i.labels] for label in labels):
            continue
        if creator and i.user.login.lower() != creator.lower():
            continue
        out.append(i)
    key = ctx.query.get("sort", "created")
    out.sort(key=lambda i: (i.updated_at if key == "updated" else i.created_at, i.number),
             reverse=ctx.query.get("direction", "desc") == "desc")
    return ctx.page([ctx.render.issue(r, i) for i in out])


def _require_author_or_write(ctx: Ctx, area: str, author: str) -> None:
    """GitHub's rule for what a person wrote: its author may edit, delete or (an issue) close it with
    read access; anyone else needs write access. An App needs the ``area`` permission to write."""
    if ctx.installation is None and ctx.actor is not None and ctx.actor.login == author:
        ctx.require_permission(area, "read")
    else:
        ctx.require_permission(area)


@route("issues/create")
async def create_issue(ctx: Ctx) -> Reply:
    # a person with read access opens issues (GitHub: "People with read access can create issues");
    # an App needs the issues permission to write
    ctx.require_permission("issues", "write" if ctx.installation is not None else "read")
    r = ctx.repo
    if not r.has_issues:
        raise GitHubError(410, "Issues are disabled for this repo")
    body = ctx.json()
    actor = ctx.require_actor()
    now = ctx.state.now()
    title = body["title"]
    i = Issue(ctx.state.new_id(), r.next_number(), str(title), body.get("body"), actor, now, now)
    for name in _label_names(body):
        i.labels.append(_label(ctx, name, create=True).name)
    r.issues[i.number] = i
    issue_event(ctx.fake, r, i, "opened", actor)
    return Reply(201, ctx.render.issue(r, i),
                 headers={"Location": f"{ctx.render.api}/repos/{r.full_name}/issues/{i.number}"})


@route("issues/get")
async def get_issue(ctx: Ctx) -> Reply:
    return Reply(200, ctx.render.issue(ctx.repo, _issue(ctx)))


@route("issues/update")
async def update_issue(ctx: Ctx) -> Reply:
    # an issue's author edits and closes it with read access (labels, assignees and milestones stay
    # triage's: GitHub drops those fields from a reader's request)
    _require_author_or_write(ctx, "issues", _issue(ctx).user.login)
    r, i = ctx.repo, _issue(ctx)
    body = ctx.json()
    try:
        ctx.require_permission("issues")
    except GitHubError:     # the author, a reader: only their own words and the issue's state
        body = {k: v for k, v in body.items() if k in ("title", "body", "state", "state_reason")}
    actor = ctx.require_actor()
    now = ctx.state.now()
    changes = {}
    for key in ("title", "body"):
        if key in body and body[key] != getattr(i, key):
            changes[key] = {"from": getattr(i, key) or ""}         # the webhook schema: a string
            setattr(i, key, body[key])
    if "labels" in body:
        i.labels = [_label(ctx, n, create=True).name for n in _label_names(body)]
    action = "edited" if changes else None
    if body.get("state") and body["state"] != i.state:
        if i.is_pull and r.pulls[i.number].merged:
            raise GitHubError(422, "Validation Failed", errors=[{"resource": "Issue", "code": "custom",
                                                                 "message": "merged pull requests stay closed"}])
        i.state = body["state"]
        i.state_reason = body.get("state_reason") or ("completed" if i.state == "closed" else "reopened")
        i.closed_at = now if i.state == "closed" else None
        i.closed_by = actor if i.state == "closed" else None
        action = "closed" if i.state == "closed" else "reopened"
        if changes:
            _issue_or_pull_event(ctx, i, "edited", actor, changes)
    i.updated_at = now
    if action:
        _issue_or_pull_event(ctx, i, action, actor, changes if action == "edited" else None)
    return Reply(200, ctx.render.issue(r, i))


def _issue_or_pull_event(ctx: Ctx, i: Issue, action: str, actor, changes) -> None:
    if i.is_pull:
        pull_event(ctx.fake, ctx.repo, ctx.repo.pulls[i.number], action, actor,
                   extra={"changes": changes} if changes else None)
    else:
        issue_event(ctx.fake, ctx.repo, i, action, actor, extra={"changes": changes} if changes else None)


# --- labels --------------------------------------------------------------------------------------

@route("issues/add-labels")
async def add_labels(ctx: Ctx) -> Reply:
    ctx.require_permission("issues")
    r, i = ctx.repo, _issue(ctx)
    for name in _label_names(ctx.json()):
        lab = _label(ctx, name, create=True)
        if lab.name.lower() not in [x.lower() for x in i.labels]:
            i.labels.append(lab.name)
            _label_event(ctx, i, "labeled", lab)
    i.updated_at = ctx.state.now()
    return Reply(200, [ctx.render.label(r, r.labels[n.lower()]) for n in i.labels])


def _label_event(ctx: Ctx, i: Issue, action: str, lab: Label) -> None:
    r = ctx.repo
    extra = {"label": ctx.render.label(r, lab)}
    if i.is_pull:
        pull_event(ctx.fake, r, r.pulls[i.number], action, ctx.actor, extra=extra)
    else:
        issue_event(ctx.fake, r, i, action, ctx.actor, extra=extra)


@route("issues/remove-label")
async def remove_label(ctx: Ctx) -> Reply:
    ctx.require_permission("issues")
    r, i = ctx.repo, _issue(ctx)
    name = ctx.params["name"]
    match = [x for x in i.labels if x.lower() == name.lower()]
    if not match:
        raise GitHubError(404, "Label does not exist")
    i.labels.remove(match[0])
    _label_event(ctx, i, "unlabeled", r.labels[match[0].lower()])
    return Reply(200, [ctx.render.label(r, r.labels[n.lower()]) for n in i.labels])


@route("issues/list-labels-on-issue")
async def labels_on_issue(ctx: Ctx) -> Reply:
    r, i = ctx.repo, _issue(ctx)
    return ctx.page([ctx.render.label(r, r.labels[n.lower()]) for n in i.labels])


@route("issues/list-labels-for-repo")
async def labels_for_repo(ctx: Ctx) -> Reply:
    r = ctx.repo
    return ctx.page([ctx.render.label(r, lab) for lab in r.labels.values()])


@route("issues/create-label")
async def create_label(ctx: Ctx) -> Reply:
    ctx.require_permission("issues")
    r = ctx.repo
    body = ctx.json()
    if body["name"].lower() in r.labels:
        raise GitHubError(422, "Validation Failed", errors=[{"resource": "Label", "code": "already_exists",
                                                             "field": "name"}])
    lab = _label(ctx, body["name"], create=True)
    lab.color = body.get("color", lab.color).lstrip("#")
    lab.description = body.get("description")
    return Reply(201, ctx.render.label(r, lab))


@route("issues/get-label")
async def get_label(ctx: Ctx) -> Reply:
    return Reply(200, ctx.render.label(ctx.repo, _label(ctx, ctx.params["name"], create=False)))


@route("issues/update-label")
async def update_label(ctx: Ctx) -> Reply:
    ctx.require_permission("issues")
    r = ctx.repo
    lab = _label(ctx, ctx.params["name"], create=False)
    body = ctx.json()
    if body.get("new_name"):
        del r.labels[lab.name.lower()]
        for i in r.issues.values():
            i.labels = [body["new_name"] if x.lower() == lab.name.lower() else x for x in i.labels]
        lab.name = body["new_name"]
        r.labels[lab.name.lower()] = lab
    if "color" in body:
        lab.color = body["color"].lstrip("#")
    if "description" in body:
        lab.description = body["description"]
    return Reply(200, ctx.render.label(r, lab))


# --- comments ------------------------------------------------------------------------------------

@route("issues/list-comments")
async def list_comments(ctx: Ctx) -> Reply:
    r, i = ctx.repo, _issue(ctx)
    return ctx.page([ctx.render.comment(r, r.comments[c]) for c in i.comment_ids])


@route("issues/create-comment")
async def create_comment(ctx: Ctx) -> Reply:
    # a person with read access comments on issues and pull requests; an App needs the issues (or,
    # on a pull request, the pull requests) permission to write
    ctx.require_permission("pull_requests" if _issue(ctx).is_pull and
                           ctx.installation and ctx.installation.permissions.get("issues") != "write" else "issues",
                           "write" if ctx.installation is not None else "read")
    r, i = ctx.repo, _issue(ctx)
    actor = ctx.require_actor()
    now = ctx.state.now()
    c = Comment(ctx.state.new_id(), i.number, actor, ctx.json()["body"], now, now)
    r.comments[c.id] = c
    i.comment_ids.append(c.id)
    i.updated_at = now
    comment_event(ctx.fake, r, c, "created", actor)
    return Reply(201, ctx.render.comment(r, c),
                 headers={"Location": f"{ctx.render.api}/repos/{r.full_name}/issues/comments/{c.id}"})


@route("issues/get-comment")
async def get_comment(ctx: Ctx) -> Reply:
    return Reply(200, ctx.render.comment(ctx.repo, _comment(ctx)))


@route("issues/update-comment")
async def update_comment(ctx: Ctx) -> Reply:
    _require_author_or_write(ctx, "issues", _comment(ctx).user.login)
    r, c = ctx.repo, _comment(ctx)
    actor = ctx.require_actor()
    old = c.body
    c.body = ctx.json()["body"]
    c.updated_at = ctx.state.now()
    if old != c.body:
        comment_event(ctx.fake, r, c, "edited", actor, changes={"body": {"from": old}})
    return Reply(200, ctx.render.comment(r, c))


@route("issues/delete-comment")
async def delete_comment(ctx: Ctx) -> Reply:
    _require_author_or_write(ctx, "issues", _comment(ctx).user.login)
    r, c = ctx.repo, _comment(ctx)
    del r.comments[c.id]
    r.issues[c.issue_number].comment_ids.remove(c.id)
    return Reply(204)


# --- reactions -----------------------------------------------------------------------------------

def _react(ctx: Ctx, reactions: list[Reaction]) -> Reply:
    actor = ctx.require_actor()
    content = ctx.json()["content"]
    for x in reactions:
        if x.user.login == actor.login and x.content == content:
            return Reply(200, ctx.render.reaction(x))      # GitHub: 200 when it already exists
    x = Reaction(ctx.state.new_id(), actor, content, ctx.state.now())
    reactions.append(x)
    return Reply(201, ctx.render.reaction(x))


def _list_reactions(ctx: Ctx, reactions: list[Reaction]) -> Reply:
    content = ctx.query.get("content")
    return ctx.page([ctx.render.reaction(x) for x in reactions if not content or x.content == content])


@route("reactions/create-for-issue-comment")
async def react_comment(ctx: Ctx) -> Reply:
    ctx.require_permission("issues", "write" if ctx.installation is not None else "read")   # anyone who reads reacts
    return _react(ctx, _comment(ctx).reactions)


@route("reactions/list-for-issue-comment")
async def list_comment_reactions(ctx: Ctx) -> Reply:
    return _list_reactions(ctx, _comment(ctx).reactions)


@route("reactions/create-for-issue")
async def react_issue(ctx: Ctx) -> Reply:
    ctx.require_permission("issues", "write" if ctx.installation is not None else "read")   # anyone who reads reacts
    return _react(ctx, _issue(ctx).reactions)


@route("reactions/list-for-issue")
async def list_issue_reactions(ctx: Ctx) -> Reply:
    return _list_reactions(ctx, _issue(ctx).reactions)
