"""The local GitHub: an aiohttp server on 127.0.0.1 that serves the REST operations the bot uses,
held to GitHub's OpenAPI description.

Every API request goes through :meth:`FakeGitHub._dispatch`:

1. find the documented operation (unknown → 404 and an ``unknown-operation`` violation);
2. User-Agent required (GitHub answers 403 without one); ``X-GitHub-Api-Version`` recorded and
   checked against the versions GitHub serves;
3. openapi-core validates the request (invalid → 422 and an ``invalid-request`` violation);
4. a held request waits until the test releases it, then an injected fault, if one matches,
   answers instead (:mod:`bot.fakegithub.faults`);
5. authentication: App JWT (RS256, verified with the App's public key) for ``/app…``,
   installation or personal tokens elsewhere (expired/unknown → 401 "Bad credentials");
6. the repository in the path is looked up (outside the installation → 404), pushes made with git
   since the last call are noticed (``push``/``pull_request.synchronize`` events);
7. the handler runs; GET answers carry an ``ETag`` and a matching ``If-None-Match`` gets 304;
   rate-limit headers are set; the answer is validated against the response schema
   (invalid → an ``invalid-response`` violation: the fake drifted).

Tests assert ``fake.violations == []`` (the ``fake_github`` fixture does it at teardown).
"""
from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import re
import secrets
from pathlib import Path

from aiohttp import web

from bot.fakegithub import contract as contract_mod
from bot.fakegithub import graphql
from bot.fakegithub.auth import authenticate, repo_for
from bot.fakegithub.contract import MULTI_SEGMENT, Contract
from bot.fakegithub.faults import Faults
from bot.fakegithub.limits import RateLimits
from bot.fakegithub.objects import Render
from bot.fakegithub.routing import HANDLERS, Ctx, GitHubError, Reply
from bot.fakegithub.state import App, CheckRun, Installation, Repo, Ruleset, State, User
from bot.fakegithub.webhooks import Webhooks

SUPPORTED_API_VERSIONS = ("2022-11-28", "2026-03-10")


def _import_routes() -> None:
    from bot.fakegithub import routes_actions, routes_apps, routes_checks, routes_git, routes_issues, routes_pulls, routes_repos  # noqa: F401


@functools.lru_cache(maxsize=1)
def shared_app_key() -> tuple[str, str]:
    """One RSA key pair per process (2048-bit generation costs ≈ 0.3 s; tests need no fresh key)."""
    return generate_app_key()


def generate_app_key() -> tuple[str, str]:
    """A fresh RSA key pair ``(private PEM, public PEM)`` for a test App."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    priv = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()
    pub = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return priv, pub


#: GitHub refuses an issue, pull request or comment body longer than this (characters), answering
#: 422 "body is too long (maximum is 65536 characters)" (the limit is in that answer, not in the docs)
BODY_LIMIT = 65536
_BODY_RESOURCES = {"issues/create": "Issue", "issues/update": "Issue", "pulls/create": "Issue", "pulls/update": "Issue",
                   "issues/create-comment": "IssueComment", "issues/update-comment": "IssueComment"}


#: an issue's or pull request's title: at most this many characters ("title is too long (maximum is 256 characters)")
TITLE_LIMIT = 256
#: a check run's ``output.summary`` and ``output.text``: at most this many bytes each (UTF-8; github/docs#35252)
CHECK_TEXT_LIMIT = 65535
_CHECK_RUN_OPS = {"checks/create", "checks/update"}
#: a label's name: at most this many characters ("name is too long (maximum is 50 characters)")
LABEL_LIMIT = 50
_LABEL_OPS = {"issues/add-labels", "issues/set-labels", "issues/create-label", "issues/update-label"}


def body_too_long(op_id: str, raw: bytes) -> GitHubError | None:
    """GitHub's answer to a request (its JSON bytes) whose body or title is over GitHub's limit
    (:data:`BODY_LIMIT`, :data:`TITLE_LIMIT`; a check run's summary or text over
    :data:`CHECK_TEXT_LIMIT`), or None."""
    resource = _BODY_RESOURCES.get(op_id)
    if resource is None and op_id not in _CHECK_RUN_OPS and op_id not in _LABEL_OPS:
        return None
    data = json.loads(raw) if raw else None
    if op_id in _LABEL_OPS:
        names = data.get("labels") if isinstance(data, dict) and "labels" in data else \
            [data.get("name")] if isinstance(data, dict) else data
        long = [n for n in names or () if isinstance(n, str) and len(n) > LABEL_LIMIT]
        return GitHubError(422, "Validation Failed", errors=[{"resource": "Label", "code": "custom", "field": "name",
                                                             "message": f"name is too long (maximum is {LABEL_LIMIT} characters)"}]) \
            if long else None
    if not isinstance(data, dict):
        return None
    if resource is None:
        output = data.get("output") if isinstance(data.get("output"), dict) else {}
        for name in ("summary", "text"):
            if isinstance(output.get(name), str) and len(output[name].encode()) > CHECK_TEXT_LIMIT:
                return GitHubError(422, "Invalid request.\n\n"
                                   f"For 'properties/{name}', the text is longer than {CHECK_TEXT_LIMIT} bytes.")
        return None
    for name, limit in (("body", BODY_LIMIT), ("title", TITLE_LIMIT)):
        text = data.get(name)
        if isinstance(text, str) and len(text) > limit and not (name == "title" and resource == "IssueComment"):
            return GitHubError(422, "Validation Failed", errors=[{"resource": resource, "code": "custom", "field": name,
                                                                 "message": f"{name} is too long (maximum is {limit} characters)"}])
    return None


class FakeGitHub:
    """One local GitHub. ``await fake.start()`` → ``fake.url``; set it up with :meth:`create_app`,
    :meth:`create_repo`, :meth:`install`, :meth:`add_collaborator`, :meth:`add_token`.

    ``state_dir`` holds the bare repositories (``<state_dir>/repos/<owner>/<name>.git``).
    ``validate_responses`` can be turned off for speed in benchmarks (requests are always validated).
    ``git_http_urls``: repositories' ``clone_url`` is the fake's smart-HTTP URL (push with
    ``bot.github.client.authenticated_remote``, like on GitHub) instead of the bare repository's path;
    git must then not run synchronously on the fake's event loop (see :mod:`bot.fakegithub.githttp`).
    """

    def __init__(self, state_dir: Path | str, *, host: str = "127.0.0.1", port: int = 0,
                 validate_responses: bool = True, webhook_url: str | None = None, webhook_secret: str = "",
                 git_http_urls: bool = False):
        _import_routes()
        self.state = State(Path(state_dir))
        self.host, self.port = host, port
        self.contract = Contract(validate_responses=validate_responses)
        self.faults = Faults()
        self.webhooks = Webhooks(self, url=webhook_url, secret=webhook_secret)
        self.oauth_user: str | None = None      # who is signed in to the fake's "browser" (OAuth authorize)
        self.requests: list[dict] = []          # {method, path, operation, status, api_version, auth}
        self.git_requests: list[dict] = []      # smart-HTTP git calls {service, repo, status, actor}
        self.git_http_urls = git_http_urls      # clone_url: http://…/<owner>/<repo>.git instead of the path
        self.require_api_version = False        # True: a request without X-GitHub-Api-Version is a violation
        self.url = ""
        self.render = Render(self.state, "http://127.0.0.1")
        self._runner: web.AppRunner | None = None
        self.limits = RateLimits()              # fake.limits.limit / .content_per_minute to tighten
        self._lock = asyncio.Lock()
        self._routes = self._route_table()
        self.web_user = "octocat"               # who is signed in on the web pages (App manifest flow)

    # --- lifecycle -----------------------------------------------------------------------------
    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        from bot.fakegithub import admin, appflow, githttp, oauth

        admin.register(app, self)
        githttp.register(app, self)
        appflow.register(app, self)
        oauth.register(app, self)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        return app

    async def start(self) -> str:
        """Listen on ``host:port`` (0 = a free port); returns the base URL."""
        self._runner = web.AppRunner(self.build_app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://{self.host}:{self.port}"
        self.render = Render(self.state, self.url, git_http=self.git_http_urls)
        await self.webhooks.start()
        return self.url

    async def stop(self) -> None:
        for h in self.faults.holds:        # a test that failed midway leaves no request waiting
            h.release()
        await self.webhooks.stop()
        if self._runner:
            await self._runner.cleanup()

    async def __aenter__(self) -> "FakeGitHub":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    @property
    def violations(self) -> list:
        return self.contract.violations

    def contract_webhook_names(self) -> frozenset[str]:
        return frozenset(contract_mod.webhook_document().get("x-webhooks", {}))

    # --- setup ---------------------------------------------------------------------------------
    def create_app(self, *, app_id: int = 4200, slug: str = "forksync", name: str = "forksync",
                   owner: str = "forksync-dev", webhook_secret: str | None = None, fresh_key: bool = False) -> App:
        """Register the GitHub App; the client signs JWTs with ``app.private_key_pem`` (one key per
        process unless ``fresh_key``)."""
        priv, pub = generate_app_key() if fresh_key else shared_app_key()
        bot = self.state.user(f"{slug}[bot]", "Bot")
        a = App(app_id, slug, name, self.state.user(owner, "Organization"), priv, pub, bot,
                webhook_secret or self.webhooks.secret, client_id=f"Iv1.{app_id:012x}",
                client_secret=secrets.token_hex(20))
        self.state.apps[app_id] = a
        if webhook_secret is not None:
            self.webhooks.secret = webhook_secret
        return a

    def create_user(self, login: str, *, email: str | None = None, name: str | None = None) -> User:
        u = self.state.user(login)
        u.email, u.name = email or u.email, name or u.name
        return u

    def create_repo(self, full_name: str, *, source: str | Path | None = None, default_branch: str = "main",
                    private: bool = False, fork_of: Repo | None = None,
                    allow_squash_merge: bool = True, required_checks: list[str] | None = None,
                    first_number: int = 1) -> Repo:
        """A repository backed by a bare git repo (empty, or a bare clone of ``source``).
        ``repo.path`` is a git remote the bot can push to and fetch from. ``first_number``: the
        number its first issue or pull request gets (as for a repository with a past)."""
        owner, name = full_name.split("/", 1)
        r = self.state.add_repo(owner, name, default_branch=default_branch,
                                source=str(source) if source else None, private=private, fork_of=fork_of)
        r.first_number = first_number
        r.allow_squash_merge = allow_squash_merge
        r.required_checks = list(required_checks or [])
        return r

    def install(self, account: str, *, repos: list[Repo] | None = None, permissions: dict | None = None,
                installation_id: int | None = None) -> Installation:
        """Install the App on ``account`` (all its repositories, or only ``repos``)."""
        inst = Installation(installation_id or self.state.new_id(), self.state.user(account),
                            None if repos is None else {r.id for r in repos}, created_at=self.state.now())
        if permissions is not None:
            inst.permissions = dict(permissions)
        self.state.installations[inst.id] = inst
        from bot.fakegithub.events import installation_event

        installation_event(self, inst)
        return inst

    def uninstall(self, inst: Installation) -> dict:
        """The account's owner uninstalls the App: the installation is gone (``GET
        /app/installations`` no longer lists it) and its tokens are revoked. Returns GitHub's
        ``installation.deleted`` payload for the test to deliver (with ``validate=False``:
        spec/webhooks.json holds no schema for it, so the fake does not emit it)."""
        from bot.fakegithub.events import installation_payload

        payload = installation_payload(self, inst, "deleted")
        del self.state.installations[inst.id]
        for key in [k for k, t in self.state.tokens.items() if t.installation_id == inst.id]:
            del self.state.tokens[key]
        return payload

    def remove_repos(self, inst: Installation, repos: list[Repo]) -> dict:
        """The account's owner takes ``repos`` off the installation (one on all repositories becomes
        one on the others, ``selected``, as GitHub makes it). Returns GitHub's
        ``installation_repositories.removed`` payload (delivered as :meth:`uninstall`'s)."""
        from bot.fakegithub.events import installation_repositories_removed

        covered = [r for r in self.state.repos.values() if r.owner.login.lower() == inst.account.login.lower()
                   and (inst.repository_ids is None or r.id in inst.repository_ids)]
        gone = {r.id for r in repos}
        inst.repository_ids = {r.id for r in covered if r.id not in gone}
        return installation_repositories_removed(self, inst, [r for r in covered if r.id in gone])

    def suspend(self, inst: Installation, by: str | None = None) -> dict:
        """The account's owner (``by``, default the account) suspends the installation: GitHub
        refuses its tokens from now on, new and old (403 "This installation has been suspended").
        Returns GitHub's ``installation.suspend`` payload for the test to deliver (with
        ``validate=False``: spec/webhooks.json holds no schema for it, so the fake does not emit it)."""
        inst.suspended_at, inst.suspended_by = self.state.now(), self.state.user(by or inst.account.login)
        return self._installation_payload(inst, "suspend")

    def unsuspend(self, inst: Installation) -> dict:
        """Lift the suspension: tokens are minted again. Returns the ``installation.unsuspend``
        payload (delivered as :meth:`suspend`'s)."""
        inst.suspended_at, inst.suspended_by = None, None
        return self._installation_payload(inst, "unsuspend")

    def _installation_payload(self, inst: Installation, action: str) -> dict:
        return self.webhooks.build("installation", action, {
            "installation": self.render.installation(inst, self.app), "sender": self.render.user(inst.account),
            "requester": None})

    def add_collaborator(self, repo: Repo, login: str, permission: str = "write") -> User:
        """``permission``: read | triage | write | maintain | admin (GitHub's roles)."""
        u = self.state.user(login)
        repo.collaborators[u.login] = permission
        return u

    def add_token(self, token: str, login: str, *, ttl_s: float = 10 * 365 * 86400) -> None:
        """A personal access token acting as ``login`` (plain token mode)."""
        self.state.issue_token(user=self.state.user(login), token=token, ttl_s=ttl_s)

    def mergeable_unknown(self, repo: Repo, number: int, reads: int) -> None:
        """Answer ``mergeable: null`` (GitHub still computing) for the next ``reads`` GETs of the PR."""
        repo.pulls[number].mergeable_unknown_polls = reads

    def expire_tokens(self) -> int:
        return self.state.expire_tokens()

    async def refresh(self) -> None:
        """Notice pushes made with git directly to the bare repositories (emits ``push`` and
        ``pull_request.synchronize``); API calls on a repository do this by themselves."""
        from bot.fakegithub.events import on_ref_changes

        async with self._lock:
            for repo in list(self.state.repos.values()):
                on_ref_changes(self, self.state.observe_refs(repo))

    def complete_workflow_run(self, repo: Repo, run_id: int, conclusion: str = "success",
                              artifacts: dict[str, bytes] | None = None) -> None:
        """Finish a dispatched workflow run and attach artifacts ``{name: zip bytes}``."""
        from bot.fakegithub.state import Artifact

        run = repo.workflow_runs[run_id]
        run.status, run.conclusion = "completed", conclusion
        for name, data in (artifacts or {}).items():
            run.artifacts.append(Artifact(self.state.new_id(), name, data, self.state.now()))
        from bot.fakegithub.events import workflow_run_event

        workflow_run_event(self, repo, run)

    def set_status(self, repo: Repo, sha: str, context: str, state: str, *, description: str | None = None,
                   target_url: str | None = None) -> dict:
        """Another CI system sets a commit status on ``sha`` (``state``: success | failure | error |
        pending), as ``POST /repos/{owner}/{repo}/statuses/{sha}`` would; the combined status
        of the ref shows the latest per ``context``."""
        if state not in ("success", "failure", "error", "pending"):
            raise ValueError(f"commit status state {state!r}: use success, failure, error or pending")
        t = self.state.now()
        st = {"id": self.state.new_id(), "context": context, "state": state, "description": description,
              "target_url": target_url, "created_at": t, "updated_at": t}
        repo.statuses.setdefault(sha, []).append(st)
        return st

    def add_check_run(self, repo: Repo, sha: str, name: str, conclusion: str | None = "success", *,
                      app: App) -> CheckRun:
        """Another GitHub App (``app``, registered with :meth:`create_app` after forksync's) reports
        a check run on ``sha``, completed with ``conclusion`` (None: still in progress), as its
        ``POST /repos/{owner}/{repo}/check-runs`` would; listed with that app as its ``app``."""
        t = self.state.now()
        run = CheckRun(self.state.new_id(), name, sha, app.id, "completed" if conclusion else "in_progress",
                       conclusion, t, t if conclusion else None, {"title": None, "summary": None, "text": None})
        run.suite_id = self.state.check_suite_id(repo, sha, app.id)
        repo.check_runs[run.id] = run
        return run

    def add_ruleset(self, repo: Repo, name: str, rules: list[dict], *, branches: tuple[str, ...] = ("~DEFAULT_BRANCH",),
                    enforcement: str = "active") -> Ruleset:
        """A repository ruleset on ``repo``'s branches ``branches`` (fnmatch patterns,
        ``~DEFAULT_BRANCH``, ``~ALL``), as Settings → Rules would make it: ``rules`` are GitHub's
        rule objects, e.g. ``{"type": "required_status_checks", "parameters":
        {"required_status_checks": [{"context": "ci/x", "integration_id": 123}],
        "strict_required_status_checks_policy": False}}``. An ``active`` one's required status
        checks hold merges into those branches as branch protection's do."""
        rs = Ruleset(self.state.new_id(), name, list(rules), tuple(branches), enforcement)
        repo.rulesets.append(rs)
        return rs

    def requests_for(self, operation: str) -> list[dict]:
        return [r for r in self.requests if r["operation"] == operation]

    # --- dispatch ------------------------------------------------------------------------------
    def _route_table(self) -> list[tuple[re.Pattern, str, str, str]]:
        out = []
        for op_id, (method, path) in contract_mod.operations().items():
            rx = re.sub(r"\\\{(\w+)\\\}", lambda m: "(?P<%s>%s)" % (m[1], ".+" if m[1] in MULTI_SEGMENT else "[^/]+"),
                        re.escape(path))
            out.append((re.compile("^" + rx + "$"), method, op_id, path))
        out.sort(key=lambda t: -len(re.sub(r"\(\?P<\w+>[^)]*\)", "", t[0].pattern)))
        return out

    def _match(self, method: str, path: str) -> tuple[str, str, dict] | None:
        for rx, m, op_id, template in self._routes:
            if m != method:
                continue
            mo = rx.match(path)
            if mo:
                return op_id, template, mo.groupdict()
        return None

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        try:
            return await self._serve(request)
        except Exception as e:  # noqa: BLE001 - a bug in the fake must fail the test, loudly
            import traceback

            self.contract.record("fake-crash", request.method, request.path, None,
                                 f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=6)}")
            return web.json_response({"message": f"the fake crashed: {type(e).__name__}"}, status=500)

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        method = request.method.upper()
        path = request.path            # decoded: %2F → /
        body = await request.read()
        query = dict(request.query)
        record = {"method": method, "path": path, "operation": None, "status": None,
                  "api_version": request.headers.get("X-GitHub-Api-Version"),
                  "accept": request.headers.get("Accept"), "if_none_match": request.headers.get("If-None-Match")}
        self.requests.append(record)
        if method == "POST" and path == "/graphql":
            record["operation"] = "graphql"
            status, data = await graphql.serve(self, request, body)
            record["status"] = status
            return web.json_response(data, status=status, headers=self._fixed_headers())
        found = self._match(method, path)
        if found is None:
            self.contract.record("unknown-operation", method, path, None,
                                 "GitHub's REST description documents no such operation")
            return self._error(record, GitHubError(404, "Not Found"))
        op_id, template, params = found
        record["operation"] = op_id
        if not request.headers.get("User-Agent"):
            self.contract.record("invalid-request", method, path, op_id, "no User-Agent header")
            return self._error(record, GitHubError(
                403, "Request forbidden by administrative rules. Please make sure your request has a User-Agent header"))
        version = request.headers.get("X-GitHub-Api-Version")
        if version is None and self.require_api_version:
            self.contract.record("invalid-request", method, path, op_id,
                                 "no X-GitHub-Api-Version header (forksync pins 2022-11-28)")
        if version is not None and version not in SUPPORTED_API_VERSIONS:
            self.contract.record("invalid-request", method, path, op_id, f"unsupported X-GitHub-Api-Version {version}")
            return self._error(record, GitHubError(400, f"API version {version} is not supported."))
        if body and "json" in (request.headers.get("Content-Type") or "application/json"):
            try:
                json.loads(body)
            except ValueError as e:
                self.contract.record("invalid-request", method, path, op_id, f"body is not JSON: {e}")
                return self._error(record, GitHubError(400, "Problems parsing JSON"))
        err = self.contract.check_request(method, template, params, query, body, dict(request.headers),
                                          request.headers.get("Content-Type"))
        if err:
            self.contract.record("invalid-request", method, path, op_id, err)
            return self._error(record, GitHubError(422, "Invalid request.\n\n" + err))
        long_body = body_too_long(op_id, body)
        if long_body is not None:
            return self._error(record, long_body)
        await self.faults.wait_if_held(method, path)
        fault = self.faults.take(method, path, query)
        if fault is not None:
            if fault.expire_tokens:
                self.state.expire_tokens()
            record["status"] = fault.status
            record["fault"] = fault.name
            return web.json_response(fault.body, status=fault.status, headers=fault.headers)
        handler = HANDLERS.get(op_id)
        if handler is None:
            self.contract.record("unimplemented", method, path, op_id,
                                 "documented by GitHub, not served by the fake yet")
            return self._error(record, GitHubError(501, f"the fake does not implement {op_id}"))
        ctx = Ctx(self, request, op_id, params, query, body)
        try:
            authenticate(self.state, ctx)
            record["auth"] = "app" if ctx.app_jwt else ("installation" if ctx.installation else
                                                          ("token" if ctx.token else "none"))
            record["rate_key"] = ctx.token.token if ctx.token else ("app" if ctx.app_jwt else "anonymous")
            limited = self.limits.check(record["rate_key"], method, self.state.now())
            if limited is not None:
                raise GitHubError(limited[0], limited[1], headers=limited[2])
            if "owner" in params and "repo" in params:
                ctx.repo = repo_for(self.state, ctx, params["owner"], params["repo"])
            async with self._lock:      # one state change at a time (handlers may run git)
                if ctx.repo is not None:
                    from bot.fakegithub.events import on_ref_changes
                    on_ref_changes(self, self.state.observe_refs(ctx.repo))
                reply = await handler(ctx)
        except GitHubError as e:
            return self._error(record, e)
        except Exception as e:  # noqa: BLE001 - a bug in the fake must fail the test, loudly
            import traceback

            self.contract.record("fake-crash", method, path, op_id,
                                 f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=6)}")
            return self._error(record, GitHubError(500, f"the fake crashed: {type(e).__name__}: {e}"))
        return self._respond(request, record, template, params, query, reply)

    def _error(self, record: dict, e: GitHubError) -> web.Response:
        record["status"] = e.status
        headers = dict(e.headers)
        key = record.get("rate_key")
        if key is not None:
            if headers.get("x-ratelimit-remaining") != "0":
                self.limits.count(key, self.state.now())
            headers = {**self.limits.headers(key, self.state.now()), **headers}
        return web.json_response(e.body(), status=e.status, headers=headers)

    def _respond(self, request: web.Request, record: dict, template: str, params: dict, query: dict,
                 reply: Reply) -> web.Response:
        body = reply.body()
        headers = dict(reply.headers)
        headers.update(self._fixed_headers())
        key = record.get("rate_key", "anonymous")
        now = self.state.now()
        if reply.status == 200 and request.method == "GET" and reply.raw is None:
            etag = 'W/"' + hashlib.sha256(body).hexdigest()[:40] + '"'
            headers["ETag"] = etag
            inm = request.headers.get("If-None-Match")
            if inm and etag in [t.strip() for t in inm.split(",")]:
                record["status"] = 304          # a 304 to a conditional request is free (GitHub docs)
                headers.update(self.limits.headers(key, now))
                return web.Response(status=304, headers=headers)
        if record["operation"] != "rate-limit/get":   # GET /rate_limit is free
            self.limits.count(key, now)
        headers.update(self.limits.headers(key, now))
        if reply.schema is not None:
            err = self.contract.check_component(reply.schema, reply.data)
            if err:
                self.contract.record("invalid-response", request.method, request.path, record["operation"], err)
        elif body or reply.status not in (204,):
            err = self.contract.check_response(request.method, template, params, query, reply.status, body,
                                               reply.content_type)
            if err:
                self.contract.record("invalid-response", request.method, request.path, record["operation"], err)
        record["status"] = reply.status
        ct = reply.content_type if reply.data is not None or reply.raw is not None else None
        if ct and ct.startswith("application/json"):
            ct = "application/json; charset=utf-8"
        return web.Response(status=reply.status, body=body, headers=headers,
                            content_type=ct.split(";")[0] if ct else None,
                            charset="utf-8" if ct and "json" in ct else None)

    def _fixed_headers(self) -> dict[str, str]:
        return {"X-GitHub-Media-Type": "github.v3; format=json", "X-GitHub-Api-Version-Selected": "2022-11-28",
                "X-GitHub-Request-Id": f"FAKE:{len(self.requests):08X}"}
