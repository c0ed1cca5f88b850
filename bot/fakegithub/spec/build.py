"""Rebuild the OpenAPI description and webhook examples in this folder (maintainer tool, not
imported at run time).

Inputs (none of them needed by the tests, which read only the outputs):
  --pack   the shared GitHub data pack (``shared/github``: rest-subset.json, webhooks-subset.json,
           webhooks/*.json, LICENSES.md)
  --full   ``generated/api.github.com.json`` of the npm package ``@octokit/openapi@23.0.2``
           (GitHub's github/rest-api-description republished by Octokit)
  --examples ``api.github.com/index.json`` of the npm package ``@octokit/webhooks-examples@7.6.1``

Outputs: ``rest.json`` (the pack's REST subset plus :data:`EXTRA_OPERATIONS`), ``webhooks.json``
(the pack's ``x-webhooks`` subset plus :data:`EXTRA_WEBHOOKS`), ``webhooks/*.json`` (the pack's
examples plus :data:`EXTRA_EXAMPLES`). Operations are copied verbatim except that Octokit's
``x-octokit`` keys are dropped; every component they reference is copied with them.

Usage: ``python bot/fakegithub/spec/build.py --pack ../shared/github --full …/api.github.com.json
--examples …/index.json``
"""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent

EXTRA_OPERATIONS = [
    "apps/list-installations", "apps/get-installation",
    "actions/create-workflow-dispatch", "actions/list-workflow-runs", "actions/get-workflow-run",
    "actions/list-workflow-run-artifacts", "actions/download-artifact",
    "pulls/list-reviews", "pulls/create-review", "pulls/update-branch",
    "reactions/list-for-issue", "reactions/create-for-issue",
    "issues/delete-comment", "repos/list-branches", "apps/create-from-manifest",
    "users/get-authenticated", "repos/get-branch-rules",
]
EXTRA_WEBHOOKS = [
    "issues-opened", "issues-edited", "issues-closed", "issues-reopened", "issue-comment-edited",
    "pull-request-reopened", "pull-request-edited", "pull-request-unlabeled", "issues-labeled",
    "issues-unlabeled", "pull-request-review-submitted",
    "installation-repositories-added", "check-suite-requested", "check-run-created",
    "check-run-requested-action", "workflow-dispatch",
    "pull-request-converted-to-draft", "pull-request-ready-for-review",
]
# (event, action or None, index in the examples list of that event among those with that action)
EXTRA_EXAMPLES = {
    "issues.opened.json": ("issues", "opened"),
    "issues.edited.json": ("issues", "edited"),
    "issue_comment.edited.json": ("issue_comment", "edited"),
    "pull_request.reopened.json": ("pull_request", "reopened"),
    "pull_request_review.submitted.json": ("pull_request_review", "submitted"),
    "installation_repositories.added.json": ("installation_repositories", "added"),
    "check_suite.requested.json": ("check_suite", "requested"),
    "pull_request.converted_to_draft.json": ("pull_request", "converted_to_draft"),
    "pull_request.ready_for_review.json": ("pull_request", "ready_for_review"),
}


def _strip_octokit(obj):
    if isinstance(obj, dict):
        return {k: _strip_octokit(v) for k, v in obj.items() if k != "x-octokit"}
    if isinstance(obj, list):
        return [_strip_octokit(v) for v in obj]
    return obj


def _refs(obj, out: set[str]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "$ref" and isinstance(v, str) and v.startswith("#/components/"):
                out.add(v)
            elif k == "mapping" and isinstance(v, dict):
                out.update(x for x in v.values() if isinstance(x, str) and x.startswith("#/components/"))
            else:
                _refs(v, out)
    elif isinstance(obj, list):
        for v in obj:
            _refs(v, out)


def _copy_components(src: dict, dst: dict, start) -> int:
    """Copy every component ``start`` references (transitively) from ``src`` into ``dst``."""
    todo: set[str] = set()
    _refs(start, todo)
    done: set[str] = set()
    added = 0
    while todo:
        # the smallest name first, not set.pop(): the order components are added in is the order
        # they are written in, and it must not change with the interpreter's hash seed, or every
        # rebuild would reorder the files
        ref = min(todo)
        todo.discard(ref)
        if ref in done:
            continue
        done.add(ref)
        _, _, kind, name = ref.split("/", 3)
        comp = _strip_octokit(src["components"][kind][name])
        bucket = dst.setdefault("components", {}).setdefault(kind, {})
        if name not in bucket:
            bucket[name] = comp
            added += 1
        more: set[str] = set()
        _refs(comp, more)
        todo |= more - done
    return added


def build(pack: Path, full_path: Path, examples_path: Path) -> None:
    full = json.loads(full_path.read_text())
    rest = json.loads((pack / "openapi" / "rest-subset.json").read_text())
    found = []
    for path, ops in full["paths"].items():
        for method, op in ops.items():
            if isinstance(op, dict) and op.get("operationId") in EXTRA_OPERATIONS:
                item = rest["paths"].setdefault(path, {})
                item[method] = _strip_octokit(op)
                if "parameters" in ops:
                    item["parameters"] = _strip_octokit(ops["parameters"])
                found.append(op["operationId"])
                _copy_components(full, rest, item)
    missing = set(EXTRA_OPERATIONS) - set(found)
    if missing:
        raise SystemExit(f"operations not found in {full_path}: {sorted(missing)}")
    rest["info"]["version"] = rest["info"]["version"] + "+forksync-extras"
    rest["info"]["description"] += (
        " forksync adds these operations, copied verbatim (minus x-octokit keys) from the same "
        "@octokit/openapi@23.0.2 file: " + ", ".join(EXTRA_OPERATIONS) + ".")
    (HERE / "rest.json").write_text(json.dumps(rest, indent=1, sort_keys=False) + "\n")

    hooks = json.loads((pack / "openapi" / "webhooks-subset.json").read_text())
    for name in EXTRA_WEBHOOKS:
        op = full["x-webhooks"][name]
        hooks["x-webhooks"][name] = _strip_octokit(op)
        _copy_components(full, hooks, op)
    (HERE / "webhooks.json").write_text(json.dumps(hooks, indent=1) + "\n")

    ex_dir = HERE / "webhooks"
    ex_dir.mkdir(exist_ok=True)
    for f in sorted((pack / "webhooks").glob("*.json")):
        shutil.copyfile(f, ex_dir / f.name)
    index = {e["name"]: e["examples"] for e in json.loads(examples_path.read_text())}
    for fname, (event, action) in EXTRA_EXAMPLES.items():
        cands = [x for x in index[event] if x.get("action") == action]
        (ex_dir / fname).write_text(json.dumps(cands[0], indent=2) + "\n")
    shutil.copyfile(pack / "LICENSES.md", HERE / "LICENSES.md")
    with (HERE / "LICENSES.md").open("a") as f:
        f.write(EXTRA_LICENSE_NOTE)


EXTRA_LICENSE_NOTE = """
## 4. Additions made for forksync (bot/fakegithub/spec)
- `rest.json` = the pack's `openapi/rest-subset.json` plus the operations listed in `build.py`
  (`EXTRA_OPERATIONS`), copied from npm **@octokit/openapi@23.0.2** `generated/api.github.com.json`
  (tarball sha1 `743435033357133786d56271b48a67991a614b0a`, the same file the pack was cut from;
  notice 2 and 3 above apply), `x-octokit` keys removed.
- `webhooks.json` = the pack's `openapi/webhooks-subset.json` plus the `x-webhooks` entries in
  `EXTRA_WEBHOOKS`, from the same file (notices 2 and 3).
- `webhooks/issues.opened.json`, `issues.edited.json`, `issue_comment.edited.json`,
  `pull_request.reopened.json`, `pull_request_review.submitted.json`,
  `installation_repositories.added.json`, `check_suite.requested.json`,
  `pull_request.converted_to_draft.json`, `pull_request.ready_for_review.json`: the first example with that
  action in npm **@octokit/webhooks-examples@7.6.1** `api.github.com/index.json` (published from the
  octokit/webhooks repository; its package.json says `"license": "MIT"`, author Gregor Martynus;
  notice 1 above applies), re-serialised with 2-space indent.
"""


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pack", type=Path, required=True)
    ap.add_argument("--full", type=Path, required=True)
    ap.add_argument("--examples", type=Path, required=True)
    a = ap.parse_args()
    build(a.pack, a.full, a.examples)
