"""The dashboard's routes (aiohttp): pages under ``/``, their JSON twins under ``/api/v1/``, and
the scripts the pages need under ``/static/`` (docs/dashboard.md).

:func:`add_dashboard` mounts them on an application (``forksync serve``'s, or the local one of
``forksync dashboard``: :func:`make_dashboard_app`). Store reads and rendering run on one worker
thread, so the event loop (and the webhook intake beside it) never waits on SQLite.

Bad input never gives a 500: an unknown fork, page, commit or unit is a 404 page (or a JSON
error under ``/api/``), an unreadable query value a 400, and anything unexpected is logged
and answered 503 with a one-line reason.
"""
from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from aiohttp import web

from bot.agents.redact import GITHUB_TOKEN, configured_secrets, scrub
from bot.dashboard import plots, views
from bot.dashboard.access import ALLOWED_KEY, UNASKED_KEY, USER_KEY, install
from bot.dashboard.views import TEXTS
from bot.store import Store
from bot.templating import render_html, render_part

log = logging.getLogger(__name__)
#: What :func:`bot.agents.redact.strip_userinfo` replaces, as a quick search (no look-behind) of
#: a whole document's JSON; it may match across two texts, which only costs the full scrub.
_MAYBE_USERINFO = re.compile(r"://[^/\s@]+@")

STATIC = Path(__file__).resolve().parent / "static"
PAGES = ("overview", "units", "ledger", "validation", "triage")
_NO_STORE = {"Cache-Control": "no-store"}
#: Content-Security-Policy of every page: scripts, styles, images and fetches from this server only.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


@dataclass
class Dashboard:
    """What the routes read. ``app_facts()``: the App's health facts (see
    :func:`bot.dashboard.views.health`); ``queue_counts()``: deliveries per state; ``access``:
    who may see which fork (None: everyone — local mode); ``clock``: epoch s."""

    store: Store
    policy: views.Policy = field(default_factory=views.Policy)
    app_facts: Callable[[], dict] = lambda: {}
    queue_counts: Callable[[], dict] = lambda: {}
    access: object | None = None
    clock: Callable[[], float] = time.time
    executor: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="forksync-dashboard"))


DASHBOARD_KEY = web.AppKey("forksync_dashboard", Dashboard)


def utc(value: str | None) -> str:
    """``2026-04-15T12:00:00Z`` → ``2026-04-15 12:00 UTC`` (the pages' form); ``—`` for None."""
    return value.replace("T", " ")[:16] + " UTC" if value else "—"


def age(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86_400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} days"


def _page(name: str, status: int = 200, **ctx) -> web.Response:
    body = render_html(f"dashboard/{name}.html.j2", utc=utc, age=age, **ctx)
    return web.Response(text=body, status=status, content_type="text/html", headers={**_NO_STORE, "Content-Security-Policy": CSP})


def _api(doc: dict, status: int = 200) -> web.Response:
    return web.Response(text=json.dumps(doc, separators=(",", ":")), status=status, content_type="application/json",
                        headers=_NO_STORE)


def _error(request: web.Request, status: int, message: str) -> web.Response:
    message = scrub(message)
    if request.path.startswith("/api/"):
        return _api({"schema": "forksync.dashboard.error/1", "error": message, "status": status}, status)
    title = render_part(TEXTS, "error_title", status=status)
    return _page("error", status, title=title, message=message, forks=[], fork=None, page="", user=_user(request))


def _user(request: web.Request) -> str | None:
    return request.get(USER_KEY)


def _allowed(request: web.Request) -> Callable[[str], bool]:
    return request.get(ALLOWED_KEY) or (lambda fork: True)


async def _run(request: web.Request, fn, *args):
    """``fn(*args)`` on the dashboard's thread, in one read transaction of its store: a page reads
    several tables one query after the other, and a sync or the worker that commits between two of
    them would make it show half of each state (a total above counts of another ledger)."""
    d = request.app[DASHBOARD_KEY]

    def read():
        with d.store.snapshot():
            return fn(*args)
    return await asyncio.get_running_loop().run_in_executor(d.executor, read)


class Unavailable(Exception):
    """GitHub could not be asked what the answer depends on (503); the message says so."""


def _fork(request: web.Request) -> str:
    fork = f"{request.match_info['owner']}/{request.match_info['name']}"
    if not _allowed(request)(fork):
        if request.get(UNASKED_KEY):
            # said for every fork not shown while any check went unanswered, so it tells no one
            # which forks this store holds
            raise Unavailable(render_part(TEXTS, "unasked", fork=repr(fork)))
        # a fork the user may not read is answered as one that does not exist
        raise views.NotFound(render_part(TEXTS, "not_readable", fork=repr(fork)))
    return fork


def _shown(doc):
    """``doc`` as a page or an answer may show it: every text (and key) through
    :func:`bot.agents.redact.scrub`, so the userinfo of a URL (an upstream outside GitHub is
    recorded by its clone URL, which may carry a password; git quotes it in a fetch error) and
    the value of every configured secret and every GitHub token never reach a visitor, whichever
    stored field holds them — rows written by an earlier release included. One search of the whole
    document first for anything the scrub removes: a clean one (the usual case) is returned as it
    is, without a scrub of each of its texts."""
    text = json.dumps(doc)
    if (not _MAYBE_USERINFO.search(text) and not GITHUB_TOKEN.search(text)
            and not any(json.dumps(v)[1:-1] in text for v in configured_secrets())):
        return doc
    return _scrubbed(doc)


def _scrubbed(doc):
    if isinstance(doc, str):
        return scrub(doc)
    if isinstance(doc, dict):
        return {_scrubbed(k): _scrubbed(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_scrubbed(v) for v in doc]
    return doc


def _doc(d: Dashboard, page: str, fork: str, query) -> dict:
    now = d.clock()
    if page == "overview":
        doc = views.overview(d.store, fork, now, d.policy, d.queue_counts())
    elif page == "ledger":
        doc = views.ledger(d.store, fork, now, d.policy, {k: query.getall(k) for k in set(query.keys())})
    else:
        doc = getattr(views, page)(d.store, fork, now, d.policy)
    return _shown(doc)


def _figures(page: str, doc: dict) -> dict[str, str]:
    if page == "overview":
        return {"overview": plots.overview_figure(doc)} if doc["series"] else {}
    if page == "units":
        return {"units": plots.units_figure(doc)} if doc["units"] else {}
    if page == "validation":
        return {f"l2-{i}": plots.l2_figure(s) for i, s in enumerate(doc["l2"]) if s["points"]}
    return {}


def _forks_list(d: Dashboard, allowed) -> list[str]:
    return [f for f in views.fork_names(d.store) if allowed(f)]


async def index(request: web.Request) -> web.Response:
    d = request.app[DASHBOARD_KEY]
    allowed = _allowed(request)
    doc = await _run(request, lambda: _shown(views.forks(d.store, d.clock(), d.policy, allowed)))
    if len(doc["forks"]) == 1 and "all" not in request.query:
        raise web.HTTPFound(f"/forks/{doc['forks'][0]['fork']}/")
    return await _run(request, lambda: _page("forks", doc=doc, forks=[f["fork"] for f in doc["forks"]], fork=None, page="forks",
                                             user=_user(request), api="/api/v1/forks"))


async def page_view(request: web.Request) -> web.Response:
    d = request.app[DASHBOARD_KEY]
    page = request.match_info.get("page") or "overview"
    if page not in PAGES:
        raise views.NotFound(render_part(TEXTS, "no_page", page=repr(page), pages=PAGES))
    fork = _fork(request)
    allowed = _allowed(request)

    def build():
        doc = _doc(d, page, fork, request.query)
        # the query as sent, still percent-encoded: decoded, "q=%237" (PR 5007) became "q=#5007", a fragment
        raw = request.rel_url.raw_query_string
        api = f"/api/v1/forks/{fork}/{page}" + (f"?{raw}" if raw else "")
        return _page(page, doc=doc, figures=_figures(page, doc), forks=_forks_list(d, allowed), fork=fork, page=page,
                     user=_user(request), api=api, dispositions=views.DISPOSITIONS)
    return await _run(request, build)


async def entry_view(request: web.Request) -> web.Response:
    d = request.app[DASHBOARD_KEY]
    fork = _fork(request)
    allowed = _allowed(request)

    def build():
        doc = _shown(views.ledger_entry(d.store, fork, d.clock(), d.policy, request.match_info["sha"]))
        return _page("ledger_entry", doc=doc, forks=_forks_list(d, allowed), fork=fork, page="ledger", user=_user(request),
                     api=f"/api/v1/forks/{fork}/ledger/{request.match_info['sha']}")
    return await _run(request, build)


async def health_view(request: web.Request) -> web.Response:
    d = request.app[DASHBOARD_KEY]
    allowed = _allowed(request)

    def build():
        doc = _shown(views.health(d.store, d.clock(), d.policy, d.app_facts(), allowed))
        return _page("health", doc=doc, forks=_forks_list(d, allowed), fork=None, page="health", user=_user(request),
                     api="/api/v1/health")
    return await _run(request, build)


async def api_forks(request: web.Request) -> web.Response:
    d = request.app[DASHBOARD_KEY]
    allowed = _allowed(request)
    return _api(await _run(request, lambda: _shown(views.forks(d.store, d.clock(), d.policy, allowed))))


async def api_page(request: web.Request) -> web.Response:
    d = request.app[DASHBOARD_KEY]
    page = request.match_info["page"]
    if page not in PAGES:
        raise views.NotFound(render_part(TEXTS, "no_api_page", page=repr(page), pages=PAGES))
    fork = _fork(request)
    return _api(await _run(request, _doc, d, page, fork, request.query))


async def api_entry(request: web.Request) -> web.Response:
    d = request.app[DASHBOARD_KEY]
    fork = _fork(request)
    return _api(await _run(request, lambda: _shown(views.ledger_entry(d.store, fork, d.clock(), d.policy, request.match_info["sha"]))))


async def api_health(request: web.Request) -> web.Response:
    d = request.app[DASHBOARD_KEY]
    allowed = _allowed(request)
    return _api(await _run(request, lambda: _shown(views.health(d.store, d.clock(), d.policy, d.app_facts(), allowed))))


async def fork_address(request: web.Request) -> web.Response:
    """``/forks/{fork}`` (the fork's name as GitHub writes it, no trailing slash) → its overview,
    and ``/api/v1/forks/{fork}`` → the overview's JSON twin; the query string goes along."""
    raw = request.rel_url.raw_query_string
    target = request.rel_url.raw_path + ("/overview" if request.path.startswith("/api/") else "/")
    raise web.HTTPFound(target + (f"?{raw}" if raw else ""))


async def static(request: web.Request) -> web.StreamResponse:
    name = request.match_info["file"]
    path = plots.plotly_js_path() if name == "plotly.min.js" else STATIC / name
    if name not in ("plotly.min.js", "dashboard.js", "dashboard.css") or not path.is_file():
        raise views.NotFound(render_part(TEXTS, "no_static_file", name=repr(name)))
    return web.FileResponse(path, headers={"Cache-Control": "public, max-age=86400"})


def _is_dashboard(path: str) -> bool:
    return path in ("/", "/health") or path.startswith(("/forks/", "/api/", "/static/", "/auth/"))


@web.middleware
async def errors(request: web.Request, handler):
    """Every answer of a dashboard path is a page or a JSON document, never a 500. Each answer
    carries ``Server-Timing: app;dur=<ms>`` (the time this server spent on it)."""
    t0 = time.perf_counter()
    resp = await _answer(request, handler)
    if _is_dashboard(request.path) and not resp.prepared:
        resp.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - t0) * 1000:.2f}"
    return resp


async def _answer(request: web.Request, handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except views.NotFound as e:
        return _error(request, 404, str(e))
    except views.BadQuery as e:
        return _error(request, 400, str(e))
    except Unavailable as e:
        resp = _error(request, 503, str(e))
        resp.headers["Retry-After"] = "10"
        return resp
    except web.HTTPNotFound:
        # any method under the dashboard's own paths: a client of the API reads JSON errors
        if request.method in ("GET", "HEAD") or _is_dashboard(request.path):
            return _error(request, 404, render_part(TEXTS, "no_path", path=request.path))
        raise
    except web.HTTPMethodNotAllowed as e:
        if not _is_dashboard(request.path):
            raise
        resp = _error(request, 405, render_part(TEXTS, "read_only", method=request.method, path=request.path))
        resp.headers["Allow"] = e.headers.get("Allow", "GET,HEAD")
        return resp
    except web.HTTPException:
        raise
    except Exception as e:  # noqa: BLE001 - a page must answer, and the log says what broke
        if not _is_dashboard(request.path):
            raise
        log.exception("dashboard: %s %s failed", request.method, request.path)
        return _error(request, 503, render_part(TEXTS, "not_built", error=type(e).__name__))


def add_dashboard(app: web.Application, dashboard: Dashboard) -> None:
    """Mount the dashboard's routes and its error middleware on ``app`` (before it starts)."""
    app[DASHBOARD_KEY] = dashboard
    app.middlewares.append(errors)
    if dashboard.access is not None:
        install(app, dashboard.access, lambda: views.fork_names(dashboard.store))
    r = app.router
    r.add_get("/", index)
    r.add_get("/health", health_view)
    r.add_get("/forks/{owner}/{name}", fork_address)
    r.add_get("/forks/{owner}/{name}/", page_view)
    r.add_get("/forks/{owner}/{name}/ledger/{sha}", entry_view)
    r.add_get("/forks/{owner}/{name}/{page}", page_view)
    r.add_get("/api/v1/forks", api_forks)
    r.add_get("/api/v1/health", api_health)
    r.add_get("/api/v1/forks/{owner}/{name}", fork_address)
    r.add_get("/api/v1/forks/{owner}/{name}/ledger/{sha}", api_entry)
    r.add_get("/api/v1/forks/{owner}/{name}/{page}", api_page)
    r.add_get("/static/{file}", static)

    def warm() -> None:
        # change-point detection of long L2 series takes a second or more; do it before the first
        # visitor asks (it is cached until a series changes)
        for fork in views.fork_names(dashboard.store):
            try:
                views.validation(dashboard.store, fork, dashboard.clock(), dashboard.policy)
            except Exception:  # noqa: BLE001 - a page that cannot be built says so when asked
                log.exception("dashboard: warming the validation page of %s failed", fork)

    async def start(app: web.Application) -> None:
        asyncio.get_running_loop().run_in_executor(dashboard.executor, warm)

    async def close(app: web.Application) -> None:
        dashboard.executor.shutdown(wait=True)
    app.on_startup.append(start)
    app.on_cleanup.append(close)


def make_dashboard_app(dashboard: Dashboard) -> web.Application:
    """A read-only application with the dashboard alone (``forksync dashboard``)."""
    app = web.Application()
    add_dashboard(app, dashboard)
    return app


__all__ = ["Dashboard", "add_dashboard", "make_dashboard_app", "utc", "CSP", "DASHBOARD_KEY"]
