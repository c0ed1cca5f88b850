"""The end-to-end world: upstream and the fork on the local GitHub, the real bot (web app, durable
queue, worker, handlers) started against it, and a writer's client (alice)."""
from __future__ import annotations

import pytest

from tests.support.e2e import sync_world
from tests.support.sync_world import ahead_of_upstream


@pytest.fixture
async def world(fake_github, tmp_path):
    async with sync_world(fake_github, tmp_path) as w:
        yield w


@pytest.fixture
async def ahead_world(fake_github, tmp_path):
    """The fork took upstream's later version of x.cpp early: picking the earlier upstream change
    conflicts, and the ``fork-ahead`` rule decides it (the fork already has that change)."""
    async with ahead_of_upstream(fake_github, tmp_path) as w:
        yield w
