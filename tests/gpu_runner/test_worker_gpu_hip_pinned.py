"""xdist workers on an AMD runner pinned with both ``HIP_VISIBLE_DEVICES`` and
``CUDA_VISIBLE_DEVICES`` (gpu_runner/runner.py ``WORKER_GPU_VARS``): HIP's runtime reads
``HIP_VISIBLE_DEVICES`` whenever it is set and ignores ``CUDA_VISIBLE_DEVICES`` then (ROCm's
rocclr: ``HIP_VISIBLE_DEVICES[0] != '\\0' ? HIP_VISIBLE_DEVICES : CUDA_VISIBLE_DEVICES``; torch's
``_parse_visible_devices`` on ROCm likewise), so a worker must narrow ``HIP_VISIBLE_DEVICES``."""
from __future__ import annotations

from gpu_runner.runner import LocalOptions, run_local
from tests.gpu_runner.test_fingerprint import _fake_tools, _text
from tests.gpu_runner.test_runner import PYTEST, commit, suite

SEEN_BY_WORKER = """\
import os
import pytest

@pytest.mark.parametrize("i", range(4))
def test_gpu(i):
    with open(os.environ["SEEN"], "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + " " + os.environ["HIP_VISIBLE_DEVICES"] + "\\n")
"""


def test_each_worker_narrows_hip_visible_devices_when_the_runner_sets_both_hip_and_cuda(repo, tmp_path, monkeypatch):
    """A runner given GPUs 2 and 3 in both variables (as scripts that serve NVIDIA and AMD runners
    set them), ``workers: 2``. What happens: each worker narrows ``CUDA_VISIBLE_DEVICES``, which
    HIP ignores while ``HIP_VISIBLE_DEVICES`` is set, so both workers see both GPUs. What should:
    each worker's HIP sees one GPU of the runner's own."""
    for var in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        monkeypatch.delenv(var, raising=False)
    _fake_tools(tmp_path / "bin", monkeypatch, rocm_smi=_text("rocm-smi-mi300x-x4.txt"))
    commit(repo, {"tests/test_gpu.py": SEEN_BY_WORKER}, "gpu per worker")
    seen = tmp_path / "seen.txt"
    r = run_local(suite(build=None, workers=2, expected_tests=4, command=f"{PYTEST} tests/test_gpu.py --junitxml=out/junit.xml",
                        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "HIP_VISIBLE_DEVICES": "2,3",
                             "CUDA_VISIBLE_DEVICES": "2,3", "SEEN": str(seen)}),
                  repo, "HEAD", LocalOptions(platform="mi300"))
    assert r.verdict == "green", [(x.code, x.detail[:300]) for x in r.reasons]
    lines = set(seen.read_text().split("\n")) - {""}
    assert lines and lines <= {"gw0 2", "gw1 3"}, lines


SEEN_CUDA = SEEN_BY_WORKER.replace('os.environ["HIP_VISIBLE_DEVICES"]', 'os.environ["CUDA_VISIBLE_DEVICES"]')


def test_each_worker_narrows_cuda_visible_devices_on_an_nvidia_runner_that_also_carries_hip_visible_devices(
        repo, tmp_path, monkeypatch):
    """An NVIDIA runner (nvidia-smi answers, no AMD tool) pinned to GPUs 5 and 7 with
    ``CUDA_VISIBLE_DEVICES``, whose environment also carries a ``HIP_VISIBLE_DEVICES`` naming other
    GPUs (an image or script made for AMD runners too). CUDA reads only ``CUDA_VISIBLE_DEVICES``.
    What happens: HIP's variable ranks first (``WORKER_GPU_VARS``), the two differ, so only it is
    narrowed and both workers see both NVIDIA GPUs (before the change, CUDA's was narrowed). What
    should: each worker's CUDA sees one GPU of the runner's own."""
    for var in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        monkeypatch.delenv(var, raising=False)
    _fake_tools(tmp_path / "bin", monkeypatch, nvidia_smi="NVIDIA H200, 580.159.04\nNVIDIA H200, 580.159.04\n")
    commit(repo, {"tests/test_gpu.py": SEEN_CUDA}, "gpu per worker")
    seen = tmp_path / "seen.txt"
    r = run_local(suite(build=None, workers=2, expected_tests=4, command=f"{PYTEST} tests/test_gpu.py --junitxml=out/junit.xml",
                        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "HIP_VISIBLE_DEVICES": "0",
                             "CUDA_VISIBLE_DEVICES": "5,7", "SEEN": str(seen)}),
                  repo, "HEAD")
    assert r.verdict == "green", [(x.code, x.detail[:300]) for x in r.reasons]
    lines = set(seen.read_text().split("\n")) - {""}
    assert lines and lines <= {"gw0 5", "gw1 7"}, lines
