"""Git's smart HTTP protocol for the fake's bare repositories, through git's own CGI
(``git http-backend``), so the bot can push and fetch exactly as against GitHub:
``https://x-access-token:<installation token>@github.com/<owner>/<repo>.git`` becomes
``http://x-access-token:<token>@127.0.0.1:<port>/<owner>/<repo>.git``.

Authentication follows GitHub: fetching a public repository needs none; pushing, or reading a
private repository, needs HTTP Basic auth whose password is a valid token (an installation token
of an installation that covers the repository with ``contents: write`` for pushes, or a personal
token of a user with write permission). Without it: 401 with ``WWW-Authenticate: Basic`` (git
then sends the credentials from the URL). After a push the fake notices the moved refs at once
(``push`` and ``pull_request.synchronize`` events).

A git client in the *same process and thread* as the fake must not block the event loop
(``subprocess.run`` would deadlock): run git with ``asyncio.create_subprocess_exec`` or in a
thread, or use the repository's local path (``repo.path``) as the remote.
"""
from __future__ import annotations

import asyncio
import base64
import os
from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from bot.fakegithub.server import FakeGitHub
    from bot.fakegithub.state import Repo, User

GIT_HTTP_BACKEND = "git-http-backend"


def register(app: web.Application, fake: "FakeGitHub") -> None:
    async def handle(request: web.Request) -> web.StreamResponse:
        return await serve(fake, request)

    app.router.add_route("GET", r"/{owner}/{name}.git/info/refs", handle)
    app.router.add_route("POST", r"/{owner}/{name}.git/git-upload-pack", handle)
    app.router.add_route("POST", r"/{owner}/{name}.git/git-receive-pack", handle)


def _challenge() -> web.Response:
    return web.Response(status=401, text="Authentication required\n",
                        headers={"WWW-Authenticate": 'Basic realm="GitHub"'})


def _actor(fake: "FakeGitHub", repo: "Repo", request: web.Request, push: bool) -> "User | None | web.Response":
    """The authenticated pusher/reader, None for anonymous reads, or the error answer."""
    header = request.headers.get("Authorization", "")
    if not header.lower().startswith("basic "):
        return _challenge() if (push or repo.private) else None
    try:
        _user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return _challenge()
    tok = fake.state.tokens.get(password)
    if tok is None or tok.expires_at <= fake.state.now():
        return web.Response(status=401, text="Invalid username or token. Password authentication is not "
                                             "supported for Git operations.\n",
                            headers={"WWW-Authenticate": 'Basic realm="GitHub"'})
    if tok.installation_id is not None:
        inst = fake.state.installations.get(tok.installation_id)
        covers = inst is not None and inst.account.login.lower() == repo.owner.login.lower() and (
            inst.repository_ids is None or repo.id in inst.repository_ids)
        if not covers and (push or repo.private):
            return web.Response(status=404, text="Repository not found.\n")
        if push and (inst is None or inst.permissions.get("contents") != "write"):
            return web.Response(status=403, text="Permission to push denied to the integration.\n")
        app = next(iter(fake.state.apps.values()), None)
        return app.bot if app else None
    user = tok.user
    perm = fake.state.permission(repo, user.login) if user else "none"
    if push and perm not in ("write", "maintain", "admin"):
        return web.Response(status=403, text=f"Permission to {repo.full_name}.git denied to {user.login}.\n")
    return user


async def serve(fake: "FakeGitHub", request: web.Request) -> web.StreamResponse:
    owner, name = request.match_info["owner"], request.match_info["name"]
    repo = fake.state.repo(owner, name)
    if repo is None:
        return web.Response(status=404, text="Repository not found.\n")
    service = request.query.get("service") or request.path.rsplit("/", 1)[-1]
    push = service == "git-receive-pack"
    actor = _actor(fake, repo, request, push)
    if isinstance(actor, web.Response):
        return actor
    body = await request.read()
    tail = request.path.split(".git", 1)[1]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_PROJECT_ROOT": str(repo.path.parent),
        "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": f"/{repo.path.name}{tail}",
        "REQUEST_METHOD": request.method, "QUERY_STRING": request.query_string,
        "CONTENT_TYPE": request.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
        "REMOTE_USER": actor.login if actor else "", "REMOTE_ADDR": "127.0.0.1",
        "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(fake.state.root),
    }
    if request.headers.get("Content-Encoding"):
        env["HTTP_CONTENT_ENCODING"] = request.headers["Content-Encoding"]
    if request.headers.get("Git-Protocol"):
        env["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
    proc = await asyncio.create_subprocess_exec(
        "git", "http-backend", env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate(body)
    head, _, payload = out.partition(b"\r\n\r\n")
    if not _:
        head, _, payload = out.partition(b"\n\n")
    status, headers = 200, {}
    for line in head.decode("latin-1").splitlines():
        key, _, value = line.partition(":")
        if key.lower() == "status":
            status = int(value.strip().split()[0])
        elif key:
            headers[key.strip()] = value.strip()
    if push and status == 200:
        from bot.fakegithub.events import on_ref_changes

        async with fake._lock:
            on_ref_changes(fake, fake.state.observe_refs(repo), pusher=actor)
    fake.git_requests.append({"service": service, "repo": repo.full_name, "status": status,
                              "actor": actor.login if actor else None})
    if proc.returncode not in (0, None) and status == 200 and not payload:
        return web.Response(status=500, text=err.decode(errors="replace"))
    ct = headers.pop("Content-Type", None)
    resp = web.Response(status=status, body=payload, headers=headers)
    if ct:
        resp.headers["Content-Type"] = ct
    return resp
