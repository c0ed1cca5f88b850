"""The ``github-actions`` backend: scale-out through self-hosted GPU runners.

The bot dispatches ``.github/workflows/forksync-gpu.yml`` (template:
``templates/workflows/forksync-gpu.yml``) with ``workflow_dispatch`` inputs (suite, commit,
platform, request id); the workflow runs ``python -m gpu_runner run`` on a runner labelled with
the platform and uploads the result JSON as the artifact ``forksync-result-<request id>``. When
the ``workflow_run`` webhook says the run completed, :func:`collect` reads that artifact back.
A run that completes without it — cancelled, crashed runner, a workflow edited to skip the step —
yields a red result (``workflow-failed``): silence is not green.

``gh`` is any gidgethub-style client (``await gh.post(url, url_vars, data=…)``,
``await gh.getitem(url, url_vars)``), e.g. :class:`bot.github.client.GitHubClient`. The artifact's zip is
fetched by a ``download(url) -> bytes`` callable (gidgethub decodes bodies as text); use
:func:`session_downloader`. Pure parts — the dispatch request, run-name parsing, reading the zip,
the red result for a missing artifact — need no network.
"""
from __future__ import annotations

import io
import re
import time
import zipfile
from dataclasses import dataclass
from typing import Awaitable, Callable

from pydantic import ValidationError

from gpu_runner.result import Environment, Reason, RunResult
from gpu_runner.shards import merge, merge_suite

WORKFLOW_FILE = "forksync-gpu.yml"
RESULT_FILE = "result.json"
RUN_NAME_PREFIX = "forksync-gpu"
_RUN_NAME = re.compile(rf"^{RUN_NAME_PREFIX} (?P<suite>[A-Za-z0-9_.\-]+) (?P<commit>[0-9a-f]{{40}}) "
                       r"(?P<platform>[a-z0-9]+) (?P<request_id>[A-Za-z0-9_\-]+)(?: (?P<shards>[1-9][0-9]?))?$")


@dataclass(frozen=True)
class Dispatch:
    """One requested suite run. ``request_id`` ties the workflow run and its artifact to the request
    (GitHub's dispatch answer carries no run id on older API versions)."""

    suite: str
    commit: str
    platform: str
    request_id: str
    shards: int = 1

    @property
    def run_name(self) -> str:
        return f"{RUN_NAME_PREFIX} {self.suite} {self.commit} {self.platform} {self.request_id} {self.shards}"

    @property
    def artifact(self) -> str:
        """The artifact of an unsharded run (a sharded one has one per shard: :meth:`shard_artifact`)."""
        return f"forksync-result-{self.request_id}"

    def shard_artifact(self, index: int) -> str:
        return f"forksync-result-{self.request_id}-shard{index}"


@dataclass(frozen=True)
class Forksync:
    """Which forksync the workflow installs on the runner: the repository and the exact commit the
    bot runs (``FORKSYNC_REVISION``), so gpu_runner on the GPU machine is the code the bot was
    tested with. ``repository`` is ``owner/name`` on the same GitHub."""

    repository: str = "forksync/forksync"
    revision: str = ""


def dispatch_request(d: Dispatch, ref: str, config_path: str = ".github/forksync.yml",
                     forksync: Forksync | None = None) -> dict:
    """The JSON body of ``POST /repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches``.
    ``ref`` is the branch whose workflow file runs (the fork's default branch: the workflow and the
    config it reads are the trusted copies, never the PR's); ``commit`` is what gets tested;
    ``shards`` how many runners share the suite; ``forksync_repository``/``forksync_revision``
    which forksync the runners install (a full sha; the workflow refuses anything else)."""
    if not re.fullmatch(r"[0-9a-f]{40}", d.commit):
        raise ValueError(f"commit must be a full 40-hex sha, got {d.commit!r}")
    fs = forksync or Forksync()
    if not re.fullmatch(r"[0-9a-f]{40}", fs.revision):
        raise ValueError(f"the forksync revision must be a full 40-hex sha (FORKSYNC_REVISION), got {fs.revision!r}")
    return {"ref": ref, "inputs": {"suite": d.suite, "commit": d.commit, "platform": d.platform,
                                   "request_id": d.request_id, "config": config_path, "shards": str(d.shards),
                                   "forksync_repository": fs.repository, "forksync_revision": fs.revision}}


async def dispatch(gh, owner: str, repo: str, d: Dispatch, ref: str, workflow: str = WORKFLOW_FILE,
                   forksync: Forksync | None = None) -> None:
    """Ask GitHub to run the workflow (204 on success; gidgethub raises on errors)."""
    await gh.post("/repos/{owner}/{repo}/actions/workflows/{workflow}/dispatches",
                  {"owner": owner, "repo": repo, "workflow": workflow}, data=dispatch_request(d, ref, forksync=forksync))


def parse_run_name(title: str | None) -> Dispatch | None:
    """The :class:`Dispatch` a workflow run's ``display_title`` (its ``run-name``) names, or None
    for runs forksync did not start (a name without the shard count is one shard)."""
    m = _RUN_NAME.match(title or "")
    if not m:
        return None
    g = m.groupdict()
    return Dispatch(g["suite"], g["commit"], g["platform"], g["request_id"], int(g["shards"] or 1))


def result_from_zip(data: bytes, expected: Dispatch, artifact: str | None = None) -> RunResult:
    """The result JSON inside an artifact zip, checked against the request: a result for another
    suite, commit or platform is not accepted (red ``workflow-failed``), nor is an unreadable one."""
    artifact = artifact or expected.artifact
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            text = z.read(RESULT_FILE)
    except (zipfile.BadZipFile, KeyError) as e:
        return missing_result(expected, f"the artifact {artifact} holds no readable {RESULT_FILE} ({e})")
    try:
        result = RunResult.from_json(text)
    except ValidationError as e:
        return missing_result(expected, f"{RESULT_FILE} in {artifact} is not a forksync result: "
                                        f"{e.errors()[0]['loc']}: {e.errors()[0]['msg']}")
    # a workflow copy that lost --platform writes gpu_runner's default (cpu): that result is not
    # the one requested, and must not be stored under another platform's row
    if (result.suite, result.commit, result.platform) != (expected.suite, expected.commit, expected.platform):
        return missing_result(expected, f"{RESULT_FILE} is for suite {result.suite!r} at {result.commit[:12]} on "
                                        f"{result.platform}, not the requested {expected.suite!r} at "
                                        f"{expected.commit[:12]} on {expected.platform}")
    return result.model_copy(update={"backend": "github-actions"})


def missing_result(d: Dispatch, why: str, level: str = "L1") -> RunResult:
    """A red result standing in for one that never came back."""
    now = int(time.time())
    return RunResult(suite=d.suite, level=level, commit=d.commit, platform=d.platform, backend="github-actions",
                     verdict="red", outcome="error", reasons=[Reason(code="workflow-failed", detail=why)],
                     environment=Environment(runner_id="unknown"), started_at=now, finished_at=now)


async def collect(gh, event: dict, download: Callable[[str], Awaitable[bytes]], suite_for=None) -> RunResult | None:
    """Handle a ``workflow_run`` webhook payload: None unless it is a *completed* run that forksync
    dispatched; else the suite's :class:`RunResult` from the run's artifact (red when absent). A
    sharded run (N in its run name) has one artifact per shard (:meth:`Dispatch.shard_artifact`);
    they merge into one result (:func:`gpu_runner.shards.merge`: a missing or unreadable shard is
    red, the summed count is judged against the suite's ``expected_tests`` when ``suite_for(name)``
    gives the trusted suite config)."""
    run = event.get("workflow_run") or {}
    if event.get("action") != "completed":
        return None
    d = parse_run_name(run.get("display_title") or run.get("name"))
    if d is None:
        return None
    owner, repo = event["repository"]["full_name"].split("/", 1)
    arts = await gh.getitem("/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts",
                            {"owner": owner, "repo": repo, "run_id": run["id"]})
    if d.shards > 1:
        return await _collect_shards(d, arts.get("artifacts", []), download, suite_for(d.suite) if suite_for else None)
    for a in arts.get("artifacts", []):
        if a["name"] == d.artifact and not a.get("expired"):
            return result_from_zip(await download(a["archive_download_url"]), d)
    return missing_result(d, f"workflow run {run.get('html_url') or run['id']} concluded "
                             f"{run.get('conclusion')!r} without the artifact {d.artifact}")


async def _collect_shards(d: Dispatch, artifacts: list[dict], download, suite) -> RunResult:
    by_name = {a["name"]: a for a in artifacts if not a.get("expired")}
    results: dict[int, RunResult | None] = {}
    for i in range(1, d.shards + 1):
        a = by_name.get(d.shard_artifact(i))
        if a is None:
            results[i] = None
            continue
        r = result_from_zip(await download(a["archive_download_url"]), d, d.shard_artifact(i))
        results[i] = r if r.shard else None       # a stand-in for an unreadable shard counts as missing
    if suite is not None:
        return merge_suite(results, suite, d.commit, d.platform, "github-actions", count=d.shards)
    return merge(results, d.shards, suite=d.suite, level="L1", commit=d.commit, platform=d.platform,
                 backend="github-actions")


def session_downloader(session, token_source: Callable[[], Awaitable[str]]) -> Callable[[str], Awaitable[bytes]]:
    """``download(url)`` for :func:`collect` over an ``aiohttp.ClientSession``: GET with the token,
    then follow GitHub's 302 to the signed blob URL *without* the token (it must not leak there)."""

    async def download(url: str) -> bytes:
        headers = {"Authorization": f"token {await token_source()}", "User-Agent": "forksync",
                   "Accept": "application/vnd.github+json"}
        async with session.get(url, headers=headers, allow_redirects=False) as resp:
            if resp.status in (301, 302, 303, 307, 308):
                location = resp.headers["Location"]
            else:
                resp.raise_for_status()
                return await resp.read()
        async with session.get(location, headers={"User-Agent": "forksync"}) as resp:
            resp.raise_for_status()
            return await resp.read()

    return download
