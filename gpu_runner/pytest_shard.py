"""pytest plugin: run only this shard's tests (``-p gpu_runner.pytest_shard``, with
``FORKSYNC_SHARD=i/N`` in the environment; the runner sets both for a sharded suite).

The other tests are deselected (pytest's own mechanism), so neither the JUnit report nor pytest's
summary line counts them and the runner's harness check still holds. Which test is whose:
:func:`gpu_runner.shards.shard_of` on the pytest node id. Without ``FORKSYNC_SHARD`` it does nothing.
"""
from __future__ import annotations

import os

from gpu_runner.shards import ENV_SHARD, parse_shard, shard_of


def pytest_collection_modifyitems(config, items):
    spec = os.environ.get(ENV_SHARD)
    if not spec:
        return
    index, count = parse_shard(spec)
    keep = [it for it in items if shard_of(it.nodeid, count) == index]
    drop = [it for it in items if shard_of(it.nodeid, count) != index]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_report_header(config):
    spec = os.environ.get(ENV_SHARD)
    return [f"forksync shard {spec} (tests split by node id)"] if spec else []
