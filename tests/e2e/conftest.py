"""The end-to-end world: upstream and the fork on the local GitHub, the real bot (web app, durable
queue, worker, handlers) started against it, and a writer's client (alice)."""
from __future__ import annotations

import pytest

from tests.support.e2e import sync_world


@pytest.fixture
async def world(fake_github, tmp_path):
    async with sync_world(fake_github, tmp_path) as w:
        yield w
