"""The documentation as a new user follows it: each test takes a documented command, setting or
workflow (README.md, docs/gpu-runners.md, docs/github.md, docs/dashboard.md, the Dockerfile,
docs/config-reference.md) and checks that the program does what the text says."""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def ns(**kw):
    return argparse.Namespace(**{"no_poll": False, "settings": None, **kw})


# --------------------------------------------------------------------------- docs/gpu-runners.md


def test_gpu_runner_bot_settings_in_the_settings_file_reach_the_dispatch(tmp_path, monkeypatch, caplog):
    """docs/gpu-runners.md, step 4 "The bot": set FORKSYNC_RUNNER_BACKEND=github-actions,
    FORKSYNC_REPOSITORY=<owner>/<name> and FORKSYNC_REVISION=<sha>. A new user puts them where
    `forksync app setup` put every other setting, forksync.env, which `serve` reads (README:
    "Settings come from flags, else FORKSYNC_* environment variables, else a settings file").

    What they see: `serve` warns "FORKSYNC_REPOSITORY is not a setting forksync reads (ignored)"
    (and the same for FORKSYNC_REVISION), and the workers dispatch the GPU workflow with
    forksync_repository=forksync/forksync at whatever commit the checkout holds — the runner installs
    some other code, or fails to check it out.
    What they should see: the documented bot settings are read from the settings file like
    FORKSYNC_RUNNER_BACKEND next to them, and reach the worker that dispatches."""
    from bot.cli.serve import settings_from, worker_env
    from bot.validation.backends import forksync_identity
    from gpu_runner.github_actions import Forksync

    step4 = re.search(r"4\. \*\*The bot\*\*:(.*?)\n5\. ", (DOCS / "gpu-runners.md").read_text(), re.S)[1]
    assert {"FORKSYNC_RUNNER_BACKEND", "FORKSYNC_REPOSITORY", "FORKSYNC_REVISION"} <= set(re.findall(r"`(FORKSYNC_[A-Z_]+)", step4))
    for k in ("FORKSYNC_RUNNER_BACKEND", "FORKSYNC_REPOSITORY", "FORKSYNC_REVISION"):
        monkeypatch.delenv(k, raising=False)
    rev = "0123456789abcdef0123456789abcdef01234567"
    f = tmp_path / "forksync.env"
    f.write_text(f"FORKSYNC_RUNNER_BACKEND=github-actions\nFORKSYNC_REPOSITORY=meta/forksync\nFORKSYNC_REVISION={rev}\n")
    with caplog.at_level(logging.WARNING, logger="bot.cli.serve"):
        s = settings_from(ns(settings=str(f)), {})
    assert s.runner_backend == "github-actions"
    ignored = [r.getMessage() for r in caplog.records if "is not a setting forksync reads" in r.getMessage()]
    assert ignored == []
    assert forksync_identity(worker_env(s, 0)) == Forksync("meta/forksync", rev)


# --------------------------------------------------------------------------- README: settings


def test_a_misspelt_runner_backend_stops_serve_naming_the_setting(tmp_path):
    """README / docs/github.md: "a bad value stops `serve`/`worker` with one line naming the setting
    and where it came from". FORKSYNC_RUNNER_BACKEND takes `local` or `github-actions`.

    What the user sees with FORKSYNC_RUNNER_BACKEND=github_actions (underscore) in forksync.env:
    serve starts, /healthz is 200, and every pull request's validation later fails with a
    ValueError until its deliveries are dead-lettered.
    What they should see: serve refuses to start, naming FORKSYNC_RUNNER_BACKEND, the bad value and
    the settings file line, as it does for FORKSYNC_PORT=eighty."""
    from bot.cli.main import UserError
    from bot.cli.serve import settings_from

    f = tmp_path / "forksync.env"
    f.write_text("FORKSYNC_WEBHOOK_SECRET=s\nFORKSYNC_RUNNER_BACKEND=github_actions\n")
    with pytest.raises(UserError) as e:
        settings_from(ns(settings=str(f)), {})
    assert "FORKSYNC_RUNNER_BACKEND" in str(e.value) and "'github_actions'" in str(e.value)
    assert f"{f}, line 2" in str(e.value)


# --------------------------------------------------------------------------- README: Docker


def _dockerfile_env() -> dict[str, str]:
    """The final stage's ENV, as Docker sets it in the container."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    final = text.split("\nFROM ")[-1]
    env: dict[str, str] = {}
    for line in final.splitlines():
        if line.startswith("ENV "):
            for part in shlex.split(line[4:]):
                k, _, v = part.partition("=")
                env[k] = v
    return env


async def test_readme_docker_run_with_the_settings_app_setup_wrote_finds_the_app_key(fake_github, tmp_path):
    """README "Registering the App" then "Docker": `forksync app setup --url https://<public host>`
    writes forksync.env; then `docker run --env-file forksync.env -v /path/app.pem:/run/secrets/forksync-app.pem:ro
    … forksync`. The image sets FORKSYNC_PRIVATE_KEY_FILE=/run/secrets/forksync-app.pem, where that
    command mounts the key.

    What the user sees: `app setup` wrote FORKSYNC_PRIVATE_KEY_FILE=<the host's path of the .pem>
    into forksync.env, and `--env-file` values replace the image's ENV, so inside the container
    the App key is looked for at a host path that does not exist there: the worker cannot
    authenticate (compose.yaml sets the variable again under `environment:`, the README's
    `docker run` does not).
    What they should see: the README's command, with the file `app setup` wrote, points the bot at
    the mounted key."""
    from bot.cli import app_setup
    from tests.cli.test_app_setup import follow_setup_page

    settings = tmp_path / "forksync.env"
    opts = app_setup.SetupOptions(url="https://fs.example.org", name="forksync-docker", api_url=fake_github.url, port=0,
                                  settings=settings, timeout_s=60)
    tasks: list = []
    await app_setup.run_setup(opts, lambda line: None, lambda url: tasks.append(asyncio.ensure_future(follow_setup_page(url))))
    await asyncio.gather(*tasks)

    readme = (ROOT / "README.md").read_text()
    cmd = shlex.split(re.search(r"`(docker run [^`]+)`", readme)[1])
    env_files = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--env-file"]
    mounts = {cmd[i + 1].split(":")[1] for i, a in enumerate(cmd) if a == "-v"}
    assert env_files == ["forksync.env"] and "/run/secrets/forksync-app.pem" in mounts
    # Docker: the image's ENV, then each --env-file line (KEY=VALUE, taken literally) over it
    container = _dockerfile_env()
    assert container["FORKSYNC_PRIVATE_KEY_FILE"] == "/run/secrets/forksync-app.pem"
    for line in settings.read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            k, _, v = line.partition("=")
            container[k] = v
    for i, a in enumerate(cmd):         # then each -e KEY=VALUE, which wins over the env files
        if a == "-e":
            k, _, v = cmd[i + 1].partition("=")
            container[k] = v
    assert container["FORKSYNC_PRIVATE_KEY_FILE"] in mounts, container["FORKSYNC_PRIVATE_KEY_FILE"]


# --------------------------------------------------------------------------- docs/config-reference.md


def test_github_config_path_other_than_where_the_app_reads_is_refused():
    """docs/config-reference.md: `github.config_path` (default `.github/forksync.yml`): "where the
    fork keeps this file". The App always reads `.github/forksync.yml`
    (bot/github/fork_config.py CONFIG_PATH); the key only moves where triage looks for its rules
    file and which file the status issue tells people to edit.

    What the user sees: `config_path: ci/forksync.yml` is accepted; the App keeps reading
    .github/forksync.yml, triage looks for `triage.rules` under ci/, and the blocked-unit hint on
    the status issue sends people to edit ci/forksync.yml, which the App never reads.
    What they should see: like `branch_prefix` and `command_prefix`, a value the App cannot honour
    is a config error naming `github.config_path` (or the App reads the file it names)."""
    from bot.config.forksync import ConfigError, parse_config_text

    text = "upstream: {url: https://github.com/o/u.git}\ngithub: {config_path: ci/forksync.yml}\n"
    with pytest.raises(ConfigError) as e:
        parse_config_text(text, "forksync.yml")
    assert "github.config_path" in str(e.value)


# --------------------------------------------------------------------------- docs/dashboard.md


async def test_local_dashboard_does_not_link_a_local_fork_to_github(tmp_path):
    """docs/dashboard.md: `forksync dashboard --config FILE` on a fork given as a local path
    (the demo's forksync.yml: `fork: {url: fork}`). Upstream, also local, gets no GitHub link
    (`upstream_github: null`, entries' `url: null`).

    What the user sees: the fork is named `local/fork` and every fork link points at
    https://github.com/local/fork — `"github"` of every answer and each ledger entry's
    `fork_commit_url` (https://github.com/local/fork/commit/<sha>), a repository of somebody else
    (or none) on github.com.
    What they should see: no GitHub link for a fork that is not on GitHub, as for upstream."""
    from aiohttp.test_utils import TestClient, TestServer

    from bot.app.web import mount_dashboard
    from bot.cli.dashboard import fork_name, refresh
    from bot.config.forksync import load_config
    from bot.demo.scenario import build_scenario
    from bot.store import Store

    s = build_scenario(tmp_path / "demo")
    cfg = load_config(str(s.config_path))
    fork = fork_name(cfg)
    store = Store(tmp_path / "forksync.db")
    try:
        refresh(store, cfg, fork, backfill_days=0, backfill_step=1)
        app = aiohttp.web.Application()
        mount_dashboard(app, store)
        async with TestClient(TestServer(app)) as c:
            r = await c.get(f"/api/v1/forks/{fork}/ledger?disposition=PICKED")
            assert r.status == 200
            body = await r.json()
    finally:
        store.close()
    assert body["upstream_github"] is None
    picked = [e for e in body["entries"] if e["fork_commit"]]
    assert picked, "the demo fork has picks"
    assert [e["fork_commit_url"] for e in picked if (e["fork_commit_url"] or "").startswith("https://github.com/")] == []
    assert not (body["github"] or "").startswith("https://github.com/")


def test_dashboard_on_a_fork_named_by_flags_computes_that_fork(tmp_path):
    """README "Use it on a fork": `forksync --upstream URL --fork URL status` needs no config
    file; the global `--upstream`/`--fork` options are documented for every command
    (docs/cli-reference.md: "fork repository (overrides fork.url)"), `dashboard` included.

    What the user sees: `forksync --upstream U --fork F dashboard` exits 2 with "no database at
    forksync.db: pass --db … or --config to compute a fork's state" — the fork they named is
    ignored (and with a forksync.db in the folder, that store is served instead, silently).
    What they should see: the dashboard computes the named fork's state, as `status` does."""
    from bot.demo.scenario import build_scenario

    s = build_scenario(tmp_path / "demo")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("FORKSYNC_DB", None)
    p = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--upstream", str(s.root / "upstream"), "--fork",
                          str(s.root / "fork"), "dashboard", "--port", "0", "--backfill-days", "0"],
                         cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        for line in p.stderr:
            lines.append(line)
            if "forksync dashboard: http://" in line:
                break
    finally:
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    text = "".join(lines)
    assert "pass --db" not in text, text
    assert "forksync dashboard: http://" in text


# --------------------------------------------------------------------------- docs/gpu-runners.md: sharding by hand

from tests.gpu_runner.test_runner import commit, git  # noqa: E402
from tests.gpu_runner.test_shards import TEST_LETTERS, config_text  # noqa: E402


def test_sharding_by_hand_merges_the_shards_of_the_commit_the_runner_named(tmp_path, capsys):
    """docs/gpu-runners.md "Sharding", by hand: `python -m gpu_runner run … --shard 1/2 --out r1.json`,
    `… --shard 2/2 --out r2.json`, then `python -m gpu_runner merge --suite S --commit SHA --config
    forksync.yml r1.json r2.json`. Each run prints the commit it ran as 12 hex digits
    ("letters @ 1a2b3c4d5e6f on cpu shard 1/2: GREEN …"), which is what a person copies.

    What the user sees: two green shards merge into a RED result, exit 1, with
    "shard-mismatch: the result given for shard 1/2 is for 'letters' at 1a2b3c4d5e6f …" — the very
    sha they gave (the same with `--commit HEAD`, README's example for `run`).
    What they should see: the shards' results are recognised as the commit named (a unique
    prefix), or the abbreviated commit is refused as bad input (exit 2) saying the full sha is needed —
    never a red verdict for a green suite."""
    from gpu_runner.__main__ import main as runner_main
    from gpu_runner.result import RunResult

    repo = tmp_path / "fork"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    sha = commit(repo, {"tests/test_letters.py": TEST_LETTERS}, "letters")
    cfg = tmp_path / "forksync.yml"
    cfg.write_text(config_text())
    outs = []
    for i in (1, 2):
        out = tmp_path / f"r{i}.json"
        assert runner_main(["run", "--suite", "letters", "--commit", "HEAD", "--repo", str(repo), "--config", str(cfg),
                            "--out", str(out), "--shard", f"{i}/2"]) == 0
        assert RunResult.from_json(out.read_text()).commit == sha
        outs.append(str(out))
    printed = capsys.readouterr().out
    short = sha[:12]
    assert f"letters @ {short} on cpu shard 1/2: GREEN" in printed
    merged = tmp_path / "merged.json"
    rc = runner_main(["merge", "--suite", "letters", "--commit", short, "--config", str(cfg), "--out", str(merged), *outs])
    said = capsys.readouterr()
    assert rc in (0, 2), said.out + said.err
    if rc == 0:
        m = RunResult.from_json(merged.read_text())
        assert (m.verdict, m.commit, m.counts.ran) == ("green", sha, 12)
    else:
        assert "--commit" in said.err and short in said.err


# --------------------------------------------------------------------------- README: finishing a conflicted chain


def test_readme_conflicted_chain_example_names_the_tips_its_output_shows():
    """README "Finishing a conflicted chain": "A real one, from the Triton fork as of 2026-04-15",
    run as `forksync … --upstream $R --fork $R --upstream-ref <tip> apply chain-6fa1dd664c73`,
    printing "created (tip 446a0ce1dd4e, base 7c2626ac6a16)".

    What the user sees, copying it: the chain built on the snapshot's fork tip (base
    db4666f22c1f, the fork's `main` today), not on 7c2626ac6a16, the fork as of 2026-04-15 —
    `apply` has no --as-of, and the command names no fork tip; `<tip>` is not said either.
    What they should see: the command that gives the output shown, naming both tips of that date
    (as `plan --as-of` says to apply its units)."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```\n(\$ forksync [^\n]*apply chain-6fa1dd664c73)\n(forksync/chain-6fa1dd664c73 created [^\n]*)\n",
                      readme)
    assert block, "README shows the apply of chain-6fa1dd664c73 with its output"
    cmd, shown = block[1], block[2]
    base = re.search(r"base ([0-9a-f]{12})\)", shown)[1]
    fork_ref = re.search(r"--fork-ref (\S+)", cmd)
    assert fork_ref and (base.startswith(fork_ref[1]) or fork_ref[1].startswith(base)), cmd
    up_ref = re.search(r"--upstream-ref (\S+)", cmd)
    assert up_ref and re.fullmatch(r"[0-9a-f]{7,40}", up_ref[1]), cmd
