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

Workflow files: like GitHub, a push with an installation token whose installation lacks the
``workflows: write`` permission is refused when one of its new commits creates, changes or
deletes a file under ``.github/workflows/``; the ref is rejected with GitHub's own reason
(``refusing to allow a GitHub App to create or update workflow `<path>` without `workflows`
permission``) and the other refs of the push are refused too (GitHub's check is per push).
Implemented as a ``pre-receive`` hook; its reason replaces git's ``pre-receive hook declined`` in
the report git prints (`` ! [remote rejected] <ref> -> <ref> (<reason>)``).

Faults (:mod:`bot.fakegithub.faults`) whose path pattern names a git path, e.g.
``fake.faults.server_error("*.git/git-receive-pack", "POST", times=9)``, answer git's requests.

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
WORKFLOWS_HOOK = """#!/bin/sh
# refuse new commits that touch .github/workflows/ (the installation lacks `workflows: write`)
z=0000000000000000000000000000000000000000
while read old new ref; do
  [ "$new" = "$z" ] && continue
  if [ "$old" = "$z" ]; then range="$new --not --all"; else range="$old..$new"; fi
  for c in $(git rev-list $range); do
    f=$(git diff-tree -r --no-commit-id --name-only --root "$c" -- .github/workflows/ | head -n 1)
    if [ -n "$f" ]; then
      printf 'refusing to allow a GitHub App to create or update workflow `%s` without `workflows` permission' "$f" \
        > "$FAKEGITHUB_REJECT_FILE"
      exit 1
    fi
  done
done
exit 0
"""


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
        if inst is not None and inst.suspended_at is not None:
            return web.Response(status=403, text="This installation has been suspended\n")
        covers = inst is not None and inst.account.login.lower() == repo.owner.login.lower() and (
            inst.repository_ids is None or repo.id in inst.repository_ids)
        if not covers and (push or repo.private):
            return web.Response(status=404, text="Repository not found.\n")
        if push and (inst is None or inst.permissions.get("contents") != "write"):
            return web.Response(status=403, text="Permission to push denied to the integration.\n")
        app = fake.state.token_app(tok)
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
    fault = _git_fault(fake, request)
    if fault is not None:
        return web.Response(status=fault.status, text=fault.body["message"] + "\n")
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
    reject_file = None
    if push and _lacks_workflows(fake, request):
        reject_file = fake.state.root / f"reject-{os.getpid()}-{id(request)}.txt"
        env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="core.hooksPath", GIT_CONFIG_VALUE_0=str(_hooks_dir(fake)),
                   FAKEGITHUB_REJECT_FILE=str(reject_file))
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
    if reject_file is not None and reject_file.exists():
        payload = rewrite_reject_reason(payload, reject_file.read_text())
        reject_file.unlink()
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


def _git_fault(fake: "FakeGitHub", request: web.Request):
    """An injected fault whose pattern names a git path (``*.git/git-receive-pack``): patterns for
    the REST API (``*``, ``/repos/…``) never answer git's requests."""
    for f in list(fake.faults.queue):
        if ".git" in f.path and f.matches(request.method, request.path):
            return fake.faults.take(request.method, request.path)
    return None


def _lacks_workflows(fake: "FakeGitHub", request: web.Request) -> bool:
    """Is this an installation token whose installation lacks ``workflows: write``?"""
    header = request.headers.get("Authorization", "")
    try:
        password = base64.b64decode(header[6:]).decode().partition(":")[2]
    except (ValueError, UnicodeDecodeError):
        return False
    tok = fake.state.tokens.get(password)
    if tok is None or tok.installation_id is None:
        return False
    inst = fake.state.installations.get(tok.installation_id)
    perms = tok.permissions if tok.permissions is not None else (inst.permissions if inst else {})
    return perms.get("workflows") != "write"


def _hooks_dir(fake: "FakeGitHub"):
    d = fake.state.root / "hooks-no-workflows"
    hook = d / "pre-receive"
    if not hook.exists():
        d.mkdir(parents=True, exist_ok=True)
        hook.write_text(WORKFLOWS_HOOK)
        hook.chmod(0o755)
    return d


def _pkt_lines(data: bytes) -> list[bytes | None]:
    """Split pkt-line framed ``data``: each payload, ``None`` for a flush packet."""
    out: list[bytes | None] = []
    i = 0
    while i + 4 <= len(data):
        n = int(data[i:i + 4], 16)
        if n == 0:
            out.append(None)
            i += 4
            continue
        out.append(data[i + 4:i + n])
        i += n
    return out


def _pkt(payload: bytes | None) -> bytes:
    return b"0000" if payload is None else b"%04x" % (len(payload) + 4) + payload


def rewrite_reject_reason(payload: bytes, reason: str) -> bytes:
    """Pure: ``payload`` (receive-pack's answer, side-band framed or not) with every
    ``ng <ref> pre-receive hook declined`` report line carrying ``reason`` instead."""
    old, new = b"pre-receive hook declined", reason.encode()
    try:
        outer = _pkt_lines(payload)
    except ValueError:
        return payload
    if not any(p is not None and p[:1] == b"\x01" for p in outer):       # no side band
        return b"".join(_pkt(p.replace(old, new) if p is not None and p.startswith(b"ng ") else p) for p in outer)
    band1 = b"".join(p[1:] for p in outer if p is not None and p[:1] == b"\x01")
    inner = b"".join(_pkt(p.replace(old, new) if p is not None and p.startswith(b"ng ") else p)
                     for p in _pkt_lines(band1))
    rest, first = [], True
    for p in outer:
        if p is not None and p[:1] == b"\x01":
            if first:
                rest += [b"\x01" + inner[i:i + 65000] for i in range(0, len(inner), 65000)]
                first = False
            continue
        rest.append(p)
    return b"".join(_pkt(p) for p in rest)
