"""The environment fingerprint of a run: what the machine has, found without installing or
importing anything heavy (torch's import takes seconds: its version files are read instead).

``nvidia-smi`` gives GPU model, count, driver and the driver's CUDA version; ``torch.version.cuda``
(read from ``torch/version.py``) gives the CUDA torch was built with, preferred when present.
AMD GPUs come from ``amd-smi static --asic --driver`` (ROCm 6 and later), else from ``rocm-smi
--showproductname --showdriverversion`` (older ROCm); a machine with both vendors' GPUs lists both.
Every probe is best effort: a missing tool leaves the field None, never fails the run.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
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


_NO_NAME = re.compile(r"^(?:0x[0-9a-fA-F]+|N/A)?$")


def _product_name(value: str) -> str | None:
    """The product name AMD's tools print, or None for no name: empty, ``N/A``, or a bare PCI
    id (``0x738c``: rocm-smi of ROCm 4 on an MI100) that would mismatch every platform."""
    value = value.strip()
    return None if _NO_NAME.match(value) else value


def parse_amd_smi(static_text: str | None) -> tuple[list[str | None], str | None]:
    """(one product name per GPU, None where none is printed; the driver version) from ``amd-smi
    static --asic --driver``'s text: a ``GPU: <n>`` line per GPU, its sections (``ASIC:``,
    ``DRIVER:``, ...) indented under it, ``MARKET_NAME`` in ``ASIC`` and ``VERSION`` (or
    ``DRIVER_VERSION``) in ``DRIVER``. Other blocks (``AI_NIC: 0``) are not GPUs; other sections
    are ignored, so the full ``amd-smi static`` reads the same. Text, not ``--json``: every real
    output on record is text (MI50 to MI350X). Pure; tested on real outputs
    (tests/data/gpu_runner/amd/README.md)."""
    names: list[str | None] = []
    driver: str | None = None
    in_gpu, section = False, ""
    for line in (static_text or "").splitlines():
        if top := re.match(r"^(\w+):\s*(\S*)\s*$", line):
            in_gpu, section = top.group(1) == "GPU" and top.group(2).isdigit(), ""
            if in_gpu:
                names.append(None)
            continue
        field = re.match(r"^\s+(\w+):\s*(.*?)\s*$", line)
        if not in_gpu or not field:
            continue
        key, value = field.groups()
        if not value:
            section = key
        elif section == "ASIC" and key == "MARKET_NAME":
            names[-1] = _product_name(value)
        elif section == "DRIVER" and key in ("VERSION", "DRIVER_VERSION") and driver is None:
            driver = _product_name(value)
    return names, driver


def parse_rocm_smi(text: str | None) -> tuple[list[str | None], str | None]:
    """(one product name per GPU, the driver version) from ``rocm-smi --showproductname
    --showdriverversion``: ``GPU[i] : Card series: <name>`` lines (``Card Series`` in later ROCm)
    and ``Driver version: <v>``; or ``--json``'s ``{"card0": {"Card Series": ...}, ...}`` (the
    driver read from a ``system`` entry when there is one). The series may be a family rather than the product
    (an MI250X prints "AMD INSTINCT MI200 (MCM) ..."), or a bare PCI id in ROCm 4 (no name). Text
    that is neither (``WARNING: No JSON data to report``, broken JSON) gives no GPU. Pure; tested
    on real outputs (tests/data/gpu_runner/amd/README.md)."""
    text = text or ""
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return [], None
        cards = [v for k, v in data.items() if k.startswith("card") and isinstance(v, dict)]
        system = data.get("system") if isinstance(data.get("system"), dict) else {}
        names = [_product_name(str(c.get("Card Series") or c.get("Card series") or "")) for c in cards]
        return names, system.get("Driver version") or None
    by_gpu: dict[int, str | None] = {}
    driver = None
    for line in text.splitlines():
        if m := re.match(r"^GPU\[(\d+)\]\s*:\s*Card series:\s*(.*?)\s*$", line, re.IGNORECASE):
            by_gpu[int(m.group(1))] = _product_name(m.group(2))
        elif (m := re.match(r"^\s*Driver version:\s*(\S+)", line, re.IGNORECASE)) and driver is None:
            driver = m.group(1)
    return [by_gpu[i] for i in sorted(by_gpu)], driver


def _amd_gpus() -> tuple[list[str | None], str | None]:
    """This machine's AMD GPUs: ``amd-smi`` when it lists any, else ``rocm-smi``."""
    names, driver = parse_amd_smi(_run(["amd-smi", "static", "--asic", "--driver"]))
    if names:
        return names, driver
    return parse_rocm_smi(_run(["rocm-smi", "--showproductname", "--showdriverversion"]))


def fingerprint(runner: str) -> Environment:
    """What this machine has (see the module docstring); ``runner`` is the runner id to record.
    A machine with NVIDIA and AMD GPUs records both models (NVIDIA's first), their total count,
    and NVIDIA's driver."""
    model, count, driver, smi_cuda = parse_nvidia_smi(
        _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]),
        _run(["nvidia-smi"]))
    amd_names, amd_driver = _amd_gpus()
    amd_models = sorted({n for n in amd_names if n})
    model = ", ".join([*([model] if model else []), *amd_models]) or None
    git = _run(["git", "--version"])
    return Environment(
        runner_id=runner, hostname=socket.gethostname(),
        os=f"{platform.system()} {platform.release()}", python=sys.version.split()[0],
        cpu=f"{platform.machine()} x{os.cpu_count()}",
        gpu_model=model, gpu_count=count + len(amd_names), driver=driver or amd_driver,
        cuda=_torch_cuda() or smi_cuda,
        torch=_dist_version("torch"), triton=_dist_version("triton"),
        git=git.strip().removeprefix("git version ") if git else None)


def wrong_gpu(platform: str, gpu_model: str | None) -> str | None:
    """Why this machine cannot run ``platform``'s suites (an infrastructure error's text), or None.
    ``gpu_model`` is :func:`fingerprint`'s (several models joined by ", "); the name each platform's
    GPU may hold are :data:`bot.config.suites.PLATFORM_GPU`, matched as a word start ("H200" is in
    "NVIDIA H200 NVL", not in "NVIDIA GH200"; "MI300" is in "AMD Instinct MI300X OAM", not in
    "AMD Instinct MI325X" or "MI308X", other products). None when nothing can be compared: no
    model read (no vendor tool, or one that names no product) or a platform with no GPU (cpu). A
    box of mixed GPUs passes when any of them is the platform's: the tools list every card
    whatever ``CUDA_VISIBLE_DEVICES``/``HIP_VISIBLE_DEVICES`` selects."""
    wants = PLATFORM_GPU.get(platform)
    if not wants or not gpu_model:
        return None
    if any(re.search(rf"(?<![A-Za-z0-9]){re.escape(w)}", gpu_model, re.IGNORECASE) for w in wants):
        return None
    return (f"the runner's GPU is {gpu_model}, not platform {platform}'s ({' or '.join(wants)}): a mislabelled or "
            "swapped machine; nothing was run — fix the runner's label, retry on another runner")
