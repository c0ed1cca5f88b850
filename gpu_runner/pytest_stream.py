"""A pytest plugin the runner loads into JUnit suites: one JSON line per finished test, written
and flushed as each test ends, beside the JUnit file (which pytest writes only at the very end).
A suite killed at its timeout therefore still tells every test that finished, and what it had
collected tells what did not run.

Loaded through ``PYTEST_PLUGINS=forksync_stream`` with this file copied as ``forksync_stream.py``
into a folder put first on ``PYTHONPATH`` (:func:`gpu_runner.runner.suite_env`), so the suite's
own command needs no change. Only the standard library and pytest's hooks are used. Lines
(file ``FORKSYNC_STREAM_REPORT``):

* ``{"event": "collected", "ids": [nodeid, …]}`` — once per collection (per xdist worker too);
* ``{"event": "test", "id", "classname", "name", "file", "outcome", "duration_s", "message",
  "traceback"}`` — one per test after its teardown; ``outcome`` as the JUnit report would give
  it: a failed setup or teardown is ``error``, a failed call ``failed``, skip and xfail
  ``skipped``, XPASS(strict) ``failed``. Ids are JUnit's ``classname::name``.

With pytest-xdist the controller writes the lines (workers forward their reports to it); each
worker first takes its own GPU: each variable of ``FORKSYNC_WORKER_GPU_VAR`` (comma-separated;
``CUDA_VISIBLE_DEVICES`` unless the runner is pinned with ``HIP_VISIBLE_DEVICES`` or
``ROCR_VISIBLE_DEVICES``) becomes the ``n``-th GPU of its own list (of ``FORKSYNC_WORKER_GPUS``,
comma-separated, where it is unset) for worker ``gw<n>``, before any test imports CUDA or HIP.
"""
from __future__ import annotations

import json
import os
import re

import pytest

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
_gpus = [g for g in os.environ.get("FORKSYNC_WORKER_GPUS", "").split(",") if g.strip()]
if _worker.startswith("gw") and _gpus:
    # one GPU per worker, round robin when there are more workers than GPUs
    for _var in (os.environ.get("FORKSYNC_WORKER_GPU_VAR") or "CUDA_VISIBLE_DEVICES").split(","):
        # each variable from its own list (HIP's and CUDA's may name different GPUs), else the runner's
        _own = [g for g in os.environ.get(_var.strip(), "").split(",") if g.strip()] or _gpus
        os.environ[_var.strip()] = _own[int(_worker[2:] or 0) % len(_own)]

def junit_names(nodeid: str) -> tuple[str, str]:
    """``(classname, name)`` as pytest's junitxml writes them (``mangle_test_address``):
    ``a/b/test_x.py::TestC::test_y[p]`` → ``("a.b.test_x.TestC", "test_y[p]")``. A copy of
    :func:`gpu_runner.reports.junit_names`: this file is loaded on its own, without the package."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def _utf8(v):
    """``v`` with every string made encodable as UTF-8: a message may hold a file name that is not
    UTF-8 (a lone surrogate, as ``os.listdir`` gives it), written as its ``\\udcff`` escape text."""
    if isinstance(v, str):
        return v.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(v, list):
        return [_utf8(x) for x in v]
    if isinstance(v, dict):
        return {k: _utf8(x) for k, x in v.items()}
    return v


class _Stream:
    def __init__(self, path: str):
        self.f = open(path, "a", buffering=1, encoding="utf-8")
        self.open: dict[str, dict] = {}

    def write(self, obj: dict) -> None:
        self.f.write(json.dumps(_utf8(obj), ensure_ascii=False) + "\n")
        self.f.flush()

    def report(self, rep) -> None:
        t = self.open.setdefault(rep.nodeid, {"outcome": "passed", "duration_s": 0.0, "message": "", "traceback": "",
                                              "file": getattr(rep, "fspath", None) or rep.nodeid.split("::")[0]})
        t["duration_s"] += float(getattr(rep, "duration", 0.0) or 0.0)
        if rep.failed:
            if t["outcome"] != "error":               # a failed setup or teardown is an error, and stays one
                t["outcome"] = "failed" if rep.when == "call" else "error"
            if not t["message"]:
                crash = getattr(getattr(rep, "longrepr", None), "reprcrash", None)
                text = rep.longreprtext or ""
                # whole: the runner hides secrets in them and only then cuts them to size
                t["message"] = getattr(crash, "message", "") or (text.strip().splitlines() or [""])[-1]
                t["traceback"] = text
        elif rep.skipped and t["outcome"] == "passed":
            t["outcome"] = "skipped"
        if rep.when == "teardown":
            classname, name = junit_names(rep.nodeid)
            t = self.open.pop(rep.nodeid)
            self.write({"event": "test", "id": f"{classname}::{name}" if classname else name, "nodeid": rep.nodeid,
                        "classname": classname, "name": name, **t})


_stream: _Stream | None = None


def pytest_configure(config) -> None:
    global _stream
    path = os.environ.get("FORKSYNC_STREAM_REPORT")
    if path and not hasattr(config, "workerinput"):      # xdist workers forward reports to the controller
        _stream = _Stream(path)


def pytest_collection_finish(session) -> None:
    if _stream is not None:
        _stream.write({"event": "collected", "ids": [i.nodeid for i in session.items]})


@pytest.hookimpl(optionalhook=True)                        # only with xdist installed
def pytest_xdist_node_collection_finished(node, ids) -> None:
    if _stream is not None:
        _stream.write({"event": "collected", "ids": list(ids)})


def pytest_runtest_logreport(report) -> None:
    if _stream is not None:
        _stream.report(report)


def pytest_unconfigure(config) -> None:
    global _stream
    if _stream is not None:
        _stream.f.close()
        _stream = None
