"""The lock files install exactly what pyproject.toml pins: every pin is in the lock at a version
the pin allows, every locked package carries hashes, the runtime lock agrees with the full one,
and no CUDA build of torch (or its nvidia-* packages) can come in. Regenerate with
``requirements/lock.sh``."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
DEV_LOCK = ROOT / "requirements" / "dev.lock"
RUNTIME_LOCK = ROOT / "requirements" / "runtime.lock"
RUNNER_LOCK = ROOT / "requirements" / "runner.lock"


def locked(path: Path) -> dict[str, tuple[str, int]]:
    """``{canonical name: (version, number of hashes)}`` of a pip-compile ``--generate-hashes`` file."""
    out: dict[str, tuple[str, int]] = {}
    current = None
    for line in path.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line)
        if m:
            current = canonicalize_name(m[1])
            assert current not in out, f"{path.name}: {current} locked twice"
            out[current] = (m[2], 0)
        elif current and line.strip().startswith("--hash=sha256:"):
            v, n = out[current]
            out[current] = (v, n + 1)
    return out


def pins() -> dict[str, list[Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    groups = {"runtime": project["dependencies"], **project["optional-dependencies"]}
    return {g: [Requirement(r) for r in reqs] for g, reqs in groups.items()}


def test_every_pin_is_locked_at_an_allowed_version():
    dev, runtime = locked(DEV_LOCK), locked(RUNTIME_LOCK)
    problems = []
    for group, reqs in pins().items():
        for req in reqs:
            for name, lock in (("dev.lock", dev), *((("runtime.lock", runtime),) if group == "runtime" else ())):
                got = lock.get(canonicalize_name(req.name))
                if got is None:
                    problems.append(f"{req} ({group}) is not in {name}")
                elif not req.specifier.contains(got[0], prereleases=True):
                    problems.append(f"{req} ({group}): {name} has {got[0]}")
    assert problems == [], "regenerate the locks with requirements/lock.sh:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", [DEV_LOCK, RUNTIME_LOCK, RUNNER_LOCK], ids=lambda p: p.name)
def test_every_locked_package_has_hashes(path):
    assert [name for name, (_, n) in locked(path).items() if n == 0] == []


def test_runtime_lock_is_the_full_locks_subset():
    dev, runtime = locked(DEV_LOCK), locked(RUNTIME_LOCK)
    assert {n: v for n, (v, _) in runtime.items() if dev.get(n, ("",))[0] != v} == {}
    assert "torch" not in runtime and "pytest" not in runtime


def test_pip_itself_is_not_locked():
    """An install from the lock keeps the venv's own pip (requirements/lock.sh drops it)."""
    assert [p.name for p in (DEV_LOCK, RUNTIME_LOCK, RUNNER_LOCK) if "pip" in locked(p)] == []


def test_torch_is_the_cpu_build_and_no_cuda_package_is_locked():
    dev = locked(DEV_LOCK)
    assert dev["torch"][0].endswith("+cpu")
    for path in (DEV_LOCK, RUNTIME_LOCK, RUNNER_LOCK):
        assert [n for n in locked(path) if n.startswith("nvidia-") or n.startswith("cuda-")] == [], path.name


def test_runner_lock_pins_pyprojects_versions_and_agrees_with_the_full_lock():
    # the runner's own imports are runtime pins; pytest-xdist (a suite's `workers: N`) is a test pin
    runtime_pins = {canonicalize_name(r.name): r for r in (*pins()["runtime"], *pins()["test"])}
    wanted = [Requirement(line) for line in (ROOT / "requirements" / "runner.in").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert [str(r) for r in wanted if str(runtime_pins.get(canonicalize_name(r.name))) != str(r)] == []
    dev, runner = locked(DEV_LOCK), locked(RUNNER_LOCK)
    assert {canonicalize_name(r.name) for r in wanted} <= set(runner)
    assert {n: v for n, (v, _) in runner.items() if dev.get(n, ("",))[0] != v} == {}
