"""The GitHub App forksync registers as: one table of its permissions and webhook events.

Everything that names them is generated from :data:`PERMISSIONS` and :data:`EVENTS`:
``forksync app manifest`` / ``forksync app setup`` (the App manifest, GitHub's "Creating a GitHub
App from a manifest": https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest)
and the permission tables in docs/github.md and README (:func:`permissions_markdown`,
:func:`events_markdown`; a test checks the docs match), so they cannot disagree.

Pure data and pure functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Permission:
    """One App permission. ``key`` is GitHub's manifest key (``pull_requests``), ``title`` the
    name GitHub's settings page shows (``Pull requests``), ``level`` ``read`` | ``write``.
    ``optional``: left out of the manifest unless asked for (``--workflows``)."""

    key: str
    title: str
    level: str
    why: str
    optional: bool = False


@dataclass(frozen=True)
class Event:
    """One webhook event. ``automatic``: GitHub sends it to every App whatever it subscribes to
    (the installation events), so it is not listed in the manifest's ``default_events``."""

    name: str
    why: str
    automatic: bool = False


PERMISSIONS: tuple[Permission, ...] = (
    Permission("contents", "Contents", "write", "push sync branches and `refs/notes/forksync`, read `.github/forksync.yml`"),
    Permission("pull_requests", "Pull requests", "write", "open, update and merge bundle and chain PRs"),
    Permission("issues", "Issues", "write", "the status issue, triage and regression issues, command replies, labels"),
    Permission("checks", "Checks", "write", "`forksync/L1/<suite>` and `forksync/gate` check runs"),
    Permission("actions", "Actions", "write", "dispatch the GPU workflow and read its artifacts (the `github-actions` runner backend)"),
    Permission("metadata", "Metadata", "read", "repositories, branches, collaborator permissions (GitHub requires it)"),
    Permission("workflows", "Workflows", "write",
               "sync upstream commits that change `.github/workflows/`; without it such units are blocked for a person",
               optional=True),
)

EVENTS: tuple[Event, ...] = (
    Event("push", "upstream and fork branches moved: sync, landing"),
    Event("pull_request", "sync PRs opened, synchronized, closed, merged: validation, landing"),
    Event("pull_request_review", "approvals for the merge gate; `/forksync` commands in a review's body (submitted, edited, dismissed)"),
    Event("pull_request_review_comment", "`/forksync` commands in a comment on a line of a sync PR's diff"),
    Event("issue_comment", "`/forksync` commands (created, edited; an edit or deletion withdraws the lines it removes)"),
    Event("issues", "status issue edits (retry boxes)"),
    Event("check_run", "other checks completed, re-runs requested"),
    Event("check_suite", "subscribed, not handled yet: a re-run of a whole suite is ignored (re-run the check run)"),
    Event("workflow_run", "GPU workflow runs completed: collect their results"),
    Event("installation", "installed, new permissions accepted: adopt the fork; suspended: pause its forks, "
                          "unsuspended: resume them with a catch-up sync; uninstalled: stop following it",
          automatic=True),
    Event("installation_repositories", "repositories added to an installation (adopted) or removed from it (no longer followed)",
          automatic=True),
)

DEFAULT_NAME = "forksync"
WEBHOOK_PATH = "/webhook"
CALLBACK_PATH = "/auth/callback"


def default_permissions(*, workflows: bool = False) -> dict[str, str]:
    """``{manifest key: level}`` of the permissions the App asks for (optional ones only when
    ``workflows``)."""
    return {p.key: p.level for p in PERMISSIONS if not p.optional or workflows}


def default_events() -> list[str]:
    """The events the App subscribes to (the automatic installation events left out)."""
    return [e.name for e in EVENTS if not e.automatic]


def manifest(url: str, *, name: str = DEFAULT_NAME, redirect_url: str, callback_urls: list[str] | None = None,
             public: bool = False, workflows: bool = False, description: str | None = None) -> dict:
    """The App manifest GitHub's ``/settings/apps/new`` takes (its ``manifest`` form field, JSON).

    ``url``: where forksync is served (``https://forksync.example.org``), the App's homepage; the
    webhook is ``url`` + ``/webhook``. ``redirect_url``: where GitHub sends the person back with
    ``?code=`` after they confirm: ``app setup``'s local page, which exchanges the code, or for a
    manifest registered by hand the deployment's public URL (the code is then exchanged by hand).
    ``callback_urls``: OAuth callbacks (default ``url`` + ``/auth/callback``, the dashboard's sign-in). Raises ``ValueError`` for a URL that is not
    http(s) or a name GitHub would refuse (empty or over 34 characters)."""
    for what, u in (("url", url), ("redirect_url", redirect_url), *(("callback_url", c) for c in callback_urls or [])):
        if not u.startswith(("https://", "http://")):
            raise ValueError(f"{what} {u!r} must start with https:// (or http:// for a local test)")
    if not name.strip() or len(name) > 34:
        raise ValueError(f"App name {name!r}: GitHub needs 1 to 34 characters")
    base = url.rstrip("/")
    return {
        "name": name,
        "url": base,
        "description": description or "Keeps this fork in sync with its upstream, one upstream commit at a time.",
        "hook_attributes": {"url": base + WEBHOOK_PATH, "active": True},
        "redirect_url": redirect_url,
        "callback_urls": list(callback_urls) if callback_urls else [base + CALLBACK_PATH],
        "public": public,
        "default_permissions": default_permissions(workflows=workflows),
        "default_events": default_events(),
    }


def permissions_markdown() -> str:
    """The permission table docs/github.md and README show (Markdown, one row per permission)."""
    rows = ["| permission | access | why |", "|---|---|---|"]
    for p in PERMISSIONS:
        rows.append(f"| {p.title} | {p.level}{' (optional)' if p.optional else ''} | {p.why} |")
    return "\n".join(rows)


def events_markdown() -> str:
    """The event table docs/github.md and README show."""
    rows = ["| event | why |", "|---|---|"]
    for e in EVENTS:
        rows.append(f"| `{e.name}` | {e.why}{' (sent to every App; not subscribed)' if e.automatic else ''} |")
    return "\n".join(rows)


#: The markers around the generated tables in a Markdown file.
TABLE_START = "<!-- app-permissions: generated by `python -m bot.config.app_manifest`; do not edit by hand -->"
TABLE_END = "<!-- /app-permissions -->"


def docs_block() -> str:
    """The whole generated block, markers included, as it stands in docs/github.md and README."""
    return "\n".join([TABLE_START, "", permissions_markdown(), "", events_markdown(), "", TABLE_END])


if __name__ == "__main__":
    print(docs_block())
