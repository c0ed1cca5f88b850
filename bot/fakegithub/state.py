"""The fake's state: users, the App and its installations, tokens, repositories (each backed by a
real bare git repository, see :mod:`bot.fakegithub.gitrepo`), issues, pull requests, comments,
labels, reactions, reviews, check runs, workflow runs.

Plain in-memory records; ids come from one counter so every id is unique across kinds (GitHub's
ids are too). Times are epoch seconds from :attr:`State.clock` (tests may replace it).
A pull request's head sha is read live from its head branch, so a ``git push`` to the bare
repository is seen on the next API call (:meth:`State.observe_refs` turns the change into
``push`` / ``pull_request.synchronize`` events).
"""
from __future__ import annotations

import fnmatch
import itertools
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bot.fakegithub.gitrepo import GitRepo

PERMISSION_ORDER = ("none", "read", "triage", "write", "maintain", "admin")
DEFAULT_APP_PERMISSIONS = {
    "metadata": "read", "contents": "write", "pull_requests": "write", "issues": "write",
    "checks": "write", "actions": "write", "statuses": "read",
}


@dataclass
class User:
    id: int
    login: str
    type: str = "User"          # "User" | "Bot" | "Organization"
    name: str | None = None
    email: str | None = None


@dataclass
class App:
    id: int
    slug: str
    name: str
    owner: User
    private_key_pem: str
    public_key_pem: str
    bot: User                   # "<slug>[bot]", the actor of installation-token calls
    webhook_secret: str = ""
    permissions: dict[str, str] | None = None     # None: the fixed set the bot's tests assume
    events: list[str] | None = None
    client_id: str = ""                           # the App's OAuth client (manifest Apps; user login to the dashboard)
    client_secret: str = ""


@dataclass
class ManifestCode:
    """A code GitHub handed back on the manifest flow's redirect: exchanged once, within an hour,
    by ``POST /app-manifests/{code}/conversions``."""

    code: str
    manifest: dict
    owner: User
    created_at: float
    used: bool = False


@dataclass
class Installation:
    id: int
    account: User
    repository_ids: set[int] | None = None           # None: all of the account's repositories
    permissions: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_APP_PERMISSIONS))
    created_at: float = 0.0
    # suspended by the account's owner (or the App's): GitHub then refuses the installation's tokens
    suspended_at: float | None = None
    suspended_by: "User | None" = None


@dataclass
class Token:
    token: str
    expires_at: float
    installation_id: int | None = None   # None: a personal token (plain token mode)
    user: User | None = None
    repository_ids: set[int] | None = None       # a token narrowed to some repositories
    permissions: dict[str, str] | None = None    # a token narrowed to some permissions
    app_id: int | None = None    # the App whose JWT minted it (its bot acts); None: the first App


@dataclass
class Label:
    id: int
    name: str
    color: str = "ededed"
    description: str | None = None


@dataclass
class Reaction:
    id: int
    user: User
    content: str
    created_at: float


@dataclass
class Comment:
    id: int
    issue_number: int
    user: User
    body: str
    created_at: float
    updated_at: float
    reactions: list[Reaction] = field(default_factory=list)


@dataclass
class Issue:
    """An issue or the issue half of a pull request (GitHub numbers them from one sequence)."""
    id: int
    number: int
    title: str
    body: str | None
    user: User
    created_at: float
    updated_at: float
    state: str = "open"
    state_reason: str | None = None
    closed_at: float | None = None
    closed_by: User | None = None
    labels: list[str] = field(default_factory=list)
    comment_ids: list[int] = field(default_factory=list)
    reactions: list[Reaction] = field(default_factory=list)
    assignees: list[User] = field(default_factory=list)
    is_pull: bool = False


@dataclass
class Review:
    id: int
    user: User
    body: str
    state: str               # APPROVED | CHANGES_REQUESTED | COMMENTED | PENDING
    commit_id: str
    submitted_at: float | None


@dataclass
class Pull:
    number: int
    id: int
    head_ref: str
    base_ref: str
    head_repo_id: int
    last_head_sha: str
    draft: bool = False
    maintainer_can_modify: bool = False
    merged: bool = False
    merged_at: float | None = None
    merged_by: User | None = None
    merge_commit_sha: str | None = None
    base_sha_at_merge: str | None = None
    reviews: list[Review] = field(default_factory=list)
    mergeable_unknown_polls: int = 0        # answer mergeable: null for this many more reads


@dataclass
class CheckRun:
    id: int
    name: str
    head_sha: str
    app_id: int | None
    status: str
    conclusion: str | None
    started_at: float
    completed_at: float | None
    output: dict
    details_url: str | None = None
    external_id: str | None = None
    annotations: list[dict] = field(default_factory=list)
    actions: list[dict] = field(default_factory=list)
    suite_id: int = 0


@dataclass
class WorkflowRun:
    id: int
    workflow_id: str          # the file name or id the dispatch named
    ref: str
    head_sha: str
    inputs: dict
    actor: User
    created_at: float
    status: str = "queued"
    conclusion: str | None = None
    artifacts: list["Artifact"] = field(default_factory=list)


@dataclass
class Artifact:
    id: int
    name: str
    data: bytes               # the zip archive served by download-artifact
    created_at: float
    expired: bool = False


@dataclass
class Ruleset:
    """A repository ruleset (Settings → Rules) on branches. ``rules``: GitHub's rule objects
    (``{"type": "required_status_checks", "parameters": {...}}``, the ``repository-rule-*`` schemas);
    ``branches``: the branch names it targets, as fnmatch patterns or ``~DEFAULT_BRANCH`` / ``~ALL``
    (GitHub's ``conditions.ref_name.include``); only an ``active`` ruleset's rules are returned by
    ``repos/get-branch-rules`` and enforced (``evaluate`` only reports, ``disabled`` does nothing)."""

    id: int
    name: str
    rules: list[dict]
    branches: tuple[str, ...] = ("~DEFAULT_BRANCH",)
    enforcement: str = "active"

    def applies_to(self, branch: str, default_branch: str) -> bool:
        if self.enforcement != "active":
            return False
        return any(p == "~ALL" or (p == "~DEFAULT_BRANCH" and branch == default_branch)
                   or fnmatch.fnmatchcase(branch, p) for p in self.branches)


@dataclass
class Repo:
    id: int
    owner: User
    name: str
    git: GitRepo
    default_branch: str = "main"
    private: bool = False
    description: str | None = None
    fork_of: int | None = None
    allow_merge_commit: bool = True
    allow_squash_merge: bool = True
    allow_rebase_merge: bool = True
    # draft pull requests: public repositories, or private ones on GitHub Team / Enterprise (docs.github.com,
    # "Changing the stage of a pull request"); False plays a private repository on GitHub Free
    drafts: bool = True
    # GitHub turns Issues off on a new fork (Settings → General → Features); creating one then answers 410
    has_issues: bool = True
    required_checks: list[str] = field(default_factory=list)     # branch protection on default branch
    # branch protection's checks[].app_id: a required check bound to one GitHub App (the others: any source)
    required_check_apps: dict[str, int] = field(default_factory=dict)
    rulesets: list[Ruleset] = field(default_factory=list)         # repository rulesets (FakeGitHub.add_ruleset)
    collaborators: dict[str, str] = field(default_factory=dict)  # login → permission
    labels: dict[str, Label] = field(default_factory=dict)       # lower-case name → label
    issues: dict[int, Issue] = field(default_factory=dict)
    pulls: dict[int, Pull] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    check_suites: dict[tuple[str, int], int] = field(default_factory=dict)   # (head sha, app id) → suite id
    statuses: dict[str, list[dict]] = field(default_factory=dict)  # commit sha → statuses, oldest first (other CI systems)
    workflow_runs: dict[int, WorkflowRun] = field(default_factory=dict)
    workflows: set[str] = field(default_factory=set)             # dispatchable workflow files
    ref_snapshot: dict[str, str] = field(default_factory=dict)
    created_at: float = 0.0
    pushed_at: float = 0.0
    first_number: int = 1        # the number of its first issue or PR (a repository with a past)

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    @property
    def path(self) -> Path:
        """The bare repository on disk: use it as a git remote (``git push <path> …``)."""
        return self.git.path

    def next_number(self) -> int:
        return max([self.first_number - 1, *self.issues]) + 1


@dataclass
class RefChange:
    repo: Repo
    ref: str
    before: str | None
    after: str | None


class State:
    def __init__(self, root: Path, clock: Callable[[], float] = time.time):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.clock = clock
        self._ids = itertools.count(1000)
        self.users: dict[str, User] = {}
        self.apps: dict[int, App] = {}
        self.installations: dict[int, Installation] = {}
        self.tokens: dict[str, Token] = {}
        self.repos: dict[str, Repo] = {}        # lower-case "owner/name" → repo
        self.repos_by_id: dict[int, Repo] = {}
        self.manifest_codes: dict[str, ManifestCode] = {}

    def now(self) -> float:
        return self.clock()

    def new_id(self) -> int:
        return next(self._ids)

    def check_suite_id(self, repo: "Repo", head_sha: str, app_id: int) -> int:
        """The check suite of ``app_id``'s check runs on ``head_sha``: one per (head, app), as
        GitHub makes one when an app's first run on a commit is created."""
        key = (head_sha, app_id)
        if key not in repo.check_suites:
            repo.check_suites[key] = self.new_id()
        return repo.check_suites[key]

    # --- users, apps, tokens -------------------------------------------------------------------
    def user(self, login: str, type: str = "User") -> User:
        u = self.users.get(login.lower())
        if u is None:
            u = self.users[login.lower()] = User(self.new_id(), login, type)
        return u

    def issue_token(self, *, installation_id: int | None = None, user: User | None = None,
                    ttl_s: float = 3600.0, token: str | None = None, app_id: int | None = None) -> Token:
        t = Token(token or "ghs_" + secrets.token_urlsafe(27), self.now() + ttl_s, installation_id, user,
                  app_id=app_id)
        self.tokens[t.token] = t
        return t

    def token_app(self, tok: Token) -> App | None:
        """The App an installation token acts for: the one whose JWT minted it, else the first."""
        return self.apps.get(tok.app_id) if tok.app_id is not None else next(iter(self.apps.values()), None)

    def expire_tokens(self) -> int:
        """Make every installation token expired (the next call with one gets 401)."""
        n = 0
        for t in self.tokens.values():
            if t.installation_id is not None:
                t.expires_at = self.now() - 1
                n += 1
        return n

    # --- repositories --------------------------------------------------------------------------
    def add_repo(self, owner: str, name: str, *, default_branch: str = "main", source: str | None = None,
                 private: bool = False, fork_of: "Repo | None" = None) -> Repo:
        key = f"{owner}/{name}".lower()
        if key in self.repos:
            raise ValueError(f"repository {owner}/{name} exists already in the fake")
        path = self.root / "repos" / owner / f"{name}.git"
        g = GitRepo.create(path, default_branch=default_branch, source=source)
        if source:
            g.refresh()
            head = g.ref(f"refs/heads/{default_branch}")
            if head is None:
                raise ValueError(f"{source} has no branch {default_branch!r}")
        from bot.fakegithub.gitrepo import git
        git(path, "symbolic-ref", "HEAD", f"refs/heads/{default_branch}")
        now = self.now()
        r = Repo(self.new_id(), self.user(owner), name, g, default_branch=default_branch, private=private,
                 fork_of=fork_of.id if fork_of else None, created_at=now, pushed_at=now)
        r.ref_snapshot = g.refs()
        self.repos[key] = r
        self.repos_by_id[r.id] = r
        return r

    def repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get(f"{owner}/{name}".lower())

    def observe_refs(self, repo: Repo) -> list[RefChange]:
        """Compare the bare repository's refs with the last snapshot; return what moved (pushes
        made with git directly) and remember the new state."""
        repo.git.refresh()
        now = repo.git.refs()
        changes = []
        for name in sorted(set(now) | set(repo.ref_snapshot)):
            if name.startswith("refs/pull/"):
                continue
            before, after = repo.ref_snapshot.get(name), now.get(name)
            if before != after:
                changes.append(RefChange(repo, name, before, after))
        repo.ref_snapshot = now
        if changes:
            repo.pushed_at = self.now()
        return changes

    def head_sha(self, repo: Repo, pull: Pull) -> str:
        """The PR's current head sha (its head branch, live). For a PR from another repository
        (a fork), the head commits are fetched into the base repository as
        ``refs/pull/<n>/head``, as GitHub does, so merges and diffs can see them."""
        head_repo = self.repos_by_id.get(pull.head_repo_id, repo)
        sha = head_repo.git.ref(f"refs/heads/{pull.head_ref}")
        if sha and not pull.merged:
            pull.last_head_sha = sha
            if head_repo is not repo and not repo.git.has_object(sha):
                from bot.fakegithub.gitrepo import git

                git(repo.path, "fetch", "--quiet", str(head_repo.path),
                    f"+refs/heads/{pull.head_ref}:refs/pull/{pull.number}/head")
                repo.git.refresh()
        return pull.last_head_sha

    def permission(self, repo: Repo, login: str) -> str:
        if login.lower() == repo.owner.login.lower():
            return "admin"
        return repo.collaborators.get(login, repo.collaborators.get(login.lower(), "read" if not repo.private else "none"))

    def installation_for(self, repo: Repo) -> Installation | None:
        for inst in self.installations.values():
            if inst.account.login.lower() == repo.owner.login.lower() and (
                    inst.repository_ids is None or repo.id in inst.repository_ids):
                return inst
        return None
