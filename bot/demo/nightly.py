"""The nightly part of ``forksync demo``: a fork with the reference kernels, an upstream pick that
breaks one kernel, a busy GPU, the local GitHub and the local Anthropic — and the triage loop
that turns it into one issue, then closes it.

:func:`run_nightly_demo` builds, in ``workdir``:

* ``fork/`` — a git repository holding ``examples/kernels`` (the reference kernels) and
  ``.github/forksync.yml`` (the suite and a triage rule);
* a local GitHub (:class:`bot.fakegithub.FakeGitHub`, in-process) serving it as ``meta/triton`` (the fork the GitHub part syncs)
  and a local Anthropic server (:class:`bot.fakeanthropic.FakeAnthropic`) scripted with one
  proposed fix.

Then it runs nightlies through :func:`bot.triage.nightly.on_nightly_results`, each on the trunk tip
with the real runner (:func:`gpu_runner.runner.run_local`, the softmax cases of the kernel suite
under ``TRITON_INTERPRET=1``; a few seconds each): a green one; two red ones after the upstream
pick ``[Kernels] Normalise softmax by the row maximum`` broke softmax, the first also carrying a
busy-GPU failure from the H200 runner (kept out: tracked, no issue, never bisected); the issue opens
on the second (a real failure opens after two nightlies within three days), with ranked suspects,
the culprit confirmed by bisection (:func:`bot.git.bisect.bisect_command`) and the scripted proposed
fix; a person reverts the pick and three clean nightlies close the issue.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.rule import Rule

from bot.agents.client import AgentClient
from bot.config.agents import SCRIPTED_MODEL, AgentSettings
from bot.config.forksync import ForksyncConfig
from bot.config.suites import SuiteConfig
from bot.fakeanthropic import FakeAnthropic, Reply
from bot.fakegithub import FakeGitHub
from bot.github.client import GitHubApp, RetryPolicy
from bot.store import Store
from bot.triage.nightly import command_bisector, on_nightly_results
from gpu_runner.runner import LocalOptions, run_local

KERNELS = Path(__file__).resolve().parents[2] / "examples" / "kernels"
OWNER, REPO = "meta", "triton"     # the fork the GitHub part syncs: one fork on the dashboard
T0 = 1_795_996_800                    # 2026-11-30 00:00 UTC
DAY = 86_400
ALICE = "Alice Upstream <31337+alice@users.noreply.github.com>"
SUITE_CMD = ("{python} -m pytest -q -p no:cacheprovider examples/kernels/test_kernels.py -k softmax "
             "--junitxml=out/kernels-junit.xml -o junit_family=xunit1")
BUSY = "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable"
FORKSYNC_YML = """\
upstream: {url: https://github.com/triton-lang/triton, ref: main}
fork: {url: https://github.com/meta/triton, ref: main}
triage:
  rules:
    - id: softmax-accuracy
      title: "Fused softmax exceeds its error bound"
      pattern: "softmax .*relative error"
"""
GOOD_LINE = "    y = num / tl.sum(num, axis=0)\n"
BAD_LINE = "    y = num / tl.max(num, axis=0)\n"
FIX_PATCH = ("--- a/examples/kernels/kernels.py\n+++ b/examples/kernels/kernels.py\n@@ -55,3 +55,3 @@\n"
             "     num = tl.exp(x)\n-    y = num / tl.max(num, axis=0)\n+    y = num / tl.sum(num, axis=0)\n"
             "     tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)\n")
FIX = {"diagnosis": "The picked upstream commit divides the exponentials by their row maximum instead of their "
                    "row sum, so rows no longer sum to one and every softmax case misses its bound.",
       "patch": FIX_PATCH, "confidence": "high"}


def _git(cwd: Path, *args: str, author: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Fork Dev", "GIT_AUTHOR_EMAIL": "fork.dev@users.noreply.github.com",
           "GIT_COMMITTER_NAME": "Fork Dev", "GIT_COMMITTER_EMAIL": "fork.dev@users.noreply.github.com",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)}
    if author:
        name, _, email = author.partition(" <")
        env.update(GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email.rstrip(">"))
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:2])} failed in {cwd}: {p.stderr.strip()[:300]}")
    return p.stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str, author: str | None = None) -> str:
    for rel, text in files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, author=author)
    return _git(repo, "rev-parse", "HEAD")


def build_fork(root: Path) -> dict[str, str]:
    """The demo fork's history. Returns the shas: ``good`` (trunk before the sync), ``culprit``
    (the breaking pick), ``bad`` (trunk tip after the sync), ``upstream`` (the upstream commit the
    culprit was picked from)."""
    fork = root / "fork"
    fork.mkdir(parents=True)
    _git(fork, "init", "-q", "-b", "main")
    files = {f"examples/kernels/{n}": (KERNELS / n).read_text() for n in ("kernels.py", "test_kernels.py", "conftest.py")}
    kernels = files["examples/kernels/kernels.py"]
    if GOOD_LINE not in kernels:
        raise RuntimeError(f"{KERNELS / 'kernels.py'} changed: the demo's injected break needs {GOOD_LINE.strip()!r}")
    good = _commit(fork, {**files, ".github/forksync.yml": FORKSYNC_YML, "README.md": "demo fork\n"}, "Fork: kernels")
    _commit(fork, {"README.md": "demo fork of triton\n"}, "Docs: describe the fork")
    # upstream's commit, made on a side branch, then picked the way forksync picks (one commit, trailer)
    _git(fork, "checkout", "-q", "-b", "upstream")
    broken = kernels.replace(GOOD_LINE, BAD_LINE)
    up = _commit(fork, {"examples/kernels/kernels.py": broken},
                 "[Kernels] Normalise softmax by the row maximum (#6021)", author=ALICE)
    _git(fork, "checkout", "-q", "main")
    _git(fork, "branch", "-q", "-D", "upstream")
    culprit = _commit(fork, {"examples/kernels/kernels.py": broken},
                      f"[Kernels] Normalise softmax by the row maximum (#6021)\n\nUpstream-Commit: {up}", author=ALICE)
    bad = _commit(fork, {"docs/sync.md": "synced with upstream\n"}, "Docs: note the sync")
    return {"good": good, "culprit": culprit, "bad": bad, "upstream": up}


def _suite(name: str, command: str, platforms: list[str], expected: int, infra_retries: int = 0):
    return SuiteConfig.model_validate({
        "name": name, "level": "L1", "command": command, "expected_tests": expected, "timeout_s": 600,
        "report": {"format": "junit", "path": "out/kernels-junit.xml"}, "platforms": platforms,
        "env": {"TRITON_INTERPRET": "1", "PYTHONDONTWRITEBYTECODE": "1"}, "infra_retries": infra_retries})


def run_nightly_demo(console: Console | None, workdir: str | Path, *, first_issue: int = 1) -> int:
    """Run the nightly demo in ``workdir`` (created; must be empty or absent). Returns 0 when the
    story went as told (exactly one real issue, the busy GPU kept out, the issue closed), else 1.
    ``first_issue``: the number of the fork's first issue on this local GitHub (the whole demo
    starts past the GitHub part's numbers, so its store names each issue once)."""
    console = console or Console()
    root = Path(workdir)
    if root.exists() and any(root.iterdir()):
        console.print(f"[red]{root} is not empty; give the nightly demo an empty folder[/red]")
        return 2
    root.mkdir(parents=True, exist_ok=True)
    return asyncio.run(_main(console, root, first_issue))


async def _main(console: Console, root: Path, first_issue: int = 1) -> int:
    import aiohttp
    import yaml

    console.print(Rule("nightly triage demo"))
    shas = build_fork(root)
    fork = root / "fork"
    cfg = ForksyncConfig.model_validate(yaml.safe_load(FORKSYNC_YML))
    python = shutil.which("python3") if not sys.executable else sys.executable
    cpu = _suite("kernels-cpu", SUITE_CMD.format(python=python), ["cpu"], 6)
    busy = _suite("kernels", f"echo '{BUSY}' >&2; exit 1", ["h200"], 30, infra_retries=1)
    console.print(f"fork: {fork} — trunk {shas['good'][:12]} → sync pick {shas['culprit'][:12]} "
                  f"(upstream {shas['upstream'][:12]}, by Alice) → {shas['bad'][:12]}")

    gh_fake = FakeGitHub(root / "github")
    await gh_fake.start()
    gh_fake.app = gh_fake.create_app()
    ok = True
    try:
        gh_fake.create_repo(f"{OWNER}/{REPO}", source=fork, first_number=first_issue)
        inst = gh_fake.install(OWNER)
        async with aiohttp.ClientSession() as session, \
                FakeAnthropic([Reply.tool("propose_fix", FIX, match="propose_fix", sticky=True)], api_key="demo-key") as ant:
            app = GitHubApp(session, app_id=gh_fake.app.id, private_key=gh_fake.app.private_key_pem,
                            base_url=gh_fake.url, retry=RetryPolicy(write_interval_s=0.0))
            gh = app.installation(inst.id)
            store = Store(root / "forksync.db")
            agents = AgentClient(AgentSettings(model=SCRIPTED_MODEL, max_retries=0, timeout_s=30), store, api_key="demo-key",
                                 base_url=ant.base_url)
            bisect = command_bisector(fork / ".git", SUITE_CMD.format(python=python) + " -x",
                                      env={"TRITON_INTERPRET": "1", "PYTHONDONTWRITEBYTECODE": "1"})

            async def nightly(i: int, sha: str, with_busy_gpu: bool = False):
                results = [await asyncio.to_thread(run_local, cpu, fork, sha, LocalOptions(platform="cpu"))]
                if with_busy_gpu:
                    results.append(await asyncio.to_thread(run_local, busy, fork, sha, LocalOptions(platform="h200")))
                out = await on_nightly_results(gh, f"{OWNER}/{REPO}", cfg, results, run_id=f"nightly-{i}",
                                               when=T0 + i * DAY, store=store, bisect=bisect, agents=agents,
                                               fork_git_dir=fork / ".git")
                verdicts = ", ".join(f"{r.suite}@{r.platform} {r.verdict} ({r.counts.failed} failed)" for r in results)
                actions = "; ".join(f"{a.kind} {','.join(a.keys)}" for a in out.report.actions) or "no issue action"
                tracked = ", ".join(f"{g.signature.type}: {g.signature.line} on {', '.join(g.platforms)} ({g.cls})"
                                    for g in out.report.groups if g.id in out.tracked)
                console.print(f"nightly-{i} on {sha[:12]}: {verdicts} → {actions}"
                              + (f"; tracked without an issue: {tracked}" if tracked else ""))
                return out

            console.print(Rule("1. nightlies"))
            await nightly(0, shas["good"])
            n1 = await nightly(1, shas["bad"], with_busy_gpu=True)
            n2 = await nightly(2, shas["bad"])
            issues = [i async for i in gh.getiter(f"/repos/{OWNER}/{REPO}/issues?state=all")]
            ok &= len(issues) == 1 and "infrastructure" in n1.tracked.values() and len(n2.issues) == 1
            if issues:
                issue = issues[0]
                console.print(Rule(f"2. the issue as a person sees it: #{issue['number']}"))
                console.print(issue["title"], markup=False, highlight=False, style="bold", soft_wrap=True)
                console.print(issue["body"], markup=False, highlight=False, soft_wrap=True)
                for c in [c async for c in gh.getiter(f"/repos/{OWNER}/{REPO}/issues/{issue['number']}/comments")]:
                    console.print(Rule("comment", style="dim"))
                    console.print(c["body"], markup=False, highlight=False, soft_wrap=True)
                ok &= n2.culprits.get("softmax-accuracy") == shas["culprit"] and n2.fixes.get("softmax-accuracy") == "proposed"

            console.print(Rule("3. a person reverts the pick; clean nightlies"))
            tip = _commit(fork, {"examples/kernels/kernels.py": (fork / "examples/kernels/kernels.py").read_text()
                                 .replace(BAD_LINE, GOOD_LINE)}, f"Revert the softmax pick {shas['culprit'][:12]}")
            closed = False
            for i in (3, 4, 5):
                out = await nightly(i, tip)
                closed = any(a.kind == "close" for a in out.report.actions)
                tip = _commit(fork, {"docs/sync.md": f"nightly {i} was green\n"}, f"Docs: nightly {i}")
            issues = [i async for i in gh.getiter(f"/repos/{OWNER}/{REPO}/issues?state=all")]
            ok &= closed and [i["state"] for i in issues] == ["closed"]
            console.print(f"issue #{issues[0]['number']}: {issues[0]['state']}" if issues else "no issue")
            await agents.aclose()
    finally:
        await gh_fake.stop()
    console.print(Rule("done" if ok else "[red]the story did not go as told[/red]"))
    return 0 if ok else 1
