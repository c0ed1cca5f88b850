"""Webhook events implied by the fake's state changes (what GitHub would send the App).

Only repositories the App is installed on produce events, and every payload carries
``installation: {id, node_id}`` like GitHub's App deliveries. Payloads are built from the real
examples by :meth:`bot.fakegithub.webhooks.Webhooks.build` with the fake's objects laid over them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from bot.fakegithub.objects import node_id

if TYPE_CHECKING:
    from bot.fakegithub.server import FakeGitHub
    from bot.fakegithub.state import CheckRun, Comment, Issue, Pull, RefChange, Repo, User

ZERO = "0" * 40


def _common(fake: "FakeGitHub", repo: "Repo", sender: "User | None") -> dict | None:
    inst = fake.state.installation_for(repo)
    if inst is None:
        return None
    sender = sender or repo.owner
    out = {"repository": fake.render.repo(repo), "sender": fake.render.user(sender),
           "installation": {"id": inst.id, "node_id": node_id("MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u", inst.id)}}
    return out


def _emit(fake: "FakeGitHub", event: str, action: str | None, repo: "Repo", sender, fields: dict,
          *, template: str | None = None) -> None:
    common = _common(fake, repo, sender)
    if common is None:
        return
    payload = fake.webhooks.build(event, action, {**common, **fields}, template=template)
    if repo.owner.type != "Organization":
        payload.pop("organization", None)
    fake.webhooks.emit(event, payload)


def on_ref_changes(fake: "FakeGitHub", changes: list["RefChange"], *, pusher: "User | None" = None,
                   forced: bool = False) -> None:
    """``push`` for each moved branch or tag; ``pull_request.synchronize`` for open PRs whose head
    branch moved."""
    for ch in changes:
        repo = ch.repo
        if ch.ref.startswith("refs/heads/") or ch.ref.startswith("refs/tags/"):
            after = ch.after or ZERO
            before = ch.before or ZERO
            commits = []
            if ch.after:
                shas = repo.git.log(ch.after, exclude=ch.before if ch.before else None, limit=20)
                commits = [_push_commit(fake, repo, s) for s in shas]
            _emit(fake, "push", None, repo, pusher, {
                "ref": ch.ref, "before": before, "after": after, "created": ch.before is None,
                "deleted": ch.after is None, "forced": forced, "base_ref": None,
                "compare": f"{fake.render.web}/{repo.full_name}/compare/{before[:12]}...{after[:12]}",
                "commits": commits, "head_commit": commits[-1] if commits else None,
                "pusher": {"name": (pusher.login if pusher else repo.owner.login), "email": None}})
        if ch.ref.startswith("refs/heads/") and ch.after is None:
            _close_pulls_of_deleted_branch(fake, repo, ch.ref[len("refs/heads/"):], pusher)
        if ch.ref.startswith("refs/heads/") and ch.after:
            branch = ch.ref[len("refs/heads/"):]
            for target in fake.state.repos.values():
                for p in target.pulls.values():
                    if (p.head_repo_id == repo.id and p.head_ref == branch and not p.merged
                            and target.issues[p.number].state == "open"):
                        before = p.last_head_sha
                        fake.state.head_sha(target, p)
                        target.issues[p.number].updated_at = fake.state.now()
                        pull_event(fake, target, p, "synchronize", pusher,
                                   extra={"before": before, "after": ch.after})


def _close_pulls_of_deleted_branch(fake: "FakeGitHub", repo: "Repo", branch: str, actor) -> None:
    """GitHub closes an open pull request whose head branch is deleted."""
    now = fake.state.now()
    for target in fake.state.repos.values():
        for p in target.pulls.values():
            issue = target.issues[p.number]
            if p.head_repo_id == repo.id and p.head_ref == branch and not p.merged and issue.state == "open":
                issue.state, issue.closed_at, issue.updated_at = "closed", now, now
                issue.closed_by = actor
                pull_event(fake, target, p, "closed", actor)


def _push_commit(fake: "FakeGitHub", repo: "Repo", sha: str) -> dict:
    from bot.fakegithub.objects import iso

    c = repo.git.commit(sha)
    return {"id": sha, "tree_id": c.tree, "distinct": True, "message": c.message.rstrip("\n"),
            "timestamp": iso(c.committer_time), "url": f"{fake.render.web}/{repo.full_name}/commit/{sha}",
            "author": {"name": c.author_name, "email": c.author_email},
            "committer": {"name": c.committer_name, "email": c.committer_email},
            "added": [], "removed": [], "modified": []}


def pull_event(fake: "FakeGitHub", repo: "Repo", pull: "Pull", action: str, sender: "User | None",
               *, extra: dict | None = None) -> None:
    pr = fake.render.pull(repo, pull, mergeable=(None, "unknown", None))
    fields = {"number": pull.number, "pull_request": pr, **(extra or {})}
    template = None
    if action == "closed":
        template = "pull_request.closed.merged" if pull.merged else "pull_request.closed"
    _emit(fake, "pull_request", action, repo, sender, fields, template=template)


def issue_event(fake: "FakeGitHub", repo: "Repo", issue: "Issue", action: str, sender: "User | None",
                *, extra: dict | None = None) -> None:
    _emit(fake, "issues", action, repo, sender, {"issue": fake.render.issue(repo, issue), **(extra or {})})


def comment_event(fake: "FakeGitHub", repo: "Repo", comment: "Comment", action: str, sender: "User | None",
                  *, changes: dict | None = None) -> None:
    issue = repo.issues[comment.issue_number]
    fields = {"issue": fake.render.issue(repo, issue), "comment": fake.render.comment(repo, comment)}
    if changes is not None:
        fields["changes"] = changes
    template = None
    if action == "created":
        template = "issue_comment.created.on-pull-request" if issue.is_pull else "issue_comment.created"
    _emit(fake, "issue_comment", action, repo, sender, fields, template=template)


def check_run_event(fake: "FakeGitHub", repo: "Repo", run: "CheckRun", action: str, sender: "User | None",
                    *, extra: dict | None = None) -> None:
    _emit(fake, "check_run", action, repo, sender, {"check_run": fake.render.check_run(repo, run), **(extra or {})})


def review_event(fake: "FakeGitHub", repo: "Repo", pull: "Pull", review, action: str, sender) -> None:
    rendered = fake.render.review(repo, pull, review)
    rendered["state"] = rendered["state"].lower()     # webhooks say "approved", REST says "APPROVED"
    _emit(fake, "pull_request_review", action, repo, sender, {
        "review": rendered,
        "pull_request": fake.render.pull(repo, pull, simple=True)})


def _listed(repos) -> list[dict]:
    return [{"id": r.id, "node_id": node_id("R", r.id), "name": r.name, "full_name": r.full_name,
             "private": r.private} for r in repos]


def installation_payload(fake: "FakeGitHub", inst, action: str) -> dict:
    """GitHub's ``installation`` payload for ``action`` with the repositories the installation covers."""
    app = next(iter(fake.state.apps.values()), None)
    repos = [r for r in fake.state.repos.values() if r.owner.login.lower() == inst.account.login.lower()
             and (inst.repository_ids is None or r.id in inst.repository_ids)]
    return fake.webhooks.build("installation", action, {
        "installation": fake.render.installation(inst, app) if app else {"id": inst.id},
        "sender": fake.render.user(inst.account), "repositories": _listed(repos), "requester": None})


def installation_event(fake: "FakeGitHub", inst) -> None:
    """``installation.created`` with the repositories the installation covers."""
    if next(iter(fake.state.apps.values()), None) is None:
        return
    fake.webhooks.emit("installation", installation_payload(fake, inst, "created"))


def installation_repositories_removed(fake: "FakeGitHub", inst, repos) -> dict:
    """GitHub's ``installation_repositories.removed`` payload naming ``repos``."""
    app = next(iter(fake.state.apps.values()), None)
    return fake.webhooks.build("installation_repositories", "removed", {
        "installation": fake.render.installation(inst, app) if app else {"id": inst.id},
        "sender": fake.render.user(inst.account),
        "repository_selection": "all" if inst.repository_ids is None else "selected",
        "repositories_added": [], "repositories_removed": _listed(repos), "requester": None})


def workflow_run_event(fake: "FakeGitHub", repo: "Repo", run) -> None:
    """``workflow_run.completed`` for a finished dispatched run."""
    rendered = fake.render.workflow_run(repo, run)
    rendered["head_commit"] = _push_commit(fake, repo, run.head_sha)
    for key in ("author", "committer"):
        rendered["head_commit"][key] = {"name": rendered["head_commit"][key]["name"],
                                        "email": rendered["head_commit"][key]["email"]}
    rendered["head_commit"]["id"] = run.head_sha
    _emit(fake, "workflow_run", run.status if run.status == "completed" else "in_progress", repo, run.actor,
          {"workflow_run": rendered})
