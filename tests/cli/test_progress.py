"""Progress off a terminal: plain lines (stage, count, elapsed) at most every few seconds of an
injected clock; ``--quiet`` turns them off; a repeated warning is printed once per run."""
from __future__ import annotations

import io
import re

import pytest

from bot.cli import progress as prog
from bot.cli.ledger import missing_summary
from bot.cli.main import main
from tests.support.ledger_scenario import build


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_plain_lines_at_stage_starts_every_interval_and_at_the_end():
    clock, lines = Clock(), []
    p = prog.PlainProgress(lines.append, clock=clock, every_s=5.0, after_s=0)
    p("open", 0, 0)
    clock.t += 0.4
    p("walk", 0, 0)
    for done, t in [(10, 1), (200, 2), (900, 4.9), (1500, 6.0), (1600, 7), (2000, 10.9), (3000, 11.1)]:
        clock.t = 100 + t
        p("analyse", done, 4000)
    clock.t = 118.0
    p.tick()                                # the heartbeat, while the stage reports nothing
    p.tick()                                # too soon after the last line
    clock.t = 121.6
    p("analyse", 4000, 4000)
    p("analyse", 4000, 4000)                # the end is printed once
    p("ledger", 0, 0)
    assert lines == [
        "forksync: opening the repositories (0 s)",
        "forksync: walking the history (0 s)",
        "forksync: analysing commits 10/4000, 0% (1 s)",
        "forksync: analysing commits 1500/4000, 37% (6 s)",
        "forksync: analysing commits 3000/4000, 75% (11 s)",
        "forksync: analysing commits 3000/4000, 75% (18 s)",
        "forksync: analysing commits 4000/4000, done (22 s)",
        "forksync: building the ledger (22 s)",
    ]


def test_a_quick_command_prints_nothing_and_a_slow_one_starts_with_its_stage():
    clock, lines = Clock(), []
    p = prog.PlainProgress(lines.append, clock=clock, every_s=5.0, after_s=2.0)
    p("open", 0, 0)
    p("walk", 0, 0)
    clock.t += 1.0
    p("analyse", 10, 100)
    p("analyse", 100, 100)
    assert lines == []                      # all done within 2 s
    p("ledger", 0, 0)
    clock.t += 1.5
    p.tick()                                # the heartbeat: 2.5 s in, the running stage
    clock.t += 1.0
    p.tick()
    p("planning", 0, 3)
    assert lines == ["forksync: building the ledger (2 s)", "forksync: planning commits 0/3 (4 s)"]


def test_tick_before_any_stage_prints_nothing():
    clock, lines = Clock(), []
    p = prog.PlainProgress(lines.append, clock=clock)
    clock.t += 60
    p.tick()
    assert lines == [] and p.lines == 0


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_reporter_picks_plain_lines_bars_or_nothing():
    class Args:
        quiet = False
    pipe = io.StringIO()
    with prog.reporter(Args(), stream=pipe) as cb:
        assert isinstance(cb, prog.PlainProgress)
        cb.after_s = 0
        cb("planning", 3, 3)
    assert pipe.getvalue() == "forksync: planning commits 3/3, done (0 s)\n"
    Args.quiet = True
    with prog.reporter(Args(), stream=pipe) as cb:
        assert cb is None
    with prog.reporter(None, stream=Tty()) as cb:          # a terminal keeps the rich bars
        assert not isinstance(cb, prog.PlainProgress)
        cb("analyse", 1, 2)
        cb("walk", 0, 0)


@pytest.fixture(scope="module")
def scn(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("progress")
    s = build(tmp / "repos")
    s.argv = ["--upstream", str(s.up.path), "--fork", str(s.fork.path)]
    s.cfg = tmp / "forksync.yml"
    s.cfg.write_text(f"cache_dir: {tmp / 'cache'}\n")
    return s


@pytest.mark.parametrize("command", [["status"], ["plan"], ["ledger", "export"]])
def test_commands_print_stages_off_a_terminal_and_nothing_with_quiet(scn, capsys, monkeypatch, command):
    monkeypatch.setattr(prog, "AFTER_S", 0.0)         # the scenario is quick: show every stage
    assert main(["--config", str(scn.cfg), *scn.argv, *command, "--no-cache"] if command == ["plan"]
                else ["--config", str(scn.cfg), *scn.argv, *command]) == 0
    err = capsys.readouterr().err
    stages = [re.sub(r" \(\d+ s\)$", "", ln) for ln in err.splitlines() if ln.startswith("forksync: ") and ln.endswith(" s)")]
    assert stages[:2] == ["forksync: opening the repositories", "forksync: walking the history"]
    assert stages[-1] == ("forksync: planning commits 3/3, done" if command == ["plan"] else "forksync: building the ledger")
    assert main(["--config", str(scn.cfg), *scn.argv, "--quiet", *command]) == 0
    err = capsys.readouterr().err
    assert "forksync: opening" not in err and "(planning " not in err


@pytest.mark.parametrize("missing, want", [
    ({}, None),
    ({"c1": ("blob " + "a" * 40 + " (bin/ptxas)",), "c2": ("blob " + "a" * 40 + " (bin/ptxas)",),
      "c3": ("blob " + "b" * 40 + " (doc/x.pdf)",)},
     "2 object(s) missing (a partial clone or snapshot?); 3 commit(s) analysed from their trees only, without a patch-id: "
     "bin/ptxas (blob aaaaaaaaaaaa, 2 commits), doc/x.pdf (blob bbbbbbbbbbbb, 1 commit); all in `status --json` "
     "missing_objects."),
    ({f"c{i}": (f"blob {i:040d} (f{i})",) for i in range(5)},
     "5 object(s) missing (a partial clone or snapshot?); 5 commit(s) analysed from their trees only, without a patch-id: "
     "f0 (blob 000000000000, 1 commit), f1 (blob 000000000000, 1 commit), f2 (blob 000000000000, 1 commit), 2 more; all "
     "in `status --json` missing_objects."),
    ({"c1": ("unreadable: fatal: bad object",)},
     "1 object(s) missing (a partial clone or snapshot?); 1 commit(s) analysed from their trees only, without a patch-id: "
     "unreadable: fatal: bad object (1 commit); all in `status --json` missing_objects."),
])
def test_missing_objects_summary_names_each_object_once(missing, want):
    assert missing_summary(missing) == want


def test_a_warning_is_printed_once_per_run():
    out = io.StringIO()
    prog.new_run()
    for _ in range(3):
        prog.warn_once("3 object(s) are missing", stream=out)
    prog.warn_once("another", stream=out)
    prog.new_run()
    prog.warn_once("3 object(s) are missing", stream=out)
    assert out.getvalue().splitlines() == ["forksync: warning: 3 object(s) are missing", "forksync: warning: another",
                                           "forksync: warning: 3 object(s) are missing"]
