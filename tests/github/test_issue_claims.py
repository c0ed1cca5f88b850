"""Two writers of one "find it, else open it" issue at once (:func:`bot.github.common.issue_once`:
the nightly alarm issue; :func:`bot.github.common.issue_current`: the L2 regression issue): the
schedule tick beside a delivery, or two workers of ``serve --workers N``. Each lists the open
issues and opens one when none has the title; two that both look before either opens open two.

The two workers' clients are built as the runtime builds them (:class:`bot.app.runtime.Clients`,
one workdir): the call site passes no claim of its own. No sleeps: the local GitHub holds the
first create until the second writer has either finished or is waiting for the first's claim."""
from __future__ import annotations

import aiohttp
import pytest

from bot.app.runtime import Clients
from bot.cli.serve import ServeSettings
from bot.github.claims import ClaimOrderError
from bot.github.common import comments_claim, issue_current, issue_once
from tests.support.github import FAST_RETRY, make_source_repo
from tests.support.races import second_meets_first

FORK = "meta/triton"
TITLE = "forksync: nightly 0123456789ab is missing results"


def _settings(fake, tmp_path) -> ServeSettings:
    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    fake.create_repo(FORK, source=tmp_path / "src", required_checks=[])
    key = tmp_path / "app.pem"
    key.write_text(fake.app.private_key_pem)
    return ServeSettings(app_id=str(fake.app.id), private_key_file=str(key), github_url=fake.url,
                         workdir=str(tmp_path / "work"))


async def _write_twice_at_once(fake, settings, inst: int, write) -> list[dict]:
    """``write(gh)`` from two workers' clients, the second starting once the first's create is
    held; the open issues afterwards."""
    async with aiohttp.ClientSession() as session:
        workers = [Clients(settings, session, retry=FAST_RETRY) for _ in range(2)]
        for w in workers:
            await w.start()
        first, second = [await w.client_for(inst) for w in workers]
        await second_meets_first(fake, "POST", f"/repos/{FORK}/issues", second.claims,
                                 lambda: write(first), lambda: write(second))
        return [i async for i in first.getiter(f"/repos/{FORK}/issues?state=open")]


async def test_two_writers_of_one_alarm_issue_at_once_open_one(fake_github, tmp_path):
    fake = fake_github
    settings = _settings(fake, tmp_path)
    inst = fake.install("meta")
    numbers: list[int] = []

    async def write(gh):
        numbers.append(await issue_once(gh, FORK, TITLE, "3 result(s) missing"))

    issues = await _write_twice_at_once(fake, settings, inst.id, write)
    assert [i["title"] for i in issues] == [TITLE], [i["number"] for i in issues]
    assert numbers == [issues[0]["number"]] * 2


async def test_two_writers_of_one_regression_issue_at_once_open_one(fake_github, tmp_path):
    fake = fake_github
    settings = _settings(fake, tmp_path)
    inst = fake.install("meta")
    said: list[tuple[int, str]] = []

    async def write(gh):
        said.append(await issue_current(gh, FORK, "L2 regression: matmul 9% slower", "regression", "p50 +9%"))

    issues = await _write_twice_at_once(fake, settings, inst.id, write)
    assert [i["title"] for i in issues] == ["L2 regression: matmul 9% slower"], [i["number"] for i in issues]
    assert sorted(w for _, w in said) == ["opened", "unchanged"]


async def test_an_issue_writer_under_another_object_claim_is_refused(fake_github, tmp_path):
    """Claims on objects are leaves (:mod:`bot.github.claims`): an issue written while the
    comments of an issue are claimed would wait on a second claim under the first."""
    fake = fake_github
    settings = _settings(fake, tmp_path)
    inst = fake.install("meta")
    async with aiohttp.ClientSession() as session:
        w = Clients(settings, session, retry=FAST_RETRY)
        await w.start()
        gh = await w.client_for(inst.id)
        async with gh.claims.hold(FORK, comments_claim(1)):
            with pytest.raises(ClaimOrderError):
                await issue_once(gh, FORK, TITLE, "body")
        assert [i async for i in gh.getiter(f"/repos/{FORK}/issues?state=open")] == []
