"""The environment fingerprint of a run: what the machine has, found without installing or
importing anything heavy (torch's import takes seconds: its version files are read instead).

``nvidia-smi`` gives GPU model, count, driver and the driver's CUDA version; ``torch.version.cuda``
(read from ``torch/version.py``) gives the CUDA torch was built with, preferred when present.
Every probe is best effort: a missing tool leaves the field None, never fails the run.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from bot.config.suites import PLATFORM_GPU
from gpu_runner.result import Environment


def runner_id(explicit: str | None = None) -> str:
    """``--runner-id``, else ``FORKSYNC_RUNNER_ID``, else GitHub Actions' ``RUNNER_NAME``, else the host name."""
    return explicit or os.environ.get("FORKSYNC_RUNNER_ID") or os.environ.get("RUNNER_NAME") or socket.gethostname()


def _run(cmd: list[str], timeout: float = 20.0) -> str | None:
    if not shutil.which(cmd[0]):
        return None
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout if p.returncode == 0 else None


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _torch_cuda() -> str | None:
    spec = importlib.util.find_spec("torch")
    if not spec or not spec.origin:
        return None
    vf = Path(spec.origin).parent / "version.py"
    try:
        m = re.search(r"^cuda(?::\s*\S+)?\s*=\s*['\"]([^'\"]+)['\"]", vf.read_text(), re.MULTILINE)
    except OSError:
        return None
    return m.group(1) if m else None


def parse_nvidia_smi(query_csv: str | None, banner: str | None) -> tuple[str | None, int, str | None, str | None]:
    """(model, count, driver, cuda) from ``nvidia-smi --query-gpu=name,driver_version
    --format=csv,noheader`` and the plain banner's ``CUDA Version: X``. Pure; tested on real text."""
    rows = [r.split(",") for r in (query_csv or "").strip().splitlines() if r.strip()]
    models = sorted({r[0].strip() for r in rows})
    model = ", ".join(models) if models else None
    driver = rows[0][1].strip() if rows and len(rows[0]) > 1 else None
    m = re.search(r"CUDA Version:\s*([\d.]+)", banner or "")
    return model, len(rows), driver, (m.group(1) if m else None)


def gpu_count() -> int:
    """How many GPUs ``nvidia-smi -L`` lists (0 without the tool or a GPU)."""
    out = _run(["nvidia-smi", "-L"])
    return sum(1 for line in (out or "").splitlines() if line.startswith("GPU "))


def fingerprint(runner: str) -> Environment:
    """What this machine has (see the module docstring); ``runner`` is the runner id to record."""
    model, count, driver, smi_cuda = parse_nvidia_smi(
        _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]),
        _run(["nvidia-smi"]))
    git = _run(["git", "--version"])
    return Environment(
        runner_id=runner, hostname=socket.gethostname(),
        os=f"{platform.system()} {platform.release()}", python=sys.version.split()[0],
        cpu=f"{platform.machine()} x{os.cpu_count()}",
        gpu_model=model, gpu_count=count, driver=driver, cuda=_torch_cuda() or smi_cuda,
        torch=_dist_version("torch"), triton=_dist_version("triton"),
        git=git.strip().removeprefix("git version ") if git else None)


def wrong_gpu(platform: str, gpu_model: str | None) -> str | None:
    """Why this machine cannot run ``platform``'s suites (an infrastructure error's text), or None.
    ``gpu_model`` is :func:`fingerprint`'s (several models joined by ", "); the name each platform's
    GPU holds is :data:`bot.config.suites.PLATFORM_GPU`, matched as a word start ("H200" is in
    "NVIDIA H200 NVL", not in "NVIDIA GH200"). None when nothing can be compared: no model read (no
    ``nvidia-smi``, an AMD machine) or a platform with no GPU (cpu). A box of mixed GPUs passes
    when any of them is the platform's: ``nvidia-smi`` lists every card whatever
    ``CUDA_VISIBLE_DEVICES`` selects."""
    want = PLATFORM_GPU.get(platform)
    if not want or not gpu_model:
        return None
    if re.search(rf"(?<![A-Za-z0-9]){re.escape(want)}", gpu_model, re.IGNORECASE):
        return None
    return (f"the runner's GPU is {gpu_model}, not platform {platform}'s ({want}): a mislabelled or "
            "swapped machine; nothing was run — fix the runner's label, retry on another runner")
