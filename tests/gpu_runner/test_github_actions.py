"""The github-actions backend (gpu_runner/github_actions.py): its pure parts, the shipped workflow
template, and dispatch → artifact → collect against the local GitHub (bot/fakegithub)."""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import aiohttp
import pytest
import yaml

from gpu_runner.github_actions import (
    RESULT_FILE,
    WORKFLOW_FILE,
    Dispatch,
    collect,
    dispatch,
    dispatch_request,
    missing_result,
    parse_run_name,
    result_from_zip,
    session_downloader,
)
from gpu_runner.result import RunResult
from tests.support.github import make_source_repo

ROOT = Path(__file__).resolve().parents[2]
GREEN = RunResult.from_json((ROOT / "tests/data/gpu_runner/h200-l1-green.json").read_text())
SHA = "3fa0445b8727" + "0" * 28


def zipped(result: RunResult, name: str = RESULT_FILE) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(name, result.to_json())
    return buf.getvalue()


def request(commit=SHA) -> Dispatch:
    return Dispatch(suite="kernels", commit=commit, platform="h200", request_id="req-42")


def test_run_name_round_trip():
    d = request()
    assert d.run_name == f"forksync-gpu kernels {SHA} h200 req-42"
    assert parse_run_name(d.run_name) == d
    assert parse_run_name("CI") is None and parse_run_name(None) is None
    assert parse_run_name(f"forksync-gpu kernels {SHA[:12]} h200 req-42") is None


def test_dispatch_request_body():
    assert dispatch_request(request(), "main") == {"ref": "main", "inputs": {
        "suite": "kernels", "commit": SHA, "platform": "h200", "request_id": "req-42",
        "config": ".github/forksync.yml"}}
    with pytest.raises(ValueError, match="commit must be a full 40-hex sha, got 'main'"):
        dispatch_request(request(commit="main"), "main")


def test_workflow_template_matches_the_dispatch_and_collect_contract():
    wf = yaml.safe_load((ROOT / "templates/workflows" / WORKFLOW_FILE).read_text())
    inputs = wf[True]["workflow_dispatch"]["inputs"]      # YAML 1.1 reads the key `on` as True
    assert set(inputs) == set(dispatch_request(request(), "main")["inputs"])
    rendered = wf["run-name"].replace("${{ inputs.suite }}", "kernels").replace("${{ inputs.commit }}", SHA) \
        .replace("${{ inputs.platform }}", "h200").replace("${{ inputs.request_id }}", "req-42")
    assert parse_run_name(rendered) == request()
    steps = wf["jobs"]["suite"]["steps"]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and upload["with"]["path"] == RESULT_FILE
    assert upload["with"]["name"].replace("${{ inputs.request_id }}", "req-42") == request().artifact
    run = next(s for s in steps if s.get("name") == "Run the suite")
    assert run["run"].startswith("python3 -m gpu_runner run --suite \"$SUITE\" --commit \"$COMMIT\"")
    assert "${{" not in run["run"]          # inputs reach the shell through env only (no injection)


def test_result_from_zip_accepts_only_the_requested_result():
    d = request(commit=GREEN.commit)
    ok = result_from_zip(zipped(GREEN), d)
    assert (ok.verdict, ok.backend, ok.counts.passed) == ("green", "github-actions", 30)
    other = result_from_zip(zipped(GREEN.model_copy(update={"suite": "other"})), d)
    assert (other.verdict, other.outcome, other.reasons[0].code) == ("red", "error", "workflow-failed")
    assert other.reasons[0].detail.startswith("result.json is for suite 'other'")
    assert result_from_zip(b"not a zip", d).reasons[0].detail.startswith(
        "the artifact forksync-result-req-42 holds no readable result.json")
    assert "holds no readable result.json" in result_from_zip(zipped(GREEN, "other.json"), d).reasons[0].detail


def test_missing_result_is_red():
    r = missing_result(request(), "workflow run 7 concluded 'cancelled' without the artifact forksync-result-req-42")
    assert (r.verdict, r.outcome, r.suite, r.commit, r.platform) == ("red", "error", "kernels", SHA, "h200")


@pytest.fixture
def world(fake_github, github_app, tmp_path):
    src = tmp_path / "src"
    shas = make_source_repo(src, [{"a.txt": "1\n"}])
    fork = fake_github.create_repo("meta/triton", source=src, required_checks=[])
    fork.workflows.add(WORKFLOW_FILE)
    inst = fake_github.install("meta")
    return fake_github, fork, github_app.installation(inst.id), shas[0]


async def _event(gh, run_id: int, d: Dispatch) -> dict:
    run = await gh.getitem("/repos/{owner}/{repo}/actions/runs/{id}", {"owner": "meta", "repo": "triton", "id": run_id})
    # GitHub renders the workflow's run-name into display_title; the local GitHub runs no workflow
    run["display_title"] = d.run_name
    return {"action": "completed", "workflow_run": run, "repository": {"full_name": "meta/triton"}}


async def test_dispatch_then_collect_through_the_local_github(world):
    fake, fork, gh, sha = world
    d = Dispatch(suite="kernels", commit=sha, platform="h200", request_id="req-1")
    await dispatch(gh, "meta", "triton", d, ref="main")
    runs = await gh.getitem("/repos/{owner}/{repo}/actions/workflows/{wf}/runs",
                            {"owner": "meta", "repo": "triton", "wf": WORKFLOW_FILE})
    assert runs["total_count"] == 1
    run = fork.workflow_runs[runs["workflow_runs"][0]["id"]]
    assert (run.ref, run.inputs["commit"], run.inputs["request_id"]) == ("main", sha, "req-1")

    fake.complete_workflow_run(fork, run.id, "failure", {d.artifact: zipped(GREEN.model_copy(
        update={"commit": sha, "verdict": "red", "outcome": "fail"}))})
    async with aiohttp.ClientSession() as session:
        download = session_downloader(session, gh._token_source)
        assert await collect(gh, {**(await _event(gh, run.id, d)), "action": "requested"}, download) is None
        result = await collect(gh, await _event(gh, run.id, d), download)
    assert (result.suite, result.commit, result.verdict, result.backend) == ("kernels", sha, "red", "github-actions")


async def test_a_run_without_its_artifact_is_red(world):
    fake, fork, gh, sha = world
    d = Dispatch(suite="kernels", commit=sha, platform="h200", request_id="req-2")
    await dispatch(gh, "meta", "triton", d, ref="main")
    run_id = max(fork.workflow_runs)
    fake.complete_workflow_run(fork, run_id, "cancelled")
    async with aiohttp.ClientSession() as session:
        result = await collect(gh, await _event(gh, run_id, d), session_downloader(session, gh._token_source))
    assert (result.verdict, result.outcome, result.reasons[0].code) == ("red", "error", "workflow-failed")
    assert result.reasons[0].detail.endswith("concluded 'cancelled' without the artifact forksync-result-req-2")
