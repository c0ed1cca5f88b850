"""Two answers of one L3 run at once: a result that arrives later is answered by the delivery that
carries it and by the schedule tick's collect (:func:`bot.validation.l3.answer_l3_result` for
both), and with ``serve --workers N`` those run in two worker processes. Each that read the run
``running`` before the other recorded its verdict answers it (:func:`bot.validation.l3.answer_l3`),
saying it on the PR once (:func:`bot.github.common.comment_once`: look for its marker, post when
none). Two that both look before either posts say it twice.

Two workers' clients are built as the runtime builds them (:class:`bot.app.runtime.Clients`, one
workdir): the call site passes no claim of its own. No sleeps: the local GitHub holds the first
post until the second answer has either finished or is waiting for the first's claim."""
from __future__ import annotations

from types import SimpleNamespace

import aiohttp

from bot.app.runtime import Clients
from bot.cli.serve import ServeSettings
from bot.store import Store
from bot.validation import store as vstore
from bot.validation.l3 import answer_l3
from gpu_runner.result import Environment, RunResult
from tests.support.github import FAST_RETRY, make_source_repo
from tests.support.races import second_meets_first

FORK = "meta/triton"
SHA = "a" * 40


async def test_a_late_l3_result_answered_by_two_workers_at_once_is_said_once(fake_github, tmp_path):
    fake = fake_github
    make_source_repo(tmp_path / "src", [{"a.txt": "1\n"}])
    fake.create_repo(FORK, source=tmp_path / "src", required_checks=[])
    inst = fake.install("meta")
    key = tmp_path / "app.pem"
    key.write_text(fake.app.private_key_pem)
    settings = ServeSettings(app_id=str(fake.app.id), private_key_file=str(key), github_url=fake.url,
                             workdir=str(tmp_path / "work"))
    with Store(tmp_path / "forksync.sqlite") as store:
        said = await _answer_twice_at_once(fake, settings, store, inst.id)
    assert [s.splitlines()[0] for s in said] == ["<!-- forksync:l3:1 -->"], said


async def _answer_twice_at_once(fake, settings, store, inst: int) -> list[str]:
    """Answer run 1 from two workers' clients, the second starting once the first's post is held;
    the bodies of the comments on the PR afterwards."""
    async with aiohttp.ClientSession() as session:
        workers = [Clients(settings, session, retry=FAST_RETRY) for _ in range(2)]
        for w in workers:
            await w.start()
        first, second = [await w.client_for(inst) for w in workers]
        pr = (await first.post("/repos/meta/triton/issues", data={"title": "sync: 1 upstream commit"}))["number"]
        vstore.queue_l3_runs(store, FORK, pr, SHA, "heavy", ["cpu"], "alice", 100)
        vstore.claim_l3(store, "cpu", FORK, now=100)
        [run] = vstore.running_l3(store, FORK, SHA, "heavy", "cpu")        # as each worker read it
        result = RunResult(suite="heavy", level="L3", commit=SHA, platform="cpu", verdict="green", outcome="pass",
                           environment=Environment(runner_id="r1"), started_at=150, finished_at=200)

        await second_meets_first(fake, "POST", f"/repos/meta/triton/issues/{pr}/comments", second.claims,
                                 lambda: answer_l3(SimpleNamespace(store=store, gh=first), FORK, run, result, None),
                                 lambda: answer_l3(SimpleNamespace(store=store, gh=second), FORK, run, result, None))

        assert run.id == 1 and vstore.l3_runs_of(store, FORK, pr)[0].verdict == "pass"
        return [c["body"] async for c in first.getiter(f"/repos/meta/triton/issues/{pr}/comments")]
