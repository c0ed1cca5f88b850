"""Keep the fake honest (github-platform notes §8.7): call every documented operation, with
GitHub's own request example as the body where the description has one, and require that the
fake never crashes, never answers outside the operation's documented responses, and that GitHub's
examples pass GitHub's request schemas."""
from __future__ import annotations

import json

import aiohttp
from gidgethub.apps import get_jwt

from bot.fakegithub import contract
from tests.support.github import commit_files, git, make_source_repo


async def test_every_operation_with_githubs_examples(fake_github, tmp_path):
    fake = fake_github
    src = tmp_path / "src"
    make_source_repo(src, [{"a.txt": "1\n"}])
    fork = fake.create_repo("meta/triton", source=src)
    fork.workflows.add("ci.yml")
    git(src, "checkout", "-q", "-b", "feature")
    commit_files(src, {"f.txt": "f\n"}, "feature")
    git(src, "push", "-q", str(fork.path), "feature", "feature:scratch")
    inst = fake.install("meta")
    fake.add_collaborator(fork, "alice", "write")
    jwt = get_jwt(app_id=str(fake.app.id), private_key=fake.app.private_key_pem)
    headers = {"User-Agent": "forksync-test", "X-GitHub-Api-Version": "2022-11-28",
               "Accept": "application/vnd.github+json"}
    async with aiohttp.ClientSession() as s:
        async def call(method, path, body=None, app=False, token=None):
            h = dict(headers, Authorization=f"Bearer {jwt}" if app else f"token {token}")
            data = json.dumps(body).encode() if body is not None else None
            if data is not None:
                h["Content-Type"] = "application/json"
            async with s.request(method, fake.url + path, data=data, headers=h, allow_redirects=False) as r:
                text = await r.read()
                return r.status, (json.loads(text) if text and r.content_type == "application/json" else None)

        _, tok = await call("POST", f"/app/installations/{inst.id}/access_tokens", app=True)
        token = tok["token"]
        _, pr = await call("POST", "/repos/meta/triton/pulls", {"title": "t", "head": "feature", "base": "main"},
                           token=token)
        _, comment = await call("POST", "/repos/meta/triton/issues/1/comments", {"body": "hi"}, token=token)
        _, run = await call("POST", "/repos/meta/triton/check-runs",
                            {"name": "L1", "head_sha": pr["head"]["sha"], "conclusion": "success",
                             "output": {"title": "t", "summary": "s"}}, token=token)
        await call("POST", "/repos/meta/triton/actions/workflows/ci.yml/dispatches", {"ref": "main"}, token=token)
        wf_run = next(iter(fork.workflow_runs.values()))
        fake.complete_workflow_run(fork, wf_run.id, "success", {"junit": b"zip"})
        main = fork.git.ref("refs/heads/main")
        c = fork.git.commit(main)
        params = {
            "owner": "meta", "repo": "triton", "installation_id": inst.id, "pull_number": pr["number"],
            "issue_number": 1, "comment_id": comment["id"], "check_run_id": run["id"], "path": "a.txt",
            "basehead": "main...feature", "branch": "main", "username": "alice", "name": "bug",
            "file_sha": fork.git.blob_at("main", "a.txt")[0], "tree_sha": c.tree, "commit_sha": main,
            "workflow_id": "ci.yml", "run_id": wf_run.id, "artifact_id": wf_run.artifacts[0].id,
            "archive_format": "zip", "code": "no-such-code",
        }
        doc = contract.rest_document()
        statuses = {}
        for op_id, (method, template) in sorted(contract.operations().items(), key=lambda kv: kv[1][0] == "DELETE"):
            p = dict(params, ref="heads/scratch" if op_id.startswith("git/") else "main")
            path = contract.spec_path(template, p).replace("%2F", "/")
            rb = doc["paths"][template][method.lower()].get("requestBody")
            body = None
            if rb:
                examples = rb["content"].get("application/json", {}).get("examples", {})
                ex = next(iter(examples.values()), None)
                if ex and "$ref" in ex:
                    ex = doc["components"]["examples"][ex["$ref"].rsplit("/", 1)[1]]
                body = ex["value"] if ex else {}
            status, _ = await call(method, path, body, app=op_id.startswith("apps/") and op_id !=
                                   "apps/list-repos-accessible-to-installation", token=token)
            documented = set(doc["paths"][template][method.lower()]["responses"])
            statuses[op_id] = status
            assert status < 500, (op_id, status)
            assert str(status) in documented or status in (401, 403, 404, 422), (op_id, status, documented)
    assert len(statuses) == 73
    # GitHub's own examples that break GitHub's own request schema (kept visible, not hidden):
    bad_examples = sorted({v.operation for v in fake.violations if v.kind == "invalid-request"})
    assert bad_examples == []
    assert [str(v) for v in fake.violations if v.kind != "invalid-request"] == []
    fake.violations.clear()


def _random_json(rng, depth=0):
    kinds = ["str", "int", "bool", "null", "list", "dict", "sha", "name"] if depth < 3 else ["str", "int", "null"]
    k = rng.choice(kinds)
    if k == "str":
        return rng.choice(["", "main", "x" * rng.randint(1, 300), "héllo", "refs/heads/a", "\u0000", "completed"])
    if k == "int":
        return rng.choice([0, -1, 1, 2**31, 10**20])
    if k == "bool":
        return rng.random() < 0.5
    if k == "null":
        return None
    if k == "sha":
        return "".join(rng.choice("0123456789abcdef") for _ in range(40))
    if k == "name":
        return rng.choice(["title", "body", "head", "base", "sha", "ref", "name", "status", "conclusion"])
    if k == "list":
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = ["title", "body", "head", "base", "sha", "ref", "name", "status", "conclusion", "merge_method",
            "labels", "content", "state", "output", "event", "tree", "message", "parents", "force", "inputs"]
    return {rng.choice(keys): _random_json(rng, depth + 1) for _ in range(rng.randint(0, 5))}


async def test_random_bodies_never_crash_the_fake(fake_github, tmp_path):
    """400 seeded random JSON bodies (and some non-JSON ones) against every write operation: the
    fake answers 4xx or 2xx, never 5xx, and never crashes; bodies GitHub's schema rejects are
    recorded as invalid-request violations (then cleared: here they are the point)."""
    import random

    fake = fake_github
    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    git(tmp_path / "src", "checkout", "-q", "-b", "feature")
    commit_files(tmp_path / "src", {"f.txt": "f\n"}, "feature")
    fork = fake.create_repo("meta/triton", source=tmp_path / "src")
    git(tmp_path / "src", "push", "-q", str(fork.path), "feature")
    inst = fake.install("meta")
    tok = fake.state.issue_token(installation_id=inst.id).token
    writes = [(m, t) for m, t in contract.operations().values() if m in ("POST", "PATCH", "PUT")
              and not t.startswith("/app")]
    rng = random.Random(20261130)
    statuses = []
    async with aiohttp.ClientSession() as s:
        for n in range(400):
            method, template = rng.choice(writes)
            path = contract.spec_path(template, {
                "owner": "meta", "repo": "triton", "pull_number": rng.choice([1, 2, 999]), "issue_number": 1,
                "comment_id": 1, "check_run_id": 1, "ref": "heads/feature", "name": "bug",
                "workflow_id": "ci.yml", "installation_id": inst.id}).replace("%2F", "/")
            body = (json.dumps(_random_json(rng)).encode() if n % 10 else rng.choice([b"{", b"[]", b"null", b"\xff"]))
            async with s.request(method, fake.url + path, data=body, headers={
                    "Authorization": f"token {tok}", "User-Agent": "fuzz", "Content-Type": "application/json"}) as r:
                statuses.append(r.status)
    crashes = [str(v) for v in fake.violations if v.kind not in ("invalid-request",)]
    fake.violations[:] = [v for v in fake.violations if v.kind != "invalid-request"]
    assert crashes == []
    assert max(statuses) < 500
    from collections import Counter
    assert set(statuses) <= {200, 201, 202, 204, 400, 403, 404, 405, 409, 422}
    assert Counter(statuses)[422] > 100 and Counter(statuses)[400] > 10
    fake.violations.clear()
