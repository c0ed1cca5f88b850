"""Reading suites for the runner: the ``suites:`` list of a ``forksync.yml`` (or of a file that
holds only that list, like ``examples/kernels/suites.yml``), validated with
:class:`bot.config.suites.SuiteConfig` alone — the runner needs neither the rest of the configuration
nor the bot's dependencies on a GPU machine."""
from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from bot.config.suites import SuiteConfig


class SuiteFileError(ValueError):
    """The file or one suite in it is unusable; the message names file, field path and reason."""


def load_suites(path: Path) -> list[SuiteConfig]:
    """All suites in ``path``. Raises :class:`SuiteFileError` (missing file, bad YAML, no
    ``suites:`` list, an invalid suite, a name used twice)."""
    if not path.is_file():
        raise SuiteFileError(f"{path}: file not found (pass --config with the forksync.yml that defines the suite)")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise SuiteFileError(f"{path}: not valid YAML: {e}") from None
    raw = data.get("suites") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise SuiteFileError(f"{path}: no 'suites:' list found at the top level")
    suites, problems = [], []
    for i, item in enumerate(raw):
        try:
            suites.append(SuiteConfig.model_validate(item))
        except ValidationError as e:
            for err in e.errors():
                loc = ".".join(str(x) for x in err["loc"])
                problems.append(f"suites.{i}{'.' + loc if loc else ''}: {err['msg']}")
    names = [s.name for s in suites]
    problems += [f"suite name {n!r} is used twice" for n in sorted({n for n in names if names.count(n) > 1})]
    if problems:
        raise SuiteFileError(f"{path}: invalid suites:\n" + "\n".join(f"  - {p}" for p in problems))
    return suites


def find_suite(suites: list[SuiteConfig], name: str, source: Path) -> SuiteConfig:
    for s in suites:
        if s.name == name:
            return s
    raise SuiteFileError(f"{source}: no suite named {name!r}; defined: {', '.join(s.name for s in suites) or 'none'}")
