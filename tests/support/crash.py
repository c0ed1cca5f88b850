"""A worker that dies at a chosen point of a sync, and the bot started again on the dead one's
database and workdir (tests/e2e/test_crash_recovery.py and the crash tests built on it).

The death is raised at the exact point (:class:`Killed`, a ``BaseException`` no handler catches,
as nothing runs in a process killed with SIGKILL) and the restart is a new bot on the same files,
whose worker takes over the delivery its dead predecessor held (``release_orphans``, as
``Worker.run`` does at start)."""
from __future__ import annotations

from bot.app import queue as q
from bot.sync import store as sync_store
from tests.support.botharness import Bot
from tests.support.validation_world import with_validation


class Killed(BaseException):
    """The worker process dies here (nothing after it runs: no handler, no ``finally`` of the queue)."""


async def restart(w, tmp_path) -> list[str]:
    """The bot started again on the dead one's database and workdir; its worker takes over at once
    the deliveries the dead worker held (their owner is gone). Returns their ids."""
    await w.bot.stop()
    bot = await Bot(w.fake, tmp_path).start()
    w.bot = bot
    w.svc = with_validation(bot)
    return q.release_orphans(bot.store, lambda owner: False)


def dies_saving_branch(monkeypatch, branch: str, field: str, keep: str = "pushed_tip") -> list:
    """Patch :func:`bot.sync.store.save_branch` so that the worker dies (:class:`Killed`) the first
    time it would save ``branch``'s row with ``field`` set (``pushed_tip`` after a push,
    ``verified_tip`` after a fold, ``pr`` after a PR opened): the row is not saved. Returns the list
    that then holds that row's ``keep`` value (what was done but not recorded)."""
    save_branch = sync_store.save_branch
    killed: list = []

    def dies(store, **row):
        if row.get("branch") == branch and row.get(field) and not killed:
            killed.append(row[keep])
            raise Killed()
        save_branch(store, **row)

    monkeypatch.setattr(sync_store, "save_branch", dies)
    return killed
