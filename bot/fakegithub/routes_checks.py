"""Checks routes: create, get, update, list for a ref, suites for a ref, rerequest.

GitHub's rules (github-platform notes §4): only Apps create check runs; ``waiting``/``requested``/
``pending`` are for Actions only (422 from an App); giving ``conclusion`` completes the run;
annotations are appended across updates; ``filter=latest`` (the default) keeps the newest run of
each name in each check suite — one suite per app and head here — so same-named runs of two apps
are both listed, as on GitHub."""
from __future__ import annotations

from bot.fakegithub.contract import fill
from bot.fakegithub.events import check_run_event
from bot.fakegithub.objects import iso, node_id
from bot.fakegithub.routing import Ctx, GitHubError, Reply, not_found, route
from bot.fakegithub.state import CheckRun

ACTIONS_ONLY = ("waiting", "requested", "pending")


def _require_app(ctx: Ctx) -> int:
    if ctx.installation is None:
        raise GitHubError(403, "You must authenticate via a GitHub App.")
    ctx.require_permission("checks")
    app = ctx.state.token_app(ctx.token)
    return app.id


def _apply(ctx: Ctx, run: CheckRun, body: dict) -> None:
    status = body.get("status")
    if status in ACTIONS_ONLY:
        raise GitHubError(422, "Invalid request.\n\nOnly GitHub Actions can set a status of waiting, pending, "
                               "or requested.")
    for key in ("name", "details_url", "external_id"):
        if key in body:
            setattr(run, key, body[key])
    if "started_at" in body:
        run.started_at = _parse(body["started_at"])
    if status:
        run.status = status
    if body.get("conclusion"):
        run.conclusion = body["conclusion"]
        run.status = "completed"
        run.completed_at = _parse(body["completed_at"]) if body.get("completed_at") else ctx.state.now()
    elif status == "completed":
        raise GitHubError(422, "Invalid request.\n\nNo subschema in \"anyOf\" matched. conclusion is required "
                               "when status is completed")
    out = body.get("output")
    if out:
        run.output.update({k: out[k] for k in ("title", "summary", "text") if k in out})
        run.annotations.extend(out.get("annotations", []))
    if "actions" in body:
        run.actions = list(body["actions"])


def _parse(value: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


@route("checks/create")
async def create_run(ctx: Ctx) -> Reply:
    app_id = _require_app(ctx)
    body = ctx.json()
    r = ctx.repo
    if not r.git.has_object(body["head_sha"]):
        raise GitHubError(422, "No commit found for SHA: " + body["head_sha"])
    run = CheckRun(ctx.state.new_id(), body["name"], body["head_sha"], app_id, "queued", None,
                   ctx.state.now(), None, {"title": None, "summary": None, "text": None})
    run.suite_id = ctx.state.check_suite_id(r, run.head_sha, app_id)
    _apply(ctx, run, body)
    r.check_runs[run.id] = run
    check_run_event(ctx.fake, r, run, "created", ctx.actor)
    if run.status == "completed":
        check_run_event(ctx.fake, r, run, "completed", ctx.actor)
    return Reply(201, ctx.render.check_run(r, run))


def _run(ctx: Ctx) -> CheckRun:
    run = ctx.repo.check_runs.get(ctx.int_param("check_run_id"))
    if run is None:
        raise not_found()
    return run


@route("checks/get")
async def get_run(ctx: Ctx) -> Reply:
    return Reply(200, ctx.render.check_run(ctx.repo, _run(ctx)))


@route("checks/update")
async def update_run(ctx: Ctx) -> Reply:
    _require_app(ctx)
    run = _run(ctx)
    was = run.status
    _apply(ctx, run, ctx.json())
    if run.status == "completed" and was != "completed":
        check_run_event(ctx.fake, ctx.repo, run, "completed", ctx.actor)
    return Reply(200, ctx.render.check_run(ctx.repo, run))


@route("checks/list-for-ref")
async def list_for_ref(ctx: Ctx) -> Reply:
    r = ctx.repo
    sha = r.git.resolve(ctx.params["ref"])
    if sha is None:
        raise not_found()
    runs = sorted((c for c in r.check_runs.values() if c.head_sha == sha), key=lambda c: -c.id)
    if ctx.query.get("check_name"):
        runs = [c for c in runs if c.name == ctx.query["check_name"]]
    if ctx.query.get("status"):
        runs = [c for c in runs if c.status == ctx.query["status"]]
    if ctx.query.get("filter", "latest") == "latest":
        seen, latest = set(), []
        for c in runs:
            if (c.name, c.suite_id) not in seen:
                seen.add((c.name, c.suite_id))
                latest.append(c)
        runs = latest
    page = ctx.page([ctx.render.check_run(r, c) for c in runs])
    page.data = {"total_count": len(runs), "check_runs": page.data}
    return page


@route("checks/list-suites-for-ref")
async def list_suites(ctx: Ctx) -> Reply:
    r = ctx.repo
    sha = r.git.resolve(ctx.params["ref"])
    if sha is None:
        raise not_found()
    suites = {}
    for c in r.check_runs.values():
        if c.head_sha == sha:
            suites.setdefault(c.suite_id, []).append(c)
    out = []
    order = ["action_required", "cancelled", "timed_out", "failure", "neutral", "success", "skipped", "stale"]
    for sid, runs in suites.items():
        done = all(c.status == "completed" for c in runs)
        conclusion = min((c.conclusion for c in runs if c.conclusion), key=order.index, default=None) if done else None
        app = ctx.state.apps.get(runs[0].app_id)
        out.append(fill("check-suite", {
            "id": sid, "node_id": node_id("CS", sid), "head_branch": None, "head_sha": sha,
            "status": "completed" if done else "in_progress", "conclusion": conclusion,
            "url": f"{ctx.render.api}/repos/{r.full_name}/check-suites/{sid}", "before": None, "after": sha,
            "pull_requests": [], "app": ctx.render.app(app) if app else None, "repository": ctx.render.minimal_repo(r),
            "created_at": iso(min(c.started_at for c in runs)), "updated_at": iso(ctx.state.now()),
            "head_commit": {"id": sha, "tree_id": r.git.commit(sha).tree, "message": r.git.commit(sha).message,
                            "timestamp": iso(r.git.commit(sha).committer_time), "author": None, "committer": None},
            "latest_check_runs_count": len(runs),
            "check_runs_url": f"{ctx.render.api}/repos/{r.full_name}/check-suites/{sid}/check-runs"}))
    return Reply(200, {"total_count": len(out), "check_suites": out})


@route("checks/rerequest-run")
async def rerequest(ctx: Ctx) -> Reply:
    _require_app(ctx)
    run = _run(ctx)
    if run.status != "completed":
        raise GitHubError(422, "This check run is not rerequestable")
    check_run_event(ctx.fake, ctx.repo, run, "rerequested", ctx.actor)
    return Reply(201, {})
