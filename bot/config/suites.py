"""``suites:`` section of forksync.yml (owned by the validation work).

A *suite* is one deterministic validation job: an optional build step, a command, and the report
it leaves behind (JUnit XML, lit output, or benchmark JSON). Levels:

* ``L1`` — per PR, gates merges (``required: true`` makes it a merge condition);
* ``L2`` — periodic on the fork's trunk (benchmarks, regression detection in :mod:`bot.l2.detection`);
* ``L3`` — on demand (``/forksync l3 <workload>``), heavy, signed off by area owners.

Trust: the gate reads suites from the copy of ``forksync.yml`` on the fork's **default branch**,
never from the PR's head — a PR could otherwise drop its own failing suite. Use
:func:`bot.config.forksync.load_trusted_suites`, which cannot be handed the PR's ref.

Errors: pydantic ``ValidationError`` inside :func:`bot.config.forksync.parse_config` (turned into
``ConfigError`` naming ``suites.<i>.<field>``); :func:`suite_problems` checks what needs the whole
config (unique names, known areas).
"""
from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from bot.config.infra import PERSISTING_IS_THE_CHANGE, infra_match

#: Platform labels a suite may ask for (runner labels use the same words), each with the names its
#: GPU's model may hold (``nvidia-smi``: "NVIDIA H200", "NVIDIA H200 NVL"; ``amd-smi``: "AMD Instinct
#: MI300X"), which the runner checks the machine against as a word start ("MI300" takes the MI300X
#: and MI300A, not the MI325X or MI308X); None: no GPU to check (cpu). ``mi210`` and ``mi300`` are the gfx90a and
#: gfx942 runners ROCm/triton's own CI runs on (its workflow names them "mi210" and "mi300x"); an
#: ``mi350`` runner holds an MI350X or an MI355X (one chip, gfx950, at two power limits).
PLATFORM_GPU: dict[str, tuple[str, ...] | None] = {
    "cpu": None, "h100": ("H100",), "h200": ("H200",), "b200": ("B200",),
    "mi210": ("MI210",), "mi300": ("MI300",), "mi350": ("MI350", "MI355")}
PLATFORMS = tuple(PLATFORM_GPU)

def infra_error_match(text: str) -> str | None:
    """``"<kind>: <line>"`` for the first infrastructure phrase in ``text`` (the shared table
    :data:`bot.config.infra.INFRA_PATTERNS`: no GPU visible, CUDA/HIP/driver start-up failures,
    driver mismatch, disk full, OOM kill, network, lost runner), else None. Used by the runner to
    decide whether an attempt may be retried (``infra_retries``) and by bisection to skip, not
    blame, a step."""
    hit = infra_match(text)
    return f"{hit[0]}: {hit[1]}" if hit else None

def persists_as_change(infra: str | None) -> bool:
    """Whether ``infra`` (:func:`infra_error_match`'s ``"<kind>: <line>"``, None for none) is of a
    kind a change can cause as well as the machine
    (:data:`bot.config.infra.PERSISTING_IS_THE_CHANGE`): retried, but the change's once it fails
    every attempt."""
    return bool(infra) and infra.split(":", 1)[0] in PERSISTING_IS_THE_CHANGE

#: where suites run (``FORKSYNC_RUNNER_BACKEND``): the bot's own machine, or GitHub Actions
#: self-hosted GPU runners (docs/gpu-runners.md)
RUNNER_BACKENDS = ("local", "github-actions")


class ReportSpec(BaseModel):
    """Where a suite leaves its report and how to read it. ``path`` is relative to the checkout
    (globs allowed for JUnit: several XML files are merged)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    format: Literal["junit", "lit", "benchmark-json"]
    path: str = Field(min_length=1)


class SuiteConfig(BaseModel):
    """One suite. ``expected_tests`` is an exact count, ``min_tests`` a floor, both of tests that
    **ran** (passed, failed, error — skipped and xfail tests do not count, or a PR could skip
    the tests it breaks); an L1/L3 suite needs at least one of them (a suite that silently runs
    fewer tests must turn red, saturated validation). ``expected_tests`` is one number or a
    count per platform (``{h200: 30, cpu: 28}``, every platform of the suite named).
    ``allow_newly_skipped``: tests that ran on the base's result and are skipped on the head do
    not block the gate (they are still listed). ``timeout_s`` bounds build + command together.
    ``workers`` > 1 runs a pytest suite in that many processes on one machine (pytest-xdist's
    ``-n``; one GPU per worker where the machine has several), judged exactly as one process.
    ``areas`` limits the suite to PRs touching those areas (empty: every PR). ``infra_retries``
    retries only runs whose output names an infrastructure fault (:data:`bot.config.infra.INFRA_PATTERNS`). ``shards``: split the
    suite's tests across that many runners (a deterministic split by test id, :mod:`gpu_runner.shards`);
    the shards' results merge into one verdict judged against ``expected_tests`` (a missing shard is red)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    level: Literal["L1", "L2", "L3"] = "L1"
    build: str | None = None
    command: str = Field(min_length=1)
    report: ReportSpec
    expected_tests: int | dict[str, int] | None = None
    min_tests: int | None = Field(None, ge=1)
    timeout_s: int = Field(3600, ge=1, le=7 * 24 * 3600)
    platforms: list[str] = Field(default_factory=lambda: ["cpu"], min_length=1)
    env: dict[str, str] = Field(default_factory=dict)
    infra_retries: int = Field(1, ge=0, le=5)
    workers: int = Field(1, ge=1, le=64)
    required: bool = True
    areas: list[str] = Field(default_factory=list)
    allow_newly_skipped: bool = False
    shards: int = Field(1, ge=1, le=64)

    @field_validator("expected_tests")
    @classmethod
    def _expected(cls, v):
        counts = v.values() if isinstance(v, dict) else [] if v is None else [v]
        for n in counts:
            if n < 1:
                raise PydanticCustomError("greater_than_equal", "Input should be greater than or equal to 1")
        if isinstance(v, dict):
            bad = [p for p in v if p not in PLATFORMS]
            if bad:
                raise ValueError(f"unknown platform label(s) {bad} in the per-platform counts; use some of {list(PLATFORMS)}")
        return v

    @field_validator("platforms")
    @classmethod
    def _known_platforms(cls, v: list[str]) -> list[str]:
        bad = [p for p in v if p not in PLATFORMS]
        if bad:
            raise ValueError(f"unknown platform label(s) {bad}; use some of {list(PLATFORMS)}")
        if len(set(v)) != len(v):
            raise ValueError("a platform is listed twice")
        return v

    @field_validator("env")
    @classmethod
    def _env_names(cls, v: dict[str, str]) -> dict[str, str]:
        for k in v:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
                raise ValueError(f"environment variable name {k!r} is not valid (letters, digits, _)")
        return v

    @model_validator(mode="after")
    def _counts(self) -> "SuiteConfig":
        if self.level != "L2" and self.expected_tests is None and self.min_tests is None:
            raise ValueError(
                f"suite {self.name!r}: give expected_tests (exact) or min_tests (floor) — without "
                "one a suite that silently runs fewer tests would pass")
        if isinstance(self.expected_tests, dict):
            missing = [p for p in self.platforms if p not in self.expected_tests]
            extra = [p for p in self.expected_tests if p not in self.platforms]
            if missing or extra:
                raise ValueError(f"suite {self.name!r}: expected_tests per platform must name exactly the suite's "
                                 f"platforms {self.platforms}" + (f"; missing {missing}" if missing else "")
                                 + (f"; not a platform of the suite {extra}" if extra else ""))
        for plat in self.platforms:
            n = self.expected_for(plat)
            if n is not None and self.min_tests is not None and self.min_tests > n:
                raise ValueError(f"suite {self.name!r}: min_tests {self.min_tests} exceeds expected_tests {n}"
                                 + (f" on {plat}" if isinstance(self.expected_tests, dict) else ""))
        if self.level == "L2" and self.report.format != "benchmark-json":
            raise ValueError(f"suite {self.name!r}: an L2 suite reports benchmark-json, not {self.report.format}")
        return self

    def expected_for(self, platform: str) -> int | None:
        """The exact count of tests that must run on ``platform`` (None: no exact count)."""
        if isinstance(self.expected_tests, dict):
            return self.expected_tests.get(platform)
        return self.expected_tests

    @property
    def run_limit_s(self) -> int:
        """Seconds one run of the suite may take on its runner: ``timeout_s`` for each attempt, the
        first and up to ``infra_retries`` more (each attempt has its own deadline)."""
        return self.timeout_s * (self.infra_retries + 1)

    @property
    def floor(self) -> int:
        """The smallest test count that may pass on any platform (expected count, else the
        floor, else 1)."""
        if isinstance(self.expected_tests, dict):
            return min(self.expected_tests.values())
        return self.expected_tests or self.min_tests or 1


def suite_problems(suites: list[SuiteConfig], area_names: list[str] | tuple[str, ...]) -> list[tuple[str, str]]:
    """Checks that need the whole configuration: ``[(field_path, reason), …]`` (empty when fine).
    Suite names must be unique; ``areas`` must name configured areas."""
    problems: list[tuple[str, str]] = []
    seen: set[str] = set()
    known = set(area_names)
    for i, s in enumerate(suites):
        if s.name in seen:
            problems.append((f"suites.{i}.name", f"suite name {s.name!r} is used twice"))
        seen.add(s.name)
        for a in s.areas:
            if a not in known:
                problems.append((f"suites.{i}.areas", f"unknown area {a!r}; configured areas: {sorted(known)}"))
    return problems


def required_l1(suites, areas_touched: tuple[str, ...] | list[str] = ()) -> tuple[SuiteConfig, ...]:
    """The required L1 suites that apply to a PR touching ``areas_touched`` (a suite without
    ``areas`` applies to every PR)."""
    touched = set(areas_touched)
    return tuple(s for s in suites if s.level == "L1" and s.required and (not s.areas or touched & set(s.areas)))


class UntrustedConfigError(ValueError):
    """Raised when the trusted configuration cannot be read or is invalid; the gate must then
    treat every suite as missing (red), never fall back to the PR's copy."""


def suites_changed(trusted: tuple[SuiteConfig, ...], proposed: tuple[SuiteConfig, ...]) -> tuple[str, ...]:
    """Names of suites a PR's own ``forksync.yml`` adds, drops or changes compared to the trusted
    copy — shown in the gate summary as "takes effect after merge", never applied to the PR."""
    a = {s.name: s for s in trusted}
    b = {s.name: s for s in proposed}
    return tuple(sorted(n for n in a.keys() | b.keys() if a.get(n) != b.get(n)))
