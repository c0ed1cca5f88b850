"""The fingerprint's AMD probes (gpu_runner/fingerprint.py): ``amd-smi`` and ``rocm-smi`` parsed
from real outputs (tests/data/gpu_runner/amd/README.md names each source), the label check for
AMD platforms, and the runner end to end with a fake ``amd-smi``/``rocm-smi`` on ``PATH``."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpu_runner import fingerprint as fp
from gpu_runner.fingerprint import parse_amd_smi, parse_rocm_smi, wrong_gpu
from gpu_runner.runner import LocalOptions, run_local
from tests.gpu_runner.test_runner import suite

AMD = Path(__file__).resolve().parents[1] / "data" / "gpu_runner" / "amd"


def _text(name: str) -> str:
    return (AMD / name).read_text()


@pytest.mark.parametrize("name, names, driver", [
    ("amd-smi-static-mi210.txt", ["AMD Instinct MI210"], None),
    ("amd-smi-static-mi350x.txt", ["AMD Instinct MI350X"], "6.18.3"),
    ("amd-smi-static-mi60-mi50.txt", ["AMD Instinct MI60 / MI50"], None),
    # `amd-smi list` names no product: one GPU, no name (its AI NIC is not a GPU)
    ("amd-smi-list-mi210.txt", [None], None),
    ("amd-smi-empty.txt", [], None),
])
def test_amd_smi_static_text_from_real_machines(name, names, driver):
    assert parse_amd_smi(_text(name)) == (names, driver)


@pytest.mark.parametrize("name, names, driver", [
    ("rocm-smi-mi300x-x4.txt", ["AMD Instinct MI300X OAM"] * 4, "6.7.0"),
    # rocm-smi names an MI250X by its family only
    ("rocm-smi-mi250x.json", ["AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2"], None),
    # ROCm 4.0 printed the PCI device id as the series: a GPU, but no name to compare
    ("rocm-smi-mi100-rocm4.0.txt", [None], None),
    ("rocm-smi-fiji.txt", ["Fiji [Radeon R9 FURY / NANO Series]"], None),
    ("rocm-smi-no-json-data.txt", [], None),
    ("amd-smi-empty.txt", [], None),
])
def test_rocm_smi_text_from_real_machines(name, names, driver):
    assert parse_rocm_smi(_text(name)) == (names, driver)


def test_no_output_reads_as_no_gpu():
    assert parse_amd_smi(None) == ([], None)
    assert parse_rocm_smi(None) == ([], None)
    assert parse_rocm_smi("{not json") == ([], None)


def test_an_amd_platform_on_the_wrong_amd_or_nvidia_gpu_is_an_infrastructure_error():
    """The label check compares AMD platforms as NVIDIA ones: a word start of the product name."""
    mi210 = parse_amd_smi(_text("amd-smi-static-mi210.txt"))[0][0]
    mi300x = parse_rocm_smi(_text("rocm-smi-mi300x-x4.txt"))[0][0]
    assert wrong_gpu("mi300", mi210) == (
        "the runner's GPU is AMD Instinct MI210, not platform mi300's (MI300): a mislabelled or swapped "
        "machine; nothing was run — fix the runner's label, retry on another runner")
    assert "not platform h200's (H200)" in wrong_gpu("h200", mi300x)
    assert "not platform mi210's (MI210)" in wrong_gpu("mi210", mi300x)
    assert "not platform mi300's (MI300)" in wrong_gpu("mi300", "NVIDIA H100 80GB HBM3")
    assert wrong_gpu("mi300", mi300x) is None
    assert wrong_gpu("mi210", mi210) is None
    assert wrong_gpu("mi350", "AMD Instinct MI350X") is None
    # the MI355X is the MI350X's chip (gfx950) at a higher power: an mi350 runner may hold either
    assert wrong_gpu("mi350", "AMD Instinct MI355X") is None
    assert wrong_gpu("mi300", "AMD Instinct MI355X") is not None
    # an MI250X (rocm-smi calls it MI200) is not an MI210, though both are gfx90a
    assert wrong_gpu("mi210", "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2") is not None
    # MI325X and MI308X are other products than the MI300X/MI300A the mi300 label stands for
    assert wrong_gpu("mi300", "AMD Instinct MI325X") is not None
    assert wrong_gpu("mi300", "MI308X") is not None
    # a box with an NVIDIA and an AMD card passes for either platform
    assert wrong_gpu("mi300", "AMD Instinct MI300X OAM, NVIDIA H200") is None


def _fake_tools(bin_dir: Path, monkeypatch, **outputs: str) -> None:
    """Executables named by ``outputs`` (``amd_smi`` → ``amd-smi``) that print the given text
    whatever their arguments, and an ``nvidia-smi`` that fails as on a machine with no NVIDIA GPU."""
    bin_dir.mkdir()
    outputs.setdefault("nvidia_smi", None)
    for tool, text in outputs.items():
        exe = bin_dir / tool.replace("_", "-")
        if text is None:
            exe.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate with the "
                           "NVIDIA driver.' >&2\nexit 9\n")
        else:
            (bin_dir / f"{exe.name}.out").write_text(text)
            exe.write_text(f"#!/bin/sh\ncat '{bin_dir / (exe.name + '.out')}'\n")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_a_suite_for_mi300_run_on_an_mi210_is_not_green(repo, tmp_path, monkeypatch):
    """A runner labelled ``mi300`` whose machine holds an MI210. What a user saw: green for platform
    mi300 (the fingerprint read ``nvidia-smi`` only, so an AMD machine had no model to check). What
    they should see: red infrastructure naming both, before the suite runs."""
    _fake_tools(tmp_path / "bin", monkeypatch, amd_smi=_text("amd-smi-static-mi210.txt"))
    r = run_local(suite(platforms=["mi300"]), repo, "HEAD", LocalOptions(platform="mi300"))
    assert (r.environment.gpu_model, r.environment.gpu_count) == ("AMD Instinct MI210", 1)
    assert (r.verdict, r.outcome) == ("red", "infrastructure")
    assert "not platform mi300's (MI300)" in r.reasons[0].detail
    assert r.tests == []


def test_a_suite_for_mi300_on_an_mi300x_box_with_rocm_smi_only_runs(repo, tmp_path, monkeypatch):
    """An older ROCm without ``amd-smi``: ``rocm-smi`` names the four MI300X; the suite runs."""
    _fake_tools(tmp_path / "bin", monkeypatch, rocm_smi=_text("rocm-smi-mi300x-x4.txt"))
    r = run_local(suite(platforms=["mi300"]), repo, "HEAD", LocalOptions(platform="mi300"))
    env = r.environment
    assert (env.gpu_model, env.gpu_count, env.driver) == ("AMD Instinct MI300X OAM", 4, "6.7.0")
    assert r.outcome != "infrastructure" and r.verdict == "green", [(x.code, x.detail[:200]) for x in r.reasons]
    assert fp.fingerprint("r").gpu_count == 4


def test_a_suite_for_h200_on_an_amd_box_is_not_green(repo, tmp_path, monkeypatch):
    _fake_tools(tmp_path / "bin", monkeypatch, rocm_smi=_text("rocm-smi-mi300x-x4.txt"))
    r = run_local(suite(platforms=["h200"]), repo, "HEAD", LocalOptions(platform="h200"))
    assert (r.verdict, r.outcome) == ("red", "infrastructure")
    assert "AMD Instinct MI300X OAM, not platform h200's (H200)" in r.reasons[0].detail


def test_a_machine_with_an_nvidia_and_an_amd_gpu_lists_both(tmp_path, monkeypatch):
    _fake_tools(tmp_path / "bin", monkeypatch, amd_smi=_text("amd-smi-static-mi350x.txt"),
                nvidia_smi="NVIDIA H200, 580.159.04\n")
    env = fp.fingerprint("r1")
    assert (env.gpu_model, env.gpu_count, env.driver) == ("NVIDIA H200, AMD Instinct MI350X", 2, "580.159.04")


def test_gpu_count_counts_amd_gpus(tmp_path, monkeypatch):
    _fake_tools(tmp_path / "bin", monkeypatch, amd_smi=_text("amd-smi-static-mi350x.txt"))
    assert fp.fingerprint("r").gpu_count == 1


GPU_PER_WORKER_ROCR = """\
import os
import pytest

@pytest.mark.parametrize("i", range(4))
def test_gpu(i):
    with open(os.environ["SEEN"], "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + " " + os.environ["ROCR_VISIBLE_DEVICES"] + " "
                + os.environ.get("CUDA_VISIBLE_DEVICES", "-") + "\\n")
"""


def test_each_worker_takes_its_own_amd_gpu_on_a_runner_pinned_with_rocr_visible_devices(repo, tmp_path, monkeypatch):
    """ROCm's documents advise ``ROCR_VISIBLE_DEVICES`` to give a runner its GPUs (docs/gpu-runners.md
    names it for AMD runners). Now that the fingerprint counts AMD GPUs, a runner pinned to GPUs 2
    and 3 of an eight-GPU box with ``workers: 2`` handed its workers ``CUDA_VISIBLE_DEVICES`` 0..7
    — indices into the two GPUs ROCr left visible, so the third worker on would see none. Each
    worker should take one of the runner's own GPUs, in the variable the runner pins with."""
    from tests.gpu_runner.test_runner import PYTEST, commit
    for var in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        monkeypatch.delenv(var, raising=False)
    _fake_tools(tmp_path / "bin", monkeypatch, rocm_smi=_text("rocm-smi-mi300x-x4.txt"))
    commit(repo, {"tests/test_gpu.py": GPU_PER_WORKER_ROCR}, "gpu per worker")
    seen = tmp_path / "seen.txt"
    r = run_local(suite(build=None, workers=2, expected_tests=4, command=f"{PYTEST} tests/test_gpu.py --junitxml=out/junit.xml",
                        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "ROCR_VISIBLE_DEVICES": "2,3", "SEEN": str(seen)}),
                  repo, "HEAD", LocalOptions(platform="mi300"))
    assert r.verdict == "green", [(x.code, x.detail[:300]) for x in r.reasons]
    lines = set(seen.read_text().split("\n")) - {""}
    assert lines and lines <= {"gw0 2 -", "gw1 3 -"}, lines
