"""Ctrl-C ends any command with exit 130 and one line, never a traceback: scripts read 1 as "a chain
stopped at a conflict", so an interrupt must not end as an unhandled error."""
from __future__ import annotations

import pytest

from bot.cli.main import main
from bot.config.objects import MemoryObjects
from tests.support.plan_repos import build_pair


@pytest.mark.parametrize("callback", ["read_cb", "exists_cb"])
def test_an_interrupt_inside_a_libgit2_callback_exits_130(tmp_path, monkeypatch, capsys, callback):
    # A KeyboardInterrupt raised inside an object-database callback comes back out of libgit2 as
    # a SystemError ("… returned a result with an exception set") whose cause is the interrupt
    pair = build_pair(tmp_path)
    monkeypatch.chdir(tmp_path)

    def interrupted(self, *args):
        raise KeyboardInterrupt

    monkeypatch.setattr(MemoryObjects, callback, interrupted)
    rc = main(["apply", f"bundle-{pair.u['u1'][:8]}", "--fork", str(pair.fork.path), "--upstream", str(pair.up.path)])
    assert (rc, capsys.readouterr().err) == (130, "forksync: interrupted\n")


def test_a_system_error_not_caused_by_an_interrupt_is_not_one(monkeypatch):
    import bot.cli.plan as plan

    def broken(args):
        raise SystemError("a bug")

    monkeypatch.setattr(plan, "cmd_plan", broken)
    with pytest.raises(SystemError, match="a bug"):
        main(["plan"])
