"""GitHub's webhook event names (the ``X-GitHub-Event`` header values).

Source: GitHub's documentation, "Webhook events and payloads"
(https://docs.github.com/en/webhooks/webhook-events-and-payloads), as of 2026. A delivery of one
of these events that forksync has no handler for is a subscription it does not use (a repository
webhook sending "everything", an App subscribed to more than it needs): it is acknowledged and
ignored. A name outside this set is ignored too, with a warning in the log: it is signed with the
webhook secret, so it is GitHub's — an event added after this list (:mod:`bot.app.dispatch`).
"""
from __future__ import annotations

GITHUB_EVENTS = frozenset({
    "branch_protection_configuration", "branch_protection_rule", "check_run", "check_suite",
    "code_scanning_alert", "commit_comment", "create", "custom_property", "custom_property_values",
    "delete", "dependabot_alert", "deploy_key", "deployment", "deployment_protection_rule",
    "deployment_review", "deployment_status", "discussion", "discussion_comment", "fork",
    "github_app_authorization", "gollum", "installation", "installation_repositories",
    "installation_target", "issue_comment", "issue_dependencies", "issues", "label",
    "marketplace_purchase", "member", "membership", "merge_group", "meta", "milestone", "org_block",
    "organization", "package", "page_build", "personal_access_token_request", "ping", "project",
    "project_card", "project_column", "projects_v2", "projects_v2_item", "projects_v2_status_update",
    "public", "pull_request", "pull_request_review", "pull_request_review_comment",
    "pull_request_review_thread", "push", "registry_package", "release", "repository",
    "repository_advisory", "repository_dispatch", "repository_import", "repository_ruleset",
    "repository_vulnerability_alert", "secret_scanning_alert", "secret_scanning_alert_location",
    "secret_scanning_scan", "security_advisory", "security_and_analysis", "sponsorship", "star",
    "status", "sub_issues", "team", "team_add", "watch", "workflow_dispatch", "workflow_job",
    "workflow_run",
})

__all__ = ["GITHUB_EVENTS"]
