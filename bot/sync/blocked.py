"""Why GitHub refused a unit's push, PR or merge — or why forksync could not make one of its picks
— and what a person changes so it goes through.

Pure: :func:`classify` turns GitHub's refusal (git's push report, or a REST error message) into a
:class:`Refusal` — GitHub's reason as it said it, the permission or setting GitHub requires, and
whether a later attempt may pass on its own (a network error, a 5xx) or waits for a person
(a missing permission, a protected branch). The sync service stores the refusal on the unit's
``sync_branches`` row (``blocked_*`` columns) and shows it on the status issue and the unit's PR.

Rules (source: GitHub's messages as observed on real pushes and in docs.github.com
"Permissions required for GitHub Apps" → Workflows, and "About protected branches"):

=====================================================================  ===========  ==========
GitHub says                                                            requires     may pass
=====================================================================  ===========  ==========
``refusing to allow a GitHub App to create or update workflow …``      workflows    no
``Permission to push denied to the integration`` / ``… denied to …``   contents     no
``GH006: Protected branch update failed`` / ``protected branch hook``  protection   no
``GH013: Repository rule violations`` (a ruleset)                      protection   no
``Resource not accessible by integration`` (REST 403)                  permission   no
``non-fast-forward`` / ``fetch first`` (someone pushed meanwhile)      —            yes
anything else (network, 5xx, timeouts)                                 —            yes
=====================================================================  ===========  ==========

A pick that fails for another reason than a conflict (:func:`pick_failed`, step ``apply``:
libgit2 cannot merge it — an object it needs is missing or unreadable —, or its tree or commit
cannot be written) blocks its unit the same way (docs/github.md "Blocked units"): no unit
vanishes because its pick failed; every sync applies it again.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from bot.agents.redact import scrub
from bot.templating import render_part

#: forksync's own words for a blocked unit, one block each (GitHub's are kept as it said them)
TEXTS = "github/blocked.txt.j2"

WORKFLOW = re.compile(r"refusing to allow a GitHub App to create or update workflow `([^`]+)` without `workflows` permission")
PUSH_DENIED = re.compile(r"Permission to \S+ denied|Permission to push denied to the integration")
# GH006: classic branch protection; GH013: a repository ruleset (its rules name the ref "protected")
PROTECTED = re.compile(r"GH006|GH013|[Pp]rotected branch|[Rr]epository rule violations")
NOT_ACCESSIBLE = re.compile(r"Resource not accessible by integration")
RACED = re.compile(r"non-fast-forward|fetch first|stale info")
REJECTED = re.compile(r"! \[remote rejected\] \S+ -> \S+ \(([^)\n]*(?:\)[^)\n]*)*)\)")


def retried_by_sync(rows: list[dict]) -> list[dict]:
    """Pure: the blocked units among ``rows`` (``sync_branches`` rows,
    :func:`bot.sync.store.blocked_branches`) that the next sync retries and that may pass on
    their own: a refused push or pull request with nothing required of a person (``requires``
    ``""``: a network error, a 5xx, a raced push). A refused merge is the gate's to retry (the
    reconcile tick), and one waiting for a setting or a person passes only once they act. A pick
    that failed (step ``apply``) is applied again by every sync, but the poll runs none for it: a
    missing or unreadable object rarely comes back by itself, and on a real fork each such sync
    is a whole plan (minutes of CPU) every poll interval; upstream's next push or a landing brings
    the next sync."""
    return [r for r in rows if not r.get("blocked_requires") and r.get("blocked_step") in ("push", "pr")]


@dataclass(frozen=True)
class Refusal:
    """``reason``: GitHub's words (one line); ``requires``: ``"workflows"``, ``"contents"``,
    ``"protection"``, ``"permission"`` or ``""``; ``path``: the workflow file GitHub named;
    ``transient``: a later attempt may pass without a person; ``folded`` (``requires`` ``"rebase"``
    only): the branch holds no commit of a person, only forksync's pick folding their conflict
    resolution (its ``Resolved-by:`` trailer names them), so there is no commit of theirs to rebase;
    ``by_hand`` (``requires`` ``"rebase"`` only): a pick on the branch folds a person's conflict
    resolution, with or without commits of theirs beside it — a rebase carries that pick too."""

    reason: str
    requires: str = ""
    path: str = ""
    transient: bool = False
    folded: bool = False
    by_hand: bool = False


def classify(error: str) -> Refusal:
    """Pure: the :class:`Refusal` for a failed push's stderr or a REST error message. The text is
    scrubbed first (:func:`bot.agents.redact.scrub`): the reason is stored and shown on the status
    issue, the unit's PR, the dashboard and ``/metrics``, and an answer may echo a token."""
    text = scrub(error or "")
    m = WORKFLOW.search(text)
    if m:
        return Refusal(m.group(0), "workflows", m.group(1))
    rej = REJECTED.search(text)
    reason = (rej.group(1) if rej else _last_line(text)).strip()[:300]
    if PUSH_DENIED.search(text):
        return Refusal(reason, "contents")
    if PROTECTED.search(text):
        return Refusal(reason, "protection")
    if NOT_ACCESSIBLE.search(text):
        return Refusal(reason, "permission")
    return Refusal(reason, "", transient=True)


def github_words(e: Exception) -> str:
    """``"<status> <GitHub's message>[ <errors>]"`` of a failed REST call (a
    :class:`bot.github.client.GitHubAPIError` keeps GitHub's message apart from forksync's hint)."""
    code = getattr(e, "status_code", None)
    msg = getattr(e, "message", None) or (str(e.args[0]) if e.args else str(e))
    errors = getattr(e, "errors", None)
    # scrubbed: these words go into notes and PR comments, and a proxy may quote the request's token
    return scrub(f"{int(code) if code is not None else ''} {msg}{f' {errors}' if errors else ''}".strip())


def held_for_person(path: str) -> Refusal:
    """The refusal forksync gives itself, before pushing, for a unit with a commit touching
    ``path``, a path ``github.person_paths`` keeps for a person."""
    return Refusal(render_part(TEXTS, "held_for_person", path=path), "person", path)


def rewritten_under(dropped: int, fork_ref: str, foreign: int, *, resolved_by_hand: bool = False) -> Refusal:
    """The refusal forksync gives itself for a unit whose branch was built on ``dropped`` fork
    commits that a force push removed from ``fork_ref``, while ``foreign`` commits of a person sit
    on it, or (``resolved_by_hand``) a pick folds a person's conflict resolution: rebuilding would
    drop theirs (the folded pick, picked again, stops back at its conflict), merging would bring
    the removed commits back. Its words and hint name what a rebase carries: their commits, the
    folded pick, or both."""
    folded = resolved_by_hand and not foreign
    return Refusal(render_part(TEXTS, "rewritten_under", dropped=dropped, fork_ref=fork_ref, foreign=foreign,
                               resolved_by_hand=resolved_by_hand), "rebase", folded=folded, by_hand=resolved_by_hand)


def pick_failed(error: str) -> Refusal:
    """The refusal forksync records for a unit whose pick failed for another reason than a
    conflict (:attr:`bot.git.apply.ApplyResult.error`, or an :class:`bot.git.apply.ApplyError`):
    ``error`` as apply said it (it names the upstream commit and the cause), scrubbed of secrets
    (:func:`bot.agents.redact.scrub`; a URL's password, a token) and cut to 300 characters."""
    return Refusal(scrub(error or render_part(TEXTS, "pick_failed")).strip()[:300])


def what(row: dict) -> str:
    """Pure: what blocked a ``sync_branches`` row, in a few words for the status issue's unit list and
    the dashboard: ``"GitHub refused the push"`` (``pull request``, ``merge``) or, for step
    ``apply``, ``"its pick of upstream <sha12> failed"``."""
    return render_part(TEXTS, "what", step=row.get("blocked_step") or "push", sha=row.get("conflict_sha") or "")


def as_dict(row: dict, full_name: str) -> dict:
    """A ``sync_branches`` row's refusal as plain data for the status issue (``SyncStatus.blocked``)."""
    return {"id": row["unit_id"], "branch": row["branch"], "pr": row.get("pr") or 0,
            "url": f"https://github.com/{full_name}/pull/{row['pr']}" if row.get("pr") else "",
            "reason": row.get("blocked_reason") or "", "requires": row.get("blocked_requires") or "",
            "path": row.get("blocked_path") or "", "step": row.get("blocked_step") or "",
            "at": float(row.get("blocked_at") or 0.0), "commits": len(json.loads(row.get("shas_json") or "[]")),
            "folded": bool(row.get("blocked_folded")), "by_hand": bool(row.get("blocked_by_hand")),
            "sha": (row.get("conflict_sha") or "") if row.get("blocked_step") == "apply" else ""}


def _last_line(text: str) -> str:
    """git's error lines of ``text`` joined (``error: RPC failed; HTTP 502 …; fatal: …``), else its last line."""
    text = re.sub(r"^git [^\n]*? failed \(\d+\): ", "", text)     # SyncError's prefix
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errs = [ln for ln in lines if ln.startswith(("error:", "fatal:", "remote:")) or "rejected" in ln]
    return "; ".join(errs) if errs else (lines[-1] if lines else render_part(TEXTS, "refused"))


def row_fields(refusal: Refusal, *, step: str, at: float, tip: str) -> dict:
    """The ``blocked_*`` columns of a ``sync_branches`` row for ``refusal`` at ``step``
    (``push`` | ``pr`` | ``merge`` | ``apply``), time ``at`` (epoch s) and the tip it concerned."""
    return {"blocked_reason": refusal.reason, "blocked_requires": refusal.requires, "blocked_path": refusal.path,
            "blocked_step": step, "blocked_at": float(at), "blocked_tip": tip, "blocked_folded": int(refusal.folded),
            "blocked_by_hand": int(refusal.by_hand)}


CLEAR = {"blocked_reason": "", "blocked_requires": "", "blocked_path": "", "blocked_step": "", "blocked_at": 0.0,
         "blocked_tip": "", "blocked_folded": 0, "blocked_by_hand": 0}


__all__ = ["Refusal", "classify", "github_words", "held_for_person", "pick_failed", "what", "as_dict", "row_fields",
           "CLEAR"]
