"""GitHub event handlers, one module per concern, each with its own ``gidgethub.routing.Router``.

=====================  =======================================================================
module                 events
=====================  =======================================================================
``installation``       ping, installation.created / new_permissions_accepted,
                       installation_repositories.added
``upstream``           push to a tracked upstream branch (the poller is the worker's:
                       :mod:`bot.app.runtime`)
``config``             push to the default branch touching ``.github/forksync.yml``
``sync_prs``           pull_request.synchronize (a person's resolution on a chain)
``landing``            pull_request.closed (merged / closed unmerged)
``commands``           issue_comment.created / edited / deleted, pull_request_review.submitted
                       (``/forksync <verb>``)
``status_issue``       issues.edited (ticked checkboxes)
``gate``               pull_request opened / reopened / synchronize / labeled / unlabeled,
                       pull_request_review submitted / dismissed, check_run.completed
``checks``             check_run.rerequested, workflow_run.completed (validation results)
=====================  =======================================================================

Handlers are ``async def h(event, ctx)``: they read the event, call one plain coroutine of a
service package with the services the context carries (``ctx.sync``, ``ctx.validation``, set
once where the app is assembled) and note what happened. The loop guard and error
classification live in :mod:`bot.app.dispatch`, which builds the context.

May import: commands, validation, sync, github. Imported by: app, cli (``forksync serve``), demo.
"""
from __future__ import annotations

from gidgethub import routing

from bot.handlers import checks, commands, config, gate, installation, landing, status_issue, sync_prs, upstream


def all_routers() -> routing.Router:
    """Every concern's router, in the order above."""
    return routing.Router(installation.router, upstream.router, config.router, sync_prs.router, landing.router,
                          commands.router, status_issue.router, gate.router, checks.router)
