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
    Forksync,
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
FORKSYNC = Forksync("meta/forksync", "ab" * 20)


def zipped(result: RunResult, name: str = RESULT_FILE) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(name, result.to_json())
    return buf.getvalue()


def request(commit=SHA) -> Dispatch:
    return Dispatch(suite="kernels", commit=commit, platform="h200", request_id="req-42")


def test_run_name_round_trip():
    d = request()
    assert d.run_name == f"forksync-gpu kernels {SHA} h200 req-42 1"
    assert parse_run_name(d.run_name) == d
    assert parse_run_name(f"forksync-gpu kernels {SHA} h200 req-42") == d      # dispatched before shards existed
    sharded = Dispatch("kernels", SHA, "h200", "req-42", shards=4)
    assert parse_run_name(sharded.run_name) == sharded and sharded.shard_artifact(3) == "forksync-result-req-42-shard3"
    assert parse_run_name("CI") is None and parse_run_name(None) is None
    assert parse_run_name(f"forksync-gpu kernels {SHA[:12]} h200 req-42") is None


def test_dispatch_request_body():
    assert dispatch_request(request(), "main", forksync=FORKSYNC) == {"ref": "main", "inputs": {
        "suite": "kernels", "commit": SHA, "platform": "h200", "request_id": "req-42",
        "config": ".github/forksync.yml", "shards": "1", "forksync_repository": "meta/forksync",
        "forksync_revision": "ab" * 20}}
    with pytest.raises(ValueError, match="commit must be a full 40-hex sha, got 'main'"):
        dispatch_request(request(commit="main"), "main", forksync=FORKSYNC)
    with pytest.raises(ValueError, match=r"the forksync revision must be a full 40-hex sha \(FORKSYNC_REVISION\), got ''"):
        dispatch_request(request(), "main")


def test_workflow_template_matches_the_dispatch_and_collect_contract():
    wf = yaml.safe_load((ROOT / "templates/workflows" / WORKFLOW_FILE).read_text())
    inputs = wf[True]["workflow_dispatch"]["inputs"]      # YAML 1.1 reads the key `on` as True
    assert set(inputs) == set(dispatch_request(request(), "main", forksync=FORKSYNC)["inputs"])
    for shards in ("1", "3"):
        rendered = wf["run-name"].replace("${{ inputs.suite }}", "kernels").replace("${{ inputs.commit }}", SHA) \
            .replace("${{ inputs.platform }}", "h200").replace("${{ inputs.request_id }}", "req-42") \
            .replace("${{ inputs.shards }}", shards)
        assert parse_run_name(rendered) == Dispatch("kernels", SHA, "h200", "req-42", int(shards))
    suite = wf["jobs"]["suite"]
    assert suite["needs"] == "forksync" and suite["strategy"] == {
        "fail-fast": False, "matrix": {"shard": "${{ fromJSON(needs.forksync.outputs.shards) }}"}}
    steps = suite["steps"]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()" and upload["with"]["path"] == RESULT_FILE
    assert upload["with"]["name"] == ("${{ inputs.shards == '1' && format('forksync-result-{0}', inputs.request_id) || "
                                      "format('forksync-result-{0}-shard{1}', inputs.request_id, matrix.shard) }}")
    install = next(s for s in steps if s.get("name") == "Install forksync (the bot's commit)")
    assert install["run"].splitlines() == ["python3 -m pip install --require-hashes --no-deps -r forksync-wheel/runner.lock",
                                           "python3 -m pip install --no-deps --force-reinstall forksync-wheel/forksync-*.whl"]
    build = wf["jobs"]["forksync"]["steps"]
    checkout = next(s for s in build if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["ref"] == "${{ inputs.forksync_revision }}"
    run = next(s for s in steps if s.get("name") == "Run the suite")
    assert 'python3 -m gpu_runner run --suite "$SUITE" --commit "$COMMIT"' in run["run"]
    for step in [*steps, *build]:
        assert "${{" not in step.get("run", "")     # inputs reach the shell through env only (no injection)


def test_workflow_template_is_valid_for_github():
    """GitHub's workflow schema (schemastore's github-workflows.json, the copy check-jsonschema
    ships), read offline; YAML 1.2 (ruamel) so that the key ``on`` stays a string."""
    import json

    import check_jsonschema
    import jsonschema
    from ruamel.yaml import YAML

    schema = json.loads((Path(check_jsonschema.__file__).parent / "builtin_schemas/vendor/github-workflows.json").read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    wf = YAML(typ="safe").load((ROOT / "templates/workflows" / WORKFLOW_FILE).read_text())
    assert [e.message for e in validator.iter_errors(wf)] == []
    broken = {**wf, "jobs": {"suite": {**wf["jobs"]["suite"], "strategy": {"matrix": "shards"}}}}
    assert [e for e in validator.iter_errors(broken)] != []           # the schema does catch a broken job


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
    await dispatch(gh, "meta", "triton", d, ref="main", forksync=FORKSYNC)
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
    await dispatch(gh, "meta", "triton", d, ref="main", forksync=FORKSYNC)
    run_id = max(fork.workflow_runs)
    fake.complete_workflow_run(fork, run_id, "cancelled")
    async with aiohttp.ClientSession() as session:
        result = await collect(gh, await _event(gh, run_id, d), session_downloader(session, gh._token_source))
    assert (result.verdict, result.outcome, result.reasons[0].code) == ("red", "error", "workflow-failed")
    assert result.reasons[0].detail.endswith("concluded 'cancelled' without the artifact forksync-result-req-2")


async def test_a_sharded_run_merges_its_shards_and_a_missing_one_is_red(world):
    from bot.config.suites import SuiteConfig
    from gpu_runner.shards import shard_of

    fake, fork, gh, sha = world
    base = GREEN.model_copy(update={"commit": sha})
    halves = {i: [t for t in base.tests if shard_of(t.id, 2) == i] for i in (1, 2)}
    assert sorted(len(v) for v in halves.values()) != [0, 30]           # both shards hold tests

    def shard(i):
        tests = halves[i]
        counts = base.counts.model_copy(update={"total": len(tests), "passed": len(tests), "harness_total": len(tests)})
        return base.model_copy(update={"tests": tests, "counts": counts, "shard": f"{i}/2"})

    suite = SuiteConfig(name="kernels", command="pytest", report={"format": "junit", "path": "out.xml"},
                        expected_tests=30, platforms=["h200"], shards=2)
    outcomes = []
    for rid, arts in (("req-s1", {1, 2}), ("req-s2", {1})):
        d = Dispatch(suite="kernels", commit=sha, platform="h200", request_id=rid, shards=2)
        await dispatch(gh, "meta", "triton", d, ref="main", forksync=FORKSYNC)
        run_id = max(fork.workflow_runs)
        assert fork.workflow_runs[run_id].inputs["shards"] == "2"
        fake.complete_workflow_run(fork, run_id, "success", {d.shard_artifact(i): zipped(shard(i)) for i in arts})
        async with aiohttp.ClientSession() as session:
            outcomes.append(await collect(gh, await _event(gh, run_id, d), session_downloader(session, gh._token_source),
                                          suite_for=lambda name: suite))
    whole, short = outcomes
    assert (whole.verdict, whole.counts.passed, whole.shard, whole.backend) == ("green", 30, "all/2", "github-actions")
    assert (short.verdict, short.outcome) == ("red", "error")
    assert [(r.code, r.detail) for r in short.reasons] == [("shard-missing", "shard 2/2 sent no result")]
