"""JSON representations of the fake's state in GitHub's response shapes.

Each builder sets the fields a client reads (ids, names, numbers, shas, states, URLs under the
fake's own base URL, like a GitHub Enterprise host) and :func:`bot.fakegithub.contract.fill`
completes the remaining required fields of the named schema, so every object passes GitHub's
response schema (checked again on every response by the contract middleware).
"""
from __future__ import annotations

import base64
import hashlib
from datetime import datetime, timezone

from bot.fakegithub.contract import fill
from bot.fakegithub.state import App, Artifact, CheckRun, Comment, Installation, Issue, Label, Pull, Reaction, Repo, Review, State, User, WorkflowRun


def iso(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(int(t), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, id: int) -> str:
    return base64.b64encode(f"0:{kind}{id}".encode()).decode().rstrip("=")


class Render:
    """Builders bound to one fake (its state and base URL ``api``, e.g. ``http://127.0.0.1:PORT``)."""

    def __init__(self, state: State, api: str, *, git_http: bool = False):
        self.state = state
        self.git_http = git_http
        self.api = api.rstrip("/")
        self.web = self.api          # html_url host: the fake serves no HTML, the links are stable ids

    # --- people --------------------------------------------------------------------------------
    def user(self, u: User | None) -> dict | None:
        if u is None:
            return None
        out = {
            "login": u.login, "id": u.id, "node_id": node_id("U", u.id), "type": u.type, "site_admin": False,
            "url": f"{self.api}/users/{u.login}", "html_url": f"{self.web}/{u.login}",
            "avatar_url": f"{self.web}/avatars/{u.id}", "gravatar_id": ""}
        for key in ("followers", "following", "gists", "starred", "subscriptions", "organizations", "repos",
                    "events", "received_events"):
            out[f"{key}_url"] = f"{self.api}/users/{u.login}/{key.replace('_', '/')}"
        if u.name:
            out["name"] = u.name
        if u.email:
            out["email"] = u.email
        return fill("simple-user", out)

    def app(self, a: App) -> dict:
        return fill("integration", {
            "id": a.id, "slug": a.slug, "node_id": node_id("A", a.id), "name": a.name, "owner": self.user(a.owner),
            "description": None, "external_url": f"{self.web}/apps/{a.slug}", "html_url": f"{self.web}/apps/{a.slug}",
            "created_at": iso(0), "updated_at": iso(0),
            "permissions": dict(a.permissions) if a.permissions is not None else {
                "metadata": "read", "contents": "write", "pull_requests": "write", "issues": "write",
                "checks": "write", "actions": "write"},
            "events": list(a.events) if a.events is not None else [
                "push", "pull_request", "issue_comment", "issues", "check_run", "check_suite",
                "pull_request_review", "workflow_run"],
            "installations_count": sum(1 for _ in self.state.installations.values())})

    def installation(self, inst: Installation, app: App) -> dict:
        return fill("installation", {
            "id": inst.id, "app_id": app.id, "app_slug": app.slug, "target_id": inst.account.id,
            "target_type": inst.account.type if inst.account.type != "Bot" else "User",
            "account": self.user(inst.account), "single_file_name": None,
            "repository_selection": "all" if inst.repository_ids is None else "selected",
            "access_tokens_url": f"{self.api}/app/installations/{inst.id}/access_tokens",
            "repositories_url": f"{self.api}/installation/repositories",
            "html_url": f"{self.web}/settings/installations/{inst.id}",
            "events": ["push", "pull_request", "issue_comment", "issues", "check_run"],
            "permissions": dict(inst.permissions), "created_at": iso(inst.created_at),
            "updated_at": iso(inst.created_at),
            "suspended_by": self.user(inst.suspended_by) if inst.suspended_by else None,
            "suspended_at": iso(inst.suspended_at) if inst.suspended_at is not None else None})

    # --- repositories --------------------------------------------------------------------------
    def _repo_urls(self, r: Repo) -> dict:
        base = f"{self.api}/repos/{r.full_name}"
        names = ["archive", "assignees", "blobs", "branches", "collaborators", "comments", "commits", "compare",
                 "contents", "contributors", "deployments", "downloads", "events", "forks", "git_commits",
                 "git_refs", "git_tags", "hooks", "issue_comment", "issue_events", "issues", "keys", "labels",
                 "languages", "merges", "milestones", "notifications", "pulls", "releases", "stargazers",
                 "statuses", "subscribers", "subscription", "tags", "teams", "trees"]
        out = {f"{n}_url": f"{base}/{n.replace('_', '/')}" for n in names}
        out["url"] = base
        return out

    def repo(self, r: Repo, *, full: bool = False) -> dict:
        open_issues = sum(1 for i in r.issues.values() if i.state == "open")
        obj = {
            **self._repo_urls(r), "id": r.id, "node_id": node_id("R", r.id), "name": r.name,
            "full_name": r.full_name, "owner": self.user(r.owner), "private": r.private,
            "visibility": "private" if r.private else "public",
            "html_url": f"{self.web}/{r.full_name}", "description": r.description, "fork": r.fork_of is not None,
            "clone_url": f"{self.api}/{r.full_name}.git" if self.git_http else r.path.as_uri(),
            "git_url": f"{self.api}/{r.full_name}.git" if self.git_http else r.path.as_uri(), "ssh_url": str(r.path),
            "svn_url": f"{self.web}/{r.full_name}", "mirror_url": None, "homepage": None, "language": None,
            "default_branch": r.default_branch, "archived": False, "disabled": False,
            "has_issues": r.has_issues, "has_projects": False, "has_wiki": False, "has_pages": False,
            "has_downloads": True, "has_discussions": False, "license": None, "topics": [],
            "forks": 0, "forks_count": 0, "stargazers_count": 0, "watchers": 0, "watchers_count": 0,
            "open_issues": open_issues, "open_issues_count": open_issues, "size": 0,
            "allow_merge_commit": r.allow_merge_commit, "allow_squash_merge": r.allow_squash_merge,
            "allow_rebase_merge": r.allow_rebase_merge,
            "created_at": iso(r.created_at), "updated_at": iso(r.pushed_at), "pushed_at": iso(r.pushed_at),
        }
        if full:
            obj.update({"network_count": 0, "subscribers_count": 0})
            if r.fork_of is not None and r.fork_of in self.state.repos_by_id:
                parent = self.repo(self.state.repos_by_id[r.fork_of])
                obj["parent"] = parent
                obj["source"] = parent
            return fill("full-repository", obj)
        return fill("repository", obj)

    def minimal_repo(self, r: Repo) -> dict:
        return fill("minimal-repository", {k: v for k, v in self.repo(r).items()})

    # --- git -----------------------------------------------------------------------------------
    def git_ref(self, r: Repo, name: str, sha: str) -> dict:
        return fill("git-ref", {
            "ref": name, "node_id": node_id("REF", int(hashlib.sha1(name.encode()).hexdigest()[:8], 16)),
            "url": f"{self.api}/repos/{r.full_name}/git/{name}",
            "object": {"type": "commit", "sha": sha, "url": f"{self.api}/repos/{r.full_name}/git/commits/{sha}"}})

    def _sig(self, name: str, email: str, t: int) -> dict:
        return {"name": name, "email": email, "date": iso(t)}

    def _login_for(self, email: str) -> dict | None:
        for u in self.state.users.values():
            if u.email and u.email.lower() == email.lower():
                return self.user(u)
        return None

    def commit_status(self, r: Repo, sha: str, st: dict) -> dict:
        """A ``simple-commit-status`` (an entry of the combined status of a ref)."""
        return {"id": st["id"], "node_id": node_id("SC", st["id"]), "state": st["state"], "context": st["context"],
                "description": st.get("description"), "target_url": st.get("target_url"),
                "avatar_url": None, "url": f"{self.api}/repos/{r.full_name}/statuses/{sha}",
                "created_at": iso(st["created_at"]), "updated_at": iso(st["updated_at"])}

    def commit(self, r: Repo, sha: str, *, files: bool = False) -> dict:
        c = r.git.commit(sha)
        obj = {
            "url": f"{self.api}/repos/{r.full_name}/commits/{sha}", "sha": sha, "node_id": node_id("C", int(sha[:8], 16)),
            "html_url": f"{self.web}/{r.full_name}/commit/{sha}",
            "comments_url": f"{self.api}/repos/{r.full_name}/commits/{sha}/comments",
            "commit": {
                "url": f"{self.api}/repos/{r.full_name}/git/commits/{sha}",
                "author": self._sig(c.author_name, c.author_email, c.author_time),
                "committer": self._sig(c.committer_name, c.committer_email, c.committer_time),
                "message": c.message.rstrip("\n"), "comment_count": 0,
                "tree": {"sha": c.tree, "url": f"{self.api}/repos/{r.full_name}/git/trees/{c.tree}"},
                "verification": {"verified": False, "reason": "unsigned", "payload": None, "signature": None,
                                 "verified_at": None}},
            "author": self._login_for(c.author_email), "committer": self._login_for(c.committer_email),
            "parents": [{"sha": p, "url": f"{self.api}/repos/{r.full_name}/commits/{p}",
                         "html_url": f"{self.web}/{r.full_name}/commit/{p}"} for p in c.parents],
        }
        if files:
            base = c.parents[0] if c.parents else None
            entries = r.git.changed_files(base, sha) if base else []
            obj["files"] = [self.diff_entry(r, sha, e) for e in entries]
            adds = sum(e["additions"] for e in entries)
            dels = sum(e["deletions"] for e in entries)
            obj["stats"] = {"additions": adds, "deletions": dels, "total": adds + dels}
        return fill("commit", obj)

    def git_commit(self, r: Repo, sha: str) -> dict:
        c = r.git.commit(sha)
        return fill("git-commit", {
            "sha": sha, "node_id": node_id("C", int(sha[:8], 16)), "url": f"{self.api}/repos/{r.full_name}/git/commits/{sha}",
            "html_url": f"{self.web}/{r.full_name}/commit/{sha}",
            "author": self._sig(c.author_name, c.author_email, c.author_time),
            "committer": self._sig(c.committer_name, c.committer_email, c.committer_time),
            "tree": {"sha": c.tree, "url": f"{self.api}/repos/{r.full_name}/git/trees/{c.tree}"},
            "message": c.message.rstrip("\n"),
            "parents": [{"sha": p, "url": f"{self.api}/repos/{r.full_name}/git/commits/{p}",
                         "html_url": f"{self.web}/{r.full_name}/commit/{p}"} for p in c.parents],
            "verification": {"verified": False, "reason": "unsigned", "payload": None, "signature": None,
                             "verified_at": None}})

    def diff_entry(self, r: Repo, sha: str, e: dict) -> dict:
        out = dict(e)
        out.update({"blob_url": f"{self.web}/{r.full_name}/blob/{sha}/{e['filename']}",
                    "raw_url": f"{self.web}/{r.full_name}/raw/{sha}/{e['filename']}",
                    "contents_url": f"{self.api}/repos/{r.full_name}/contents/{e['filename']}?ref={sha}"})
        return fill("diff-entry", out)

    # --- issues --------------------------------------------------------------------------------
    def label(self, r: Repo, lab: Label) -> dict:
        return fill("label", {"id": lab.id, "node_id": node_id("L", lab.id), "name": lab.name, "color": lab.color,
                              "description": lab.description, "default": False,
                              "url": f"{self.api}/repos/{r.full_name}/labels/{lab.name}"})

    def _labels(self, r: Repo, names: list[str]) -> list[dict]:
        return [self.label(r, r.labels[n.lower()]) for n in names if n.lower() in r.labels]

    def _reactions(self, url: str, reactions: list[Reaction]) -> dict:
        counts = {k: 0 for k in ("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket")}
        for x in reactions:
            counts[x.content] = counts.get(x.content, 0) + 1
        return {"url": url, "total_count": len(reactions), **counts}

    def issue(self, r: Repo, i: Issue) -> dict:
        url = f"{self.api}/repos/{r.full_name}/issues/{i.number}"
        obj = {
            "id": i.id, "node_id": node_id("I", i.id), "number": i.number, "title": i.title, "body": i.body,
            "user": self.user(i.user), "state": i.state, "locked": False, "active_lock_reason": None,
            "labels": self._labels(r, i.labels), "assignee": self.user(i.assignees[0]) if i.assignees else None,
            "assignees": [self.user(a) for a in i.assignees], "milestone": None,
            "comments": len(i.comment_ids), "created_at": iso(i.created_at), "updated_at": iso(i.updated_at),
            "closed_at": iso(i.closed_at), "closed_by": self.user(i.closed_by), "author_association": self._assoc(r, i.user),
            "url": url, "repository_url": f"{self.api}/repos/{r.full_name}",
            "labels_url": url + "/labels{/name}", "comments_url": url + "/comments", "events_url": url + "/events",
            "html_url": f"{self.web}/{r.full_name}/{'pull' if i.is_pull else 'issues'}/{i.number}",
            "reactions": self._reactions(url + "/reactions", i.reactions),
        }
        if i.state_reason:
            obj["state_reason"] = i.state_reason
        if i.is_pull:
            p = r.pulls[i.number]
            obj["pull_request"] = {"url": f"{self.api}/repos/{r.full_name}/pulls/{i.number}",
                                   "html_url": f"{self.web}/{r.full_name}/pull/{i.number}",
                                   "diff_url": f"{self.web}/{r.full_name}/pull/{i.number}.diff",
                                   "patch_url": f"{self.web}/{r.full_name}/pull/{i.number}.patch",
                                   "merged_at": iso(p.merged_at)}
        return fill("issue", obj)

    def comment(self, r: Repo, c: Comment) -> dict:
        url = f"{self.api}/repos/{r.full_name}/issues/comments/{c.id}"
        is_pull = r.issues[c.issue_number].is_pull
        return fill("issue-comment", {
            "id": c.id, "node_id": node_id("IC", c.id), "url": url, "body": c.body, "user": self.user(c.user),
            "html_url": f"{self.web}/{r.full_name}/{'pull' if is_pull else 'issues'}/{c.issue_number}#issuecomment-{c.id}",
            "issue_url": f"{self.api}/repos/{r.full_name}/issues/{c.issue_number}",
            "created_at": iso(c.created_at), "updated_at": iso(c.updated_at),
            "author_association": self._assoc(r, c.user), "reactions": self._reactions(url + "/reactions", c.reactions)})

    def reaction(self, x: Reaction) -> dict:
        return fill("reaction", {"id": x.id, "node_id": node_id("RE", x.id), "user": self.user(x.user),
                                 "content": x.content, "created_at": iso(x.created_at)})

    def _assoc(self, r: Repo, u: User) -> str:
        if u.login.lower() == r.owner.login.lower():
            return "OWNER"
        if r.collaborators.get(u.login) in ("write", "maintain", "admin", "triage"):
            return "COLLABORATOR"
        return "NONE"

    # --- pulls ---------------------------------------------------------------------------------
    def _branch_side(self, r: Repo, ref: str, sha: str) -> dict:
        return {"label": f"{r.owner.login}:{ref}", "ref": ref, "sha": sha, "user": self.user(r.owner),
                "repo": self.repo(r)}

    def pull(self, r: Repo, p: Pull, *, simple: bool = False, mergeable: tuple | None = None) -> dict:
        i = r.issues[p.number]
        head_repo = self.state.repos_by_id.get(p.head_repo_id, r)
        head_sha = self.state.head_sha(r, p)
        base_sha = p.base_sha_at_merge if p.merged else (r.git.ref(f"refs/heads/{p.base_ref}") or "")
        url = f"{self.api}/repos/{r.full_name}/pulls/{p.number}"
        issue_url = f"{self.api}/repos/{r.full_name}/issues/{p.number}"
        html = f"{self.web}/{r.full_name}/pull/{p.number}"
        state = "closed" if i.state == "closed" else "open"
        obj = {
            "url": url, "id": p.id, "node_id": node_id("PR", p.id), "number": p.number, "html_url": html,
            "diff_url": html + ".diff", "patch_url": html + ".patch", "issue_url": issue_url,
            "commits_url": url + "/commits", "review_comments_url": url + "/comments",
            "review_comment_url": f"{self.api}/repos/{r.full_name}/pulls/comments{{/number}}",
            "comments_url": issue_url + "/comments",
            "statuses_url": f"{self.api}/repos/{r.full_name}/statuses/{head_sha}",
            "state": state, "locked": False, "title": i.title, "body": i.body, "user": self.user(i.user),
            # pull-request(-simple) types a label's description as a non-null string
            "labels": [dict(x, description=x["description"] or "") for x in self._labels(r, i.labels)],
            "milestone": None, "active_lock_reason": None,
            "created_at": iso(i.created_at), "updated_at": iso(i.updated_at), "closed_at": iso(i.closed_at),
            "merged_at": iso(p.merged_at), "merge_commit_sha": p.merge_commit_sha,
            "assignee": self.user(i.assignees[0]) if i.assignees else None,
            "assignees": [self.user(a) for a in i.assignees], "requested_reviewers": [], "requested_teams": [],
            "head": self._branch_side(head_repo, p.head_ref, head_sha),
            "base": self._branch_side(r, p.base_ref, base_sha),
            "_links": {k: {"href": v} for k, v in {
                "self": url, "html": html, "issue": issue_url, "comments": issue_url + "/comments",
                "review_comments": url + "/comments", "review_comment": f"{self.api}/repos/{r.full_name}/pulls/comments{{/number}}",
                "commits": url + "/commits", "statuses": f"{self.api}/repos/{r.full_name}/statuses/{head_sha}"}.items()},
            "author_association": self._assoc(r, i.user), "auto_merge": None, "draft": p.draft,
        }
        if simple:
            return fill("pull-request-simple", obj)
        m_value, m_state, m_sha = mergeable if mergeable else (None, "unknown", None)
        if not p.merged and m_sha:
            obj["merge_commit_sha"] = m_sha
        commits = r.git.log(head_sha, exclude=base_sha) if (head_sha and base_sha and not p.merged) else []
        if p.merged and p.base_sha_at_merge:
            commits = r.git.log(head_sha, exclude=p.base_sha_at_merge) if head_repo is r else commits
        obj.update({
            "merged": p.merged, "mergeable": None if p.merged or state == "closed" else m_value,
            "rebaseable": None if p.merged else m_value,
            "mergeable_state": m_state, "merged_by": self.user(p.merged_by),
            "comments": len(i.comment_ids), "review_comments": 0, "maintainer_can_modify": p.maintainer_can_modify,
            "commits": len(commits), "additions": 0, "deletions": 0, "changed_files": 0,
        })
        return fill("pull-request", obj)

    def review(self, r: Repo, p: Pull, v: Review) -> dict:
        html = f"{self.web}/{r.full_name}/pull/{p.number}#pullrequestreview-{v.id}"
        return fill("pull-request-review", {
            "id": v.id, "node_id": node_id("PRR", v.id), "user": self.user(v.user), "body": v.body,
            "state": v.state, "commit_id": v.commit_id, "html_url": html,
            "pull_request_url": f"{self.api}/repos/{r.full_name}/pulls/{p.number}",
            "_links": {"html": {"href": html}, "pull_request": {"href": f"{self.api}/repos/{r.full_name}/pulls/{p.number}"}},
            "submitted_at": iso(v.submitted_at), "author_association": self._assoc(r, v.user)})

    # --- checks --------------------------------------------------------------------------------
    def check_run(self, r: Repo, c: CheckRun) -> dict:
        app = self.state.apps.get(c.app_id) if c.app_id else None
        url = f"{self.api}/repos/{r.full_name}/check-runs/{c.id}"
        pulls = [{"id": p.id, "number": p.number, "url": f"{self.api}/repos/{r.full_name}/pulls/{p.number}",
                  "head": {"ref": p.head_ref, "sha": self.state.head_sha(r, p),
                           "repo": {"id": r.id, "url": f"{self.api}/repos/{r.full_name}", "name": r.name}},
                  "base": {"ref": p.base_ref, "sha": r.git.ref(f"refs/heads/{p.base_ref}") or "",
                           "repo": {"id": r.id, "url": f"{self.api}/repos/{r.full_name}", "name": r.name}}}
                 for p in r.pulls.values()
                 if r.issues[p.number].state == "open" and self.state.head_sha(r, p) == c.head_sha]
        out = {"title": c.output.get("title"), "summary": c.output.get("summary"), "text": c.output.get("text"),
               "annotations_count": len(c.annotations),
               "annotations_url": url + "/annotations"}
        return fill("check-run", {
            "id": c.id, "node_id": node_id("CR", c.id), "head_sha": c.head_sha, "name": c.name, "url": url,
            "html_url": f"{self.web}/{r.full_name}/runs/{c.id}",
            "details_url": c.details_url or f"{self.web}/{r.full_name}/runs/{c.id}",
            "status": c.status, "conclusion": c.conclusion, "started_at": iso(c.started_at),
            "completed_at": iso(c.completed_at), "external_id": c.external_id or "",
            "check_suite": {"id": c.suite_id}, "output": out,
            "app": self.app(app) if app else None, "pull_requests": pulls})

    # --- actions -------------------------------------------------------------------------------
    def workflow_run(self, r: Repo, w: WorkflowRun) -> dict:
        url = f"{self.api}/repos/{r.full_name}/actions/runs/{w.id}"
        return fill("workflow-run", {
            "id": w.id, "node_id": node_id("WR", w.id), "name": w.workflow_id, "head_branch": w.ref,
            "head_sha": w.head_sha, "path": f".github/workflows/{w.workflow_id}", "display_title": w.workflow_id,
            "run_number": w.id, "run_attempt": 1, "event": "workflow_dispatch", "status": w.status,
            "conclusion": w.conclusion, "workflow_id": abs(hash(w.workflow_id)) % 10**8, "url": url,
            "html_url": f"{self.web}/{r.full_name}/actions/runs/{w.id}", "created_at": iso(w.created_at),
            "updated_at": iso(w.created_at), "actor": self.user(w.actor), "triggering_actor": self.user(w.actor),
            "jobs_url": url + "/jobs", "logs_url": url + "/logs", "check_suite_url": url + "/check-suite",
            "artifacts_url": url + "/artifacts", "cancel_url": url + "/cancel", "rerun_url": url + "/rerun",
            "workflow_url": f"{self.api}/repos/{r.full_name}/actions/workflows/{w.workflow_id}",
            "head_commit": None, "repository": self.minimal_repo(r), "head_repository": self.minimal_repo(r),
            "pull_requests": []})

    def artifact(self, r: Repo, w: WorkflowRun, a: Artifact) -> dict:
        url = f"{self.api}/repos/{r.full_name}/actions/artifacts/{a.id}"
        return fill("artifact", {
            "id": a.id, "node_id": node_id("AR", a.id), "name": a.name, "size_in_bytes": len(a.data), "url": url,
            "archive_download_url": url + "/zip", "expired": a.expired, "created_at": iso(a.created_at),
            "expires_at": iso(a.created_at + 90 * 86400), "updated_at": iso(a.created_at),
            "workflow_run": {"id": w.id, "repository_id": r.id, "head_repository_id": r.id,
                             "head_branch": w.ref, "head_sha": w.head_sha}})
