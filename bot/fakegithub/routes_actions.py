"""GitHub Actions routes the bot uses to run GPU suites through workflows: dispatch, list runs,
get a run, list a run's artifacts, download an artifact (302 to the zip, like GitHub).

The fake runs no workflow: a dispatch records a queued :class:`WorkflowRun`; a test (or the
demo) completes it with :meth:`FakeGitHub.complete_workflow_run` and attaches artifacts."""
from __future__ import annotations

from bot.fakegithub.routing import Ctx, GitHubError, Reply, not_found, route
from bot.fakegithub.state import WorkflowRun


@route("actions/create-workflow-dispatch")
async def dispatch(ctx: Ctx) -> Reply:
    ctx.require_permission("actions")
    r = ctx.repo
    wf = ctx.params["workflow_id"]
    if r.workflows and wf not in r.workflows:
        raise not_found()
    body = ctx.json()
    sha = r.git.resolve(body["ref"])
    if sha is None:
        raise GitHubError(422, f"No ref found for: {body['ref']}")
    run = WorkflowRun(ctx.state.new_id(), wf, body["ref"], sha, dict(body.get("inputs") or {}),
                      ctx.require_actor(), ctx.state.now())
    r.workflow_runs[run.id] = run
    if body.get("return_run_details"):
        base = f"{ctx.render.api}/repos/{r.full_name}/actions/runs/{run.id}"
        return Reply(200, {"workflow_run_id": run.id, "run_url": base,
                           "html_url": f"{ctx.render.web}/{r.full_name}/actions/runs/{run.id}"})
    return Reply(204)


@route("actions/list-workflow-runs")
async def list_runs(ctx: Ctx) -> Reply:
    r = ctx.repo
    wf = ctx.params["workflow_id"]
    runs = sorted((w for w in r.workflow_runs.values() if w.workflow_id == wf), key=lambda w: -w.id)
    for key in ("status", "head_sha"):
        if ctx.query.get(key):
            runs = [w for w in runs if getattr(w, key) == ctx.query[key]]
    if ctx.query.get("branch"):
        runs = [w for w in runs if w.ref == ctx.query["branch"]]
    page = ctx.page([ctx.render.workflow_run(r, w) for w in runs])
    page.data = {"total_count": len(runs), "workflow_runs": page.data}
    return page


def _run(ctx: Ctx) -> WorkflowRun:
    w = ctx.repo.workflow_runs.get(ctx.int_param("run_id"))
    if w is None:
        raise not_found()
    return w


@route("actions/get-workflow-run")
async def get_run(ctx: Ctx) -> Reply:
    return Reply(200, ctx.render.workflow_run(ctx.repo, _run(ctx)))


@route("actions/list-workflow-run-artifacts")
async def list_artifacts(ctx: Ctx) -> Reply:
    w = _run(ctx)
    items = [a for a in w.artifacts if not ctx.query.get("name") or a.name == ctx.query["name"]]
    page = ctx.page([ctx.render.artifact(ctx.repo, w, a) for a in items])
    page.data = {"total_count": len(items), "artifacts": page.data}
    return page


@route("actions/download-artifact")
async def download(ctx: Ctx) -> Reply:
    aid = ctx.int_param("artifact_id")
    if ctx.params["archive_format"] != "zip":
        raise not_found()
    for w in ctx.repo.workflow_runs.values():
        for a in w.artifacts:
            if a.id == aid:
                if a.expired:
                    raise GitHubError(410, "Artifact has expired")
                return Reply(302, None, headers={"Location": f"{ctx.fake.url}/_fake/artifacts/{a.id}.zip"})
    raise not_found()
