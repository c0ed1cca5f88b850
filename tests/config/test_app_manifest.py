"""The App's permission/event table: the manifest it gives, and the docs that render it."""
from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import app_manifest as am

ROOT = Path(__file__).resolve().parents[2]


def test_manifest_from_the_table():
    m = am.manifest("https://fs.example.org/", name="forksync-meta", redirect_url="http://127.0.0.1:8765/redirect")
    assert m == {
        "name": "forksync-meta",
        "url": "https://fs.example.org",
        "description": "Keeps this fork in sync with its upstream, one upstream commit at a time.",
        "hook_attributes": {"url": "https://fs.example.org/webhook", "active": True},
        "redirect_url": "http://127.0.0.1:8765/redirect",
        "callback_urls": ["https://fs.example.org/auth/callback"],
        "public": False,
        "default_permissions": {"contents": "write", "pull_requests": "write", "issues": "write", "checks": "write",
                                "actions": "write", "metadata": "read"},
        "default_events": ["push", "pull_request", "pull_request_review", "pull_request_review_comment", "issue_comment",
                           "issues", "check_run",
                           "check_suite", "workflow_run"],
    }


def test_optional_workflows_permission_only_when_asked():
    assert "workflows" not in am.default_permissions()
    assert am.default_permissions(workflows=True)["workflows"] == "write"


@pytest.mark.parametrize("kwargs, message", [
    ({"url": "fs.example.org"}, "url 'fs.example.org' must start with https://"),
    ({"name": ""}, "App name '': GitHub needs 1 to 34 characters"),
    ({"name": "x" * 35}, "GitHub needs 1 to 34 characters"),
    ({"callback_urls": ["ftp://x"]}, "callback_url 'ftp://x' must start with https://"),
])
def test_bad_manifest_input_is_named(kwargs, message):
    args = {"url": "https://fs.example.org", "redirect_url": "http://127.0.0.1:1/redirect", **kwargs}
    url = args.pop("url")
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        am.manifest(url, **args)


def test_every_event_the_bot_handles_is_in_the_table():
    from bot.app.dispatch import router_events
    from bot.handlers import all_routers

    handled = set(router_events(all_routers()))
    table = {e.name for e in am.EVENTS}
    # ping is sent to every webhook; the bot answers it but no App subscribes to it
    assert handled - {"ping"} <= table, sorted(handled - {"ping"} - table)


def test_docs_render_the_table():
    """docs/github.md holds the generated block verbatim; so does any other Markdown file that
    carries its start marker (README): ``python -m bot.config.app_manifest`` prints it."""
    block = am.docs_block()
    github_md = (ROOT / "docs" / "github.md").read_text()
    assert block in github_md
    assert "| Actions | write |" in github_md
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        if am.TABLE_START in text:
            assert block in text, f"{path.name}: the App permission table differs from bot/config/app_manifest.py"
