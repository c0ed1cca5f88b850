"""The nightly demo end to end (real kernels under TRITON_INTERPRET=1, real runner, real
bisection, local GitHub and local Anthropic in-process): one real issue, as a person sees it,
the busy GPU kept out, and the issue closed by clean nightlies."""
from __future__ import annotations

import io
import re
import sqlite3

from rich.console import Console

from bot.demo.github_world import FORK
from bot.demo.main import NIGHTLY_FIRST_ISSUE
from bot.demo.nightly import run_nightly_demo


def test_nightly_demo_tells_its_story(tmp_path):
    buf = io.StringIO()
    rc = run_nightly_demo(Console(file=buf, width=200, color_system=None), tmp_path / "demo", first_issue=NIGHTLY_FIRST_ISSUE)
    out = buf.getvalue()
    assert rc == 0, out
    lines = out.splitlines()
    n1 = next(ln for ln in lines if ln.startswith("nightly-1 on "))
    assert re.search(r"kernels-cpu@cpu red \(6 failed\), kernels@h200 red \(0 failed\) → no issue action; "
                     r"tracked without an issue: Infrastructure: gpu-busy on h200 \(infrastructure\)$", n1), n1
    n2 = next(ln for ln in lines if ln.startswith("nightly-2 on "))
    assert n2.endswith("kernels-cpu@cpu red (6 failed) → open softmax-accuracy")
    assert "[nightly] test_softmax (6 cases): Fused softmax exceeds its error bound" in lines
    assert "| Root cause | `softmax-accuracy` (Fused softmax exceeds its error bound) |" in lines
    assert "| 2 | cpu | 2026-12-01 00:00 | 2026-12-02 00:00 | 0 / 3 |" in lines
    culprit = re.search(r"\*\*Culprit \(confirmed by bisection\):\*\* ([0-9a-f]{12}) — \[Kernels\] Normalise softmax "
                        r"by the row maximum \(#6021\) by Alice Upstream", out)
    assert culprit, out
    assert re.search(rf"^\| 1 \| {culprit.group(1)} \(upstream [0-9a-f]{{12}}\) \| \[Kernels\] Normalise softmax", out, re.M)
    assert "@alice, could you take a look?" in lines
    assert "<!-- forksync:proposed-fix:softmax-accuracy -->" in lines and "Confidence: **high**." in out
    # the demo's agent is the scripted local model, and says so wherever its answer is shown
    assert "An agent (scripted local model, not a real LLM) read this issue's signature group" in out
    assert "claude" not in out
    assert "+    y = num / tl.sum(num, axis=0)" in lines
    assert "busy" not in out.split("2. the issue as a person sees it")[1].split("3. a person reverts")[0]
    assert [ln.split(" → ")[1] for ln in lines if re.match(r"nightly-[345] on ", ln)] == [
        "refresh softmax-accuracy", "refresh softmax-accuracy", "close softmax-accuracy"]
    assert f"issue #{NIGHTLY_FIRST_ISSUE}: closed" in lines
    # the fork the GitHub part syncs: the demo's one store, and so the dashboard, shows one fork
    db = sqlite3.connect(tmp_path / "demo" / "forksync.db")
    repos = set()
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
        if "repo" in [c[1] for c in db.execute(f'PRAGMA table_info("{table}")')]:
            repos |= {r for (r,) in db.execute(f'SELECT DISTINCT repo FROM "{table}"')}
    assert repos == {FORK}


def test_nightly_demo_refuses_a_non_empty_folder(tmp_path):
    (tmp_path / "x").write_text("keep me\n")
    buf = io.StringIO()
    assert run_nightly_demo(Console(file=buf, width=200), tmp_path) == 2
    assert (tmp_path / "x").read_text() == "keep me\n" and "is not empty" in buf.getvalue()
