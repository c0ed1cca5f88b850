"""A scheduled job's error is kept on the fork's status (status issue, /healthz, /api/v1) and
logged as a note: it is scrubbed whole, before it is cut short — a cut through a secret would
leave the part before it where no scrub can recognise it any more."""
from types import SimpleNamespace

from bot.agents.redact import forget_secrets, register_secrets
from bot.app import schedules
from bot.store import Store
from bot.sync import store as sync_store

SECRET = "CANARY-secret-4be1c07a9d"


async def test_an_error_cut_through_a_secret_leaves_no_part_of_it(tmp_path, monkeypatch):
    async def nothing(*a, **k):
        return []

    async def failing(*a, **k):
        # the 300-character cut of the error falls inside the secret / before a URL's "@"
        raise RuntimeError("x" * (300 - 10) + SECRET
                           + f" and https://user:{SECRET}@git.example/r.git")

    for name in ("collect_tick", "reconcile_tick", "l3_tick", "nightly_tick", "l2_tick"):
        monkeypatch.setattr(schedules, name, nothing)
    monkeypatch.setattr(schedules, "collect_tick", failing)
    store = Store(tmp_path / "s.db")
    register_secrets(SECRET)
    try:
        notes = await schedules.tick_all(SimpleNamespace(store=store, sync=None), "meta/fork", now=1.0)
    finally:
        forget_secrets()
    [job] = sync_store.load_status(store, "meta/fork").failing_jobs
    assert job["job"] == "collect" and job["error"].startswith("RuntimeError: xxx")
    assert SECRET[:10] not in job["error"], job["error"]
    assert not any(SECRET[:10] in n for n in notes), notes
