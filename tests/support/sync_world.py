"""The validated sync world on the local GitHub: upstream and a fork that follows it (its
``.github/forksync.yml`` plus any commits of its own), the real bot with the validation service,
writers alice and carol, and the App installed on the fork (its status issue opened). Shared by
the end-to-end tests of sync PRs that are validated, gated and merged."""
from __future__ import annotations

import subprocess
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from bot.github.client import token_client
from tests.support.botharness import Bot
from tests.support.e2e import CONFIG as E2E_CONFIG
from tests.support.e2e import install_on_fork, status_issue
from tests.support.github import FAST_RETRY, commit_files, git, make_source_repo
from tests.support.validation_world import CONFTEST, LIB, TESTS, World, with_validation

#: A fork with a divergent `amd` area owned by carol and one required L1 suite of 3 tests.
CONFIG = E2E_CONFIG + """\
suites:
  - name: unit
    command: python3 -m pytest -q -p no:cacheprovider -o addopts= tests_fork --junitxml=out/unit.xml
    report: {format: junit, path: out/unit.xml}
    expected_tests: 3
    timeout_s: 300
    infra_retries: 0
"""


def upstream_files(**extra: str) -> dict[str, str]:
    """Upstream's first commit: a small tree with the fork's pytest suite (3 tests), plus ``extra``."""
    return {"python/a.py": "a = 1\n", "third_party/amd/x.cpp": "int x;\n", "lib.py": LIB,
            "tests_fork/test_basic.py": TESTS, "tests_fork/conftest.py": CONFTEST, **extra}


@asynccontextmanager
async def validated_world(fake, tmp_path, config: str, *, files: dict[str, str] | None = None,
                          fork_commits: tuple[tuple[dict[str, str], str], ...] = (), branches: tuple[str, ...] = (),
                          default_branch: str = "main"):
    """Yield ``(world, upstream source checkout, upstream repo)``; ``fork_commits`` are the fork's
    own ``(files, message)`` commits after its config; ``branches``: more branches of the fork at
    its tip; ``default_branch``: the fork's default branch on GitHub (one of them, or ``main``)."""
    up_src = tmp_path / "up"
    make_source_repo(up_src, [files or upstream_files()])
    upstream = fake.create_repo("triton-lang/triton", source=up_src)
    fork_src = tmp_path / "forksrc"
    git(tmp_path, "clone", "-q", str(up_src), str(fork_src))
    commit_files(fork_src, {".github/forksync.yml": config}, "fork: forksync config")
    for changed, message in fork_commits:
        commit_files(fork_src, changed, message)
    for branch in branches:
        git(fork_src, "branch", branch)
    fork = fake.create_repo("meta/triton", source=fork_src, default_branch=default_branch)
    fake.install("triton-lang")
    inst = fake.install("meta")
    for login in ("alice", "carol"):
        fake.add_collaborator(fork, login, "write")
        fake.add_token(f"{login}-token", login)
    bot = await Bot(fake, tmp_path).start()
    svc = with_validation(bot)
    session = aiohttp.ClientSession()
    people = {p: token_client(session, f"{p}-token", base_url=fake.url, retry=FAST_RETRY) for p in ("alice", "carol")}
    w = World(fake, bot, svc, people, tmp_path, fork)
    w.inst = inst.id
    await install_on_fork(fake, bot, fork, inst.id)
    try:
        yield w, up_src, upstream
    finally:
        await session.close()
        await bot.stop()


#: the conflicting chain's world (tests/e2e/test_chain_conflict.py and the breakers built on it): one
#: AMD file whose first line the fork tuned, so upstream's next change to that line conflicts
MIDDLE = "".join(f"// line {i}\n" for i in range(8))
X0 = "int x;\n" + MIDDLE + "int z;\n"


def chain_world(fake, tmp_path, config: str = CONFIG):
    """:func:`validated_world` with ``X0`` upstream and the fork's own commit "fork: tune x" (its
    first line ``int x = 10;``), the fork's settings ``config``: yields ``(world, upstream source
    checkout, upstream repo)``."""
    return validated_world(fake, tmp_path, config, files=upstream_files(**{"third_party/amd/x.cpp": X0}),
                           fork_commits=(({"third_party/amd/x.cpp": "int x = 10;\n" + MIDDLE + "int z;\n"},
                                          "fork: tune x"),))


@pytest.fixture
async def world(fake_github, tmp_path):
    """The world of tests/e2e/test_chain_conflict.py (:func:`chain_world`): the fork tuned ``x`` in
    the AMD file, so upstream's change of ``x`` stops a chain at a conflict. A test module takes
    it by importing it; it stands over tests/e2e/conftest.py's ``world`` there."""
    async with chain_world(fake_github, tmp_path) as w:
        yield w


#: what alice's resolution of the chain's conflict makes of the AMD file: the fork's tuning on upstream's new ``x``
RESOLVED_X = "int x = 12;\n" + MIDDLE + "int z;\n"


def push_resolution(w, tmp_path, branch: str) -> tuple[Path, str]:
    """alice clones the chain ``branch`` of :func:`chain_world`, stopped at upstream's new ``x``,
    into ``tmp_path / "alice"``, commits her resolution (``RESOLVED_X``, with its ``File:`` and
    ``Reason:`` lines) and pushes it; the bot has not handled the push yet. Returns ``(her
    checkout, her commit's sha)``."""
    wt = tmp_path / "alice"
    git(tmp_path, "clone", "-q", "-b", branch, str(w.fork.path), str(wt))
    good = commit_files(wt, {"third_party/amd/x.cpp": RESOLVED_X},
                        "resolve x\n\nFile: third_party/amd/x.cpp\nReason: keeps the fork's tuning on upstream's new x\n")
    git(wt, "push", "-q", "origin", "HEAD")
    return wt, good


async def open_prs(gh) -> list[dict]:
    """The fork's open pull requests as ``gh`` (a person's client) reads them, by head branch name."""
    return sorted([p async for p in gh.getiter("/repos/meta/triton/pulls?state=open")], key=lambda p: p["head"]["ref"])


async def stop_chain(w, up_src, upstream, *, then_z: bool = False, bundles: int = 0):
    """Upstream changes ``x`` (c2, which conflicts with the fork's tuning in :func:`chain_world`)
    and, with ``then_z``, ``z`` after it (c3), and pushes what ``up_src`` holds: the chain PR opens
    stopped at c2, on ``forksync/chain-<c2 12 hex>``, beside ``bundles`` bundle PRs (of upstream
    commits before c2) and no other PR. Returns ``(chain PR, branch, c2, c3 or
    None)``."""
    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: new x (#102)")
    c3 = None
    if then_z:
        c3 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z = 3;\n"}, "AMD: set z (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    prs = await open_prs(w.alice)
    [chain] = [p for p in prs if p["head"]["ref"].startswith("forksync/chain-")]
    assert chain["head"]["ref"] == f"forksync/chain-{c2[:12]}"
    assert len([p for p in prs if p["head"]["ref"].startswith("forksync/bundle-")]) == bundles and len(prs) == 1 + bundles
    return chain, chain["head"]["ref"], c2, c3


async def bot_comments(w, number: int) -> list[str]:
    """The bodies of forksync's comments on the fork's PR or issue ``number``, oldest first."""
    return [c["body"] async for c in w.alice.getiter(f"/repos/meta/triton/issues/{number}/comments")
            if c["user"]["login"] == "forksync[bot]"]


async def status_body(w) -> str:
    """The body of the fork's one open status issue, as alice reads it."""
    [issue] = await status_issue(w.alice)
    return issue["body"]


def fork_git(w, *args: str) -> str:
    """``git *args`` in the fork's repository on the local GitHub; its stdout, stripped."""
    return subprocess.run(["git", f"--git-dir={w.fork.path}", *args], capture_output=True, text=True,
                          check=True).stdout.strip()


def ahead_of_upstream(fake_github, tmp_path):
    """:func:`validated_world` whose fork took upstream's later x.cpp (``int x = 3``) early (the
    ``ahead_world`` fixture of tests/e2e): an async context manager giving ``(w, up_src, upstream)``."""
    return validated_world(fake_github, tmp_path, CONFIG, files=upstream_files(**{"third_party/amd/x.cpp": X0}),
                           fork_commits=(({"third_party/amd/x.cpp": "int x = 3;\n" + MIDDLE + "int z;\n"},
                                          "fork: x = 3 ahead of upstream"),))


async def the_rules_resolve_the_amd_chain(w, up_src, upstream) -> tuple[str, str, dict]:
    """On :func:`ahead_of_upstream`: upstream's x = 2, then x = 3, pushed and synced. The first pick
    conflicts and the ``fork-ahead`` rule keeps the fork's file; returns ``(c2, c3, the chain's PR)``."""
    from tests.support.github import commit_files, git

    c2 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 2;\n" + MIDDLE + "int z;\n"}, "AMD: x = 2 (#102)")
    c3 = commit_files(up_src, {"third_party/amd/x.cpp": "int x = 3;\n" + MIDDLE + "int z;\n"}, "AMD: x = 3 (#103)")
    git(up_src, "push", "-q", str(upstream.path), "HEAD:refs/heads/main")
    await w.bot.settle()
    [chain] = await open_prs(w.alice)
    return c2, c3, chain
