"""The generated references stay true: regenerate with
``python -m bot.config.reference > docs/config-reference.md`` and
``python -m bot.cli.reference > docs/cli-reference.md``."""
from __future__ import annotations

from pathlib import Path

from bot.cli import reference as cli_reference
from bot.config import reference as config_reference

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_config_reference_is_current():
    assert (DOCS / "config-reference.md").read_text() == config_reference.markdown()


def test_cli_reference_is_current():
    assert (DOCS / "cli-reference.md").read_text() == cli_reference.markdown() + "\n"


def test_config_reference_covers_every_section():
    text = (DOCS / "config-reference.md").read_text()
    for key in ("`upstream.ref`", "`areas[].divergent`", "`github.merge_method`", "`suites[].expected_tests`",
                "`triage.close_after_green_nights`", "`agents.daily_token_budget`"):
        assert key in text


def test_readme_config_example_is_valid():
    import re

    from bot.config.forksync import parse_config_text
    readme = (DOCS.parent / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    assert blocks, "README has a forksync.yml example"
    for text in blocks:
        cfg = parse_config_text(text, "README.md")
        assert cfg.areas and cfg.suites
