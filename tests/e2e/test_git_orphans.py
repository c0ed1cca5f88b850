"""A worker killed (SIGKILL, an OOM kill) while its git fetches into the fork's working
repository: the git goes with it. A git left running after its worker died would go on holding
and writing the working repository's refs after the fork lock it ran under was released (the OS
releases a dead process's ``flock``), beside the next worker's sync — which takes every lock file
it finds there under that lock for a dead git's."""
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.github import make_source_repo
from tests.support.processes import alive, children, free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
CONFIG = "upstream:\n  url: https://github.com/triton-lang/triton.git\n  ref: main\n"


def gits_in(git_dir: Path) -> list[int]:
    """The pids of the git processes running with ``--git-dir=<git_dir>``."""
    out = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"git") and f"--git-dir={git_dir}".encode() in argv and alive(int(cmdline.parent.name)):
            out.append(int(cmdline.parent.name))
    return out


async def test_a_git_fetching_for_a_killed_worker_dies_with_it(fake_github, tmp_path):
    fake = fake_github
    make_source_repo(tmp_path / "up", [{"README.md": "upstream\n"}])
    fake.create_repo("triton-lang/triton", source=tmp_path / "up")
    make_source_repo(tmp_path / "src", [{"README.md": "fork\n", ".github/forksync.yml": CONFIG}])
    fake.create_repo("meta/triton", source=tmp_path / "src")
    fake.install("meta")            # installed while forksync was down: adopted (and synced) at start
    # every fetch of the worker hangs in the serving side's pack-objects (a slow network) once it has said so
    started = tmp_path / "fetch-started"
    hook = tmp_path / "hang.sh"
    hook.write_text(f"#!/bin/sh\necho $$ >> {started}\nexec sleep 300\n")
    hook.chmod(0o755)
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f"[uploadpack]\n\tpackObjectsHook = {hook}\n")
    key = tmp_path / "app.pem"
    key.write_text(fake.app.private_key_pem)
    port = free_port()
    env = dict(os.environ, FORKSYNC_WEBHOOK_SECRET=fake.webhooks.secret, FORKSYNC_APP_ID=str(fake.app.id),
               FORKSYNC_PRIVATE_KEY_FILE=str(key), FORKSYNC_DB=str(tmp_path / "bot.db"),
               FORKSYNC_GITHUB_URL=fake.url, FORKSYNC_WORKDIR=str(tmp_path / "work"),
               FORKSYNC_GIT_URL=str(fake.state.root / "repos" / "{owner}" / "{repo}.git"),
               GIT_CONFIG_GLOBAL=str(gitconfig),
               PYTHONPATH=str(ROOT))        # serve's worker children import this checkout's bot
    log = open(tmp_path / "serve.log", "w")
    proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "serve", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=tmp_path, env=env, stdout=log, stderr=log)
    work = tmp_path / "work" / "meta+triton.git"
    try:
        async def fetching():
            return started.exists() and bool(gits_in(work))
        await wait_for(fetching, "the worker's fetch to begin")
        workers = children(proc.pid)
        git_pids = gits_in(work)
        proc.send_signal(signal.SIGKILL)
        proc.wait()

        async def workers_gone():
            return not any(alive(p) for p in workers)
        await wait_for(workers_gone, "the worker to die with serve")

        async def gits_gone():
            return not any(alive(p) for p in git_pids)
        await wait_for(gits_gone, "the worker's git to die with it", timeout=15.0)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in gits_in(work):
            os.kill(pid, signal.SIGKILL)
        for pid in (started.read_text().split() if started.exists() else []):
            try:
                os.kill(int(pid), signal.SIGKILL)       # the hanging hook (its own pid: `exec sleep`)
            except ProcessLookupError:
                pass
