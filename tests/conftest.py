"""Fixtures shared by every test package.

- ``fake_github``: a started :class:`bot.fakegithub.FakeGitHub` with the App registered
  (``fake.app``), webhook secret ``WEBHOOK_SECRET``; at teardown it asserts that the bot made no
  call outside GitHub's published contract (``fake.violations == []``).
- ``github_app``: a :class:`bot.github.client.GitHubApp` pointed at the fake, with instant, recorded
  sleeps (``app.slept``) so retry tests take no wall time.

Helpers (repositories, worlds) are plain modules under ``tests/support/``.
"""
from __future__ import annotations

import aiohttp
import pytest

from bot.fakegithub import FakeGitHub
from bot.github.client import GitHubApp
from tests.support.github import FAST_RETRY, WEBHOOK_SECRET


@pytest.fixture
async def fake_github(tmp_path):
    fake = FakeGitHub(tmp_path / "fakegithub", webhook_secret=WEBHOOK_SECRET)
    await fake.start()
    fake.app = fake.create_app(webhook_secret=WEBHOOK_SECRET)
    try:
        yield fake
    finally:
        await fake.stop()
    problems = [str(v) for v in fake.violations]
    assert not problems, "calls outside GitHub's contract:\n" + "\n".join(problems)


@pytest.fixture
async def github_app(fake_github):
    slept: list[float] = []

    async def record_sleep(s: float) -> None:
        slept.append(s)

    async with aiohttp.ClientSession() as session:
        app = GitHubApp(session, app_id=fake_github.app.id, private_key=fake_github.app.private_key_pem,
                        base_url=fake_github.url, retry=FAST_RETRY, sleep=record_sleep)
        app.slept = slept
        yield app


@pytest.fixture(autouse=True)
def markdown_people_read(monkeypatch):
    """Every Markdown template any test renders (PR and issue bodies, comments, check-run
    summaries; not the prompts a model reads) must be well-formed as GitHub shows it
    (tests/support/markdown_check.py): checked after the test, so a handler that catches errors
    cannot hide it. ``FORKSYNC_TEMPLATE_LOG=FILE`` appends each rendered template's name and
    text as a JSON line (which templates the tests reach)."""
    import json
    import os

    import jinja2

    from tests.support.markdown_check import problems

    original = jinja2.Template.render
    found: list[str] = []
    log = os.environ.get("FORKSYNC_TEMPLATE_LOG")

    def render(self, *args, **kwargs):
        text = original(self, *args, **kwargs)
        name = self.name or ""
        if name.endswith(".md.j2") and not name.startswith("agents/prompts/"):
            found.extend(f"{name}: {p}" for p in problems(text))
            if log:
                with open(log, "a") as f:
                    f.write(json.dumps({"template": name, "text": text}) + "\n")
        return text

    monkeypatch.setattr(jinja2.Template, "render", render)
    yield
    assert not found, "malformed Markdown rendered:\n" + "\n".join(found)
