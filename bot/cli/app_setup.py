"""``forksync app manifest`` and ``forksync app setup``: register the GitHub App in one step.

* ``forksync app manifest --url URL [--name NAME]`` prints the App manifest (JSON) built from
  the one permission/event table, :mod:`bot.config.app_manifest`, for registering by hand: its
  URLs are the deployment's public one (``--url``, required), GitHub's redirect after
  confirming included.
* ``forksync app setup [--url URL] [--github-url API] [--org ORG] [--port N] [--settings FILE]``
  runs GitHub's manifest flow (https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest):
  a page on ``http://127.0.0.1:PORT/`` posts the manifest to ``<web>/settings/apps/new`` (or
  ``<web>/organizations/ORG/settings/apps/new``) with a random ``state``; GitHub sends the browser
  back to ``/redirect?code=…&state=…``; the code is exchanged with
  ``POST <api>/app-manifests/{code}/conversions``; the App's id, slug, webhook secret and OAuth
  client id/secret are written to the dotenv settings file ``serve`` reads (mode 0600; other lines
  of an existing file are kept) and its private key to its own file (mode 0600) named by
  ``FORKSYNC_PRIVATE_KEY_FILE``. No secret is printed.

The settings file's names are the ``FORKSYNC_*`` environment variables (docs/github.md,
"Registering the App").
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bot.cli.serve import listen_socket
from bot.cli.text import say, text
from bot.config.app_manifest import DEFAULT_NAME, manifest
from bot.config.forksync import UserError
from bot.templating import render

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_API = "https://api.github.com"
DEFAULT_SETUP_PORT = 8765
DEFAULT_SETTINGS = "forksync.env"
TIMEOUT_S = 900.0


def web_url_for(api_url: str) -> str:
    """The web host of a REST API base: ``https://api.github.com`` → ``https://github.com``,
    GitHub Enterprise ``https://HOST/api/v3`` → ``https://HOST``; anything else (a local GitHub
    serving both) is its own web host."""
    api = api_url.rstrip("/")
    if api == DEFAULT_API:
        return "https://github.com"
    return re.sub(r"/api/v3$", "", api)


# --- the settings file (dotenv) -----------------------------------------------------------------
_PLAIN = re.compile(r"^[A-Za-z0-9_./:@+,=-]*$")


def dotenv_value(value: str) -> str:
    """``value`` as dotenv writes it: bare when it holds only safe characters, else in double
    quotes with ``\\``, ``"`` and newlines escaped (python-dotenv reads both back unchanged)."""
    if _PLAIN.match(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def merge_dotenv(existing: str, updates: dict[str, str], header: str = "# written by forksync app setup") -> str:
    """``existing`` dotenv text with each key of ``updates`` set: a line that assigns the key
    (``KEY=…`` or ``export KEY=…``) is replaced in place, the other keys are appended after
    ``header``; comments and other keys are kept as they were."""
    out, done = [], set()
    for line in existing.splitlines():
        m = re.match(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=", line)
        if m and m[1] in updates:
            if m[1] not in done:
                out.append(f"{m[1]}={dotenv_value(updates[m[1]])}")
                done.add(m[1])
            continue
        out.append(line)
    rest = [k for k in updates if k not in done]
    if rest:
        if out and out[-1].strip():
            out.append("")
        out.append(header)
        out += [f"{k}={dotenv_value(updates[k])}" for k in rest]
    return "\n".join(out) + "\n"


def writable_destination(path: Path) -> None:
    """Raise :class:`UserError` naming ``path`` when a file cannot be written there: its folder
    is not a folder (or cannot be created), or the folder or an existing file is not writable."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    problem = ("folder" if path.is_dir() else
               "no_folder" if not folder.is_dir() else
               "folder_not_writable" if not os.access(folder, os.W_OK | os.X_OK) else
               "not_writable" if path.exists() and not os.access(path, os.W_OK) else "")
    if problem:
        raise UserError(text("app", "destination_unwritable", path=path, problem=problem, folder=folder))


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` with mode 0600 from the first byte (a temporary file in the same
    folder, then renamed over), so the secret is never readable by others, even briefly."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def settings_updates(app: dict, key_file: Path, api_url: str, existing: str = "", *,
                     web_url: str = "") -> dict[str, str]:
    """The ``FORKSYNC_*`` values a conversion answer gives (``app``: GitHub's
    ``apps/create-from-manifest`` 201 body). A dashboard session key is made once (kept when the
    file already has one); the API URL is written only when it is not GitHub's, and then the clone
    URL template too, on ``web_url`` (default :func:`web_url_for` of ``api_url``) — serve's default
    clones from github.com — unless the file already names one."""
    out = {
        "FORKSYNC_APP_ID": str(app["id"]),
        "FORKSYNC_APP_SLUG": str(app["slug"]),
        "FORKSYNC_PRIVATE_KEY_FILE": str(key_file),
        "FORKSYNC_WEBHOOK_SECRET": str(app.get("webhook_secret") or ""),
        "FORKSYNC_OAUTH_CLIENT_ID": str(app.get("client_id") or ""),
        "FORKSYNC_OAUTH_CLIENT_SECRET": str(app.get("client_secret") or ""),
    }
    if not re.search(r"^\s*(?:export\s+)?FORKSYNC_SESSION_SECRET\s*=", existing, re.M):
        out["FORKSYNC_SESSION_SECRET"] = secrets.token_urlsafe(32)
    if api_url.rstrip("/") != DEFAULT_API:
        out["FORKSYNC_GITHUB_URL"] = api_url.rstrip("/")
        if not re.search(r"^\s*(?:export\s+)?FORKSYNC_GIT_URL\s*=", existing, re.M):
            out["FORKSYNC_GIT_URL"] = (web_url or web_url_for(api_url)).rstrip("/") + "/{owner}/{repo}.git"
    return out


def refusal(status: int, body: bytes) -> str:
    """One line for a conversion GitHub refused: its message and the fields it names."""
    try:
        data = json.loads(body)
        message = str(data.get("message", ""))
        fields = [f"{e.get('field')} {e.get('code')}" for e in data.get("errors") or [] if isinstance(e, dict)]
    except (ValueError, AttributeError):
        message, fields = body[:200].decode(errors="replace"), []
    detail = message + (f" ({', '.join(fields)})" if fields else "")
    if status == 404:
        return text("app", "code_unknown", detail=detail)
    return text("app", "refused", status=status, detail=detail)


# --- the manifest flow --------------------------------------------------------------------------
@dataclass
class SetupOptions:
    url: str = DEFAULT_URL
    name: str = DEFAULT_NAME
    api_url: str = DEFAULT_API
    web_url: str = ""
    org: str = ""
    port: int = DEFAULT_SETUP_PORT
    settings: Path = Path(DEFAULT_SETTINGS)
    private_key_file: Path | None = None
    public: bool = False
    workflows: bool = False
    callback_urls: list[str] = field(default_factory=list)
    timeout_s: float = TIMEOUT_S


@dataclass(frozen=True)
class SetupResult:
    """What setup made; no secret in it (safe to print)."""

    app_id: int
    slug: str
    html_url: str
    settings: Path
    private_key_file: Path


async def run_setup(opts: SetupOptions, announce: Callable[[str], None],
                    ready: Callable[[str], None] | None = None) -> SetupResult:
    """Serve the setup page on ``127.0.0.1:opts.port`` (0 = a free port) until GitHub redirects
    back with a code, exchange it, write the settings and key files. ``announce(line)`` gets the
    lines a person reads; ``ready(page_url)`` is called once the page listens (a test's browser).
    Raises :class:`UserError` for a port in use, a wrong ``state``, a refused exchange or no
    answer within ``opts.timeout_s``."""
    import aiohttp
    from aiohttp import web

    state = secrets.token_urlsafe(24)
    web_url = (opts.web_url or web_url_for(opts.api_url)).rstrip("/")
    new_app = f"{web_url}/organizations/{opts.org}/settings/apps/new" if opts.org else f"{web_url}/settings/apps/new"
    done: asyncio.Future = asyncio.get_running_loop().create_future()
    # GitHub hands the key and secrets over once: a destination that cannot take them is refused
    # before anyone is sent to GitHub
    for dest in (opts.settings, opts.private_key_file):
        if dest is not None:
            writable_destination(dest.resolve())
    sock = listen_socket("127.0.0.1", opts.port)
    port = sock.getsockname()[1]
    page_url = f"http://127.0.0.1:{port}/"
    try:
        the_manifest = manifest(opts.url, name=opts.name, redirect_url=f"{page_url}redirect",
                                callback_urls=opts.callback_urls or None, public=opts.public, workflows=opts.workflows)
    except ValueError as e:
        sock.close()
        raise UserError(text("app", "setup_failed", error=str(e))) from None

    async def page(_req: web.Request) -> web.Response:
        html = render("app/setup_page.html.j2", action=f"{new_app}?state={state}",
                      manifest_json=json.dumps(the_manifest), app_name=opts.name, owner=opts.org)
        return web.Response(text=html, content_type="text/html")

    async def redirect(req: web.Request) -> web.Response:
        if req.query.get("state") != state:
            return web.Response(status=400, text=text("app", "wrong_state"))
        code = req.query.get("code", "")
        if done.done():
            return web.Response(status=409, text=text("app", "already_finished"))
        try:
            result = await exchange(code)
        except UserError as e:
            # the person who clicked "Create GitHub App" reads the browser: a page in the CLI's words
            done.set_exception(e)
            return failed(502, str(e), created=False)
        except OSError as e:        # the files went elsewhere (save says where): the CLI says so at once
            done.set_exception(UserError(str(e)))
            return failed(500, str(e), created=True)
        done.set_result(result)
        return web.Response(text=render("app/setup_done.html.j2", slug=result.slug, app_id=result.app_id,
                                        install_url=f"{result.html_url}/installations/new",
                                        settings=str(result.settings)), content_type="text/html")

    def failed(status: int, error: str, *, created: bool) -> web.Response:
        return web.Response(status=status, content_type="text/html",
                            text=render("app/setup_failed.html.j2", error=error, created=created))

    async def exchange(code: str) -> SetupResult:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,200}", code):
            raise UserError(text("app", "no_code"))
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
                   "User-Agent": "forksync-app-setup"}
        url = f"{opts.api_url.rstrip('/')}/app-manifests/{code}/conversions"
        async with aiohttp.ClientSession() as s:
            try:
                async with s.post(url, headers=headers) as r:
                    body = await r.read()
                    if r.status != 201:
                        raise UserError(refusal(r.status, body))
                    app = json.loads(body)
            except aiohttp.ClientError as e:
                raise UserError(text("app", "unreachable", api_url=opts.api_url, error=str(e))) from None
        return save(app)

    def save(app: dict) -> SetupResult:
        settings = opts.settings.resolve()
        key_file = (opts.private_key_file or settings.parent / f"{app['slug']}.private-key.pem").resolve()
        try:
            write_private(key_file, app["pem"])
            existing = settings.read_text() if settings.exists() else ""
            write_private(settings, merge_dotenv(existing, settings_updates(app, key_file, opts.api_url, existing, web_url=web_url)))
        except OSError as e:
            # the App exists now and its key is shown only this once: kept in a private folder of its own
            keep = Path(tempfile.mkdtemp(prefix="forksync-app-"))
            kept_key = keep / key_file.name
            write_private(kept_key, app["pem"])
            write_private(keep / settings.name, merge_dotenv("", settings_updates(app, kept_key, opts.api_url, "", web_url=web_url)))
            raise OSError(text("app", "files_kept_elsewhere", slug=repr(app["slug"]), file=e.filename or settings,
                               error=e.strerror or str(e), kept=keep)) from None
        return SetupResult(int(app["id"]), str(app["slug"]), str(app.get("html_url") or f"{web_url}/apps/{app['slug']}"),
                           settings, key_file)

    web_app = web.Application()
    web_app.router.add_get("/", page)
    web_app.router.add_get("/redirect", redirect)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        announce(text("app", "open_page", page_url=page_url, org=opts.org, name=repr(opts.name), new_app=new_app))
        if ready is not None:
            ready(page_url)
        try:
            return await asyncio.wait_for(asyncio.shield(done), opts.timeout_s)
        except asyncio.TimeoutError:
            raise UserError(text("app", "no_redirect", timeout_s=opts.timeout_s)) from None
    finally:
        await runner.cleanup()


# --- command line -------------------------------------------------------------------------------
def register(sub, common) -> None:
    p = sub.add_parser("app", parents=[common], help="register the GitHub App: print its manifest, or create it in one step")
    asub = p.add_subparsers(dest="app_command", metavar="ACTION", required=True)

    def shared(q: argparse.ArgumentParser) -> None:
        q.add_argument("--name", default=DEFAULT_NAME, help=f"the App's name on GitHub [{DEFAULT_NAME}]")
        q.add_argument("--callback-url", dest="callback_urls", action="append", metavar="URL",
                       help="OAuth callback URL (repeatable) [URL/auth/callback]")
        q.add_argument("--public", action="store_true", help="let other accounts install the App (default: only its owner)")
        q.add_argument("--workflows", action="store_true",
                       help="also ask for Workflows: write (sync upstream commits that change .github/workflows/)")

    m = asub.add_parser("manifest", parents=[common], help="print the GitHub App manifest (JSON) for registering it by hand")
    m.add_argument("--url", help="the deployment's public base URL (https://…); the webhook is URL/webhook [required]")
    shared(m)
    m.add_argument("--redirect-url", help="where GitHub sends the browser back with ?code= after you confirm [URL/]")
    m.set_defaults(func=cmd_manifest)

    s = asub.add_parser("setup", parents=[common],
                        help="create the App on GitHub through its manifest flow and write the settings file (mode 0600)")
    s.add_argument("--url", default=DEFAULT_URL, help=f"public base URL of forksync serve; the webhook is URL/webhook [{DEFAULT_URL}]")
    shared(s)
    s.add_argument("--github-url", dest="github_url", default=os.environ.get("FORKSYNC_GITHUB_URL", DEFAULT_API),
                   help="REST API base URL [FORKSYNC_GITHUB_URL, https://api.github.com]; the web host is derived")
    s.add_argument("--web-url", dest="web_url", default="", help="GitHub's web host, when it cannot be derived")
    s.add_argument("--org", default="", help="create the App under this organization (default: your user account)")
    s.add_argument("--port", type=int, default=DEFAULT_SETUP_PORT,
                   help=f"port of the local setup page on 127.0.0.1 (0 = any free port) [{DEFAULT_SETUP_PORT}]")
    s.add_argument("--settings", default=os.environ.get("FORKSYNC_SETTINGS_FILE", DEFAULT_SETTINGS), metavar="FILE",
                   help=f"dotenv settings file to write [FORKSYNC_SETTINGS_FILE, ./{DEFAULT_SETTINGS}]")
    s.add_argument("--private-key-file", dest="private_key_file", metavar="FILE",
                   help="where to write the App's PEM key [next to the settings file: <slug>.private-key.pem]")
    s.add_argument("--timeout", type=float, default=TIMEOUT_S, help=f"seconds to wait for GitHub [{TIMEOUT_S:.0f}]")
    s.add_argument("--no-browser", dest="no_browser", action="store_true", help="only print the page's URL")
    s.set_defaults(func=cmd_setup)


def cmd_manifest(args: argparse.Namespace) -> int:
    """The manifest for registering by hand: every URL in it is the deployment's public one
    (``--url``), GitHub's redirect after you confirm included — never the setup page's
    ``127.0.0.1`` address, which only ``app setup`` serves while it runs."""
    url = args.url
    if not url:
        raise UserError(text("app", "manifest_needs_url"))
    redirect = args.redirect_url or url.rstrip("/") + "/"
    try:
        m = manifest(url, name=args.name, redirect_url=redirect, callback_urls=args.callback_urls,
                     public=args.public, workflows=args.workflows)
    except ValueError as e:
        raise UserError(text("app", "manifest_failed", error=str(e))) from None
    print(json.dumps(m, indent=2))
    say("app", "manifest_note", err=True, redirect=redirect)
    return 0


def cmd_setup(args: argparse.Namespace) -> int:
    opts = SetupOptions(url=args.url, name=args.name, api_url=args.github_url, web_url=args.web_url, org=args.org,
                        port=args.port, settings=Path(args.settings),
                        private_key_file=Path(args.private_key_file) if args.private_key_file else None,
                        public=args.public, workflows=args.workflows, callback_urls=args.callback_urls or [],
                        timeout_s=args.timeout)
    if re.match(r"^https?://(127\.|localhost|\[::1\])", opts.url):
        say("app", "local_webhook", err=True, url=opts.url)

    def ready(url: str) -> None:
        if not args.no_browser:
            import webbrowser
            try:
                webbrowser.open(url)
            except Exception:  # noqa: BLE001 - no browser here: the printed URL is enough
                pass

    result = asyncio.run(run_setup(opts, lambda line: print(line, file=sys.stderr, flush=True), ready))
    say("app", "created", slug=result.slug, app_id=result.app_id, settings=result.settings,
        private_key_file=result.private_key_file, html_url=result.html_url)
    return 0
